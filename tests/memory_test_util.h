// Helpers for memory planner and runtime tests: build small typed graphs,
// plan them, and load them into a Session.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gec/runtime.h"
#include "ir/graph.h"
#include "memory/planner.h"
#include "model/reader.h"
#include "model/writer.h"
#include "schedule/schedule.h"

namespace gec::testing {

/// Adds a graph input.
inline ir::Value* add_input(ir::Graph& g, const std::string& name, DType dt, const Shape& s) {
  ir::Value* v = g.add_value(name, ir::TensorType::of(dt, s));
  g.inputs().push_back(v);
  return v;
}

/// Adds a node with one output of the given type (dtype of input 0 unless given).
inline ir::Value* add_op(ir::Graph& g, const std::string& op, const std::vector<ir::Value*>& ins,
                         const std::string& out, const Shape& s, std::vector<ir::Attribute> attrs = {},
                         DType dt = DType::kUndefined) {
  ir::Node* n = g.add_node(op, ins, {out}, "n_" + out);
  n->attrs = std::move(attrs);
  if (dt == DType::kUndefined) dt = ins[0]->type.dtype;
  n->output(0)->type = ir::TensorType::of(dt, s);
  return n->output(0);
}

/// A graph's value index and memory plan (verified).
struct Planned {
  ir::ValueIndex ids;
  memory::MemoryPlan plan;
  explicit Planned(const ir::Graph& g) : ids(g), plan(memory::plan_memory(g, ids)) {
    memory::verify_plan(g, ids, plan);
  }
  memory::Placement& at(const ir::Value* v) { return plan.at(ids.id(v)); }
  const memory::MemoryStats& stats() const { return plan.stats; }
};

/// .gom bytes of `g` with plan `p` and an all-plain execution plan.
inline std::vector<uint8_t> gom_of(const ir::Graph& g, const Planned& p, int32_t opset = 17,
                                   const std::string& meta = "{}") {
  return model::write_gom(g, p.ids, p.plan, schedule::make_execution_plan(g, {}), opset, meta);
}

/// Plans (and verifies) `g`, then loads it as a Session.
inline std::unique_ptr<Session> plan_and_load(ir::Graph& g, memory::MemoryStats* stats = nullptr) {
  Planned p(g);
  if (stats) *stats = p.stats();
  auto bytes = std::make_shared<const std::vector<uint8_t>>(gom_of(g, p));
  SessionOptions so;
  so.num_threads = 2;
  return Session::load_from_bytes(bytes, so);
}

}  // namespace gec::testing
