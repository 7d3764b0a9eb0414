// TensorFlow op -> canonical IR ops (ONNX opset-17 forms), one converter per
// op, after TensorFlow's op definitions (tensorflow/core/ops/*.cc and the
// tf.raw_ops documentation) for their semantics:
//  - padding: VALID = none; SAME = total max((ceil(in/s) - 1) * s + (k-1)*d + 1 - in, 0),
//    floor(total/2) before and the rest after; EXPLICIT = explicit_paddings;
//  - filters: Conv2D [kh,kw,Cin,Cout] -> OIHW; DepthwiseConv2dNative
//    [kh,kw,C,M] -> [C*M,1,kh,kw] with group C; Conv2DBackpropInput
//    [kh,kw,Cout,Cin] -> ConvTranspose IOHW, output size from input_sizes;
//  - ResizeBilinear: align_corners / half_pixel_centers / neither map to
//    ONNX align_corners / half_pixel / asymmetric; ResizeNearestNeighbor to
//    align_corners + round_prefer_ceil, tf_half_pixel_for_nn + floor, or
//    asymmetric + floor;
//  - converter-fused ops (_FusedConv2D, FusedDepthwiseConv2dNative,
//    _FusedMatMul) become the plain op then BiasAdd / FusedBatchNorm / the
//    activation their fused_ops attribute lists; -O2's fusion rules fuse
//    them again for oneDNN.
// Layout handling is the Converter's (converter.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/tensorflow/converter.h"

