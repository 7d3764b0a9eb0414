// Conv (ONNX Conv-11) and com.graphengine::FusedConv (ops/fused_conv.h) on
// CPU through oneDNN convolution_forward, or for a few plain forms one oneDNN
// MatMul (MatmulForm below; dot products, dot_simd.h, where the output has a
// handful of positions per image) or our own depthwise loop.
//
// src/dst are in plain NC[D]HW layout (what the arena holds) unless the
// execution plan's layouts (KernelConfig, chosen by schedule/
// layout_assignment.cc) make them nChw16c or nhwc (ops/layout.h: then
// oneDNN's direct JIT or brgemm convolutions run instead of the gemm one);
// src and dst share one layout except for a 1-3 channel src, which may stay
// plain under a non-plain dst; Z always has dst's
// layout (the layout assignment guarantees it; the sum post-op adds it byte by byte). The weights
// use the layout oneDNN prefers (format_tag::any), reordered once into a
// kernel-owned buffer. Groups (incl. depthwise) map to oneDNN's 5-D/6-D
// grouped weights {G, OC/G, IC/G, k...}, which is the ONNX [M, C/G, k...]
// buffer reinterpreted, so the user-layout descriptor needs no copy.
//
// FusedConv runs its residual Add as a oneDNN `sum` post-op (dst += Z, so Z
// is copied into Y first unless Y already is Z's buffer; in oneDNN's gemm
// convolution that is the GEMM's beta = 1, free). The activation is one or
// two `eltwise` post-ops when the chosen implementation applies them in its
// JIT code (nChw16c / nhwc convolutions). oneDNN 2.6's gemm-based convolution
// on plain NCHW, which is what our layout gets almost always, applies them
// element by element instead (measured 17x slower than the conv itself on a
// mobilenet_v2 1x1 conv); there the activation runs in place on Y right
// after the convolution (ActivationEpilogue: a vectorized loop for the
// piecewise-linear ones, the ai.onnx kernel for the others).
// The kernel variant (KernelConfig::variant "post_op" / "kernel") forces
// either way (tests, measurements). The variants chosen at compile time
// (conv_variant_choice): "winograd" runs oneDNN's Winograd convolution,
// "winograd_nhwc" our own (winograd_simd.h; CPUs without AVX-512),
// "direct" our own loops, "nhwc" an nChw16c convolution as oneDNN's nhwc
// one between reorders.
// Known differences of the eltwise post-ops from the separate ONNX ops:
// relu/clip turn a NaN into 0 / the lower bound (ONNX propagates NaN);
// exp/tanh-based ones use oneDNN's polynomial approximations (a few ulp).
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dot_simd.h"
#include "kernels/cpu/common/gemm_simd.h"
#include "kernels/cpu/common/layout_md.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/cpu/nn/direct_conv_simd.h"
#include "kernels/cpu/nn/winograd_simd.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/kernel.h"
#include "ops/fused_conv.h"
#include "ops/layout.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {

namespace depthwise_simd {
/// One NCHW plane of a depthwise convolution (depthwise_simd.cc).
void depthwise_plane(const float* x, int64_t H, int64_t W, const float* k, int64_t kh, int64_t kw, int64_t sh,
                     int64_t sw, int64_t ph, int64_t pw, float bias, float* y, int64_t OH, int64_t OW);
}  // namespace depthwise_simd

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using alg = dnnl::algorithm;

/// dst[0, n) = src[0, n), in parallel chunks for large tensors.
void copy_floats(float* dst, const float* src, int64_t n, int num_threads) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, chunks > 1 ? num_threads : 1, [&](int64_t c) {
    const int64_t begin = c * kChunk;
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(std::min(kChunk, n - begin)) * sizeof(float));
  });
}

/// The oneDNN post-ops computing act(y + Z) (sum first when `residual`),
/// after those `po` holds already. Each activation maps to eltwise
/// algorithms with the same formula (fused_conv.h); HardSigmoid and Selu
/// need two.
dnnl::post_ops make_post_ops(const ops::FusedActivation& a, bool residual, dnnl::post_ops po = dnnl::post_ops()) {
  if (residual) po.append_sum(1.f);
  const std::string& op = a.op;
  auto elt = [&po](alg k, float alpha = 0.f, float beta = 0.f) { po.append_eltwise(1.f, k, alpha, beta); };
  if (op.empty()) {
  } else if (op == "Relu") {
    elt(alg::eltwise_relu);
  } else if (op == "LeakyRelu") {
    elt(alg::eltwise_relu, a.alpha);  // x > 0 ? x : alpha * x
  } else if (op == "Clip") {
    elt(alg::eltwise_clip_v2, a.alpha, a.beta);  // min(max(x, alpha), beta), alpha <= beta
  } else if (op == "Sigmoid") {
    elt(alg::eltwise_logistic);
  } else if (op == "Tanh") {
    elt(alg::eltwise_tanh);
  } else if (op == "HardSigmoid") {
    elt(alg::eltwise_linear, a.alpha, a.beta);
    elt(alg::eltwise_clip_v2, 0.f, 1.f);
  } else if (op == "HardSwish") {
    elt(alg::eltwise_hardswish);  // oneDNN 2.6: x * relu6(x + 3) / 6
  } else if (op == "Elu") {
    elt(alg::eltwise_elu, a.alpha);
  } else if (op == "Selu") {
    elt(alg::eltwise_elu, a.alpha);
    elt(alg::eltwise_linear, a.beta, 0.f);
  } else if (op == "Softplus") {
    elt(alg::eltwise_soft_relu);  // oneDNN 2.6: ln(1 + e^x)
  } else if (op == "Mish") {
    elt(alg::eltwise_mish);
  } else if (op == "Swish") {
    elt(alg::eltwise_swish, a.alpha);  // oneDNN 2.6: x / (1 + e^(-alpha x))
  } else {
    fail(ErrorCode::kInternal, "conv post-ops: unmapped activation '" + op + "'");
  }
  return po;
}

/// Which of the piecewise-linear loops (elementwise_simd.h) computes the
/// fused activation `act`, with its parameters: Clip (min, max), LeakyRelu
/// (alpha), HardSigmoid (alpha, beta), HardSwish (1/6, 0.5, HardSwish-14);
/// false for the other activations.
bool piecewise_activation(const ops::FusedActivation& act, simd::PiecewiseOp* op, float* a, float* b) {
  *a = act.alpha, *b = act.beta;
  if (act.op == "Clip") {
    *op = simd::PiecewiseOp::kClip;
  } else if (act.op == "LeakyRelu") {
    *op = simd::PiecewiseOp::kLeakyRelu;
  } else if (act.op == "HardSigmoid") {
    *op = simd::PiecewiseOp::kHardSigmoid;
  } else if (act.op == "HardSwish") {
    *op = simd::PiecewiseOp::kHardSwish;
    *a = 1.f / 6.f;
    *b = 0.5f;
  } else {
    return false;
  }
  return true;
}

/// The activation run in place on Y right after the convolution, with ONNX's
/// NaN propagation: Clip/LeakyRelu/HardSigmoid/HardSwish as a loop here, the
/// others by their unary kernel (ai.onnx, or com.graphengine::Swish;
/// Relu/Sigmoid/Tanh/Swish vectorized). Used where the chosen
/// oneDNN implementation would apply eltwise post-ops one element at a time:
/// oneDNN 2.6's gemm-based convolution on plain NCHW does, and turned a
/// 0.35 ms 1x1 conv + Relu6 of mobilenet_v2 into 6 ms.
class ActivationEpilogue {
 public:
  explicit ActivationEpilogue(const ops::FusedActivation& a) : act_(a) {
    ir::Value* y = g_.add_value("y", ir::TensorType{DType::kFloat32, false, {}});
    ir::Node* n = ops::add_activation_node(g_, a, y, "activation");
    kernel_ = create_kernel(*n);
    for (size_t i = 1; i < n->inputs().size(); ++i) bounds_.push_back(n->input(i)->constant->view());
    ctx_.inputs.assign(1, nullptr);
    for (TensorView& b : bounds_) ctx_.inputs.push_back(&b);
    ctx_.outputs.assign(1, nullptr);
  }

  void run(TensorView& y, int num_threads) {
    if (piecewise_linear(y.as<float>(), y.numel(), num_threads)) return;
    ctx_.inputs[0] = &y;  // in place: every unary kernel reads element i before writing it
    ctx_.outputs[0] = &y;
    ctx_.num_threads = num_threads;
    kernel_->run(ctx_);
  }

 private:
  /// Clip, LeakyRelu, HardSigmoid, HardSwish by the branch-free vector
  /// loop of elementwise_simd.h (the ai.onnx HardSwish kernel used to be a
  /// scalar one with branches, ~5x slower); NaN stays NaN, as ONNX says.
  /// False for the other activations.
  bool piecewise_linear(float* y, int64_t n, int num_threads) const {
    simd::PiecewiseOp op;
    float a = 0.f, b = 0.f;
    if (!piecewise_activation(act_, &op, &a, &b)) return false;
    parallel_ranges(n, num_threads, [&](int64_t begin, int64_t end) {
      simd::piecewise_f32(op, a, b, y + begin, y + begin, end - begin);
    });
    return true;
  }


  ops::FusedActivation act_;
  ir::Graph g_;
  std::unique_ptr<Kernel> kernel_;
  std::vector<TensorView> bounds_;  // Clip's min / max
  KernelContext ctx_;
};

/// True when `pd`'s implementation applies eltwise post-ops element by
/// element rather than in its JIT code (oneDNN 2.6: gemm-based and
/// reference convolutions).
bool slow_eltwise_post_ops(const dnnl::convolution_forward::primitive_desc& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.find("gemm") != std::string::npos || impl.find("ref") != std::string::npos;
}

/// ONNX's W [M, C/group, k...] as oneDNN's dims: [group, M/group, C/group, k...] when grouped.
Shape onednn_weight_dims(const Shape& ws, int64_t group) {
  if (group <= 1) return ws;
  Shape d{group, ws[0] / group};
  d.insert(d.end(), ws.begin() + 1, ws.end());
  return d;
}

/// The oneDNN convolution for X `xs`, W `ws` (ONNX [M, C/group, k...]), Y
/// `ys`, src/dst in the given layouts (ops/layout.h); weights in the layout
/// oneDNN prefers.
/// Shared by the kernel and the compile-time layout query.
/// `any_activations`: src and dst in the layout oneDNN prefers
/// (format_tag::any) instead of `src_layout` and `dst_layout`.
/// `algorithm`: convolution_direct, or convolution_winograd (which oneDNN
/// 2.6 offers for 3x3 stride-1 convolutions in nChw16c on AVX-512 only;
/// elsewhere the primitive descriptor throws).
dnnl::convolution_forward::desc conv_desc(const ops::WindowAttrs& raw, int64_t group, const Shape& xs, const Shape& ws,
                                          bool has_bias, const Shape& ys, ops::Layout src_layout, ops::Layout dst_layout,
                                          const std::string& who, bool any_activations = false,
                                          dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
  const size_t sp = xs.size() - 2;
  std::vector<int64_t> wk(ws.begin() + 2, ws.end());
  ops::WindowAttrs a = ops::resolve_window_attrs(raw, sp, &wk, who);
  ops::WindowGeom g = ops::window_geometry(who, a, Shape(xs.begin() + 2, xs.end()));
  memory::dims strides(sp), dil(sp), pl(sp), pr(sp);
  for (size_t i = 0; i < sp; ++i) {
    strides[i] = a.strides[i];
    dil[i] = a.dilations[i] - 1;  // oneDNN counts the gaps
    pl[i] = g.pad_begin[i];
    // The ONNX end padding already gives oneDNN's floor formula the right
    // size; the effective one can only be smaller (a dropped partial window).
    pr[i] = std::max<int64_t>(
        g.pad_end[i], ops::effective_pad_end(xs[i + 2], ys[i + 2], a.kernel[i], a.strides[i], a.dilations[i], pl[i]));
  }
  const Shape wdims = onednn_weight_dims(ws, group);
  const memory::desc src = any_activations ? memory::desc(to_dims(xs), memory::data_type::f32, tag::any)
                                           : activation_md(xs, src_layout, who),
                     dst = any_activations ? memory::desc(to_dims(ys), memory::data_type::f32, tag::any)
                                           : activation_md(ys, dst_layout, who);
  const memory::desc any_w(to_dims(wdims), memory::data_type::f32, tag::any);
  using cf = dnnl::convolution_forward;
  return has_bias ? cf::desc(dnnl::prop_kind::forward_inference, algorithm, src, any_w, plain_md({ws[0]}), dst,
                             strides, dil, pl, pr)
                  : cf::desc(dnnl::prop_kind::forward_inference, algorithm, src, any_w, dst, strides, dil, pl, pr);
}

/// Output channels below which a spatial (non-1x1) convolution in nhwc
/// takes oneDNN's direct JIT kernel (jit:avx512_core) over its brgemm one:
/// with fewer than two 16-lane blocks of outputs the brgemm kernels gain
/// nothing (measured here, 2 threads, 3x3 of 8-24 output channels over
/// 20x20-160x160 with 24-256 input channels: 0.91-1.07x the brgemm time,
/// 1.00 on average), while creating them costs 1.4-2.2x as much
/// (0.8-4.0 ms against 0.4-3.2 ms: brgconv generates a kernel per tail
/// and batch size). At 40-96 output channels the JIT kernel was 2-20%
/// slower, and 1x1 convolutions keep brgconv_1x1 (jit_1x1 5-25% slower).
constexpr int64_t kCheapCreationMaxOutputChannels = 32;

/// `pd`, or the direct JIT implementation that follows it in oneDNN's list
/// when the rule above prefers that one (nhwc src and dst, ungrouped, a
/// kernel larger than 1x1, fewer than kCheapCreationMaxOutputChannels
/// outputs) and oneDNN offers it for these descriptors.
dnnl::convolution_forward::primitive_desc prefer_cheap_creation(dnnl::convolution_forward::primitive_desc pd,
                                                                const Shape& ws, int64_t group,
                                                                ops::Layout src_layout, ops::Layout dst_layout) {
  if (src_layout != ops::Layout::kNhwc || dst_layout != ops::Layout::kNhwc || group != 1 || ws.size() != 4 ||
      ws[0] >= kCheapCreationMaxOutputChannels || (ws[2] == 1 && ws[3] == 1) ||
      !is_brgemm_implementation(pd.impl_info_str()))
    return pd;
  dnnl::convolution_forward::primitive_desc next = pd;
  while (next.next_impl()) {
    const std::string impl = next.impl_info_str();
    if (impl.rfind("jit:", 0) == 0) return next;
    if (is_reference_implementation(impl) || impl.find("gemm") != std::string::npos) break;
  }
  return pd;
}

/// One tap (kh, kw) of a 2-D convolution's window and the output pixels of
/// each image whose window puts it inside X (not in the zero padding): rows
/// [h0, h1) x columns [w0, w1).
struct TapRegion {
  int64_t kh = 0, kw = 0, h0 = 0, h1 = 0, w0 = 0, w1 = 0;
  int64_t pixels() const { return (h1 - h0) * (w1 - w0); }
};

/// The taps of a 2-D convolution with X [N, IC, H, W], W [OC, IC, KH, KW],
/// Y [N, OC, OH, OW] (window resolved as ONNX Conv-11 says) that reach
/// inside X for some output pixel, and the share of (tap, output pixel)
/// pairs that do: the rest multiply the zero padding.
struct TapPlan {
  int64_t IC = 0, H = 0, W = 0, OC = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  std::vector<TapRegion> taps;  // non-empty regions only, in (kh, kw) order
  double inside = 0;            // the share of pairs inside X, 0..1
};

/// TapPlan for shapes `xs`, `ws`, `ys` (4-D, matching channels, group 1);
/// errors as ops::resolve_window_attrs, naming `who`.
TapPlan plan_conv_taps(const ops::WindowAttrs& raw, const Shape& xs, const Shape& ws, const Shape& ys,
                       const std::string& who) {
  std::vector<int64_t> wk(ws.begin() + 2, ws.end());
  const ops::WindowAttrs a = ops::resolve_window_attrs(raw, 2, &wk, who);
  const ops::WindowGeom geo = ops::window_geometry(who, a, Shape(xs.begin() + 2, xs.end()));
  TapPlan p;
  p.IC = xs[1], p.H = xs[2], p.W = xs[3], p.OC = ys[1], p.OH = ys[2], p.OW = ys[3], p.KH = ws[2], p.KW = ws[3];
  p.sh = a.strides[0], p.sw = a.strides[1], p.dh = a.dilations[0], p.dw = a.dilations[1];
  p.ph = geo.pad_begin[0], p.pw = geo.pad_begin[1];
  // Output indices o < O with 0 <= o * s - pad + k * d < I.
  const auto range = [](int64_t O, int64_t I, int64_t s, int64_t pad, int64_t off, int64_t* lo, int64_t* hi) {
    const int64_t first = pad - off;  // o * s >= first
    *lo = first <= 0 ? 0 : (first + s - 1) / s;
    const int64_t last = I - 1 + pad - off;  // o * s <= last
    *hi = last < 0 ? 0 : std::min(O, last / s + 1);
    if (*hi < *lo) *hi = *lo;
  };
  double inside = 0;
  for (int64_t kh = 0; kh < p.KH; ++kh) {
    for (int64_t kw = 0; kw < p.KW; ++kw) {
      TapRegion r{kh, kw};
      range(p.OH, p.H, p.sh, p.ph, kh * p.dh, &r.h0, &r.h1);
      range(p.OW, p.W, p.sw, p.pw, kw * p.dw, &r.w0, &r.w1);
      if (r.pixels() == 0) continue;
      inside += static_cast<double>(r.pixels());
      p.taps.push_back(r);
    }
  }
  p.inside = inside / std::max(1.0, static_cast<double>(p.KH * p.KW * p.OH * p.OW));
  return p;
}

