#!/usr/bin/env bash
# Runs one libFuzzer target (fuzz/) for a given time.
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   TARGET: onnx_import | gom_load | file_readers | tf_import
# Builds build-fuzz/ as scripts/sanitize.sh does (clang-14, ASan + UBSan,
# coverage). The corpus lives in build-fuzz/corpus/TARGET, seeded from
# tests/fuzz_regressions/TARGET and from ../shared (the models' and cases'
# model.onnx files, their test-data .pb files, and .gom files compiled from
# the cases at -O0 and -O3; for tf_import the small tf_models) and
# tests/new_opsets (opsets 18..23). Findings (crash-*, leak-*, timeout-*) go to
# build-fuzz/findings/TARGET/; a fixed finding belongs in
# tests/fuzz_regressions/TARGET/, which CTest replays.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:?usage: scripts/fuzz.sh TARGET SECONDS [flags]}
secs=${2:?usage: scripts/fuzz.sh TARGET SECONDS [flags]}
shift 2
case "$t" in onnx_import|gom_load|file_readers|tf_import) ;; *) echo "fuzz: unknown target '$t'" >&2; exit 2 ;; esac
scripts/setup.sh --sanitizers >/dev/null
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGEC_FUZZ=ON -DGEC_BUILD_PYTHON=OFF >/dev/null
ninja -C build-fuzz "gec_fuzz_$t" gec
corpus=build-fuzz/corpus/$t
findings=build-fuzz/findings/$t
mkdir -p "$corpus" "$findings"
shared=../shared
shopt -s nullglob  # without ../shared the seed loops below find nothing
[ -d "$shared" ] || echo "fuzz: $shared is missing; seeding from tests/fuzz_regressions/$t only" >&2
if [ -z "$(ls -A "$corpus")" ]; then
  cp tests/fuzz_regressions/"$t"/* "$corpus"/
  case "$t" in
    onnx_import)
      for m in "$shared"/cases/*/model.onnx "$shared"/models/*/model.onnx tests/new_opsets/*/model.onnx; do
        [ -f "$m" ] && [ "$(stat -c %s "$m")" -lt 8000000 ] && cp "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
      done ;;
    gom_load)
      for m in "$shared"/cases/*/model.onnx tests/new_opsets/*/model.onnx; do
        n=$(basename "$(dirname "$m")")
        for o in 0 3; do build-fuzz/gec compile "$m" -o "$corpus/$n.O$o.gom" -O "$o" >/dev/null 2>&1 || true; done
      done ;;
    tf_import)
      for m in "$shared"/tf_models/*/model.pb; do
        [ -f "$m" ] && [ "$(stat -c %s "$m")" -lt 2000000 ] && cp "$m" "$corpus/$(basename "$(dirname "$m")").pb"
      done ;;
    file_readers)
      for f in "$shared"/cases/*/test_data_set_0/*.pb; do
        n=$(basename "$(dirname "$(dirname "$f")")")_$(basename "$f")
        { printf '\001'; cat "$f"; } > "$corpus/$n"
      done ;;
  esac
fi
export ASAN_OPTIONS="detect_leaks=1:suppressions=$PWD/tests/sanitizer/asan.supp"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMP_WAIT_POLICY=PASSIVE
"build-fuzz/gec_fuzz_$t" "$corpus" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$@"
