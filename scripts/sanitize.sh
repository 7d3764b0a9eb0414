#!/usr/bin/env bash
# The sanitizer job (CI runs it after scripts/test.sh): builds everything with
# clang-14 under AddressSanitizer + UndefinedBehaviorSanitizer (any UB aborts)
# and libFuzzer's coverage instrumentation in build-fuzz/ (the same build
# scripts/fuzz.sh fuzzes with), then runs under the sanitizers:
#   - every unit test (gec_tests), the CLI tests included;
#   - the shared models at -O0 and -O3 and the shared cases at every level;
#   - the saved fuzz inputs (tests/fuzz_regressions/).
# Not run here: the ONNX conformance suite, MemoryModels.* (it compiles and
# runs every shared model at every level with caller buffers: 215 s without
# sanitizers) and the Python tests (the sanitized libraries cannot be loaded
# into an uninstrumented python3).
# ThreadSanitizer is not run: the OpenMP runtimes are not instrumented for it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --sanitizers
start=$(date +%s)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGEC_FUZZ=ON -DGEC_BUILD_PYTHON=OFF >/dev/null
ninja -C build-fuzz
built=$(date +%s)
# Leaks are findings too, except in the third-party runtimes' own caches.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:suppressions=$PWD/tests/sanitizer/asan.supp"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd build-fuzz
ctest --output-on-failure -j2 --timeout 900 -R '^([A-Z][A-Za-z0-9]*\.|shared_models$|shared_cases$|fuzz_)' \
  -E '^MemoryModels\.'
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
