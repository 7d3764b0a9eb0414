// Schema of com.graphengine::ScaledDotProductAttention, which the
// transformer_fusion rule `attention` makes of MatMul(Q, K^T) -> scale ->
// mask -> Softmax -> MatMul(., V) (Vaswani et al. 2017, "Attention Is All
// You Need", eq. 1):
//   out = softmax(scale * Q K^T  (+ mask | masked to `fill`)) V
// Inputs (float32, static batch dims equal across Q, Kt and V):
//   Q  [..., S, D]    queries
//   Kt [..., D, T]    keys, already transposed (the first MatMul's B)
//   V  [..., T, Dv]   values
//   mask (optional)   broadcastable to [..., S, T]: float32 added to the
//                     scores (mask_kind "additive") or bool, true where the
//                     score becomes `fill` (mask_kind "boolean", a
//                     masked_fill / Where)
// Attributes: scale (float), mask_kind ("none", "additive", "boolean"), fill.
// Output [..., S, Dv], float32.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_attention(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.has_input(i) || ctx.dtype(i) != DType::kFloat32) ctx.error("Q, Kt and V must be float32");
  const Shape& q = ctx.shape(0);
  const Shape& kt = ctx.shape(1);
  const Shape& v = ctx.shape(2);
  const size_t r = q.size();
  if (r < 2 || kt.size() != r || v.size() != r) ctx.error("Q, Kt and V must have one rank >= 2");
  for (size_t i = 0; i + 2 < r; ++i)
    if (kt[i] != q[i] || v[i] != q[i]) ctx.error("Q, Kt and V must have the same batch dims");
  if (kt[r - 2] != q[r - 1]) ctx.error("Kt is not [..., D, T] for Q [..., S, D]");
  if (v[r - 2] != kt[r - 1]) ctx.error("V is not [..., T, Dv] for Kt [..., D, T]");
  const std::string kind = ctx.node->get_string("mask_kind", "none");
  if (kind != "none" && kind != "additive" && kind != "boolean") ctx.error("mask_kind must be none, additive or boolean");
  if (kind != "none") {
    if (!ctx.has_input(3)) ctx.error("mask_kind " + kind + " needs input 3 (the mask)");
    if (ctx.dtype(3) != (kind == "boolean" ? DType::kBool : DType::kFloat32))
      ctx.error("a " + kind + " mask must be " + (kind == "boolean" ? "bool" : "float32"));
    Shape scores(q.begin(), q.end() - 1);
    scores.push_back(kt[r - 1]);
    if (ctx.shape(3).size() > r || broadcast_shapes(ctx, scores, ctx.shape(3)) != scores)
      ctx.error("the mask " + shape_str(ctx.shape(3)) + " does not broadcast to the scores " + shape_str(scores));
  }
  Shape out(q.begin(), q.end() - 1);
  out.push_back(v[r - 1]);
  ctx.set_output(0, DType::kFloat32, out);
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "ScaledDotProductAttention", .infer = infer_attention,
                 .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});

}  // namespace gec::ops
