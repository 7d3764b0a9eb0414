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
#include "model/writer.h"

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

/// Plans (and verifies) `g`, then loads it as a Session.
inline std::unique_ptr<Session> plan_and_load(ir::Graph& g, memory::MemoryStats* stats = nullptr) {
  memory::MemoryStats st = memory::plan_memory(g);
  memory::verify_plan(g, st.arena_bytes);
  if (stats) *stats = st;
  auto bytes = std::make_shared<const std::vector<uint8_t>>(model::write_gom(g, st.arena_bytes, 17, "{}"));
  SessionOptions so;
  so.num_threads = 2;
  return Session::load_from_bytes(bytes, so);
}

}  // namespace gec::testing
