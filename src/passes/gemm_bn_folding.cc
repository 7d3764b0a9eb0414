// Gemm / MatMul + BatchNormalization folding, for 2-D outputs [N, C] where
// BN's channel axis 1 is the Gemm's column axis:
//
//   BN(Gemm(A, B, C?; alpha, beta))  -> Gemm(A, B * a[n], beta*C*a[n] + b[n]; alpha, beta = 1)
//   BN(MatMul(A[M,K], W[K,N]))       -> Gemm(A, W * a[n], b[n])
//
// with a, b the BN's affine map (weight_folding.h). Why: classifier heads and
// MLPs exported with BatchNorm1d. Guards: the Gemm/MatMul output is read only
// by the BN and is not a graph output; B/W, C and BN parameters are float32
// constants; C is absent, a scalar, [N] or [1,N] (anything else would need
// C to grow); MatMul needs A of rank 2 and W 2-D.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

/// B with column n (of the [K,N] product operand) scaled by a[n].
Tensor scale_columns(const Tensor& b, bool trans, const std::vector<float>& a) {
  Tensor r = Tensor::copy_of(b.view());
  const int64_t rows = b.shape()[0], cols = b.shape()[1];
  float* p = r.as<float>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] *= a[trans ? i : j];
  return r;
}

/// beta*C*a[n] + b[n] as [N]; nullopt when C has another shape.
std::optional<std::vector<float>> folded_bias(const ir::Node* gemm, const std::vector<float>& a,
                                              const std::vector<float>& b) {
  const size_t n = a.size();
  std::vector<float> r = b;
  if (!gemm->has_input(2)) return r;
  auto c = const_floats(gemm->input(2));
  if (!c) return std::nullopt;
  const Shape& s = gemm->input(2)->constant->shape();
  const bool scalar = c->size() == 1 && s.size() <= 2;
  const bool row = c->size() == n && (s.size() == 1 || (s.size() == 2 && s[0] == 1));
  if (!scalar && !row) return std::nullopt;
  const float beta = gemm->get_float("beta", 1.f);
  for (size_t i = 0; i < n; ++i) r[i] += beta * (*c)[scalar ? 0 : i] * a[i];
  return r;
}

bool constant_2d(const ir::Value* v) {
  return v && v->is_constant() && v->constant->dtype() == DType::kFloat32 &&
         v->constant->shape().size() == 2;
}

struct Folded {
  std::vector<float> a, bias;  // column scale, new bias [N]
  bool trans = false;
};

std::optional<Match> match(const ir::Graph& g, ir::Node* bn) {
  if (!bn->input(0)) return std::nullopt;
  ir::Node* p = bn->input(0)->producer();
  const bool gemm = is_op(p, "Gemm"), matmul = is_op(p, "MatMul");
  if (!(gemm || matmul) || p->owner() != &g || !single_consumer(g, p->output(0)).first) return std::nullopt;
  if (!constant_2d(p->input(1)) || p->output(0)->type.dtype != DType::kFloat32) return std::nullopt;
  const ir::TensorType& at = p->input(0)->type;
  if (matmul && !(at.has_shape && at.dims.size() == 2)) return std::nullopt;
  const bool trans = gemm && p->get_int("transB", 0) != 0;
  const Tensor& w = *p->input(1)->constant;
  auto affine = bn_as_affine(bn, w.shape()[trans ? 0 : 1]);
  if (!affine) return std::nullopt;
  auto bias = folded_bias(p, affine->first, affine->second);
  if (!bias) return std::nullopt;
  return Match{bn, {p, bn}, {}, Folded{std::move(affine->first), std::move(*bias), trans}};
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* p = m.nodes[0];
  ir::Node* bn = m.last;
  const auto& f = std::any_cast<const Folded&>(m.data);
  ir::Value* w2 = g.add_constant(g.unique_name(p->input(1)->name() + "_folded"),
                                 scale_columns(*p->input(1)->constant, f.trans, f.a));
  ir::Value* c2 = add_f32_constant(g, bn->output(0)->name() + "_bias", {static_cast<int64_t>(f.bias.size())}, f.bias);
  ir::Node* fused = g.add_node("Gemm", {p->input(0), w2, c2}, {g.unique_name(bn->output(0)->name())}, p->name);
  for (const auto& attr : p->attrs) fused->set_attr(attr);
  fused->set_attr(ir::Attribute::Float("beta", 1.f));
  fused->output(0)->type = bn->output(0)->type;
  return fused->output(0);
}

}  // namespace

std::vector<RewriteRule> gemm_bn_folding_rules() {
  return {{"gemm_bn", {"BatchNormalization"},
           "BatchNormalization(Gemm|MatMul(A, B, C)) -> Gemm(A, B*a[n], beta*C*a[n] + b[n])", match, rewrite}};
}

std::unique_ptr<Pass> make_gemm_bn_folding() { return make_rule_pass("gemm_bn_folding", gemm_bn_folding_rules()); }

}  // namespace gec::passes
