// ConvTranspose + per-channel affine folding, the ConvTranspose twin of
// conv_bn_folding and conv_scale_folding:
//
//   BatchNormalization(ConvTranspose(x, W, B?), scale, bias, mean, var)
//     -> ConvTranspose(x, W', B * a + bias - mean * a),  a = scale / sqrt(var + eps)
//   Mul(ConvTranspose(x, W, B?), c) -> ConvTranspose(x, W', B * c[m])      (a = c)
//   Add(ConvTranspose(x, W, B?), c) -> ConvTranspose(x, W, B + c[m])       (either order)
//
// c is a float32 constant that broadcasts along the output channel only
// (every dim 1 except the one over M, right-aligned to [N, M, ...]).
// Why: inference BN is a per-channel affine map (ONNX BatchNormalization-15,
// training_mode=0); after a ConvTranspose (decoder / FPN heads, e.g. DBNet's
// head in ppocr_v4_det: ConvTranspose -> Add(bias) -> BN) the Conv foldings
// do not see it and each op costs a full pass over the upsampled tensor.
// Weight layout (ONNX ConvTranspose-11): W is [C_in, M/group, k...]; output
// channel m = g * (M/group) + j is produced only by W[g*C_in/group .. , j, ...],
// so W'[ci, j, ...] = W[ci, j, ...] * a[(ci / (C_in/group)) * (M/group) + j].
// Guards: the ConvTranspose output is read only by the BN / Mul / Add and is
// not a graph output; W, B, c and the BN parameters are float32 constants;
// one BN parameter per output channel.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

/// Output channel count M of a foldable ConvTranspose, else nullopt.
std::optional<int64_t> foldable_conv_transpose(const ir::Graph& g, const ir::Node* ct) {
  if (!is_op(ct, "ConvTranspose") || ct->owner() != &g || ct->outputs().size() != 1) return std::nullopt;
  const ir::Value* w = ct->input(1);
  if (!w || !w->is_constant() || w->constant->dtype() != DType::kFloat32) return std::nullopt;
  const Shape& ws = w->constant->shape();
  const int64_t group = ct->get_int("group", 1);
  if (ws.size() < 3 || group < 1 || ws[0] % group != 0) return std::nullopt;
  const int64_t m = ws[1] * group;
  if (ct->has_input(2)) {
    const ir::Value* b = ct->input(2);
    if (!b->is_constant() || b->constant->dtype() != DType::kFloat32 || b->constant->numel() != m)
      return std::nullopt;
  }
  if (ct->output(0)->type.dtype != DType::kFloat32) return std::nullopt;
  if (!single_consumer(g, ct->output(0)).first) return std::nullopt;
  return m;
}

/// Rewrites `ct` to compute conv_transpose(x) * a[m] + b[m] (new constants:
/// the old weights may be shared).
void fold_affine_into_conv_transpose(ir::Graph& g, ir::Node* ct, const std::vector<float>& a,
                                     const std::vector<float>& b) {
  const Tensor& w = *ct->input(1)->constant;
  const Shape& ws = w.shape();
  const int64_t group = ct->get_int("group", 1), c_in = ws[0], ocg = ws[1], m = ocg * group;
  const int64_t icg = c_in / group, k_elems = w.numel() / std::max<int64_t>(c_in * ocg, 1);
  std::vector<float> w2(w.as<float>(), w.as<float>() + w.numel());
  for (int64_t ci = 0; ci < c_in; ++ci)
    for (int64_t j = 0; j < ocg; ++j) {
      const float s = a[(ci / icg) * ocg + j];
      float* p = w2.data() + (ci * ocg + j) * k_elems;
      for (int64_t k = 0; k < k_elems; ++k) p[k] *= s;
    }
  std::vector<float> b2(static_cast<size_t>(m), 0.f);
  if (ct->has_input(2)) b2 = *const_floats(ct->input(2));
  for (int64_t c = 0; c < m; ++c) b2[c] = b2[c] * a[c] + b[c];
  ct->set_input(1, add_f32_constant(g, ct->input(1)->name() + "_folded", ws, w2));
  ir::Value* bias = add_f32_constant(g, ct->output(0)->name() + "_bias", {m}, b2);
  if (ct->inputs().size() > 2) ct->set_input(2, bias);
  else ct->add_input(bias);
}

using Affine = std::pair<std::vector<float>, std::vector<float>>;

/// `n` (a BN, Mul or Add) reading a foldable ConvTranspose, as an affine map.
std::optional<Match> match(const ir::Graph& g, ir::Node* n) {
  const bool bn = is_op(n, "BatchNormalization"), mul = is_op(n, "Mul");
  if (!n->input(0)) return std::nullopt;
  for (int side = 0; side < (bn ? 1 : 2); ++side) {
    if (!n->input(side) || (!bn && !n->input(1 - side))) continue;
    ir::Node* ct = n->input(side)->producer();
    auto m = foldable_conv_transpose(g, ct);
    if (!m) continue;
    std::optional<Affine> affine;
    if (bn) {
      affine = bn_as_affine(n, *m);
    } else if (auto c = per_channel(n->input(1 - side), *m, ct->input(1)->constant->shape().size())) {
      affine.emplace(std::vector<float>(*m, 1.f), std::vector<float>(*m, 0.f));
      (mul ? affine->first : affine->second) = std::move(*c);
    }
    if (!affine) continue;
    return Match{n, {ct, n}, {}, std::move(*affine)};
  }
  return std::nullopt;
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* ct = m.nodes[0];
  const auto& ab = std::any_cast<const Affine&>(m.data);
  fold_affine_into_conv_transpose(g, ct, ab.first, ab.second);
  return ct->output(0);
}

}  // namespace

std::vector<RewriteRule> conv_transpose_folding_rules() {
  return {{"conv_transpose_bn", {"BatchNormalization"},
           "BatchNormalization(ConvTranspose(x, W, B)) -> ConvTranspose(x, W*a[m], B*a[m] + b[m])", match, rewrite},
          {"conv_transpose_mul", {"Mul"}, "Mul(ConvTranspose(x, W, B), c) -> ConvTranspose(x, W*c[m], B*c[m])", match,
           rewrite},
          {"conv_transpose_add", {"Add"}, "Add(ConvTranspose(x, W, B), c) -> ConvTranspose(x, W, B + c[m])", match,
           rewrite}};
}

std::unique_ptr<Pass> make_conv_transpose_folding() {
  return make_rule_pass("conv_transpose_folding", conv_transpose_folding_rules());
}

}  // namespace gec::passes
