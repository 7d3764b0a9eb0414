// An inference BatchNormalization that no weight folding took, as the
// per-channel affine map it computes:
//
//   BatchNormalization(x, scale, B, mean, var)  -> Add(Mul(x, a), b)
//
// with a = scale / sqrt(var + epsilon), b = B - mean * a (weight_folding.h's
// bn_as_affine; ONNX BatchNormalization-15, inference), both constants of
// shape [C, 1, ...] that broadcast along axis 1 of x [N, C, ...].
// Why: a BatchNormalization before its convolution (DenseNet's and
// pre-activation ResNets' BN -> Relu -> Conv, a BN after a Concat) cannot
// fold into weights. Its kernel reads and writes plain NCHW only, so every
// such BN cut the blocked chain with two Reorders (DenseNet-121: 62 BNs, 123
// Reorders); as Mul and Add with per-channel operands it runs in any layout
// and automatic fusion joins it with the Relu after it in one pass.
// Runs after every folding of the -O2/-O3 lists (conv_bn, gemm_bn and the
// conv scale foldings take the BNs they can first).
// Guards: one output (inference form); x float32 with a known rank >= 2 and
// channel count; scale, B, mean, var float32 constants of C elements.
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"
#include "passes/weight_folding.h"

namespace gec::passes {
namespace {

using Affine = std::pair<std::vector<float>, std::vector<float>>;

std::optional<Match> match(const ir::Graph&, ir::Node* bn) {
  if (bn->outputs().size() != 1 || !bn->input(0)) return std::nullopt;
  const ir::TensorType& t = bn->input(0)->type;
  if (t.dtype != DType::kFloat32 || !t.has_shape || t.dims.size() < 2 || !t.dims[1].is_static()) return std::nullopt;
  if (!(bn->output(0)->type == t)) return std::nullopt;
  auto affine = bn_as_affine(bn, t.dims[1].value);
  if (!affine) return std::nullopt;
  return Match{bn, {bn}, {bn->input(0)}, std::move(*affine)};
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  const ir::Node* bn = m.last;
  const auto& ab = std::any_cast<const Affine&>(m.data);
  ir::Value* x = m.values[0];
  Shape s(x->type.dims.size() - 1, 1);  // [C, 1, ...]: along axis 1 of x
  s[0] = static_cast<int64_t>(ab.first.size());
  const std::string base = bn->output(0)->name();
  ir::Node* mul = g.add_node("Mul", {x, add_f32_constant(g, base + "_scale", s, ab.first)},
                             {g.unique_name(base + "_scaled")}, g.unique_name(bn->name + "_scale"));
  mul->output(0)->type = x->type;
  ir::Node* add = g.add_node("Add", {mul->output(0), add_f32_constant(g, base + "_shift", s, ab.second)},
                             {g.unique_name(base)}, g.unique_name(bn->name));
  add->output(0)->type = x->type;
  return add->output(0);
}

}  // namespace

std::vector<RewriteRule> batchnorm_to_mul_add_rules() {
  return {{"batchnorm_mul_add", {"BatchNormalization"},
           "BatchNormalization(x, s, B, mean, var) -> Add(Mul(x, a[c]), b[c])", match, rewrite}};
}

std::unique_ptr<Pass> make_batchnorm_to_mul_add() {
  return make_rule_pass("batchnorm_to_mul_add", batchnorm_to_mul_add_rules());
}

}  // namespace gec::passes
