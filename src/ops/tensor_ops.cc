// Schemas (type/shape inference) of the data-movement ops: Reshape, Flatten,
// Squeeze, Unsqueeze, Concat, Split, Slice, Gather, GatherElements, GatherND,
// ScatterElements, ScatterND, Expand, Tile, Transpose, Pad, DepthToSpace,
// SpaceToDepth; plus the shape helpers of ops/tensor_ops.h that the CPU
// kernels share. Semantics: the ai.onnx opset-17 text of each op (Pad takes
// the optional axes input of Pad-18). Many output shapes depend on input
// values (Reshape's shape, Slice's starts...): ctx.ints_value() throws
// NeedsValue when those are unknown at compile time.
#include "ops/tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/op_schema.h"

namespace gec::ops {

// ---- helpers shared with the kernels -----------------------------------------

namespace {
[[noreturn]] void raise(const ErrFn& err, const std::string& msg) {
  err(msg);
  fail(ErrorCode::kInternal, "error callback returned: " + msg);
}

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

// Shape arithmetic on model-supplied numbers: an overflow is a bad model,
// never a wrapped (silently wrong) dim.
int64_t mul_or(int64_t a, int64_t b, const ErrFn& err, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) raise(err, what + " overflows int64");
  return r;
}

int64_t add_or(int64_t a, int64_t b, const ErrFn& err, const std::string& what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) raise(err, what + " overflows int64");
  return r;
}
}  // namespace

int64_t normalize_axis_or(int64_t axis, int64_t rank, const ErrFn& err) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    raise(err, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

std::vector<int64_t> transpose_perm(const std::vector<int64_t>& perm, bool has_perm, int64_t rank) {
  std::vector<int64_t> r(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t p = has_perm && static_cast<size_t>(i) < perm.size() ? perm[static_cast<size_t>(i)] : rank - 1 - i;
    r[static_cast<size_t>(i)] = has_perm && p < 0 ? p + rank : p;
  }
  return r;
}

Shape reshape_output_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero,
                           const ErrFn& err) {
  Shape out(spec.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) raise(err, "shape " + ints_str(spec) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) raise(err, "shape " + ints_str(spec) + " has a negative dim");
    if (d == 0 && !allowzero) {
      if (i >= in.size())
        raise(err, "shape " + ints_str(spec) + " copies dim " + std::to_string(i) +
                       " (0) but the input " + shape_str(in) + " has no such dim");
      out[i] = in[i];
    } else {
      out[i] = d;
      has_zero |= d == 0;
    }
    known = mul_or(known, out[i], err, "shape " + ints_str(spec));
  }
  const int64_t total = shape_numel(in);
  if (infer_at >= 0) {
    if (allowzero && has_zero)
      raise(err, "shape " + ints_str(spec) + " has both -1 and 0 with allowzero=1");
    if (known == 0 || total % known != 0)
      raise(err, "cannot reshape " + shape_str(in) + " to " + ints_str(spec) +
                     ": the -1 dim cannot be inferred");
    out[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    raise(err, "cannot reshape " + shape_str(in) + " (" + std::to_string(total) + " elements) to " +
                   shape_str(out) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

std::vector<SliceAxis> compute_slice(const Shape& in, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                     std::vector<int64_t> steps, const ErrFn& err) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const size_t n = starts.size();
  if (ends.size() != n) raise(err, "starts and ends have different lengths");
  if (axes.empty()) {
    axes.resize(n);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(n, 1);
  if (axes.size() != n || steps.size() != n)
    raise(err, "starts, ends, axes and steps must have the same length");
  std::vector<SliceAxis> r(in.size());
  for (size_t a = 0; a < in.size(); ++a) r[a] = SliceAxis{0, 1, in[a]};
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ax = normalize_axis_or(axes[i], rank, err);
    if (seen[ax]) raise(err, "axis " + std::to_string(axes[i]) + " is repeated");
    seen[ax] = true;
    const int64_t dim = in[ax];
    const int64_t step = steps[i];
    if (step == 0) raise(err, "step 0 on axis " + std::to_string(axes[i]));
    // Adding dim to a negative value cannot overflow: INT64_MIN + dim is fine.
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t count;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s - 1) / step + 1 : 0;  // no overflow for huge steps
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -step as unsigned: step may be INT64_MIN.
      const uint64_t ustep = static_cast<uint64_t>(-(step + 1)) + 1;
      count = s > e ? static_cast<int64_t>(static_cast<uint64_t>(s - e - 1) / ustep) + 1 : 0;
    }
    r[ax] = SliceAxis{count > 0 ? s : 0, step, count};
  }
  return r;
}