namespace gec::frontend::tf {
namespace {

using ir::Attribute;
using C = Converter;

const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
/// Bound on window sizes, strides and dilations (keeps pad arithmetic far
/// from overflow; real models use single digits).
constexpr int64_t kMaxWindow = int64_t{1} << 20;
/// Bound on the image sizes a resize or a transposed convolution may ask for.
constexpr int64_t kMaxImageDim = int64_t{1} << 20;
/// Most outputs a Split / Unpack may make.
constexpr int64_t kMaxSplitOutputs = 4096;

// ---- shared pieces --------------------------------------------------------------------

/// The spatial entries (H, W) of a 4-entry NHWC or NCHW list attribute.
std::vector<int64_t> spatial(const C& c, const std::string& attr, int64_t def) {
  std::vector<int64_t> v = c.attr_ints(attr);
  if (v.empty()) return {def, def};
  if (v.size() != 4) c.error(attr + " must have 4 entries, got " + std::to_string(v.size()));
  std::vector<int64_t> r = c.nhwc() ? std::vector<int64_t>{v[1], v[2]} : std::vector<int64_t>{v[2], v[3]};
  for (int64_t x : r)
    if (x < 1 || x > kMaxWindow) c.error(attr + " entries must lie in [1, " + std::to_string(kMaxWindow) + "], got " + std::to_string(x));
  return r;
}

/// ONNX pads [hb, wb, he, we] for a window op on input spatial dims `in`.
std::vector<int64_t> window_pads(C& c, const Shape& in_nchw, const std::vector<int64_t>& k,
                                 const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  const std::string padding = c.attr_s("padding", "VALID");
  if (padding == "VALID") return {0, 0, 0, 0};
  if (padding == "EXPLICIT") {
    const std::vector<int64_t> e = c.attr_ints("explicit_paddings");
    if (e.size() != 8) c.error("explicit_paddings must have 8 entries");
    for (int64_t p : e)
      if (p < 0 || p > kMaxWindow) c.error("explicit_paddings entries must lie in [0, " + std::to_string(kMaxWindow) + "]");
    // Pairs per dim in data_format order.
    const size_t h = c.nhwc() ? 1 : 2, w = c.nhwc() ? 2 : 3;
    return {e[2 * h], e[2 * w], e[2 * h + 1], e[2 * w + 1]};
  }
  if (padding != "SAME") c.unsupported("padding '" + padding + "' is not supported");
  std::vector<int64_t> begin(2), end(2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t size = in_nchw[2 + i];
    const int64_t out = (size + s[i] - 1) / s[i];
    const int64_t total = std::max<int64_t>((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - size, 0);
    begin[i] = total / 2;
    end[i] = total - begin[i];
  }
  return {begin[0], begin[1], end[0], end[1]};
}

/// The NCHW result of a 4-D op bound as the node's output: an nchw entry for
/// NHWC models, the logical tensor for NCHW ones.
void bind_nchw(C& c, ir::Value* v, size_t k = 0) { c.set_output(k, v, c.nhwc()); }

/// Input 0 of an image op as NCHW (for NCHW data_format it is already).
ir::Value* image_in(C& c) { return c.nhwc() ? c.in_nchw(0) : c.in(0); }

/// OIHW weights from a constant filter [kh, kw, Cin, Cout].
ir::Value* conv_weights(C& c, size_t i) {
  ir::Value* f = c.in(i);
  if (c.rank_of(f) != 4) c.unsupported("the filter must be 4-D");
  return c.transpose(f, {3, 2, 0, 1});
}

ir::Value* conv(C& c, ir::Value* x, ir::Value* w, int64_t group, const Shape& kshape) {
  const std::vector<int64_t> s = spatial(c, "strides", 1), d = spatial(c, "dilations", 1);
  const std::vector<int64_t> k = {kshape[2], kshape[3]};
  const std::vector<int64_t> pads = window_pads(c, c.shape_of(x), k, s, d);
  return c.emit("Conv", {x, w},
                {Attribute::Ints("strides", s), Attribute::Ints("dilations", d), Attribute::Ints("pads", pads),
                 Attribute::Int("group", group), Attribute::Ints("kernel_shape", k)});
}

ir::Value* conv2d(C& c) {
  ir::Value* x = image_in(c);
  ir::Value* w = conv_weights(c, 1);
  const Shape ws = c.shape_of(w), xs = c.shape_of(x);
  if (ws[1] <= 0 || xs[1] % ws[1] != 0)
    c.error("input channels " + std::to_string(xs[1]) + " are not a multiple of the filter's " + std::to_string(ws[1]));
  return conv(c, x, w, xs[1] / ws[1], ws);
}

ir::Value* depthwise(C& c) {
  ir::Value* x = image_in(c);
  ir::Value* f = c.in(1);
  const Shape fs = c.shape_of(f);  // [kh, kw, C, M]
  if (fs.size() != 4) c.unsupported("the filter must be 4-D");
  ir::Value* r = c.emit("Reshape", {f, c.const_i64({fs[0], fs[1], 1, fs[2] * fs[3]}, "shape")});
  ir::Value* w = c.transpose(r, {3, 2, 0, 1});  // [C*M, 1, kh, kw]
  return conv(c, x, w, fs[2], c.shape_of(w));
}

/// x + bias along the channel axis of an NCHW value.
ir::Value* add_channel_bias(C& c, ir::Value* x, ir::Value* bias) {
  const Shape b = c.shape_of(bias);
  ir::Value* b3 = c.emit("Reshape", {bias, c.const_i64({b.empty() ? 1 : b[0], 1, 1}, "bias_shape")});
  return c.emit("Add", {x, b3});
}

ir::Value* activation(C& c, const std::string& op, ir::Value* x, ir::Value* alpha = nullptr) {
  if (op == "Relu") return c.emit("Relu", {x});
  if (op == "Relu6") return c.emit("Clip", {x, c.scalar_f32(0, "zero"), c.scalar_f32(6, "six")});
  if (op == "Elu") return c.emit("Elu", {x}, {Attribute::Float("alpha", 1.f)});
  if (op == "Selu") return c.emit("Selu", {x});
  if (op == "Sigmoid") return c.emit("Sigmoid", {x});
  if (op == "Tanh") return c.emit("Tanh", {x});
  if (op == "LeakyRelu") return c.emit("LeakyRelu", {x}, {Attribute::Float("alpha", c.attr_f("leakyrelu_alpha", 0.2f))});
  if (op == "Prelu" && alpha) return c.emit("PRelu", {x, alpha});
  c.unsupported("fused activation '" + op + "' is not supported");
}

/// The fused_ops of a converter-fused conv applied to its NCHW result;
/// extra inputs start at 2.
ir::Value* apply_fused_ops(C& c, ir::Value* y) {
  const std::vector<std::string> ops = c.attr_strings("fused_ops");
  size_t arg = 2;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string& op = ops[i];
    if (op == "BiasAdd" || op == "Add") {
      y = add_channel_bias(c, y, c.in(arg++));
    } else if (op == "FusedBatchNorm" || op == "FusedBatchNormV3") {
      ir::Value* scale = c.in(arg), *offset = c.in(arg + 1), *mean = c.in(arg + 2), *var = c.in(arg + 3);
      arg += 4;
      y = c.emit("BatchNormalization", {y, scale, offset, mean, var},
                 {Attribute::Float("epsilon", c.attr_f("epsilon", 1e-4f))});
    } else if (op == "Prelu") {
      ir::Value* a = c.in(arg++);
      const Shape as = c.shape_of(a);
      ir::Value* a3 = c.emit("Reshape", {a, c.const_i64({shape_numel(as), 1, 1}, "alpha_shape")});
      y = activation(c, op, y, a3);
    } else {
      y = activation(c, op, y);
    }
  }
  return y;
}

// ---- elementwise ----------------------------------------------------------------------

void unary(C& c, const std::string& op, std::vector<Attribute> attrs = {}) {
  c.set_output(0, c.emit(op, {c.in_is_nchw(0) ? c.in_nchw(0) : c.in(0)}, std::move(attrs)), c.in_is_nchw(0));
}

void binary(C& c, const std::string& op) {
  std::vector<ir::Value*> v;
  const bool nchw = c.broadcast_inputs({0, 1}, v);
  c.set_output(0, c.emit(op, v), nchw);
}

/// floor(a / b): Floor(Div) for floats; for integers (a - Mod(a, b)) / b,
/// Mod taking the divisor's sign as TensorFlow's FloorMod does.
ir::Value* floor_div(C& c, ir::Value* a, ir::Value* b) {
  if (dtype_is_float(a->type.dtype)) return c.emit("Floor", {c.emit("Div", {a, b})});
  ir::Value* m = c.emit("Mod", {a, b}, {Attribute::Int("fmod", 0)});
  return c.emit("Div", {c.emit("Sub", {a, m}), b});
}

ir::Value* floor_mod(C& c, ir::Value* a, ir::Value* b) {
  if (!dtype_is_float(a->type.dtype)) return c.emit("Mod", {a, b}, {Attribute::Int("fmod", 0)});
  return c.emit("Sub", {a, c.emit("Mul", {c.emit("Floor", {c.emit("Div", {a, b})}), b})});
}

// ---- shapes and axes --------------------------------------------------------------------

int64_t norm_axis(C& c, int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) c.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return a < 0 ? a + rank : a;
}

/// TensorFlow reductions (Mean, Sum, Max, Min, Prod, All, Any) with
/// reduction_indices input 1 and keep_dims; NCHW inputs stay NCHW when the
/// remaining dims keep their order.
void reduce(C& c, const std::string& op) {
  std::vector<int64_t> axes = c.const_ints(1, "reduction_indices");
  const bool keep = c.attr_b("keep_dims", false);
  if (c.in_is_nchw(0)) {
    std::vector<int64_t> mapped;
    for (int64_t a : axes) mapped.push_back(C::nhwc_axis_to_nchw(norm_axis(c, a, 4)));
    // The dims left, NCHW order, as NHWC indices: increasing = same order.
    std::vector<int64_t> left;
    for (int64_t nchw_dim = 0; nchw_dim < 4; ++nchw_dim)
      if (std::find(mapped.begin(), mapped.end(), nchw_dim) == mapped.end()) left.push_back(kToNchw[nchw_dim]);
    const bool ordered = std::is_sorted(left.begin(), left.end());
    if (keep || ordered) {
      ir::Value* y = c.emit(op, {c.in_nchw(0), c.const_i64(mapped, "axes")}, {Attribute::Int("keepdims", keep)});
      c.set_output(0, y, keep);
      return;
    }
  }
  ir::Value* x = c.in(0);
  const int r = c.rank_of(x);
  if (r < 0) c.unsupported("the input's rank must be known");
  for (int64_t& a : axes) a = norm_axis(c, a, r);
  c.set_output(0, c.emit(op, {x, c.const_i64(axes, "axes")}, {Attribute::Int("keepdims", keep)}));
}

void reduce_bool(C& c, const std::string& op) {
  // All / Any: min / max over bools as uint8... expressed through Cast.
  ir::Value* x = c.cast(c.in(0), DType::kInt32);
  std::vector<int64_t> axes = c.const_ints(1, "reduction_indices");
  const int r = c.rank_of(x);
  for (int64_t& a : axes) a = norm_axis(c, a, r);
  ir::Value* y = c.emit(op, {x, c.const_i64(axes, "axes")}, {Attribute::Int("keepdims", c.attr_b("keep_dims", false))});
  c.set_output(0, c.cast(y, DType::kBool));
}

/// StridedSlice with constant begin/end/strides and the five masks, as
/// Slice (+ Reshape for new and shrunk axes).
void strided_slice(C& c) {
  ir::Value* x = c.in(0);
  const Shape in = c.shape_of(x);
  const std::vector<int64_t> begin = c.const_ints(1, "begin"), end = c.const_ints(2, "end"),
                             strides = c.const_ints(3, "strides");
  if (begin.size() != end.size() || begin.size() != strides.size()) c.error("begin, end and strides differ in length");
  if (begin.size() > 62) c.error("a slice spec of " + std::to_string(begin.size()) + " entries (at most 62: the masks are 64-bit)");
  const int64_t bm = c.attr_i("begin_mask", 0), em = c.attr_i("end_mask", 0), elm = c.attr_i("ellipsis_mask", 0),
                nam = c.attr_i("new_axis_mask", 0), sam = c.attr_i("shrink_axis_mask", 0);
  const int64_t r = static_cast<int64_t>(in.size()), n = static_cast<int64_t>(begin.size());
  // Expand the spec over the input's dims.
  int64_t new_axes_after_ellipsis = 0, spec_dims = 0;
  bool seen_ellipsis = false;
  for (int64_t i = 0; i < n; ++i) {
    if (elm & (int64_t{1} << i)) {
      if (seen_ellipsis) c.error("more than one ellipsis");
      seen_ellipsis = true;
    } else if (nam & (int64_t{1} << i)) {
      if (seen_ellipsis) ++new_axes_after_ellipsis;
    } else {
      ++spec_dims;
    }
  }
  (void)new_axes_after_ellipsis;
  std::vector<int64_t> starts, ends, axes, steps;
  Shape final_shape;  // after new axes and shrinks
  int64_t dim = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (elm & bit) {
      const int64_t cover = r - spec_dims;
      for (int64_t k = 0; k < cover; ++k, ++dim) final_shape.push_back(in[dim]);
      continue;
    }
    if (nam & bit) {
      final_shape.push_back(1);
      continue;
    }
    if (dim >= r) c.error("the slice spec has more dims than the input " + shape_str(in));
    const int64_t size = in[dim], st = strides[i];
    if (st == 0) c.error("a stride of 0");
    if (sam & bit) {
      int64_t b = begin[i] < 0 ? begin[i] + size : begin[i];
      if (b < 0 || b >= size) c.error("shrink index " + std::to_string(begin[i]) + " is out of range for " +
                                      std::to_string(size));
      starts.push_back(b), ends.push_back(b + 1), axes.push_back(dim), steps.push_back(1);
      ++dim;
      continue;
    }
    const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
    const int64_t b = (bm & bit) ? (st > 0 ? 0 : big) : begin[i];
    const int64_t e = (em & bit) ? (st > 0 ? big : small) : end[i];
    starts.push_back(b), ends.push_back(e), axes.push_back(dim), steps.push_back(st);
    // Output length per ONNX Slice's clamping (the same as TensorFlow's).
    auto clampv = [&](int64_t v, bool is_end) {
      if (v == big || v == small) return st > 0 ? (is_end ? size : 0) : (is_end ? int64_t{-1} : size - 1);
      if (v < 0) v += size;
      return st > 0 ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
    };
    const int64_t cb = clampv(b, false), ce = clampv(e, true);
    const int64_t len = st > 0 ? std::max<int64_t>(0, (ce - cb + st - 1) / st) : std::max<int64_t>(0, (cb - ce - st - 1) / -st);
    final_shape.push_back(len);
    ++dim;
  }
  for (; dim < r; ++dim) final_shape.push_back(in[dim]);
  ir::Value* y = x;
  if (!starts.empty())
    y = c.emit("Slice", {x, c.const_i64(starts, "starts"), c.const_i64(ends, "ends"), c.const_i64(axes, "axes"),
                         c.const_i64(steps, "steps")});
  if (nam || sam) y = c.emit("Reshape", {y, c.const_i64(final_shape, "shape")});
  c.set_output(0, y);
}

