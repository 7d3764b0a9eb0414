// Schemas of the math ops that are neither elementwise nor reductions:
// Det-11, LpNormalization-1 and MeanVarianceNormalization-13 (the last is also
// an ONNX function; a native kernel avoids expanding it).
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

// Det-11: X [*, M, M] -> [*].
void infer_det(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    ctx.error("X must be [*, M, M], got " + shape_str(x));
  if (!dtype_is_float(ctx.dtype(0))) ctx.error(std::string("dtype ") + dtype_name(ctx.dtype(0)) + " is not a float");
  ctx.set_output(0, ctx.dtype(0), Shape(x.begin(), x.end() - 2));
}

// LpNormalization-1: p in {1, 2}; axis in range.
void infer_lp_norm(InferContext& ctx) {
  const int64_t p = ctx.node->get_int("p", 2);
  if (p != 1 && p != 2) ctx.error("p must be 1 or 2, got " + std::to_string(p));
  normalize_axis(ctx, ctx.node->get_int("axis", -1), static_cast<int64_t>(ctx.shape(0).size()));
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

void infer_mvn(InferContext& ctx) {
  const int64_t r = static_cast<int64_t>(ctx.shape(0).size());
  for (int64_t a : ctx.node->get_ints("axes", {0, 2, 3})) normalize_axis(ctx, a, r);
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "Det", .infer = infer_det, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "LpNormalization", .infer = infer_lp_norm, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "MeanVarianceNormalization", .infer = infer_mvn, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});

}  // namespace gec::ops
