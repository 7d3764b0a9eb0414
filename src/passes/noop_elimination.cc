// No-op elimination: removes nodes whose output equals an input, and merges
// chains that compose into one node. Each rule, in the order tried:
//
//   Identity(x)                                   -> x
//   Dropout(x) in inference (no training_mode, or a constant false one;
//                            mask output unused)  -> x
//   Cast(x, to = dtype of x)                       -> x
//   Reshape/Flatten/Squeeze/Unsqueeze/Expand(x)
//                  when x and the output have the same static shape -> x
//   Transpose(x, perm = 0..n-1)                   -> x
//   Pad(x, pads all zero)                         -> x
//   Slice(x) taking everything (same static shape, all steps 1) -> x
//   Transpose(Transpose(x, p1), p2)               -> Transpose(x, p1[p2[i]])
//   Transpose(x, perm) moving only dims of size 1 (x of static shape; the
//                  other dims keep their order)  -> Reshape(x, output shape)
//                  (no data moves: PyTorch's batch-first attention at batch
//                  1 transposes [1, S, E] <-> [S, 1, E] around every layer)
//   Reshape(R(x), s) where R is Reshape/Flatten/Squeeze/Unsqueeze
//                                                 -> Reshape(x, s)
//
// Why the Reshape merge has guards: with allowzero = 0 a 0 in `s` copies the
// dim of the *intermediate* tensor, which the merged node no longer sees
// (shared case B03: [0,3] -> [0,?] -> [0,0,3]). So the merge happens only when
// `s` is a constant with no 0 (or allowzero = 1, where 0 is literal), or when
// the output shape is static, in which case `s` becomes that explicit shape
// with allowzero = 1.
//
// A removed node whose output is a graph output hands its name to the input
// (rewrite_util.h replace_value); when it cannot (the input is a graph input
// or a constant), the node stays.

#include "passes/pass.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

bool same_static_shape(const ir::Value* a, const ir::Value* b) {
  auto sa = static_shape(a), sb = static_shape(b);
  return sa && sb && *sa == *sb && a->type.dtype == b->type.dtype;
}

bool is_inference_dropout(const ir::Node* n) {
  if (!is_op(n, "Dropout")) return false;
  if (n->output(1) && (!n->output(1)->uses().empty() || n->owner()->is_graph_output(n->output(1))))
    return false;
  if (!n->has_input(2)) return true;
  auto t = n->input(2);
  return t->is_constant() && t->constant->dtype() == DType::kBool && t->constant->numel() == 1 &&
         *t->constant->as<uint8_t>() == 0;
}

bool identity_perm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool all_zero(const ir::Value* v) {
  auto p = const_ints(v);
  if (!p) return false;
  for (int64_t x : *p)
    if (x != 0) return false;
  return true;
}

bool slice_takes_all(const ir::Node* n) {
  if (!same_static_shape(n->input(0), n->output(0))) return false;
  if (!n->has_input(4)) return true;
  auto steps = const_ints(n->input(4));
  if (!steps) return false;
  for (int64_t s : *steps)
    if (s != 1) return false;
  return true;
}

/// True when the node's output 0 equals its input 0.
bool is_noop(const ir::Node* n) {
  if (!n->domain.empty() || !n->input(0)) return false;
  const std::string& op = n->op_type;
  if (op == "Identity") return true;
  if (op == "Dropout") return is_inference_dropout(n);
  if (op == "Cast")
    return n->input(0)->type.dtype != DType::kUndefined &&
           n->get_int("to", 0) == static_cast<int64_t>(n->input(0)->type.dtype);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Expand")
    return same_static_shape(n->input(0), n->output(0));
  if (op == "Transpose") {
    auto p = transpose_perm(n);
    return p && identity_perm(*p);
  }
  if (op == "Pad") return all_zero(n->input(1));
  if (op == "Slice") return slice_takes_all(n);
  return false;
}

