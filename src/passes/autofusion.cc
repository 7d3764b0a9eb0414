// autofusion: every maximal connected group of elementwise and broadcasting
// ops that the fused kernel can run (ops::elementwise_instruction: float32
// unary math and activations, Clip, Gelu; arithmetic, comparisons and Where
// on float32, int32 and int64; bool logic; Cast between float32, bool,
// int32 and int64 except float to integer) becomes one com.graphengine::
// FusedElementwise node whose program computes the group. The group's
// intermediates vanish from the graph (and so from the memory plan); its
// inputs are read once and its outputs (the values read outside the group or
// graph outputs) written once.
//
// Grouping follows the idea of TVM's FuseOps (relay/transforms/fuse_ops.cc):
// producers and consumers of the injective kinds merge, and a merge never
// makes the graph cyclic. Instead of TVM's post-dominator tree this pass
// grows groups greedily in topological order and checks each merge
// directly: a group is acyclic as a node exactly when no value it reads from
// outside is computed from one of its own values, which a backward search
// from each outside producer (bounded by the group's first position)
// decides. A node joins the groups of all its producers when that passes,
// else the first one that passes, else starts its own.
//
// Guards: shapes known up to named symbols (dims equal when both are the
// same number or the same symbol: ONNX's dim_param convention); every
// member's output has the group's shape S (the inputs broadcast to S: a
// smaller intermediate would need its own loop plan); at most ops::kMaxFusedInputs inputs and kMaxFusedInstructions
// members; a node owning a subgraph is never crossed. Groups of one node
// stay as they are. Each fused node keeps the ONNX names it came from
// (fused_from) and takes over its outputs' names.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ops/domain.h"
#include "ops/fused_elementwise.h"
#include "passes/pass.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

/// Rank known and every dim a number or a named symbol (an unnamed unknown
/// dim cannot be proved equal to another).
bool shape_is_known(const ir::TensorType& t) {
  if (!t.has_shape || !t.is_tensor()) return false;
  for (const ir::Dim& d : t.dims)
    if (!d.is_static() && d.param.empty()) return false;
  return true;
}

bool has_subgraph(const ir::Node* n) {
  for (const auto& a : n->attrs)
    if (a.kind == ir::Attribute::Kind::kGraph) return true;
  return false;
}

class GraphFuser {
 public:
  explicit GraphFuser(ir::Graph& g) : g_(g) {}

  int64_t run() {
    g_.topo_sort();
    order_ = g_.node_list();
    for (size_t i = 0; i < order_.size(); ++i) pos_[order_[i]] = static_cast<int64_t>(i);
    for (ir::Node* n : order_) place(n);
    int64_t made = 0;
    std::vector<std::vector<ir::Node*>> groups;
    for (auto& [id, members] : groups_)
      if (members.size() >= 2) groups.push_back(members);
    for (auto& members : groups) made += emit(members);
    if (made) g_.topo_sort();
    return made;
  }

 private:
  bool eligible(const ir::Node* n) const {
    if (n->owner() != &g_ || n->outputs().size() != 1 || !shape_is_known(n->output(0)->type)) return false;
    for (const ir::Value* v : n->inputs())
      if (v && !shape_is_known(v->type)) return false;
    return ops::elementwise_instruction(*n).has_value();
  }

  /// Values the members read from outside them.
  std::vector<ir::Value*> external_inputs(const std::vector<ir::Node*>& members) const {
    const std::unordered_set<const ir::Node*> in(members.begin(), members.end());
    std::vector<ir::Value*> r;
    for (ir::Node* m : members)
      for (ir::Value* v : m->inputs())
        if (v && !(v->producer() && in.count(v->producer())) && std::find(r.begin(), r.end(), v) == r.end())
          r.push_back(v);
    return r;
  }

  /// True when some node that `members` read from outside is computed from
  /// a member: merging them into one node would make a cycle. Every other
  /// group counts as the one node it will become (reaching one of its
  /// members continues from all of its members' inputs), so two groups can
  /// never end up reading each other. Nodes before the first member and in
  /// no group cannot depend on a member: the search stops there.
  bool cyclic(const std::vector<ir::Node*>& members) const {
    const std::unordered_set<const ir::Node*> in(members.begin(), members.end());
    int64_t first = INT64_MAX;
    for (const ir::Node* m : members) first = std::min(first, pos_.at(m));
    std::unordered_set<const ir::Node*> seen;
    std::unordered_set<int64_t> groups_seen;
    std::vector<const ir::Node*> stack;
    auto push_inputs = [&](const ir::Node* n) {
      for (const ir::Value* v : n->inputs())
        if (v && v->producer() && v->producer()->owner() == &g_) stack.push_back(v->producer());
    };
    for (const ir::Node* m : members)
      for (const ir::Value* v : m->inputs())
        if (v && v->producer() && v->producer()->owner() == &g_ && !in.count(v->producer()))
          stack.push_back(v->producer());
    while (!stack.empty()) {
      const ir::Node* q = stack.back();
      stack.pop_back();
      if (!seen.insert(q).second) continue;
      if (in.count(q)) return true;
      auto g = group_of_.find(q);
      if (g != group_of_.end()) {
        if (groups_seen.insert(g->second).second)
          for (const ir::Node* m : groups_.at(g->second)) {
            if (in.count(m)) return true;
            push_inputs(m);
          }
        continue;
      }
      if (pos_.at(q) < first) continue;
      if (has_subgraph(q)) return true;  // its bodies may read members' values: stay clear
      push_inputs(q);
    }
    return false;
  }

