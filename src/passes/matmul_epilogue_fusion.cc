// MatMul epilogues as oneDNN post-ops:
//
//   act(Add(MatMul(A[..., M, K], B[K, N]), bias[N]))  -> FusedMatMul(A, B, bias) {activation = act}
//   act(Gemm(A[M, K], B[K, N], bias[N]))               (alpha = beta = 1, no transposes)
//
// with the Add and the activation each optional (at least one present) and
// act one of Relu, Tanh, Sigmoid, com.graphengine::Gelu (either form),
// com.graphengine::Swish with alpha 1 (transformer_fusion's SiLU). The
// bias is added and the activation applied inside the matrix product (the
// primitive's bias argument and an eltwise post-op): no pass of its own over
// the output. Runs after transformer_fusion, so the spelled-out GELU is one
// Gelu by then. Guards: float32; B 2-D; the bias 1-D of the static N (the Add
// never broadcasts the product to a new shape); every intermediate read only
// by the next node (the driver's guard).
#include "ops/domain.h"
#include "ops/fused_matmul.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

struct Epilogue {
  std::string activation;
};

bool f32(const ir::Value* v) { return v && v->type.dtype == DType::kFloat32 && v->type.has_shape; }

/// The FusedMatMul activation name for `n`, or "" when it is none of them.
std::string activation_of(const ir::Node* n) {
  if (!n) return "";
  const auto a = ops::matmul_activation_of(*n);
  return a ? ops::matmul_activation_name(*a) : "";
}

std::optional<Match> match(const ir::Graph& g, ir::Node* mm) {
  ir::Value* a = mm->input(0);
  ir::Value* b = mm->input(1);
  if (!f32(a) || !f32(b) || !f32(mm->output(0)) || b->type.dims.size() != 2 || a->type.dims.size() < 2) return std::nullopt;
  const ir::Dim& n = b->type.dims[1];
  if (!n.is_static()) return std::nullopt;
  auto is_bias = [&](const ir::Value* v) {
    return f32(v) && v->type.dims.size() == 1 && v->type.dims[0].value == n.value;
  };
  ir::Value* bias = nullptr;
  std::vector<ir::Node*> nodes{mm};
  ir::Node* last = mm;
  if (is_op(mm, "Gemm")) {
    if (mm->get_float("alpha", 1.f) != 1.f || mm->get_float("beta", 1.f) != 1.f || mm->get_int("transA", 0) ||
        mm->get_int("transB", 0) || a->type.dims.size() != 2)
      return std::nullopt;
    if (mm->has_input(2)) {
      if (!is_bias(mm->input(2))) return std::nullopt;
      bias = mm->input(2);
    }
  } else {
    auto [add, idx] = single_consumer(g, mm->output(0));
    if (is_op(add, "Add") && add->inputs().size() == 2 && is_bias(add->input(1 - idx))) {
      bias = add->input(1 - idx);
      nodes.push_back(add);
      last = add;
    }
  }
  Epilogue e;
  auto [act, ai] = single_consumer(g, last->output(0));
  e.activation = activation_of(act);
  if (!e.activation.empty()) {
    nodes.push_back(act);
    last = act;
  }
  if (last == mm) return std::nullopt;  // nothing to fuse
  return Match{last, std::move(nodes), {a, b, bias}, e};
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  const auto& e = std::any_cast<const Epilogue&>(m.data);
  std::vector<ir::Value*> ins{m.values[0], m.values[1]};
  if (m.values[2]) ins.push_back(m.values[2]);
  ir::Node* f = g.add_node("FusedMatMul", ins, {g.unique_name(m.last->output(0)->name())}, m.nodes[0]->name,
                           ops::kGecDomain);
  if (!e.activation.empty()) f->set_attr(ir::Attribute::String("activation", e.activation));
  f->output(0)->type = m.last->output(0)->type;
  return f->output(0);
}

}  // namespace

std::vector<RewriteRule> matmul_epilogue_fusion_rules() {
  return {{"matmul_epilogue", {"MatMul", "Gemm"},
           "act(MatMul(A, B[K,N]) + bias[N]) | act(Gemm(A, B, bias)) -> FusedMatMul(A, B, bias) {activation}", match,
           rewrite}};
}

std::unique_ptr<Pass> make_matmul_epilogue_fusion() {
  return make_rule_pass("matmul_epilogue_fusion", matmul_epilogue_fusion_rules());
}

}  // namespace gec::passes
