// The plan verifier; see verify_plan in planner.h.
//
// It does not trust the planner's blocks. It asks one question per pair of
// arena values p, q whose bytes overlap, with p produced no later than q:
// does q's producer WRITE those bytes while p still has a reader? Writers
// are all producers except alias ops whose output sits at their input's
// offset (the kernel's copy is a no-op) and Concats marked in place (their
// inputs must then sit exactly at their slices). A write at the very step
// where p is read for the last time is allowed only for an op of the in-place
// allow-list writing over p itself (same offset, size and shape; for an
// `alone` pair, p not also read as another input of that op: a value sharing
// p's bytes under another name is its own live slot and fails on its own). Values that
// are not written need no check of their own: their bytes were written by
// their source, which the pairs with the source already protect.
//
// On several streams, "while p still has a reader" means: some use of p (its
// producer or a reader) does not happen before q's producer in the plan's
// stream-and-event order (schedule/concurrency.h), so the two may overlap in
// some run; and every read must happen after its value's producer.
#include <algorithm>

#include "gec/error.h"
#include "memory/lifetimes.h"
#include "memory/planner.h"

namespace gec::memory {
namespace {

struct Slot {
  const ir::Value* v;
  const ir::Node* producer;
  int64_t first, last, off, bytes;
  bool writes = true;
};

[[noreturn]] void bad(const std::string& what) { fail(ErrorCode::kInternal, "memory plan: " + what); }

std::string q(const ir::Value* v) { return "'" + v->name() + "'"; }

// Checks a Concat marked in place: outer dims 1, each input in its slice.
void check_concat(const ir::Node& n, const ir::Value* c, const ir::ValueIndex& ids, const MemoryPlan& plan) {
  const Shape shape = c->type.static_shape();
  int64_t axis = n.get_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < axis; ++d)
    if (shape[static_cast<size_t>(d)] != 1) bad(n.describe() + " is marked in place but its outer dims are not 1");
  const int64_t start = plan.at(ids.id(c)).offset;
  int64_t base = start;
  for (const ir::Value* x : n.inputs()) {
    if (!x || !plan.in_arena(ids.id(x)) || plan.at(ids.id(x)).offset != base)
      bad(n.describe() + " is marked in place but input " + (x ? q(x) : "(none)") + " is not at its slice");
    base += value_bytes(x);
  }
  if (base != start + value_bytes(c)) bad(n.describe() + ": slices do not cover the output");
}

bool alias_in_place(const ir::Node& n, const ir::Value* o, const ir::ValueIndex& ids, const MemoryPlan& plan) {
  const ir::Value* x = n.input(0);
  return is_alias_op(n) && x && plan.in_arena(ids.id(x)) && plan.at(ids.id(x)).offset == plan.at(ids.id(o)).offset &&
         value_bytes(x) == value_bytes(o);
}

// q's producer may overwrite p at the step that reads p last.
bool in_place_ok(const Slot& p, const Slot& w) {
  if (p.off != w.off || p.bytes != w.bytes || p.v->type.static_shape() != w.v->type.static_shape() ||
      dtype_size(p.v->type.dtype) != dtype_size(w.v->type.dtype))
    return false;
  const ir::Node& n = *w.producer;
  for (int i : in_place_inputs(n)) {
    if (n.input(static_cast<size_t>(i)) != p.v) continue;
    bool read_elsewhere = false;  // another input that is p (one sharing p's bytes is its own live slot)
    for (size_t j = 0; j < n.inputs().size(); ++j)
      read_elsewhere = read_elsewhere || (static_cast<int>(j) != i && n.input(j) == p.v);
    if (!in_place_alone(n, i) || !read_elsewhere) return true;
  }
  return false;
}

}  // namespace

