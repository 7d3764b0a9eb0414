// Schema of our own op com.graphengine::BatchNormalizationTraining: the
// training_mode=1 form of ONNX BatchNormalization-14/15, which the frontend
// rewrites into it (the ai.onnx BatchNormalization in the IR is always the
// one-output inference form, served by oneDNN).
//   inputs : X [N, C, D1..Dk], scale [C], B [C], input_mean [C], input_var [C]
//   outputs: Y (X's dtype and shape), running_mean? [C], running_var? [C]
//            (input_mean's / input_var's dtype)
//   attrs  : epsilon (default 1e-5), momentum (default 0.9)
// Semantics in kernels/cpu/nn/batchnorm_training.cc.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_batchnorm_training(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.size() < 2) ctx.error("X " + shape_str(x) + " must have rank >= 2 ([N, C, ...])");
  for (size_t i = 1; i <= 4; ++i)
    if (ctx.shape(i).size() != 1 || ctx.shape(i)[0] != x[1])
      ctx.error("input " + std::to_string(i) + " " + shape_str(ctx.shape(i)) + " must be [C] with C=" +
                std::to_string(x[1]));
  ctx.set_output(0, ctx.dtype(0), x);
  const size_t outs = ctx.node->outputs().size();
  if (outs > 1) ctx.set_output(1, ctx.dtype(3), {x[1]});
  if (outs > 2) ctx.set_output(2, ctx.dtype(4), {x[1]});
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "BatchNormalizationTraining",
                 .infer = infer_batchnorm_training, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
