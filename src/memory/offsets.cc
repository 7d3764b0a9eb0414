// Offset assignment for planned blocks: several greedy orders, each placing a
// block in the best-fitting gap among already-placed blocks whose lifetimes
// overlap it; the smallest arena wins.
//
// Orders (Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
// Inference", 2020, section 4): "greedy by size" (largest first), "greedy by
// breadth" (steps in order of their live bytes, largest step first; within a
// step largest block first) and, as a cheap third opinion, longest lifetime
// first. None dominates: by size is usually best on CNN chains, by breadth
// on graphs with a few wide steps.
#include <algorithm>
#include <numeric>

#include "memory/lifetimes.h"

namespace gec::memory {
namespace {

bool overlaps(const BlockSpan& a, const BlockSpan& b) { return a.first <= b.last && b.first <= a.last; }

// Places blocks in `order`; returns the arena size.
int64_t place(std::vector<BlockSpan>& b, const std::vector<size_t>& order) {
  for (auto& x : b) x.offset = -1;
  std::vector<size_t> placed;
  std::vector<const BlockSpan*> live;
  int64_t arena = 0;
  for (size_t i : order) {
    BlockSpan& cur = b[i];
    live.clear();
    for (size_t p : placed)
      if (overlaps(b[p], cur)) live.push_back(&b[p]);
    std::sort(live.begin(), live.end(), [](const BlockSpan* x, const BlockSpan* y) { return x->offset < y->offset; });
    int64_t best = -1, best_gap = INT64_MAX, prev_end = 0;
    for (const BlockSpan* p : live) {
      const int64_t gap = p->offset - prev_end;
      if (gap >= cur.size && gap < best_gap) {
        best = prev_end;
        best_gap = gap;
      }
      prev_end = std::max(prev_end, p->offset + p->size);
    }
    cur.offset = best >= 0 ? best : prev_end;
    arena = std::max(arena, cur.offset + cur.size);
    placed.push_back(i);
  }
  return arena;
}

std::vector<size_t> by_size(const std::vector<BlockSpan>& b) {
  std::vector<size_t> o(b.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](size_t x, size_t y) {
    if (b[x].size != b[y].size) return b[x].size > b[y].size;
    return b[x].last - b[x].first > b[y].last - b[y].first;
  });
  return o;
}

std::vector<size_t> by_lifetime(const std::vector<BlockSpan>& b) {
  std::vector<size_t> o(b.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](size_t x, size_t y) {
    const int64_t lx = b[x].last - b[x].first, ly = b[y].last - b[y].first;
    if (lx != ly) return lx > ly;
    return b[x].size > b[y].size;
  });
  return o;
}

std::vector<size_t> by_breadth(const std::vector<BlockSpan>& b, int64_t steps) {
  std::vector<std::vector<size_t>> at(static_cast<size_t>(steps + 1));
  std::vector<int64_t> breadth(static_cast<size_t>(steps + 1), 0);
  for (size_t i = 0; i < b.size(); ++i)
    for (int64_t s = b[i].first; s <= b[i].last && s <= steps; ++s) {
      at[static_cast<size_t>(s)].push_back(i);
      breadth[static_cast<size_t>(s)] += b[i].size;
    }
  std::vector<size_t> step_order(at.size());
  std::iota(step_order.begin(), step_order.end(), 0);
  std::stable_sort(step_order.begin(), step_order.end(),
                   [&](size_t x, size_t y) { return breadth[x] > breadth[y]; });
  std::vector<char> taken(b.size(), 0);
  std::vector<size_t> o;
  for (size_t s : step_order) {
    std::vector<size_t>& here = at[s];
    std::stable_sort(here.begin(), here.end(), [&](size_t x, size_t y) { return b[x].size > b[y].size; });
    for (size_t i : here)
      if (!taken[i]) {
        taken[i] = 1;
        o.push_back(i);
      }
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (!taken[i]) o.push_back(i);
  return o;
}

}  // namespace

int64_t assign_offsets(std::vector<BlockSpan>& blocks, int64_t steps, std::string& name) {
  const std::pair<const char*, std::vector<size_t>> orders[] = {
      {"greedy_by_size", by_size(blocks)},
      {"greedy_by_breadth", by_breadth(blocks, steps)},
      {"longest_lifetime_first", by_lifetime(blocks)},
  };
  int64_t best = INT64_MAX;
  const std::vector<size_t>* best_order = nullptr;
  for (const auto& [n, order] : orders) {
    const int64_t a = place(blocks, order);
    if (a < best) {
      best = a;
      best_order = &order;
      name = n;
    }
  }
  if (!best_order) return 0;
  return place(blocks, *best_order);
}

}  // namespace gec::memory
