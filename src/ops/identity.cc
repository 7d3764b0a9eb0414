// Identity (ONNX Identity-16, tensor inputs): output is the input.
#include "ops/op_schema.h"

namespace gec::ops {
GEC_REGISTER_OP({.domain = "", .op_type = "Identity", .infer = infer_same_as_input0});
}  // namespace gec::ops
