// Static memory planning: assigns every intermediate value of static shape an
// offset in one 64-byte-aligned arena, reusing bytes between values whose
// lifetimes do not overlap.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace gec::memory {

struct MemoryStats {
  int64_t no_reuse_bytes = 0;     // sum of all planned tensors (64-byte rounded)
  int64_t arena_bytes = 0;        // planned arena size
  int64_t lower_bound_bytes = 0;  // max over steps of simultaneously live bytes
  int64_t weights_bytes = 0;      // constant data
  int64_t dynamic_values = 0;     // values left to run-time allocation
  double reuse_rate = 0;          // 1 - arena / no_reuse
};

/// Plans the main graph in its current node order (the execution order).
/// Sets Value::storage and Value::offset: graph inputs -> kGraphInput,
/// constants -> kWeight (offset assigned by the .gom writer), static-shape
/// intermediates and outputs -> kArena, everything else (dynamic shape,
/// strings, subgraph values) -> kDynamic.
///
/// Lifetime of a value: [step of its producer, step of its last reader],
/// where a node whose subgraph reads the value counts as a reader, and graph
/// outputs live to the end. Offsets: "greedy by size" (Pisarchyk & Lee,
/// Efficient Memory Management for Deep Neural Net Inference, 2020): largest
/// first, each placed in the smallest gap that fits among already-placed
/// values whose lifetimes overlap.
MemoryStats plan_memory(ir::Graph& g);

/// Checks a plan: every arena value lies inside the arena and no two values
/// with overlapping lifetimes share bytes. Throws gec::Error(kInternal).
void verify_plan(const ir::Graph& g, int64_t arena_bytes);

}  // namespace gec::memory
