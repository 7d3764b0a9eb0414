// Conv + residual Add + activation -> com.graphengine::FusedConv (oneDNN post-ops):
//
//   Relu(Conv(x, W, B))                -> FusedConv(x, W, B)       activation=Relu
//   Add(Conv(x, W, B), z)  (or z + c)  -> FusedConv(x, W, B, z)
//   Relu(Add(Conv(x, W, B), z))        -> FusedConv(x, W, B, z)    activation=Relu
//
// Why: Conv, its activation and a residual Add are otherwise three passes
// over the output in memory; as post-ops they happen while the convolution
// writes each output block (on resnet50 the separate Relu and Add passes are
// a large share of run time).
//
// The rules below form a table, each applied at the node it absorbs; a
// residual Add is absorbed before the activation after it (the FusedConv
// computes act(conv + z), in that order), so Relu(Add(Conv)) needs both
// rules in turn. Guards shared by both: the Conv (or a FusedConv without an
// activation yet) is in the same graph, its output is float32, read only by
// the absorbed node and not a graph output. The activation must be one
// fused_conv.h lists with constant parameters (Clip's min/max constant,
// min <= max). The residual z must have the Conv output's exact type (static
// or same-named dims): the sum post-op cannot broadcast.
//
// One more rule first puts a HardSwish that an exporter spelled out back
// together (paddle2onnx, older PyTorch), so that the Conv before it can
// take it and one elementwise pass replaces four even where it cannot:
//
//   Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)    -> HardSwish(x)
//   Mul(x, Div(Clip(Add(x, 3), 0, 6), 6))    -> HardSwish(x)   (operands of Add/Mul in either order)
//   Mul(x, HardSigmoid(x, 1/6, 1/2))         -> HardSwish(x)
//
// HardSwish-14 is x * max(0, min(1, x/6 + 1/2)): the same function, within
// a rounding or two. Guards: the constants are float32 scalars of exactly
// those values, every intermediate is read once and is not a graph output.
//
// Runs after the weight foldings (conv_bn_folding, conv_scale_folding),
// which only match a plain Conv.
#include "ops/fused_conv.h"
#include "passes/pass.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

/// The producer of `v` when it is a Conv / FusedConv that can take another
/// post-op: same graph, float32, `v` read only by one node and not a graph
/// output, no activation yet (an activation is always the last post-op).
ir::Node* open_conv(const ir::Graph& g, const ir::Value* v) {
  ir::Node* p = v ? v->producer() : nullptr;
  if (!p || p->owner() != &g || !(is_op(p, "Conv") || ops::is_fused_conv(p))) return nullptr;
  if (ops::is_fused_conv(p) && !ops::read_fused_activation(*p).op.empty()) return nullptr;
  if (v->type.dtype != DType::kFloat32 || !p->input(0) || p->input(0)->type.dtype != DType::kFloat32)
    return nullptr;
  if (!single_consumer(g, v).first) return nullptr;
  return p;
}

/// Same dtype and the same shape for every run: equal static dims, or
/// symbolic dims of the same (non-empty) name.
bool same_type(const ir::TensorType& a, const ir::TensorType& b) {
  if (a.dtype != b.dtype || !a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const ir::Dim& x = a.dims[i];
    const ir::Dim& y = b.dims[i];
    if (x.is_static() ? x.value != y.value : (x.param.empty() || x.param != y.param)) return false;
  }
  return true;
}

/// Turns `conv` into a FusedConv that also computes `absorbed` (whose output
/// it takes over, name included when it is a graph output) and removes
/// `absorbed`. `conv`'s output has no other reader (open_conv).
bool absorb(ir::Graph& g, ir::Node* conv, ir::Node* absorbed) {
  if (!replace_value(g, absorbed->output(0), conv->output(0))) return false;
  if (!ops::is_fused_conv(conv)) {
    conv->op_type = ops::kFusedConvOp;
    conv->domain = ops::kFusedConvDomain;
    ops::write_fused_activation(*conv, {});
  }
  note_fused(conv, absorbed);
  g.remove_node(absorbed);
  return true;
}

// Rule: Add(conv, z) or Add(z, conv), z of the conv output's type -> z is input 3.
bool fuse_residual(ir::Graph& g, ir::Node* add) {
  if (!is_op(add, "Add") || add->inputs().size() != 2 || !add->input(0) || !add->input(1)) return false;
  for (int side = 0; side < 2; ++side) {
    ir::Node* conv = open_conv(g, add->input(side));
    ir::Value* z = add->input(1 - side);
    if (!conv || conv->has_input(3)) continue;
    if (!same_type(z->type, conv->output(0)->type) || !same_type(add->output(0)->type, z->type)) continue;
    if (!absorb(g, conv, add)) return false;
    conv->set_input(3, z);  // B (input 2) stays as it was, possibly omitted
    return true;
  }
  return false;
}

