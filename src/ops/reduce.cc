// Schemas of the reduction ops: ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/
// LogSum/LogSumExp in the opset-18 form (axes = optional int64 input 1, attrs
// keepdims = 1, noop_with_empty_axes = 0; the frontend rewrites older axes
// attributes into it) and ArgMax/ArgMin-13 (attrs axis, keepdims,
// select_last_index; int64 output).
#include <algorithm>
#include <string>
#include <vector>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

/// The reduced axes, normalized and sorted; empty means "no reduction"
/// (noop_with_empty_axes with empty axes). Throws NeedsValue when the axes
/// input is not known yet.
std::vector<int64_t> reduce_axes(const InferContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) axes = ctx.ints_value(1);
  if (axes.empty()) {
    if (ctx.node->get_int("noop_with_empty_axes", 0) != 0) return {};
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t& a : axes) a = normalize_axis(ctx, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) ctx.error("axes contain a duplicate");
  return axes;
}

void infer_reduce(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  const bool keep = ctx.node->get_int("keepdims", 1) != 0;
  const std::vector<int64_t> axes = reduce_axes(ctx, rank);
  if (axes.empty() && ctx.node->get_int("noop_with_empty_axes", 0) != 0) {
    ctx.set_output(0, ctx.dtype(0), in);
    return;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!reduced) out.push_back(in[i]);
    else if (keep) out.push_back(1);
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_arg(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) ctx.error("input must have rank >= 1");
  const int64_t axis = normalize_axis(ctx, ctx.node->get_int("axis", 0), rank);
  Shape out = in;
  if (ctx.node->get_int("keepdims", 1) != 0) out[axis] = 1;
  else out.erase(out.begin() + axis);
  ctx.set_output(0, DType::kInt64, out);
}

const bool kRegistered = [] {
  for (const char* n : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd",
                        "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    register_schema({.domain = "", .op_type = n, .infer = infer_reduce, .traits = traits(PatternKind::kReduction)});
  for (const char* n : {"ArgMax", "ArgMin"})
    register_schema({.domain = "", .op_type = n, .infer = infer_arg, .traits = traits(PatternKind::kReduction)});
  return true;
}();

}  // namespace
}  // namespace gec::ops
