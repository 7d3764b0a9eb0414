// The execution plan: per graph of a compiled model, the ordered steps the
// runtime executes, each naming its node in the graph's node table, the
// kernel implementation chosen at compile time and the layout of each input
// and output. Made by the schedule stage (schedule.h), written to the .gom as
// its own message (model/gom.proto: ExecutionPlan) and executed by
// runtime/executor.cc. The main graph's steps may be spread over several
// streams (schedule/streams.cc): a stream runs its steps in the plan's order,
// and an edge between streams is an event one step records when it ends and
// another waits for before it starts. Subgraphs run on the stream of the node
// that owns them. Header only: the runtime library does not link the
// compiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "ops/layout.h"

namespace gec::schedule {

struct Step {
  /// Index of the node in its graph's node table (the order the .gom stores).
  int32_t node = -1;
  /// Kernel::impl_name() of the kernel chosen at compile time; the runtime
  /// refuses to run another.
  std::string kernel;
  /// One per node input / output, or empty when all are plain.
  std::vector<ops::Layout> input_layouts, output_layouts;
  /// Implementation variant handed to the kernel ("" = its default).
  std::string variant;
  /// Intra-op threads: 0 = the run's; 1 = one thread, for a node too small
  /// for a parallel region to pay (make_execution_plan decides from its
  /// static bytes and FLOPs: kSingleThreadBytes, kSingleThreadFlops).
  int32_t threads = 0;
  /// The stream that runs this step (0 .. GraphSchedule::streams - 1).
  int32_t stream = 0;
  /// Events this step waits for before it starts; each is recorded by an
  /// earlier step of another stream.
  std::vector<int32_t> wait_events;
  /// Event this step records when it has finished (-1 = none).
  int32_t record_event = -1;
};

/// A node touching fewer bytes (inputs + outputs, static shapes) and doing
/// fewer floating-point operations than these runs on one thread: on this
/// CPU a parallel region costs 1-5 us to open and join, as long as ~32 KiB
/// of memory traffic or ~0.25 MFLOP on one core.
inline constexpr int64_t kSingleThreadBytes = 32 * 1024;
inline constexpr double kSingleThreadFlops = 0.25e6;

/// Streams a plan may name (the .gom loader refuses more).
inline constexpr int32_t kMaxStreams = 64;

struct GraphSchedule {
  /// In node order (step i runs node i), a topological order.
  std::vector<Step> steps;
  /// Streams the steps are spread over (1 for subgraphs) and events recorded.
  int32_t streams = 1;
  int32_t events = 0;
};

struct ExecutionPlan {
  /// One per graph, in ir::for_each_graph order (graphs[0] is the main graph).
  std::vector<GraphSchedule> graphs;
};

/// The KernelConfig a step creates its node's kernel with.
inline kernels::KernelConfig kernel_config(const ir::Node& n, const Step& s) {
  kernels::KernelConfig c = kernels::KernelConfig::for_node(n);
  c.input_layouts = s.input_layouts;
  c.output_layouts = s.output_layouts;
  c.variant = s.variant;
  return c;
}

}  // namespace gec::schedule
