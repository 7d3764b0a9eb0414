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
// the absorbed node and not a graph output. The activation must be an op
// whose registration declares the conv_epilogue trait, with constant
// parameters (Clip's min/max constant,
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
// SiLU, which PyTorch exports spelled out as Mul(x, Sigmoid(x)), is put
// together earlier, by transformer_fusion's rule swish (so that a MatMul
// can take it too); conv_activation takes the com.graphengine::Swish it makes.
//
// Runs after the weight foldings (conv_bn_folding, conv_scale_folding),
// which only match a plain Conv.
#include "ops/fused_conv.h"
#include "ops/op_schema.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
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

/// Makes `conv` a FusedConv (no activation yet) unless it is one already.
void make_fused(ir::Node* conv) {
  if (ops::is_fused_conv(conv)) return;
  conv->op_type = ops::kFusedConvOp;
  conv->domain = ops::kGecDomain;
  ops::write_fused_activation(*conv, {});
}

// Rule conv_residual_add: Add(conv, z) or Add(z, conv), z of the conv
// output's type -> z is input 3. values: {z}.
std::optional<Match> match_residual(const ir::Graph& g, ir::Node* add) {
  if (add->inputs().size() != 2 || !add->input(0) || !add->input(1)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ir::Node* conv = open_conv(g, add->input(side));
    ir::Value* z = add->input(1 - side);
    if (!conv || conv->has_input(3)) continue;
    if (!same_type(z->type, conv->output(0)->type) || !same_type(add->output(0)->type, z->type)) continue;
    return Match{add, {conv, add}, {z}, {}};
  }
  return std::nullopt;
}

ir::Value* rewrite_residual(ir::Graph& g, const Match& m) {
  ir::Node* conv = m.nodes[0];
  make_fused(conv);
  conv->set_input(3, m.values[0]);  // B (input 2) stays as it was, possibly omitted
  return conv->output(0);
}

// Rule conv_activation: act(conv) -> the activation as the last post-op.
// data: the ops::FusedActivation.
std::optional<Match> match_activation(const ir::Graph& g, ir::Node* act) {
  if (!act->input(0)) return std::nullopt;
  auto a = ops::activation_of(*act);
  if (!a) return std::nullopt;
  ir::Node* conv = open_conv(g, act->input(0));
  if (!conv || act->output(0)->type.dtype != DType::kFloat32) return std::nullopt;
  return Match{act, {conv, act}, {}, *a};
}

ir::Value* rewrite_activation(ir::Graph& g, const Match& m) {
  ir::Node* conv = m.nodes[0];
  make_fused(conv);
  ops::write_fused_activation(*conv, std::any_cast<const ops::FusedActivation&>(m.data));
  return conv->output(0);
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

// Rule hardswish: a spelled-out HardSwish -> HardSwish (conv_activation takes
// it next). values: {x}.
std::optional<Match> match_hardswish(const ir::Graph& g, ir::Node* root) {
  if (!root->output(0) || root->output(0)->type.dtype != DType::kFloat32) return std::nullopt;
  ir::Value* x = spelled_out_hardswish(g, root);
  // One-element constants of higher rank broadcast x up (a [1,1] 3 makes a
  // [4] x [1,4]); HardSwish keeps x's shape, so the types must agree.
  if (!x || !(x->type == root->output(0)->type)) return std::nullopt;
  // The chain from the root up to x; each link is read once (spelled_out_hardswish).
  std::vector<ir::Node*> chain{root};
  for (size_t i = 0; i < chain.size(); ++i)
    for (ir::Value* in : chain[i]->inputs())
      if (in && in != x && in->producer() && in->uses().size() == 1) chain.push_back(in->producer());
  return Match{root, std::move(chain), {x}, {}};
}

ir::Value* rewrite_hardswish(ir::Graph& g, const Match& m) {
  ir::Node* hs = g.add_node("HardSwish", {m.values[0]}, {g.unique_name(m.last->output(0)->name())}, m.last->name);
  hs->output(0)->type = m.last->output(0)->type;
  return hs->output(0);
}

/// The ops a convolution can take as its last post-op (their conv_epilogue
/// trait), as rule roots.
std::vector<std::string> epilogue_ops() {
  std::vector<std::string> r;
  for (const auto& [domain, op] : ops::registered_ops())
    if (ops::find_schema(domain, op)->traits.conv_epilogue) r.push_back(domain.empty() ? op : domain + "::" + op);
  return r;
}

}  // namespace

// Order matters: a spelled-out HardSwish is put together before the Conv
// before it is looked at, and a residual Add is absorbed before the
// activation after it (FusedConv computes act(conv + z)).
std::vector<RewriteRule> conv_activation_fusion_rules() {
  return {{"hardswish", {"Div", "Mul"}, "Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6) and two other forms -> HardSwish(x)",
           match_hardswish, rewrite_hardswish},
          {"conv_residual_add", {"Add"}, "Add(Conv(x, W, B), z) -> FusedConv(x, W, B, z)", match_residual,
           rewrite_residual},
          {"conv_activation", epilogue_ops(), "act(Conv(x, W, B[, z])) -> FusedConv(x, W, B[, z]) activation=act",
           match_activation, rewrite_activation}};
}

std::unique_ptr<Pass> make_conv_activation_fusion() {
  return make_rule_pass("conv_activation_fusion", conv_activation_fusion_rules());
}

}  // namespace gec::passes
