// Dead-node elimination: removes nodes none of whose outputs reach a graph
// output (directly, through other nodes, or through a subgraph's outer-scope
// reads). Nondeterministic ops are removed too when unused: their effect is
// only their output. Runs to a fixed point in one reverse sweep per graph.
#include "passes/pass.h"

namespace gec::passes {
namespace {

int64_t eliminate(ir::Graph& g) {
  int64_t removed = 0;
  std::vector<ir::Node*> order = g.node_list();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    ir::Node* n = *it;
    bool live = false;
    for (ir::Value* o : n->outputs())
      if (!o->uses().empty() || g.is_graph_output(o)) live = true;
    if (live) {
      for (auto& a : n->attrs)
        if (a.kind == ir::Attribute::Kind::kGraph && a.g) removed += eliminate(*a.g);
      continue;
    }
    g.remove_node(n);
    ++removed;
  }
  g.remove_dead_values();
  return removed;
}

class DeadNodeElimination final : public Pass {
 public:
  const char* name() const override { return "dead_node_elimination"; }
  int64_t run(ir::Graph& g) override { return eliminate(g); }
};

}  // namespace

std::unique_ptr<Pass> make_dead_node_elimination() { return std::make_unique<DeadNodeElimination>(); }

}  // namespace gec::passes
