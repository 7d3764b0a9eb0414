// Schema of com.graphengine::Swish, the SiLU / Swish activation that the
// pass transformer_fusion (rule swish) makes out of its spelled-out form
// Mul(x, Sigmoid(x)) (PyTorch's SiLU exports so: EfficientNet, YOLO,
// LLaMA-style MLPs). Semantics are ONNX Swish-24's:
//   y = x * sigmoid(alpha * x) = x / (1 + e^(-alpha * x)),  alpha default 1.0
// (ONNX opset 24 is beyond what the importer reads, 1..23, so the op lives
// in our domain until then). One float32 input of any shape; the output has
// its type. A convolution or a MatMul takes it as a post-op (oneDNN
// eltwise_swish) and it runs in any activation layout.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_swish(InferContext& ctx) {
  if (ctx.dtype(0) != DType::kFloat32) ctx.error("input must be float32");
  infer_same_as_input0(ctx);
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain,
                 .op_type = "Swish",
                 .infer = infer_swish,
                 .traits = traits(PatternKind::kElementwise)
                               .in_place({0})
                               .with_layout(LayoutRule::kUnaryPassThrough)
                               .epilogue()});

}  // namespace gec::ops
