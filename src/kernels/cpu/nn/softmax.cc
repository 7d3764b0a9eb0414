// Softmax and LogSoftmax along one axis (ONNX Softmax-13 / LogSoftmax-13)
// through oneDNN softmax_v2 (softmax_accurate subtracts the row max, so large
// inputs do not overflow). X is viewed as [outer, dim(axis), inner].
// Hardmax-13 (one-hot of the first maximum along the axis) is a native loop.
#include <unordered_map>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(const ir::Node& n, bool log) : desc_(n.describe()), axis_(n.get_int("axis", -1)), log_(log) {}

  void reshape(const KernelContext& ctx) override {
    require_f32(desc_, ctx.in(0).dtype);
    if (ctx.out(0).numel() > 0) build(ctx.in(0).shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    bind(src_, x.data);
    bind(dst_, y.data);
    scratch_.bind(args_, ctx.scratch);
    sm_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  std::string impl_name() const override { return "onednn.softmax"; }

 private:
  void build(const Shape& xs) {
    const int64_t r = static_cast<int64_t>(xs.size());
    const int64_t axis = axis_ < 0 ? axis_ + std::max<int64_t>(r, 1) : axis_;
    int64_t outer = 1, mid = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? outer : i == axis ? mid : inner) *= xs[i];
    const memory::desc md = plain_md({outer, mid, inner});
    using sf = dnnl::softmax_v2_forward;
    const auto alg = log_ ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    try {
      const sf::primitive_desc pd(sf::desc(dnnl::prop_kind::forward_inference, alg, md, md, 1), Scratchpad::attr(),
                                  cpu_engine());
      sm_ = sf(pd);
      scratch_.set(pd.scratchpad_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a softmax for X " + shape_str(xs), e);
    }
    src_ = unbound_memory(md);
    dst_ = unbound_memory(md);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};  // shares the handles bind() sets
  }

  std::string desc_;
  int64_t axis_;
  bool log_;
  dnnl::softmax_v2_forward sm_;
  Scratchpad scratch_;
  memory src_, dst_;
  std::unordered_map<int, memory> args_;
};

std::unique_ptr<Kernel> make_softmax(const ir::Node& n, const std::vector<DType>& dts, bool log) {
  for (DType d : dts) require_f32(n, d);
  return std::make_unique<SoftmaxKernel>(n, log);
}

/// Hardmax-13: y = 1 at the first index of the maximum along `axis` of each
/// [outer, :, inner] line, 0 elsewhere. A NaN compares false, so a line of
/// NaNs marks index 0 (as numpy.argmax would not; the ONNX text is silent).
class HardmaxKernel final : public Kernel {
 public:
  explicit HardmaxKernel(const ir::Node& n) : desc_(n.describe()), axis_(n.get_int("axis", -1)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + std::max<int64_t>(r, 1) : axis_;
    int64_t outer = 1, mid = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? outer : i == axis ? mid : inner) *= x.shape[i];
    dispatch_float(x.dtype, desc_, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.as<T>();
      T* py = y.as<T>();
      std::fill(py, py + y.numel(), T(0));
      if (mid == 0) return;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* line = px + o * mid * inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < mid; ++k)
            if (line[k * inner] > line[best * inner]) best = k;
          py[(o * mid + best) * inner + i] = T(1);
        }
    });
  }

 private:
  std::string desc_;
  int64_t axis_;
};

GEC_REGISTER_KERNEL("", "Hardmax", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<HardmaxKernel>(n);
});
GEC_REGISTER_KERNEL("", "Softmax", [](const ir::Node& n, const KernelConfig& config_) {
  const std::vector<DType>& d = config_.input_dtypes; return make_softmax(n, d, false); });
GEC_REGISTER_KERNEL("", "LogSoftmax", [](const ir::Node& n, const KernelConfig& config_) {
  const std::vector<DType>& d = config_.input_dtypes; return make_softmax(n, d, true); });

}  // namespace
}  // namespace gec::kernels::cpu
