// Schemas of the selection and scan ops: TopK-11, CumSum-14, Unique-11,
// Compress-11, ReverseSequence-10, NonMaxSuppression-11 (ai.onnx operator
// text, opset <= 17). Unique and NonMaxSuppression output shapes depend on
// all of the data, so the kernel allocates them (shape_from_kernel).
#include "ops/op_schema.h"
#include "ops/tensor_ops.h"

namespace gec::ops {
namespace {

// TopK: X [..., n, ...], K int64 [1] -> Values and Indices with dim axis = k.
void infer_topk(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.empty()) ctx.error("X must have rank >= 1");
  const int64_t axis = normalize_axis(ctx, ctx.node->get_int("axis", -1), static_cast<int64_t>(x.size()));
  const std::vector<int64_t> k = ctx.ints_value(1);
  if (k.size() != 1) ctx.error("K must hold exactly one value, has " + std::to_string(k.size()));
  if (k[0] < 0 || k[0] > x[static_cast<size_t>(axis)])
    ctx.error("K = " + std::to_string(k[0]) + " is out of range for axis " + std::to_string(axis) + " of " +
              shape_str(x));
  Shape out = x;
  out[static_cast<size_t>(axis)] = k[0];
  ctx.set_output(0, ctx.dtype(0), out);
  if (ctx.node->outputs().size() > 1) ctx.set_output(1, DType::kInt64, out);
}

// CumSum: same dtype and shape as x; axis is a scalar (or [1]) int tensor.
void infer_cumsum(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (shape_numel(ctx.shape(1)) != 1) ctx.error("axis must be a scalar");
  if (ctx.inputs[1]->data) {
    const std::vector<int64_t> axis = ctx.ints_value(1);
    normalize_axis(ctx, axis[0], static_cast<int64_t>(x.size()));
  }
  ctx.set_output(0, ctx.dtype(0), x);
}

// Compress: selects slices where condition (1-D bool) is true; without axis
// the input is flattened. Condition entries past the axis length are ignored.
void infer_compress(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (ctx.shape(1).size() != 1) ctx.error("condition must be 1-D, got " + shape_str(ctx.shape(1)));
  const TensorView& c = ctx.value(1);
  const bool has_axis = ctx.node->has_attr("axis");
  int64_t axis = 0;
  int64_t len = shape_numel(x);
  if (has_axis) {
    axis = normalize_axis(ctx, ctx.node->get_int("axis"), static_cast<int64_t>(x.size()));
    len = x[static_cast<size_t>(axis)];
  }
  if (c.numel() > len) ctx.error("condition is longer (" + std::to_string(c.numel()) + ") than the axis (" +
                                 std::to_string(len) + ")");
  int64_t kept = 0;
  for (int64_t i = 0; i < c.numel(); ++i) kept += c.as<uint8_t>()[i] != 0;
  Shape out = has_axis ? x : Shape{kept};
  if (has_axis) out[static_cast<size_t>(axis)] = kept;
  ctx.set_output(0, ctx.dtype(0), out);
}

// ReverseSequence: same as input; input rank >= 2, sequence_lens [batch].
void infer_reverse_sequence(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.size() < 2) ctx.error("input must have rank >= 2, got " + shape_str(x));
  const int64_t batch_axis = ctx.node->get_int("batch_axis", 1);
  const int64_t time_axis = ctx.node->get_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
    ctx.error("batch_axis and time_axis must be 0 and 1 in some order");
  if (ctx.shape(1) != Shape{x[static_cast<size_t>(batch_axis)]})
    ctx.error("sequence_lens must have shape [" + std::to_string(x[static_cast<size_t>(batch_axis)]) + "], got " +
              shape_str(ctx.shape(1)));
  ctx.set_output(0, ctx.dtype(0), x);
}

void infer_by_kernel(InferContext&) { throw NeedsValue{}; }

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "TopK", .infer = infer_topk, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "CumSum", .infer = infer_cumsum, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Compress", .infer = infer_compress, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "ReverseSequence", .infer = infer_reverse_sequence, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "",
                 .op_type = "Unique",
                 .infer = infer_by_kernel,
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "",
                 .op_type = "NonMaxSuppression",
                 .infer = infer_by_kernel,
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