/// At most this share of a convolution's (tap, output pixel) pairs inside
/// X, and at most this many taps reaching inside (each tap its products and
/// gathers: large windows over small maps stay on oneDNN), the "taps"
/// variant may run it (taps_shape_pays).
constexpr double kTapsMaxInside = 0.5;
constexpr size_t kTapsMaxTaps = 49;

/// Whether the shapes of a Conv / FusedConv suit the "taps" variant: 2-D,
/// group 1, a constant W, static non-empty shapes, at most kTapsMaxTaps
/// taps and kTapsMaxInside of its (tap, pixel) pairs inside X: atrous convolutions
/// whose dilation is large against the map (DeepLabV3's 3x3 ones of
/// dilation 12 over 14x14: 0.18 of them), where oneDNN 2.6 has only its
/// gemm convolution (every tap of every pixel as columns) or ref:any.
bool taps_shape_pays(const ir::Node& n) {
  if (n.get_int("group", 1) != 1 || !constant_input(n, 1) || !n.input(0) || !n.input(1) || !n.output(0) ||
      !n.input(0)->type.is_static() || !n.input(1)->type.is_static() || !n.output(0)->type.is_static())
    return false;
  const Shape xs = n.input(0)->type.static_shape(), ws = n.input(1)->type.static_shape(),
              ys = n.output(0)->type.static_shape();
  if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || shape_numel(xs) <= 0 || shape_numel(ws) <= 0 ||
      shape_numel(ys) <= 0 || ws[1] != xs[1] || ws[0] != ys[1])
    return false;
  try {
    const TapPlan p = plan_conv_taps(ops::read_window_attrs(n), xs, ws, ys, n.describe());
    return p.inside <= kTapsMaxInside && p.taps.size() <= kTapsMaxTaps;
  } catch (const Error&) {
    return false;
  }
}

/// The implementation oneDNN picks for this Conv / FusedConv (static types)
/// in the given layouts, without post-ops; "" when the types are not static.
std::string onednn_conv_query(const ir::Node& n, ops::Layout src_layout, ops::Layout dst_layout) {
  if (!n.input(0) || !n.input(1) || !n.output(0) || !n.input(0)->type.is_static() || !n.input(1)->type.is_static() ||
      !n.output(0)->type.is_static())
    return "";
  const Shape xs = n.input(0)->type.static_shape(), ws = n.input(1)->type.static_shape(),
              ys = n.output(0)->type.static_shape();
  if (xs.size() < 3 || ws.size() != xs.size()) return "";
  try {
    const auto d = conv_desc(ops::read_window_attrs(n), n.get_int("group", 1), xs, ws, n.has_input(2), ys,
                             src_layout, dst_layout, n.describe());
    return prefer_cheap_creation(dnnl::convolution_forward::primitive_desc(d, cpu_engine()), ws,
                                 n.get_int("group", 1), src_layout, dst_layout)
        .impl_info_str();
  } catch (const dnnl::error&) {
    return "unsupported";
  } catch (const Error&) {
    return "unsupported";
  }
}

/// The implementation this Conv / FusedConv gets in the given layouts (the
/// layout assignment's query): oneDNN's (onednn_conv_query), or
/// "native.taps" in nhwc where oneDNN has only a gemm-based or reference
/// convolution and the shapes suit the taps variant (taps_shape_pays).
std::string conv_layout_query(const ir::Node& n, ops::Layout src_layout, ops::Layout dst_layout) {
  const std::string impl = onednn_conv_query(n, src_layout, dst_layout);
  if (src_layout == ops::Layout::kNhwc && dst_layout == ops::Layout::kNhwc &&
      (impl == "unsupported" || is_reference_implementation(impl) || impl.find("gemm") != std::string::npos) &&
      taps_shape_pays(n))
    return "native.taps";
  return impl;
}

/// The post-ops of a Conv / FusedConv: the residual sum (dst += Z), then
/// the activation (none for Conv).
dnnl::primitive_attr conv_post_ops_attr(const ops::FusedActivation& act, bool residual) {
  dnnl::primitive_attr attr = Scratchpad::attr();
  if (residual || !act.op.empty()) attr.set_post_ops(make_post_ops(act, residual));
  return attr;
}

/// Convolutions with fewer input or output channels than this never take
/// the Winograd variant: their transforms cost about what the products
/// save (measured here, weights cold in cache: 16 -> 32 channels at 56x56
/// 1.05x the direct time, 24 -> 32 at 28x28 0.98x).
constexpr int64_t kWinogradMinChannels = 32;
/// oneDNN 2.6's F(2x2, 3x3) kernel computes oc2_block 16-channel output
/// blocks per register tile (its wino_desc's oc2_block, chosen from the
/// channel count, the thread count and the caches); above 4 blocks it was
/// slower than the direct kernel on every shape measured here (5-7 blocks:
/// 0.94-1.14x, 13: 1.9-2.3x), at 2-4 faster (0.53-0.82x).
constexpr int kWinograd2x3MaxOcBlocks = 4;
/// oneDNN 2.6's F(4x4, 3x3) kernel reads 36 transformed weights per input
/// and output channel (4x the plain bytes) for each 4x4 tile of outputs; with
/// few tiles that traffic eats the saving (measured here, 128-512 channels,
/// weights cold: 16 tiles (16x16 outputs) 0.92-1.01x the direct time, 25
/// tiles (20x20) 0.64-0.77x, 49 tiles (28x28) 0.44-0.67x).
constexpr int64_t kWinograd4x3MinTiles = 25;
/// oneDNN 2.6's F(2x2, 3x3) kernel transforms each 2x2 output tile's input
/// and output channels; with few tiles and channels that outweighs the
/// products it saves. Measured here (2 threads, nChw16c, ReLU post-op),
/// time against the direct kernel by tiles x input x output channels:
/// 65-100 Ki (32 -> 128 at 7x7, 32 -> 64 at 14x14: GoogLeNet's 5x5
/// branches) 1.44-1.91x, 200 Ki (32 -> 128 and 64 -> 64 at 14x14)
/// 1.08-1.18x, 392 Ki and more (64 -> 128 at 14x14, 32 -> 64 at 28x28)
/// 0.53-0.76x.
constexpr int64_t kWinograd2x3MinWork = 256 * 1024;
/// oneDNN 2.6's Winograd kernels want scratchpad for the transformed input
/// and output tiles of a whole run; for F(4x4, 3x3) it grows with input
/// channels x output channels x tiles (2048 -> 512 at 28x28 on 2 threads:
/// 167 MiB, beside 144 MiB of transformed weights, 4x the plain 36 MiB). Such
/// a primitive's memory costs more than its products save. Measured here,
/// 2 threads: FCN-ResNet50's 2048 -> 512 head at 28x28 ran 42 against 53 ms
/// alone; the whole model (without the head's Winograd the layout weighing
/// puts the backbone in nhwc) ran 136-179 ms with it and 134-200 without in
/// alternating pairs, within the host's noise (one two-round side-by-side
/// run read 10% slower without), while its peak RSS was 459 against 172 MiB
/// and its first run 355-648 against 160-315 ms (the scratchpad's fresh
/// pages).
/// VGG-11's 512 -> 512 at 28x28 (49 MiB) keep their gain: whole model 32-34
/// ms with them, 38-42 ms without.
constexpr size_t kWinogradMaxScratchBytes = size_t{64} << 20;

/// True when `pd` (a convolution_winograd primitive descriptor for output Y
/// [N, M, OH, OW] `ys`) is one of oneDNN's Winograd kernels in a form that
/// pays (conv_variant_choice): F(4x4) over kWinograd4x3MinTiles tiles, or
/// F(2x2) with at most kWinograd2x3MaxOcBlocks blocks and
/// kWinograd2x3MinWork; either with at most kWinogradMaxScratchBytes of
/// scratchpad.
bool winograd_pays(const dnnl::convolution_forward::primitive_desc& pd, const Shape& ys) {
  const std::string impl = pd.impl_info_str();
  const dnnl_memory_desc_t& w = pd.weights_desc().data;
  if (w.format_kind != dnnl_format_kind_wino || ys.size() != 4) return false;
  if (pd.scratchpad_desc().get_size() > kWinogradMaxScratchBytes) return false;
  const int64_t tiles = ys[0] * ((ys[2] + 3) / 4) * ((ys[3] + 3) / 4);
  if (impl.rfind("jit_wino_4x3", 0) == 0) return tiles >= kWinograd4x3MinTiles;
  const int64_t tiles2 = ys[0] * ((ys[2] + 1) / 2) * ((ys[3] + 1) / 2), ic = pd.src_desc().dims()[1];
  return impl.rfind("jit_fp32_wino_2x3", 0) == 0 && w.format_desc.wino_desc.oc2_block <= kWinograd2x3MaxOcBlocks &&
         tiles2 * ic * ys[1] >= kWinograd2x3MinWork;
}

/// oneDNN's Winograd primitive for this convolution (the arguments of
/// conv_desc, `attr` its post-ops) when it offers one that pays
/// (winograd_pays), with the descriptor it was made from (to make it again
/// with other post-ops); nullopt otherwise, also when oneDNN has none for
/// these shapes, layouts, post-ops or this CPU.
struct WinogradPrimitive {
  dnnl::convolution_forward::desc desc;
  dnnl::convolution_forward::primitive_desc pd;
};
std::optional<WinogradPrimitive> paying_winograd(const ops::WindowAttrs& raw, int64_t group, const Shape& xs,
                                                 const Shape& ws, bool has_bias, const Shape& ys,
                                                 ops::Layout src_layout, ops::Layout dst_layout,
                                                 const std::string& who, const dnnl::primitive_attr& attr) {
  try {
    const auto d = conv_desc(raw, group, xs, ws, has_bias, ys, src_layout, dst_layout, who, false,
                             dnnl::algorithm::convolution_winograd);
    dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
    if (winograd_pays(pd, ys)) return WinogradPrimitive{d, pd};
  } catch (const dnnl::error&) {
  }
  return std::nullopt;
}

/// X copied with a zero border for the direct loops (planes 0: not copied):
/// in every layout X is a run of `planes` planes (one channel block of one
/// image each) of H rows `src_row` floats long, copied into planes of Hp
/// rows of Wp pixels of `pix` floats, `top` rows and `left` pixels of zeros
/// first.
struct DirectPad {
  int64_t planes = 0, H = 0, src_row = 0, pix = 1, top = 0, left = 0, Hp = 0, Wp = 0;
};
struct DirectPlan {
  direct_conv_simd::Geometry geometry;
  DirectPad pad;
};

/// The direct loops' geometry for X `xs` [N, IC, H, W], W `ws` [OC, IC, KH,
/// KW], Y `ys` [N, OC, OH, OW] in layouts `src` and `dst` (the window
/// resolved as ONNX Conv-11 says; each layout's element strides,
/// direct_conv_simd.h), and the zero border X is copied with when a window
/// crosses an edge (top and left the pads, bottom and right what the last
/// window reaches). Errors, naming `who`: kInvalidModel for shapes that are
/// not a 2-D convolution of matching channels or that the layouts cannot
/// hold (nChw16c: channels divisible by 16); kUnsupported when the copy
/// would take more than 4x the bytes of X and Y together plus 1 MiB (huge
/// pads or strides: the loops would read mostly zeros).
DirectPlan plan_direct_conv(const ops::WindowAttrs& raw, const Shape& xs, const Shape& ws, const Shape& ys,
                            ops::Layout src, ops::Layout dst, const std::string& who) {
  if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || ws[1] != xs[1] || ws[0] != ys[1] || xs[0] != ys[0] ||
      xs[1] <= 0)
    fail(ErrorCode::kInvalidModel, who + ": the direct variant needs 2-D X, W and Y of matching channels, got " +
                                       shape_str(xs) + ", " + shape_str(ws) + ", " + shape_str(ys));
  // The layouts must hold the shapes (nChw16c: channels divisible by 16).
  activation_md(xs, src, who);
  activation_md(ys, dst, who);
  std::vector<int64_t> wk(ws.begin() + 2, ws.end());
  const ops::WindowAttrs a = ops::resolve_window_attrs(raw, 2, &wk, who);
  const ops::WindowGeom geo = ops::window_geometry(who, a, Shape(xs.begin() + 2, xs.end()));
  DirectPlan plan;
  direct_conv_simd::Geometry& g = plan.geometry;
  g.IC = xs[1], g.H = xs[2], g.W = xs[3], g.OC = ys[1], g.OH = ys[2], g.OW = ys[3], g.KH = ws[2], g.KW = ws[3];
  g.sh = a.strides[0], g.sw = a.strides[1], g.dh = a.dilations[0], g.dw = a.dilations[1];
  g.OCp = (g.OC + direct_conv_simd::kOcGroup - 1) / direct_conv_simd::kOcGroup * direct_conv_simd::kOcGroup;
  const auto strides = [](ops::Layout l, int64_t C, int64_t H, int64_t W, int64_t* cblk, int64_t* cstride,
                          int64_t* row, int64_t* pix) {
    if (l == ops::Layout::kNhwc) {
      *cblk = C, *cstride = 0, *row = W * C, *pix = C;
    } else if (l == ops::Layout::kNChw16c) {
      *cblk = ops::kBlockedChannels, *cstride = H * W * ops::kBlockedChannels, *row = W * ops::kBlockedChannels,
      *pix = ops::kBlockedChannels;
    } else {
      *cblk = 1, *cstride = H * W, *row = W, *pix = 1;
    }
  };
  strides(dst, g.OC, g.OH, g.OW, &g.y_cblk, &g.y_cstride, &g.y_row, &g.y_pix);
  const int64_t ph = geo.pad_begin[0], pw = geo.pad_begin[1];
  // Where the last window ends, in doubles first: pads, strides and
  // dilations are bounded by the window checks only.
  const double last_h = double(g.OH - 1) * double(g.sh) + double(g.KH - 1) * double(g.dh) + 1,
               last_w = double(g.OW - 1) * double(g.sw) + double(g.KW - 1) * double(g.dw) + 1;
  const double hp = std::max(double(ph) + double(g.H), last_h), wp = std::max(double(pw) + double(g.W), last_w);
  int64_t src_row = 0, pix = 0, cblk = 0, cstride = 0;
  strides(src, g.IC, g.H, g.W, &cblk, &cstride, &src_row, &pix);
  if (ph || pw || last_h > double(ph + g.H) || last_w > double(pw + g.W)) {
    const double planes = double(xs[0]) * double(g.IC / cblk);
    const double copy = planes * hp * wp * double(pix) * sizeof(float);
    const double limit = 4.0 * sizeof(float) * (double(shape_numel(xs)) + double(shape_numel(ys))) + (1 << 20);
    if (copy > limit)
      fail(ErrorCode::kUnsupported, who + ": the direct variant would copy X " + shape_str(xs) +
                                        " with a zero border into " + std::to_string(static_cast<int64_t>(copy)) +
                                        " bytes (pads and strides far beyond its size); compile with "
                                        "--disable-pass direct_conv");
    DirectPad& p = plan.pad;
    p.planes = static_cast<int64_t>(planes);
    p.H = g.H, p.src_row = src_row, p.pix = pix, p.top = ph, p.left = pw;
    g.H = p.Hp = static_cast<int64_t>(hp);
    g.W = p.Wp = static_cast<int64_t>(wp);
  }
  strides(src, g.IC, g.H, g.W, &g.x_cblk, &g.x_cstride, &g.x_row, &g.x_pix);
  return plan;
}

/// Up to this many multiply-adds per run a convolution takes the "direct"
/// variant (direct_pays): our own Highway loops, nothing generated when the
/// model loads. oneDNN makes a primitive per convolution at load: 0.5-2.8 ms
/// each here (brgconv: a JIT kernel per tail and batch size, each in fresh
/// executable pages), which was most of oww_embedding's first run (22
/// convolutions, 13-17 ms; load + first run 36.8 -> 15.6 ms with all of
/// them on this variant, bench/results.md). At this size the
/// loops run within 0.8-1.1x of oneDNN's time on oww_embedding's and
/// squeezenet's 1x1/1x3/3x1 convolutions on one thread (0.13-0.55x on the
/// 1x1-pixel convolutions of squeeze-excite blocks, where oneDNN's call
/// costs more than the work); larger ones, with fewer channels than a
/// vector or more output pixels, fell to 1.2-2.9x of oneDNN.
constexpr double kDirectMaxMacs = 4.0 * 1024 * 1024;
/// ... and, over more than kDirectFewPixels output pixels, at least this
/// many products per output (direct_pays).
constexpr int64_t kDirectMinProducts = 64;
constexpr int64_t kDirectFewPixels = 256;

