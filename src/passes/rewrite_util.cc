// Rewrite helpers shared by the passes (see rewrite_util.h).
#include "passes/rewrite_util.h"

#include <algorithm>
#include <cmath>

namespace gec::passes {

bool is_op(const ir::Node* n, const char* op_type) {
  return n && n->domain.empty() && n->op_type == op_type;
}

std::optional<std::vector<int64_t>> const_ints(const ir::Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  const Tensor& t = *v->constant;
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    std::copy(t.as<int64_t>(), t.as<int64_t>() + r.size(), r.begin());
  } else if (t.dtype() == DType::kInt32) {
    std::copy(t.as<int32_t>(), t.as<int32_t>() + r.size(), r.begin());
  } else {
    return std::nullopt;
  }
  return r;
}

std::optional<std::vector<float>> const_floats(const ir::Value* v) {
  if (!v || !v->is_constant() || v->constant->dtype() != DType::kFloat32) return std::nullopt;
  const Tensor& t = *v->constant;
  return std::vector<float>(t.as<float>(), t.as<float>() + t.numel());
}

std::pair<ir::Node*, int> single_consumer(const ir::Graph& g, const ir::Value* v) {
  if (v->uses().size() != 1 || g.is_graph_output(v)) return {nullptr, -1};
  auto [node, idx] = v->uses()[0];
  if (node->owner() != &g) return {nullptr, -1};  // read from inside a subgraph
  return {node, idx};
}

ir::Node* sole_producer(const ir::Graph& g, const ir::Value* v, const char* op) {
  ir::Node* p = v ? v->producer() : nullptr;
  if (!is_op(p, op) || p->owner() != &g || p->outputs().size() != 1 || !single_consumer(g, v).first) return nullptr;
  return p;
}

std::optional<std::vector<int64_t>> transpose_perm(const ir::Node* t) {
  const ir::Value* x = t ? t->input(0) : nullptr;
  if (!x) return std::nullopt;
  std::vector<int64_t> p;
  if (t->has_attr("perm")) {
    p = t->get_ints("perm");
    if (x->type.has_shape && p.size() != x->type.dims.size()) return std::nullopt;
  } else {
    if (!x->type.has_shape) return std::nullopt;
    p.resize(x->type.dims.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(p.size() - 1 - i);
  }
  std::vector<bool> seen(p.size(), false);
  for (int64_t a : p) {
    if (a < 0 || a >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(a)]) return std::nullopt;
    seen[static_cast<size_t>(a)] = true;
  }
  return p;
}

std::vector<int64_t> compose_perms(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> c(b.size());
  for (size_t i = 0; i < b.size(); ++i) c[i] = a[static_cast<size_t>(b[i])];
  return c;
}

bool const_near(const ir::Value* v, double want, double rel) {
  auto f = const_floats(v);
  return f && f->size() == 1 && std::abs((*f)[0] - want) <= rel * std::abs(want);
}

ir::Value* add_f32_constant(ir::Graph& g, const std::string& base, const Shape& shape,
                            const std::vector<float>& data) {
  Tensor t(DType::kFloat32, shape);
  GEC_CHECK(static_cast<size_t>(t.numel()) == data.size(), "add_f32_constant: size mismatch");
  std::copy(data.begin(), data.end(), t.as<float>());
  return g.add_constant(g.unique_name(base), std::move(t));
}

ir::Node* copy_node(ir::Graph& g, const ir::Node* op, const std::vector<ir::Value*>& inputs) {
  ir::Node* n = g.add_node(op->op_type, inputs, {g.unique_name(op->output(0)->name())}, g.unique_name(op->name),
                           op->domain);
  n->attrs = op->attrs;
  n->output(0)->type = op->output(0)->type;
  return n;
}

std::optional<Shape> static_shape(const ir::Value* v) {
  if (!v || !v->type.is_static()) return std::nullopt;
  return v->type.static_shape();
}

bool replace_value(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (from == to) return false;
  if (g.is_graph_output(from)) {
    const bool is_input = std::find(g.inputs().begin(), g.inputs().end(), to) != g.inputs().end();
    if (to->owner() != &g || is_input || g.is_graph_output(to) || to->is_constant()) return false;
    const std::string name = from->name();
    g.replace_all_uses(from, to);
    g.rename_value(from, g.unique_name(name));
    g.rename_value(to, name);
    return true;
  }
  g.replace_all_uses(from, to);
  return true;
}

bool replace_value_keeping_name(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (!replace_value(g, from, to)) return false;
  // A graph output's name has moved to `to` already.
  if (from->owner() == &g && to->owner() == &g && !g.is_graph_output(to) && !from->name().empty() &&
      to->name() != from->name()) {
    const std::string name = from->name();
    g.rename_value(from, g.unique_name(name));
    g.rename_value(to, name);
  }
  return true;
}

void remove_if_dead(ir::Graph& g, ir::Node* n) {
  for (ir::Value* o : n->outputs())
    if (!o->uses().empty() || g.is_graph_output(o)) return;
  g.remove_node(n);
}

namespace {

int64_t sweep(ir::Graph& g, const std::function<bool(ir::Graph&, ir::Node*)>& rewrite) {
  int64_t changes = 0;
  for (ir::Node* n : g.node_list()) {
    // node_list() is a snapshot: skip nodes an earlier rewrite removed.
    bool alive = false;
    for (auto& p : g.nodes())
      if (p.get() == n) { alive = true; break; }
    if (!alive) continue;
    for (auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) changes += sweep(*a.g, rewrite);
    if (rewrite(g, n)) ++changes;
  }
  return changes;
}

}  // namespace

int64_t rewrite_to_fixed_point(ir::Graph& g,
                               const std::function<bool(ir::Graph&, ir::Node*)>& rewrite) {
  int64_t total = 0;
  for (int round = 0;; ++round) {
    const int64_t n = sweep(g, rewrite);
    if (n == 0) break;
    if (round == 100)
      fail(ErrorCode::kInternal, "rewrite_to_fixed_point: still rewriting after 100 sweeps of graph '" + g.name + "'");
    total += n;
    for_each_graph(g, [](ir::Graph& sg) { sg.topo_sort(); });  // fused nodes were appended
  }
  for_each_graph(g, [](ir::Graph& sg) { sg.remove_dead_values(); });
  return total;
}

}  // namespace gec::passes
