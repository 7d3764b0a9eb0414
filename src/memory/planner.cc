// Greedy-by-size offset assignment over value lifetimes; see planner.h.
#include "memory/planner.h"

#include <algorithm>
#include <unordered_map>

#include "gec/error.h"

namespace gec::memory {
namespace {

constexpr int64_t kAlign = 64;

int64_t align_up(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Interval {
  ir::Value* value;
  int64_t first, last;  // steps, inclusive
  int64_t bytes;        // aligned
  int64_t offset = -1;
};

// Marks `v` as read at `step` (also through subgraphs of the node at `step`).
void note_reads(const ir::Graph& sub, int64_t step, std::unordered_map<const ir::Value*, int64_t>& last) {
  for (const auto& n : sub.nodes()) {
    for (const ir::Value* in : n->inputs())
      if (in) last[in] = std::max(last[in], step);
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) note_reads(*a.g, step, last);
  }
  for (const ir::Value* o : sub.outputs()) last[o] = std::max(last[o], step);
}

std::vector<Interval> lifetimes(ir::Graph& g) {
  std::unordered_map<const ir::Value*, int64_t> first, last;
  int64_t step = 0;
  std::vector<ir::Node*> order = g.node_list();
  for (ir::Node* n : order) {
    for (const ir::Value* in : n->inputs())
      if (in) last[in] = std::max(last[in], step);
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) note_reads(*a.g, step, last);
    for (const ir::Value* o : n->outputs()) {
      first[o] = step;
      last[o] = std::max(last[o], step);
    }
    ++step;
  }
  for (const ir::Value* o : g.outputs()) last[o] = step;
  std::vector<Interval> r;
  for (ir::Node* n : order)
    for (ir::Value* o : n->outputs())
      if (o->storage == ir::Storage::kArena)
        r.push_back({o, first[o], last[o], align_up(static_cast<int64_t>(
                                               shape_numel(o->type.static_shape()) * dtype_size(o->type.dtype)))});
  return r;
}

bool overlaps(const Interval& a, const Interval& b) { return a.first <= b.last && b.first <= a.last; }

int64_t greedy_by_size(std::vector<Interval>& iv) {
  std::vector<Interval*> by_size;
  for (auto& i : iv) by_size.push_back(&i);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const Interval* a, const Interval* b) { return a->bytes > b->bytes; });
  std::vector<Interval*> placed;
  int64_t arena = 0;
  for (Interval* cur : by_size) {
    std::vector<Interval*> live;
    for (Interval* p : placed)
      if (overlaps(*p, *cur)) live.push_back(p);
    std::sort(live.begin(), live.end(), [](Interval* a, Interval* b) { return a->offset < b->offset; });
    int64_t best = -1, best_gap = INT64_MAX, prev_end = 0;
    for (Interval* p : live) {
      const int64_t gap = p->offset - prev_end;
      if (gap >= cur->bytes && gap < best_gap) { best = prev_end; best_gap = gap; }
      prev_end = std::max(prev_end, p->offset + p->bytes);
    }
    cur->offset = best >= 0 ? best : prev_end;
    arena = std::max(arena, cur->offset + cur->bytes);
    placed.push_back(cur);
  }
  return arena;
}

}  // namespace

MemoryStats plan_memory(ir::Graph& g) {
  MemoryStats st;
  ir::for_each_graph(g, [&](ir::Graph& sg) {
    for (const auto& v : sg.values()) {
      if (v->constant) {
        v->storage = ir::Storage::kWeight;
        st.weights_bytes += static_cast<int64_t>(v->constant->bytes());
      } else if (&sg == &g && std::count(g.inputs().begin(), g.inputs().end(), v.get())) {
        v->storage = ir::Storage::kGraphInput;
      } else if (&sg == &g && v->producer() && v->type.is_static() && v->type.dtype != DType::kString &&
                 v->type.dtype != DType::kUndefined) {
        v->storage = ir::Storage::kArena;
      } else {
        v->storage = ir::Storage::kDynamic;
        if (v->producer() || &sg != &g) ++st.dynamic_values;
      }
      v->offset = 0;
    }
  });
  std::vector<Interval> iv = lifetimes(g);
  for (const auto& i : iv) st.no_reuse_bytes += i.bytes;
  st.arena_bytes = greedy_by_size(iv);
  for (const auto& i : iv) i.value->offset = i.offset;
  const int64_t steps = static_cast<int64_t>(g.nodes().size()) + 1;
  std::vector<int64_t> live(static_cast<size_t>(steps + 1), 0);
  for (const auto& i : iv)
    for (int64_t s = i.first; s <= i.last; ++s) live[static_cast<size_t>(s)] += i.bytes;
  st.lower_bound_bytes = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  st.reuse_rate = st.no_reuse_bytes ? 1.0 - static_cast<double>(st.arena_bytes) / st.no_reuse_bytes : 0.0;
  return st;
}

void verify_plan(const ir::Graph& g, int64_t arena_bytes) {
  std::vector<Interval> iv = lifetimes(const_cast<ir::Graph&>(g));
  for (auto& i : iv) {
    i.offset = i.value->offset;
    if (i.offset < 0 || i.offset % kAlign || i.offset + i.bytes > arena_bytes)
      fail(ErrorCode::kInternal, "memory plan: '" + i.value->name() + "' lies outside the arena");
  }
  for (size_t a = 0; a < iv.size(); ++a)
    for (size_t b = a + 1; b < iv.size(); ++b)
      if (overlaps(iv[a], iv[b]) && iv[a].offset < iv[b].offset + iv[b].bytes &&
          iv[b].offset < iv[a].offset + iv[a].bytes)
        fail(ErrorCode::kInternal, "memory plan: '" + iv[a].value->name() + "' and '" + iv[b].value->name() +
                                       "' are live together and share bytes");
}

}  // namespace gec::memory
