// Schemas of the ops that sample or scatter feature maps by computed
// positions: MaxUnpool-11, GridSample-16, RoiAlign-16, AffineGrid-20 and
// Col2Im-18.
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

// AffineGrid-20: theta [N, 2, 3] with size [N, C, H, W] -> grid [N, H, W, 2];
// theta [N, 3, 4] with size [N, C, D, H, W] -> grid [N, D, H, W, 3].
void infer_affine_grid(InferContext& ctx) {
  const Shape& theta = ctx.shape(0);
  const std::vector<int64_t> size = ctx.ints_value(1);
  if (size.size() != 4 && size.size() != 5)
    ctx.error("size must have 4 ([N,C,H,W]) or 5 ([N,C,D,H,W]) entries, got " + std::to_string(size.size()));
  const int64_t sp = static_cast<int64_t>(size.size()) - 2;
  if (theta.size() != 3 || theta[1] != sp || theta[2] != sp + 1)
    ctx.error("theta must be [N," + std::to_string(sp) + "," + std::to_string(sp + 1) + "] for size " +
              shape_str(size) + ", got " + shape_str(theta));
  if (theta[0] != size[0]) ctx.error("theta's N " + std::to_string(theta[0]) + " differs from size's " +
                                     std::to_string(size[0]));
  Shape out{size[0]};
  for (int64_t i = 2; i < static_cast<int64_t>(size.size()); ++i) {
    if (size[i] <= 0) ctx.error("size " + shape_str(size) + " has a spatial dim <= 0");
    out.push_back(size[i]);
  }
  out.push_back(sp);
  if (!dtype_is_float(ctx.dtype(0))) ctx.error("theta must be a float tensor");
  ctx.set_output(0, ctx.dtype(0), out);
}

/// Col2Im-18 geometry: per spatial dim the number of block positions,
/// (image + pad_begin + pad_end - dilation * (block - 1) - 1) / stride + 1.
/// Errors name the attribute at fault.
void infer_col2im(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const std::vector<int64_t> image = ctx.ints_value(1), block = ctx.ints_value(2);
  const size_t sp = image.size();
  if (sp == 0 || block.size() != sp)
    ctx.error("image_shape and block_shape must have the same number (>= 1) of entries");
  if (x.size() != 3) ctx.error("input must be [N, C * prod(block_shape), L], got " + shape_str(x));
  const std::vector<int64_t> dil = ctx.node->get_ints("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> st = ctx.node->get_ints("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = ctx.node->get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (dil.size() != sp || st.size() != sp || pads.size() != 2 * sp)
    ctx.error("dilations/strides/pads do not match the " + std::to_string(sp) + " spatial dims");
  int64_t block_size = 1, positions = 1;
  constexpr int64_t kMaxDim = int64_t{1} << 31;
  for (size_t i = 0; i < sp; ++i) {
    if (image[i] <= 0 || image[i] > kMaxDim || block[i] <= 0 || block[i] > kMaxDim || dil[i] <= 0 || st[i] <= 0 ||
        pads[i] < 0 || pads[i + sp] < 0 || dil[i] > kMaxDim || pads[i] > kMaxDim || pads[i + sp] > kMaxDim)
      ctx.error("image_shape, block_shape, dilations and strides must be positive and pads >= 0 (at most 2^31)");
    const int64_t span = image[i] + pads[i] + pads[i + sp] - dil[i] * (block[i] - 1) - 1;
    if (span < 0) ctx.error("block " + std::to_string(block[i]) + " (dilation " + std::to_string(dil[i]) +
                            ") does not fit the padded image dim " + std::to_string(i));
    positions *= span / st[i] + 1;
    block_size *= block[i];
    if (positions > kMaxDim || block_size > kMaxDim) ctx.error("too many block positions or block elements");
  }
  if (x[1] % block_size != 0)
    ctx.error("input dim 1 (" + std::to_string(x[1]) + ") is not a multiple of prod(block_shape) = " +
              std::to_string(block_size));
  if (x[2] != positions)
    ctx.error("input dim 2 (" + std::to_string(x[2]) + ") must be the number of block positions, " +
              std::to_string(positions));
  Shape out{x[0], x[1] / block_size};
  out.insert(out.end(), image.begin(), image.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "MaxUnpool", .infer = infer_max_unpool, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "GridSample", .infer = infer_grid_sample, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RoiAlign", .infer = infer_roi_align, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "AffineGrid", .infer = infer_affine_grid, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Col2Im", .infer = infer_col2im, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
