#!/usr/bin/env bash
# Installs every build, demo and test dependency of GraphEngine from Debian 12's
# (bookworm's) packages, and nothing else. Safe to run again: packages already
# installed are not touched, and the package lists are fetched only when
# something is missing.
#
# Exits non-zero, naming the package, when one cannot be installed, and checks
# afterwards that the build's CMake packages and the tests' Python modules are
# really there, so that a failed set-up never surfaces later as a CMake trace.
#
# scripts/setup.sh --sanitizers also installs clang-14, its OpenMP runtime and
# libFuzzer, for scripts/sanitize.sh and scripts/fuzz.sh.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run this as root (sudo is not installed)" >&2; exit 1; }
  SUDO=sudo
fi
# Wait for an apt run already in progress (a fresh machine's first-boot
# updates hold the lock) instead of failing at once.
APT_OPTS=(-o DPkg::Lock::Timeout=600)

PKGS=(
  # toolchain
  build-essential cmake ninja-build pkg-config
  # libraries the build links (Debian's oneDNN is built with its OpenCL GPU
  # runtime: its CMake config needs the OpenCL headers and ICD loader dev files)
  libprotobuf-dev protobuf-compiler libonnx-dev libdnnl-dev opencl-headers ocl-icd-opencl-dev
  libhwy-dev libcli11-dev nlohmann-json3-dev libxxhash-dev libgtest-dev libgmock-dev libssl-dev
  # tests: the ONNX conformance suite and /usr/bin/python3 with onnx + numpy
  libonnx-testdata python3 python3-onnx python3-numpy
  # the Python package (python/): pybind11 binding built against Debian's
  # Python 3.11, its tests (pytest) and gec.torch (torch.onnx.export, torchvision)
  pybind11-dev python3-dev python3-pytest python3-torch python3-torchvision
)
if [ "${1:-}" = "--sanitizers" ]; then
  PKGS+=(clang-14 libomp-14-dev libfuzzer-14-dev)
fi

# (grep without -q: under pipefail, -q's early exit would fail the pipeline)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep "install ok installed" >/dev/null; }

missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # apt-get update exits 0 even when it reached no mirror; its warnings and
  # 'Err:' lines say so, and then the packages have no install candidate.
  log=$(mktemp)
  $SUDO apt-get "${APT_OPTS[@]}" update -q >"$log" 2>&1 ||
    { cat "$log"; rm -f "$log"; echo "setup: apt-get update failed" >&2; exit 1; }
  if grep -qE '^(Err:|W: Failed to fetch|E: )' "$log"; then
    grep -E '^(Err:|W:|E:)' "$log" >&2
    echo "setup: apt-get update could not read every package list (see above); no network or mirror?" >&2
    rm -f "$log"; exit 1
  fi
  rm -f "$log"
  for p in "${missing[@]}"; do
    if ! apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [^(]' >/dev/null; then
      echo "setup: package '$p' has no install candidate in the configured Debian sources" >&2
      exit 1
    fi
  done
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -q --no-install-recommends \
       "${missing[@]}"; then
    echo "setup: apt-get install failed" >&2
  fi
  still=()
  for p in "${missing[@]}"; do installed "$p" || still+=("$p"); done
  if [ ${#still[@]} -gt 0 ]; then
    echo "setup: these packages are not installed: ${still[*]}" >&2
    exit 1
  fi
fi

# What the build and tests look for, checked here rather than met later.
for f in /usr/lib/x86_64-linux-gnu/cmake/dnnl/dnnl-config.cmake /usr/include/CL/cl.h \
         /usr/share/libonnx-testdata/data/node /usr/lib/cmake/pybind11/pybind11Config.cmake; do
  [ -e "$f" ] || { echo "setup: $f is missing after installing the packages" >&2; exit 1; }
done
/usr/bin/python3 -c "import onnx, numpy" ||
  { echo "setup: /usr/bin/python3 cannot import onnx and numpy" >&2; exit 1; }
/usr/bin/python3 -c "import pytest, torch, torchvision" ||
  { echo "setup: /usr/bin/python3 cannot import pytest, torch and torchvision" >&2; exit 1; }
echo "setup: all dependencies present"
