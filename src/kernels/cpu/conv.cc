// Conv (ONNX Conv-11) on CPU through oneDNN convolution_forward.
//
// src/dst stay in plain NC[D]HW layout (what the arena holds); the weights
// use the layout oneDNN prefers (format_tag::any), reordered once into a
// kernel-owned buffer. Groups (incl. depthwise) map to oneDNN's 5-D/6-D
// grouped weights {G, OC/G, IC/G, k...}, which is the ONNX [M, C/G, k...]
// buffer reinterpreted, so the user-layout descriptor needs no copy.
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const ir::Node& n)
      : desc_(n.describe()), raw_(ops::read_window_attrs(n)), group_(n.get_int("group", 1)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& w = ctx.in(1);
    const TensorView* b = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    TensorView& y = ctx.out(0);
    require_f32(desc_, x.dtype);
    require_f32(desc_, w.dtype);
    if (y.numel() == 0) return;
    if (x.numel() == 0 || w.numel() == 0) return fill_bias(y, b);  // no input channels
    if (key_.update({x.shape, w.shape, b ? Shape{1} : Shape{0}})) build(x.shape, w.shape, b != nullptr, y.shape);
    bind(src_, x.data);
    bind(dst_, y.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(w.data);
    if (b) bind(bias_, b->data);
    conv_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  std::string impl_name() const override { return "onednn.conv"; }

 private:
  void build(const Shape& xs, const Shape& ws, bool has_bias, const Shape& ys) {
    const size_t sp = xs.size() - 2;
    std::vector<int64_t> wk(ws.begin() + 2, ws.end());
    ops::WindowAttrs a = ops::resolve_window_attrs(raw_, sp, &wk, desc_);
    ops::WindowGeom g = ops::window_geometry(desc_, a, Shape(xs.begin() + 2, xs.end()));
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
    Shape wdims = ws;
    if (group_ > 1) {
      wdims = {group_, ws[0] / group_};
      wdims.insert(wdims.end(), ws.begin() + 1, ws.end());
    }
    const memory::desc src = plain_md(xs), dst = plain_md(ys), user_w = plain_md(wdims);
    const memory::desc any_w(to_dims(wdims), memory::data_type::f32, tag::any);
    try {
      using cf = dnnl::convolution_forward;
      cf::desc d = has_bias ? cf::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                       any_w, plain_md({ws[0]}), dst, strides, dil, pl, pr)
                            : cf::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                       any_w, dst, strides, dil, pl, pr);
      cf::primitive_desc pd(d, cpu_engine());
      conv_ = cf(pd);
      weights_.reset(user_w, pd.weights_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a convolution for X " + shape_str(xs) + ", W " + shape_str(ws), e);
    }
    src_ = unbound_memory(src);
    dst_ = unbound_memory(dst);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};
    if (has_bias) {
      bias_ = unbound_memory(plain_md({ws[0]}));
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
  ShapeKey key_;
  dnnl::convolution_forward conv_;
  PackedWeights weights_;
  memory src_, dst_, bias_;
  std::unordered_map<int, memory> args_;
};

GEC_REGISTER_KERNEL("", "Conv", [](const ir::Node& n, const std::vector<DType>& dts) -> std::unique_ptr<Kernel> {
  for (size_t i = 0; i < dts.size(); ++i) require_f32(n, dts[i]);
  return std::make_unique<ConvKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
