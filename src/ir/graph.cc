// IR graph mutation, ordering and verification.
#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "gec/error.h"

namespace gec::ir {

// ---- TensorType ---------------------------------------------------------------

TensorType TensorType::of(DType dt, const Shape& s) {
  TensorType t;
  t.dtype = dt;
  t.has_shape = true;
  for (int64_t d : s) t.dims.push_back(Dim{d, ""});
  return t;
}

bool TensorType::is_static() const {
  if (!has_shape || kind != ValueKind::kTensor) return false;
  for (const Dim& d : dims)
    if (!d.is_static()) return false;
  return true;
}

Shape TensorType::static_shape() const {
  GEC_CHECK(is_static(), "static_shape() of dynamic type " + str());
  Shape s;
  for (const Dim& d : dims) s.push_back(d.value);
  return s;
}

std::string TensorType::str() const {
  std::string r = dtype_name(dtype);
  if (!has_shape) {
    r += "[*]";
  } else {
    r += "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) r += ",";
      r += dims[i].is_static() ? std::to_string(dims[i].value) : (dims[i].param.empty() ? "?" : dims[i].param);
    }
    r += "]";
  }
  return value_type_str(kind, r);
}

// ---- Attribute ----------------------------------------------------------------

Attribute Attribute::Int(std::string n, int64_t v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kInt; a.i = v; return a;
}
Attribute Attribute::Float(std::string n, float v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kFloat; a.f = v; return a;
}
Attribute Attribute::String(std::string n, std::string v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kString; a.s = std::move(v); return a;
}
Attribute Attribute::Ints(std::string n, std::vector<int64_t> v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kInts; a.ints = std::move(v); return a;
}
Attribute Attribute::Floats(std::string n, std::vector<float> v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kFloats; a.floats = std::move(v); return a;
}
Attribute Attribute::Strings(std::string n, std::vector<std::string> v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kStrings; a.strings = std::move(v); return a;
}
Attribute Attribute::TensorAttr(std::string n, Tensor v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kTensor; a.t = std::make_shared<Tensor>(std::move(v)); return a;
}
Attribute Attribute::GraphAttr(std::string n, std::shared_ptr<Graph> v) {
  Attribute a; a.name = std::move(n); a.kind = Kind::kGraph; a.g = std::move(v); return a;
}

// ---- Node ---------------------------------------------------------------------


void Node::set_input(size_t i, Value* v) {
  if (i >= inputs_.size()) inputs_.resize(i + 1, nullptr);
  Value* old = inputs_[i];
  if (old) {
    auto& u = old->uses_;
    auto it = std::find(u.begin(), u.end(), std::make_pair(this, static_cast<int>(i)));
    if (it != u.end()) u.erase(it);
  }
  inputs_[i] = v;
  if (v) v->uses_.emplace_back(this, static_cast<int>(i));
}

void Node::add_input(Value* v) { set_input(inputs_.size(), v); }

const Attribute* Node::find_attr(const std::string& n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}
bool Node::has_attr(const std::string& n) const { return find_attr(n) != nullptr; }

std::string Node::describe() const {
  std::string from;  // a fused node names the model's nodes it computes
  if (fused_from.size() > 1) {
    from = " fused from ";
    const size_t shown = std::min<size_t>(fused_from.size(), 6);
    for (size_t i = 0; i < shown; ++i) from += (i ? ", " : "") + ("'" + fused_from[i] + "'");
    if (fused_from.size() > shown) from += " and " + std::to_string(fused_from.size() - shown) + " more";
  }
  return "node '" + name + "' (" + (domain.empty() ? "" : domain + "::") + op_type + from + ")";
}

