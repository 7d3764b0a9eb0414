// Helpers for the pass tests: building small graphs and running them node by
// node with the CPU kernels (to check that a rewrite keeps the outputs).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/text.h"
#include "kernels/kernel.h"
#include "passes/pass.h"
#include "schedule/schedule.h"
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
/// graph outputs in order. Each node's kernel gets its layouts from
/// `layouts` when given (else all plain).
inline std::vector<Tensor> run_graph(ir::Graph& g, const std::map<std::string, Tensor>& feeds,
                                     const schedule::LayoutAssignment* layouts = nullptr) {
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
    kernels::KernelConfig config;
    if (layouts && layouts->nodes.count(n)) {
      config.input_layouts = layouts->nodes.at(n).in;
      config.output_layouts = layouts->nodes.at(n).out;
    }
    auto outs = kernels::evaluate_node(*n, ptrs, 1, nullptr, config);
    for (size_t i = 0; i < outs.size(); ++i) env[n->output(i)] = std::move(outs[i]);
  }
  std::vector<Tensor> r;
  for (ir::Value* v : g.outputs()) r.push_back(v->is_constant() ? *v->constant : env.at(v));
  return r;
}

/// A deterministic float input of `v`'s static shape (values in [-0.5, 1]).
inline Tensor ramp_for(const ir::Value* v) {
  Tensor t(DType::kFloat32, v->type.static_shape());
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  return t;
}

/// `g` in the textual IR's canonical form (names ignored).
inline std::string canonical(const ir::Graph& g) {
  ir::PrintOptions o;
  o.canonical = true;
  return ir::print_graph(g, o);
}

/// Before / Expected: parses `before`, runs `pass`, and checks that the
/// result is `expected` (structurally: names ignored, constants compared by
/// their printed data), that the pass reports `changes` changes, and that the
/// graph outputs on ramp inputs stay within 1e-5 of the original ones.
/// Returns the rewritten graph for further checks.
inline std::unique_ptr<ir::Graph> expect_rewrite(Pass& pass, const std::string& before, const std::string& expected,
                                                 int64_t changes) {
  auto g = ir::parse_graph(before);
  std::map<std::string, Tensor> feeds;
  for (const ir::Value* v : g->inputs()) feeds[v->name()] = ramp_for(v);
  const std::vector<Tensor> want = run_graph(*g, feeds);
  EXPECT_EQ(pass.run(*g), changes);
  g->verify();
  EXPECT_EQ(canonical(*g), canonical(*ir::parse_graph(expected))) << "after " << pass.name() << ":\n"
                                                                   << ir::print_graph(*g);
  const std::vector<Tensor> got = run_graph(*g, feeds);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape());
    gec::testing::expect_close(gec::testing::values<float>(got[i]), gec::testing::values<float>(want[i]), 1e-5f, 1e-5f);
  }
  return g;
}

/// A negative case: `pass` leaves `before` exactly as it was.
inline void expect_unchanged(Pass& pass, const std::string& before) {
  auto g = ir::parse_graph(before);
  const std::string was = canonical(*g);
  EXPECT_EQ(pass.run(*g), 0);
  EXPECT_EQ(canonical(*g), was);
}

}  // namespace gec::passes::testing
