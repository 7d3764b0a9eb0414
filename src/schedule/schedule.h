// The schedule stage (after the passes, before memory planning): chooses each
// node's layout and kernel and orders the steps the runtime executes.
//  - assign_layouts (layout_assignment.cc): nChw16c between oneDNN
//    convolutions, asking the kernel library which implementation each
//    layout gets; inserts com.graphengine::Reorder nodes where a consumer
//    wants the other layout.
//  - make_execution_plan (execution_plan.cc): one step per node in
//    topological order, each with the kernel created once for it (proving op,
//    attributes, dtypes and layouts are supported) and its layouts.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "schedule/execution_plan.h"

namespace gec::schedule {

/// The layout of each input and output of one node.
struct NodeLayouts {
  std::vector<ops::Layout> in, out;
};

/// The layouts assign_layouts chose. Nodes absent from `nodes` are plain.
struct LayoutAssignment {
  std::unordered_map<const ir::Node*, NodeLayouts> nodes;
  int64_t blocked_values = 0;  // values held in nChw16c
  int64_t reorders = 0;        // Reorder nodes inserted
};

/// Chooses nChw16c for values between convolutions where oneDNN runs them
/// faster (see layout_assignment.cc for the rules) and inserts the Reorders
/// that makes consistent; the main graph only (subgraphs stay plain).
/// `query` answers which implementation a conv gets blocked
/// (kernels::implementation_for_layout when empty; tests inject one).
LayoutAssignment assign_layouts(ir::Graph& g, kernels::LayoutQuery query = {});

/// The execution plan of `g` (and its subgraphs) in the graphs' node order,
/// which must be topological. Creates every node's kernel with its layouts:
/// an unsupported op, attribute, dtype or layout throws gec::Error
/// (kUnsupported / kInvalidModel) naming the node.
ExecutionPlan make_execution_plan(const ir::Graph& g, const LayoutAssignment& layouts);

}  // namespace gec::schedule
