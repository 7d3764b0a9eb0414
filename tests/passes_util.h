// Helpers for the pass tests: building small graphs and running them node by
// node with the CPU kernels (to check that a rewrite keeps the outputs).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "passes/pass.h"
#include "test_util.h"

namespace gec::passes::testing {

inline ir::Value* input(ir::Graph& g, const std::string& name, Shape s,
                        DType dt = DType::kFloat32) {
  ir::Value* v = g.add_value(name, ir::TensorType::of(dt, s));
  g.inputs().push_back(v);
  return v;
}

inline std::vector<std::string> ops_of(const ir::Graph& g) {
  std::vector<std::string> r;
  for (auto& n : g.nodes()) r.push_back(n->op_type);
  return r;
}

inline ir::Node* only_node(const ir::Graph& g, const std::string& op) {
  ir::Node* r = nullptr;
  for (auto& n : g.nodes())
    if (n->op_type == op) {
      EXPECT_EQ(r, nullptr) << "more than one " << op;
      r = n.get();
    }
  EXPECT_NE(r, nullptr) << "no " << op;
  return r;
}

/// Runs the graph (no subgraphs) on `feeds` (by input name); returns the
/// graph outputs in order.
inline std::vector<Tensor> run_graph(ir::Graph& g, const std::map<std::string, Tensor>& feeds) {
  g.topo_sort();
  std::map<const ir::Value*, Tensor> env;
  for (ir::Value* v : g.inputs()) env[v] = feeds.at(v->name());
  for (ir::Node* n : g.node_list()) {
    std::vector<TensorView> views(n->inputs().size());
    std::vector<const TensorView*> ptrs;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const ir::Value* in = n->input(i);
      if (!in) { ptrs.push_back(nullptr); continue; }
      views[i] = in->is_constant() ? in->constant->view() : env.at(in).view();
      ptrs.push_back(&views[i]);
    }
    auto outs = kernels::evaluate_node(*n, ptrs);
    for (size_t i = 0; i < outs.size(); ++i) env[n->output(i)] = std::move(outs[i]);
  }
  std::vector<Tensor> r;
  for (ir::Value* v : g.outputs()) r.push_back(v->is_constant() ? *v->constant : env.at(v));
  return r;
}

}  // namespace gec::passes::testing