void resize(C& c, bool bilinear) {
  ir::Value* x = c.in_nchw(0);  // images are NHWC in TensorFlow
  const std::vector<int64_t> hw = c.const_ints(1, "size");
  if (hw.size() != 2) c.error("size must have 2 entries");
  for (int64_t v : hw)
    if (v < 1 || v > kMaxImageDim) c.error("size entries must lie in [1, " + std::to_string(kMaxImageDim) + "]");
  const Shape xs = c.shape_of(x);
  const bool ac = c.attr_b("align_corners", false), hp = c.attr_b("half_pixel_centers", false);
  std::vector<Attribute> a;
  if (bilinear) {
    a.push_back(Attribute::String("mode", "linear"));
    a.push_back(Attribute::String("coordinate_transformation_mode", ac ? "align_corners" : hp ? "half_pixel" : "asymmetric"));
  } else {
    a.push_back(Attribute::String("mode", "nearest"));
    a.push_back(Attribute::String("coordinate_transformation_mode",
                                  ac ? "align_corners" : hp ? "tf_half_pixel_for_nn" : "asymmetric"));
    a.push_back(Attribute::String("nearest_mode", ac ? "round_prefer_ceil" : "floor"));
  }
  ir::Value* y = c.emit("Resize", {x, nullptr, nullptr, c.const_i64({xs[0], xs[1], hw[0], hw[1]}, "sizes")}, a);
  c.set_output(0, y, true);
}

