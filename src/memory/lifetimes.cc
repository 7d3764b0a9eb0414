// Lifetimes, value sizes and the alias / in-place traits as the planner and
// the plan verifier read them (lifetimes.h, planner.h). Built into the
// runtime library too: the .gom loader verifies the memory plan it reads.
#include "memory/lifetimes.h"

#include <algorithm>

#include "gec/error.h"
#include "memory/planner.h"
#include "ops/op_schema.h"

namespace gec::memory {

int64_t value_bytes(const ir::Value* v) {
  const Shape s = v->type.static_shape();
  int64_t bytes = static_cast<int64_t>(dtype_size(v->type.dtype));
  bool empty = false;
  for (int64_t d : s) empty |= d == 0;
  if (empty) return 0;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxValueBytes)
      fail(ErrorCode::kInvalidModel, "value '" + v->name() + "' of type " + v->type.str() +
                                         " is larger than 2^48 bytes; cannot plan its memory");
  return bytes;
}

namespace {

// Marks values read by a subgraph (at any depth) as read at `step`.
void note_reads(const ir::Graph& sub, int64_t step, std::unordered_map<const ir::Value*, int64_t>& last) {
  for (const auto& n : sub.nodes()) {
    for (const ir::Value* in : n->inputs())
      if (in) last[in] = std::max(last[in], step);
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) note_reads(*a.g, step, last);
  }
  for (const ir::Value* o : sub.outputs()) last[o] = std::max(last[o], step);
}

}  // namespace

Lifetimes compute_lifetimes(const ir::Graph& g, const schedule::Concurrency* c) {
  Lifetimes lt;
  lt.order = g.node_list();
  if (c && c->sequential()) c = nullptr;
  if (c && c->steps() != static_cast<int64_t>(lt.order.size()))
    fail(ErrorCode::kInternal, "stream order of " + std::to_string(c->steps()) + " steps for " +
                                   std::to_string(lt.order.size()) + " nodes");
  lt.concurrency = c;
  int64_t step = 0;
  std::unordered_map<const ir::Value*, int64_t> reads;  // this node's reads, incl. its subgraphs'
  for (ir::Node* n : lt.order) {
    reads.clear();
    for (const ir::Value* in : n->inputs())
      if (in) reads[in] = step;
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) note_reads(*a.g, step, reads);
    for (const auto& [v, s] : reads) {
      lt.last[v] = std::max(lt.last[v], step);
      if (c) lt.users[v].push_back(step);
    }
    for (const ir::Value* o : n->outputs()) {
      lt.first[o] = step;
      lt.last[o] = std::max(lt.last[o], step);
      if (c) lt.users[o].push_back(step);
    }
    ++step;
  }
  lt.end = step;
  if (c)
    for (auto& [v, users] : lt.users)
      for (int64_t u : users) lt.last[v] = std::max(lt.last[v], c->last_unordered(u));
  for (const ir::Value* o : g.outputs()) lt.last[o] = step;
  return lt;
}

bool Lifetimes::others_done_before(const ir::Value* v, int64_t at) const {
  if (!concurrency) {
    auto it = last.find(v);
    return it == last.end() || it->second <= at;
  }
  auto l = last.find(v);
  if (l != last.end() && l->second >= end) return false;  // a graph output
  auto it = users.find(v);
  if (it == users.end()) return true;
  for (int64_t u : it->second)
    if (u != at && !concurrency->happens_before(u, at)) return false;
  return true;
}

bool is_alias_op(const ir::Node& n) {
  for (const ops::IoPair& p : ops::traits_of(n).alias)
    if (p.input == 0 && p.output == 0) return true;
  return false;
}

std::vector<int> in_place_inputs(const ir::Node& n) {
  std::vector<int> r;
  for (const ops::IoPair& p : ops::traits_of(n).may_inplace)
    if (p.output == 0) r.push_back(p.input);
  return r;
}

bool in_place_alone(const ir::Node& n, int input) {
  for (const ops::IoPair& p : ops::traits_of(n).may_inplace)
    if (p.output == 0 && p.input == input) return p.alone;
  return false;
}

}  // namespace gec::memory
