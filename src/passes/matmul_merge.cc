// matmul_merge: projections that share an input become one GEMM.
//
//   MatMul(x, W1), MatMul(x, W2), ... (or FusedMatMul(x, Wi, bi) without an
//   activation)  ->  Split(FusedMatMul(x, Concat(W1, W2, ...), Concat(b1, b2, ...)), axis -1)
//
// Why: a transformer's Q, K and V projections read the same activations;
// with few rows each product is too small to keep the cores busy, and one
// [M, K] x [K, N1+N2+N3] product is faster (ONNX Runtime's and TensorRT's
// QKV merge). With many rows it is not: the separate products run as fast
// and the Split costs a pass over the outputs. Measured here (2 threads,
// three 256x256 projections, `gec profile`): M = 32: 0.074 ms merged vs
// 0.123 separate; M = 128: 0.27 + 0.11 (Split) vs 0.24. So only inputs of
// at most kMaxRows static rows (M = the product of x's dims but the last).
// Guards: x has at most kMaxRows rows (below); the weights are float32 constants [K, Ni] of one K (concatenated
// at compile time), biases (when any projection has one) float32 constants
// [Ni] (zeros for a projection without), no activation, x float32 of rank
// >= 2, and at least two projections; each projection's output takes its
// slice of the Split. Runs after matmul_epilogue_fusion (which gives the
// projections their biases).
#include <map>

#include "ops/domain.h"
#include "passes/pass.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

constexpr int64_t kMaxRows = 64;

struct Projection {
  ir::Node* node;
  const Tensor* w;
  const Tensor* b;  // null: no bias
};

/// A MatMul / activation-free FusedMatMul reading `x` as A with a constant
/// float32 [K, N] B; nullopt otherwise.
std::optional<Projection> projection(const ir::Graph& g, ir::Node* n, const ir::Value* x) {
  if (n->owner() != &g || n->input(0) != x || n->outputs().size() != 1) return std::nullopt;
  const bool mm = is_op(n, "MatMul") && n->inputs().size() == 2;
  const bool fmm = n->domain == ops::kGecDomain && n->op_type == "FusedMatMul" && n->get_string("activation", "").empty();
  if (!mm && !fmm) return std::nullopt;
  const ir::Value* w = n->input(1);
  if (!w || !w->is_constant() || w->type.dtype != DType::kFloat32 || w->constant->shape().size() != 2) return std::nullopt;
  const Tensor* b = nullptr;
  if (fmm && n->has_input(2)) {
    const ir::Value* bv = n->input(2);
    if (!bv->is_constant() || bv->type.dtype != DType::kFloat32 || bv->constant->shape() != Shape{w->constant->shape()[1]})
      return std::nullopt;
    b = bv->constant.get();
  }
  if (!n->output(0)->type.has_shape) return std::nullopt;
  return Projection{n, w->constant.get(), b};
}

int64_t merge_graph(ir::Graph& g) {
  int64_t merged = 0;
  std::vector<ir::Value*> candidates;
  for (const auto& v : g.values()) candidates.push_back(v.get());
  for (ir::Value* v : g.inputs()) candidates.push_back(v);
  for (ir::Value* x : candidates) {
    if (x->type.dtype != DType::kFloat32 || !x->type.is_static() || x->type.dims.size() < 2 || x->uses().size() < 2)
      continue;
    const Shape xs = x->type.static_shape();
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < xs.size(); ++i) rows *= xs[i];
    if (rows > kMaxRows) continue;
    // Projections of x, grouped by K.
    std::map<int64_t, std::vector<Projection>> by_k;
    for (const auto& [user, idx] : x->uses()) {
      if (idx != 0) continue;
      if (auto p = projection(g, user, x)) by_k[p->w->shape()[0]].push_back(*p);
    }
    for (auto& [k, ps] : by_k) {
      if (ps.size() < 2) continue;
      int64_t n_total = 0;
      bool any_bias = false;
      for (const Projection& p : ps) {
        n_total += p.w->shape()[1];
        any_bias = any_bias || p.b;
      }
      Tensor w(DType::kFloat32, {k, n_total});
      Tensor b(DType::kFloat32, {n_total});  // zero-filled
      int64_t col = 0;
      std::vector<int64_t> splits;
      for (const Projection& p : ps) {
        const int64_t n = p.w->shape()[1];
        for (int64_t r = 0; r < k; ++r)
          for (int64_t c = 0; c < n; ++c) w.as<float>()[r * n_total + col + c] = p.w->as<float>()[r * n + c];
        if (p.b)
          for (int64_t c = 0; c < n; ++c) b.as<float>()[col + c] = p.b->as<float>()[c];
        col += n;
        splits.push_back(n);
      }
      ir::Node* first = ps[0].node;
      std::vector<ir::Value*> ins{x, g.add_constant(g.unique_name(first->name + "/merged_weights"), std::move(w))};
      if (any_bias) ins.push_back(g.add_constant(g.unique_name(first->name + "/merged_bias"), std::move(b)));
      ir::Node* f = g.add_node("FusedMatMul", ins, {g.unique_name(first->name + "/merged")}, first->name + "/merged",
                               ops::kGecDomain);
      // The merged product's type: the first projection's with the last dim N_total.
      f->output(0)->type = first->output(0)->type;
      f->output(0)->type.dims.back() = ir::Dim{n_total, ""};
      std::vector<std::string> names;
      for (const Projection& p : ps) names.push_back(p.node->output(0)->name() + "/part");
      for (std::string& nm : names) nm = g.unique_name(nm);
      Tensor sizes(DType::kInt64, {static_cast<int64_t>(splits.size())});
      for (size_t i = 0; i < splits.size(); ++i) sizes.as<int64_t>()[i] = splits[i];
      ir::Node* split = g.add_node("Split", {f->output(0), g.add_constant(g.unique_name("merged_split"), std::move(sizes))},
                                   names, first->name + "/split");
      split->set_attr(ir::Attribute::Int("axis", -1));
      for (const Projection& p : ps) {
        if (p.node->fused_from.empty()) f->fused_from.push_back(p.node->name);
        for (const std::string& s : p.node->fused_from) f->fused_from.push_back(s);
      }
      for (size_t i = 0; i < ps.size(); ++i) {
        ir::Value* from = ps[i].node->output(0);
        ir::Value* to = split->output(i);
        to->type = from->type;
        GEC_CHECK(replace_value_keeping_name(g, from, to), "matmul_merge: cannot replace " + from->name());
        g.remove_node(ps[i].node);
      }
      ++merged;
    }
  }
  if (merged) {
    g.remove_dead_values();  // the separate weights
    g.topo_sort();
  }
  return merged;
}

class MatMulMerge final : public Pass {
 public:
  const char* name() const override { return "matmul_merge"; }
  int64_t run(ir::Graph& g) override {
    int64_t n = 0;
    std::vector<ir::Graph*> graphs;
    ir::for_each_graph(g, [&](ir::Graph& sg) { graphs.push_back(&sg); });
    for (ir::Graph* sg : graphs) n += merge_graph(*sg);
    return n;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_merge() { return std::make_unique<MatMulMerge>(); }

}  // namespace gec::passes