/// The direct variant's threads split the output channels instead of the
/// pixels over at most this many output pixels per run ...
constexpr int64_t kDirectSplitChannelsMaxPixels = 64;
/// ... when there are at least this many vectors of output channels per
/// thread (so each thread still runs whole 2-4-vector register tiles; not
/// measured lower). Measured here (AVX2, 2 threads): in MNASNet-0.5
/// (`gec profile`, the fastest of 3 alternating runs, a noisy hour) its 1x1
/// convolutions over 7x7, 96 -> 576 0.138-0.141 -> 0.108-0.114 ms, 576 ->
/// 96 0.103-0.108 -> 0.081-0.086, 288 -> 96 0.057 -> 0.048; in
/// one-convolution models (the fastest of 8 alternating runs) 96 -> 576
/// 0.089 -> 0.073, 576 -> 96 0.048 -> 0.049 (unchanged). Over 14x14 (196
/// pixels, above the limit) with 40-48 output channels the split lost
/// (0.057-0.068 -> 0.080-0.097), hence the pixel limit.
constexpr int64_t kDirectSplitChannelsMinVectors = 4;

/// X, W and Y of a Conv / FusedConv in the form every compile-time variant
/// needs: ungrouped, a constant W, X, W and Y static and 4-D (2-D
/// convolution); nullopt otherwise.
struct ConvShapes {
  Shape xs, ws, ys;
};
std::optional<ConvShapes> ungrouped_static_2d(const ir::Node& n) {
  if (n.get_int("group", 1) != 1 || !constant_input(n, 1) || !n.input(0) || !n.input(1) || !n.output(0) ||
      !n.input(0)->type.is_static() || !n.input(1)->type.is_static() || !n.output(0)->type.is_static())
    return std::nullopt;
  ConvShapes s{n.input(0)->type.static_shape(), n.input(1)->type.static_shape(), n.output(0)->type.static_shape()};
  if (s.xs.size() != 4 || s.ws.size() != 4 || s.ys.size() != 4) return std::nullopt;
  return s;
}

/// Whether a Conv / FusedConv takes the "direct" variant: 2-D, group 1, a
/// constant W, static non-empty shapes, Y in nhwc or nChw16c (X in any
/// layout), at most kDirectMaxMacs multiply-adds, at least
/// kDirectMinProducts products per output unless Y has at most
/// kDirectFewPixels pixels, not one 16-channel block of nChw16c outputs
/// over more than kDirectFewPixels pixels, and a zero border the loops
/// accept (plan_direct_conv).
bool direct_pays(const ir::Node& n, const KernelConfig& config) {
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  if (config.output_layout(0) == ops::Layout::kPlain || !s) return false;
  const Shape &xs = s->xs, &ws = s->ws, &ys = s->ys;
  if (shape_numel(xs) <= 0 || shape_numel(ws) <= 0 || shape_numel(ys) <= 0) return false;
  const double macs = static_cast<double>(shape_numel(ys)) * static_cast<double>(ws[1] * ws[2] * ws[3]);
  if (macs > kDirectMaxMacs) return false;
  // Few products per output (IC x KH x KW) over many pixels: the loops'
  // per-tile work is too short for their set-up and the channels often
  // fill no whole vector (mnasnet's 1x1 convolutions of 8-48 input channels
  // at 28x28-112x112 ran 1.2-2.3x oneDNN's time); at a few pixels
  // (squeeze-excite blocks) they still win.
  const bool many_pixels = ys[0] * ys[2] * ys[3] > kDirectFewPixels;
  if (ws[1] * ws[2] * ws[3] < kDirectMinProducts && many_pixels) return false;
  // One 16-channel block of nChw16c outputs over many pixels: a tile then
  // holds one weight vector per tap and channel, and oneDNN's kernel ran in
  // half the time (SqueezeNet's 64 -> 16 1x1 convolution at 55x55 inside
  // the model, alternating plans: 0.038-0.042 against 0.071-0.082 ms).
  if (config.output_layout(0) == ops::Layout::kNChw16c && ws[0] <= ops::kBlockedChannels && many_pixels) return false;
  try {
    plan_direct_conv(ops::read_window_attrs(n), xs, ws, ys, config.input_layout(0), config.output_layout(0),
                     n.describe());
  } catch (const Error&) {
    return false;  // shapes or a zero border the loops do not take
  }
  return true;
}

/// A strided spatial convolution's time in oneDNN 2.6's nhwc brgemm kernel,
/// in units of its nChw16c direct kernel's (jit:avx512_core), reorders not
/// counted, over at most kNhwcMaxOutputPixels output pixels. ResNet-50's
/// three stride-2 3x3 convolutions (128-512 channels, 28x28 to 7x7
/// outputs), `gec profile` per node, 2 threads, alternating plans:
/// 0.78-0.93 of the direct time with the reorders, 0.68-0.75 without (the
/// kernels alone, measured earlier in an all-nhwc plan). Over larger maps
/// the brgemm kernels gained little or nothing on stride-1 convolutions
/// (0.86-1.01 above 32x32, layout_assignment.cc), and no strided one there
/// was measured: those stay direct.
constexpr double kNhwcStridedShare = 0.72;
constexpr int64_t kNhwcMaxOutputPixels = 32 * 32;
/// A reorder's cost per element, one way between nChw16c and nhwc, in
/// FLOP-equivalents of the direct kernel: about 0.35 ns an element (the
/// Reorder of SqueezeNet's [1,512,13,13] Concat: 0.03 ms) against 250-300
/// GFLOP/s of direct convolution.
constexpr double kNhwcReorderFlopsPerElement = 100.0;

/// Whether an nChw16c -> nChw16c Conv / FusedConv takes the "nhwc" variant:
/// ungrouped, 2-D, a constant W, static shapes, a window larger than 1x1
/// with a stride above 1 (oneDNN 2.6's direct nChw16c kernel is slowest
/// there), at most kNhwcMaxOutputPixels output pixels per image, oneDNN
/// offering its brgemm kernel for nhwc on this CPU, and the
/// time saved, (1 - kNhwcStridedShare) x its FLOPs, above the reorders of
/// X, Y and the residual Z (kNhwcReorderFlopsPerElement each).
bool nhwc_pays(const ir::Node& n, const KernelConfig& config) {
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  if (config.input_layout(0) != ops::Layout::kNChw16c || config.output_layout(0) != ops::Layout::kNChw16c || !s)
    return false;
  const Shape &xs = s->xs, &ws = s->ws, &ys = s->ys;
  if (ws[2] * ws[3] <= 1 || ys[2] * ys[3] > kNhwcMaxOutputPixels) return false;
  try {
    const ops::WindowAttrs raw = ops::read_window_attrs(n);
    std::vector<int64_t> wk{ws[2], ws[3]};
    const ops::WindowAttrs a = ops::resolve_window_attrs(raw, 2, &wk, n.describe());
    if (a.strides[0] * a.strides[1] <= 1) return false;
  } catch (const Error&) {  // attributes the kernel would refuse
    return false;
  }
  if (!is_brgemm_implementation(conv_layout_query(n, ops::Layout::kNhwc, ops::Layout::kNhwc))) return false;
  const double flops = 2.0 * static_cast<double>(shape_numel(ys)) * static_cast<double>(ws[1] * ws[2] * ws[3]);
  const bool residual = n.op_type == ops::kFusedConvOp && n.has_input(3);
  const double moved = static_cast<double>(shape_numel(xs) + shape_numel(ys) * (residual ? 2 : 1));
  return (1.0 - kNhwcStridedShare) * flops > kNhwcReorderFlopsPerElement * moved;
}

/// The native Winograd variant ("winograd_nhwc", winograd_simd.h) takes a
/// convolution with at least this many input and output channels ...
constexpr int64_t kWinogradNhwcMinChannels = 24;
/// ... and at least this many 4x4 output tiles per image. Measured here (an
/// AVX2 EPYC, 2 threads, against oneDNN 2.6's jit:avx2 nhwc kernel, ReLU
/// fused): 64-256 channels over 14x14-56x56 outputs 0.39-0.48x its time,
/// 24 -> 40 at 56x56 0.67x, 256 and 384 channels over 9 tiles (10x10,
/// 12x12) 0.56-0.67x, 512 over 4 tiles (7x7) 2.1x; 16 channels 0.90-0.96x,
/// 8 -> 16 1.39x. (Measured when a oneDNN MatMul ran the products, from U
/// with rows padded where 1 KiB multiples apart.)
constexpr int64_t kWinogradNhwcMinTiles = 9;
/// Below 9 4x4 tiles (maps up to 8x8), F(2x2, 3x3) with at least this many
/// channels on both sides. Measured as above over 7x7 outputs (16 2x2
/// tiles): 256 and 512 channels 0.44-0.58x, 96 and 128 0.74-0.76x, 1024
/// 0.89x, 64 1.21x; F(4x4, 3x3) over the same map's 4 tiles 0.65-0.81x at
/// 96-256 channels but 1.9-2.0x at 512 and 1024.
constexpr int64_t kWinograd2x2MinChannels = 96;
/// ... over at least this many 2x2 tiles per image (the fewest measured).
constexpr int64_t kWinograd2x2MinTiles = 16;
/// Tiles per block of the native Winograd convolution: the transformed
/// inputs and outputs of a block (36 x tiles x (C + K) floats) stay within
/// this many bytes of the run's scratch memory, so a large map (a detector
/// at 640x640) does not need its whole transform at once.
constexpr size_t kWinogradNhwcBlockBytes = 8u << 20;
/// The taps variant's gathered X pixels and products of one GEMM stay
/// within this many bytes of the run's scratch memory: a tap's region goes
/// in chunks of whole rows (at least one row).
constexpr size_t kTapsBlockBytes = 8u << 20;

/// Output tiles per image of a [N, K, OH, OW] Y in tiles of m x m.
int64_t winograd_tiles(const Shape& ys, int64_t m) { return ((ys[2] + m - 1) / m) * ((ys[3] + m - 1) / m); }

/// The native Winograd convolution's output tile side for W `ws` and Y
/// `ys` (ONNX dims): 4 (F(4x4, 3x3)) over at least kWinogradNhwcMinTiles
/// tiles per image; else 2 (F(2x2, 3x3)) over at least kWinograd2x2MinTiles
/// 2x2 tiles with at least kWinograd2x2MinChannels channels on both sides;
/// else 0.
int64_t winograd_nhwc_tile(const Shape& ws, const Shape& ys) {
  if (winograd_tiles(ys, 4) >= kWinogradNhwcMinTiles) return 4;
  if (winograd_tiles(ys, 2) >= kWinograd2x2MinTiles && ws[0] >= kWinograd2x2MinChannels &&
      ws[1] >= kWinograd2x2MinChannels)
    return 2;
  return 0;
}

/// Whether a Conv / FusedConv qualifies for the "winograd_nhwc" variant
/// (conv_variant_choice takes it unless winograd_2x2_yields_to_im2col): 3x3,
/// stride 1, undilated, ungrouped, a constant W, static shapes, X and Y
/// planned nhwc, at least kWinogradNhwcMinChannels channels on both sides
/// and a tile size that pays (winograd_nhwc_tile), on a CPU where
/// oneDNN's nhwc convolution for it is not a brgemm one (there, with
/// AVX-512, the layout assignment prefers nChw16c and oneDNN's own
/// Winograd; a native one beside brgemm was not measured).
bool winograd_nhwc_pays(const ir::Node& n, const KernelConfig& config) {
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  if (!s || config.input_layout(0) != ops::Layout::kNhwc || config.output_layout(0) != ops::Layout::kNhwc) return false;
  const Shape &xs = s->xs, &ws = s->ws, &ys = s->ys;
  if (ws[2] != 3 || ws[3] != 3 || ws[0] < kWinogradNhwcMinChannels || ws[1] < kWinogradNhwcMinChannels) return false;
  if (winograd_nhwc_tile(ws, ys) == 0 || shape_numel(xs) <= 0) return false;
  try {
    std::vector<int64_t> wk{3, 3};
    const ops::WindowAttrs a = ops::resolve_window_attrs(ops::read_window_attrs(n), 2, &wk, n.describe());
    for (size_t i = 0; i < 2; ++i)
      if (a.strides[i] != 1 || a.dilations[i] != 1) return false;
  } catch (const Error&) {  // attributes the kernel would refuse
    return false;
  }
  return !is_brgemm_implementation(conv_layout_query(n, ops::Layout::kNhwc, ops::Layout::kNhwc));
}

/// At least this many input channels for the "im2col_nhwc" variant (a GEMM over
/// KH x KW x IC columns: ResNet's 3-channel stem keeps oneDNN's kernel).
constexpr int64_t kIm2colNhwcMinChannels = 16;

/// A stride-1 convolution takes the "im2col_nhwc" variant only over an
/// output map of at most this many pixels ...
constexpr int64_t kIm2colStride1MaxPixels = 64;
/// ... with at least this many output channels. oneDNN's jit:avx2 kernel
/// blocks its registers along the output row, which such maps keep short.
/// Measured here (one-convolution models, `gec profile`, the fastest of 6
/// alternating runs, 2 threads): 384 -> 384 1x3 / 3x1 over 8x8 0.49 / 0.72
/// -> 0.36 / 0.45 ms, 256 -> 256 3x3 over 6x6 0.38 -> 0.28, over 4x4 0.15 ->
/// 0.12, 192 -> 192 5x5 over 7x7 0.88 -> 0.77; but 48 -> 128 5x5 over 7x7
/// 0.15 -> 0.18, and over larger maps jit:avx2 kept up or won (160 -> 160
/// 7x1 over 17x17 0.65 -> 0.69, 96 -> 96 5x5 over 14x14 0.51 -> 0.64,
/// 64 -> 192 5x5 over 27x27 2.5 -> 3.0).
constexpr int64_t kIm2colStride1MinOutChannels = 192;

/// Whether an nhwc -> nhwc Conv / FusedConv takes the "im2col_nhwc" variant: 2-D,
/// group 1, a constant W, static non-empty shapes, a window larger than
/// 1x1, at least kIm2colNhwcMinChannels input channels, a stride above 1 or
/// a small output map with many channels (kIm2colStride1MaxPixels,
/// kIm2colStride1MinOutChannels), and oneDNN's nhwc convolution for it
/// jit:avx2 (CPUs without AVX-512; elsewhere its brgemm kernel). Measured
/// standalone here (AVX2, 2 threads, oneDNN's jit:avx2 against the columns
/// gathered plus oneDNN's gemm MatMul): ResNet-50's stride-2 3x3
/// convolutions 128 -> 128 at 56x56 2.28-2.34 -> 1.51-1.52 ms, 256 at 28x28
/// 1.50-1.57 -> 1.38-1.39, 512 at 14x14 2.48-2.50 -> 1.41-1.42; a
/// Conformer's subsampling 144 -> 144 over 199x39 7.4-8.7 -> 5.2-5.3 ms.
/// Where both this and the Winograd variant's F(2x2, 3x3) apply, this one
/// (winograd_2x2_yields_to_im2col).
bool im2col_nhwc_pays(const ir::Node& n, const KernelConfig& config) {
  if (config.input_layout(0) != ops::Layout::kNhwc || config.output_layout(0) != ops::Layout::kNhwc) return false;
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  if (!s || shape_numel(s->xs) <= 0 || shape_numel(s->ws) <= 0 || shape_numel(s->ys) <= 0 ||
      s->ws[1] < kIm2colNhwcMinChannels || s->ws[1] != s->xs[1] || (s->ws[2] == 1 && s->ws[3] == 1))
    return false;
  try {
    std::vector<int64_t> wk(s->ws.begin() + 2, s->ws.end());
    const ops::WindowAttrs a = ops::resolve_window_attrs(ops::read_window_attrs(n), 2, &wk, n.describe());
    if (a.strides[0] == 1 && a.strides[1] == 1 &&
        (s->ys[2] * s->ys[3] > kIm2colStride1MaxPixels || s->ws[0] < kIm2colStride1MinOutChannels))
      return false;
  } catch (const Error&) {
    return false;
  }
  // jit:avx2 only: where it was measured (on AVX-512 oneDNN's nhwc kernel is brgemm).
  const std::string impl = onednn_conv_query(n, ops::Layout::kNhwc, ops::Layout::kNhwc);
  return impl.rfind("jit:avx2", 0) == 0;
}

