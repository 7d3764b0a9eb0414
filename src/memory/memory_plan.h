// The memory plan: where every value of a compiled model lives at run time.
// Made by the planner (planner.h), written to the .gom as its own message
// (model/gom.proto: MemoryPlan), read back by the runtime, which places the
// arena values and skips the Concats done in place. Header only: the runtime
// library does not link the planner.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gec/error.h"

namespace gec::memory {

/// Where a value's bytes live at run time.
enum class Storage : int32_t {
  kUnplanned = 0,
  kArena = 1,       // `offset` bytes into the session's arena (static shape)
  kWeight = 2,      // constant data (in the WEIGHTS partition of the .gom)
  kGraphInput = 3,  // the caller's buffer
  kDynamic = 4,     // shape known only at run time: allocated by the executor
};
inline constexpr int32_t kMaxStorageCode = 4;

/// One value's place: storage, and for kArena its byte offset in the arena.
struct Placement {
  Storage storage = Storage::kUnplanned;
  int64_t offset = 0;
};

/// What plan_memory reports (also in the compile report's "memory" object).
struct MemoryStats {
  int64_t no_reuse_bytes = 0;     // sum of all planned tensors (64-byte rounded), no sharing at all
  int64_t arena_bytes = 0;        // planned arena size
  int64_t lower_bound_bytes = 0;  // max over steps of simultaneously live bytes (shared bytes once)
  int64_t weights_bytes = 0;      // constant data
  int64_t dynamic_values = 0;     // values left to run-time allocation
  double reuse_rate = 0;          // 1 - arena / no_reuse
  int64_t aliases = 0;            // values sharing their input's bytes (Reshape, Flatten, ...)
  int64_t in_place = 0;           // outputs written over a dying input (may_inplace: elementwise ops, FusedConv over Z)
  int64_t concats_in_place = 0;   // Concat nodes whose inputs were produced into the output
  std::string strategy;           // offset strategy whose plan was kept
};

/// The plan of one model. Values are named by their ir::ValueIndex id.
struct MemoryPlan {
  /// One entry per value id.
  std::vector<Placement> values;
  /// Output value ids of the Concat nodes whose inputs were produced straight
  /// into their slices of the output: every byte is in place when the node's
  /// turn comes, so the executor skips it. Sorted.
  std::vector<int32_t> concat_in_place;
  /// Bytes of the activation arena (64-byte aligned offsets inside it).
  int64_t arena_bytes = 0;
  /// Compile-time statistics; not stored in the .gom.
  MemoryStats stats;

  const Placement& at(int32_t id) const {
    GEC_CHECK(id >= 0 && static_cast<size_t>(id) < values.size(), "memory plan: value id out of range");
    return values[static_cast<size_t>(id)];
  }
  Placement& at(int32_t id) {
    GEC_CHECK(id >= 0 && static_cast<size_t>(id) < values.size(), "memory plan: value id out of range");
    return values[static_cast<size_t>(id)];
  }
  bool in_arena(int32_t id) const { return at(id).storage == Storage::kArena; }
  /// True when the Concat producing value `out_id` is done in place.
  bool concat_done(int32_t out_id) const {
    return std::binary_search(concat_in_place.begin(), concat_in_place.end(), out_id);
  }
};

}  // namespace gec::memory
