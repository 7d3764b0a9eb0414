// Static memory planning: assigns every intermediate value of static shape an
// offset in one 64-byte-aligned arena, reusing bytes between values whose
// lifetimes do not overlap, and sharing bytes outright where the data allows:
// aliases (Reshape & co. output = input bytes), elementwise ops writing over
// an input that dies there (and FusedConv over its residual Z where no other
// input shares Z's bytes: ops::IoPair::alone), and Concat inputs produced
// straight into their slices of the output.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "memory/memory_plan.h"
#include "schedule/concurrency.h"

namespace gec::memory {


/// Plans the main graph in its current node order (the execution order),
/// returning one Placement per id of `ids` (an index of `g`): graph inputs ->
/// kGraphInput, constants -> kWeight (their place in WEIGHTS is the .gom
/// writer's), static-shape intermediates and outputs -> kArena, everything
/// else (dynamic shape, strings, subgraph values) -> kDynamic; and the
/// Concats it made free (MemoryPlan::concat_in_place). The graph is not
/// changed. Errors: kInvalidModel for a value above 2^48 bytes,
/// kUnsupported for an arena above 2^56 bytes.
///
/// Lifetime of a value: [step of its producer, step of its last reader],
/// where a node whose subgraph reads the value counts as a reader, and graph
/// outputs live to the end. Values sharing bytes form one block whose
/// lifetime is the union of theirs. Block offsets: the smaller of the plans
/// of "greedy by size" and "greedy by breadth" (Pisarchyk & Lee, Efficient
/// Memory Management for Deep Neural Net Inference, 2020), each placing a
/// block in the smallest gap that fits among placed blocks live at the same
/// time.
///
/// Several streams (`order` not null and not sequential): steps of different
/// streams may run at the same time, so two values share bytes only when
/// every use of one happens before the other is written, in every
/// interleaving the plan's events allow; a value's lifetime then ends at the
/// last step not ordered after all its uses (memory/lifetimes.h), and an
/// in-place write over an input needs every other use of that input to
/// happen before it.
///
/// `copied_concats` (may be null): Concat nodes that copy their inputs
/// rather than have them written in place into the output (a Concat on the
/// channels of nhwc values: an input's channels are not one byte range).
MemoryPlan plan_memory(const ir::Graph& g, const ir::ValueIndex& ids, const schedule::Concurrency* order = nullptr,
                       const std::unordered_set<const ir::Node*>* copied_concats = nullptr);

/// Checks a plan on its own terms (not trusting the planner's grouping):
/// every arena value lies inside the arena at an offset aligned to its element
/// size, and two values live at the same step share bytes only when the data
/// makes it right: an alias op's output at its input's offset, an in-place
/// output over an input read last at that node (the op's may_inplace trait;
/// for an `alone` pair, that input not also read as another input of the
/// node), or a Concat input
/// exactly at its slice of an output marked in place. Throws
/// gec::Error(kInternal) naming the two values.
///
/// With several streams (`order`), "before" is the plan's happens-before
/// order: every value must be produced before each of its readers runs
/// (including reads from subgraphs), and a value may take bytes another uses
/// only when every use of the other happens before its producer runs (for an
/// in-place write: every use but the writer's own read).
void verify_plan(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan,
                 const schedule::Concurrency* order = nullptr);

/// One arena value of a planned graph, for reports and drawings.
struct ArenaTensor {
  std::string name;
  int64_t first = 0, last = 0;  // execution steps, inclusive
  int64_t offset = 0, bytes = 0;
};
/// The arena values of the main graph of a planned (or loaded) graph.
std::vector<ArenaTensor> arena_tensors(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan);

/// True for ops whose output 0 is a byte-for-byte view of input 0 (the op's
/// `alias` trait, ops/op_schema.h: Reshape, Flatten, Squeeze, Unsqueeze,
/// Identity), which the plan makes aliases.
bool is_alias_op(const ir::Node& n);
/// Input indices that op `n` may write its output 0 over (the op's
/// `may_inplace` trait); empty if none.
std::vector<int> in_place_inputs(const ir::Node& n);
/// Whether in place over input `input` of `n` also needs no other input of
/// `n` to share its storage (ops::IoPair::alone).
bool in_place_alone(const ir::Node& n, int input);

}  // namespace gec::memory
