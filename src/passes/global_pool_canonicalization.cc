// A mean over every spatial dim, written as ReduceMean, becomes the op that
// says so:
//
//   ReduceMean(x, axes = {2, ..., r-1}, keepdims = 1) -> GlobalAveragePool(x)
//   ReduceMean(x, axes = {2, ..., r-1}, keepdims = 0) -> Flatten(GlobalAveragePool(x), axis = 1)
//
// Why: PyTorch models that pool with `x.mean([2, 3])` (torchvision's
// MNASNet, many timm models) export a ReduceMean, which reads
// plain data only, so the last convolution's blocked output went through a
// Reorder first (MNASNet 1.0: 0.06-0.08 ms of a 4 ms run for [1,1280,7,7]).
// GlobalAveragePool reads nChw16c and nhwc in place (layout_assignment.cc),
// and its [N, C, 1, ...] output has the same bytes in every layout.
// Semantics: ONNX ReduceMean-18 (the importer turns ReduceMean-13's axes
// attribute into that constant input; negative axes count from the end) and
// GlobalAveragePool-1: both the mean of X[n, c, ...] over every cell of the
// trailing dims.
// Guards: x is float32 with a static shape of rank >= 4 (images and
// volumes: a rank-3 [B, T, C] mean over its last axis is as often a
// transformer's RMSNorm or LayerNorm piece as a 1-D conv net's pooling) and
// no empty spatial dim (ReduceMean gives NaN there, GlobalAveragePool an
// error); the axes are a constant, exactly 2 .. r-1 each once; the driver
// keeps the rest safe.
#include <algorithm>

#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

std::optional<Match> match_spatial_mean(const ir::Graph&, ir::Node* mean) {
  ir::Value* x = mean->input(0);
  const std::optional<Shape> xs = static_shape(x);
  if (!xs || xs->size() < 4 || x->type.dtype != DType::kFloat32 || !mean->output(0)->type.is_static())
    return std::nullopt;
  // An empty map: ReduceMean's mean is NaN there, GlobalAveragePool refuses it.
  for (size_t d = 2; d < xs->size(); ++d)
    if ((*xs)[d] == 0) return std::nullopt;
  // The IR's ReduceMean takes its axes as input 1 (ReduceMean-18; the
  // importer moves older opsets' attribute there); none means every dim.
  if (mean->inputs().size() < 2 || !mean->input(1)) return std::nullopt;
  const std::optional<std::vector<int64_t>> given = const_ints(mean->input(1));
  if (!given) return std::nullopt;
  std::vector<int64_t> axes = *given;
  const int64_t rank = static_cast<int64_t>(xs->size());
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (static_cast<int64_t>(axes.size()) != rank - 2) return std::nullopt;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (axes[static_cast<size_t>(i)] != i + 2) return std::nullopt;
  return Match{mean, {mean}, {x}, mean->get_int("keepdims", 1) != 0};
}

ir::Value* rewrite_spatial_mean(ir::Graph& g, const Match& m) {
  ir::Value* x = m.values[0];
  const bool keepdims = std::any_cast<bool>(m.data);
  Shape pooled = x->type.static_shape();
  std::fill(pooled.begin() + 2, pooled.end(), 1);
  ir::Node* gap = g.add_node("GlobalAveragePool", {x}, {g.unique_name(m.last->output(0)->name() + "_pooled")},
                             m.last->name);
  gap->output(0)->type = ir::TensorType::of(DType::kFloat32, pooled);
  if (keepdims) return gap->output(0);
  ir::Node* flat = g.add_node("Flatten", {gap->output(0)}, {g.unique_name(m.last->output(0)->name())},
                              m.last->name + "_flatten");
  flat->set_attr(ir::Attribute::Int("axis", 1));
  flat->output(0)->type = m.last->output(0)->type;
  return flat->output(0);
}

}  // namespace

std::vector<RewriteRule> global_pool_canonicalization_rules() {
  return {{"spatial_mean", {"ReduceMean"},
           "ReduceMean(x, axes = 2..r-1, keepdims) -> GlobalAveragePool(x) [-> Flatten(axis 1) without keepdims]",
           match_spatial_mean, rewrite_spatial_mean}};
}

std::unique_ptr<Pass> make_global_pool_canonicalization() {
  return make_rule_pass("global_pool_canonicalization", global_pool_canonicalization_rules());
}

}  // namespace gec::passes
