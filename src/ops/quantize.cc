// Schemas of the quantization ops (ai.onnx): QuantizeLinear-13,
// DequantizeLinear-13, DynamicQuantizeLinear-11, MatMulInteger-10,
// QLinearMatMul-10, ConvInteger-10, QLinearConv-10. Opset-10 forms are the
// same ops with per-tensor scales only, so one schema serves both.
#include "ops/nn_shape.h"
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

/// Scale / zero point i: a scalar, or 1-D of x's dim `axis` (per-axis form).
void check_quant_param(const InferContext& ctx, size_t i, const Shape& x) {
  if (!ctx.has_input(i)) return;
  const Shape& s = ctx.shape(i);
  if (shape_numel(s) == 1 && s.size() <= 1) return;
  const int64_t axis = normalize_axis(ctx, ctx.node->get_int("axis", 1), static_cast<int64_t>(x.size()));
  if (s.size() != 1 || s[0] != x[axis])
    ctx.error("input " + std::to_string(i) + " " + shape_str(s) + " is neither a scalar nor 1-D of size " +
              std::to_string(x[axis]) + " (axis " + std::to_string(axis) + ")");
}

void infer_quantize(InferContext& ctx) {
  check_quant_param(ctx, 1, ctx.shape(0));
  check_quant_param(ctx, 2, ctx.shape(0));
  const DType out = ctx.has_input(2) ? ctx.dtype(2) : DType::kUInt8;
  if (!is_8bit(out)) ctx.error(std::string("zero point dtype ") + dtype_name(out) + " is not uint8/int8");
  ctx.set_output(0, out, ctx.shape(0));
}

void infer_dequantize(InferContext& ctx) {
  check_quant_param(ctx, 1, ctx.shape(0));
  check_quant_param(ctx, 2, ctx.shape(0));
  ctx.set_output(0, ctx.dtype(1), ctx.shape(0));
}

void infer_dynamic_quantize(InferContext& ctx) {
  if (ctx.dtype(0) != DType::kFloat32) ctx.error("x must be float32");
  ctx.set_output(0, DType::kUInt8, ctx.shape(0));
  if (ctx.node->outputs().size() > 1) ctx.set_output(1, DType::kFloat32, Shape{});
  if (ctx.node->outputs().size() > 2) ctx.set_output(2, DType::kUInt8, Shape{});
}

/// numpy.matmul output shape of inputs ia and ib.
Shape matmul_shape(const InferContext& ctx, size_t ia, size_t ib) {
  Shape a = ctx.shape(ia), b = ctx.shape(ib);
  if (a.empty() || b.empty()) ctx.error("matmul operands must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    ctx.error("inner dims of " + shape_str(ctx.shape(ia)) + " and " + shape_str(ctx.shape(ib)) + " differ");
  Shape out = broadcast_shapes(ctx, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return out;
}

void infer_matmul_integer(InferContext& ctx) {
  if (!is_8bit(ctx.dtype(0)) || !is_8bit(ctx.dtype(1))) ctx.error("A and B must be uint8/int8");
  ctx.set_output(0, DType::kInt32, matmul_shape(ctx, 0, 1));
}

void infer_qlinear_matmul(InferContext& ctx) {
  if (!is_8bit(ctx.dtype(0)) || !is_8bit(ctx.dtype(3)) || !is_8bit(ctx.dtype(7)))
    ctx.error("a, b and y_zero_point must be uint8/int8");
  ctx.set_output(0, ctx.dtype(7), matmul_shape(ctx, 0, 3));
}

/// Conv-11 output shape of X (input ix) with W (input iw).
Shape conv_shape(const InferContext& ctx, size_t ix, size_t iw) {
  const Shape& x = ctx.shape(ix);
  const Shape& w = ctx.shape(iw);
  if (x.size() < 3 || w.size() != x.size()) ctx.error("X " + shape_str(x) + " and W " + shape_str(w) + " must have the same rank >= 3");
  const int64_t group = ctx.node->get_int("group", 1);
  if (group < 1 || x[1] != w[1] * group || w[0] % group != 0)
    ctx.error("channels of X " + shape_str(x) + " and W " + shape_str(w) + " do not match group " + std::to_string(group));
  std::vector<int64_t> wk(w.begin() + 2, w.end());
  WindowAttrs a = resolve_window_attrs(read_window_attrs(*ctx.node), x.size() - 2, &wk, ctx.node->describe());
  WindowGeom g = window_geometry(ctx.node->describe(), a, Shape(x.begin() + 2, x.end()));
  Shape out{x[0], w[0]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

void infer_conv_integer(InferContext& ctx) {
  if (!is_8bit(ctx.dtype(0)) || !is_8bit(ctx.dtype(1))) ctx.error("x and w must be uint8/int8");
  ctx.set_output(0, DType::kInt32, conv_shape(ctx, 0, 1));
}

void infer_qlinear_conv(InferContext& ctx) {
  if (!is_8bit(ctx.dtype(0)) || !is_8bit(ctx.dtype(3)) || !is_8bit(ctx.dtype(7)))
    ctx.error("x, w and y_zero_point must be uint8/int8");
  ctx.set_output(0, ctx.dtype(7), conv_shape(ctx, 0, 3));
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "QuantizeLinear", .infer = infer_quantize, .traits = traits(PatternKind::kBroadcast)});
GEC_REGISTER_OP({.domain = "", .op_type = "DequantizeLinear", .infer = infer_dequantize, .traits = traits(PatternKind::kBroadcast)});
GEC_REGISTER_OP({.domain = "", .op_type = "DynamicQuantizeLinear", .infer = infer_dynamic_quantize, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "MatMulInteger", .infer = infer_matmul_integer, .traits = traits(PatternKind::kOutEwiseFusable)});
GEC_REGISTER_OP({.domain = "", .op_type = "QLinearMatMul", .infer = infer_qlinear_matmul, .traits = traits(PatternKind::kOutEwiseFusable)});
GEC_REGISTER_OP({.domain = "", .op_type = "ConvInteger", .infer = infer_conv_integer, .traits = traits(PatternKind::kOutEwiseFusable)});
GEC_REGISTER_OP({.domain = "", .op_type = "QLinearConv", .infer = infer_qlinear_conv, .traits = traits(PatternKind::kOutEwiseFusable)});

}  // namespace gec::ops
