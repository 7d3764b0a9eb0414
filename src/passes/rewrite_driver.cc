// The rewrite driver (rewrite_rules.h): one worklist over a graph, the shared
// guards, the commit and the per-rule counts for every rule table.
#include <algorithm>
#include <deque>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "gec/error.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

/// The driver's guards: the pattern lives in `g`, and nothing outside it reads
/// a value that the pattern computes, except the last node's output.
bool guards_hold(const ir::Graph& g, const Match& m) {
  if (!m.last || m.last->owner() != &g || m.last->outputs().empty()) return false;
  const std::unordered_set<const ir::Node*> inside(m.nodes.begin(), m.nodes.end());
  if (!inside.count(m.last)) return false;
  for (const ir::Node* n : m.nodes) {
    if (!n || n->owner() != &g) return false;
    if (n == m.last) continue;
    for (const ir::Value* o : n->outputs()) {
      if (g.is_graph_output(o)) return false;
      for (const auto& [user, idx] : o->uses())
        if (!inside.count(user)) return false;  // also a reader inside a subgraph
    }
  }
  return true;
}

/// The ONNX node names the pattern stands for, producers before consumers
/// (a depth-first walk up from `last`; the node list itself is not sorted
/// while the driver appends replacements).
std::vector<std::string> source_names(const Match& m) {
  const std::unordered_set<const ir::Node*> inside(m.nodes.begin(), m.nodes.end());
  std::unordered_set<const ir::Node*> done;
  std::vector<std::string> r;
  std::function<void(const ir::Node*)> visit = [&](const ir::Node* n) {
    if (!n || !inside.count(n) || !done.insert(n).second) return;
    for (const ir::Value* in : n->inputs())
      if (in) visit(in->producer());
    if (n->fused_from.empty()) r.push_back(n->name);
    r.insert(r.end(), n->fused_from.begin(), n->fused_from.end());
  };
  visit(m.last);
  for (const ir::Node* n : m.nodes) visit(n);  // nodes not upstream of `last`, if a rule has any
  return r;
}

struct GraphRewriter {
  ir::Graph& g;
  const std::vector<RewriteRule>& rules;
  const std::set<std::string>& disabled;
  std::map<std::string, int64_t>& hits;
  std::unordered_map<std::string, std::vector<const RewriteRule*>> by_root;
  std::unordered_set<const ir::Node*> alive;
  std::deque<ir::Node*> work;

  void index_rules() {
    for (const RewriteRule& r : rules)
      if (!disabled.count(r.name))
        for (const std::string& op : r.roots) by_root[op].push_back(&r);
  }

  void refresh_alive() {
    alive.clear();
    for (const auto& p : g.nodes()) alive.insert(p.get());
  }

  // Commits a match: the replacement takes over, the pattern goes.
  void commit(const RewriteRule& rule, const Match& m) {
    ir::Value* from = m.last->output(0);
    const std::vector<std::string> names = source_names(m);
    ir::Value* to = rule.rewrite(g, m);
    GEC_CHECK(to != nullptr && to != from, "rule " + rule.name + ": the rewrite made no replacement");
    // The node now computing the pattern: new, or a pattern node changed in
    // place (not an unrelated producer the rewrite merely pointed at).
    ir::Node* made = to->producer();
    const bool ours = made && (!alive.count(made) ||
                               std::find(m.nodes.begin(), m.nodes.end(), made) != m.nodes.end());
    // Ours computes what the pattern's last value did: it takes that name (a
    // FusedConv of Conv + Relu outputs the Relu's value, not the Conv's).
    GEC_CHECK(ours ? replace_value_keeping_name(g, from, to) : replace_value(g, from, to),
              "rule " + rule.name + ": the replacement cannot take over " + from->name());
    if (ours) {
      made->fused_from = names;
    } else {
      made = nullptr;
    }
    // Remove from the last node up: each removal may free its producers.
    std::vector<ir::Node*> order = m.nodes;
    std::stable_sort(order.begin(), order.end(), [&](ir::Node* a, ir::Node* b) { return a == m.last && b != m.last; });
    for (bool removed = true; removed;) {
      removed = false;
      for (ir::Node*& n : order) {
        if (!n || n == made) continue;
        bool dead = true;
        for (const ir::Value* o : n->outputs()) dead = dead && o->uses().empty() && !g.is_graph_output(o);
        if (!dead) continue;
        g.remove_node(n);
        n = nullptr;
        removed = true;
      }
    }
    refresh_alive();
    // What changed may match now: the replacement's producer, its readers,
    // and the producers of its inputs (their outputs lost readers).
    if (made) {
      work.push_back(made);
      for (const ir::Value* in : made->inputs())
        if (in && in->producer() && in->producer()->owner() == &g) work.push_back(in->producer());
    }
    for (const auto& [user, idx] : to->uses())
      if (user->owner() == &g) work.push_back(user);
  }

