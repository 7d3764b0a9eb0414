// Schemas of the shape-query and tensor-generating ops: Shape, Size,
// ConstantOfShape, Range, EyeLike, OneHot, Trilu, NonZero (ai.onnx opset-17
// semantics). ConstantOfShape, Range and NonZero output shapes depend on
// input values; NonZero's only on all of its data, so its schema says
// shape_from_kernel and the kernel allocates the output.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_schema.h"
#include "ops/tensor_ops.h"

namespace gec::ops {
namespace {

ErrFn err_of(const InferContext& ctx) {
  return [&ctx](const std::string& m) { ctx.error(m); };
}

void require_scalar_like(const InferContext& ctx, size_t i, const char* what) {
  if (shape_numel(ctx.shape(i)) != 1 || ctx.shape(i).size() > 1)
    ctx.error(std::string(what) + " must be a scalar, got shape " + shape_str(ctx.shape(i)));
}

void infer_shape(InferContext& ctx) {
  const int64_t r = static_cast<int64_t>(ctx.shape(0).size());
  auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  const int64_t start = clampi(ctx.node->get_int("start", 0));
  const int64_t end = clampi(ctx.node->get_int("end", r));
  ctx.set_output(0, DType::kInt64, {std::max<int64_t>(end - start, 0)});
}

void infer_size(InferContext& ctx) {
  (void)ctx.shape(0);
  ctx.set_output(0, DType::kInt64, {});
}

void infer_constant_of_shape(InferContext& ctx) {
  if (ctx.shape(0).size() != 1) ctx.error("input must be a 1-D shape, got " + shape_str(ctx.shape(0)));
  DType dt = DType::kFloat32;
  if (const Tensor* v = ctx.node->get_tensor("value")) {
    if (v->numel() != 1) ctx.error("value must hold exactly one element");
    dt = v->dtype();
  }
  const std::vector<int64_t> dims = ctx.ints_value(0);
  for (int64_t d : dims)
    if (d < 0) ctx.error("shape " + shape_str(dims) + " has a negative dim");
  ctx.set_output(0, dt, dims);
}

/// Number of Range elements: max(ceil((limit - start) / delta), 0).
template <typename T>
int64_t range_count(const InferContext& ctx, const TensorView& s, const TensorView& l, const TensorView& d) {
  const T start = *s.as<T>(), limit = *l.as<T>(), delta = *d.as<T>();
  if (delta == T(0)) ctx.error("delta must not be 0");
  if constexpr (std::is_floating_point_v<T>) {
    const double n = std::ceil((static_cast<double>(limit) - start) / delta);
    if (!(n < 9.0e18)) ctx.error("Range has too many elements");
    return n > 0 ? static_cast<int64_t>(n) : 0;
  } else {
    // ceil(diff / delta) for same-signed operands, as magnitudes; diff of two
    // int64 values is exact in unsigned arithmetic (no wrap-around answer).
    const int64_t lo = static_cast<int64_t>(start), hi = static_cast<int64_t>(limit);
    const int64_t dl = static_cast<int64_t>(delta);
    if (dl > 0 ? hi <= lo : hi >= lo) return 0;
    const uint64_t span = dl > 0 ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)
                                 : static_cast<uint64_t>(lo) - static_cast<uint64_t>(hi);
    const uint64_t step = dl > 0 ? static_cast<uint64_t>(dl) : static_cast<uint64_t>(-(dl + 1)) + 1;
    const uint64_t n = span / step + (span % step != 0);
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) ctx.error("Range has too many elements");
    return static_cast<int64_t>(n);
  }
}

void infer_range(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    require_scalar_like(ctx, i, "start/limit/delta");
    if (ctx.dtype(i) != ctx.dtype(0)) ctx.error("start, limit and delta must have the same dtype");
  }
  const TensorView &s = ctx.value(0), &l = ctx.value(1), &d = ctx.value(2);
  int64_t n = 0;
  switch (ctx.dtype(0)) {
    case DType::kFloat32: n = range_count<float>(ctx, s, l, d); break;
    case DType::kFloat64: n = range_count<double>(ctx, s, l, d); break;
    case DType::kInt16: n = range_count<int16_t>(ctx, s, l, d); break;
    case DType::kInt32: n = range_count<int32_t>(ctx, s, l, d); break;
    case DType::kInt64: n = range_count<int64_t>(ctx, s, l, d); break;
    default: ctx.error(std::string("dtype ") + dtype_name(ctx.dtype(0)) + " is not supported");
  }
  ctx.set_output(0, ctx.dtype(0), {n});
}

void infer_eye_like(InferContext& ctx) {
  if (ctx.shape(0).size() != 2) ctx.error("input must be 2-D, got " + shape_str(ctx.shape(0)));
  DType dt = ctx.dtype(0);
  if (ctx.node->has_attr("dtype")) {
    const int64_t code = ctx.node->get_int("dtype");
    if (!dtype_is_valid(static_cast<int32_t>(code))) ctx.error("bad dtype " + std::to_string(code));
    dt = static_cast<DType>(code);
  }
  ctx.set_output(0, dt, ctx.shape(0));
}

void infer_one_hot(InferContext& ctx) {
  const Shape& idx = ctx.shape(0);
  require_scalar_like(ctx, 1, "depth");
  if (ctx.shape(2).size() != 1 || ctx.shape(2)[0] != 2)
    ctx.error("values must be a 1-D tensor of 2 elements, got " + shape_str(ctx.shape(2)));
  const int64_t r = static_cast<int64_t>(idx.size()) + 1;
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis", -1), r, err_of(ctx));
  const int64_t depth = element_as_int64(ctx.value(1), 0, err_of(ctx));
  if (depth < 1) ctx.error("depth must be positive, got " + std::to_string(depth));
  Shape out = idx;
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, ctx.dtype(2), out);
}

void infer_trilu(InferContext& ctx) {
  if (ctx.shape(0).size() < 2) ctx.error("input must have rank >= 2, got " + shape_str(ctx.shape(0)));
  if (ctx.has_input(1)) require_scalar_like(ctx, 1, "k");
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

/// Shape [rank, count]; needs the data, so at compile time it throws
/// NeedsValue unless the input is constant.
void infer_non_zero(InferContext& ctx) {
  const TensorView& v = ctx.value(0);
  int64_t count = 0;
  const size_t es = dtype_size(v.dtype);
  if (v.dtype == DType::kString) ctx.error("string input is not supported");
  const auto* p = static_cast<const unsigned char*>(v.data);
  for (int64_t i = 0; i < v.numel(); ++i) {
    bool nz = false;
    if (v.dtype == DType::kFloat32) nz = v.as<float>()[i] != 0.f;
    else if (v.dtype == DType::kFloat64) nz = v.as<double>()[i] != 0.0;
    else if (v.dtype == DType::kFloat16 || v.dtype == DType::kBFloat16) nz = (v.as<uint16_t>()[i] & 0x7fff) != 0;
    else
      for (size_t b = 0; b < es && !nz; ++b) nz = p[i * es + b] != 0;
    count += nz;
  }
  ctx.set_output(0, DType::kInt64, {static_cast<int64_t>(v.shape.size()), count});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "Shape", .infer = infer_shape, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Size", .infer = infer_size, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "ConstantOfShape", .infer = infer_constant_of_shape, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Range", .infer = infer_range, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "EyeLike", .infer = infer_eye_like, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "OneHot", .infer = infer_one_hot, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Trilu", .infer = infer_trilu, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "NonZero", .infer = infer_non_zero, .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