std::vector<int64_t> split_sizes(int64_t dim, const std::vector<int64_t>* split, size_t n,
                                 const ErrFn& err) {
  if (n == 0) raise(err, "Split needs at least one output");
  if (split) {
    if (split->size() != n)
      raise(err, "split has " + std::to_string(split->size()) + " entries but the node has " +
                     std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) raise(err, "split " + ints_str(*split) + " has a negative size");
      sum = add_or(sum, s, err, "sum of split " + ints_str(*split));
    }
    if (sum != dim)
      raise(err, "split " + ints_str(*split) + " sums to " + std::to_string(sum) +
                     ", not the dim size " + std::to_string(dim));
    return *split;
  }
  const int64_t nn = static_cast<int64_t>(n);
  const int64_t chunk = (dim + nn - 1) / nn;
  std::vector<int64_t> r(n);
  int64_t left = dim;
  for (size_t i = 0; i < n; ++i) {
    r[i] = std::min(chunk, left);
    left -= r[i];
  }
  if (dim % nn != 0 && r.back() <= 0)
    raise(err, "cannot split a dim of size " + std::to_string(dim) + " into " +
                   std::to_string(n) + " parts");
  return r;
}

std::vector<int64_t> full_pads(int64_t rank, const std::vector<int64_t>& pads,
                               const std::vector<int64_t>& axes, const ErrFn& err) {
  std::vector<int64_t> ax = axes;
  if (ax.empty()) {
    ax.resize(static_cast<size_t>(rank));
    std::iota(ax.begin(), ax.end(), 0);
  }
  if (pads.size() != 2 * ax.size())
    raise(err, "pads has " + std::to_string(pads.size()) + " entries, expected " +
                   std::to_string(2 * ax.size()));
  std::vector<int64_t> r(static_cast<size_t>(2 * rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < ax.size(); ++i) {
    const int64_t a = normalize_axis_or(ax[i], rank, err);
    if (seen[a]) raise(err, "axis " + std::to_string(ax[i]) + " is repeated in axes");
    seen[a] = true;
    r[a] = pads[i];
    r[a + rank] = pads[i + ax.size()];
  }
  return r;
}

Shape broadcast_two(const Shape& a, const Shape& b, const ErrFn& err) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else raise(err, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast");
  }
  return out;
}

int64_t element_as_int64(const TensorView& t, int64_t i, const ErrFn& err) {
  if (i >= t.numel()) raise(err, "tensor has too few elements");
  switch (t.dtype) {
    case DType::kInt64: return t.as<int64_t>()[i];
    case DType::kInt32: return t.as<int32_t>()[i];
    case DType::kInt16: return t.as<int16_t>()[i];
    case DType::kInt8: return t.as<int8_t>()[i];
    case DType::kUInt8: return t.as<uint8_t>()[i];
    case DType::kBool: return t.as<uint8_t>()[i] != 0;
    case DType::kUInt16: return t.as<uint16_t>()[i];
    case DType::kUInt32: return t.as<uint32_t>()[i];
    case DType::kUInt64: return static_cast<int64_t>(t.as<uint64_t>()[i]);
    case DType::kFloat32: return static_cast<int64_t>(t.as<float>()[i]);
    case DType::kFloat64: return static_cast<int64_t>(t.as<double>()[i]);
    default: raise(err, std::string("cannot read a ") + dtype_name(t.dtype) + " value as an integer");
  }
}

