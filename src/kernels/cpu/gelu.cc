// com.graphengine::Gelu (ops/gelu.cc; ONNX Gelu-20 semantics) on CPU, one
// native pass over the tensor (OpenMP-split when large).
//
// Written without the cancellation of the textbook formula: for x << 0,
// 1 + erf(x / sqrt(2)) subtracts two numbers close to 1 and keeps only a few
// correct bits (oneDNN's eltwise_gelu_erf does the same: 2.5e-7 absolute,
// ~1e-4 relative at x = -3). Here
//   "none": y = 0.5 * x * erfc(-x / sqrt(2))      (1 + erf(t) = erfc(-t))
//   "tanh": y = x / (1 + exp(-2u)), u = sqrt(2/pi) * (x + 0.044715 x^3)
//                                                  (0.5 (1 + tanh u) = sigmoid(2u))
// are equal to Gelu-20's formulas and within a few float ulp of them in
// relative terms everywhere. NaN in gives NaN out; -inf gives NaN, as the
// formula's -inf * 0 does; +inf gives +inf.
#include <cmath>

#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

inline float gelu_erf(float x) { return 0.5f * x * std::erfc(x * -0.70710678118654752f); }

inline float gelu_tanh(float x) {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return x / (1.f + std::exp(-2.f * u));
}

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
    if (tanh_) {
#pragma omp parallel for num_threads(ctx.num_threads) if (n > 32768)
      for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(xp[i]);
    } else {
#pragma omp parallel for num_threads(ctx.num_threads) if (n > 32768)
      for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(xp[i]);
    }
  }

  std::string impl_name() const override { return tanh_ ? "native.gelu_tanh" : "native.gelu_erf"; }

 private:
  std::string desc_;
  bool tanh_ = false;
};

GEC_REGISTER_KERNEL("com.graphengine", "Gelu",
                    [](const ir::Node& n, const std::vector<DType>& dts) -> std::unique_ptr<Kernel> {
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<GeluKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