void pool(C& c, const std::string& op) {
  ir::Value* x = image_in(c);
  const std::vector<int64_t> k = spatial(c, "ksize", 1), s = spatial(c, "strides", 1);
  const std::vector<int64_t> pads = window_pads(c, c.shape_of(x), k, s, {1, 1});
  std::vector<Attribute> a = {Attribute::Ints("kernel_shape", k), Attribute::Ints("strides", s),
                              Attribute::Ints("pads", pads)};
  if (op == "AveragePool") a.push_back(Attribute::Int("count_include_pad", 0));  // SAME averages the inside only
  bind_nchw(c, c.emit(op, {x}, a));
}

/// TensorFlow's [rank, 2] paddings as ONNX pads (all begins, then all ends),
/// permuted to NCHW when the input is held so.
std::vector<int64_t> onnx_pads(C& c, bool nchw, int64_t rank) {
  const std::vector<int64_t> p = c.const_ints(1, "paddings");
  if (static_cast<int64_t>(p.size()) != 2 * rank) c.error("paddings must be [" + std::to_string(rank) + ", 2]");
  std::vector<int64_t> pads(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t src = nchw ? kToNchw[d] : d;
    pads[d] = p[2 * src];
    pads[rank + d] = p[2 * src + 1];
  }
  return pads;
}

void pad(C& c, const std::string& mode) {
  const bool nchw = c.in_is_nchw(0);
  ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
  const int r = c.rank_of(x);
  if (r < 0) c.unsupported("the input's rank must be known");
  ir::Value* value = nullptr;
  if (c.node->op() == "PadV2") value = c.in(2);
  std::vector<Attribute> a = {Attribute::String("mode", mode)};
  c.set_output(0, c.emit("Pad", {x, c.const_i64(onnx_pads(c, nchw, r), "pads"), value}, a), nchw);
}

void concat(C& c, size_t first, size_t count, size_t axis_input) {
  if (count == 0) c.error("a concatenation needs at least one input besides the axis");
  int64_t axis = c.const_int(axis_input, "axis");
  bool nchw = true;
  for (size_t i = first; i < first + count; ++i) nchw = nchw && (c.in_is_nchw(i) || c.rank_of(c.in(i)) == 4);
  bool any = false;
  for (size_t i = first; i < first + count; ++i) any = any || c.in_is_nchw(i);
  nchw = nchw && any;
  std::vector<ir::Value*> xs;
  for (size_t i = first; i < first + count; ++i) xs.push_back(nchw ? c.in_nchw(i) : c.in(i));
  const int r = c.rank_of(xs[0]);
  if (r < 0) c.unsupported("the inputs' rank must be known");
  axis = norm_axis(c, axis, r);
  if (nchw) axis = C::nhwc_axis_to_nchw(axis);
  c.set_output(0, c.emit("Concat", xs, {Attribute::Int("axis", axis)}), nchw);
}

void split_outputs(C& c, ir::Value* x, int64_t axis, const std::vector<int64_t>& sizes) {
  std::vector<ir::Value*> outs =
      c.emit_n("Split", {x, c.const_i64(sizes, "split")}, {Attribute::Int("axis", axis)}, sizes.size());
  for (size_t k = 0; k < outs.size(); ++k) c.set_output(k, outs[k]);
}

void matmul(C& c, bool ta, bool tb, size_t a_index = 0, size_t b_index = 1) {
  ir::Value* a = c.in(a_index), *b = c.in(b_index);
  auto last2 = [&](ir::Value* v) {
    const int r = c.rank_of(v);
    if (r < 2) c.unsupported("MatMul operands must have rank >= 2");
    std::vector<int64_t> perm(r);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[r - 1], perm[r - 2]);
    return c.transpose(v, perm);
  };
  if (ta) a = last2(a);
  if (tb) b = last2(b);
  c.set_output(0, c.emit("MatMul", {a, b}));
}

// ---- the table -------------------------------------------------------------------------------

