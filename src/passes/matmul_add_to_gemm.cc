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
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

bool rank2(const ir::Value* v) { return v && v->type.has_shape && v->type.dims.size() == 2; }

bool fuse(ir::Graph& g, ir::Node* add) {
  if (!is_op(add, "Add") || !add->input(0) || !add->input(1)) return false;
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
    ir::Node* gemm = g.add_node("Gemm", {mm->input(0), mm->input(1), bias},
                                {g.unique_name(add->output(0)->name())}, mm->name);
    gemm->output(0)->type = add->output(0)->type;
    gemm->fused_from = mm->fused_from;
    if (!replace_value(g, add->output(0), gemm->output(0))) {
      g.remove_node(gemm);
      return false;
    }
    note_fused(gemm, add);
    g.remove_node(add);
    remove_if_dead(g, mm);
    return true;
  }
  return false;
}

class MatMulAddToGemm final : public Pass {
 public:
  const char* name() const override { return "matmul_add_to_gemm"; }
  int64_t run(ir::Graph& g) override { return rewrite_to_fixed_point(g, fuse); }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_to_gemm() { return std::make_unique<MatMulAddToGemm>(); }

}  // namespace gec::passes
