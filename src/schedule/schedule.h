// The schedule stage (after the passes, before memory planning): chooses each
// node's layout and kernel and orders the steps the runtime executes.
//  - assign_layouts (layout_assignment.cc): nChw16c between oneDNN
//    convolutions, asking the kernel library which implementation each
//    layout gets; inserts com.graphengine::Reorder nodes where a consumer
//    wants the other layout.
//  - assign_streams (streams.cc): spreads the main graph over streams by
//    list scheduling on a cost estimate (cost_model.h), puts the nodes in
//    the order found and places the events between streams, pruned;
//  - make_execution_plan (execution_plan.cc): one step per node in
//    topological order, each with the kernel created once for it (proving op,
//    attributes, dtypes and layouts are supported), its layouts and stream.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  int64_t blocked_values = 0;        // values held non-plain (nChw16c or nhwc)
  int64_t channels_last_values = 0;  // of these, values held in nhwc
  int64_t reorders = 0;              // Reorder nodes inserted
  /// Concats whose output is nhwc: each copies its inputs' channels pixel by
  /// pixel, so the memory planner must not place their inputs in the output
  /// (memory::plan_memory's `copied_concats`).
  std::unordered_set<const ir::Node*> copied_concats;
};

/// Chooses nChw16c or nhwc for values between convolutions where oneDNN runs
/// them faster (see layout_assignment.cc for the rules) and inserts the
/// Reorders that makes consistent; the main graph only (subgraphs stay
/// plain). `query` answers which implementation a conv gets in a layout
/// (kernels::implementation_for_layout when empty; tests inject one).
/// `variants` (kernels::choose_variant, or empty for none) lets a group keep
/// nChw16c where the Winograd convolutions it allows outweigh its
/// odd-channel values (layout_assignment.cc, LayoutGroups).
LayoutAssignment assign_layouts(ir::Graph& g, kernels::LayoutQuery query = {},
                                kernels::VariantChoice variants = {});

struct StreamOptions {
  /// Streams for the main graph: 0 = auto (the count whose estimated run is
  /// shortest, when clearly shorter than one stream), 1 = one sequential step
  /// list, up to kMaxStreams.
  int streams = 0;
  /// Intra-op threads a run will have, split between the streams
  /// (0 = gec::available_cores()).
  int threads = 0;
};

/// What assign_streams decided.
struct StreamAssignment {
  /// The main graph's steps in its new node order: stream, waits and records
  /// only (kernels and layouts are make_execution_plan's).
  GraphSchedule schedule;
  /// Cross-stream data edges, each of which would need an event unpruned.
  int64_t events_before_pruning = 0;
  /// Estimates (cost_model.h) at the chosen count and at one stream.
  double critical_path_ms = 0, estimate_ms = 0, sequential_estimate_ms = 0;
  std::string choice;  // "requested" or "auto: N (why)"
};

/// Assigns the main graph's nodes to streams (see streams.cc for the
/// method) and, with more than one stream in use, reorders its nodes into the
/// order the list scheduler took them. Streams nobody uses are dropped.
/// Errors: kInvalidArgument for a count outside 0..kMaxStreams.
StreamAssignment assign_streams(ir::Graph& g, const StreamOptions& o);

/// The streams and events of `g`'s main graph in its node order, given each
/// node's stream (`streams[i]` for node i; any numbers, renumbered 0.. in
/// order of first use): a node waits for each producer on another stream
/// unless the order already implies it (the producer finished before an
/// earlier step of its stream, or before a step that an event it already
/// waits for follows). `before_pruning` receives the number of cross-stream
/// producer-reader pairs. Errors: kInternal for a wrong count.
GraphSchedule place_events(const ir::Graph& g, const std::vector<int32_t>& streams, int64_t* before_pruning = nullptr);

/// The execution plan of `g` (and its subgraphs) in the graphs' node order,
/// which must be topological. Creates every node's kernel with its layouts:
/// an unsupported op, attribute, dtype or layout throws gec::Error
/// (kUnsupported / kInvalidModel) naming the node. `streams` (null = one
/// stream) gives the main graph's streams and events, made by
/// assign_streams for this node order. Each step's kernel variant is what
/// `choose_variant` returns for its node and layouts (e.g.
/// kernels::choose_variant: "winograd", "direct" or "nhwc" convolutions); "" for
/// every step without one.
ExecutionPlan make_execution_plan(const ir::Graph& g, const LayoutAssignment& layouts,
                                  const GraphSchedule* streams = nullptr,
                                  const kernels::VariantChoice& choose_variant = {});

}  // namespace gec::schedule