void verify_plan(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan,
                 const schedule::Concurrency* order) {
  const int64_t arena_bytes = plan.arena_bytes;
  if (static_cast<int32_t>(plan.values.size()) != ids.size())
    bad("the plan has " + std::to_string(plan.values.size()) + " values, the model " + std::to_string(ids.size()));
  const Lifetimes lt = compute_lifetimes(g, order);
  const schedule::Concurrency* c = lt.concurrency;
  if (c)
    for (const auto& [v, users] : lt.users) {
      auto f = lt.first.find(v);
      if (f == lt.first.end()) continue;  // a graph input or constant
      for (int64_t u : users)
        if (u != f->second && !c->happens_before(f->second, u))
          bad("step " + std::to_string(u) + " (" + lt.order[static_cast<size_t>(u)]->describe() + ") reads " + q(v) +
              " without waiting for its producer (step " + std::to_string(f->second) + ", stream " +
              std::to_string(c->stream_of(f->second)) + ")");
    }
  // On several streams: every use of p is over before w's producer starts,
  // or w writes over p in place with every other use of p over.
  auto concurrent_ok = [&](const Slot& p, const Slot& w) {
    if (!lt.others_done_before(p.v, w.first)) return false;
    const std::vector<int64_t>& users = lt.users.at(p.v);
    const bool w_reads_p = std::find(users.begin(), users.end(), w.first) != users.end();
    return !w_reads_p || in_place_ok(p, w);
  };
  std::vector<Slot> slots;
  for (const ir::Node* n : lt.order)
    for (const ir::Value* o : n->outputs()) {
      const int32_t id = ids.id(o);
      if (!plan.in_arena(id)) continue;
      Slot s{o, n, lt.first.at(o), lt.last.at(o), plan.at(id).offset, value_bytes(o)};
      const int64_t align = static_cast<int64_t>(std::max<size_t>(1, dtype_size(o->type.dtype)));
      if (s.off < 0 || s.off % align || s.off + s.bytes > arena_bytes)
        bad(q(o) + " (offset " + std::to_string(s.off) + ", " + std::to_string(s.bytes) +
            " bytes) lies outside the arena of " + std::to_string(arena_bytes) + " bytes or is misaligned");
      if (plan.concat_done(id)) {
        if (n->op_type != "Concat" || !n->domain.empty()) bad(q(o) + " is marked as a Concat in place but " + n->describe() + " makes it");
        check_concat(*n, o, ids, plan);
        s.writes = false;
      } else if (alias_in_place(*n, o, ids, plan)) {
        s.writes = false;
      }
      slots.push_back(s);
    }
  // Sweep in production order, keeping the slots still live: a pair can
  // only conflict while both are live, so each slot meets the live ones, not
  // every slot sharing its bytes (an in-place chain of n values at one
  // offset would otherwise cost n^2 pairs).
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return a.first != b.first ? a.first < b.first : a.off < b.off;
  });
  std::vector<const Slot*> live;
  for (const Slot& w : slots) {
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Slot* p) { return p->last < w.first; }),
               live.end());
    if (w.bytes > 0)
      for (const Slot* pp : live) {
        const Slot& p = *pp;
        if (p.bytes == 0 || p.off >= w.off + w.bytes || w.off >= p.off + p.bytes) continue;
        if (p.first == w.first)
          bad(q(p.v) + " and " + q(w.v) + " are written by the same node and share bytes");
        if (!w.writes) continue;
        if (c ? concurrent_ok(p, w) : w.first == p.last && in_place_ok(p, w)) continue;
        if (c)
          bad(q(w.v) + " (" + w.producer->describe() + ", step " + std::to_string(w.first) + " on stream " +
              std::to_string(c->stream_of(w.first)) + ") overwrites " + q(p.v) + " (made by step " +
              std::to_string(p.first) + " on stream " + std::to_string(c->stream_of(p.first)) +
              ") while a use of it is not ordered before that step");
        bad(q(w.v) + " (" + w.producer->describe() + ") overwrites " + q(p.v) + " while it is still read (steps " +
            std::to_string(p.first) + ".." + std::to_string(p.last) + " vs " + std::to_string(w.first) + ")");
      }
    live.push_back(&w);
  }
}

}  // namespace gec::memory
