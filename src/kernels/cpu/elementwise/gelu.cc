// com.graphengine::Gelu (ops/gelu.cc; ONNX Gelu-20 semantics) on CPU:
// one vectorized pass over the tensor (OpenMP-split when large).
//
// The math is in gelu_simd.cc (Highway, vectorized): no 1 + erf(t)
// cancellation for x << 0 (oneDNN's eltwise_gelu_erf has it: 2.5e-7
// absolute, ~1e-4 relative at x = -3), within ~1e-6 relative of Gelu-20's
// formula where the input's own rounding allows.
#include <algorithm>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/domain.h"

namespace gec::kernels::cpu {
namespace gelu_simd {
/// y[i] = Gelu(x[i]) for i < n, vectorized (gelu_simd.cc); y may alias x.
void gelu_f32(bool tanh_form, const float* x, float* y, int64_t n);
}  // namespace gelu_simd

namespace {

class GeluKernel final : public Kernel {
 public:
  explicit GeluKernel(const ir::Node& n) : desc_(n.describe()) {
    const std::string a = n.get_string("approximate", "none");
    if (a != "none" && a != "tanh")
      fail(ErrorCode::kInvalidModel, desc_ + ": attribute 'approximate' must be \"none\" or \"tanh\", not \"" + a + "\"");
    tanh_ = a == "tanh";
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    const float* xp = x.as<float>();
    float* y = ctx.out(0).as<float>();
    const int64_t n = x.numel();
    constexpr int64_t kChunk = 16384;  // per task; about 64 KiB of input
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    parallel_for(chunks, n > 32768 ? ctx.num_threads : 1, [&](int64_t c) {
      const int64_t begin = c * kChunk;
      gelu_simd::gelu_f32(tanh_, xp + begin, y + begin, std::min(kChunk, n - begin));
    });
  }

  std::string impl_name() const override { return tanh_ ? "hwy.gelu_tanh" : "hwy.gelu_erf"; }

 private:
  std::string desc_;
  bool tanh_ = false;
};

GEC_REGISTER_KERNEL(ops::kGecDomain, "Gelu",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<GeluKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
