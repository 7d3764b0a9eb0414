// Conv + BatchNormalization folding:
//
//   BatchNormalization(Conv(x, W, B?), scale, bias, mean, var)
//     -> Conv(x, W * a[m], B * a[m] + bias - mean * a[m]),  a = scale / sqrt(var + eps)
//
// Why: inference BN is a per-channel affine map; folded into the weights it
// costs nothing at run time (every torchvision CNN has one per Conv).
// Guards: the Conv output is read only by the BN and is not a graph output
// (else the un-normalized value is still needed, case B07); weights, bias and
// BN parameters are float32 constants; one BN parameter per output channel.
// Grouped and depthwise convs fold the same way: output channel m only ever
// reads its own slice of W.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

using Affine = std::pair<std::vector<float>, std::vector<float>>;

std::optional<Match> match(const ir::Graph& g, ir::Node* bn) {
  if (!bn->input(0)) return std::nullopt;
  ir::Node* conv = bn->input(0)->producer();
  auto m = foldable_conv(g, conv);
  if (!m) return std::nullopt;
  auto affine = bn_as_affine(bn, *m);
  if (!affine) return std::nullopt;
  return Match{bn, {conv, bn}, {}, std::move(*affine)};
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* conv = m.nodes[0];
  const auto& affine = std::any_cast<const Affine&>(m.data);
  fold_affine_into_conv(g, conv, affine.first, affine.second);
  return conv->output(0);
}

}  // namespace

std::vector<RewriteRule> conv_bn_folding_rules() {
  return {{"conv_bn", {"BatchNormalization"}, "BatchNormalization(Conv(x, W, B)) -> Conv(x, W*a[m], B*a[m] + b[m])",
           match, rewrite}};
}

std::unique_ptr<Pass> make_conv_bn_folding() { return make_rule_pass("conv_bn_folding", conv_bn_folding_rules()); }

}  // namespace gec::passes
