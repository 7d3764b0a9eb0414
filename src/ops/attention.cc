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
// Attributes: scale (float), mask_kind ("none", "additive", "boolean"), fill;
// q_perm, v_perm, out_perm (optional ints, a permutation of the rank that
// keeps the last axis last): Q is Transpose(input 0, q_perm), V is
// Transpose(input 2, v_perm), and the output is Transpose(out, out_perm),
// the transposes read and written in place (transformer_fusion folds the
// ones PyTorch's and Hugging Face's exports put around the heads).
// Output [..., S, Dv] (permuted by out_perm), float32.
#include "ops/attention.h"

#include "ops/op_schema.h"

namespace gec::ops {

std::vector<int64_t> attention_view_perm(const ir::Node& n, const char* name, size_t rank, std::string* why) {
  if (!n.has_attr(name)) return attention_view_perm(nullptr, name, rank, why);
  const std::vector<int64_t> a = n.get_ints(name);
  return attention_view_perm(&a, name, rank, why);
}

std::vector<int64_t> attention_view_perm(const std::vector<int64_t>* attr, const char* name, size_t rank,
                                         std::string* why) {
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(i);
  if (!attr) return p;
  const std::vector<int64_t>& a = *attr;
  std::vector<bool> seen(rank, false);
  bool ok = a.size() == rank && rank >= 2 && a.back() == static_cast<int64_t>(rank) - 1;
  for (size_t i = 0; ok && i < a.size(); ++i) {
    ok = a[i] >= 0 && a[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(a[i])];
    if (ok) seen[static_cast<size_t>(a[i])] = true;
  }
  if (!ok) {
    *why = std::string(name) + " must be a permutation of the rank " + std::to_string(rank) +
           " that keeps the last axis last";
    return {};
  }
  return a;
}

Shape permute_shape(const Shape& s, const std::vector<int64_t>& perm) {
  Shape r(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) r[i] = s[static_cast<size_t>(perm[i])];
  return r;
}

namespace {

void infer_attention(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.has_input(i) || ctx.dtype(i) != DType::kFloat32) ctx.error("Q, Kt and V must be float32");
  std::string why;
  const size_t rank = ctx.shape(0).size();
  const std::vector<int64_t> qp = attention_view_perm(*ctx.node, "q_perm", rank, &why);
  if (!why.empty()) ctx.error(why);
  const std::vector<int64_t> vp = attention_view_perm(*ctx.node, "v_perm", ctx.shape(2).size(), &why);
  if (!why.empty()) ctx.error(why);
  const std::vector<int64_t> op = attention_view_perm(*ctx.node, "out_perm", rank, &why);
  if (!why.empty()) ctx.error(why);
  const Shape q = permute_shape(ctx.shape(0), qp);
  const Shape& kt = ctx.shape(1);
  const Shape v = permute_shape(ctx.shape(2), vp);
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
  ctx.set_output(0, DType::kFloat32, permute_shape(out, op));
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "ScaledDotProductAttention", .infer = infer_attention,
                 .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});

}  // namespace gec::ops
