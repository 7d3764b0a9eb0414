#!/usr/bin/env bash
# The sanitizer job (CI runs it after scripts/test.sh): builds everything with
# clang-14 under AddressSanitizer + UndefinedBehaviorSanitizer (any UB aborts)
# and libFuzzer's coverage instrumentation in build-fuzz/ (the same build
# scripts/fuzz.sh fuzzes with), then runs under the sanitizers:
#   - every unit test (gec_tests), the CLI tests included;
#   - the shared models at -O0 and -O3 and the shared cases at every level;
#   - the opset 18..23 models (tests/new_opsets) at -O0 and -O3;
#   - the shared models and cases compiled with their data's shapes
#     (*_static: automatic fusion, attention, layouts) and the decoder
#     models (tests/transformer_decoder);
#   - the saved fuzz inputs (tests/fuzz_regressions/).
# Not run here: the ONNX conformance suite, MemoryModels.* (it compiles and
# runs every shared model at every level with caller buffers: 215 s without
# sanitizers) and the Python tests (the sanitized libraries cannot be loaded
# into an uninstrumented python3).
#
# Then ThreadSanitizer, in build-tsan/ (clang-14, -fsanitize=thread): the
# libraries and gec_tsan_tests (tests/concurrency_test.cc: Sessions and
# compiles side by side in threads; session_limits_test.cc: racing runs on
# one Session; threading_test.cc; runtime_memory_test.cc; streams_test.cc;
# weights_residency_test.cc and model_format_test.cc). GNU OpenMP is not
# instrumented, so TSan cannot see its barriers: the job runs pinned to one
# CPU (taskset), where every Session runs one thread and no OpenMP worker
# exists, and leaves out the one test that starts workers on purpose. Then,
# unpinned, the three tests whose Session::load runs its helper threads (the
# WEIGHTS checker and the arena's populator, std::threads TSan sees) beside
# the loading thread: pinned, a session's load is single-threaded.
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
ctest --output-on-failure -j2 --timeout 900 -R '^([A-Z][A-Za-z0-9]*\.|shared_models$|shared_models_static$|shared_cases$|shared_cases_static$|new_opsets$|transformer_decoder|fuzz_)' \
  -E '^MemoryModels\.'
asan_done=$(date +%s)
cd ..
echo "sanitize: ASan+UBSan build $((built - start)) s, tests $((asan_done - built)) s"

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGEC_TSAN=ON -DGEC_BUILD_PYTHON=OFF >/dev/null
ninja -C build-tsan gec_tsan_tests
tsan_built=$(date +%s)
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizer/tsan.supp" OMP_WAIT_POLICY=PASSIVE \
  taskset -c 0 build-tsan/gec_tsan_tests --gtest_filter='-Threading.RunsOnFewerThreadsGiveTheSameOutputs'
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizer/tsan.supp" OMP_WAIT_POLICY=PASSIVE \
  build-tsan/gec_tsan_tests --gtest_filter='SessionMemory.TheArenaIsPresentWhenTheLoadReturns:HostileGom.SessionsCheckWeightsWhileMakingKernelsAndRefuseDamage:ModelFormat.DeferredWeightsCheckRunsLaterAndSessionsStillRefuseDamage'
echo "sanitize: TSan build $((tsan_built - asan_done)) s, tests $(($(date +%s) - tsan_built)) s"
