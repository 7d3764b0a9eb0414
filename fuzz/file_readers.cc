// Fuzz target: the input-file readers (.npy, TensorProto, SequenceProto,
// OptionalProto .pb). The first byte picks the reader; the rest is written
// to a per-process file that the reader opens, as `gec run --input` does.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "frontend/onnx/tensor_proto.h"
#include "fuzz/fuzz_target.h"
#include "gec/error.h"
#include "support/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/gec_fuzz_reader_" + std::to_string(::getpid()) + ".bin";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  }
  const uint64_t limit = uint64_t{64} << 20;
  try {
    switch (data[0] % 4) {
      case 0: gec::read_npy(path, limit); break;
      case 1: gec::frontend::read_value_proto_file(path, gec::ValueKind::kTensor, nullptr, limit); break;
      case 2: gec::frontend::read_value_proto_file(path, gec::ValueKind::kSequence, nullptr, limit); break;
      default: gec::frontend::read_value_proto_file(path, gec::ValueKind::kOptionalTensor, nullptr, limit); break;
    }
  } catch (const gec::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
