// Per-channel affine folding into Conv weights (see weight_folding.h).
#include "passes/weight_folding.h"

#include <cmath>

#include "passes/rewrite_util.h"

namespace gec::passes {

std::optional<int64_t> foldable_conv(const ir::Graph& g, const ir::Node* conv) {
  if (!is_op(conv, "Conv") || conv->owner() != &g) return std::nullopt;
  const ir::Value* w = conv->input(1);
  if (!w || !w->is_constant() || w->constant->dtype() != DType::kFloat32) return std::nullopt;
  if (w->constant->shape().size() < 3) return std::nullopt;
  const int64_t m = w->constant->shape()[0];
  if (conv->has_input(2)) {
    const ir::Value* b = conv->input(2);
    if (!b->is_constant() || b->constant->dtype() != DType::kFloat32 || b->constant->numel() != m)
      return std::nullopt;
  }
  if (conv->output(0)->type.dtype != DType::kFloat32) return std::nullopt;
  if (!single_consumer(g, conv->output(0)).first) return std::nullopt;
  return m;
}

void fold_affine_into_conv(ir::Graph& g, ir::Node* conv, const std::vector<float>& a,
                           const std::vector<float>& b) {
  const Tensor& w = *conv->input(1)->constant;
  const int64_t m = w.shape()[0];
  const int64_t per_channel = w.numel() / std::max<int64_t>(m, 1);
  std::vector<float> w2(w.as<float>(), w.as<float>() + w.numel());
  for (int64_t c = 0; c < m; ++c)
    for (int64_t i = 0; i < per_channel; ++i) w2[c * per_channel + i] *= a[c];
  std::vector<float> b2(static_cast<size_t>(m), 0.f);
  if (conv->has_input(2)) b2 = *const_floats(conv->input(2));
  for (int64_t c = 0; c < m; ++c) b2[c] = b2[c] * a[c] + b[c];
  conv->set_input(1, add_f32_constant(g, conv->input(1)->name() + "_folded", w.shape(), w2));
  ir::Value* bias = add_f32_constant(g, conv->output(0)->name() + "_bias", {m}, b2);
  if (conv->inputs().size() > 2) conv->set_input(2, bias);
  else conv->add_input(bias);
}

std::optional<std::pair<std::vector<float>, std::vector<float>>> bn_as_affine(const ir::Node* bn,
                                                                             int64_t channels) {
  if (!is_op(bn, "BatchNormalization") || bn->outputs().size() != 1) return std::nullopt;
  std::vector<std::vector<float>> p;
  for (size_t i = 1; i <= 4; ++i) {
    auto v = const_floats(bn->input(i));
    if (!v || static_cast<int64_t>(v->size()) != channels) return std::nullopt;
    p.push_back(std::move(*v));
  }
  const float eps = bn->get_float("epsilon", 1e-5f);
  std::vector<float> a(channels), b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = p[0][c] / std::sqrt(p[3][c] + eps);
    b[c] = p[1][c] - p[2][c] * a[c];
  }
  return std::make_pair(std::move(a), std::move(b));
}

std::optional<std::vector<float>> per_channel(const ir::Value* c, int64_t m, size_t out_rank) {
  auto data = const_floats(c);
  if (!data) return std::nullopt;
  const Shape& s = c->constant->shape();
  if (s.size() > out_rank) return std::nullopt;
  bool along_m = false;
  for (size_t j = 0; j < s.size(); ++j) {
    const size_t axis = out_rank - s.size() + j;
    if (s[j] == 1) continue;
    if (axis != 1 || s[j] != m) return std::nullopt;
    along_m = true;
  }
  std::vector<float> r(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) r[i] = (*data)[along_m ? i : 0];
  return r;
}

}  // namespace gec::passes
