// The fuzz targets' shared shape: each target file defines
// LLVMFuzzerTestOneInput (and optionally LLVMFuzzerCustomMutator). Built with
// clang's -fsanitize=fuzzer when GEC_FUZZ is on (scripts/fuzz.sh), and always
// linked with replay_main.cc into gec_fuzz_replay_<target>, which runs saved
// inputs (tests/fuzz_regressions/<target>/) as ordinary tests.
//
// A target must return normally for every input: gec::Error is the expected
// outcome of bad input; anything else (a crash, a sanitizer report, another
// exception, a hang past libFuzzer's -timeout) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
