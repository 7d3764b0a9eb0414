// Schemas of the random generators: RandomNormal-1, RandomUniform-1,
// RandomNormalLike-1, RandomUniformLike-1, Bernoulli-15, Multinomial-7
// (ai.onnx operator text). Their outputs differ between runs, so they are
// marked nondeterministic: never constant folded, never merged by CSE.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

DType dtype_attr(const InferContext& ctx, DType def) {
  if (!ctx.node->has_attr("dtype")) return def;
  const int64_t code = ctx.node->get_int("dtype");
  if (!dtype_is_valid(static_cast<int>(code))) ctx.error("bad dtype " + std::to_string(code));
  return static_cast<DType>(code);
}

// RandomNormal / RandomUniform: dtype (default float32) and shape attributes.
void infer_random(InferContext& ctx) {
  const std::vector<int64_t> shape = ctx.node->get_ints("shape");
  if (!ctx.node->has_attr("shape")) ctx.error("needs the shape attribute");
  for (int64_t d : shape)
    if (d < 0) ctx.error("shape " + shape_str(shape) + " has a negative dim");
  ctx.set_output(0, dtype_attr(ctx, DType::kFloat32), shape);
}

// *Like and Bernoulli: the input's shape; dtype attribute or the input's.
void infer_random_like(InferContext& ctx) { ctx.set_output(0, dtype_attr(ctx, ctx.dtype(0)), ctx.shape(0)); }

// Multinomial: input [batch, classes] of unnormalized log-probabilities ->
// [batch, sample_size] class indices (dtype int32 by default).
void infer_multinomial(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.size() != 2) ctx.error("input must be [batch_size, class_size], got " + shape_str(x));
  const int64_t n = ctx.node->get_int("sample_size", 1);
  if (n < 0) ctx.error("sample_size must be >= 0");
  const DType dt = dtype_attr(ctx, DType::kInt32);
  if (dt != DType::kInt32 && dt != DType::kInt64) ctx.error("dtype must be int32 or int64");
  ctx.set_output(0, dt, {x[0], n});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "RandomNormal", .infer = infer_random, .deterministic = false, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RandomUniform", .infer = infer_random, .deterministic = false, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RandomNormalLike", .infer = infer_random_like, .deterministic = false, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RandomUniformLike", .infer = infer_random_like, .deterministic = false, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Bernoulli", .infer = infer_random_like, .deterministic = false, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Multinomial", .infer = infer_multinomial, .deterministic = false, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
