// Op schema registry and the shape helpers shared by infer functions.
#include "ops/op_schema.h"
#include "ops/tensor_ops.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace gec::ops {

namespace {
std::map<std::pair<std::string, std::string>, OpSchema>& schemas() {
  static std::map<std::pair<std::string, std::string>, OpSchema> m;
  return m;
}
}  // namespace

void register_schema(OpSchema s) {
  s.domain = canonical_domain(s.domain);
  auto key = std::make_pair(s.domain, s.op_type);
  if (schemas().count(key))
    fail(ErrorCode::kInternal, "op " + domain_label(s.domain) + "::" + s.op_type + " is registered twice");
  schemas()[key] = std::move(s);
}

const OpSchema* find_schema(const std::string& domain, const std::string& op_type) {
  auto it = schemas().find({canonical_domain(domain), op_type});
  return it == schemas().end() ? nullptr : &it->second;
}

const OpTraits& traits_of(const ir::Node& n) {
  static const OpTraits kNone;
  const OpSchema* s = find_schema(n.domain, n.op_type);
  return s ? s->traits : kNone;
}

const char* pattern_kind_name(PatternKind k) {
  switch (k) {
    case PatternKind::kUnset: return "unset";
    case PatternKind::kElementwise: return "elementwise";
    case PatternKind::kBroadcast: return "broadcast";
    case PatternKind::kInjective: return "injective";
    case PatternKind::kReduction: return "reduction";
    case PatternKind::kOutEwiseFusable: return "out_ewise_fusable";
    case PatternKind::kOpaque: return "opaque";
  }
  return "?";
}

std::vector<std::pair<std::string, std::string>> registered_ops() {
  std::vector<std::pair<std::string, std::string>> r;
  for (auto& [k, v] : schemas()) r.push_back(k);
  return r;
}

const Shape& InferContext::shape(size_t i) const {
  if (!has_input(i)) error("input " + std::to_string(i) + " is required");
  return inputs[i]->shape;
}

DType InferContext::dtype(size_t i) const {
  if (!has_input(i)) error("input " + std::to_string(i) + " is required");
  return inputs[i]->dtype;
}

const TensorView& InferContext::value(size_t i) const {
  if (!has_input(i)) error("input " + std::to_string(i) + " is required");
  if (!inputs[i]->data && inputs[i]->numel() != 0) throw NeedsValue{};
  return *inputs[i];
}

std::vector<int64_t> InferContext::ints_value(size_t i) const {
  const TensorView& v = value(i);
  std::vector<int64_t> r(static_cast<size_t>(v.numel()));
  if (v.dtype == DType::kInt64) {
    std::copy(v.as<int64_t>(), v.as<int64_t>() + r.size(), r.begin());
  } else if (v.dtype == DType::kInt32) {
    std::copy(v.as<int32_t>(), v.as<int32_t>() + r.size(), r.begin());
  } else {
    error("input " + std::to_string(i) + " must be int32 or int64, got " + dtype_name(v.dtype));
  }
  return r;
}

namespace {

// Output sizes are refused above 2^48 bytes (256 TiB): no real model comes
// near it, and below it every byte offset and element count computed later
// (planner, kernels, allocators) fits in int64 without overflow checks.
constexpr int64_t kMaxOutputBytes = int64_t{1} << 48;

void check_output_size(const InferContext& ctx, DType dt, const Shape& s) {
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) ctx.error("computed a negative output dimension " + shape_str(s));
    empty |= d == 0;
  }
  if (empty) return;
  int64_t bytes = static_cast<int64_t>(std::max<size_t>(dtype_size(dt), 1));
  for (int64_t d : s)
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxOutputBytes)
      ctx.error("output shape " + shape_str(s) + " of " + dtype_name(dt) + " is larger than 2^48 bytes");
}

}  // namespace

void InferContext::set_output(size_t i, DType dt, Shape s) {
  if (out_dtypes.size() <= i) {
    out_dtypes.resize(i + 1);
    out_shapes.resize(i + 1);
  }
  check_output_size(*this, dt, s);
  out_dtypes[i] = dt;
  out_shapes[i] = std::move(s);
}

void InferContext::error(const std::string& msg) const {
  fail(ErrorCode::kInvalidModel, (node ? node->describe() : std::string("node")) + ": " + msg);
}

Shape broadcast_shapes(const InferContext& ctx, const Shape& a, const Shape& b) {
  return broadcast_two(a, b, [&](const std::string& m) { ctx.error(m); });
}

int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

void infer_same_as_input0(InferContext& ctx) {
  for (size_t i = 0; i < ctx.node->outputs().size(); ++i) ctx.set_output(i, ctx.dtype(0), ctx.shape(0));
}

void infer_broadcast(InferContext& ctx) {
  Shape s = ctx.shape(0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) s = broadcast_shapes(ctx, s, ctx.shape(i));
  ctx.set_output(0, ctx.dtype(0), s);
}

bool infer_static_types(const ir::Node& n, InferContext& ctx, std::vector<TensorView>& views) {
  const OpSchema* s = find_schema(n.domain, n.op_type);
  if (!s || s->shape_from_kernel) return false;
  views.assign(n.inputs().size(), TensorView{});
  ctx.node = &n;
  ctx.inputs.clear();
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const ir::Value* in = n.input(i);
    if (!in) {
      ctx.inputs.push_back(nullptr);
      continue;
    }
    if (!in->type.is_static()) return false;
    views[i] = TensorView{in->is_constant() ? in->constant->data() : nullptr, in->type.dtype, in->type.static_shape()};
    ctx.inputs.push_back(&views[i]);
  }
  try {
    s->infer(ctx);
  } catch (const NeedsValue&) {
    return false;
  }
  return ctx.out_shapes.size() >= n.outputs().size();
}

}  // namespace gec::ops