int64_t Node::get_int(const std::string& n) const {
  const Attribute* a = find_attr(n);
  if (!a) fail(ErrorCode::kInvalidModel, describe() + ": missing required attribute '" + n + "'");
  return a->i;
}
int64_t Node::get_int(const std::string& n, int64_t def) const {
  const Attribute* a = find_attr(n);
  return a ? a->i : def;
}
float Node::get_float(const std::string& n, float def) const {
  const Attribute* a = find_attr(n);
  return a ? a->f : def;
}
std::string Node::get_string(const std::string& n, const std::string& def) const {
  const Attribute* a = find_attr(n);
  return a ? a->s : def;
}
std::vector<int64_t> Node::get_ints(const std::string& n, std::vector<int64_t> def) const {
  const Attribute* a = find_attr(n);
  return a ? a->ints : def;
}
std::vector<float> Node::get_floats(const std::string& n, std::vector<float> def) const {
  const Attribute* a = find_attr(n);
  return a ? a->floats : def;
}
const Tensor* Node::get_tensor(const std::string& n) const {
  const Attribute* a = find_attr(n);
  return a && a->t ? a->t.get() : nullptr;
}
Graph* Node::get_graph(const std::string& n) const {
  const Attribute* a = find_attr(n);
  return a && a->g ? a->g.get() : nullptr;
}
void Node::set_attr(Attribute a) {
  for (auto& x : attrs)
    if (x.name == a.name) { x = std::move(a); return; }
  attrs.push_back(std::move(a));
}
void Node::remove_attr(const std::string& n) {
  attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [&](const Attribute& a) { return a.name == n; }),
              attrs.end());
}

// ---- Graph --------------------------------------------------------------------

Value* Graph::add_value(std::string name, TensorType type) {
  auto v = std::make_unique<Value>();
  if (name.empty() || by_name_.count(name)) name = unique_name(name.empty() ? "v" : name);
  v->name_ = name;
  v->type = std::move(type);
  v->owner_ = this;
  Value* raw = v.get();
  by_name_[name] = raw;
  values_.push_back(std::move(v));
  return raw;
}

Value* Graph::add_constant(std::string name, Tensor data) {
  Value* v = add_value(std::move(name), TensorType::of(data.dtype(), data.shape()));
  v->constant = std::make_shared<Tensor>(std::move(data));
  return v;
}

Node* Graph::add_node(std::string op_type, const std::vector<Value*>& inputs,
                      const std::vector<std::string>& output_names, std::string name, std::string domain) {
  std::vector<Value*> outs;
  for (const auto& on : output_names) outs.push_back(add_value(on));
  return add_node_with_outputs(std::move(op_type), inputs, outs, std::move(name), std::move(domain));
}

Node* Graph::add_node_with_outputs(std::string op_type, const std::vector<Value*>& inputs,
                                   const std::vector<Value*>& outputs, std::string name, std::string domain) {
  auto n = std::make_unique<Node>();
  n->op_type = std::move(op_type);
  n->domain = std::move(domain);
  n->name = std::move(name);
  n->owner_ = this;
  Node* raw = n.get();
  for (Value* in : inputs) raw->add_input(in);
  for (Value* out : outputs) {
    GEC_CHECK(out->producer_ == nullptr, "value '" + out->name() + "' already has a producer");
    out->producer_ = raw;
    raw->outputs_.push_back(out);
  }
  nodes_.push_back(std::move(n));
  return raw;
}

void Graph::remove_node(Node* n) {
  for (Value* o : n->outputs_) {
    GEC_CHECK(o->uses_.empty() && !is_graph_output(o),
              "removing " + n->describe() + " whose output '" + o->name() + "' is still used");
    o->producer_ = nullptr;
  }
  for (size_t i = 0; i < n->inputs_.size(); ++i) n->set_input(i, nullptr);
  // Nodes of its subgraphs (If branches, Loop bodies) may read values of
  // enclosing graphs: those uses go with them (found by fuzzing: an If whose
  // branches read an outer value left dangling uses on it).
  std::function<void(Graph&)> drop_outer_uses = [&](Graph& sub) {
    for (auto& sn : sub.nodes_) {
      for (size_t i = 0; i < sn->inputs_.size(); ++i)
        if (sn->inputs_[i] && sn->inputs_[i]->owner() != &sub) sn->set_input(i, nullptr);
      for (auto& a : sn->attrs)
        if (a.kind == Attribute::Kind::kGraph && a.g) drop_outer_uses(*a.g);
    }
  };
  for (auto& a : n->attrs)
    if (a.kind == Attribute::Kind::kGraph && a.g) drop_outer_uses(*a.g);
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
    if (it->get() == n) { nodes_.erase(it); return; }
  GEC_CHECK(false, "remove_node: node not in graph");
}

