// Identity elimination: an Identity node's output is replaced by its input
// everywhere. When the output is a graph output, the input takes over the
// output's name instead (graph outputs keep their names), unless the input is
// itself a graph input or output or a value of an outer graph; then the node stays.
#include "passes/pass.h"

namespace gec::passes {
namespace {

bool can_rename(const ir::Graph& g, const ir::Value* in) {
  if (in->owner() != &g) return false;
  for (const ir::Value* v : g.inputs())
    if (v == in) return false;
  return !g.is_graph_output(in);
}

int64_t eliminate(ir::Graph& g) {
  int64_t changes = 0;
  for (ir::Node* n : g.node_list()) {
    for (auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) changes += eliminate(*a.g);
    if (n->op_type != "Identity" || !n->domain.empty() || !n->input(0)) continue;
    ir::Value* in = n->input(0);
    ir::Value* out = n->output(0);
    if (g.is_graph_output(out)) {
      if (!can_rename(g, in)) continue;
      std::string name = out->name();
      g.replace_all_uses(out, in);
      n->set_input(0, nullptr);
      g.remove_node(n);
      g.remove_dead_values();  // frees `name`
      g.rename_value(in, name);
    } else {
      g.replace_all_uses(out, in);
      n->set_input(0, nullptr);
      g.remove_node(n);
    }
    ++changes;
  }
  g.remove_dead_values();
  return changes;
}

class IdentityElimination final : public Pass {
 public:
  const char* name() const override { return "identity_elimination"; }
  int64_t run(ir::Graph& g) override { return eliminate(g); }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }

}  // namespace gec::passes