/// Whether a convolution that winograd_nhwc_pays would run as F(2x2, 3x3)
/// (fewer than kWinogradNhwcMinTiles 4x4 output tiles) takes the
/// "im2col_nhwc" variant instead, where that applies too (stride 1: at most
/// kIm2colStride1MaxPixels output pixels and kIm2colStride1MinOutChannels
/// or more output channels). Inside whole models, where each run streams
/// the weights from memory rather than finding them in cache, the two took
/// the same time (`gec profile`, 3 alternating runs, 2 threads: ResNet-50's 512 -> 512
/// over 7x7 2.05-2.23 ms against 1.79-2.16; GoogLeNet's 160 -> 320 and
/// 192 -> 384 over 7x7 0.43-0.50 / 0.58-0.70 against 0.42-0.56 /
/// 0.61-0.74), while F(2x2)'s transformed weights take 16/9 of W's bytes:
/// ResNet-50's peak RSS 203 -> 183 MB (`gec bench`; bench/results.md,
/// 2026-12-07 night). (Standalone, with W in cache, F(2x2) was the faster
/// one.) With `--disable-pass im2col_conv` such convolutions run on
/// oneDNN's kernel, not on F(2x2): a disabled variant hands its
/// convolutions to none of the others.
bool winograd_2x2_yields_to_im2col(const ir::Node& n, const KernelConfig& config, bool direct) {
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  return s && winograd_nhwc_tile(s->ws, s->ys) == 2 && !direct && im2col_nhwc_pays(n, config);
}

/// The compile-time choice of a Conv / FusedConv's variant (kernel.h:
/// VariantChoice): "winograd" for a 3x3, stride-1, undilated, ungrouped 2-D
/// convolution planned nChw16c -> nChw16c with at least
/// kWinogradMinChannels channels on both sides, where oneDNN offers a
/// Winograd primitive with the node's post-ops that pays: its F(4x4, 3x3)
/// kernel ("jit_wino_4x3", 0.37-0.77x the direct kernel's time on the
/// ResNet/GoogLeNet shapes measured here, weights cold) over at least
/// kWinograd4x3MinTiles output tiles, or its F(2x2, 3x3)
/// kernel ("jit_fp32_wino_2x3") with at most kWinograd2x3MaxOcBlocks output
/// blocks per tile and 2x2 tiles x input x output channels of at least
/// kWinograd2x3MinWork, each with at most kWinogradMaxScratchBytes of
/// scratchpad (winograd_pays). W must be a constant of the model: the
/// transform of weights fed or computed in the graph would run every run.
/// oneDNN picks its Winograd kernel and blocking from the thread count too,
/// so the kernel asks winograd_pays again when it builds the primitive for
/// a run's thread count, and runs the direct kernel when the answer is no.
/// Winograd's minimal filtering (Lavin and Gray, "Fast
/// Algorithms for Convolutional Neural Networks", CVPR 2016) sums in
/// another order through transformed tiles: results differ from the direct
/// convolution by float32 rounding (measured on 64-512 channels: max error
/// 1.1e-5 against 7.3e-6 for the direct kernel, outputs of magnitude 4-11).
/// Before both, "winograd_nhwc" where winograd_nhwc_pays (our own Winograd
/// convolution over nhwc X and Y, on CPUs where oneDNN has no Winograd
/// kernel for any layout of it: it has one for nChw16c on AVX-512 only),
/// unless its F(2x2, 3x3) yields to im2col_nhwc
/// (winograd_2x2_yields_to_im2col).
/// Then, unless direct_pays (below), "taps" where the layout query says
/// native.taps (nhwc X and Y; conv_layout_query, taps_shape_pays), and
/// "im2col_nhwc" where im2col_nhwc_pays.
/// Otherwise "direct" where direct_pays (a small convolution on our own
/// loops; Winograd wins where both apply), "nhwc" where nhwc_pays (a
/// strided convolution in oneDNN's nhwc brgemm kernel between reorders),
/// "" for the rest and when the shapes are not static.
std::string conv_variant_choice(const ir::Node& n, const KernelConfig& config) {
  const bool direct = direct_pays(n, config);
  if (winograd_nhwc_pays(n, config) && !winograd_2x2_yields_to_im2col(n, config, direct)) return "winograd_nhwc";
  if (!direct && config.input_layout(0) == ops::Layout::kNhwc && config.output_layout(0) == ops::Layout::kNhwc &&
      conv_layout_query(n, ops::Layout::kNhwc, ops::Layout::kNhwc) == "native.taps")
    return "taps";
  if (!direct && im2col_nhwc_pays(n, config)) return "im2col_nhwc";
  const std::string d = direct ? "direct" : nhwc_pays(n, config) ? "nhwc" : "";
  const std::optional<ConvShapes> s = ungrouped_static_2d(n);
  if (config.input_layout(0) != ops::Layout::kNChw16c || config.output_layout(0) != ops::Layout::kNChw16c || !s)
    return d;
  const Shape &xs = s->xs, &ws = s->ws, &ys = s->ys;
  if (ws[2] != 3 || ws[3] != 3 || ws[0] < kWinogradMinChannels || ws[1] < kWinogradMinChannels) return d;
  const bool fused = n.op_type == ops::kFusedConvOp;
  try {
    const ops::WindowAttrs raw = ops::read_window_attrs(n);
    std::vector<int64_t> wk{3, 3};
    const ops::WindowAttrs a = ops::resolve_window_attrs(raw, 2, &wk, n.describe());
    for (size_t i = 0; i < 2; ++i)
      if (a.strides[i] != 1 || a.dilations[i] != 1) return d;
    const ops::FusedActivation act = fused ? ops::read_fused_activation(n) : ops::FusedActivation{};
    if (paying_winograd(raw, 1, xs, ws, n.has_input(2), ys, ops::Layout::kNChw16c, ops::Layout::kNChw16c,
                        n.describe(), conv_post_ops_attr(act, fused && n.has_input(3))))
      return "winograd";
  } catch (const Error&) {  // attributes the kernel would refuse
  }
  return d;
}

