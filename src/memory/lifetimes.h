// Value lifetimes over the execution order of the main graph, shared by the
// planner, the verifier and the reports. Internal to src/memory.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "schedule/concurrency.h"

namespace gec::memory {

inline constexpr int64_t kAlign = 64;
/// One value above 2^48 bytes (256 TiB) cannot be a real model; below it the
/// sums and offsets of the planner and the loader stay far from overflow.
inline constexpr int64_t kMaxValueBytes = int64_t{1} << 48;
inline int64_t align_up(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

/// Bytes of a static-shape value (unaligned); gec::Error(kInvalidModel)
/// above kMaxValueBytes.
int64_t value_bytes(const ir::Value* v);

/// first[v]: step of v's producer; last[v]: step of its last reader (a node
/// whose subgraph reads v counts), or `end` for graph outputs, where `end` =
/// number of main-graph nodes. Steps index node_list() of the main graph.
///
/// With a multi-stream order `c` (schedule/concurrency.h), last[v] is the
/// last step that is not ordered after every user of v (its producer and its
/// readers): before it, some step that may run concurrently with a user could
/// otherwise take v's bytes. A value starting after last[v] is written only
/// once every user of v has finished. users[v] lists the users' steps then.
struct Lifetimes {
  std::unordered_map<const ir::Value*, int64_t> first, last;
  std::unordered_map<const ir::Value*, std::vector<int64_t>> users;
  std::vector<ir::Node*> order;
  int64_t end = 0;
  const schedule::Concurrency* concurrency = nullptr;  // null: one stream
  /// Every user of `v` but step `at` finishes before step `at` starts.
  bool others_done_before(const ir::Value* v, int64_t at) const;
};
Lifetimes compute_lifetimes(const ir::Graph& g, const schedule::Concurrency* c = nullptr);

/// Offset assignment for blocks (sets of values sharing bytes) given their
/// lifetime [first, last] and aligned size. Returns the arena size and writes
/// each block's offset; `name` receives the strategy whose plan was kept.
struct BlockSpan {
  int64_t first = 0, last = 0, size = 0;
  int64_t offset = -1;
};
int64_t assign_offsets(std::vector<BlockSpan>& blocks, int64_t steps, std::string& name);

}  // namespace gec::memory
