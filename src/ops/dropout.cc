// Schema of Dropout-13 in its canonical form: inputs data, ratio?,
// training_mode?; outputs output, mask?; attribute seed. The frontend turns
// an inference Dropout (training_mode absent or a constant false) into
// Identity, so only a Dropout whose training_mode is true or known only at
// run time reaches the IR. Its mask is random: marked nondeterministic, so it
// is never constant folded or merged by CSE.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

bool is_float_dtype(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}

// output: data's dtype and shape; mask: bool, data's shape. ratio must be a
// scalar (ONNX: "a scalar"; we accept any one-element tensor) and
// training_mode a one-element bool.
void infer_dropout(InferContext& ctx) {
  if (!is_float_dtype(ctx.dtype(0))) ctx.error(std::string("data dtype ") + dtype_name(ctx.dtype(0)) + " is not a float type");
  if (ctx.has_input(1)) {
    if (shape_numel(ctx.shape(1)) != 1) ctx.error("ratio must be a scalar, got " + shape_str(ctx.shape(1)));
    if (!is_float_dtype(ctx.dtype(1))) ctx.error(std::string("ratio dtype ") + dtype_name(ctx.dtype(1)) + " is not a float type");
  }
  if (ctx.has_input(2)) {
    if (shape_numel(ctx.shape(2)) != 1) ctx.error("training_mode must be a scalar, got " + shape_str(ctx.shape(2)));
    if (ctx.dtype(2) != DType::kBool) ctx.error("training_mode must be bool");
  }
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
  if (ctx.node->outputs().size() > 1) ctx.set_output(1, DType::kBool, ctx.shape(0));
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "Dropout", .infer = infer_dropout, .deterministic = false, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