void Graph::replace_all_uses(Value* from, Value* to) {
  auto uses = from->uses_;  // copy: set_input edits the list
  for (auto [node, idx] : uses) node->set_input(static_cast<size_t>(idx), to);
  for (auto& o : outputs_)
    if (o == from) o = to;
}

void Graph::remove_dead_values() {
  std::unordered_set<const Value*> keep(inputs_.begin(), inputs_.end());
  keep.insert(outputs_.begin(), outputs_.end());
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    if (v->producer_ || !v->uses_.empty() || keep.count(v.get())) {
      kept.push_back(std::move(v));
    } else {
      by_name_.erase(v->name_);
    }
  }
  values_ = std::move(kept);
}

void Graph::rename_value(Value* v, const std::string& name) {
  if (v->name_ == name) return;
  GEC_CHECK(v->owner_ == this, "rename_value: value of another graph");
  GEC_CHECK(!by_name_.count(name), "rename_value: name '" + name + "' is taken");
  by_name_.erase(v->name_);
  v->name_ = name;
  by_name_[name] = v;
}

std::vector<Node*> Graph::node_list() const {
  std::vector<Node*> r;
  for (auto& n : nodes_) r.push_back(n.get());
  return r;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

bool Graph::is_graph_output(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

std::string Graph::unique_name(const std::string& base) {
  for (;;) {
    std::string n = base + "__" + std::to_string(name_counter_++);
    if (!by_name_.count(n)) return n;
  }
}

// Values a node (including its subgraphs) reads from scopes outside its own graph
// and produced in `g` by other nodes: the implicit inputs that order it.
static void collect_implicit_inputs(const Node& n, const Graph& g, std::vector<const Value*>& out) {
  for (const auto& a : n.attrs) {
    if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
    for (const auto& sn : a.g->nodes()) {
      for (const Value* in : sn->inputs())
        if (in && in->owner() == &g) out.push_back(in);
      collect_implicit_inputs(*sn, g, out);
    }
  }
}

std::vector<const Value*> Graph::implicit_inputs(const Node& n) const {
  std::vector<const Value*> r;
  collect_implicit_inputs(n, *this, r);
  return r;
}

void Graph::set_order(const std::vector<Node*>& order) {
  std::unordered_map<const Node*, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i]->owner() != this || !rank.emplace(order[i], i).second)
      fail(ErrorCode::kInternal, "set_order: a node twice or from another graph");
  if (rank.size() != nodes_.size()) fail(ErrorCode::kInternal, "set_order: not every node of the graph");
  for (const Node* n : order) {
    std::vector<const Value*> deps(n->inputs().begin(), n->inputs().end());
    collect_implicit_inputs(*n, *this, deps);
    for (const Value* v : deps)
      if (v && v->producer() && v->producer()->owner() == this && rank.at(v->producer()) >= rank.at(n))
        fail(ErrorCode::kInternal, "set_order: " + n->describe() + " before the producer of '" + v->name() + "'");
  }
  nodes_.sort([&](const std::unique_ptr<Node>& a, const std::unique_ptr<Node>& b) {
    return rank.at(a.get()) < rank.at(b.get());
  });
}