class ConvKernel final : public Kernel {
 public:
  /// `act` and `residual` are FusedConv's post-ops (none for Conv);
  /// `config.variant`: tokens joined by '+', each at most once: "winograd"
  /// (oneDNN's Winograd kernel where it pays for the run's shapes and
  /// threads, else the direct one; needs nChw16c X and Y), "direct" (our
  /// own loops, direct_conv_simd.h; needs group 1 and Y in nhwc or
  /// nChw16c) or "nhwc" (nChw16c X, Z and Y reordered to and from oneDNN's
  /// nhwc brgemm kernel in the run's scratch memory, where this CPU has
  /// one, else the direct kernel; needs nChw16c X and Y), and where the
  /// activation runs, "post_op" or "kernel"
  /// (default: the faster way for the implementation; "direct" takes no
  /// "post_op"). Errors: gec::Error(kInvalidModel) naming the node for
  /// another variant, winograd or nhwc with other layouts, or direct where
  /// it cannot run.
  ConvKernel(const ir::Node& n, ops::FusedActivation act, bool residual, const KernelConfig& config)
      : desc_(n.describe()), raw_(ops::read_window_attrs(n)), group_(n.get_int("group", 1)),
        act_(std::move(act)), residual_(residual), has_bias_(n.has_input(2)), src_layout_(config.input_layout(0)),
        dst_layout_(config.output_layout(0)) {
    if (residual_ && config.input_layout(3) != dst_layout_)
      fail(ErrorCode::kInvalidModel, desc_ + ": residual Z must have the output's layout");
    // The variant: tokens joined by '+' ("winograd", "direct", "nhwc", "post_op", "kernel").
    for (size_t b = 0; b <= config.variant.size() && !config.variant.empty();) {
      size_t e = config.variant.find('+', b);
      if (e == std::string::npos) e = config.variant.size();
      const std::string token = config.variant.substr(b, e - b);
      const bool main = winograd_ || wino_nhwc_ || direct_ || nhwc_ || taps_ || im2col_nhwc_;
      if (token == "winograd" && !main)
        winograd_ = true;
      else if (token == "winograd_nhwc" && !main)
        wino_nhwc_ = true;
      else if (token == "direct" && !main)
        direct_ = true;
      else if (token == "nhwc" && !main)
        nhwc_ = true;
      else if (token == "taps" && !main)
        taps_ = true;
      else if (token == "im2col_nhwc" && !main)
        im2col_nhwc_ = true;
      else if ((token == "post_op" || token == "kernel") && act_impl_ == "auto")
        act_impl_ = token;
      else
        fail(ErrorCode::kInvalidModel, desc_ + ": kernel variant '" + config.variant +
                                           "' is not winograd, winograd_nhwc, direct, nhwc, taps, im2col_nhwc, post_op or "
                                           "kernel (joined by +, each once; the first six exclude each other)");
      b = e + 1;
    }
    if ((winograd_ || nhwc_) && (src_layout_ != ops::Layout::kNChw16c || dst_layout_ != ops::Layout::kNChw16c))
      fail(ErrorCode::kInvalidModel,
           desc_ + ": the " + (winograd_ ? "winograd" : "nhwc") + " variant needs nChw16c input and output");
    w_constant_ = constant_input(n, 1);
    b_constant_ = constant_input(n, 2);
    if (wino_nhwc_ && (group_ != 1 || src_layout_ != ops::Layout::kNhwc || dst_layout_ != ops::Layout::kNhwc ||
                       act_impl_ == "post_op"))
      fail(ErrorCode::kInvalidModel, desc_ + ": the winograd_nhwc variant needs group 1, nhwc input and output and "
                                             "the activation outside oneDNN");
    if ((taps_ || im2col_nhwc_) && (group_ != 1 || src_layout_ != ops::Layout::kNhwc ||
                               dst_layout_ != ops::Layout::kNhwc || act_impl_ == "post_op"))
      fail(ErrorCode::kInvalidModel, desc_ + ": the " + (taps_ ? "taps" : "im2col_nhwc") +
                                         " variant needs group 1, nhwc input and output and the activation outside "
                                         "oneDNN");
    if (direct_ && (group_ != 1 || dst_layout_ == ops::Layout::kPlain || act_impl_ == "post_op"))
      fail(ErrorCode::kInvalidModel, desc_ + ": the direct variant needs group 1, an nhwc or nChw16c output and "
                                             "the activation outside oneDNN");
    // A depthwise convolution (one filter per channel) in plain NCHW runs
    // our own loop: oneDNN has only its gemm path for that layout, 10-30x
    // slower than its blocked depthwise kernels (measured here: 546 us vs
    // 41 us for [1,72,64,64] 3x3); the layout stays plain at -O0/-O1 or
    // where the layout assignment leaves a group plain. Decided from the node alone
    // (the kernel name is planned at compile time): 2-D (the filter [C, 1,
    // kh, kw]) or 1-D ([C, 1, k]) with group C, dilation 1, no residual,
    // plain in and out.
    const ir::Value* w = n.input(1);
    if (src_layout_ == ops::Layout::kPlain && dst_layout_ == ops::Layout::kPlain && !residual_ && w && w->type.is_static() && act_impl_ != "post_op") {
      const Shape ws = w->type.static_shape();
      bool dil1 = true;
      for (int64_t dv : raw_.dilations) dil1 = dil1 && dv == 1;
      // 2-D, and 1-D as planes of height 1 (a Conformer's 31-tap depthwise
      // Conv1d over 144 channels: oneDNN 2.6 runs plain grouped 1-D
      // convolutions as gemm, 0.23 ms at 5 GFLOP/s).
      native_dw_ = (ws.size() == 4 || ws.size() == 3) && ws[1] == 1 && ws[0] == group_ && group_ > 1 && dil1 &&
                   raw_.auto_pad == ops::AutoPad::kNotSet;
      matmul_ = native_dw_ ? MatmulForm::kNone : matmul_form(ws);
      frame_stride_ = raw_.strides.empty() ? 1 : raw_.strides[0];
      // Only where oneDNN has its brgemm MatMul for the shapes (elsewhere,
      // e.g. without AVX-512, it may be gemm-based: no gain), or where the
      // dot products run (few_positions). Shapes known only at run (a
      // subgraph's, a dynamic dim) are checked at reshape.
      if (matmul_ != MatmulForm::kNone) {
        const ir::Value* x = n.input(0);
        const ir::Value* y = n.output(0);
        matmul_at_run_ = x && y && (!x->type.is_static() || !y->type.is_static());
        if (!x || !y) {
          matmul_ = MatmulForm::kNone;
        } else if (!matmul_at_run_) {
          // A handful of output positions run as dot products (no oneDNN
          // MatMul: any CPU), named so; build_matmul decides again from a
          // run's shapes, which for shapes known only then may choose them.
          const Shape xs = x->type.static_shape(), ys = y->type.static_shape();
          dots_named_ = few_positions(ys);
          if (dots_named_ ? !shapes_fit(xs, ws, ys) : !matmul_fits(xs, ws, ys)) {
            matmul_ = MatmulForm::kNone;
            dots_named_ = false;
          }
        }
      }
    }
  }

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    const bool has_bias = ctx.has_input(2);
    const TensorView& y = ctx.out(0);
    require_f32(desc_, x.dtype);
    require_f32(desc_, w.dtype);
    empty_ = y.numel() == 0 || x.numel() == 0 || w.numel() == 0;
    if (direct_) return plan_direct(x.shape, w.shape, y.shape);
    if (taps_) return empty_ ? void() : plan_taps(x.shape, w.shape, y.shape);
    if (im2col_nhwc_) return empty_ ? void() : plan_im2col_nhwc(x.shape, w.shape, y.shape);
    wino_now_ = wino_nhwc_ && !empty_ && plan_winograd(x.shape, w.shape, y.shape);
    wino_fell_back_ = wino_nhwc_ && !empty_ && !wino_now_;
    if (wino_now_) return;
    if (native_dw_) {
      if ((x.shape.size() != 4 && x.shape.size() != 3) || y.shape.size() != x.shape.size() ||
          w.shape.size() != x.shape.size())
        fail(ErrorCode::kInvalidArgument, desc_ + ": depthwise X " + shape_str(x.shape) + ", W " + shape_str(w.shape) +
                                              " and Y " + shape_str(y.shape) + " must all be 3-D or all 4-D");
      if (x.shape[1] != group_)
        fail(ErrorCode::kInvalidArgument, desc_ + ": depthwise input " + shape_str(x.shape) + " does not have " +
                                              std::to_string(group_) + " channels");
      const size_t sp = x.shape.size() - 2;  // 1-D: a plane of height 1
      std::vector<int64_t> wk(w.shape.begin() + 2, w.shape.end());
      const ops::WindowAttrs a = ops::resolve_window_attrs(raw_, sp, &wk, desc_);
      const ops::WindowGeom g = ops::window_geometry(desc_, a, Shape(x.shape.begin() + 2, x.shape.end()));
      if (sp == 2)
        dw_ = {a.kernel[0], a.kernel[1], a.strides[0], a.strides[1], g.pad_begin[0], g.pad_begin[1]};
      else
        dw_ = {1, a.kernel[0], 1, a.strides[0], 0, g.pad_begin[0]};
      if (!act_.op.empty() && !epilogue_) epilogue_ = std::make_unique<ActivationEpilogue>(act_);
      return;
    }
    if (empty_) return;
    // Shapes known only at run: a misfit runs oneDNN's convolution, and so
    // does a 2-D window of kIm2col (between reorders in oneDNN's layout,
    // run_blocked: oww_embedding compiled with a dynamic batch, its 3x1 and
    // 1x3 convolutions at 18-39 GFLOP/s as columns).
    conv_at_run_ = matmul_at_run_ && !(few_positions(y.shape) && shapes_fit(x.shape, w.shape, y.shape)) &&
                   (!matmul_fits(x.shape, w.shape, y.shape) || (matmul_ == MatmulForm::kIm2col && x.shape.size() == 4));
    if (matmul_ != MatmulForm::kNone && !conv_at_run_) return build_matmul(x.shape, w.shape, y.shape);
    build(x.shape, w.shape, has_bias, y.shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    const TensorView* b = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    const TensorView* z = residual_ ? ctx.inputs[3] : nullptr;
    TensorView& y = ctx.out(0);
    if (z) check_residual(*z, y);
    if (y.numel() == 0) return;
    if (x.numel() == 0 || w.numel() == 0) {  // no input channels
      if (dst_layout_ != ops::Layout::kPlain)
        fail(ErrorCode::kInternal, desc_ + ": non-plain output of an empty convolution");
      return fill_bias(y, b, z);
    }
    // The sum post-op adds what Y holds; Y may already be Z's buffer.
    if (direct_) return run_direct(ctx, x, w, b, z, y);
    if (taps_) return run_taps(ctx, x, w, b, z, y);
    if (im2col_nhwc_) return run_im2col_nhwc(ctx, x, w, b, z, y);
    if (wino_now_) return run_winograd(ctx, x, w, b, z, y);
    if (native_dw_) return run_depthwise(x, w, b, y, ctx.num_threads);
    if (matmul_ != MatmulForm::kNone && !conv_at_run_) return run_matmul(x, w, b, y, ctx);
    if (blocked_) return run_blocked(x, w, b, z, y, ctx);
    if (z && z->data != y.data) copy_floats(y.as<float>(), z->as<float>(), y.numel(), ctx.num_threads);
    bind(src_, x.data);
    bind(dst_, y.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(w.data, ctx, 1);
    if (b) bind(bias_, b->data);
    scratch_.bind(args_, ctx.scratch);
    conv_.execute(cpu_stream(), args_);
    cpu_stream().wait();
    if (native_act_) epilogue_->run(y, ctx.num_threads);
  }

  /// oneDNN's primitives, and the native variants' packed weights: the
  /// direct loops' (packed W), Winograd's (weights transformed and packed
  /// for gemm_simd), the taps and im2col_nhwc ones' (W packed for
  /// gemm_simd, by tap for taps).
  /// The native depthwise loop reads W as it is.
  bool costly_reshape() const override {
    const std::string impl = impl_name();
    for (const char* prefix : {"onednn.", "native.direct", "native.winograd", "native.taps", "native.im2col_nhwc"})
      if (impl.rfind(prefix, 0) == 0) return true;
    return false;
  }

  void pack_constants(const KernelContext& ctx) override {
    if (taps_ || im2col_nhwc_) {
      if (!empty_ && w_constant_ && ctx.in(1).data) taps_weights(ctx, ctx.in(1));
      return;
    }
    if (direct_) {
      if (!empty_ && !direct_dots_ && w_constant_ && ctx.in(1).data) direct_weights(ctx, ctx.in(1));
      return;
    }
    if (wino_now_) {
      if (w_constant_ && ctx.in(1).data) winograd_weights(ctx, ctx.in(1));
      return;
    }
    if (!empty_ && !native_dw_ && (matmul_ == MatmulForm::kNone || conv_at_run_)) weights_.pack_constant(ctx, 1);
  }

  /// Whether oneDNN's implementation for a descriptor is its gemm-based or
  /// reference one: for plain NCHW activations oneDNN 2.6 has mostly those
  /// (im2col + sgemm, whose first call also generates its kernels).
  static bool gemm_or_reference(const std::string& impl) {
    return impl.find("gemm") != std::string::npos || impl.rfind("ref", 0) == 0;
  }
  static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

  /// A plain convolution that oneDNN would run as gemm or reference code,
  /// run in the layout it prefers instead (format_tag::any: nChw16c, nhwc,
  /// ...), or an nChw16c one of the nhwc variant, run in nhwc: X reordered
  /// into it, the primitive, Y reordered back, with the
  /// residual Z reordered into Y's copy first for the sum post-op. Both
  /// copies live in the run's scratch memory. Where such a convolution is
  /// left plain (a shape known only at run that no MatMul form fits, a
  /// grouped convolution outside a blocked layout group, -O0/-O1), the two
  /// reorders cost far less than the gemm path (ppocr_v4_det compiled with
  /// dynamic input dims: its six plain 3x3 convolutions at 640x640 went
  /// from 78 ms a run to 21, plus 8 ms of reorders).
  void run_blocked(const TensorView& x, const TensorView& w, const TensorView* b, const TensorView* z, TensorView& y,
                   KernelContext& ctx) {
    auto* base = static_cast<uint8_t*>(scratch_.bind_with(args_, ctx.scratch, blocked_bytes_));
    bind(src_, base);
    bind(dst_, base + src_bytes_);
    bind(src_plain_, x.data);
    dnnl::stream& st = cpu_stream();
    to_blocked_src_.execute(st, src_plain_, src_);
    if (z) {
      bind(dst_plain_, z->data);
      to_blocked_dst_.execute(st, dst_plain_, dst_);
    }
    bind(dst_plain_, y.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(w.data, ctx, 1);
    if (b) bind(bias_, b->data);
    conv_.execute(st, args_);
    to_plain_dst_.execute(st, dst_, dst_plain_);
    st.wait();
    if (native_act_) epilogue_->run(y, ctx.num_threads);
  }

  std::string impl_name() const override {
    // Asked before the first run too, when the activation's way is not chosen yet.
    if (native_dw_) return act_.op.empty() ? "native.depthwise" : "native.depthwise+fused";
    if (direct_) return residual_ || !act_.op.empty() ? "native.direct+fused" : "native.direct";
    if (taps_) return residual_ || !act_.op.empty() ? "native.taps+fused" : "native.taps";
    if (im2col_nhwc_) return residual_ || !act_.op.empty() ? "native.im2col_nhwc+fused" : "native.im2col_nhwc";
    if (wino_nhwc_ && !wino_fell_back_) return residual_ || !act_.op.empty() ? "native.winograd+fused" : "native.winograd";
    if (matmul_ != MatmulForm::kNone && dots_named_)
      return act_.op.empty() ? "native.conv_as_dots" : "native.conv_as_dots+fused";
    if (matmul_ != MatmulForm::kNone) return act_.op.empty() ? "onednn.conv_as_matmul" : "onednn.conv_as_matmul+fused";
    const std::string base = winograd_ ? "onednn.conv.winograd" : nhwc_ ? "onednn.conv.nhwc" : "onednn.conv";
    return residual_ || !act_.op.empty() ? base + "+fused" : base;
  }

 private:
  /// The direct variant's geometry for these shapes (plan_direct_conv) and
  /// the activation its loops apply.
  void plan_direct(const Shape& xs, const Shape& ws, const Shape& ys) {
    if (empty_) return;  // run() handles it without the loops
    DirectPlan p = plan_direct_conv(raw_, xs, ws, ys, src_layout_, dst_layout_, desc_);
    direct_conv_simd::Geometry& g = p.geometry;
    if (direct_geo_.OC != g.OC || direct_geo_.IC != g.IC || direct_geo_.KH != g.KH || direct_geo_.KW != g.KW)
      direct_w_ = nullptr;  // W of another shape: packed again
    store_activation(&g.act, &g.act_alpha, &g.act_beta);
    direct_geo_ = g;
    direct_pad_ = p.pad;
    // One pixel an image under a 1x1 window (squeeze-excite blocks): every
    // layout holds X and Y as [N][channels], W [OC, IC, 1, 1] is already
    // the rows the dot products read.
    direct_dots_ = g.H == 1 && g.W == 1 && g.KH == 1 && g.KW == 1 && g.OH == 1 && g.OW == 1 && !p.pad.planes;
  }

  /// The activation our own loops (direct, Winograd) apply as they store:
  /// Relu or a piecewise-linear one into `act` with its parameters; the
  /// others run after the loops, in place (epilogue_, made here).
  void store_activation(direct_conv_simd::Activation* act, float* alpha, float* beta) {
    simd::PiecewiseOp pw;
    if (act_.op == "Relu")
      *act = direct_conv_simd::Activation::kRelu;
    else if (piecewise_activation(act_, &pw, alpha, beta))
      *act = direct_conv_simd::piecewise(pw);
    if (!act_.op.empty() && *act == direct_conv_simd::Activation::kNone && !epilogue_)
      epilogue_ = std::make_unique<ActivationEpilogue>(act_);
  }

  /// W [OC, IC, KH, KW] (ONNX's, `taps` = KH * KW) as [taps][IC][ld]
  /// floats: tap t's [IC, OC] matrix at t * IC * ld, rows ld >= OC floats
  /// apart, zero past OC. The direct loops' and the taps variant's layout.
  static void pack_by_tap(const float* w, int64_t OC, int64_t IC, int64_t taps, int64_t ld, float* out) {
    std::fill(out, out + taps * IC * ld, 0.f);
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t ic = 0; ic < IC; ++ic)
        for (int64_t t = 0; t < taps; ++t) out[(t * IC + ic) * ld + oc] = w[(oc * IC + ic) * taps + t];
  }

  /// W's packed copy for the direct loops: [KH][KW][IC][OCp] floats, zero
  /// past OC (direct_conv_simd.h), through packed_weights.
  const float* direct_weights(const KernelContext& ctx, const TensorView& w) {
    if (direct_w_ && direct_w_from_ == w.data && w_constant_) return direct_w_;
    const direct_conv_simd::Geometry& g = direct_geo_;
    const int64_t taps = g.KH * g.KW;
    const size_t floats = static_cast<size_t>(taps * g.IC * g.OCp);
    const std::string layout = "gec.direct/" + std::to_string(direct_conv_simd::kOcGroup) + "/" + shape_str(w.shape);
    direct_w_ = packed_weights(ctx, w, layout, floats,
                               [&](float* out) { pack_by_tap(w.as<const float>(), g.OC, g.IC, taps, g.OCp, out); });
    direct_w_from_ = w.data;
    return direct_w_;
  }

  /// W's Winograd transform for the winograd_nhwc variant: U, element e's
  /// [C, K] matrix packed for gemm_simd (gemm_simd::pack_b) at
  /// e * packed_b_floats(C, K) floats, through packed_weights.
  const float* winograd_weights(const KernelContext& ctx, const TensorView& w) {
    if (wino_w_ && wino_w_from_ == w.data && w_constant_) return wino_w_;
    const int64_t K = w.shape[0], C = w.shape[1];
    const int64_t m = wino_.m, E = winograd_simd::elements(m);
    const size_t per_elem = gemm_simd::packed_b_floats(C, K), floats = static_cast<size_t>(E) * per_elem;
    gemm_simd::Product shape;  // each element's [C, K] matrix
    shape.k = C;
    shape.n = K;
    wino_w_ = packed_weights(ctx, w,
                             "gec.winograd/F" + std::to_string(m) + "x3/" + gemm_simd::packed_b_layout(shape) + "/" +
                                 shape_str(w.shape),
                             floats, [&](float* out) {
                               std::vector<float> u(static_cast<size_t>(E * C * K));
                               winograd_simd::transform_weights(m, w.as<const float>(), K, C, K, u.data());
                               for (int64_t e = 0; e < E; ++e) {
                                 gemm_simd::Product p;
                                 p.k = C;
                                 p.n = K;
                                 p.b = u.data() + e * C * K;
                                 p.ldb = K;
                                 gemm_simd::pack_b(p, out + static_cast<size_t>(e) * per_elem);
                               }
                             });
    wino_w_from_ = w.data;
    return wino_w_;
  }

  /// `floats` floats that `pack` fills from W, in the layout named `layout`
  /// (SharedWeights::Packed::layout). A constant W is packed once for every
  /// run context of the model (ctx.shared_weights), or read in place from
  /// the offline model where the compiler stored it in that layout; its
  /// plain copy is then released. W fed or computed in the graph is packed
  /// into this kernel's own buffer at each run.
  const float* packed_weights(const KernelContext& ctx, const TensorView& w, const std::string& layout, size_t floats,
                              const std::function<void(float*)>& pack) {
    const size_t bytes = floats * sizeof(float);
    SharedWeights* shared = w_constant_ ? shared_weights_for(ctx, 1) : nullptr;
    if (!shared) {
      own_w_.resize(floats);
      pack(own_w_.data());
      return own_w_.data();
    }
    struct Packed {
      std::string layout;
      std::vector<float> own;       // packed here, or
      const float* data = nullptr;  // the offline model's stored copy
    };
    static const char kKind = 0;  // Packed entries
    shared_w_ = shared->find_or_make(
        w.data, &kKind, [&](const void* e) { return static_cast<const Packed*>(e)->layout == layout; },
        [&](const SharedWeights::Packed& stored) -> std::shared_ptr<const void> {
          if (stored.layout != layout || stored.bytes != bytes ||
              reinterpret_cast<uintptr_t>(stored.data) % alignof(float) != 0)
            return nullptr;
          auto p = std::make_shared<Packed>();
          p->layout = layout;
          p->data = static_cast<const float*>(stored.data);
          return p;
        },
        [&]() {
          auto p = std::make_shared<Packed>();
          p->layout = layout;
          p->own.resize(floats);
          pack(p->own.data());
          p->data = p->own.data();
          shared->release_plain(w.data, w.bytes());
          return SharedWeights::Entry{p, {layout, p->data, bytes}};
        });
    return static_cast<const Packed*>(shared_w_.get())->data;
  }

  /// The winograd_nhwc variant's plan for these shapes
  /// (its geometry and blocks); false when the shapes are not a
  /// 3x3, stride-1, undilated 2-D convolution (oneDNN's then runs).
  bool plan_winograd(const Shape& xs, const Shape& ws, const Shape& ys) {
    if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || ws[2] != 3 || ws[3] != 3 || ws[1] != xs[1] ||
        ys[1] != ws[0] || ys[0] != xs[0])
      return false;
    std::vector<int64_t> wk{3, 3};
    const ops::WindowAttrs a = ops::resolve_window_attrs(raw_, 2, &wk, desc_);
    for (size_t i = 0; i < 2; ++i)
      if (a.strides[i] != 1 || a.dilations[i] != 1) return false;
    const ops::WindowGeom geo = ops::window_geometry(desc_, a, Shape{xs[2], xs[3]});
    const int64_t m = winograd_nhwc_tile(ws, ys);
    winograd_simd::Geometry g = winograd_simd::make_geometry(m == 0 ? 4 : m, xs[0], xs[1], xs[2], xs[3], ws[0], ys[2],
                                                             ys[3], geo.pad_begin[0], geo.pad_begin[1]);
    store_activation(&g.act, &g.act_alpha, &g.act_beta);
    const int64_t T = g.tiles(), E = g.elems(), per_tile = E * (g.C + g.K) * int64_t{sizeof(float)};
    // Blocks of equal size (the last one's spare rows are products of
    // stale values, never read back).
    const int64_t most = std::clamp<int64_t>(static_cast<int64_t>(kWinogradNhwcBlockBytes) / per_tile, 1, T);
    const int64_t blocks = (T + most - 1) / most, block = (T + blocks - 1) / blocks;
    if (wino_.C != g.C || wino_.K != g.K || wino_.m != g.m) wino_w_ = nullptr;  // transformed again
    wino_ = g;
    wino_block_ = block;
    return true;
  }

  /// The winograd_nhwc variant: per block of tiles, the input transform
  /// (tiles in parallel), the products of each element (one gemm_simd
  /// product each, the elements split between threads), the output
  /// transform with B, Z and the activation (tiles in parallel); then an
  /// activation the transform does not apply, in place.
  void run_winograd(const KernelContext& ctx, const TensorView& x, const TensorView& w, const TensorView* b,
                    const TensorView* z, TensorView& y) {
    const winograd_simd::Geometry& g = wino_;
    const float* u = winograd_weights(ctx, w);
    const int64_t T = g.tiles(), block = wino_block_;
    const int64_t E = g.elems();
    const size_t v_bytes = align64(static_cast<size_t>(E * block * g.C) * sizeof(float)),
                 m_bytes = align64(static_cast<size_t>(E * block * g.K) * sizeof(float));
    std::unordered_map<int, memory> no_args;
    auto* base = static_cast<uint8_t*>(wino_scratch_.bind_with(no_args, ctx.scratch, v_bytes + m_bytes));
    float* v = reinterpret_cast<float*>(base);
    float* m = reinterpret_cast<float*>(base + v_bytes);
    const size_t per_elem = gemm_simd::packed_b_floats(g.C, g.K);
    // M_e [block, K] = V_e [block, C] U_e [C, K] for each element e, the
    // elements split between threads (a block's spare rows are products of
    // stale values, never read back).
    const auto products = [&] {
      parallel_for(E, ctx.num_threads, [&](int64_t e) {
        gemm_simd::Product p;
        p.m = block;
        p.n = g.K;
        p.k = g.C;
        p.a = v + e * block * g.C;
        p.lda = g.C;
        p.b_packed = u + static_cast<size_t>(e) * per_elem;
        p.c = m + e * block * g.K;
        p.ldc = g.K;
        gemm_simd::gemm(p, 1);
      });
    };
    const float* xs = x.as<const float>();
    const float* bs = b ? b->as<const float>() : nullptr;
    const float* zs = z ? z->as<const float>() : nullptr;
    float* ys = y.as<float>();
    for (int64_t first = 0; first < T; first += block) {
      const int64_t count = std::min(block, T - first);
      parallel_ranges(
          count, ctx.num_threads,
          [&](int64_t t0, int64_t t1) { winograd_simd::transform_input(g, xs, v, first, block, first + t0, first + t1); },
          count * g.C * E);
      products();
      parallel_ranges(
          count, ctx.num_threads,
          [&](int64_t t0, int64_t t1) {
            winograd_simd::transform_output(g, m, first, block, bs, zs, ys, first + t0, first + t1);
          },
          count * g.K * E);
    }
    if (epilogue_) epilogue_->run(y, ctx.num_threads);
  }

  /// B as OCp floats, zero past OC (and all zero without B).
  const float* direct_bias(const TensorView* b) {
    const direct_conv_simd::Geometry& g = direct_geo_;
    const void* from = b ? b->data : nullptr;
    if (static_cast<int64_t>(direct_b_.size()) == g.OCp && direct_b_from_ == from && from && b_constant_)
      return direct_b_.data();
    direct_b_.assign(static_cast<size_t>(g.OCp), 0.f);
    if (b) std::copy(b->as<const float>(), b->as<const float>() + g.OC, direct_b_.begin());
    direct_b_from_ = from;
    return direct_b_.data();
  }

