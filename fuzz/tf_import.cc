// Fuzz target: bytes -> the TensorFlow frontend (GraphDef, or tfjs JSON when
// the bytes start with '{') -> the -O2 pipeline -> plans -> .gom bytes
// (gec::compile_any_bytes). Weight shards resolve in a folder that does not
// exist, so a mutant cannot read files.
#include "fuzz/fuzz_target.h"
#include "gec/compiler.h"
#include "gec/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Only the TensorFlow formats: ONNX has its own target.
  size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\n')) ++i;
  if (size == 0 || (data[0] != 0x0a && (i == size || data[i] != '{'))) return 0;
  gec::CompileOptions o;
  o.opt_level = 2;
  o.max_weights_bytes = int64_t{256} << 20;
  o.max_arena_bytes = int64_t{256} << 20;
  try {
    gec::compile_any_bytes(data, size, o, "/nonexistent-gec-fuzz-dir", "fuzz input");
  } catch (const gec::Error&) {
  }
  return 0;
}
