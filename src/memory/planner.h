// Static memory planning: assigns every intermediate value of static shape an
// offset in one 64-byte-aligned arena, reusing bytes between values whose
// lifetimes do not overlap, and sharing bytes outright where the data allows:
// aliases (Reshape & co. output = input bytes), elementwise ops writing over
// an input that dies there, and Concat inputs produced straight into their
// slices of the output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gec::memory {

struct MemoryStats {
  int64_t no_reuse_bytes = 0;     // sum of all planned tensors (64-byte rounded), no sharing at all
  int64_t arena_bytes = 0;        // planned arena size
  int64_t lower_bound_bytes = 0;  // max over steps of simultaneously live bytes (shared bytes once)
  int64_t weights_bytes = 0;      // constant data
  int64_t dynamic_values = 0;     // values left to run-time allocation
  double reuse_rate = 0;          // 1 - arena / no_reuse
  int64_t aliases = 0;            // values sharing their input's bytes (Reshape, Flatten, ...)
  int64_t in_place = 0;           // elementwise outputs written over a dying input
  int64_t concats_in_place = 0;   // Concat nodes whose inputs were produced into the output
  std::string strategy;           // offset strategy whose plan was kept
};

/// Plans the main graph in its current node order (the execution order).
/// Sets Value::storage and Value::offset: graph inputs -> kGraphInput,
/// constants -> kWeight (offset assigned by the .gom writer), static-shape
/// intermediates and outputs -> kArena, everything else (dynamic shape,
/// strings, subgraph values) -> kDynamic. Sets kConcatInPlaceAttr
/// (plan_format.h) on the Concat nodes it made free.
///
/// Lifetime of a value: [step of its producer, step of its last reader],
/// where a node whose subgraph reads the value counts as a reader, and graph
/// outputs live to the end. Values sharing bytes form one block whose
/// lifetime is the union of theirs. Block offsets: the smaller of the plans
/// of "greedy by size" and "greedy by breadth" (Pisarchyk & Lee, Efficient
/// Memory Management for Deep Neural Net Inference, 2020), each placing a
/// block in the smallest gap that fits among placed blocks live at the same
/// time.
MemoryStats plan_memory(ir::Graph& g);

/// Checks a plan on its own terms (not trusting the planner's grouping):
/// every arena value lies inside the arena at an offset aligned to its element
/// size, and two values live at the same step share bytes only when the data
/// makes it right: an alias op's output at its input's offset, an in-place
/// elementwise output over an input read last at that node, or a Concat input
/// exactly at its slice of an output marked in place. Throws
/// gec::Error(kInternal) naming the two values.
void verify_plan(const ir::Graph& g, int64_t arena_bytes);

/// One arena value of a planned graph, for reports and drawings.
struct ArenaTensor {
  std::string name;
  int64_t first = 0, last = 0;  // execution steps, inclusive
  int64_t offset = 0, bytes = 0;
};
/// The arena values of the main graph of a planned (or loaded) graph.
std::vector<ArenaTensor> arena_tensors(const ir::Graph& g);

/// True for ops whose output 0 is a byte-for-byte view of input 0 (the op's
/// `alias` trait, ops/op_schema.h: Reshape, Flatten, Squeeze, Unsqueeze,
/// Identity), which the plan makes aliases.
bool is_alias_op(const ir::Node& n);
/// Input indices that op `n` may write its output 0 over (the op's
/// `may_inplace` trait); empty if none.
std::vector<int> in_place_inputs(const ir::Node& n);

}  // namespace gec::memory
