// Transformer patterns that exporters spell out op by op, put back together
// as one op each (PyTorch exports nn.GELU and nn.LayerNorm this way below
// opsets 20 / 17):
//
//   0.5 * x * (1 + Erf(x / sqrt(2)))                        -> Gelu(x) approximate="none"
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))  -> Gelu(x) approximate="tanh"
//   (X - m) / Sqrt(ReduceMean((X - m)^2) + eps) [* g] [+ b], m = ReduceMean(X)
//                                                            -> LayerNormalization(X, g, b)
//   Mul(x, Sigmoid(x)) (SiLU; either operand order)          -> com.graphengine::Swish(x)
//
// Why: each spelled-out form is 5-10 elementwise passes over the tensor (the
// Erf one scalar), and LayerNorm's ReduceMeans are strided reductions; the
// fused ops make one pass (Gelu: com.graphengine::Gelu, computed
// without the formula's cancellation, ONNX Gelu-20 semantics;
// LayerNormalization-17).
//
// GELU: the product 0.5 * x * s may be bracketed and ordered in any way
// (x*0.5*s, x*(0.5*s), (x*s)*0.5, ...): the Mul tree under the root is
// flattened to its three factors. x / sqrt(2) may be x * (1/sqrt(2)); x^3 is
// Pow(x, 3) or x*x*x. Guards: float32; x has the root's exact type (no
// constant broadcasts it up); every constant is a one-element float32 of the
// right value (0.5, 1, 3 exactly; sqrt(2), 1/sqrt(2), sqrt(2/pi), 0.044715
// within 1e-6 relative, i.e. float32 rounding); every intermediate is read
// only inside the pattern and is not a graph output.
//
// LayerNorm: both ReduceMeans reduce the same trailing axes [a, r) of X with
// keepdims=1 (that gives axis = a); the square is Pow(d, 2) or Mul(d, d);
// the Add of epsilon takes a one-element float32 constant; d = X - m is read
// only by the square and the Div. Scale g and bias b are absorbed when they
// broadcast into the normalized dims alone (static shape, rank <= r - a,
// each dim 1 or X's) so that Mul/Add and LayerNormalization broadcast alike;
// without g the Scale is a constant [1] = {1}.
//
// SiLU (PyTorch's nn.SiLU: LLaMA-style MLPs, EfficientNet, YOLO): one
// com.graphengine::Swish (ops/swish.cc, ONNX Swish-24 semantics) that
// matmul_epilogue_fusion and conv_activation_fusion then take as a post-op.
// Guards: float32, x of the Mul's exact type, the Sigmoid read only by the
// Mul.
//
// Runs with the other fusions (-O2 and up).
#include <algorithm>
#include <cmath>

#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "ops/attention.h"
#include "ops/domain.h"

