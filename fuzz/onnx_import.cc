// Fuzz target: bytes -> ONNX import -> the -O2 pipeline -> plans -> .gom
// bytes (gec::compile_onnx_bytes). External data resolves in a folder that
// does not exist, so a mutant cannot read files.
#include "fuzz/fuzz_target.h"
#include "gec/compiler.h"
#include "gec/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gec::CompileOptions o;
  o.opt_level = 2;
  o.max_weights_bytes = int64_t{256} << 20;
  o.max_arena_bytes = int64_t{256} << 20;
  try {
    gec::compile_onnx_bytes(data, size, o, "/nonexistent-gec-fuzz-dir", "fuzz input");
  } catch (const gec::Error&) {
  }
  return 0;
}
