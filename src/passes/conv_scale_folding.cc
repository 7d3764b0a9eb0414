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
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

bool fold(ir::Graph& g, ir::Node* n) {
  const bool mul = is_op(n, "Mul"), add = is_op(n, "Add");
  if (!(mul || add) || !n->input(0) || !n->input(1)) return false;
  for (int side = 0; side < 2; ++side) {
    ir::Node* conv = n->input(side)->producer();
    auto m = foldable_conv(g, conv);
    if (!m) continue;
    const size_t rank = conv->input(1)->constant->shape().size();
    auto c = per_channel(n->input(1 - side), *m, rank);
    if (!c) continue;
    if (!replace_value(g, n->output(0), conv->output(0))) return false;
    std::vector<float> a(c->size(), 1.f), b(c->size(), 0.f);
    (mul ? a : b) = *c;
    fold_affine_into_conv(g, conv, a, b);
    note_fused(conv, n);
    g.remove_node(n);
    return true;
  }
  return false;
}

class ConvScaleFolding final : public Pass {
 public:
  const char* name() const override { return "conv_scale_folding"; }
  int64_t run(ir::Graph& g) override { return rewrite_to_fixed_point(g, fold); }
};

}  // namespace

std::unique_ptr<Pass> make_conv_scale_folding() { return std::make_unique<ConvScaleFolding>(); }

}  // namespace gec::passes
