// MatMul + bias Add -> Gemm:
//
//   Add(MatMul(A[M,K], B[K,N]), bias[N])  -> Gemm(A, B, bias)   (either Add operand order)
//
// Why: Gemm adds the bias inside the matrix product (oneDNN post-op), one
// pass over the output instead of two. Only for a 2-D A (Gemm is 2-D; a
// batched MatMul stays) and a 1-D bias whose length is the static N, so the
// Add never broadcasts the output to a new shape. Guards: the MatMul output
// is read only by the Add and is not a graph output; float32.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

bool rank2(const ir::Value* v) { return v && v->type.has_shape && v->type.dims.size() == 2; }

std::optional<Match> match(const ir::Graph& g, ir::Node* add) {
  if (!add->input(0) || !add->input(1)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ir::Node* mm = add->input(side)->producer();
    ir::Value* bias = add->input(1 - side);
    if (!is_op(mm, "MatMul") || mm->owner() != &g || !single_consumer(g, mm->output(0)).first) continue;
    if (!rank2(mm->input(0)) || !rank2(mm->input(1)) || !rank2(mm->output(0))) continue;
    if (mm->output(0)->type.dtype != DType::kFloat32 || bias->type.dtype != DType::kFloat32) continue;
    const ir::Dim& n = mm->output(0)->type.dims[1];
    if (!n.is_static() || !bias->type.has_shape || bias->type.dims.size() != 1 ||
        bias->type.dims[0].value != n.value)
      continue;
    return Match{add, {mm, add}, {mm->input(0), mm->input(1), bias}, {}};
  }
  return std::nullopt;
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* mm = m.nodes[0];
  ir::Node* gemm = g.add_node("Gemm", m.values, {g.unique_name(m.last->output(0)->name())}, mm->name);
  gemm->output(0)->type = m.last->output(0)->type;
  return gemm->output(0);
}

}  // namespace

std::vector<RewriteRule> matmul_add_to_gemm_rules() {
  return {{"matmul_add", {"Add"}, "Add(MatMul(A[M,K], B[K,N]), bias[N]) -> Gemm(A, B, bias)", match, rewrite}};
}

std::unique_ptr<Pass> make_matmul_add_to_gemm() {
  return make_rule_pass("matmul_add_to_gemm", matmul_add_to_gemm_rules());
}

}  // namespace gec::passes
