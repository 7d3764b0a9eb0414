// Schema of com.graphengine::Gelu, the GELU activation that the pass
// transformer_fusion makes out of its spelled-out forms. Semantics are ONNX
// Gelu-20's:
//   approximate = "none": y = 0.5 * x * (1 + erf(x / sqrt(2)))
//   approximate = "tanh": y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
// One float32 input of any shape; the output has its type.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_gelu(InferContext& ctx) {
  const std::string a = ctx.node->get_string("approximate", "none");
  if (a != "none" && a != "tanh") ctx.error("attribute 'approximate' must be \"none\" or \"tanh\", not \"" + a + "\"");
  if (ctx.dtype(0) != DType::kFloat32) ctx.error("input must be float32");
  infer_same_as_input0(ctx);
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "Gelu", .infer = infer_gelu, .traits = traits(PatternKind::kElementwise)});
}  // namespace gec::ops
