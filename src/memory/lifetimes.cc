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

Lifetimes compute_lifetimes(const ir::Graph& g) {
  Lifetimes lt;
  lt.order = g.node_list();
  int64_t step = 0;
  for (ir::Node* n : lt.order) {
    for (const ir::Value* in : n->inputs())
      if (in) lt.last[in] = std::max(lt.last[in], step);
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) note_reads(*a.g, step, lt.last);
    for (const ir::Value* o : n->outputs()) {
      lt.first[o] = step;
      lt.last[o] = std::max(lt.last[o], step);
    }
    ++step;
  }
  lt.end = step;
  for (const ir::Value* o : g.outputs()) lt.last[o] = step;
  return lt;
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

}  // namespace gec::memory