  /// The rule that rewrote at `n`, or null.
  const RewriteRule* try_node(ir::Node* n) {
    auto it = by_root.find(n->domain.empty() ? n->op_type : n->domain + "::" + n->op_type);
    if (it == by_root.end()) return nullptr;
    for (const RewriteRule* r : it->second) {
      std::optional<Match> m = r->match(g, n);
      if (!m || !guards_hold(g, *m)) continue;
      commit(*r, *m);
      ++hits[r->name];
      return r;
    }
    return nullptr;
  }

  int64_t run() {
    index_rules();
    if (by_root.empty()) return 0;
    refresh_alive();
    for (const auto& p : g.nodes()) work.push_back(p.get());
    const int64_t cap = 4 * static_cast<int64_t>(g.nodes().size()) + 64;
    int64_t rewrites = 0;
    while (!work.empty()) {
      ir::Node* n = work.front();
      work.pop_front();
      if (!alive.count(n)) continue;  // removed by an earlier rewrite
      const RewriteRule* fired = try_node(n);
      if (fired && ++rewrites > cap)
        fail(ErrorCode::kInternal, "rewrite rules did not settle after " + std::to_string(cap) +
                                       " rewrites in graph '" + g.name + "' (last rule: " + fired->name + ")");
    }
    if (rewrites > 0) g.topo_sort();  // replacements were appended
    return rewrites;
  }
};

class RulePass final : public Pass {
 public:
  RulePass(const char* name, std::vector<RewriteRule> rules) : name_(name), rules_(std::move(rules)) {}
  const char* name() const override { return name_; }
  void set_disabled(const std::set<std::string>& names) override { disabled_ = names; }
  std::map<std::string, int64_t> rule_hits() const override { return hits_; }
  int64_t run(ir::Graph& g) override {
    hits_.clear();
    for (const RewriteRule& r : rules_) hits_[r.name] = 0;
    return apply_rules(g, rules_, disabled_, hits_);
  }

 private:
  const char* name_;
  std::vector<RewriteRule> rules_;
  std::set<std::string> disabled_;
  std::map<std::string, int64_t> hits_;
};

}  // namespace

int64_t apply_rules(ir::Graph& g, const std::vector<RewriteRule>& rules, const std::set<std::string>& disabled,
                    std::map<std::string, int64_t>& hits) {
  int64_t total = 0;
  ir::for_each_graph(g, [&](ir::Graph& sg) { total += GraphRewriter{sg, rules, disabled, hits, {}, {}, {}}.run(); });
  ir::for_each_graph(g, [](ir::Graph& sg) { sg.remove_dead_values(); });
  return total;
}

std::unique_ptr<Pass> make_rule_pass(const char* name, std::vector<RewriteRule> rules) {
  return std::make_unique<RulePass>(name, std::move(rules));
}

std::vector<const RewriteRule*> all_rules() {
  static const std::vector<std::vector<RewriteRule>> tables = {
      pad_folding_rules(), conv_kernel_cropping_rules(), conv_bn_folding_rules(), conv_transpose_folding_rules(), conv_scale_folding_rules(),
      gemm_bn_folding_rules(), matmul_add_to_gemm_rules(),     transformer_fusion_rules(),
      matmul_epilogue_fusion_rules(), conv_activation_fusion_rules(), batchnorm_to_mul_add_rules(),
      channel_shuffle_fusion_rules(), global_pool_canonicalization_rules()};
  std::vector<const RewriteRule*> r;
  for (const auto& t : tables)
    for (const RewriteRule& rule : t) r.push_back(&rule);
  return r;
}

}  // namespace gec::passes
