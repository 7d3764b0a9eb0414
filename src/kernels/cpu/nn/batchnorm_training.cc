// CPU kernel of com.graphengine::BatchNormalizationTraining (schema in
// ops/batchnorm_training.cc), the training_mode=1 form of ONNX
// BatchNormalization-15. Per channel c, over every axis but 1:
//   current_mean = mean(X[:, c, ...])
//   current_var  = mean((X[:, c, ...] - current_mean)^2)   (population variance,
//                  as the ONNX reference implementation's np.var)
//   Y            = (X - current_mean) / sqrt(current_var + epsilon) * scale + B
//   running_mean = input_mean * momentum + current_mean * (1 - momentum)
//   running_var  = input_var * momentum + current_var * (1 - momentum)
// Native loops in double (two passes: mean, then squared deviations), one
// channel per OpenMP iteration. Any float dtype per input (ONNX T, T1, T2).
#include <cmath>
#include <vector>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/elementwise/elementwise_half.h"
#include "kernels/kernel.h"
#include "ops/domain.h"

namespace gec::kernels::cpu {
namespace {

double load(const TensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::kFloat32: return v.as<float>()[i];
    case DType::kFloat64: return v.as<double>()[i];
    case DType::kFloat16: return half_to_float(v.as<uint16_t>()[i]);
    case DType::kBFloat16: return bf16_to_float(v.as<uint16_t>()[i]);
    default: return NAN;  // refused in check_dtypes()
  }
}

void store(const TensorView& v, int64_t i, double x) {
  switch (v.dtype) {
    case DType::kFloat32: v.as<float>()[i] = static_cast<float>(x); return;
    case DType::kFloat64: v.as<double>()[i] = x; return;
    case DType::kFloat16: v.as<uint16_t>()[i] = float_to_half(static_cast<float>(x)); return;
    case DType::kBFloat16: v.as<uint16_t>()[i] = float_to_bf16(static_cast<float>(x)); return;
    default: return;
  }
}

bool is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}

class BatchNormTrainingKernel final : public Kernel {
 public:
  explicit BatchNormTrainingKernel(const ir::Node& n)
      : node_(n), epsilon_(n.get_float("epsilon", 1e-5f)), momentum_(n.get_float("momentum", 0.9f)) {}

  void run(KernelContext& ctx) override {
    for (size_t i = 0; i < 5; ++i)
      if (!is_float(ctx.in(i).dtype))
        fail(ErrorCode::kUnsupported, node_.describe() + ": input " + std::to_string(i) + " dtype " +
                                          dtype_name(ctx.in(i).dtype) + " is not supported");
    const TensorView& x = ctx.in(0);
    const int64_t batch = x.shape[0], channels = x.shape[1];
    const int64_t inner = channels == 0 ? 0 : (batch == 0 ? 0 : x.numel() / (batch * channels));
    const double count = static_cast<double>(batch * inner);
    const TensorView* running_mean = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr;
    const TensorView* running_var = ctx.outputs.size() > 2 ? ctx.outputs[2] : nullptr;
    parallel_for(channels, x.numel() > 32768 ? ctx.num_threads : 1, [&](int64_t c) {
      double sum = 0;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t k = 0; k < inner; ++k) sum += load(x, (b * channels + c) * inner + k);
      const double mean = sum / count;
      double sq = 0;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t k = 0; k < inner; ++k) {
          const double d = load(x, (b * channels + c) * inner + k) - mean;
          sq += d * d;
        }
      const double var = sq / count;
      const double a = load(ctx.in(1), c) / std::sqrt(var + static_cast<double>(epsilon_));
      const double bias = load(ctx.in(2), c);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t k = 0; k < inner; ++k) {
          const int64_t i = (b * channels + c) * inner + k;
          store(ctx.out(0), i, (load(x, i) - mean) * a + bias);
        }
      const double m = momentum_;
      if (running_mean) store(*running_mean, c, load(ctx.in(3), c) * m + mean * (1 - m));
      if (running_var) store(*running_var, c, load(ctx.in(4), c) * m + var * (1 - m));
    });
  }

 private:
  const ir::Node& node_;
  float epsilon_, momentum_;
};

GEC_REGISTER_KERNEL(ops::kGecDomain, "BatchNormalizationTraining",
                    [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
                      return std::make_unique<BatchNormTrainingKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
