// The memory planner; see planner.h.
//
// Steps: (1) classify every value's storage; (2) lifetimes over the node
// order; (3) one walk over the nodes groups arena values into blocks that
// share bytes: an alias op's output joins its input's block at the same
// place; an in-place op's output (the may_inplace trait: elementwise ops, and
// FusedConv over its residual) joins the block of an input when every value
// of that block is last read at this node (the op reads element i before
// writing it) and, for an `alone` pair, no other input of the node lies in
// that block; a Concat whose dims before the axis are all 1 takes its
// inputs' blocks into its own at their slice offsets when each input is used
// only by it (its producer then writes straight into the output and the
// Concat node has nothing left to do); (4) blocks get offsets (offsets.cc);
// (5) statistics.
//
// Why a block's lifetime is simply the union of its members': a member that
// joins later always reads an earlier member at the joining step, so a block
// whose members all die at step t can never gain a member after t.
#include "memory/planner.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "gec/error.h"
#include "memory/lifetimes.h"
#include "ops/op_schema.h"

namespace gec::memory {

// The whole arena is capped at 2^56 bytes: far from int64 overflow in the
// sums and offsets computed here and by the .gom loader.
constexpr int64_t kMaxArenaBytes = int64_t{1} << 56;

namespace {

struct Member {
  ir::Value* v;
  int64_t rel;  // byte offset inside the block
};

struct Block {
  std::vector<Member> members;
  int64_t size = 0;
  bool merged = false;  // taken into another block
};

class Grouper {
 public:
  Grouper(const Lifetimes& lt, const ir::ValueIndex& ids, MemoryPlan& plan,
          const std::unordered_set<const ir::Node*>* copied_concats)
      : lt_(lt), ids_(ids), plan_(plan), st_(plan.stats), copied_concats_(copied_concats) {}

  void run() {
    int64_t step = 0;
    for (ir::Node* n : lt_.order) {
      for (ir::Value* o : n->outputs())
        if (plan_.in_arena(ids_.id(o)) && !join_alias(*n, o) && !join_in_place(*n, o, step)) new_block(o);
      if (n->op_type == "Concat" && n->domain.empty() && !(copied_concats_ && copied_concats_->count(n)))
        try_concat(*n, step);
      ++step;
    }
  }
  std::vector<Block>& blocks() { return blocks_; }

 private:
  int64_t last_of(const ir::Value* v) const {
    auto it = lt_.last.find(v);
    return it == lt_.last.end() ? 0 : it->second;
  }
  void new_block(ir::Value* v) {
    where_[v] = {blocks_.size(), 0};
    Block b;
    b.members.push_back({v, 0});
    b.size = value_bytes(v);
    blocks_.push_back(std::move(b));
  }
  void join(ir::Value* v, size_t block, int64_t rel) {
    where_[v] = {block, rel};
    blocks_[block].members.push_back({v, rel});
    int64_t end;
    if (__builtin_add_overflow(rel, value_bytes(v), &end) || end > kMaxValueBytes)
      fail(ErrorCode::kInvalidModel, "value '" + v->name() + "' at byte " + std::to_string(rel) +
                                         " of its shared block ends past 2^48 bytes; cannot plan its memory");
    blocks_[block].size = std::max(blocks_[block].size, end);
  }
  bool in_arena(const ir::Value* v) const { return v && where_.count(v); }
  // True when `v` alone covers its whole block.
  bool spans_block(const ir::Value* v) const {
    auto [b, rel] = where_.at(v);
    return rel == 0 && value_bytes(v) == blocks_[b].size;
  }

  bool join_alias(const ir::Node& n, ir::Value* o) {
    if (!is_alias_op(n) || n.outputs().size() != 1) return false;
    ir::Value* x = n.input(0);
    if (!in_arena(x) || value_bytes(x) != value_bytes(o) || x->type.dtype != o->type.dtype) return false;
    auto [b, rel] = where_.at(x);
    join(o, b, rel);
    ++st_.aliases;
    return true;
  }