namespace gec::passes {
namespace {


/// The other input of a two-input `n` when one of them satisfies `pred`.
template <typename P>
ir::Value* other_input(const ir::Node* n, P pred) {
  if (!n || n->inputs().size() != 2 || !n->input(0) || !n->input(1)) return nullptr;
  for (int side = 0; side < 2; ++side)
    if (pred(n->input(side))) return n->input(1 - side);
  return nullptr;
}

// ---- GELU ------------------------------------------------------------------

/// Leaves of the Mul tree under `v` (Muls read once inside the tree are
/// expanded); false when there are more than `max` leaves.
bool mul_leaves(const ir::Graph& g, ir::Value* v, size_t max, std::vector<ir::Value*>& leaves,
                std::vector<ir::Node*>& muls) {
  if (ir::Node* m = sole_producer(g, v, "Mul"); m && m->inputs().size() == 2 && m->input(0) && m->input(1)) {
    muls.push_back(m);
    return mul_leaves(g, m->input(0), max, leaves, muls) && mul_leaves(g, m->input(1), max, leaves, muls);
  }
  leaves.push_back(v);
  return leaves.size() <= max;
}

/// True when `v` is x^3: Pow(x, 3) or a Mul tree with leaves x, x, x.
bool is_cube_of(const ir::Graph& g, ir::Value* v, const ir::Value* x, std::vector<ir::Node*>& matched) {
  if (ir::Node* p = sole_producer(g, v, "Pow")) {
    auto e = const_floats(p->input(1));
    auto ei = const_ints(p->input(1));
    const bool three = (e && e->size() == 1 && (*e)[0] == 3.f) || (ei && ei->size() == 1 && (*ei)[0] == 3);
    if (p->input(0) != x || !three) return false;
    matched.push_back(p);
    return true;
  }
  // x*x*x as Mul(x, Mul(x, x)) in either order (x itself has other readers).
  ir::Node* outer = sole_producer(g, v, "Mul");
  if (!outer || outer->inputs().size() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    ir::Node* inner = sole_producer(g, outer->input(side), "Mul");
    if (inner && outer->input(1 - side) == x && inner->input(0) == x && inner->input(1) == x) {
      matched.push_back(outer);
      matched.push_back(inner);
      return true;
    }
  }
  return false;
}

/// The x of Erf(x / sqrt(2)) or Erf(x * (1/sqrt(2))) feeding `t`.
ir::Value* erf_argument(const ir::Graph& g, ir::Value* t, std::vector<ir::Node*>& matched) {
  ir::Node* erf = sole_producer(g, t, "Erf");
  if (!erf) return nullptr;
  ir::Value* u = erf->input(0);
  ir::Node* scale = sole_producer(g, u, "Div");
  ir::Value* x = nullptr;
  if (scale && const_near(scale->input(1), std::sqrt(2.0), 1e-6)) {
    x = scale->input(0);
  } else if ((scale = sole_producer(g, u, "Mul"))) {
    x = other_input(scale, [](const ir::Value* c) { return const_near(c, std::sqrt(0.5), 1e-6); });
  }
  if (!x) return nullptr;
  matched.push_back(erf);
  matched.push_back(scale);
  return x;
}

/// The x of Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) feeding `t`.
ir::Value* tanh_argument(const ir::Graph& g, ir::Value* t, std::vector<ir::Node*>& matched) {
  const double kPi = 3.14159265358979323846;
  ir::Node* th = sole_producer(g, t, "Tanh");
  ir::Node* outer = th ? sole_producer(g, th->input(0), "Mul") : nullptr;
  ir::Value* inner = other_input(outer, [&](const ir::Value* c) { return const_near(c, std::sqrt(2.0 / kPi), 1e-6); });
  ir::Node* add = sole_producer(g, inner, "Add");
  if (!add || add->inputs().size() != 2) return nullptr;
  for (int side = 0; side < 2; ++side) {
    ir::Value* x = add->input(side);
    ir::Node* coef = sole_producer(g, add->input(1 - side), "Mul");
    ir::Value* cube = other_input(coef, [](const ir::Value* c) { return const_near(c, 0.044715, 1e-6); });
    std::vector<ir::Node*> cube_nodes;
    if (!cube || !is_cube_of(g, cube, x, cube_nodes)) continue;
    matched.insert(matched.end(), {th, outer, add, coef});
    matched.insert(matched.end(), cube_nodes.begin(), cube_nodes.end());
    return x;
  }
  return nullptr;
}

// Match: 0.5 * x * (1 + Erf(x / sqrt(2)))  or  ... (1 + Tanh(...)); data: `approximate`.
std::optional<Match> match_gelu(const ir::Graph& g, ir::Node* root) {
  if (root->inputs().size() != 2 || !root->input(0) || !root->input(1)) return std::nullopt;
  ir::Value* y = root->output(0);
  if (y->type.dtype != DType::kFloat32 || !y->type.has_shape) return std::nullopt;
  std::vector<ir::Value*> leaves;
  std::vector<ir::Node*> matched{root};
  if (!mul_leaves(g, root->input(0), 3, leaves, matched) || !mul_leaves(g, root->input(1), 3, leaves, matched) ||
      leaves.size() != 3)
    return std::nullopt;
  for (size_t half = 0; half < 3; ++half) {
    if (!const_near(leaves[half], 0.5)) continue;
    for (size_t s = 0; s < 3; ++s) {
      if (s == half) continue;
      ir::Value* x = leaves[3 - half - s];
      ir::Node* one_plus = sole_producer(g, leaves[s], "Add");
      ir::Value* t = other_input(one_plus, [](const ir::Value* c) { return const_near(c, 1.0); });
      if (!t || !(x->type == y->type)) continue;
      std::vector<ir::Node*> m = matched;
      m.push_back(one_plus);
      std::string approximate = "none";
      ir::Value* arg = erf_argument(g, t, m);
      if (!arg) {
        arg = tanh_argument(g, t, m);
        approximate = "tanh";
      }
      if (arg != x) continue;
      return Match{root, std::move(m), {x}, approximate};
    }
  }
  return std::nullopt;
}

ir::Value* rewrite_gelu(ir::Graph& g, const Match& m) {
  ir::Value* y = m.last->output(0);
  ir::Node* gelu = g.add_node("Gelu", {m.values[0]}, {g.unique_name(y->name())}, m.last->name, ops::kGecDomain);
  gelu->set_attr(ir::Attribute::String("approximate", std::any_cast<std::string>(m.data)));
  gelu->output(0)->type = y->type;
  return gelu->output(0);
}

// ---- LayerNorm ---------------------------------------------------------------

/// The first reduced axis when `rm` is ReduceMean(X) over the trailing axes
/// [a, r) of X (rank r) with keepdims=1; -1 otherwise.
int64_t trailing_mean_axis(const ir::Node* rm, int64_t r) {
  // With noop_with_empty_axes = 1 an absent axes input reduces nothing.
  if (rm->get_int("keepdims", 1) != 1 || rm->get_int("noop_with_empty_axes", 0) != 0 || r <= 0) return -1;
  std::vector<int64_t> axes;
  if (rm->has_input(1)) {
    auto c = const_ints(rm->input(1));
    if (!c || c->empty()) return -1;
    axes = *c;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);  // no axes: all of them
  }
  for (int64_t& a : axes) {
    if (a < -r || a >= r) return -1;
    if (a < 0) a += r;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != r - static_cast<int64_t>(axes.size() - i)) return -1;
  return axes.front();
}

/// True when `p` (a Mul/Add after the normalization) combines its input
/// `from` with a parameter that broadcasts into the normalized dims [a, r)
/// of X's type alone; sets `param` then (only).
bool affine_param(const ir::Node* p, const ir::Value* from, const ir::TensorType& xt, int64_t a, ir::Value*& param) {
  ir::Value* v = other_input(p, [from](const ir::Value* in) { return in == from; });
  if (!v || v == from || !(p->output(0)->type == xt)) return false;
  auto s = static_shape(v);
  const int64_t r = static_cast<int64_t>(xt.dims.size());
  if (!s || static_cast<int64_t>(s->size()) > r - a || v->type.dtype != DType::kFloat32) return false;
  for (size_t j = 0; j < s->size(); ++j) {
    const ir::Dim& d = xt.dims[r - s->size() + j];
    if ((*s)[j] != 1 && !(d.is_static() && d.value == (*s)[j])) return false;
  }
  param = v;
  return true;
}

struct LayerNormFound {
  int64_t axis;
  float epsilon;
};

// Match: the LayerNorm chain ending at this Div (plus a following * g, + b);
// values: X, Scale (null: none), B (null: none).
std::optional<Match> match_layernorm(const ir::Graph& g, ir::Node* div) {
  if (div->inputs().size() != 2) return std::nullopt;
  ir::Value* d = div->input(0);
  ir::Node* sqrt_n = sole_producer(g, div->input(1), "Sqrt");
  ir::Node* add_eps = sqrt_n ? sole_producer(g, sqrt_n->input(0), "Add") : nullptr;
  auto one_float = [](const ir::Value* c) {
    auto f = const_floats(c);
    return f && f->size() == 1;
  };
  ir::Value* var = other_input(add_eps, one_float);
  if (!var) return std::nullopt;
  ir::Value* eps_v = add_eps->input(add_eps->input(0) == var ? 1 : 0);
  ir::Node* rm_var = sole_producer(g, var, "ReduceMean");
  if (!rm_var) return std::nullopt;
  ir::Node* sq = sole_producer(g, rm_var->input(0), "Pow");
  if (sq) {
    auto e = const_floats(sq->input(1));
    auto ei = const_ints(sq->input(1));
    if (!((e && e->size() == 1 && (*e)[0] == 2.f) || (ei && ei->size() == 1 && (*ei)[0] == 2)) || sq->input(0) != d)
      return std::nullopt;
  } else {
    sq = sole_producer(g, rm_var->input(0), "Mul");
    if (!sq || sq->input(0) != d || sq->input(1) != d) return std::nullopt;
  }
  // d = X - m, read by the square (once or twice) and the Div only.
  ir::Node* sub = d ? d->producer() : nullptr;
  if (!is_op(sub, "Sub") || sub->owner() != &g || g.is_graph_output(d)) return std::nullopt;
  for (const auto& [user, idx] : d->uses())
    if (user != sq && user != div) return std::nullopt;
  ir::Value* x = sub->input(0);
  ir::Node* rm_mean = sole_producer(g, sub->input(1), "ReduceMean");
  if (!x || !rm_mean || rm_mean->input(0) != x) return std::nullopt;
  const ir::TensorType& xt = x->type;
  if (xt.dtype != DType::kFloat32 || !xt.has_shape || !(div->output(0)->type == xt)) return std::nullopt;
  const int64_t r = static_cast<int64_t>(xt.dims.size());
  const int64_t axis = trailing_mean_axis(rm_mean, r);
  if (axis < 0 || trailing_mean_axis(rm_var, r) != axis) return std::nullopt;
  const float eps = (*const_floats(eps_v))[0];
  if (!std::isfinite(eps) || eps < 0.f) return std::nullopt;

  std::vector<ir::Node*> matched{div, sqrt_n, add_eps, rm_var, sq, sub, rm_mean};
  ir::Node* last = div;
  ir::Value* scale = nullptr;
  ir::Value* bias = nullptr;
  auto [mul, mi] = single_consumer(g, div->output(0));
  if (is_op(mul, "Mul") && affine_param(mul, div->output(0), xt, axis, scale)) {
    matched.insert(matched.begin(), mul);
    last = mul;
    auto [add, ai] = single_consumer(g, mul->output(0));
    if (is_op(add, "Add") && affine_param(add, mul->output(0), xt, axis, bias)) {
      matched.insert(matched.begin(), add);
      last = add;
    }
  }
  return Match{last, std::move(matched), {x, scale, bias}, LayerNormFound{axis, eps}};
}

ir::Value* rewrite_layernorm(ir::Graph& g, const Match& m) {
  const auto& f = std::any_cast<const LayerNormFound&>(m.data);
  ir::Value* x = m.values[0];
  ir::Value* scale = m.values[1];
  if (!scale) scale = add_f32_constant(g, m.last->name + "_scale", {1}, {1.f});
  std::vector<ir::Value*> ins{x, scale};
  if (m.values[2]) ins.push_back(m.values[2]);
  ir::Node* ln = g.add_node("LayerNormalization", ins, {g.unique_name(m.last->output(0)->name())}, m.last->name);
  ln->set_attr(ir::Attribute::Int("axis", f.axis));
  ln->set_attr(ir::Attribute::Float("epsilon", f.epsilon));
  ln->output(0)->type = x->type;
  return ln->output(0);
}

// ---- scaled dot-product attention --------------------------------------------------------

/// v = Mul(x, c), Mul(c, x) or Div(x, c) with c a one-element float32
/// constant, the product read only by its one consumer (sole_producer): the
/// Mul/Div, x, c's value, and whether it divides. nullopt otherwise.
struct ConstantFactor {
  ir::Node* node;
  ir::Value* x;
  float k;
  bool divides;
};
std::optional<ConstantFactor> constant_factor(const ir::Graph& g, const ir::Value* v) {
  for (const char* op : {"Div", "Mul"}) {
    ir::Node* sc = sole_producer(g, v, op);
    if (!sc || sc->inputs().size() != 2) continue;
    const bool divides = std::string(op) == "Div";
    const int c = !divides && const_floats(sc->input(0)) ? 0 : 1;
    const auto k = const_floats(sc->input(c));
    ir::Value* x = sc->input(1 - c);
    if (!k || k->size() != 1 || !x) return std::nullopt;
    return ConstantFactor{sc, x, (*k)[0], divides};
  }
  return std::nullopt;
}

struct AttentionFound {
  float scale = 1.f;
  std::string mask_kind = "none";
  float fill = 0.f;
};

bool static_f32(const ir::Value* v) {
  return v && v->type.dtype == DType::kFloat32 && v->type.is_static() && v->type.is_tensor();
}

/// MatMul(Softmax(mask(scale(MatMul(Q, Kt)))), V): the second MatMul is the
/// root. scale: Mul by / Div by a one-element constant, or none; mask: Add
/// of a float32 tensor, Where(bool, one-element constant, scores) (PyTorch's
/// masked_fill), or none. Guards: float32 static shapes of one rank >= 2
/// with the same batch dims on Q, Kt and V (no broadcasting between them),
/// Softmax over the last axis, a mask that broadcasts to the scores without
/// raising their rank, a finite scale.
/// The rest of the attention pattern below the mask: the scale and
/// MatMul(Q, Kt), and the shape guards.
std::optional<Match> attention_below_mask(const ir::Graph& g, ir::Node* mm2, ir::Value* v, const Shape& ps,
                                          int64_t rank, std::vector<ir::Node*> nodes, AttentionFound f, ir::Value* cur,
                                          ir::Value* mask) {
  // The scale: a Mul or Div there must be by a constant.
  if (sole_producer(g, cur, "Mul") || sole_producer(g, cur, "Div")) {
    const auto cf = constant_factor(g, cur);
    if (!cf) return std::nullopt;
    const float scale = cf->divides ? 1.f / cf->k : cf->k;
    if (!std::isfinite(scale)) return std::nullopt;
    f.scale = scale;
    cur = cf->x;
    nodes.push_back(cf->node);
  }
  ir::Node* mm1 = sole_producer(g, cur, "MatMul");
  if (!mm1) return std::nullopt;
  ir::Value* q = mm1->input(0);
  ir::Value* kt = mm1->input(1);
  if (!static_f32(q) || !static_f32(kt)) return std::nullopt;
  const Shape qs = q->type.static_shape(), ks = kt->type.static_shape(), vs = v->type.static_shape();
  if (static_cast<int64_t>(qs.size()) != rank || ks.size() != qs.size() || vs.size() != qs.size()) return std::nullopt;
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (ks[i] != qs[i] || vs[i] != qs[i]) return std::nullopt;
  if (ks[rank - 2] != qs[rank - 1] || vs[rank - 2] != ks[rank - 1]) return std::nullopt;
  // The scores [..., S, T]: the mask and the softmax must keep exactly them
  // (a mask that broadcasts the scores up is not this pattern).
  Shape scores(qs.begin(), qs.end() - 1);
  scores.push_back(ks[rank - 1]);
  if (ps != scores) return std::nullopt;
  if (mask) {
    const Shape ms = mask->type.static_shape();
    if (static_cast<int64_t>(ms.size()) > rank) return std::nullopt;
    for (size_t i = 0; i < ms.size(); ++i)
      if (ms[i] != 1 && ms[i] != scores[scores.size() - ms.size() + i]) return std::nullopt;
  }
  nodes.push_back(mm1);
  return Match{mm2, std::move(nodes), {q, kt, v, mask}, f};
}

std::optional<Match> match_attention(const ir::Graph& g, ir::Node* mm2) {
  ir::Value* v = mm2->input(1);
  ir::Node* sm = sole_producer(g, mm2->input(0), "Softmax");
  if (!sm || !static_f32(v) || !static_f32(mm2->input(0))) return std::nullopt;
  const Shape ps = mm2->input(0)->type.static_shape();
  const int64_t rank = static_cast<int64_t>(ps.size());
  int64_t axis = sm->get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (rank < 2 || axis != rank - 1) return std::nullopt;
  std::vector<ir::Node*> nodes{mm2, sm};
  AttentionFound f;
  ir::Value* cur = sm->input(0);
  ir::Value* mask = nullptr;
  // The mask.
  if (ir::Node* add = sole_producer(g, cur, "Add")) {
    // Either operand may be the scores (a mask computed by a Mul, as BERT's
    // (1 - m) * -10000, looks like a scaled score too): try both.
    f.mask_kind = "additive";
    nodes.push_back(add);
    for (int side = 0; side < 2; ++side) {
      ir::Value* scores = add->input(side);
      ir::Value* m = add->input(1 - side);
      if (!scores || !m || m->type.dtype != DType::kFloat32 || !m->type.is_static()) continue;
      if (auto r = attention_below_mask(g, mm2, v, ps, rank, nodes, f, scores, m)) return r;
    }
    return std::nullopt;
  } else if (ir::Node* wh = sole_producer(g, cur, "Where")) {
    ir::Value* cond = wh->input(0);
    const auto fill = const_floats(wh->input(1));
    if (!cond || cond->type.dtype != DType::kBool || !cond->type.is_static() || !fill || fill->size() != 1)
      return std::nullopt;
    mask = cond;
    f.mask_kind = "boolean";
    f.fill = (*fill)[0];
    cur = wh->input(2);
    nodes.push_back(wh);
  }
  return attention_below_mask(g, mm2, v, ps, rank, std::move(nodes), f, cur, mask);
}

ir::Value* rewrite_attention(ir::Graph& g, const Match& m) {
  const auto& f = std::any_cast<const AttentionFound&>(m.data);
  std::vector<ir::Value*> ins{m.values[0], m.values[1], m.values[2]};
  if (m.values[3]) ins.push_back(m.values[3]);
  ir::Node* a = g.add_node("ScaledDotProductAttention", ins, {g.unique_name(m.last->output(0)->name())}, m.last->name,
                           ops::kGecDomain);
  a->set_attr(ir::Attribute::Float("scale", f.scale));
  a->set_attr(ir::Attribute::String("mask_kind", f.mask_kind));
  if (f.mask_kind == "boolean") a->set_attr(ir::Attribute::Float("fill", f.fill));
  a->output(0)->type = m.last->output(0)->type;
  return a->output(0);
}

// ---- attention operand views ---------------------------------------------------------------
//
// PyTorch's nn.MultiheadAttention and Hugging Face's self-attention export
// the heads as Reshape + Transpose around the attention: Q and V arrive as
// Transpose(x, [1, 0, 2]) (or [0, 2, 1, 3]) copies, Q often divided by
// sqrt(D) after it, and the output goes through the inverse Transpose. The
// kernel reads Q and V and writes its output through such permutations
// (ops/attention.cc: q_perm, v_perm, out_perm), so the copies go:
//   attention(Div|Mul(q, c), ...)        -> attention(q, ...), scale / c or * c
//   attention(Transpose(x, p), Kt, ...)  -> attention(x, Kt, ...) q_perm = p o q_perm
//   attention(Q, Kt, Transpose(x, p))    -> attention(Q, Kt, x)   v_perm = p o v_perm
//   Transpose(attention(...), p)         -> attention(...)        out_perm = out_perm o p
// Guards: the folded node's output read only by the attention (or, for the
// output, the attention's read only by the Transpose), a static perm that
// keeps the last axis last, a one-element finite constant scale.

/// transpose_perm of a Transpose the attention can read through: rank >= 2,
/// the last axis kept last (rows stay contiguous).
std::optional<std::vector<int64_t>> row_keeping_perm(const ir::Node* t) {
  if (!t->input(0) || !t->input(0)->type.has_shape) return std::nullopt;
  auto p = transpose_perm(t);
  if (!p || p->size() < 2 || p->back() != static_cast<int64_t>(p->size()) - 1) return std::nullopt;
  return p;
}

/// The node's q_perm / v_perm / out_perm, validated as the op's schema does
/// (ops::attention_view_perm: identity when absent); nullopt when invalid.
std::optional<std::vector<int64_t>> view_perm(const ir::Node* a, const char* name, size_t rank) {
  std::string why;
  std::vector<int64_t> p = ops::attention_view_perm(*a, name, rank, &why);
  if (!why.empty()) return std::nullopt;
  return p;
}

bool is_attention(const ir::Node* n) {
  return n && n->domain == ops::kGecDomain && n->op_type == "ScaledDotProductAttention";
}

/// Match data: which fold (0 scale of Q, 1 Transpose of Q, 2 Transpose of
/// V), and the new scale or perm.
struct ViewFold {
  int what = 0;
  float scale = 1.f;
  std::vector<int64_t> perm;
};

std::optional<Match> match_attention_inputs(const ir::Graph& g, ir::Node* a) {
  if (!is_attention(a) || a->inputs().size() < 3) return std::nullopt;
  const size_t rank = a->input(0) && a->input(0)->type.has_shape ? a->input(0)->type.dims.size() : 0;
  if (rank < 2) return std::nullopt;
  if (const auto cf = constant_factor(g, a->input(0)); cf && cf->x->type == a->input(0)->type) {
    const float scale = cf->divides ? a->get_float("scale", 1.f) / cf->k : a->get_float("scale", 1.f) * cf->k;
    if (std::isfinite(scale) && scale != 0.f) return Match{a, {a, cf->node}, {cf->x}, ViewFold{0, scale, {}}};
  }
  for (int which : {0, 2}) {
    ir::Node* t = sole_producer(g, a->input(static_cast<size_t>(which)), "Transpose");
    if (!t) continue;
    const auto p = row_keeping_perm(t);
    if (!p || p->size() != rank) continue;
    const char* name = which == 0 ? "q_perm" : "v_perm";
    const auto cur = view_perm(a, name, rank);
    if (!cur) continue;
    return Match{a, {a, t}, {t->input(0)}, ViewFold{which == 0 ? 1 : 2, 1.f, compose_perms(*p, *cur)}};
  }
  return std::nullopt;
}

ir::Value* rewrite_attention_inputs(ir::Graph& g, const Match& m) {
  const auto& f = std::any_cast<const ViewFold&>(m.data);
  std::vector<ir::Value*> ins(m.last->inputs().begin(), m.last->inputs().end());
  ins[f.what == 2 ? 2 : 0] = m.values[0];
  ir::Node* a = copy_node(g, m.last, ins);
  if (f.what == 0) a->set_attr(ir::Attribute::Float("scale", f.scale));
  else a->set_attr(ir::Attribute::Ints(f.what == 1 ? "q_perm" : "v_perm", f.perm));
  return a->output(0);
}

std::optional<Match> match_attention_output(const ir::Graph& g, ir::Node* t) {
  ir::Node* a = t->input(0) ? t->input(0)->producer() : nullptr;
  if (!is_attention(a) || a->owner() != &g || !single_consumer(g, a->output(0)).first) return std::nullopt;
  const auto p = row_keeping_perm(t);
  if (!p || !t->output(0)->type.has_shape) return std::nullopt;
  const size_t rank = p->size();
  const auto cur = view_perm(a, "out_perm", rank);
  if (!cur) return std::nullopt;
  return Match{t, {a, t}, {}, ViewFold{3, 1.f, compose_perms(*cur, *p)}};
}

ir::Value* rewrite_attention_output(ir::Graph& g, const Match& m) {
  const auto& f = std::any_cast<const ViewFold&>(m.data);
  ir::Node* old = m.nodes[0];
  ir::Node* a = copy_node(g, old, std::vector<ir::Value*>(old->inputs().begin(), old->inputs().end()));
  a->set_attr(ir::Attribute::Ints("out_perm", f.perm));
  a->output(0)->type = m.last->output(0)->type;
  return a->output(0);
}

// ---- residual Add + LayerNormalization ----------------------------------------------------

/// LayerNormalization(Add(a, b), Scale, B) with a and b of the Add's own
/// shape (no broadcasting), float32, and no Mean/InvStdDev output read.
std::optional<Match> match_residual_layernorm(const ir::Graph& g, ir::Node* ln) {
  for (size_t i = 1; i < ln->outputs().size(); ++i)
    if (!ln->output(i)->uses().empty() || g.is_graph_output(ln->output(i))) return std::nullopt;
  if (ln->get_int("stash_type", 1) != 1 || !ln->has_input(1)) return std::nullopt;
  ir::Node* add = sole_producer(g, ln->input(0), "Add");
  if (!add || add->inputs().size() != 2) return std::nullopt;
  const ir::Value* s = add->output(0);
  for (const ir::Value* v : add->inputs())
    if (!v || v->type.dtype != DType::kFloat32 || !v->type.is_static() || !s->type.is_static() ||
        v->type.static_shape() != s->type.static_shape())
      return std::nullopt;
  return Match{ln, {ln, add}, {add->input(0), add->input(1), ln->input(1), ln->input(2)}, {}};
}

ir::Value* rewrite_residual_layernorm(ir::Graph& g, const Match& m) {
  std::vector<ir::Value*> ins{m.values[0], m.values[1], m.values[2]};
  if (m.values[3]) ins.push_back(m.values[3]);
  ir::Node* n = g.add_node("SkipLayerNormalization", ins, {g.unique_name(m.last->output(0)->name())}, m.last->name,
                           ops::kGecDomain);
  n->set_attr(ir::Attribute::Int("axis", m.last->get_int("axis", -1)));
  n->set_attr(ir::Attribute::Float("epsilon", m.last->get_float("epsilon", 1e-5f)));
  n->output(0)->type = m.last->output(0)->type;
  return n->output(0);
}

// Rule swish: Mul(x, Sigmoid(x)) or Mul(Sigmoid(x), x) -> Swish(x) (our
// domain; conv_activation takes it next). values: {x}.
std::optional<Match> match_swish(const ir::Graph& g, ir::Node* mul) {
  if (mul->inputs().size() != 2 || !mul->output(0) || mul->output(0)->type.dtype != DType::kFloat32)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ir::Value* x = mul->input(side);
    ir::Node* sig = sole_producer(g, mul->input(1 - side), "Sigmoid");
    if (!x || !sig || sig->input(0) != x || !(x->type == mul->output(0)->type)) continue;
    return Match{mul, {sig, mul}, {x}, {}};
  }
  return std::nullopt;
}

