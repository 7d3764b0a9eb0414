// ConvTranspose (ONNX ConvTranspose-11) on CPU through oneDNN
// deconvolution_forward.
//
// ONNX weights are [C_in, M/G, k...]; oneDNN's logical order is
// {G, OC/G, IC/G, k...}, so the user descriptor is a strided view of the
// ONNX buffer (no copy) and the primitive's preferred layout is reordered
// once into a kernel-owned buffer. output_padding and output_shape become
// extra (possibly negative) end padding: oneDNN needs
// (out - kr + pb + pe) / s + 1 == in exactly.
//
// With stride equal to the kernel, no padding, dilation 1, one group, 2-D,
// plain, and a W of static shape (the 2x upsampling of U-Net and DB-style
// text detectors), every output cell comes from one input cell, so Y is one
// oneDNN MatMul T[n] = W^T X[n] ([OC*KH*KW, IC] x [IC, H*W], W read in
// place as the transposed src) scattered with the bias:
//   Y[n, oc, i*KH + a, j*KW + b] = T[n][(oc*KH + a)*KW + b][i*W + j] + B[oc].
// T is made a band of R input rows at a time (R*W columns, the largest R
// dividing H whose band fits kBandBytes, 1 MiB), so it stays in cache between the
// MatMul and the scatter and the run's scratch holds one band, not all of T
// (ppocr_v4_det: 0.9 MiB instead of 9.8 MiB, which had to be mapped fresh
// at the first run: 1-16 ms under the VM's huge-page allocation). oneDNN
// 2.6 runs such a deconvolution with its gemm kernel at 10-16 GFLOP/s here
// (ppocr_v4_det's [1,24,160,160] 2x2 stride 2: 7.3 ms); the brgemm MatMul
// takes 1.7 ms and the scatter writes Y once. Kernel name
// `onednn.deconv_as_matmul`, chosen from the node; shapes that do not fit at
// reshape (or a CPU without the brgemm MatMul) run the deconvolution.
//
// X in nhwc (the layout assignment plans it where a convolution wrote X
// nhwc and conv_transpose_layout_query says the MatMul form applies): a
// band of X is then R*W rows of IC contiguous floats, so the MatMul is
// T^T = X W ([R*W, IC] x [IC, OC*KH*KW], both read in place, W's ONNX
// layout [IC][OC][KH][KW] being that row-major matrix) and the scatter
// reads T^T[i*W + j][(oc*KH + a)*KW + b]. Y stays plain.
#include <algorithm>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/layout_md.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(const ir::Node& n, const KernelConfig& config)
      : desc_(n.describe()), raw_(ops::read_window_attrs(n)), group_(n.get_int("group", 1)) {
    matmul_ = matmul_form(n);
    const ops::Layout in = config.input_layout(0);
    nhwc_ = in == ops::Layout::kNhwc;
    if ((in != ops::Layout::kPlain && !nhwc_) || config.output_layout(0) != ops::Layout::kPlain || (nhwc_ && !matmul_))
      fail(ErrorCode::kInvalidModel, desc_ + ": planned reading X in layout " + ops::layout_name(in) + ", writing " +
                                         ops::layout_name(config.output_layout(0)) +
                                         "; only the MatMul form (stride = kernel, 2-D, one group) reads nhwc, "
                                         "and Y is plain");
  }

  /// Whether X `xs` (nhwc), W `ws` and Y `ys` run as the MatMul form on this
  /// CPU (conv_transpose_layout_query); describes the MatMul, makes nothing.
  bool nhwc_matmul_fits(const Shape& xs, const Shape& ws, const Shape& ys) {
    return nhwc_ && build_matmul(xs, ws, ys, /*make=*/false);
  }

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    require_f32(desc_, x.dtype);
    require_f32(desc_, w.dtype);
    if (ctx.out(0).numel() == 0 || x.numel() == 0 || w.numel() == 0) return;
    // Where the MatMul form does not fit (other shapes at run, or a .gom
    // made on a CPU with the brgemm MatMul run on one without), oneDNN's
    // deconvolution runs; an nhwc X is first reordered to plain in the run's
    // scratch memory (oneDNN has only its reference deconvolution for an
    // nhwc src into a plain dst: 327 ms against 35 for ppocr_v4_det's).
    deconv_at_run_ = matmul_ && !build_matmul(x.shape, w.shape, ctx.out(0).shape);
    if (!matmul_ || deconv_at_run_) build(x.shape, w.shape, ctx.has_input(2), ctx.out(0).shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    const TensorView* b = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    if (x.numel() == 0 || w.numel() == 0) return fill_bias(y, b);
    if (matmul_ && !deconv_at_run_) return run_matmul(x, w, b, y, ctx);
    bind(dst_, y.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(w.data, ctx, 1);
    if (b) bind(bias_, b->data);
    if (nhwc_) {  // X reordered to plain after the deconvolution's scratchpad
      void* plain = scratch_.bind_with(args_, ctx.scratch, x.bytes());
      bind(src_nhwc_, x.data);
      bind(src_, plain);
      to_plain_.execute(cpu_stream(), src_nhwc_, src_);
    } else {
      bind(src_, x.data);
      scratch_.bind(args_, ctx.scratch);
    }
    deconv_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  void pack_constants(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    if (ctx.out(0).numel() == 0 || x.numel() == 0 || w.numel() == 0) return;
    if (!matmul_ || deconv_at_run_) weights_.pack_constant(ctx, 1);
  }

  std::string impl_name() const override { return matmul_ ? "onednn.deconv_as_matmul" : "onednn.deconv"; }

 private:
  /// The MatMul form's conditions that the node alone decides: 2-D, one
  /// group, a static W [IC, OC, KH, KW], strides = kernel, no padding
  /// (pads 0, auto_pad NOTSET or VALID), dilation 1, no output_padding.
  bool matmul_form(const ir::Node& n) const {
    const ir::Value* w = n.inputs().size() > 1 ? n.input(1) : nullptr;
    if (group_ != 1 || !w || !w->type.is_static() || w->type.static_shape().size() != 4) return false;
    if (!ops::unpadded_undilated(raw_)) return false;
    const Shape ws = w->type.static_shape();
    if (!raw_.kernel.empty() && raw_.kernel != std::vector<int64_t>{ws[2], ws[3]}) return false;
    if (raw_.strides != std::vector<int64_t>{ws[2], ws[3]}) return false;
    for (int64_t p : raw_.output_padding)
      if (p != 0) return false;
    return true;
  }

  /// A band of T (R input rows) in the run's scratch memory takes at most
  /// this many bytes, unless one row alone is larger; a row beyond
  /// kMaxBandBytes runs the deconvolution.
  static constexpr int64_t kBandBytes = 1 << 20;
  static constexpr int64_t kMaxBandBytes = 64 << 20;

  /// Makes (with `make`; else only describes) the MatMul of one band for X
  /// `xs` [N, IC, H, W], W `ws` [IC, OC, KH, KW], Y `ys`; false when the
  /// shapes are not the form's ([N, OC, H*KH, W*KW]), a band would exceed
  /// kMaxBandBytes, or oneDNN has no brgemm MatMul for them.
  bool build_matmul(const Shape& xs, const Shape& ws, const Shape& ys, bool make = true) {
    if (xs.size() != 4 || ws.size() != 4 || xs[1] != ws[0] || ys != Shape{xs[0], ws[1], xs[2] * ws[2], xs[3] * ws[3]})
      return false;
    const int64_t ic = xs[1], h = xs[2], w = xs[3], m = ws[1] * ws[2] * ws[3];
    const int64_t row_bytes = m * w * static_cast<int64_t>(sizeof(float));
    if (row_bytes > kMaxBandBytes) return false;
    band_rows_ = 1;
    for (int64_t r = 1; r <= h; ++r)
      if (h % r == 0 && r * row_bytes <= kBandBytes) band_rows_ = r;
    const int64_t cols = band_rows_ * w;
    // One image's band, plain X: A = W^T [M, IC], B = X[n]'s rows of the
    // band [IC, cols] (copied together first: a strided B made oneDNN's
    // brgemm MatMul repack it at 4x the time), C = T's band [M, cols].
    // nhwc X: A = the band's rows [cols, IC], B = W [IC, M], C = T^T's band
    // [cols, M], all read or written in place.
    const memory::desc a = nhwc_ ? plain_md({1, cols, ic}) : strided_md({1, m, ic}, {m * ic, 1, m}),
                       b = nhwc_ ? plain_md({1, ic, m}) : plain_md({1, ic, cols}),
                       c = nhwc_ ? plain_md({1, cols, m}) : plain_md({1, m, cols});
    try {
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), Scratchpad::attr(), cpu_engine());
      if (!is_brgemm_implementation(pd.impl_info_str())) return false;
      if (!make) return true;
      mm_ = dnnl::matmul(pd);
      scratch_.set(pd.scratchpad_desc());
    } catch (const dnnl::error&) {
      return false;  // oneDNN refused the descriptors: the deconvolution runs
    }
    mm_a_ = unbound_memory(a);
    mm_b_ = unbound_memory(b);
    mm_c_ = unbound_memory(c);
    product_bytes_ = (c.get_size() + 63) / 64 * 64;
    band_x_bytes_ = nhwc_ || band_rows_ == h ? 0 : b.get_size();  // else X's rows are bound in place
    return true;
  }

  void run_matmul(const TensorView& x, const TensorView& w, const TensorView* b, TensorView& y, KernelContext& ctx) {
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, mm_a_}, {DNNL_ARG_WEIGHTS, mm_b_}, {DNNL_ARG_DST, mm_c_}};
    // T's band and X's band live in the run's scratch memory, after the MatMul's scratchpad.
    float* t = static_cast<float*>(scratch_.bind_with(args, ctx.scratch, product_bytes_ + band_x_bytes_));
    float* xb = t + product_bytes_ / sizeof(float);
    bind(nhwc_ ? mm_b_ : mm_a_, w.data);
    if (!nhwc_) bind(mm_b_, xb);
    bind(mm_c_, t);
    const int64_t N = x.shape[0], IC = x.shape[1], H = x.shape[2], W = x.shape[3], OC = w.shape[1], KH = w.shape[2],
                  KW = w.shape[3];
    const int64_t OW = W * KW, OH = H * KH, R = band_rows_, cols = R * W, M = OC * KH * KW;
    const float* bias = b ? b->as<float>() : nullptr;
    float* out = y.as<float>();
    const bool par = OC * R * KH * OW > (1 << 15);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i0 = 0; i0 < H; i0 += R) {
        if (nhwc_) {
          bind(mm_a_, x.as<float>() + (n * H + i0) * W * IC);  // the band's rows [cols, IC]
        } else if (R == H) {
          bind(mm_b_, x.as<float>() + n * IC * H * W);  // the whole image: X[n] itself
        } else {
          for (int64_t c = 0; c < IC; ++c)
            std::copy_n(x.as<float>() + ((n * IC + c) * H + i0) * W, cols, xb + c * cols);
        }
        mm_.execute(cpu_stream(), args);
        cpu_stream().wait();
        // T's element (m, column p) is at t[m * cols + p] (plain X) or t[p * M + m] (nhwc X).
        const int64_t m_stride = nhwc_ ? 1 : cols, p_stride = nhwc_ ? M : 1;
        parallel_for(OC * R * KH, par ? ctx.num_threads : 1, [&](int64_t q) {
          const int64_t oc = q / (R * KH), r = q % (R * KH);  // output row (i0 + i)*KH + a of the band
          const int64_t i = r / KH, a = r % KH;
          const float add = bias ? bias[oc] : 0.f;
          float* row = out + ((n * OC + oc) * OH + i0 * KH + r) * OW;
          for (int64_t bk = 0; bk < KW; ++bk) {
            const float* src = t + ((oc * KH + a) * KW + bk) * m_stride + i * W * p_stride;
            for (int64_t j = 0; j < W; ++j) row[j * KW + bk] = src[j * p_stride] + add;
          }
        });
      }
  }

  void build(const Shape& xs, const Shape& ws, bool has_bias, const Shape& ys) {
    const size_t sp = xs.size() - 2;
    std::vector<int64_t> wk(ws.begin() + 2, ws.end());
    ops::WindowAttrs a = ops::resolve_window_attrs(raw_, sp, &wk, desc_);
    ops::WindowGeom g = ops::conv_transpose_geometry(desc_, a, Shape(xs.begin() + 2, xs.end()));
    memory::dims strides(sp), dil(sp), pl(sp), pr(sp);
    int64_t k_elems = 1;
    for (size_t i = 0; i < sp; ++i) {
      const int64_t kr = (a.kernel[i] - 1) * a.dilations[i] + 1;
      strides[i] = a.strides[i];
      dil[i] = a.dilations[i] - 1;
      pl[i] = g.pad_begin[i];
      pr[i] = a.strides[i] * (xs[i + 2] - 1) + kr - ys[i + 2] - pl[i];
      k_elems *= ws[i + 2];
    }
    const int64_t icg = ws[0] / group_, ocg = ws[1], oc = ocg * group_;
    // Logical {G, OCg, ICg, k...} (or {OC, IC, k...}) over the ONNX buffer
    // [G*ICg, OCg, k...].
    Shape wdims, wstrides;
    if (group_ > 1) {
      wdims = {group_, ocg, icg};
      wstrides = {icg * ocg * k_elems, k_elems, ocg * k_elems};
    } else {
      wdims = {ocg, icg};
      wstrides = {k_elems, ocg * k_elems};
    }
    int64_t st = 1;
    Shape kstr(sp);
    for (int i = static_cast<int>(sp) - 1; i >= 0; --i) {
      kstr[i] = st;
      st *= ws[i + 2];
    }
    wdims.insert(wdims.end(), ws.begin() + 2, ws.end());
    wstrides.insert(wstrides.end(), kstr.begin(), kstr.end());
    const memory::desc src = plain_md(xs), dst = plain_md(ys), user_w = strided_md(wdims, wstrides);
    const memory::desc any_w(to_dims(wdims), memory::data_type::f32, memory::format_tag::any);
    try {
      using df = dnnl::deconvolution_forward;
      const auto pk = dnnl::prop_kind::forward_inference;
      const auto alg = dnnl::algorithm::deconvolution_direct;
      df::desc d = has_bias ? df::desc(pk, alg, src, any_w, plain_md({oc}), dst, strides, dil, pl, pr)
                            : df::desc(pk, alg, src, any_w, dst, strides, dil, pl, pr);
      df::primitive_desc pd(d, Scratchpad::attr(), cpu_engine());
      deconv_ = df(pd);
      scratch_.set(pd.scratchpad_desc());
      weights_.reset(user_w, pd.weights_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a deconvolution for X " + shape_str(xs) + ", W " + shape_str(ws), e);
    }
    src_ = unbound_memory(src);
    dst_ = unbound_memory(dst);
    if (nhwc_) {
      src_nhwc_ = unbound_memory(activation_md(xs, ops::Layout::kNhwc, desc_));
      try {
        to_plain_ = dnnl::reorder(src_nhwc_, src_);
      } catch (const dnnl::error& e) {
        rethrow_dnnl(desc_, "reorder X " + shape_str(xs) + " from nhwc", e);
      }
    }
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};
    if (has_bias) {
      bias_ = unbound_memory(plain_md({oc}));
      args_[DNNL_ARG_BIAS] = bias_;
    }
  }

  static void fill_bias(TensorView& y, const TensorView* b) {
    const int64_t n = y.shape[0], m = y.shape[1], inner = y.numel() / std::max<int64_t>(n * m, 1);
    float* out = y.as<float>();
    for (int64_t i = 0; i < n * m; ++i)
      std::fill(out + i * inner, out + (i + 1) * inner, b ? b->as<float>()[i % m] : 0.f);
  }

  std::string desc_;
  ops::WindowAttrs raw_;
  int64_t group_;
  bool matmul_ = false;         // the MatMul form (build_matmul), decided from the node
  bool nhwc_ = false;           //   X in nhwc (the plan's input layout): T^T = X W
  bool deconv_at_run_ = false;  //   whose shapes did not fit: the deconvolution runs
  dnnl::matmul mm_;
  memory mm_a_, mm_b_, mm_c_;
  size_t product_bytes_ = 0;     // a band of T [OC*KH*KW][R*W], in the run's scratch memory
  int64_t band_rows_ = 1;        //   R: input rows per band (divides H)
  size_t band_x_bytes_ = 0;      // X[n]'s rows of a band [IC][R*W], copied after it
  dnnl::deconvolution_forward deconv_;
  PackedWeights weights_;
  Scratchpad scratch_;
  memory src_, dst_, bias_;
  memory src_nhwc_;           // an nhwc X (nhwc_), reordered by to_plain_ into src_
  dnnl::reorder to_plain_;
  std::unordered_map<int, memory> args_;
};

