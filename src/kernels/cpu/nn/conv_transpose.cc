// ConvTranspose (ONNX ConvTranspose-11) on CPU through oneDNN
// deconvolution_forward.
//
// ONNX weights are [C_in, M/G, k...]; oneDNN's logical order is
// {G, OC/G, IC/G, k...}, so the user descriptor is a strided view of the
// ONNX buffer (no copy) and the primitive's preferred layout is reordered
// once into a kernel-owned buffer. output_padding and output_shape become
// extra (possibly negative) end padding: oneDNN needs
// (out - kr + pb + pe) / s + 1 == in exactly.
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const ir::Node& n)
      : desc_(n.describe()), raw_(ops::read_window_attrs(n)), group_(n.get_int("group", 1)) {}

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    require_f32(desc_, x.dtype);
    require_f32(desc_, w.dtype);
    if (ctx.out(0).numel() > 0 && x.numel() > 0 && w.numel() > 0)
      build(x.shape, w.shape, ctx.has_input(2), ctx.out(0).shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    const TensorView* b = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    if (x.numel() == 0 || w.numel() == 0) return fill_bias(y, b);
    bind(src_, x.data);
    bind(dst_, y.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(w.data, ctx, 1);
    if (b) bind(bias_, b->data);
    scratch_.bind(args_, ctx.scratch);
    deconv_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  std::string impl_name() const override { return "onednn.deconv"; }

 private:
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
  dnnl::deconvolution_forward deconv_;
  PackedWeights weights_;
  Scratchpad scratch_;
  memory src_, dst_, bias_;
  std::unordered_map<int, memory> args_;
};

GEC_REGISTER_KERNEL("", "ConvTranspose",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<ConvTransposeKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