// ---- infer functions -----------------------------------------------------------

namespace {

ErrFn err_of(const InferContext& ctx) {
  return [&ctx](const std::string& m) { ctx.error(m); };
}

int64_t rank_of(const InferContext& ctx, size_t i) { return static_cast<int64_t>(ctx.shape(i).size()); }

void require_index_dtype(const InferContext& ctx, size_t i, const char* what) {
  const DType t = ctx.dtype(i);
  if (t != DType::kInt64 && t != DType::kInt32)
    ctx.error(std::string(what) + " must be int32 or int64, got " + dtype_name(t));
}

void require_rank1(const InferContext& ctx, size_t i, const char* what) {
  if (ctx.shape(i).size() != 1)
    ctx.error(std::string(what) + " must be 1-D, got shape " + shape_str(ctx.shape(i)));
}

void infer_reshape(InferContext& ctx) {
  require_rank1(ctx, 1, "shape");
  const bool allowzero = ctx.node->get_int("allowzero", 0) != 0;
  ctx.set_output(0, ctx.dtype(0),
                 reshape_output_shape(ctx.shape(0), ctx.ints_value(1), allowzero, err_of(ctx)));
}

void infer_flatten(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node->get_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) ctx.error("axis " + std::to_string(ctx.node->get_int("axis", 1)) +
                                      " is out of range for rank " + std::to_string(r));
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) {
    int64_t& part = i < axis ? a : b;
    part = mul_or(part, in[i], err_of(ctx), "flattened size of " + shape_str(in));
  }
  ctx.set_output(0, ctx.dtype(0), {a, b});
}