std::map<std::string, OpConverter> make_table() {
  std::map<std::string, OpConverter> t;
  // Pass-through.
  for (const char* op : {"Identity", "StopGradient", "Snapshot", "PreventGradient", "EnsureShape", "CheckNumerics"})
    t[op] = [](C& c) { c.set_output(0, c.in_is_nchw(0) ? c.in_nchw(0) : c.in(0), c.in_is_nchw(0)); };
  t["IdentityN"] = [](C& c) {
    for (size_t i = 0; i < c.num_inputs(); ++i) c.set_output(i, c.in_is_nchw(i) ? c.in_nchw(i) : c.in(i), c.in_is_nchw(i));
  };
  t["PlaceholderWithDefault"] = [](C& c) { c.set_output(0, c.in(0)); };

  // Convolutions.
  t["Conv2D"] = [](C& c) { bind_nchw(c, conv2d(c)); };
  t["DepthwiseConv2dNative"] = [](C& c) { bind_nchw(c, depthwise(c)); };
  t["_FusedConv2D"] = [](C& c) { bind_nchw(c, apply_fused_ops(c, conv2d(c))); };
  t["FusedDepthwiseConv2dNative"] = t["_FusedDepthwiseConv2dNative"] = [](C& c) {
    bind_nchw(c, apply_fused_ops(c, depthwise(c)));
  };
  t["Conv2DBackpropInput"] = [](C& c) {
    const std::vector<int64_t> sizes = c.const_ints(0, "input_sizes");
    if (sizes.size() != 4) c.error("input_sizes must have 4 entries");
    for (int64_t v : sizes)
      if (v < 1 || v > kMaxImageDim) c.error("input_sizes entries must lie in [1, " + std::to_string(kMaxImageDim) + "]");
    const bool nhwc = c.nhwc();
    ir::Value* x = nhwc ? c.in_nchw(2) : c.in(2);
    ir::Value* w = c.transpose(c.in(1), {3, 2, 0, 1});  // [kh,kw,Cout,Cin] -> [Cin, Cout, kh, kw]
    const Shape ws = c.shape_of(w), xs = c.shape_of(x);
    const std::vector<int64_t> s = spatial(c, "strides", 1), d = spatial(c, "dilations", 1);
    const std::vector<int64_t> k = {ws[2], ws[3]};
    const int64_t out_h = nhwc ? sizes[1] : sizes[2], out_w = nhwc ? sizes[2] : sizes[3];
    // The forward convolution's padding of the output size decides the pads.
    const Shape out_nchw = {xs[0], ws[1], out_h, out_w};
    std::vector<int64_t> fwd = window_pads(c, out_nchw, k, s, d);
    std::vector<int64_t> pads = {fwd[0], fwd[1], 0, 0}, out_pad = {0, 0};
    const int64_t want[2] = {out_h, out_w};
    for (int i = 0; i < 2; ++i) {
      const int64_t full = (xs[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1;
      const int64_t end = full - pads[i] - want[i];
      if (end >= 0) pads[2 + i] = end;
      else out_pad[i] = -end;
    }
    bind_nchw(c, c.emit("ConvTranspose", {x, w},
                        {Attribute::Ints("strides", s), Attribute::Ints("dilations", d), Attribute::Ints("pads", pads),
                         Attribute::Ints("output_padding", out_pad), Attribute::Ints("kernel_shape", k)}));
  };
  t["BiasAdd"] = t["BiasAddV1"] = [](C& c) {
    if (c.nhwc() && !c.in_is_nchw(0)) {
      c.set_output(0, c.emit("Add", {c.in(0), c.in(1)}));  // the last axis: plain broadcasting
      return;
    }
    bind_nchw(c, add_channel_bias(c, c.nhwc() ? c.in_nchw(0) : c.in(0), c.in(1)));
  };
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"})
    t[op] = [](C& c) {
      if (c.attr_b("is_training", false)) c.unsupported("is_training = true (a training step) is not supported");
      ir::Value* y = c.emit("BatchNormalization", {image_in(c), c.in(1), c.in(2), c.in(3), c.in(4)},
                            {Attribute::Float("epsilon", c.attr_f("epsilon", 1e-4f))});
      bind_nchw(c, y);
    };
  t["MaxPool"] = [](C& c) { pool(c, "MaxPool"); };
  t["AvgPool"] = [](C& c) { pool(c, "AveragePool"); };
  t["ResizeBilinear"] = [](C& c) { resize(c, true); };
  t["ResizeNearestNeighbor"] = [](C& c) { resize(c, false); };
  t["DepthToSpace"] = [](C& c) {
    bind_nchw(c, c.emit("DepthToSpace", {image_in(c)},
                        {Attribute::Int("blocksize", c.attr_i("block_size", 2)), Attribute::String("mode", "DCR")}));
  };
  t["SpaceToDepth"] = [](C& c) {
    bind_nchw(c, c.emit("SpaceToDepth", {image_in(c)}, {Attribute::Int("blocksize", c.attr_i("block_size", 2))}));
  };

  // Dense.
  t["MatMul"] = [](C& c) { matmul(c, c.attr_b("transpose_a", false), c.attr_b("transpose_b", false)); };
  t["BatchMatMul"] = t["BatchMatMulV2"] = t["BatchMatMulV3"] = [](C& c) {
    matmul(c, c.attr_b("adj_x", false), c.attr_b("adj_y", false));
  };
  t["_FusedMatMul"] = [](C& c) {
    matmul(c, c.attr_b("transpose_a", false), c.attr_b("transpose_b", false));
    ir::Value* y = c.tensors()[c.tensor_name(0)].v;
    size_t arg = 2;
    for (const std::string& op : c.attr_strings("fused_ops")) {
      if (op == "BiasAdd") y = c.emit("Add", {y, c.in(arg++)});
      else if (op == "Prelu") y = activation(c, op, y, c.in(arg++));  // alpha along the last axis
      else y = activation(c, op, y);
    }
    c.set_output(0, y);
  };

  // Activations and unary math (layout-free).
  t["Relu"] = [](C& c) { unary(c, "Relu"); };
  t["Relu6"] = [](C& c) {
    const DType dt = c.in(0)->type.dtype;
    const bool nchw = c.in_is_nchw(0);
    ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
    c.set_output(0, c.emit("Clip", {x, c.scalar_of(dt, 0, "zero"), c.scalar_of(dt, 6, "six")}), nchw);
  };
  t["Elu"] = [](C& c) { unary(c, "Elu", {Attribute::Float("alpha", 1.f)}); };
  t["Selu"] = [](C& c) { unary(c, "Selu"); };
  t["LeakyRelu"] = [](C& c) { unary(c, "LeakyRelu", {Attribute::Float("alpha", c.attr_f("alpha", 0.2f))}); };
  for (const auto& [tf_op, onnx_op] : std::vector<std::pair<const char*, const char*>>{
           {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Softplus", "Softplus"}, {"Softsign", "Softsign"},
           {"Exp", "Exp"}, {"Log", "Log"}, {"Sqrt", "Sqrt"}, {"Neg", "Neg"}, {"Abs", "Abs"}, {"Floor", "Floor"},
           {"Ceil", "Ceil"}, {"Round", "Round"}, {"Sin", "Sin"}, {"Cos", "Cos"}, {"Tan", "Tan"}, {"Erf", "Erf"},
           {"Sign", "Sign"}, {"Reciprocal", "Reciprocal"}, {"Inv", "Reciprocal"}, {"LogicalNot", "Not"},
           {"IsNan", "IsNaN"}, {"Asin", "Asin"}, {"Acos", "Acos"}, {"Atan", "Atan"}, {"Sinh", "Sinh"},
           {"Cosh", "Cosh"}})
    t[tf_op] = [op = std::string(onnx_op)](C& c) { unary(c, op); };
  t["Rsqrt"] = [](C& c) {
    const bool nchw = c.in_is_nchw(0);
    ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
    c.set_output(0, c.emit("Reciprocal", {c.emit("Sqrt", {x})}), nchw);
  };
  t["Square"] = [](C& c) {
    const bool nchw = c.in_is_nchw(0);
    ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
    c.set_output(0, c.emit("Mul", {x, x}), nchw);
  };
  t["Cast"] = [](C& c) {
    const bool nchw = c.in_is_nchw(0);
    ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
    c.set_output(0, c.cast(x, c.attr_type("DstT", DType::kFloat32)), nchw);
  };
  t["Prelu"] = [](C& c) { binary(c, "PRelu"); };
  t["ClipByValue"] = [](C& c) {
    const bool nchw = c.in_is_nchw(0);
    ir::Value* x = nchw ? c.in_nchw(0) : c.in(0);
    c.set_output(0, c.emit("Clip", {x, c.in(1), c.in(2)}), nchw);
  };

  // Binary (NumPy broadcasting, as TensorFlow's).
  for (const auto& [tf_op, onnx_op] : std::vector<std::pair<const char*, const char*>>{
           {"Add", "Add"}, {"AddV2", "Add"}, {"Sub", "Sub"}, {"Mul", "Mul"}, {"RealDiv", "Div"}, {"Maximum", "Max"},
           {"Minimum", "Min"}, {"Pow", "Pow"}, {"Greater", "Greater"}, {"Less", "Less"}, {"Equal", "Equal"},
           {"GreaterEqual", "GreaterOrEqual"}, {"LessEqual", "LessOrEqual"}, {"LogicalAnd", "And"},
           {"LogicalOr", "Or"}, {"BitwiseAnd", "BitwiseAnd"}, {"BitwiseOr", "BitwiseOr"}, {"BitwiseXor", "BitwiseXor"}})
    t[tf_op] = [op = std::string(onnx_op)](C& c) { binary(c, op); };
  t["Div"] = [](C& c) {  // integer Div truncates toward zero in TensorFlow as in ONNX
    binary(c, "Div");
  };
  t["NotEqual"] = [](C& c) {
    std::vector<ir::Value*> v;
    const bool nchw = c.broadcast_inputs({0, 1}, v);
    c.set_output(0, c.emit("Not", {c.emit("Equal", v)}), nchw);
  };
  t["SquaredDifference"] = [](C& c) {
    std::vector<ir::Value*> v;
    const bool nchw = c.broadcast_inputs({0, 1}, v);
    ir::Value* d = c.emit("Sub", v);
    c.set_output(0, c.emit("Mul", {d, d}), nchw);
  };
  t["FloorDiv"] = [](C& c) {
    std::vector<ir::Value*> v;
    const bool nchw = c.broadcast_inputs({0, 1}, v);
    c.set_output(0, floor_div(c, v[0], v[1]), nchw);
  };
  t["FloorMod"] = [](C& c) {
    std::vector<ir::Value*> v;
    const bool nchw = c.broadcast_inputs({0, 1}, v);
    c.set_output(0, floor_mod(c, v[0], v[1]), nchw);
  };
  t["AddN"] = [](C& c) {
    std::vector<size_t> idx(c.num_inputs());
    std::iota(idx.begin(), idx.end(), 0);
    std::vector<ir::Value*> v;
    const bool nchw = c.broadcast_inputs(idx, v);
    c.set_output(0, v.size() == 1 ? v[0] : c.emit("Sum", v), nchw);
  };
  t["Select"] = t["SelectV2"] = [](C& c) {
    ir::Value* cond = c.in(0);
    ir::Value* x = c.in(1);
    // Select (v1): a vector condition picks rows of higher-rank x and y.
    if (c.node->op() == "Select" && c.rank_of(cond) == 1 && c.rank_of(x) > 1) {
      Shape s(static_cast<size_t>(c.rank_of(x)), 1);
      s[0] = -1;
      cond = c.emit("Reshape", {cond, c.const_i64(s, "shape")});
    }
    c.set_output(0, c.emit("Where", {cond, x, c.in(2)}));
  };

  // Reductions and normalizations.
  t["Mean"] = [](C& c) { reduce(c, "ReduceMean"); };
  t["Sum"] = [](C& c) { reduce(c, "ReduceSum"); };
  t["Max"] = [](C& c) { reduce(c, "ReduceMax"); };
  t["Min"] = [](C& c) { reduce(c, "ReduceMin"); };
  t["Prod"] = [](C& c) { reduce(c, "ReduceProd"); };
  t["All"] = [](C& c) { reduce_bool(c, "ReduceMin"); };
  t["Any"] = [](C& c) { reduce_bool(c, "ReduceMax"); };
  t["ArgMax"] = t["ArgMin"] = [](C& c) {
    ir::Value* x = c.in(0);
    const int64_t axis = norm_axis(c, c.const_int(1, "dimension"), c.rank_of(x));
    ir::Value* y = c.emit(c.node->op(), {x}, {Attribute::Int("axis", axis), Attribute::Int("keepdims", 0)});
    c.set_output(0, c.cast(y, c.attr_type("output_type", DType::kInt64)));
  };
  t["Softmax"] = [](C& c) { c.set_output(0, c.emit("Softmax", {c.in(0)}, {Attribute::Int("axis", -1)})); };
  t["LogSoftmax"] = [](C& c) { c.set_output(0, c.emit("LogSoftmax", {c.in(0)}, {Attribute::Int("axis", -1)})); };

  // Shapes.
  t["Reshape"] = [](C& c) {
    c.set_output(0, c.emit("Reshape", {c.in(0), c.to_i64(c.in(1))}, {Attribute::Int("allowzero", 1)}));
  };
  t["Squeeze"] = [](C& c) {
    ir::Value* x = c.in(0);
    std::vector<int64_t> dims = c.attr_ints("squeeze_dims");
    if (dims.empty()) dims = c.attr_ints("axis");
    const Shape s = c.shape_of(x);
    if (dims.empty())
      for (size_t d = 0; d < s.size(); ++d)
        if (s[d] == 1) dims.push_back(static_cast<int64_t>(d));
    for (int64_t& d : dims) d = norm_axis(c, d, static_cast<int64_t>(s.size()));
    c.set_output(0, dims.empty() ? x : c.emit("Squeeze", {x, c.const_i64(dims, "axes")}));
  };
  t["ExpandDims"] = [](C& c) {
    ir::Value* x = c.in(0);
    const int r = c.rank_of(x);
    int64_t d = c.const_int(1, "dim");
    if (d < -(r + 1) || d > r) c.error("dim " + std::to_string(d) + " is out of range");
    if (d < 0) d += r + 1;
    c.set_output(0, c.emit("Unsqueeze", {x, c.const_i64({d}, "axes")}));
  };
  t["Transpose"] = [](C& c) {
    std::vector<int64_t> perm = c.const_ints(1, "perm");
    // A transpose of an NCHW-held tensor composes with the layout one.
    if (c.in_is_nchw(0) && perm.size() == 4) {
      std::vector<int64_t> p(4);
      for (size_t i = 0; i < 4; ++i) p[i] = C::nhwc_axis_to_nchw(perm[i]);
      c.set_output(0, c.transpose(c.in_nchw(0), p));
      return;
    }
    c.set_output(0, c.transpose(c.in(0), perm));
  };
  t["Shape"] = [](C& c) {
    c.set_output(0, c.cast(c.emit("Shape", {c.in(0)}), c.attr_type("out_type", DType::kInt32)));
  };
  t["Size"] = [](C& c) {
    c.set_output(0, c.cast(c.emit("Size", {c.in(0)}), c.attr_type("out_type", DType::kInt32)));
  };
  t["Rank"] = [](C& c) {
    const int r = c.rank_of(c.in(0));
    if (r < 0) c.unsupported("the input's rank must be known");
    c.set_output(0, c.scalar_of(DType::kInt32, r, "rank"));
  };
  t["StridedSlice"] = strided_slice;
  t["Slice"] = [](C& c) {
    ir::Value* x = c.in(0);
    const Shape s = c.shape_of(x);
    const std::vector<int64_t> begin = c.const_ints(1, "begin"), size = c.const_ints(2, "size");
    if (begin.size() != s.size() || size.size() != s.size()) c.error("begin and size must have one entry per dim");
    std::vector<int64_t> ends(s.size()), axes(s.size());
    for (size_t d = 0; d < s.size(); ++d) {
      ends[d] = size[d] < 0 ? s[d] : begin[d] + size[d];
      axes[d] = static_cast<int64_t>(d);
    }
    c.set_output(0, c.emit("Slice", {x, c.const_i64(begin, "starts"), c.const_i64(ends, "ends"), c.const_i64(axes, "axes")}));
  };
  t["Pad"] = [](C& c) { pad(c, "constant"); };
  t["PadV2"] = [](C& c) { pad(c, "constant"); };
  t["MirrorPad"] = [](C& c) {
    const std::string mode = c.attr_s("mode", "REFLECT");
    if (mode != "REFLECT") c.unsupported("MirrorPad mode '" + mode + "' is not supported (REFLECT is)");
    pad(c, "reflect");
  };
  t["ConcatV2"] = [](C& c) { concat(c, 0, c.num_inputs() - 1, c.num_inputs() - 1); };
  t["Concat"] = [](C& c) { concat(c, 1, c.num_inputs() - 1, 0); };
  t["Pack"] = [](C& c) {
    const int r = c.rank_of(c.in(0));
    int64_t axis = c.attr_i("axis", 0);
    if (axis < -(r + 1) || axis > r) c.error("axis out of range");
    if (axis < 0) axis += r + 1;
    std::vector<ir::Value*> xs;
    for (size_t i = 0; i < c.num_inputs(); ++i) xs.push_back(c.emit("Unsqueeze", {c.in(i), c.const_i64({axis}, "axes")}));
    c.set_output(0, xs.size() == 1 ? xs[0] : c.emit("Concat", xs, {Attribute::Int("axis", axis)}));
  };
  t["Unpack"] = [](C& c) {
    ir::Value* x = c.in(0);
    const Shape s = c.shape_of(x);
    const int64_t axis = norm_axis(c, c.attr_i("axis", 0), static_cast<int64_t>(s.size()));
    const int64_t n = s[axis];
    if (n > kMaxSplitOutputs) c.unsupported("unpacking " + std::to_string(n) + " outputs (at most " + std::to_string(kMaxSplitOutputs) + ")");
    if (n == 0) c.error("unpacking an axis of size 0");
    if (n == 1) {
      c.set_output(0, c.emit("Squeeze", {x, c.const_i64({axis}, "axes")}));
      return;
    }
    std::vector<ir::Value*> parts = c.emit_n("Split", {x, c.const_i64(std::vector<int64_t>(n, 1), "split")},
                                             {Attribute::Int("axis", axis)}, static_cast<size_t>(n));
    for (size_t k = 0; k < parts.size(); ++k)
      c.set_output(k, c.emit("Squeeze", {parts[k], c.const_i64({axis}, "axes")}));
  };
  t["Split"] = [](C& c) {
    ir::Value* x = c.in(1);
    const Shape s = c.shape_of(x);
    const int64_t axis = norm_axis(c, c.const_int(0, "split_dim"), static_cast<int64_t>(s.size()));
    const int64_t n = c.attr_i("num_split", 1);
    if (n > kMaxSplitOutputs) c.unsupported("num_split " + std::to_string(n) + " (at most " + std::to_string(kMaxSplitOutputs) + ")");
    if (n <= 0 || s[axis] % n != 0) c.error("cannot split " + std::to_string(s[axis]) + " into " + std::to_string(n));
    split_outputs(c, x, axis, std::vector<int64_t>(n, s[axis] / n));
  };
  t["SplitV"] = [](C& c) {
    ir::Value* x = c.in(0);
    const Shape s = c.shape_of(x);
    const int64_t axis = norm_axis(c, c.const_int(2, "split_dim"), static_cast<int64_t>(s.size()));
    std::vector<int64_t> sizes = c.const_ints(1, "size_splits");
    if (sizes.empty() || static_cast<int64_t>(sizes.size()) > kMaxSplitOutputs)
      c.error("size_splits must have 1 to " + std::to_string(kMaxSplitOutputs) + " entries, got " + std::to_string(sizes.size()));
    int64_t known = 0, unknown = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) {
        if (unknown >= 0) c.error("more than one -1 in size_splits");
        unknown = static_cast<int64_t>(i);
      } else {
        known += sizes[i];
      }
    }
    if (unknown >= 0) sizes[unknown] = s[axis] - known;
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v < 0 || v > s[axis]) c.error("size_splits do not split " + std::to_string(s[axis]));
      total += v;
    }
    if (total != s[axis]) c.error("size_splits add up to " + std::to_string(total) + ", not " + std::to_string(s[axis]));
    split_outputs(c, x, axis, sizes);
  };
  t["Tile"] = [](C& c) { c.set_output(0, c.emit("Tile", {c.in(0), c.to_i64(c.in(1))})); };
  t["Fill"] = [](C& c) { c.set_output(0, c.emit("Expand", {c.in(1), c.to_i64(c.in(0))})); };
  t["BroadcastTo"] = [](C& c) { c.set_output(0, c.emit("Expand", {c.in(0), c.to_i64(c.in(1))})); };
  t["ZerosLike"] = t["OnesLike"] = [](C& c) {
    ir::Value* x = c.in(0);
    ir::Value* v = c.scalar_of(x->type.dtype, c.node->op() == "OnesLike" ? 1 : 0, "value");
    c.set_output(0, c.emit("Expand", {v, c.emit("Shape", {x})}));
  };
  t["Range"] = [](C& c) { c.set_output(0, c.emit("Range", {c.in(0), c.in(1), c.in(2)})); };

  // Indexing.
  t["GatherV2"] = t["Gather"] = [](C& c) {
    if (c.attr_i("batch_dims", 0) != 0) c.unsupported("batch_dims != 0 is not supported");
    ir::Value* x = c.in(0);
    int64_t axis = c.node->op() == "GatherV2" ? c.const_int(2, "axis") : 0;
    axis = norm_axis(c, axis, c.rank_of(x));
    c.set_output(0, c.emit("Gather", {x, c.in(1)}, {Attribute::Int("axis", axis)}));
  };
  t["GatherNd"] = [](C& c) { c.set_output(0, c.emit("GatherND", {c.in(0), c.to_i64(c.in(1))})); };
  t["TopKV2"] = [](C& c) {
    ir::Value* k = c.emit("Reshape", {c.to_i64(c.in(1)), c.const_i64({1}, "shape")});
    std::vector<ir::Value*> o = c.emit_n("TopK", {c.in(0), k}, {Attribute::Int("axis", -1),
                                                               Attribute::Int("sorted", c.attr_b("sorted", true))}, 2);
    c.set_output(0, o[0]);
    c.set_output(1, c.cast(o[1], DType::kInt32));
  };
  t["SparseToDense"] = [](C& c) {
    // dense = default_value everywhere, sparse_values at sparse_indices.
    ir::Value* idx = c.to_i64(c.in(0));
    ir::Value* shape = c.to_i64(c.in(1));
    ir::Value* values = c.in(2);
    const int ir = c.rank_of(idx);
    if (ir == 0) idx = c.emit("Reshape", {idx, c.const_i64({1, 1}, "shape")});
    else if (ir == 1) idx = c.emit("Unsqueeze", {idx, c.const_i64({1}, "axes")});
    const Shape is = c.shape_of(idx);
    if (c.rank_of(values) == 0) values = c.emit("Expand", {values, c.const_i64({is[0]}, "n")});
    ir::Value* dense = c.emit("Expand", {c.in(3), shape});
    c.set_output(0, c.emit("ScatterND", {dense, idx, values}));
  };
  t["Where"] = [](C& c) {  // one input: the coordinates of the true elements, [n, rank] int64
    c.set_output(0, c.transpose(c.emit("NonZero", {c.in(0)}), {1, 0}));
  };
  for (const char* op : {"NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5"})
    t[op] = [](C& c) {
      const std::string op_name = c.node->op();
      if (op_name == "NonMaxSuppressionV4" && c.attr_b("pad_to_max_output_size", false))
        c.unsupported("pad_to_max_output_size = true is not supported");
      if (op_name == "NonMaxSuppressionV5" && c.attr_b("pad_to_max_output_size", false))
        c.unsupported("pad_to_max_output_size = true is not supported");
      if (op_name == "NonMaxSuppressionV5") {
        const Tensor& sigma = c.const_in(5, "soft_nms_sigma");
        if (sigma.dtype() != DType::kFloat32 || sigma.numel() != 1) c.error("soft_nms_sigma must be one float32");
        if (sigma.as<float>()[0] != 0.f) c.unsupported("soft NMS (soft_nms_sigma != 0) is not supported");
      }
      ir::Value* boxes = c.emit("Unsqueeze", {c.in(0), c.const_i64({0}, "axes")});
      ir::Value* scores = c.emit("Unsqueeze", {c.in(1), c.const_i64({0, 1}, "axes")});
      auto one = [&](size_t i) { return c.emit("Reshape", {c.cast(c.in(i), DType::kFloat32), c.const_i64({1}, "shape")}); };
      ir::Value* max_out = c.emit("Reshape", {c.to_i64(c.in(2)), c.const_i64({1}, "shape")});
      ir::Value* score_th = c.num_inputs() > 4 ? one(4) : nullptr;
      ir::Value* sel = c.emit("NonMaxSuppression", {boxes, scores, max_out, one(3), score_th});
      // Column 2 of [K, 3] (batch, class, box) is the box index.
      ir::Value* col = c.emit("Gather", {sel, c.const_i64({2}, "col")}, {Attribute::Int("axis", 1)});
      ir::Value* idx = c.emit("Reshape", {col, c.const_i64({-1}, "shape")});
      c.set_output(0, c.cast(idx, DType::kInt32));
      if (op_name == "NonMaxSuppressionV5") {
        c.set_output(1, c.emit("Gather", {c.in(1), idx}, {Attribute::Int("axis", 0)}));
        c.set_output(2, c.cast(c.emit("Size", {idx}), DType::kInt32));
      } else if (op_name == "NonMaxSuppressionV4") {
        c.set_output(1, c.cast(c.emit("Size", {idx}), DType::kInt32));
      }
    };
  return t;
}

const std::map<std::string, OpConverter>& table() {
  static const std::map<std::string, OpConverter> t = make_table();
  return t;
}

}  // namespace

const OpConverter* find_converter(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> r = {"Const", "Placeholder", "NoOp"};
  for (const auto& [op, f] : table()) r.push_back(op);
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace gec::frontend::tf