ir::Value* rewrite_swish(ir::Graph& g, const Match& m) {
  ir::Node* s = g.add_node("Swish", {m.values[0]}, {g.unique_name(m.last->output(0)->name())}, m.last->name,
                           ops::kGecDomain);
  s->set_attr(ir::Attribute::Float("alpha", 1.f));
  s->output(0)->type = m.last->output(0)->type;
  return s->output(0);
}

}  // namespace

std::vector<RewriteRule> transformer_fusion_rules() {
  return {{"gelu", {"Mul"}, "0.5 * x * (1 + Erf(x/sqrt2) | Tanh(sqrt(2/pi)*(x + 0.044715x^3))) -> Gelu(x)", match_gelu,
           rewrite_gelu},
          {"swish", {"Mul"}, "Mul(x, Sigmoid(x)) -> com.graphengine::Swish(x)", match_swish, rewrite_swish},
          {"layernorm", {"Div"}, "(X - m) / Sqrt(ReduceMean((X - m)^2) + eps) [* g] [+ b] -> LayerNormalization(X, g, b)",
           match_layernorm, rewrite_layernorm},
          {"residual_layernorm", {"LayerNormalization"},
           "LayerNormalization(Add(a, b), Scale, B) -> SkipLayerNormalization(a, b, Scale, B)", match_residual_layernorm,
           rewrite_residual_layernorm},
          {"attention", {"MatMul"},
           "MatMul(Softmax([mask](scale * MatMul(Q, Kt))), V) -> ScaledDotProductAttention(Q, Kt, V, mask)",
           match_attention, rewrite_attention},
          {"attention_views", {"com.graphengine::ScaledDotProductAttention"},
           "ScaledDotProductAttention(Div|Mul(Q, c) | Transpose(Q, p), Kt, Transpose(V, p)) -> "
           "ScaledDotProductAttention(Q, Kt, V) {scale, q_perm, v_perm}",
           match_attention_inputs, rewrite_attention_inputs},
          {"attention_output_view", {"Transpose"},
           "Transpose(ScaledDotProductAttention(...), p) -> ScaledDotProductAttention(...) {out_perm}",
           match_attention_output, rewrite_attention_output}};
}

std::unique_ptr<Pass> make_transformer_fusion() {
  return make_rule_pass("transformer_fusion", transformer_fusion_rules());
}

}  // namespace gec::passes