  /// The direct variant: the output pixels (or, over small maps, the output
  /// channels: kDirectSplitChannelsMaxPixels) split over the threads, then
  /// the activation in place.
  void run_direct(const KernelContext& ctx, const TensorView& x, const TensorView& w, const TensorView* b,
                  const TensorView* z, TensorView& y) {
    const int threads = ctx.num_threads;
    ScratchBuffer* scratch = ctx.scratch;
    const direct_conv_simd::Geometry& g = direct_geo_;
    if (direct_dots_) return run_direct_dots(x, w, direct_bias(b), z, y, threads);
    const float* wp = direct_weights(ctx, w);
    const float* bp = direct_bias(b);
    const int64_t pixels = x.shape[0] * g.OH * g.OW;
    const int64_t macs = y.numel() * g.IC * g.KH * g.KW;
    const float* xs = x.as<const float>();
    if (direct_pad_.planes) {
      // In every layout here X is a run of planes (one channel block of one
      // image each) of H rows src_row floats long.
      const DirectPad& p = direct_pad_;
      const int64_t out_row = p.Wp * p.pix, lead = p.left * p.pix, out_plane = p.Hp * out_row;
      const size_t bytes = static_cast<size_t>(p.planes * out_plane) * sizeof(float);
      if (!scratch) {
        if (!own_scratch_) own_scratch_ = std::make_unique<ScratchBuffer>();
        scratch = own_scratch_.get();
      }
      float* buf = static_cast<float*>(scratch->get(bytes));
      parallel_ranges(
          p.planes * p.Hp, threads,
          [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t plane = r / p.Hp, ih = r % p.Hp - p.top;
              float* d = buf + r * out_row;
              if (ih < 0 || ih >= p.H) {
                std::fill(d, d + out_row, 0.f);
                continue;
              }
              const float* src = xs + (plane * p.H + ih) * p.src_row;
              std::fill(d, d + lead, 0.f);
              std::copy(src, src + p.src_row, d + lead);
              std::fill(d + lead + p.src_row, d + out_row, 0.f);
            }
          },
          p.planes * out_plane);
      xs = buf;
    }
    const float* zp = z ? z->as<const float>() : nullptr;
    // Over a small map the threads split the output channels, each reading
    // its share of W once, rather than the pixels, each reading all of W
    // for a few tiles (kDirectSplitChannelsMaxPixels).
    const int64_t vectors = direct_conv_simd::direct_conv_vectors(g);
    const bool by_channels =
        threads > 1 && pixels <= kDirectSplitChannelsMaxPixels && vectors >= kDirectSplitChannelsMinVectors * threads;
    parallel_ranges(
        by_channels ? vectors : pixels, threads,
        [&](int64_t begin, int64_t end) {
          if (by_channels)
            direct_conv_simd::direct_conv_pixels(g, xs, wp, bp, zp, y.as<float>(), 0, pixels, begin, end);
          else
            direct_conv_simd::direct_conv_pixels(g, xs, wp, bp, zp, y.as<float>(), begin, end);
        },
        macs / 8);
    if (epilogue_) epilogue_->run(y, threads);
  }

  /// The taps variant's plan for these shapes: its regions (plan_conv_taps).
  void plan_taps(const Shape& xs, const Shape& ws, const Shape& ys) { taps_plan_ = tap_geometry("taps", xs, ws, ys); }

  /// The taps and im2col_nhwc variants' geometry for these shapes
  /// (plan_conv_taps), W's packed copy forgotten when its shape changed and
  /// the activation's epilogue made. Errors: kInvalidModel naming
  /// `variant` for shapes that are not a 2-D convolution of matching channels.
  TapPlan tap_geometry(const char* variant, const Shape& xs, const Shape& ws, const Shape& ys) {
    if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || ws[1] != xs[1] || ws[0] != ys[1] || xs[0] != ys[0])
      fail(ErrorCode::kInvalidModel, desc_ + ": the " + variant +
                                         " variant needs 2-D X, W and Y of matching channels, got " + shape_str(xs) +
                                         ", " + shape_str(ws) + ", " + shape_str(ys));
    TapPlan p = plan_conv_taps(raw_, xs, ws, ys, desc_);
    if (p.IC != taps_plan_.IC || p.OC != taps_plan_.OC || p.KH != taps_plan_.KH || p.KW != taps_plan_.KW)
      taps_w_ = nullptr;  // W of another shape: packed again
    if (!act_.op.empty() && !epilogue_) epilogue_ = std::make_unique<ActivationEpilogue>(act_);
    return p;
  }

  /// The run's scratch memory, or outside a session one buffer of the
  /// kernel's own.
  ScratchBuffer* run_scratch(const KernelContext& ctx) {
    if (ctx.scratch) return ctx.scratch;
    if (!own_scratch_) own_scratch_ = std::make_unique<ScratchBuffer>();
    return own_scratch_.get();
  }

  /// Rows of region `r` one product of the taps variant takes: its gathered
  /// X pixels and products within kTapsBlockBytes, at least one row.
  static int64_t taps_chunk_rows(const TapPlan& p, const TapRegion& r) {
    const int64_t row_bytes = (r.w1 - r.w0) * (p.IC + p.OC) * static_cast<int64_t>(sizeof(float));
    return std::clamp<int64_t>(static_cast<int64_t>(kTapsBlockBytes) / std::max<int64_t>(row_bytes, 1), 1,
                               r.h1 - r.h0);
  }

  /// W for gemm_simd (gemm_simd::pack_b), through packed_weights: for the
  /// taps variant each tap (kh, kw)'s [IC, OC] matrix packed on its own, at
  /// (kh * KW + kw) * packed_b_floats(IC, OC) floats; for im2col_nhwc the
  /// whole [KH * KW * IC, OC] matrix (rows in (kh, kw, ic) order).
  const float* taps_weights(const KernelContext& ctx, const TensorView& w) {
    if (taps_w_ && taps_w_from_ == w.data && w_constant_) return taps_w_;
    const TapPlan& p = taps_plan_;
    const int64_t taps = p.KH * p.KW;
    const int64_t rows = im2col_nhwc_ ? taps * p.IC : p.IC, matrices = im2col_nhwc_ ? 1 : taps;
    const size_t per_matrix = gemm_simd::packed_b_floats(rows, p.OC), floats = per_matrix * static_cast<size_t>(matrices);
    gemm_simd::Product shape;  // each packed matrix: [rows, OC]
    shape.k = rows;
    shape.n = p.OC;
    const std::string layout = std::string(im2col_nhwc_ ? "gec.im2col/" : "gec.taps/") +
                               gemm_simd::packed_b_layout(shape) + "/" + shape_str(w.shape);
    taps_w_ = packed_weights(ctx, w, layout, floats, [&](float* out) {
      std::vector<float> by_tap(static_cast<size_t>(taps * p.IC * p.OC));
      pack_by_tap(w.as<const float>(), p.OC, p.IC, taps, p.OC, by_tap.data());
      for (int64_t t = 0; t < matrices; ++t) {
        gemm_simd::Product g;
        g.k = rows;
        g.n = p.OC;
        g.b = by_tap.data() + t * rows * p.OC;
        g.ldb = p.OC;
        gemm_simd::pack_b(g, out + static_cast<size_t>(t) * per_matrix);
      }
    });
    taps_w_from_ = w.data;
    return taps_w_;
  }

  /// The taps variant (nhwc X and Y): Y = B (+ Z); then for each image and
  /// each tap that reaches inside X, the X pixels its region reads (taken
  /// in place where they are whole rows of X, else gathered into the run's
  /// scratch memory) times the tap's [IC, OC] matrix (one gemm_simd product
  /// per chunk of taps_chunk_rows rows) added into the region of Y; then the activation, in place. Only the
  /// products of X's own pixels are computed: none of the zero padding.
  /// The sums run tap by tap: results differ from the direct convolution's
  /// by float32 rounding.
  void run_taps(const KernelContext& ctx, const TensorView& x, const TensorView& w, const TensorView* b,
                const TensorView* z, TensorView& y) {
    const TapPlan& p = taps_plan_;
    const int threads = ctx.num_threads;
    const float* wt = taps_weights(ctx, w);
    const int64_t N = x.shape[0], IC = p.IC, OC = p.OC;
    const size_t per_tap = gemm_simd::packed_b_floats(IC, OC);
    const int64_t pixels = N * p.OH * p.OW;
    const float* xs = x.as<const float>();
    const float* bs = b ? b->as<const float>() : nullptr;
    const float* zs = z ? z->as<const float>() : nullptr;
    float* ys = y.as<float>();
    ScratchBuffer* scratch = run_scratch(ctx);
    // Z may be Y itself: each element is read before it is written.
    parallel_ranges(
        pixels, threads,
        [&](int64_t q0, int64_t q1) {
          for (int64_t q = q0; q < q1; ++q) {
            float* row = ys + q * OC;
            for (int64_t c = 0; c < OC; ++c) row[c] = (bs ? bs[c] : 0.f) + (zs ? zs[q * OC + c] : 0.f);
          }
        },
        pixels * OC);
    for (int64_t n = 0; n < N; ++n) {
      const float* xn = xs + n * p.H * p.W * IC;
      float* yn = ys + n * p.OH * p.OW * OC;
      for (const TapRegion& whole : p.taps) {
        for (int64_t hs = whole.h0, chunk = taps_chunk_rows(p, whole); hs < whole.h1; hs += chunk) {
          TapRegion r = whole;  // rows [hs, hs + chunk) of it
          r.h0 = hs;
          r.h1 = std::min(whole.h1, hs + chunk);
          const int64_t P = r.pixels(), cols = r.w1 - r.w0;
          const int64_t ih0 = r.h0 * p.sh - p.ph + r.kh * p.dh, iw0 = r.w0 * p.sw - p.pw + r.kw * p.dw;
          // Whole rows of X in order: the region's pixels as they lie.
          const bool in_place = p.sw == 1 && p.sh == 1 && cols == p.W && iw0 == 0;
          const size_t a_bytes = in_place ? 0 : align64(static_cast<size_t>(P * IC) * sizeof(float));
          auto* base = static_cast<uint8_t*>(scratch->get(a_bytes + static_cast<size_t>(P * OC) * sizeof(float)));
          const float* a = xn + (ih0 * p.W + iw0) * IC;
          if (!in_place) {
            float* g = reinterpret_cast<float*>(base);
            parallel_ranges(
                r.h1 - r.h0, threads,
                [&](int64_t h0, int64_t h1) {
                  for (int64_t h = h0; h < h1; ++h) {
                    const float* src = xn + ((ih0 + h * p.sh) * p.W + iw0) * IC;
                    float* dst = g + h * cols * IC;
                    if (p.sw == 1)
                      std::memcpy(dst, src, static_cast<size_t>(cols * IC) * sizeof(float));
                    else
                      for (int64_t j = 0; j < cols; ++j)
                        std::memcpy(dst + j * IC, src + j * p.sw * IC, static_cast<size_t>(IC) * sizeof(float));
                  }
                },
                P * IC);
            a = g;
          }
          float* c = reinterpret_cast<float*>(base + a_bytes);
          gemm_simd::Product g;
          g.m = P;
          g.n = OC;
          g.k = IC;
          g.a = a;
          g.lda = IC;
          g.b_packed = wt + static_cast<size_t>(r.kh * p.KW + r.kw) * per_tap;
          g.c = c;
          g.ldc = OC;
          gemm_simd::gemm(g, threads);
          parallel_ranges(
              r.h1 - r.h0, threads,
              [&](int64_t h0, int64_t h1) {
                for (int64_t h = h0; h < h1; ++h) {
                  float* dst = yn + ((r.h0 + h) * p.OW + r.w0) * OC;
                  const float* src = c + h * cols * OC;
                  for (int64_t k = 0; k < cols * OC; ++k) dst[k] += src[k];
                }
              },
              P * OC);
        }
      }
    }
    if (epilogue_) epilogue_->run(y, threads);
  }

  /// The im2col_nhwc variant's plan: the geometry (plan_conv_taps: the window
  /// resolved; its regions unused) and the chunk of output pixels one
  /// product [pixels, KH * KW * IC] x [KH * KW * IC, OC] takes
  /// (im2col_nhwc_chunk_: their columns within kTapsBlockBytes, at least one
  /// pixel).
  void plan_im2col_nhwc(const Shape& xs, const Shape& ws, const Shape& ys) {
    TapPlan p = tap_geometry("im2col_nhwc", xs, ws, ys);
    // Chunks of output pixels (consecutive in (n, oh, ow) order: rows of Y
    // in nhwc) whose columns fit kTapsBlockBytes, at least one pixel.
    const int64_t K = p.KH * p.KW * p.IC, pixels = xs[0] * p.OH * p.OW;
    const int64_t chunk = std::clamp<int64_t>(
        static_cast<int64_t>(kTapsBlockBytes) / (K * static_cast<int64_t>(sizeof(float))), 1, pixels);
    im2col_nhwc_chunk_ = chunk;
    taps_plan_ = std::move(p);
  }

  /// The im2col_nhwc variant (nhwc X and Y): Z copied into Y where it is not Y's
  /// buffer already; then per chunk of im2col_nhwc_chunk_ output pixels (in
  /// (n, oh, ow) order, across rows and images),
  /// the columns (each output pixel's KH x KW x IC inputs, zeros where the
  /// window lies in the padding) gathered into the run's scratch memory and
  /// one product with W (gemm_simd, taps_weights: [KH * KW * IC, OC]), + B,
  /// added to Z's values in the chunk of Y in place; then the activation,
  /// in place.
  /// The sums run in the GEMM's order: results differ from the direct
  /// convolution's by float32 rounding.
  void run_im2col_nhwc(const KernelContext& ctx, const TensorView& x, const TensorView& w, const TensorView* b,
                  const TensorView* z, TensorView& y) {
    const TapPlan& p = taps_plan_;
    const int threads = ctx.num_threads;
    const float* wt = taps_weights(ctx, w);
    const int64_t N = x.shape[0], IC = p.IC, OC = p.OC, K = p.KH * p.KW * IC;
    const float* xs = x.as<const float>();
    float* ys = y.as<float>();
    if (z && z->data != y.data) copy_floats(ys, z->as<const float>(), y.numel(), threads);
    ScratchBuffer* scratch = run_scratch(ctx);
    const int64_t plane = p.OH * p.OW, pixels = N * plane;
    for (int64_t q0 = 0; q0 < pixels; q0 += im2col_nhwc_chunk_) {
      const int64_t P = std::min(im2col_nhwc_chunk_, pixels - q0);
      auto* cols = static_cast<float*>(scratch->get(static_cast<size_t>(P * K) * sizeof(float)));
      parallel_ranges(
          P, threads,
          [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              const int64_t q = q0 + r, n = q / plane, oh = q % plane / p.OW, ow = q % p.OW;
              const float* xn = xs + n * p.H * p.W * IC;
              float* row = cols + r * K;
              for (int64_t kh = 0; kh < p.KH; ++kh) {
                const int64_t ih = oh * p.sh - p.ph + kh * p.dh;
                for (int64_t kw = 0; kw < p.KW; ++kw) {
                  const int64_t iw = ow * p.sw - p.pw + kw * p.dw;
                  float* dst = row + (kh * p.KW + kw) * IC;
                  if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W)
                    std::fill(dst, dst + IC, 0.f);
                  else
                    std::memcpy(dst, xn + (ih * p.W + iw) * IC, static_cast<size_t>(IC) * sizeof(float));
                }
              }
            }
          },
          P * K);
      gemm_simd::Product g;  // Y's chunk (= Z where there is one) += columns x W (+ B)
      g.m = P;
      g.n = OC;
      g.k = K;
      g.a = cols;
      g.lda = K;
      g.b_packed = wt;
      g.bias = b ? b->as<const float>() : nullptr;
      g.c = ys + q0 * OC;
      g.ldc = OC;
      g.accumulate = z != nullptr;
      gemm_simd::gemm(g, threads);
    }
    if (epilogue_) epilogue_->run(y, threads);
  }

  /// The direct variant over one pixel an image and a 1x1 window (plan_direct's
  /// direct_dots_): Y [N][OC] = W [OC, IC] X [N][IC] + B (+ Z), then the
  /// activation, as dot products of W's rows (dot_simd.h), up to kMaxRows
  /// images at a time, the rows of W split over the threads. W is read once
  /// a run in its own order (the packed [IC][OCp] copy of the loops read it
  /// 16 columns at a time, one thread: 2x oneDNN's time on
  /// mobilenet_v3_large's 240 x 960 squeeze-excite layers).
  void run_direct_dots(const TensorView& x, const TensorView& w, const float* bias, const TensorView* z, TensorView& y,
                       int threads) {
    const direct_conv_simd::Geometry& g = direct_geo_;
    const int64_t N = x.shape[0], OC = g.OC, IC = g.IC;
    const float* xs = x.as<const float>();
    const float* ws = w.as<const float>();
    const float* zs = z ? z->as<const float>() : nullptr;
    float* ys = y.as<float>();
    simd::PiecewiseOp op = simd::PiecewiseOp::kClip;  // Relu: Clip to [0, inf), NaN kept
    float lo = 0.f, hi = std::numeric_limits<float>::infinity();
    if (g.act != direct_conv_simd::Activation::kNone && g.act != direct_conv_simd::Activation::kRelu) {
      const int kClip = static_cast<int>(direct_conv_simd::Activation::kClip);
      op = static_cast<simd::PiecewiseOp>(static_cast<int>(g.act) - kClip);  // the inverse of piecewise()
      lo = g.act_alpha, hi = g.act_beta;
    }
    const int nt = threads > 1 && N * OC * IC >= (1 << 16) ? threads : 1;
    parallel_for(nt, nt, [&](int64_t t) {
      const int64_t m0 = OC * t / nt, m1 = OC * (t + 1) / nt;
      if (m0 == m1) return;
      for (int64_t n = 0; n < N; ++n) {
        float* row = ys + n * OC;
        // Z may be Y itself (then it is there already).
        for (int64_t m = m0; m < m1; ++m) row[m] = bias[m] + (zs ? zs[n * OC + m] : 0.f);
      }
      for (int64_t n = 0; n < N; n += dot_simd::kMaxRows)
        dot_simd::dots_nt(std::min(dot_simd::kMaxRows, N - n), m1 - m0, IC, xs + n * IC, ws + m0 * IC, 1.f,
                          ys + n * OC + m0, OC);
      if (g.act != direct_conv_simd::Activation::kNone)
        for (int64_t n = 0; n < N; ++n) simd::piecewise_f32(op, lo, hi, ys + n * OC + m0, ys + n * OC + m0, m1 - m0);
    });
    if (epilogue_) epilogue_->run(y, threads);
  }

  /// The native depthwise path: every (n, c) plane on its own, in parallel,
  /// then the activation in place.
  /// X [N,C,H,W] or [N,C,W] (H = 1), Y likewise.
  void run_depthwise(const TensorView& x, const TensorView& w, const TensorView* b, TensorView& y, int threads) {
    const bool two_d = x.shape.size() == 4;
    const int64_t N = x.shape[0], C = x.shape[1], H = two_d ? x.shape[2] : 1, W = x.shape.back();
    const int64_t OH = two_d ? y.shape[2] : 1, OW = y.shape.back();
    const float* xs = x.as<const float>();
    const float* ws = w.as<const float>();
    const float* bs = b ? b->as<const float>() : nullptr;
    float* ys = y.as<float>();
    const int64_t planes = N * C, kk = dw_.kh * dw_.kw;
    const bool par = threads > 1 && planes > 1 && y.numel() * kk >= 64 * 1024;
    parallel_for(planes, par ? threads : 1, [&](int64_t p) {
      const int64_t c = p % C;
      depthwise_simd::depthwise_plane(xs + p * H * W, H, W, ws + c * kk, dw_.kh, dw_.kw, dw_.sh, dw_.sw, dw_.ph,
                                      dw_.pw, bs ? bs[c] : 0.f, ys + p * OH * OW, OH, OW);
    });
    if (epilogue_) epilogue_->run(y, threads);
  }

  /// Which plain convolutions run as one oneDNN MatMul instead (decided
  /// from the node, as the kernel name is planned at compile time): oneDNN
  /// 2.6 runs a plain convolution as im2col + its sgemm, whose first call in
  /// a process generates the sgemm kernels (35-60 ms measured here), while
  /// its MatMul is a brgemm kernel made per primitive (about 1 ms). Two
  /// forms need no general im2col (dilation 1, no padding: auto_pad NOTSET
  /// or VALID) and one is the general im2col; all three plain src and dst,
  /// group 1, no residual, a static W, and not the "post_op" variant (which keeps oneDNN's
  /// convolution for tests). X and Y must fit (matmul_fits: a brgemm MatMul,
  /// bounded frames; or few_positions and shapes_fit: the dot products): with static shapes that is decided here; with shapes
  /// known only at run (a subgraph's) at each reshape, where a misfit runs
  /// oneDNN's convolution in this kernel (a 128 -> 1 channel pointwise conv
  /// of width 1 in silero_vad_v5's If branch was oneDNN's ref:any):
  ///   kPointwise  every kernel dim 1, stride 1: Y[n] = W[M,C] x X[n][C,S]
  ///               (S = the spatial size);
  ///   kFrames     1-D with one input channel (an STFT-style front end):
  ///               the windows of X as frames F[n][t][k] = X[n,0,t*s + k],
  ///               Y[n] = W[M,K] x F[n]^T (measured standalone for
  ///               [1,1,16000] * [257,1,512] stride 160: 193 us against
  ///               257 us for oneDNN's gemm convolution);
  ///   kIm2col     any other 1-D or 2-D window (padding, strides and
  ///               dilations of any kind): the columns of X, C[n][k][s]
  ///               = X[n, ic, the cell of window offset (kh, kw) for output
  ///               s] with k = (ic, kh, kw) as W's rows run and 0 in the
  ///               padding, Y[n] = W[M,K] x C[n] (what oneDNN's gemm
  ///               convolution does, on its brgemm MatMul: within 10% of it
  ///               standalone, 2 threads, e.g. 64 ch 3x3 56x56 1908 vs 1725
  ///               us, 128 ch 28x28 1456 vs 1570 us; the transposed [s][k]
  ///               order was 1.3-2x slower), for columns of at most
  ///               kMaxColumnBytes.
  enum class MatmulForm { kNone, kPointwise, kFrames, kIm2col };
  MatmulForm matmul_form(const Shape& ws) const {
    if (group_ != 1 || ws.size() < 3 || ws.size() > 5) return MatmulForm::kNone;
    const bool plain_window = ops::unpadded_undilated(raw_);
    bool unit = true, stride1 = true;
    for (size_t i = 2; i < ws.size(); ++i) unit = unit && ws[i] == 1;
    for (int64_t st : raw_.strides) stride1 = stride1 && st == 1;
    if (plain_window && unit && stride1) return MatmulForm::kPointwise;
    if (plain_window && ws.size() == 3 && ws[1] == 1 && ws[2] > 1) return MatmulForm::kFrames;
    if (ws.size() == 3 || ws.size() == 4) return MatmulForm::kIm2col;
    return MatmulForm::kNone;
  }

  /// kIm2col: the window of X `xs` for W `ws`, per spatial dim (1-D as
  /// height 1): kernel, stride, dilation, begin padding, input and output
  /// sizes.
  struct Im2col {
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0, ih = 1, iw = 1, oh = 1, ow = 1;
  };
  std::optional<Im2col> im2col_geometry(const Shape& xs, const Shape& ws) const {
    const size_t sp = xs.size() - 2;
    if (sp < 1 || sp > 2 || ws.size() != xs.size()) return std::nullopt;
    try {
      std::vector<int64_t> wk(ws.begin() + 2, ws.end());
      const ops::WindowAttrs a = ops::resolve_window_attrs(raw_, sp, &wk, desc_);
      const ops::WindowGeom g = ops::window_geometry(desc_, a, Shape(xs.begin() + 2, xs.end()));
      Im2col c;
      const size_t h = sp == 2 ? 0 : sp, w = sp - 1;  // 1-D: height 1 (index sp = none)
      if (sp == 2) {
        c.kh = a.kernel[h], c.sh = a.strides[h], c.dh = a.dilations[h], c.ph = g.pad_begin[h];
        c.ih = xs[2 + h], c.oh = g.out[h];
      }
      c.kw = a.kernel[w], c.sw = a.strides[w], c.dw = a.dilations[w], c.pw = g.pad_begin[w];
      c.iw = xs[2 + w], c.ow = g.out[w];
      return c;
    } catch (const Error&) {
      return std::nullopt;  // attributes the shapes cannot take: the convolution's own error
    }
  }

  /// The MatMul's memory descriptors and primitive descriptor for X `xs`,
  /// W `ws`, Y `ys` (A = W [1,M,K]; B = X [N,C,S] or the frames [N][S][K]
  /// read transposed; C = Y [N,M,S]). oneDNN 2.6's brgemm MatMul takes its
  /// bias argument along the last dim only (one per row of A gave ref:any,
  /// 1 s for SqueezeNet's head), so the bias B [M] is a binary add post-op
  /// of dims [1,M,1], and a piecewise-linear activation (Relu, LeakyRelu,
  /// Clip) an eltwise one after it, where oneDNN keeps its brgemm kernel
  /// with them (`bias_fused`, `act_fused`); else run_matmul adds B and
  /// runs the activation in passes of their own over Y. SqueezeNet 1.1's
  /// 512 -> 1000 head (13x13, Relu), in one pass: 0.525 -> 0.498 ms
  /// (`gec profile`, medians of 6 alternating runs).
  struct MatmulDescs {
    memory::desc a, b, c, bias;
    dnnl::matmul::primitive_desc pd;
    bool bias_fused = false, act_fused = false;
    std::string impl_info_str() const { return pd.impl_info_str(); }
  };
  /// Whether act_ may run as a post-op of the MatMul: a piecewise-linear
  /// one (as cheap there as in a pass of its own), not asked of the kernel.
  bool act_fits_matmul() const {
    return act_impl_ == "auto" && (act_.op == "Relu" || act_.op == "LeakyRelu" || act_.op == "Clip");
  }
  MatmulDescs matmul_desc(const Shape& xs, const Shape& ws, const Shape& ys) const {
    using dims = memory::dims;
    const auto f32 = memory::data_type::f32;
    const int64_t N = xs[0], M = ws[0], S = shape_numel(ys) / std::max<int64_t>(N * M, 1);
    const int64_t K = matmul_ == MatmulForm::kFrames   ? ws[2]
                      : matmul_ == MatmulForm::kIm2col ? shape_numel(ws) / std::max<int64_t>(M, 1)
                                                       : xs[1];
    MatmulDescs d;
    d.a = memory::desc(dims{1, M, K}, f32, dims{M * K, K, 1});
    // X itself and the columns are [N][K][S]; the frames [N][S][K] (read transposed).
    d.b = matmul_ == MatmulForm::kFrames ? memory::desc(dims{N, K, S}, f32, dims{S * K, 1, K})
                                         : memory::desc(dims{N, K, S}, f32, dims{K * S, S, 1});
    d.c = memory::desc(dims{N, M, S}, f32, dims{M * S, S, 1});
    const dnnl::matmul::desc md(d.a, d.b, d.c);
    if (has_bias_ || act_fits_matmul()) {
      dnnl::post_ops po;
      if (has_bias_) {
        d.bias = memory::desc(dims{1, M, 1}, f32, dims{M, 1, 1});
        po.append_binary(dnnl::algorithm::binary_add, d.bias);
      }
      if (act_fits_matmul()) po = make_post_ops(act_, false, po);
      dnnl::primitive_attr attr = Scratchpad::attr();
      attr.set_post_ops(po);
      try {
        d.pd = dnnl::matmul::primitive_desc(md, attr, cpu_engine());
        if (is_brgemm_implementation(d.pd.impl_info_str())) {
          d.bias_fused = has_bias_;
          d.act_fused = act_fits_matmul();
          return d;
        }
      } catch (const dnnl::error&) {
        // Not with these post-ops: without them below.
      }
      d.bias = memory::desc();
    }
    try {
      d.pd = dnnl::matmul::primitive_desc(md, Scratchpad::attr(), cpu_engine());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a MatMul for X " + shape_str(xs) + ", W " + shape_str(ws), e);
    }
    return d;
  }

  /// The frames of X at most this many bytes and times X's (a stride much
  /// smaller than the window would copy X many times over, outside the
  /// arena): beyond, oneDNN's convolution runs.
  static constexpr int64_t kMaxFrameBytes = 32 << 20, kMaxFrameRatio = 8;
  /// kIm2col: the columns (a 3x3 window copies X 9 times) at most this many
  /// bytes (in the run's scratch memory, which the steps share); beyond,
  /// oneDNN's convolution runs. 16 MiB takes in wav2vec 2.0's feature
  /// convolutions (512 channels, k3 s2 over 3199 frames: 9.4 MiB of
  /// columns), whose oneDNN convolution (brgconv between nwc reorders) took
  /// 10.5 against 7.8-8.1 ms as columns, and 108 against 50-61 ms in the
  /// first run (a wav2vec2-like model, 2 threads).
  static constexpr int64_t kMaxColumnBytes = 16 << 20;

  /// X, W, Y as the form needs them (the shapes a run may bring too).
  bool shapes_fit(const Shape& xs, const Shape& ws, const Shape& ys) const {
    if (xs.size() != ws.size() || ys.size() != xs.size() || xs[0] != ys[0] || ys[1] != ws[0] || shape_numel(xs) == 0 ||
        shape_numel(ys) == 0)
      return false;
    if (matmul_ == MatmulForm::kPointwise)
      return xs[1] == ws[1] && std::equal(xs.begin() + 2, xs.end(), ys.begin() + 2);
    if (matmul_ == MatmulForm::kIm2col) {
      const auto c = im2col_geometry(xs, ws);
      const bool two_d = xs.size() == 4;
      if (!c || xs[1] != ws[1] || (two_d && ys[2] != c->oh) || ys.back() != c->ow) return false;
      const int64_t columns = xs[0] * c->oh * c->ow * (shape_numel(ws) / ws[0]) * static_cast<int64_t>(sizeof(float));
      return columns <= kMaxColumnBytes;
    }
    const int64_t frames = xs[0] * ys[2] * ws[2] * static_cast<int64_t>(sizeof(float));
    return xs[1] == 1 && frame_stride_ >= 1 && (ys[2] - 1) * frame_stride_ + ws[2] <= xs[2] &&
           frames <= kMaxFrameBytes &&
           frames <= kMaxFrameRatio * shape_numel(xs) * static_cast<int64_t>(sizeof(float));
  }

  /// Y [N, M, ...] with at most dot_simd::kMaxRows output positions per
  /// image: the matmul form runs as dot products (run_dots).
  static bool few_positions(const Shape& ys) {
    return ys.size() >= 2 && shape_numel(ys) / std::max<int64_t>(ys[0] * ys[1], 1) <= dot_simd::kMaxRows;
  }

  /// At kernel creation: the shapes fit and oneDNN has its brgemm MatMul for
  /// them (the descriptors are kept for build_matmul).
  bool matmul_fits(const Shape& xs, const Shape& ws, const Shape& ys) {
    if (!shapes_fit(xs, ws, ys)) return false;
    try {
      planned_ = matmul_desc(xs, ws, ys);
      planned_shapes_ = {xs, ws, ys};
      planned_threads_ = omp_get_max_threads();
      return is_brgemm_implementation(planned_->impl_info_str());
    } catch (const Error&) {
      return false;  // oneDNN refused the descriptors: its convolution runs
    }
  }

  void build_matmul(const Shape& xs, const Shape& ws, const Shape& ys) {
    if (!shapes_fit(xs, ws, ys))
      fail(ErrorCode::kInvalidArgument, desc_ + ": X " + shape_str(xs) + " does not fit W " + shape_str(ws) +
                                            " and Y " + shape_str(ys) + " (or its frames would be too large)");
    if (matmul_ == MatmulForm::kIm2col) im2col_ = *im2col_geometry(xs, ws);
    if (!act_.op.empty() && !epilogue_) epilogue_ = std::make_unique<ActivationEpilogue>(act_);
    mm_bias_fused_ = mm_act_fused_ = false;
    // A handful of output positions: dot products (run_dots), no primitive.
    const int64_t N = xs[0], M = ws[0], S = shape_numel(ys) / std::max<int64_t>(N * M, 1),
                  K = shape_numel(ws) / std::max<int64_t>(M, 1);
    dots_ = few_positions(ys);
    if (dots_) {
      scratch_.set(memory::desc());
      // The frames (kFrames) or columns (kIm2col) as the MatMul reads them,
      // then (not kFrames) the same as rows [N][S][K], then C [S][M].
      const int64_t copies = matmul_ == MatmulForm::kIm2col ? 2 : 1;
      frame_bytes_ = static_cast<size_t>(copies * N * S * K + S * M) * sizeof(float);
      mm_ = dnnl::matmul();
      return;
    }
    // oneDNN sizes a MatMul by the creating thread's OpenMP count: the
    // planned descriptors only for the count they were made with (a brgemm
    // MatMul made for 2 threads and run on 1 left its Relu post-op off part
    // of Y).
    const bool planned = planned_ && planned_shapes_ == std::array<Shape, 3>{xs, ws, ys} &&
                         planned_threads_ == omp_get_max_threads();
    const MatmulDescs d = planned ? *planned_ : matmul_desc(xs, ws, ys);
    try {
      mm_ = dnnl::matmul(d.pd);
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a MatMul for X " + shape_str(xs) + ", W " + shape_str(ws), e);
    }
    scratch_.set(d.pd.scratchpad_desc());
    frame_bytes_ = matmul_ == MatmulForm::kPointwise ? 0 : d.b.get_size();  // frames [N][S][K], columns [N][K][S]
    src_ = unbound_memory(d.a);
    mm_b_ = unbound_memory(d.b);
    dst_ = unbound_memory(d.c);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, mm_b_}, {DNNL_ARG_DST, dst_}};
    mm_bias_fused_ = d.bias_fused;
    mm_act_fused_ = d.act_fused;
    if (mm_bias_fused_) {
      bias_ = unbound_memory(d.bias);
      args_[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = bias_;
    }
  }

  /// Y[n, m, s] = sum over k of W[m, k] * rows[n][s][k] for S <= dot_simd::
  /// kMaxRows output positions (build_matmul's dots_): oneDNN's MatMul
  /// costs 8-10 us a call at such sizes (a [1,64,2] x [64,64,3] convolution
  /// of 25 KFLOP: 10 us), the dot products a few. `f`: the run's buffer of
  /// frame_bytes_ (kFrames: the frames [N][S][K] already in it; kIm2col: the
  /// columns [N][K][S]).
  void run_dots(const TensorView& x, const TensorView& w, float* f, TensorView& y, int threads) {
    const int64_t N = y.shape[0], M = y.shape[1], S = y.numel() / std::max<int64_t>(N * M, 1),
                  K = w.numel() / std::max<int64_t>(M, 1);
    const float* rows = f;
    float* next = f + N * S * K;
    if (matmul_ != MatmulForm::kFrames) {  // [N][K][S] -> [N][S][K]
      const float* cols = matmul_ == MatmulForm::kIm2col ? f : x.as<const float>();
      float* r = matmul_ == MatmulForm::kIm2col ? next : f;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t s = 0; s < S; ++s) r[(n * S + s) * K + k] = cols[(n * K + k) * S + s];
      rows = r;
      next = r + N * S * K;
    }
    float* c = next;  // [S][M]
    const float* wd = w.as<const float>();
    float* yd = y.as<float>();
    const int nt = threads > 1 && S * M * K >= (1 << 16) ? threads : 1;
    for (int64_t n = 0; n < N; ++n) {
      parallel_for(nt, nt, [&](int64_t t) {
        const int64_t m0 = M * t / nt, m1 = M * (t + 1) / nt;
        dot_simd::dots_nt(S, m1 - m0, K, rows + n * S * K, wd + m0 * K, 0.f, c + m0, M);
      });
      for (int64_t m = 0; m < M; ++m)
        for (int64_t s = 0; s < S; ++s) yd[(n * M + m) * S + s] = c[s * M + m];
    }
  }

  /// X (or its frames) as MatMul B, W as A, then the activation in place.
  void run_matmul(const TensorView& x, const TensorView& w, const TensorView* b, TensorView& y, KernelContext& ctx) {
    const void* bdata = x.data;
    // The frames or columns live in the run's scratch memory, after the
    // MatMul's scratchpad.
    float* f = static_cast<float*>(scratch_.bind_with(args_, ctx.scratch, frame_bytes_));
    if (matmul_ == MatmulForm::kFrames) {
      const int64_t N = x.shape[0], L = x.shape[2], K = w.shape[2], S = y.shape[2];
      const float* xs = x.as<const float>();
      const bool par = ctx.num_threads > 1 && N * S * K >= 64 * 1024;
      parallel_for(N * S, par ? ctx.num_threads : 1, [&](int64_t r) {
        std::memcpy(f + r * K, xs + (r / S) * L + (r % S) * frame_stride_, static_cast<size_t>(K) * sizeof(float));
      });
      bdata = f;
    } else if (matmul_ == MatmulForm::kIm2col) {
      fill_columns(x, f, ctx.num_threads);
      bdata = f;
    }
    if (dots_) {
      run_dots(x, w, f, y, ctx.num_threads);
    } else {
      bind(src_, w.data);
      bind(mm_b_, bdata);
      bind(dst_, y.data);
      if (b && mm_bias_fused_) bind(bias_, b->data);
      mm_.execute(cpu_stream(), args_);
      cpu_stream().wait();
      if (mm_act_fused_) return;  // the bias too, as post-ops
      if (mm_bias_fused_) b = nullptr;
    }
    if (b) {  // Y[n, m, :] += B[m]
      const int64_t M = y.shape[1], rows = y.shape[0] * M, S = y.numel() / std::max<int64_t>(rows, 1);
      const float* bs = b->as<const float>();
      float* ys = y.as<float>();
      const bool par = ctx.num_threads > 1 && y.numel() >= 64 * 1024;
      parallel_for(rows, par ? ctx.num_threads : 1, [&](int64_t r) {
        const float v = bs[r % M];
        float* row = ys + r * S;
#pragma omp simd
        for (int64_t i = 0; i < S; ++i) row[i] += v;
      });
    }
    if (epilogue_) epilogue_->run(y, ctx.num_threads);
  }

  /// kIm2col: f[n][(ic*KH + kh)*KW + kw][oh*OW + ow] = X[n, ic, oh*SH - PH
  /// + kh*DH, ow*SW - PW + kw*DW], 0 outside X.
  void fill_columns(const TensorView& x, float* f, int threads) const {
    const Im2col& c = im2col_;
    const int64_t N = x.shape[0], IC = x.shape[1], S = c.oh * c.ow, K = IC * c.kh * c.kw;
    const float* xs = x.as<const float>();
    const bool par = threads > 1 && N * S * K >= 64 * 1024;
    parallel_for(N * K, par ? threads : 1, [&](int64_t r) {
      const int64_t n = r / K, k = r % K, ic = k / (c.kh * c.kw), kh = (k / c.kw) % c.kh, kw = k % c.kw;
      const float* plane = xs + (n * IC + ic) * c.ih * c.iw;
      float* row = f + r * S;
      for (int64_t oh = 0; oh < c.oh; ++oh) {
        float* out = row + oh * c.ow;
        const int64_t ih = oh * c.sh - c.ph + kh * c.dh;
        if (ih < 0 || ih >= c.ih) {
          std::fill(out, out + c.ow, 0.f);
          continue;
        }
        const float* in = plane + ih * c.iw;
        for (int64_t ow = 0; ow < c.ow; ++ow) {
          const int64_t iw = ow * c.sw - c.pw + kw * c.dw;
          out[ow] = iw >= 0 && iw < c.iw ? in[iw] : 0.f;
        }
      }
    });
  }

  void build(const Shape& xs, const Shape& ws, bool has_bias, const Shape& ys) {
    const memory::desc src = activation_md(xs, src_layout_, desc_), dst = activation_md(ys, dst_layout_, desc_),
                       user_w = plain_md(onednn_weight_dims(ws, group_));
    try {
      using cf = dnnl::convolution_forward;
      // The nhwc variant: the primitive in nhwc, X, Z and Y reordered from
      // and to nChw16c, where oneDNN has its brgemm kernel for it on this
      // CPU (else, e.g. a .gom run without AVX-512, the direct one).
      // (prefer_cheap_creation: the pick direct_pd below makes.)
      std::optional<cf::primitive_desc> nhwc_pd;
      if (nhwc_) {
        try {
          const cf::desc dn =
              conv_desc(raw_, group_, xs, ws, has_bias, ys, ops::Layout::kNhwc, ops::Layout::kNhwc, desc_);
          cf::primitive_desc pn = prefer_cheap_creation(cf::primitive_desc(dn, post_ops_attr(act_), cpu_engine()), ws,
                                                        group_, ops::Layout::kNhwc, ops::Layout::kNhwc);
          if (is_brgemm_implementation(pn.impl_info_str())) nhwc_pd = pn;
        } catch (const dnnl::error&) {
        }
      }
      nhwc_now_ = nhwc_pd.has_value();
      const ops::Layout run_src = nhwc_now_ ? ops::Layout::kNhwc : src_layout_,
                        run_dst = nhwc_now_ ? ops::Layout::kNhwc : dst_layout_;
      const cf::desc d = conv_desc(raw_, group_, xs, ws, has_bias, ys, run_src, run_dst, desc_);
      // The winograd variant where oneDNN offers a Winograd kernel that pays
      // for these shapes and this thread count (else, e.g. a .gom run on a
      // CPU without them, the direct one).
      const std::optional<WinogradPrimitive> wino =
          winograd_ ? paying_winograd(raw_, group_, xs, ws, has_bias, ys, src_layout_, dst_layout_, desc_,
                                      post_ops_attr(act_))
                    : std::nullopt;
      const auto direct_pd = [&](const dnnl::primitive_attr& attr) {
        return prefer_cheap_creation(cf::primitive_desc(d, attr, cpu_engine()), ws, group_, run_src, run_dst);
      };
      cf::primitive_desc pd = wino ? wino->pd : nhwc_pd ? *nhwc_pd : direct_pd(post_ops_attr(act_));
      native_act_ = !act_.op.empty() && (act_impl_ == "kernel" || (act_impl_ == "auto" && slow_eltwise_post_ops(pd)));
      if (native_act_) {
        pd = wino ? cf::primitive_desc(wino->desc, post_ops_attr({}), cpu_engine()) : direct_pd(post_ops_attr({}));
        if (!epilogue_) epilogue_ = std::make_unique<ActivationEpilogue>(act_);
      }
      blocked_ = nhwc_now_;
      if (src_layout_ == ops::Layout::kPlain && dst_layout_ == ops::Layout::kPlain && act_impl_ != "post_op" &&
          (xs.size() == 3 || xs.size() == 4) && gemm_or_reference(pd.impl_info_str())) {
        const cf::desc da = conv_desc(raw_, group_, xs, ws, has_bias, ys, src_layout_, dst_layout_, desc_, true);
        cf::primitive_desc pa(da, post_ops_attr(native_act_ ? ops::FusedActivation{} : act_), cpu_engine());
        if (!gemm_or_reference(pa.impl_info_str())) {
          pd = pa;
          blocked_ = true;
        }
      }
      conv_ = cf(pd);
      scratch_.set(pd.scratchpad_desc());
      weights_.reset(user_w, pd.weights_desc());
      // X and Y as the primitive reads them: plain, or (blocked_) in its
      // layout, in the run's scratch memory between reorders.
      src_ = unbound_memory(pd.src_desc());
      dst_ = unbound_memory(pd.dst_desc());
      if (blocked_) {
        src_plain_ = unbound_memory(src);
        dst_plain_ = unbound_memory(dst);
        to_blocked_src_ = dnnl::reorder(src_plain_, src_);
        to_blocked_dst_ = dnnl::reorder(dst_plain_, dst_);  // the residual Z, for the sum post-op
        to_plain_dst_ = dnnl::reorder(dst_, dst_plain_);
        src_bytes_ = align64(pd.src_desc().get_size());
        blocked_bytes_ = src_bytes_ + align64(pd.dst_desc().get_size());
      }
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a convolution for X " + shape_str(xs) + ", W " + shape_str(ws), e);
    }
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};
    if (has_bias) {
      bias_ = unbound_memory(plain_md({ws[0]}));
      args_[DNNL_ARG_BIAS] = bias_;
    }
  }

  /// The post-ops: the residual sum (if any), then `act` (if any).
  dnnl::primitive_attr post_ops_attr(const ops::FusedActivation& act) const {
    return conv_post_ops_attr(act, residual_);
  }

  void check_residual(const TensorView& z, const TensorView& y) const {
    require_f32(desc_, z.dtype);
    if (z.shape != y.shape)
      fail(ErrorCode::kInvalidArgument,
           desc_ + ": residual Z " + shape_str(z.shape) + " must have the output's shape " + shape_str(y.shape));
  }

  /// Y = act(B + Z) when the convolution sums over no input (C = 0).
  void fill_bias(TensorView& y, const TensorView* b, const TensorView* z) const {
    const int64_t n = y.shape[0], m = y.shape[1], inner = y.numel() / std::max<int64_t>(n * m, 1);
    float* out = y.as<float>();
    for (int64_t i = 0; i < n * m; ++i)
      for (int64_t j = i * inner; j < (i + 1) * inner; ++j) {
        const float v = (b ? b->as<float>()[i % m] : 0.f) + (z ? z->as<float>()[j] : 0.f);
        out[j] = act_.op.empty() ? v : ops::apply_activation(act_, v);
      }
  }

  std::string desc_;
  ops::WindowAttrs raw_;
  int64_t group_;
  ops::FusedActivation act_;
  bool residual_;
  bool has_bias_;                                 // the node has input B
  std::string act_impl_ = "auto";                 // where the activation runs: auto, post_op, kernel
  bool winograd_ = false;                         // the winograd variant (conv_variant_choice)
  bool nhwc_ = false;                             // the nhwc variant (conv_variant_choice)
  bool nhwc_now_ = false;                         //   and oneDNN's nhwc brgemm kernel runs it (run_blocked);
                                                  //   else the direct one (impl_name still says planned nhwc)
  ops::Layout src_layout_, dst_layout_;  // ops/layout.h
  bool native_act_ = false;                       // run act_ by epilogue_, not as a post-op
  bool blocked_ = false;                          // X and Y reordered for the primitive's layout (run_blocked)
  memory src_plain_, dst_plain_;                  //   the caller's X and Y (Z), plain or nChw16c
  dnnl::reorder to_blocked_src_, to_blocked_dst_, to_plain_dst_;
  size_t src_bytes_ = 0, blocked_bytes_ = 0;      //   X's copy, both copies: in the run's scratch
  bool native_dw_ = false;                        // plain depthwise: our own loop (run_depthwise)
  bool wino_nhwc_ = false;                        // the winograd_nhwc variant (conv_variant_choice)
  bool wino_now_ = false;                         //   and these shapes take it (plan_winograd)
  bool wino_fell_back_ = false;                   //   or not: oneDNN's convolution runs (impl_name says so)
  winograd_simd::Geometry wino_;                  //   for these shapes
  int64_t wino_block_ = 0;                        //   tiles per block
  Scratchpad wino_scratch_;                       //   none: V and M in the run's buffer
  const float* wino_w_ = nullptr;                 //   W transformed (winograd_weights)
  const void* wino_w_from_ = nullptr;             //   the W it was transformed from
  bool direct_ = false;                           // the direct variant: our own loop (run_direct)
  direct_conv_simd::Geometry direct_geo_;         //   for these shapes
  const float* direct_w_ = nullptr;               //   W packed (direct_weights): shared_w_'s or own_w_
  const void* direct_w_from_ = nullptr;           //   the W it was packed from
  std::shared_ptr<const void> shared_w_;
  std::vector<float> own_w_;
  std::vector<float> direct_b_;                   //   B padded (direct_bias)
  const void* direct_b_from_ = nullptr;
  bool b_constant_ = false;                       //   B is a constant of the model
  DirectPad direct_pad_;                          //   X copied with a zero border (planes 0: not)
  bool direct_dots_ = false;                      //   one pixel an image, 1x1: run_direct_dots
  bool taps_ = false;                             // the taps variant: per-tap products (run_taps)
  TapPlan taps_plan_;                             //   for these shapes
  const float* taps_w_ = nullptr;                 //   W packed for gemm_simd (taps_weights; im2col_nhwc too)
  bool im2col_nhwc_ = false;                      // the im2col_nhwc variant: columns, one GEMM (run_im2col_nhwc)
  int64_t im2col_nhwc_chunk_ = 0;                 //   output pixels one product takes (a chunk)
  const void* taps_w_from_ = nullptr;
  std::unique_ptr<ScratchBuffer> own_scratch_;    //   outside a session
  bool w_constant_ = false;                       //   W is a constant of the model
  MatmulForm matmul_ = MatmulForm::kNone;         // a plain conv run as one MatMul (build_matmul)
  bool matmul_at_run_ = false;                    //   shapes known at run only: checked at reshape
  bool conv_at_run_ = false;                      //   and these shapes did not fit: oneDNN's convolution
  int64_t frame_stride_ = 1;                      // kFrames: the window step along X
  std::optional<MatmulDescs> planned_;            // matmul_fits' descriptors, for these shapes:
  std::array<Shape, 3> planned_shapes_;           //   X, W, Y
  int planned_threads_ = 0;                       //   the OpenMP count they were made with
  size_t frame_bytes_ = 0;                        // kFrames [N][S][K], kIm2col [N][K][S], in the run's scratch
  Im2col im2col_;                                 // kIm2col: the window, for these shapes
  dnnl::matmul mm_;
  bool dots_ = false;                             //   S <= dot_simd::kMaxRows: run_dots, no mm_
  bool dots_named_ = false;                       //   static shapes that choose it: impl_name says so
  bool mm_bias_fused_ = false, mm_act_fused_ = false;  // mm_ adds B / runs act_ as post-ops (matmul_desc)
  memory mm_b_;
  struct {
    int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0;
  } dw_;
  std::unique_ptr<ActivationEpilogue> epilogue_;  // made on first need
  bool empty_ = false;                            // no output or no input channels: no primitive
  dnnl::convolution_forward conv_;
  PackedWeights weights_;
  Scratchpad scratch_;
  memory src_, dst_, bias_;
  std::unordered_map<int, memory> args_;
};

const bool kLayoutQueries = [] {
  register_layout_query("", "Conv", conv_layout_query);
  register_layout_query(ops::kGecDomain, ops::kFusedConvOp, conv_layout_query);
  register_variant_choice("", "Conv", conv_variant_choice);
  register_variant_choice(ops::kGecDomain, ops::kFusedConvOp, conv_variant_choice);
  return true;
}();

GEC_REGISTER_KERNEL("", "Conv", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
  for (size_t i = 0; i < dts.size(); ++i) require_f32(n, dts[i]);
  return std::make_unique<ConvKernel>(n, ops::FusedActivation{}, false, config_);
});

GEC_REGISTER_KERNEL(ops::kGecDomain, ops::kFusedConvOp,
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (size_t i = 0; i < dts.size(); ++i) require_f32(n, dts[i]);
                      return std::make_unique<ConvKernel>(n, ops::read_fused_activation(n), n.has_input(3), config_);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