void Graph::topo_sort() {
  std::unordered_map<const Node*, int> pending;
  std::unordered_map<const Value*, std::vector<Node*>> waiters;
  std::vector<Node*> order_in = node_list();
  for (Node* n : order_in) {
    std::vector<const Value*> deps(n->inputs().begin(), n->inputs().end());
    collect_implicit_inputs(*n, *this, deps);
    int cnt = 0;
    std::unordered_set<const Value*> seen;
    for (const Value* v : deps) {
      if (!v || !v->producer() || v->producer()->owner() != this || !seen.insert(v).second) continue;
      ++cnt;
      waiters[v].push_back(n);
    }
    pending[n] = cnt;
  }
  // Stable: repeatedly take the earliest ready node in original order.
  std::vector<Node*> ready_order;
  std::set<size_t> ready;
  std::unordered_map<const Node*, size_t> pos;
  for (size_t i = 0; i < order_in.size(); ++i) {
    pos[order_in[i]] = i;
    if (pending[order_in[i]] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    Node* n = order_in[i];
    ready_order.push_back(n);
    for (Value* o : n->outputs())
      for (Node* w : waiters[o])
        if (--pending[w] == 0) ready.insert(pos[w]);
  }
  if (ready_order.size() != order_in.size())
    fail(ErrorCode::kInvalidModel, "graph '" + name + "' has a cycle or reads a value that is never defined");
  std::unordered_map<const Node*, size_t> rank;
  for (size_t i = 0; i < ready_order.size(); ++i) rank[ready_order[i]] = i;
  nodes_.sort([&](const std::unique_ptr<Node>& a, const std::unique_ptr<Node>& b) {
    return rank[a.get()] < rank[b.get()];
  });
}

static bool visible_in(const Value* v, const Graph* g) {
  for (const Graph* s = g; s; s = s->parent)
    if (v->owner() == s) return true;
  return false;
}

void Graph::verify() const {
  std::unordered_set<const Value*> defined;
  for (const Value* v : inputs_) defined.insert(v);
  for (const auto& v : values_)
    if (v->constant) defined.insert(v.get());
  auto bad = [&](const std::string& m) { fail(ErrorCode::kInternal, "IR verify, graph '" + name + "': " + m); };
  for (const auto& n : nodes_) {
    if (n->owner_ != this) bad(n->describe() + " has the wrong owner");
    for (size_t i = 0; i < n->inputs_.size(); ++i) {
      const Value* v = n->inputs_[i];
      if (!v) continue;
      if (v->owner() == this && !defined.count(v))
        bad(n->describe() + " reads '" + v->name() + "' before it is defined");
      if (!visible_in(v, this)) bad(n->describe() + " reads '" + v->name() + "' from an unrelated graph");
      const auto& u = v->uses_;
      if (std::find(u.begin(), u.end(), std::make_pair(n.get(), static_cast<int>(i))) == u.end())
        bad("use list of '" + v->name() + "' misses " + n->describe());
    }
    for (const Value* o : n->outputs_) {
      if (o->producer_ != n.get()) bad("'" + o->name() + "' has the wrong producer");
      if (!defined.insert(o).second) bad("'" + o->name() + "' is defined twice");
    }
    for (const auto& a : n->attrs)
      if (a.kind == Attribute::Kind::kGraph && a.g) {
        if (a.g->parent != this) bad("subgraph of " + n->describe() + " has the wrong parent");
        a.g->verify();
      }
  }
  for (const Value* o : outputs_)
    if (o->owner() == this && !defined.count(o) && !visible_in(o, parent))
      bad("graph output '" + o->name() + "' is never defined");
  for (const auto& v : values_)
    for (auto [user, idx] : v->uses_)
      if (user->input(static_cast<size_t>(idx)) != v.get()) bad("stale use of '" + v->name() + "'");
}

size_t Graph::count_nodes_recursive() const {
  size_t c = 0;
  for (const auto& n : nodes_) {
    ++c;
    for (const auto& a : n->attrs)
      if (a.kind == Attribute::Kind::kGraph && a.g) c += a.g->count_nodes_recursive();
  }
  return c;
}

ValueIndex::ValueIndex(const Graph& g) {
  for_each_graph(g, [&](const Graph& sg) {
    for (const auto& v : sg.values()) {
      ids_[v.get()] = static_cast<int32_t>(values_.size());
      values_.push_back(v.get());
    }
  });
}

ValueIndex ValueIndex::of_values(std::vector<Value*> values) {
  ValueIndex r;
  r.values_ = std::move(values);
  for (size_t i = 0; i < r.values_.size(); ++i) r.ids_[r.values_[i]] = static_cast<int32_t>(i);
  return r;
}

int32_t ValueIndex::id(const Value* v) const {
  auto it = ids_.find(v);
  GEC_CHECK(it != ids_.end(), "value '" + (v ? v->name() : std::string("(null)")) + "' is not in the value index");
  return it->second;
}

}  // namespace gec::ir