  bool acceptable(const std::vector<ir::Node*>& members) const {
    if (members.size() > static_cast<size_t>(ops::kMaxFusedInstructions)) return false;
    if (external_inputs(members).size() > static_cast<size_t>(ops::kMaxFusedInputs)) return false;
    return !cyclic(members);
  }

  void place(ir::Node* n) {
    if (!eligible(n)) return;
    const std::vector<ir::Dim>& s = n->output(0)->type.dims;
    std::vector<int64_t> cand;
    for (const ir::Value* v : n->inputs()) {
      if (!v || !v->producer()) continue;
      auto it = group_of_.find(v->producer());
      if (it == group_of_.end() || shape_.at(it->second) != s) continue;
      if (std::find(cand.begin(), cand.end(), it->second) == cand.end()) cand.push_back(it->second);
    }
    auto with = [&](const std::vector<int64_t>& ids) {
      std::vector<ir::Node*> m;
      for (int64_t id : ids) m.insert(m.end(), groups_.at(id).begin(), groups_.at(id).end());
      m.push_back(n);
      return m;
    };
    std::vector<int64_t> chosen;
    if (!cand.empty() && acceptable(with(cand))) {
      chosen = cand;
    } else {
      for (int64_t id : cand)
        if (acceptable(with({id}))) {
          chosen = {id};
          break;
        }
    }
    int64_t target;
    if (chosen.empty()) {
      target = next_id_++;
      shape_[target] = s;
    } else {
      target = chosen[0];
      for (size_t k = 1; k < chosen.size(); ++k) {
        for (ir::Node* m : groups_.at(chosen[k])) {
          group_of_[m] = target;
          groups_[target].push_back(m);
        }
        groups_.erase(chosen[k]);
      }
    }
    groups_[target].push_back(n);
    group_of_[n] = target;
  }

  /// Replaces one group by a FusedElementwise node; 1 when done.
  int64_t emit(std::vector<ir::Node*> members) {
    std::sort(members.begin(), members.end(), [&](ir::Node* a, ir::Node* b) { return pos_.at(a) < pos_.at(b); });
    const std::unordered_set<const ir::Node*> in(members.begin(), members.end());
    const std::vector<ir::Value*> inputs = external_inputs(members);
    std::unordered_map<const ir::Value*, int32_t> reg;
    for (size_t i = 0; i < inputs.size(); ++i) reg[inputs[i]] = static_cast<int32_t>(i);
    std::vector<ops::EwInstr> code;
    std::vector<ir::Value*> escaping;
    std::vector<int32_t> results;
    std::vector<std::string> names;
    for (ir::Node* m : members) {
      ops::EwInstr ins = *ops::elementwise_instruction(*m);
      for (size_t j = 0; j < m->inputs().size() && j < 3; ++j)
        ins.args[j] = m->has_input(j) ? reg.at(m->input(j)) : -1;
      const int32_t r = static_cast<int32_t>(inputs.size() + code.size());
      code.push_back(ins);
      ir::Value* o = m->output(0);
      reg[o] = r;
      bool escapes = g_.is_graph_output(o);
      for (const auto& [user, idx] : o->uses()) escapes = escapes || !in.count(user);
      if (escapes) escaping.push_back(o), results.push_back(r);
      if (m->fused_from.empty()) names.push_back(m->name);
      else names.insert(names.end(), m->fused_from.begin(), m->fused_from.end());
    }
    if (escaping.empty()) return 0;  // computes nothing anyone reads
    std::vector<std::string> out_names;
    for (ir::Value* o : escaping) out_names.push_back(g_.unique_name(o->name() + "/fused"));
    ir::Node* f = g_.add_node("FusedElementwise", inputs, out_names, members.back()->name, ops::kGecDomain);
    ops::set_program_attrs(*f, code, results);
    f->fused_from = names;
    for (size_t k = 0; k < escaping.size(); ++k) {
      ir::Value* from = escaping[k];
      ir::Value* to = f->output(k);
      to->type = from->type;
      GEC_CHECK(replace_value_keeping_name(g_, from, to), "autofusion: cannot replace " + from->name());
    }
    for (auto it = members.rbegin(); it != members.rend(); ++it) g_.remove_node(*it);
    return 1;
  }

  ir::Graph& g_;
  std::vector<ir::Node*> order_;
  std::unordered_map<const ir::Node*, int64_t> pos_;
  std::unordered_map<const ir::Node*, int64_t> group_of_;
  std::map<int64_t, std::vector<ir::Node*>> groups_;
  std::map<int64_t, std::vector<ir::Dim>> shape_;
  int64_t next_id_ = 0;
};

class AutoFusion final : public Pass {
 public:
  const char* name() const override { return "autofusion"; }
  int64_t run(ir::Graph& g) override {
    int64_t made = 0;
    std::vector<ir::Graph*> graphs;
    ir::for_each_graph(g, [&](ir::Graph& sg) { graphs.push_back(&sg); });
    for (ir::Graph* sg : graphs) made += GraphFuser(*sg).run();
    return made;
  }
};

}  // namespace

std::unique_ptr<Pass> make_autofusion() { return std::make_unique<AutoFusion>(); }

}  // namespace gec::passes