void infer_squeeze(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (ctx.has_input(1)) {
    for (int64_t a : ctx.ints_value(1)) {
      const int64_t ax = normalize_axis_or(a, r, err_of(ctx));
      if (in[ax] != 1)
        ctx.error("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_str(in) +
                  ": its size is not 1");
      drop[ax] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_unsqueeze(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const std::vector<int64_t> axes = ctx.ints_value(1);
  const int64_t r = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> ins(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    const int64_t ax = normalize_axis_or(a, r, err_of(ctx));
    if (ins[ax]) ctx.error("axis " + std::to_string(a) + " is repeated in axes");
    ins[ax] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : in[k++]);
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_concat(InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.error("Concat needs at least one input");
  const Shape& first = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(first.size());
  if (r == 0) ctx.error("Concat inputs must have rank >= 1");
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis"), r, err_of(ctx));
  Shape out = first;
  out[axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.shape(i);
    if (ctx.dtype(i) != ctx.dtype(0))
      ctx.error(std::string("input dtypes differ: ") + dtype_name(ctx.dtype(0)) + " and " +
                dtype_name(ctx.dtype(i)));
    bool ok = static_cast<int64_t>(s.size()) == r;
    for (int64_t d = 0; ok && d < r; ++d) ok = d == axis || s[d] == first[d];
    if (!ok)
      ctx.error("input shapes " + shape_str(first) + " and " + shape_str(s) +
                " differ outside axis " + std::to_string(axis));
    out[axis] = add_or(out[axis], s[axis], err_of(ctx), "concatenated dim");
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_split(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis", 0), static_cast<int64_t>(in.size()),
                                         err_of(ctx));
  std::vector<int64_t> split;
  if (ctx.has_input(1)) split = ctx.ints_value(1);
  // An empty split tensor is treated as absent (some exporters emit one).
  const bool has_split = ctx.has_input(1) && !split.empty();
  const auto sizes = split_sizes(in[axis], has_split ? &split : nullptr, ctx.node->outputs().size(),
                                 err_of(ctx));
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = in;
    s[axis] = sizes[i];
    ctx.set_output(i, ctx.dtype(0), s);
  }
}

void infer_slice(InferContext& ctx) {
  for (size_t i = 1; i < 5; ++i)
    if (ctx.has_input(i)) require_index_dtype(ctx, i, "starts/ends/axes/steps");
  std::vector<int64_t> axes, steps;
  if (ctx.has_input(3)) axes = ctx.ints_value(3);
  if (ctx.has_input(4)) steps = ctx.ints_value(4);
  const auto sl = compute_slice(ctx.shape(0), ctx.ints_value(1), ctx.ints_value(2), axes, steps,
                                err_of(ctx));
  Shape out;
  for (const auto& a : sl) out.push_back(a.count);
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_gather(InferContext& ctx) {
  const Shape& data = ctx.shape(0);
  require_index_dtype(ctx, 1, "indices");
  if (data.empty()) ctx.error("Gather data must have rank >= 1");
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis", 0), static_cast<int64_t>(data.size()),
                                         err_of(ctx));
  Shape out(data.begin(), data.begin() + axis);
  for (int64_t d : ctx.shape(1)) out.push_back(d);
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_gather_elements(InferContext& ctx) {
  const Shape& data = ctx.shape(0);
  const Shape& idx = ctx.shape(1);
  require_index_dtype(ctx, 1, "indices");
  if (data.empty() || idx.size() != data.size())
    ctx.error("data " + shape_str(data) + " and indices " + shape_str(idx) +
              " must have the same rank >= 1");
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis", 0), static_cast<int64_t>(data.size()),
                                         err_of(ctx));
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != axis && idx[d] > data[d])
      ctx.error("indices " + shape_str(idx) + " exceed data " + shape_str(data) + " on axis " +
                std::to_string(d));
  ctx.set_output(0, ctx.dtype(0), idx);
}

void infer_gather_nd(InferContext& ctx) {
  const Shape& data = ctx.shape(0);
  const Shape& idx = ctx.shape(1);
  if (ctx.dtype(1) != DType::kInt64) ctx.error("indices must be int64");
  const int64_t b = ctx.node->get_int("batch_dims", 0);
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q))
    ctx.error("bad ranks for GatherND: data " + shape_str(data) + ", indices " + shape_str(idx) +
              ", batch_dims " + std::to_string(b));
  for (int64_t i = 0; i < b; ++i)
    if (data[i] != idx[i]) ctx.error("batch dims of data and indices differ");
  const int64_t last = idx.back();
  if (last < 1 || last > r - b)
    ctx.error("indices last dim " + std::to_string(last) + " must be in [1, " + std::to_string(r - b) + "]");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

void check_reduction(const InferContext& ctx) {
  const std::string red = ctx.node->get_string("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    ctx.error("unknown reduction '" + red + "'");
}

void infer_scatter_elements(InferContext& ctx) {
  const Shape& data = ctx.shape(0);
  require_index_dtype(ctx, 1, "indices");
  check_reduction(ctx);
  if (ctx.shape(1) != ctx.shape(2))
    ctx.error("indices " + shape_str(ctx.shape(1)) + " and updates " + shape_str(ctx.shape(2)) +
              " must have the same shape");
  if (data.empty() || ctx.shape(1).size() != data.size())
    ctx.error("data and indices must have the same rank >= 1");
  const int64_t axis = normalize_axis_or(ctx.node->get_int("axis", 0), static_cast<int64_t>(data.size()),
                                         err_of(ctx));
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != axis && ctx.shape(1)[d] > data[d])
      ctx.error("indices " + shape_str(ctx.shape(1)) + " exceed data " + shape_str(data));
  if (ctx.dtype(2) != ctx.dtype(0)) ctx.error("updates dtype differs from data dtype");
  ctx.set_output(0, ctx.dtype(0), data);
}

void infer_scatter_nd(InferContext& ctx) {
  const Shape& data = ctx.shape(0);
  const Shape& idx = ctx.shape(1);
  if (ctx.dtype(1) != DType::kInt64) ctx.error("indices must be int64");
  check_reduction(ctx);
  if (data.empty() || idx.empty()) ctx.error("data and indices must have rank >= 1");
  const int64_t k = idx.back();
  if (k < 1 || k > static_cast<int64_t>(data.size()))
    ctx.error("indices last dim " + std::to_string(k) + " exceeds the data rank");
  Shape upd(idx.begin(), idx.end() - 1);
  upd.insert(upd.end(), data.begin() + k, data.end());
  if (ctx.shape(2) != upd)
    ctx.error("updates shape " + shape_str(ctx.shape(2)) + " must be " + shape_str(upd));
  if (ctx.dtype(2) != ctx.dtype(0)) ctx.error("updates dtype differs from data dtype");
  ctx.set_output(0, ctx.dtype(0), data);
}

void infer_expand(InferContext& ctx) {
  require_rank1(ctx, 1, "shape");
  const std::vector<int64_t> target = ctx.ints_value(1);
  for (int64_t d : target)
    if (d < 0) ctx.error("shape " + shape_str(target) + " has a negative dim");
  ctx.set_output(0, ctx.dtype(0), broadcast_two(ctx.shape(0), target, err_of(ctx)));
}

void infer_tile(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const std::vector<int64_t> rep = ctx.ints_value(1);
  if (rep.size() != in.size())
    ctx.error("repeats has " + std::to_string(rep.size()) + " entries for rank " + std::to_string(in.size()));
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (rep[i] < 0) ctx.error("repeats " + shape_str(rep) + " has a negative entry");
    out[i] = mul_or(in[i], rep[i], err_of(ctx), "tiled shape of " + shape_str(in) + " by " + shape_str(rep));
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_transpose(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const std::vector<int64_t> attr = ctx.node->get_ints("perm");
  const bool has_perm = ctx.node->has_attr("perm");
  if (has_perm && attr.size() != in.size())
    ctx.error("perm " + shape_str(attr) + " does not match rank " + std::to_string(in.size()));
  const std::vector<int64_t> perm = transpose_perm(attr, has_perm, rank_of(ctx, 0));
  std::vector<bool> seen(in.size(), false);
  Shape out(in.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= rank_of(ctx, 0) || seen[p]) ctx.error("perm " + shape_str(attr) + " is not a permutation");
    seen[p] = true;
    out[i] = in[p];
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_pad(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const std::string mode = ctx.node->get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    ctx.error("unsupported mode '" + mode + "'");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) axes = ctx.ints_value(3);
  const int64_t r = static_cast<int64_t>(in.size());
  const auto pads = full_pads(r, ctx.ints_value(1), axes, err_of(ctx));
  Shape out(in.size());
  for (int64_t i = 0; i < r; ++i) {
    out[i] = add_or(add_or(in[i], pads[i], err_of(ctx), "padded dim"), pads[i + r], err_of(ctx), "padded dim");
    if (out[i] < 0) ctx.error("pads " + shape_str(pads) + " remove more than the input " + shape_str(in));
    if (mode != "constant" && in[i] == 0 && out[i] > 0)
      ctx.error("cannot " + mode + "-pad an axis of size 0");
  }
  if (ctx.has_input(2) && ctx.shape(2).size() > 1) ctx.error("constant_value must be a scalar");
  ctx.set_output(0, ctx.dtype(0), out);
}

int64_t blocksize_of(const InferContext& ctx, const Shape& in) {
  const int64_t b = ctx.node->get_int("blocksize");
  if (b <= 0) ctx.error("blocksize must be positive");
  if (in.size() != 4) ctx.error("input must be 4-D, got " + shape_str(in));
  return b;
}

void infer_depth_to_space(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t b = blocksize_of(ctx, in);
  const std::string mode = ctx.node->get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.error("unknown mode '" + mode + "'");
  const int64_t bb = mul_or(b, b, err_of(ctx), "blocksize^2");
  if (in[1] % bb != 0)
    ctx.error("channels " + std::to_string(in[1]) + " not divisible by blocksize^2");
  ctx.set_output(0, ctx.dtype(0), {in[0], in[1] / bb, mul_or(in[2], b, err_of(ctx), "output height"),
                                   mul_or(in[3], b, err_of(ctx), "output width")});
}

void infer_space_to_depth(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const int64_t b = blocksize_of(ctx, in);
  if (in[2] % b != 0 || in[3] % b != 0)
    ctx.error("spatial dims of " + shape_str(in) + " not divisible by blocksize");
  const int64_t bb = mul_or(b, b, err_of(ctx), "blocksize^2");
  ctx.set_output(0, ctx.dtype(0), {in[0], mul_or(in[1], bb, err_of(ctx), "output channels"), in[2] / b, in[3] / b});
}

// CenterCropPad-18: the dims on `axes` (default all) become shape's; the
// rest stay.
void infer_center_crop_pad(InferContext& ctx) {
  const Shape& in = ctx.shape(0);
  const std::vector<int64_t> shape = ctx.ints_value(1);
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = ctx.node->get_ints("axes");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (shape.size() != axes.size())
    ctx.error("shape has " + std::to_string(shape.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  Shape out = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(ctx, axes[i], r);
    if (seen[a]) ctx.error("axis " + std::to_string(axes[i]) + " appears twice");
    seen[a] = true;
    if (shape[i] < 0) ctx.error("shape " + shape_str(shape) + " has a negative entry");
    out[a] = shape[i];
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "Reshape", .infer = infer_reshape, .traits = traits(PatternKind::kInjective).aliases_input0()});
GEC_REGISTER_OP({.domain = "", .op_type = "Flatten", .infer = infer_flatten, .traits = traits(PatternKind::kInjective).aliases_input0()});
GEC_REGISTER_OP({.domain = "", .op_type = "Squeeze", .infer = infer_squeeze, .traits = traits(PatternKind::kInjective).aliases_input0()});
GEC_REGISTER_OP({.domain = "", .op_type = "Unsqueeze", .infer = infer_unsqueeze, .traits = traits(PatternKind::kInjective).aliases_input0()});
GEC_REGISTER_OP({.domain = "", .op_type = "Concat", .infer = infer_concat, .traits = traits(PatternKind::kInjective).with_layout(LayoutRule::kConcat)});
GEC_REGISTER_OP({.domain = "", .op_type = "Split", .infer = infer_split, .traits = traits(PatternKind::kInjective).with_layout(LayoutRule::kChannelMove)});
GEC_REGISTER_OP({.domain = "", .op_type = "Slice", .infer = infer_slice, .traits = traits(PatternKind::kInjective).with_layout(LayoutRule::kChannelMove)});
GEC_REGISTER_OP({.domain = "", .op_type = "Gather", .infer = infer_gather, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "GatherElements", .infer = infer_gather_elements, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "GatherND", .infer = infer_gather_nd, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "ScatterElements", .infer = infer_scatter_elements, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "ScatterND", .infer = infer_scatter_nd, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Expand", .infer = infer_expand, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "Tile", .infer = infer_tile, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "Transpose", .infer = infer_transpose, .traits = traits(PatternKind::kInjective).with_layout(LayoutRule::kTranspose)});
GEC_REGISTER_OP({.domain = "", .op_type = "Pad", .infer = infer_pad, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "CenterCropPad", .infer = infer_center_crop_pad, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "DepthToSpace", .infer = infer_depth_to_space, .traits = traits(PatternKind::kInjective)});
GEC_REGISTER_OP({.domain = "", .op_type = "SpaceToDepth", .infer = infer_space_to_depth, .traits = traits(PatternKind::kInjective)});

}  // namespace gec::ops
