// Conv + per-channel Mul / Add folding:
//
//   Mul(Conv(x, W, B?), c)  -> Conv(x, W * c[m], B * c[m])
//   Add(Conv(x, W, B?), c)  -> Conv(x, W, B + c[m])      (either operand order)
//
// where c is a float32 constant that broadcasts along the output channel only:
// right-aligned to the Conv output [N, M, ...], every dim of c is 1 except
// the one over M, which is M or 1 (a scalar or [M,1,1] or [1,M,1,1]). Such
// a c never changes the output shape. Why: exporters leave bias and scale as
// separate ops (Paddle models, convs without bias followed by Add).
// Guards: the Conv output is read only by this Mul/Add and is not a graph
// output (B07); W, B, c are float32 constants. Grouped convs are safe
// (B01): channel m's weights and bias are scaled alone, groups never mix.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

using Affine = std::pair<std::vector<float>, std::vector<float>>;

std::optional<Match> match(const ir::Graph& g, ir::Node* n) {
  const bool mul = is_op(n, "Mul");
  if (!n->input(0) || !n->input(1)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ir::Node* conv = n->input(side)->producer();
    auto m = foldable_conv(g, conv);
    if (!m) continue;
    const size_t rank = conv->input(1)->constant->shape().size();
    auto c = per_channel(n->input(1 - side), *m, rank);
    if (!c) continue;
    Affine ab{std::vector<float>(c->size(), 1.f), std::vector<float>(c->size(), 0.f)};
    (mul ? ab.first : ab.second) = *c;
    return Match{n, {conv, n}, {}, std::move(ab)};
  }
  return std::nullopt;
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* conv = m.nodes[0];
  const auto& ab = std::any_cast<const Affine&>(m.data);
  fold_affine_into_conv(g, conv, ab.first, ab.second);
  return conv->output(0);
}

}  // namespace

std::vector<RewriteRule> conv_scale_folding_rules() {
  return {{"conv_mul", {"Mul"}, "Mul(Conv(x, W, B), c) -> Conv(x, W*c[m], B*c[m])", match, rewrite},
          {"conv_add", {"Add"}, "Add(Conv(x, W, B), c) -> Conv(x, W, B + c[m])", match, rewrite}};
}

std::unique_ptr<Pass> make_conv_scale_folding() {
  return make_rule_pass("conv_scale_folding", conv_scale_folding_rules());
}

}  // namespace gec::passes
