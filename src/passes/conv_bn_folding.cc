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
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

bool fold(ir::Graph& g, ir::Node* bn) {
  if (!is_op(bn, "BatchNormalization") || !bn->input(0)) return false;
  ir::Node* conv = bn->input(0)->producer();
  auto m = foldable_conv(g, conv);
  if (!m) return false;
  auto affine = bn_as_affine(bn, *m);
  if (!affine) return false;
  if (!replace_value(g, bn->output(0), conv->output(0))) return false;
  fold_affine_into_conv(g, conv, affine->first, affine->second);
  note_fused(conv, bn);
  g.remove_node(bn);
  return true;
}

class ConvBnFolding final : public Pass {
 public:
  const char* name() const override { return "conv_bn_folding"; }
  int64_t run(ir::Graph& g) override { return rewrite_to_fixed_point(g, fold); }
};

}  // namespace

std::unique_ptr<Pass> make_conv_bn_folding() { return std::make_unique<ConvBnFolding>(); }

}  // namespace gec::passes