  bool join_in_place(const ir::Node& n, ir::Value* o, int64_t step) {
    if (n.outputs().size() != 1) return false;
    for (int i : in_place_inputs(n)) {
      ir::Value* x = n.input(static_cast<size_t>(i));
      if (!in_arena(x) || x->type.static_shape() != o->type.static_shape() ||
          dtype_size(x->type.dtype) != dtype_size(o->type.dtype) || !spans_block(x))
        continue;
      const Block& b = blocks_[where_.at(x).first];
      if (in_place_alone(n, i)) {  // no other input of n in x's block (x spans it)
        bool shared = false;
        for (size_t j = 0; j < n.inputs().size(); ++j)
          shared = shared || (static_cast<int>(j) != i && in_arena(n.input(j)) &&
                              where_.at(n.input(j)).first == where_.at(x).first);
        if (shared) continue;
      }
      // x is read here; no member of its block is used after (or, on
      // several streams, at the same time as) this step.
      bool dies_here = last_of(x) >= step;
      for (const Member& m : b.members) dies_here = dies_here && lt_.others_done_before(m.v, step);
      if (!dies_here) continue;
      join(o, where_.at(x).first, 0);
      ++st_.in_place;
      return true;
    }
    return false;
  }

  // Concat along `axis` with all outer dims 1: input k is the contiguous byte
  // range [base_k, base_k + bytes_k) of the output.
  void try_concat(ir::Node& n, int64_t step) {
    ir::Value* c = n.output(0);
    if (n.inputs().empty() || !in_arena(c) || !spans_block(c)) return;
    const Shape shape = c->type.static_shape();
    int64_t axis = n.get_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(shape.size());
    for (int64_t d = 0; d < axis; ++d)
      if (shape[static_cast<size_t>(d)] != 1) return;
    std::unordered_set<size_t> seen;
    for (ir::Value* x : n.inputs()) {
      if (!in_arena(x) || x->uses().size() != 1 || n.owner()->is_graph_output(x) || !spans_block(x) ||
          x->type.dtype != c->type.dtype)
        return;
      if (!seen.insert(where_.at(x).first).second) return;  // two inputs share bytes
    }
    const size_t cb = where_.at(c).first;
    int64_t base = 0;
    for (ir::Value* x : n.inputs()) {
      const size_t xb = where_.at(x).first;
      for (const Member& m : blocks_[xb].members) join(m.v, cb, base + m.rel);
      blocks_[xb].members.clear();
      blocks_[xb].merged = true;
      base += value_bytes(x);
    }
    plan_.concat_in_place.push_back(ids_.id(c));
    ++st_.concats_in_place;
    (void)step;
  }