// Rule: act(conv) -> the activation as the last post-op.
bool fuse_activation(ir::Graph& g, ir::Node* act) {
  if (!act->input(0)) return false;
  auto a = ops::activation_of(*act);
  if (!a) return false;
  ir::Node* conv = open_conv(g, act->input(0));
  if (!conv || act->output(0)->type.dtype != DType::kFloat32) return false;
  if (!absorb(g, conv, act)) return false;
  ops::write_fused_activation(*conv, *a);
  return true;
}

/// The x of Clip(Add(x, 3), 0, 6) (Add operands in either order), or null.
ir::Value* relu6_of_x_plus_3(const ir::Graph& g, const ir::Value* v) {
  ir::Node* clip = sole_producer(g, v, "Clip");
  if (!clip || !const_near(clip->input(1), 0.f) || !const_near(clip->input(2), 6.f)) return nullptr;
  ir::Node* add = sole_producer(g, clip->input(0), "Add");
  if (!add || add->inputs().size() != 2) return nullptr;
  for (int side = 0; side < 2; ++side)
    if (const_near(add->input(1 - side), 3.f)) return add->input(side);
  return nullptr;
}

/// The x when `mul` is Mul(x, r) or Mul(r, x) and `part(r)` returns x.
template <typename F>
ir::Value* mul_of_x_and(const ir::Node* mul, F part) {
  if (!is_op(mul, "Mul") || mul->inputs().size() != 2) return nullptr;
  for (int side = 0; side < 2; ++side) {
    ir::Value* x = mul->input(side);
    if (x && part(mul->input(1 - side)) == x) return x;
  }
  return nullptr;
}

/// The x for which `root` computes HardSwish(x) in one of the spelled-out forms.
ir::Value* spelled_out_hardswish(const ir::Graph& g, const ir::Node* root) {
  auto div6 = [&g](const ir::Value* v) -> ir::Value* {  // Div(Clip(Add(x, 3), 0, 6), 6)
    ir::Node* d = sole_producer(g, v, "Div");
    return d && const_near(d->input(1), 6.f) ? relu6_of_x_plus_3(g, d->input(0)) : nullptr;
  };
  auto hard_sigmoid = [&g](const ir::Value* v) -> ir::Value* {
    ir::Node* h = sole_producer(g, v, "HardSigmoid");
    return h && h->get_float("alpha", 0.2f) == 1.f / 6.f && h->get_float("beta", 0.5f) == 0.5f ? h->input(0)
                                                                                                : nullptr;
  };
  if (is_op(root, "Div") && const_near(root->input(1), 6.f)) {
    ir::Node* mul = sole_producer(g, root->input(0), "Mul");
    return mul ? mul_of_x_and(mul, [&g](const ir::Value* v) { return relu6_of_x_plus_3(g, v); }) : nullptr;
  }
  if (ir::Value* x = mul_of_x_and(root, div6)) return x;
  return mul_of_x_and(root, hard_sigmoid);
}

// Rule: a spelled-out HardSwish -> HardSwish (the Conv rule takes it next sweep).
bool fuse_hardswish(ir::Graph& g, ir::Node* root) {
  if (!root->output(0) || root->output(0)->type.dtype != DType::kFloat32) return false;
  ir::Value* x = spelled_out_hardswish(g, root);
  // One-element constants of higher rank broadcast x up (a [1,1] 3 makes a
  // [4] x [1,4]); HardSwish keeps x's shape, so the types must agree.
  if (!x || !(x->type == root->output(0)->type)) return false;
  ir::Node* hs = g.add_node("HardSwish", {x}, {g.unique_name(root->output(0)->name())}, root->name);
  hs->output(0)->type = root->output(0)->type;
  if (!replace_value(g, root->output(0), hs->output(0))) {
    g.remove_node(hs);
    return false;
  }
  // Remove the chain from the root up; each part now has no reader.
  std::vector<ir::Node*> dead{root};
  for (size_t i = 0; i < dead.size(); ++i)
    for (ir::Value* in : dead[i]->inputs())
      if (in && in != x && in->producer() && in->uses().size() == 1) dead.push_back(in->producer());
  hs->fused_from.clear();
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) {  // source order: Add first
    const ir::Node* n = *it;
    if (n->fused_from.empty()) hs->fused_from.push_back(n->name);
    hs->fused_from.insert(hs->fused_from.end(), n->fused_from.begin(), n->fused_from.end());
  }
  for (ir::Node* n : dead) remove_if_dead(g, n);
  return true;
}

bool fuse(ir::Graph& g, ir::Node* n) {
  return fuse_hardswish(g, n) || fuse_residual(g, n) || fuse_activation(g, n);
}

class ConvActivationFusion final : public Pass {
 public:
  const char* name() const override { return "conv_activation_fusion"; }
  int64_t run(ir::Graph& g) override { return rewrite_to_fixed_point(g, fuse); }
};

}  // namespace

std::unique_ptr<Pass> make_conv_activation_fusion() { return std::make_unique<ConvActivationFusion>(); }

}  // namespace gec::passes