/// LayoutQuery for ConvTranspose (kernels::implementation_for_layout):
/// "onednn.deconv_as_matmul" for X `src` = nhwc and Y `dst` plain when the
/// node (static float32 types) takes the MatMul form and this CPU has the
/// brgemm MatMul for its shapes; "" otherwise.
std::string conv_transpose_layout_query(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src != ops::Layout::kNhwc || dst != ops::Layout::kPlain || n.inputs().size() < 2 || !n.input(0) ||
      !n.input(1) || n.outputs().empty())
    return "";
  const ir::Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  if (!x->type.is_static() || !w->type.is_static() || !y->type.is_static() || x->type.dtype != DType::kFloat32 ||
      w->type.dtype != DType::kFloat32)
    return "";
  try {
    KernelConfig c = KernelConfig::for_node(n);
    c.input_layouts = {src};
    ConvTransposeKernel k(n, c);
    return k.nhwc_matmul_fits(x->type.static_shape(), w->type.static_shape(), y->type.static_shape()) ? k.impl_name()
                                                                                                        : "";
  } catch (const Error&) {
    return "";
  }
}

const bool kConvTransposeLayoutQuery = [] {
  register_layout_query("", "ConvTranspose", conv_transpose_layout_query);
  return true;
}();

GEC_REGISTER_KERNEL("", "ConvTranspose",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<ConvTransposeKernel>(n, config_);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