  const Lifetimes& lt_;
  const ir::ValueIndex& ids_;
  MemoryPlan& plan_;
  MemoryStats& st_;
  const std::unordered_set<const ir::Node*>* copied_concats_;  // never in place (plan_memory)
  std::vector<Block> blocks_;
  std::unordered_map<const ir::Value*, std::pair<size_t, int64_t>> where_;
};

void classify(const ir::Graph& g, const ir::ValueIndex& ids, MemoryPlan& plan) {
  MemoryStats& st = plan.stats;
  plan.values.assign(static_cast<size_t>(ids.size()), Placement{});
  ir::for_each_graph(g, [&](const ir::Graph& sg) {
    for (const auto& v : sg.values()) {
      Storage& storage = plan.at(ids.id(v.get())).storage;
      if (v->constant) {
        storage = Storage::kWeight;
        st.weights_bytes += static_cast<int64_t>(v->constant->bytes());
      } else if (&sg == &g && std::count(g.inputs().begin(), g.inputs().end(), v.get())) {
        storage = Storage::kGraphInput;
      } else if (&sg == &g && v->producer() && v->type.is_static() && v->type.dtype != DType::kString &&
                 v->type.dtype != DType::kUndefined) {
        storage = Storage::kArena;
      } else {
        storage = Storage::kDynamic;
        if (v->producer() || &sg != &g) ++st.dynamic_values;
      }
    }
  });
}

// Max over steps of the bytes live at once, each block counted by the union
// of its members live at that step (rounded up to the alignment).
int64_t lower_bound(const std::vector<Block>& blocks, const Lifetimes& lt) {
  std::vector<int64_t> live(static_cast<size_t>(lt.end + 1), 0);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const Block& b : blocks) {
    if (b.merged || b.members.empty()) continue;
    int64_t first = INT64_MAX, last = -1;
    for (const Member& m : b.members) {
      first = std::min(first, lt.first.at(m.v));
      last = std::max(last, lt.last.at(m.v));
    }
    for (int64_t s = first; s <= last; ++s) {
      spans.clear();
      for (const Member& m : b.members)
        if (lt.first.at(m.v) <= s && s <= lt.last.at(m.v)) spans.push_back({m.rel, m.rel + value_bytes(m.v)});
      std::sort(spans.begin(), spans.end());
      int64_t covered = 0, end = 0;
      for (auto [lo, hi] : spans) {
        lo = std::max(lo, end);
        if (hi > lo) covered += hi - lo;
        end = std::max(end, hi);
      }
      live[static_cast<size_t>(s)] += align_up(covered);
    }
  }
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

}  // namespace

MemoryPlan plan_memory(const ir::Graph& g, const ir::ValueIndex& ids, const schedule::Concurrency* order,
                       const std::unordered_set<const ir::Node*>* copied_concats) {
  MemoryPlan plan;
  MemoryStats& st = plan.stats;
  classify(g, ids, plan);
  const Lifetimes lt = compute_lifetimes(g, order);
  Grouper grouper(lt, ids, plan, copied_concats);
  grouper.run();
  std::vector<Block>& blocks = grouper.blocks();

  std::vector<BlockSpan> spans;
  std::vector<const Block*> owners;
  int64_t total = 0;  // bounds every offset assign_offsets can choose
  for (const Block& b : blocks) {
    if (b.merged || b.members.empty()) continue;
    BlockSpan s;
    s.first = INT64_MAX;
    s.last = -1;
    for (const Member& m : b.members) {
      s.first = std::min(s.first, lt.first.at(m.v));
      s.last = std::max(s.last, lt.last.at(m.v));
      st.no_reuse_bytes += align_up(value_bytes(m.v));
    }
    s.size = align_up(b.size);
    if (__builtin_add_overflow(total, s.size, &total) || total > kMaxArenaBytes)
      fail(ErrorCode::kUnsupported, "intermediate values (first: '" + b.members.front().v->name() +
                                        "') need more than 2^56 bytes of arena; cannot plan memory");
    spans.push_back(s);
    owners.push_back(&b);
  }
  st.arena_bytes = assign_offsets(spans, lt.end, st.strategy);
  for (size_t i = 0; i < spans.size(); ++i)
    for (const Member& m : owners[i]->members) plan.at(ids.id(m.v)).offset = spans[i].offset + m.rel;
  plan.arena_bytes = st.arena_bytes;
  std::sort(plan.concat_in_place.begin(), plan.concat_in_place.end());
  st.lower_bound_bytes = lower_bound(blocks, lt);
  st.reuse_rate = st.no_reuse_bytes ? 1.0 - static_cast<double>(st.arena_bytes) / st.no_reuse_bytes : 0.0;
  return plan;
}

std::vector<ArenaTensor> arena_tensors(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan) {
  const Lifetimes lt = compute_lifetimes(g);
  std::vector<ArenaTensor> r;
  for (ir::Node* n : lt.order)
    for (ir::Value* o : n->outputs()) {
      const Placement& p = plan.at(ids.id(o));
      if (p.storage == Storage::kArena) r.push_back({o->name(), lt.first.at(o), lt.last.at(o), p.offset, value_bytes(o)});
    }
  return r;
}

}  // namespace gec::memory
