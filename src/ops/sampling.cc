// Schemas of the ops that sample or scatter feature maps by computed
// positions: MaxUnpool-11, GridSample-16 and RoiAlign-16.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

// MaxUnpool-11: output_shape input when given, else per spatial dim
// (in - 1) * stride + kernel - pad_begin - pad_end.
void infer_max_unpool(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.size() < 3) ctx.error("X must have rank >= 3, got " + shape_str(x));
  if (ctx.has_input(2) && shape_numel(ctx.shape(2)) > 0) {
    const std::vector<int64_t> s = ctx.ints_value(2);
    if (s.size() != x.size()) ctx.error("output_shape has " + std::to_string(s.size()) + " entries for rank " + std::to_string(x.size()));
    ctx.set_output(0, ctx.dtype(0), Shape(s.begin(), s.end()));
    return;
  }
  const size_t sp = x.size() - 2;
  const std::vector<int64_t> k = ctx.node->get_ints("kernel_shape");
  std::vector<int64_t> st = ctx.node->get_ints("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = ctx.node->get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (k.size() != sp || st.size() != sp || pads.size() != 2 * sp) ctx.error("kernel_shape/strides/pads do not match the rank of X");
  Shape out{x[0], x[1]};
  for (size_t i = 0; i < sp; ++i) out.push_back((x[i + 2] - 1) * st[i] + k[i] - pads[i] - pads[i + sp]);
  ctx.set_output(0, ctx.dtype(0), out);
}

// GridSample-16: X [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo].
void infer_grid_sample(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Shape& g = ctx.shape(1);
  if (x.size() != 4 || g.size() != 4 || g[3] != 2 || g[0] != x[0])
    ctx.error("X " + shape_str(x) + " and grid " + shape_str(g) + " must be [N,C,H,W] and [N,Ho,Wo,2]");
  ctx.set_output(0, ctx.dtype(0), Shape{x[0], x[1], g[1], g[2]});
}

// RoiAlign-16: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, oh, ow].
void infer_roi_align(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Shape& r = ctx.shape(1);
  if (x.size() != 4 || r.size() != 2 || r[1] != 4) ctx.error("X must be [N,C,H,W] and rois [R,4]");
  if (ctx.shape(2).size() != 1 || ctx.shape(2)[0] != r[0]) ctx.error("batch_indices must be [R]");
  ctx.set_output(0, ctx.dtype(0),
                 Shape{r[0], x[1], ctx.node->get_int("output_height", 1), ctx.node->get_int("output_width", 1)});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "MaxUnpool", .infer = infer_max_unpool, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "GridSample", .infer = infer_grid_sample, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RoiAlign", .infer = infer_roi_align, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
