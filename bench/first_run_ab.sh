#!/bin/bash
# Load + first run of two compiles of each model, in alternating processes:
# A = `gec compile -O 3`, B = the same plus the flags in $B_FLAGS (default
# `--disable-pass pack_weights`), or, with $B_GEC set, B = another gec
# binary (e.g. a build of an older commit) compiling and running without
# extra flags. Prints the medians of N (default 7) runs
# of `gec bench --iterations 1 --warmup 0` per variant: load ms, first run
# ms, their sum, peak RSS MiB, and the .gom sizes.
#   bench/first_run_ab.sh [MODEL_DIR...]   (default: ../shared/models/*/)
set -euo pipefail
cd "$(dirname "$0")/.."
GEC=${GEC:-build/gec}
N=${N:-7}
B_GEC=${B_GEC:-}
if [ -n "$B_GEC" ]; then B_FLAGS=${B_FLAGS:-}; else B_FLAGS=${B_FLAGS:---disable-pass pack_weights}; fi
B_BIN=${B_GEC:-$GEC}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(../shared/models/*/)
for d in "${dirs[@]}"; do
  m=$(basename "$d")
  shapes=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'bench'); import side_by_side as s; print(' '.join(s.input_shapes('$d')))")
  f=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'bench'); import side_by_side as s; print(s.model_file('$d'))")
  $GEC compile "$f" -O 3 -o "$tmp/$m.A.gom" $shapes > /dev/null
  $B_BIN compile "$f" -O 3 $B_FLAGS -o "$tmp/$m.B.gom" $shapes > /dev/null
  for _ in $(seq "$N"); do
    for v in A B; do
      bin=$GEC; [ "$v" = B ] && bin=$B_BIN
      $bin bench "$tmp/$m.$v.gom" --input-dir "$d/test_data_set_0" --iterations 1 --warmup 0 --json |
        /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print('$m', '$v', r['load_ms'], r['first_run_ms'], r['peak_rss_bytes'])"
    done
  done > "$tmp/$m.txt"
  /usr/bin/python3 - "$tmp" "$m" <<'PY'
import os, statistics as st, sys
tmp, m = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(os.path.join(tmp, m + ".txt"))]
def med(v, f):
    return st.median(f(r) for r in rows if r[1] == v)
cells = []
for v in ("A", "B"):
    cells.append("%s: load %.1f first %.1f sum %.1f RSS %.0f MiB .gom %.1f MiB" % (
        v, med(v, lambda r: float(r[2])), med(v, lambda r: float(r[3])),
        med(v, lambda r: float(r[2]) + float(r[3])), med(v, lambda r: int(r[4])) / 2**20,
        os.path.getsize(os.path.join(tmp, "%s.%s.gom" % (m, v))) / 2**20))
print(m, "|", " | ".join(cells))
PY
done