bool remove_noop(ir::Graph& g, ir::Node* n) {
  if (!is_noop(n)) return false;
  if (!replace_value(g, n->output(0), n->input(0))) return false;
  remove_if_dead(g, n);
  return true;
}

// Transpose(Transpose(x, p1), p2): out[i] = t[p2[i]] = x[p1[p2[i]]].
bool merge_transposes(ir::Graph& g, ir::Node* n) {
  if (!is_op(n, "Transpose")) return false;
  ir::Node* first = n->input(0)->producer();
  if (!is_op(first, "Transpose") || first->owner() != &g) return false;
  auto p1 = transpose_perm(first), p2 = transpose_perm(n);
  if (!p1 || !p2 || p1->size() != p2->size()) return false;
  n->set_input(0, first->input(0));
  n->set_attr(ir::Attribute::Ints("perm", compose_perms(*p1, *p2)));
  remove_if_dead(g, first);
  return true;
}

// Transpose(x, perm) whose non-1 dims keep their order: the same bytes in
// the same order, so a Reshape to the output shape (allowzero = 1), which
// the memory plan aliases instead of copying.
bool transpose_to_reshape(ir::Graph& g, ir::Node* n) {
  if (!is_op(n, "Transpose")) return false;
  auto xs = static_shape(n->input(0));
  auto p = transpose_perm(n);
  if (!xs || !p || identity_perm(*p)) return false;
  int64_t last = -1;
  for (int64_t axis : *p) {
    if ((*xs)[static_cast<size_t>(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  Tensor shape(DType::kInt64, {static_cast<int64_t>(p->size())});
  for (size_t i = 0; i < p->size(); ++i) shape.as<int64_t>()[i] = (*xs)[static_cast<size_t>((*p)[i])];
  n->op_type = "Reshape";
  n->remove_attr("perm");
  n->add_input(g.add_constant(g.unique_name(n->output(0)->name() + "_shape"), std::move(shape)));
  n->set_attr(ir::Attribute::Int("allowzero", 1));
  return true;
}

bool is_reshape_like(const ir::Node* n) {
  return n && n->domain.empty() &&
         (n->op_type == "Reshape" || n->op_type == "Flatten" || n->op_type == "Squeeze" ||
          n->op_type == "Unsqueeze");
}

bool merge_reshapes(ir::Graph& g, ir::Node* n) {
  if (!is_op(n, "Reshape")) return false;
  ir::Node* first = n->input(0)->producer();
  if (!is_reshape_like(first) || first->owner() != &g) return false;
  if (auto out = static_shape(n->output(0))) {
    Tensor s(DType::kInt64, {static_cast<int64_t>(out->size())});
    std::copy(out->begin(), out->end(), s.as<int64_t>());
    n->set_input(1, g.add_constant(g.unique_name(n->output(0)->name() + "_shape"), std::move(s)));
    n->set_attr(ir::Attribute::Int("allowzero", 1));
  } else {
    auto s = const_ints(n->input(1));
    if (!s) return false;
    const bool copies_dims = n->get_int("allowzero", 0) == 0 &&
                             std::find(s->begin(), s->end(), 0) != s->end();
    if (copies_dims) return false;  // a 0 reads the intermediate's dims (B03)
  }
  n->set_input(0, first->input(0));
  remove_if_dead(g, first);
  return true;
}

class NoopElimination final : public Pass {
 public:
  const char* name() const override { return "noop_elimination"; }
  int64_t run(ir::Graph& g) override {
    int64_t total = 0;
    for (;;) {
      // The same-shape rules trust only shapes we proved; a removal (say of
      // a Dropout, which has no schema) can make more shapes provable.
      infer_static_shapes(g);
      const int64_t n = rewrite_to_fixed_point(g, [](ir::Graph& sg, ir::Node* node) {
        return remove_noop(sg, node) || merge_transposes(sg, node) || transpose_to_reshape(sg, node) ||
               merge_reshapes(sg, node);
      });
      if (n == 0) return total;
      total += n;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_noop_elimination() { return std::make_unique<NoopElimination>(); }

}  // namespace gec::passes
