// CPU kernel of NegativeLogLikelihoodLoss-13:
//   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
// (weight 1 when absent), 0 where target == ignore_index. "mean" divides the
// sum by the total weight of the entries not ignored, as the ONNX text does.
#include <cmath>
#include <vector>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class NllKernel final : public Kernel {
 public:
  explicit NllKernel(const ir::Node& n)
      : what_(n.describe()),
        reduction_(n.get_string("reduction", "mean")),
        has_ignore_(n.has_attr("ignore_index")),
        ignore_(n.get_int("ignore_index", 0)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& t = ctx.in(1);
    const TensorView* w = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    const int64_t N = x.shape[0], C = x.shape[1];
    const int64_t D = N > 0 && C > 0 ? x.numel() / (N * C) : 0;
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      std::vector<double> loss(static_cast<size_t>(N * D));
      double wsum = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t c = t.dtype == DType::kInt32 ? t.as<int32_t>()[n * D + d] : t.as<int64_t>()[n * D + d];
          double& l = loss[n * D + d];
          if (has_ignore_ && c == ignore_) {
            l = 0;
            continue;
          }
          if (c < 0 || c >= C) fail(ErrorCode::kInvalidArgument, what_ + ": target " + std::to_string(c) + " is out of range");
          const double wc = w ? static_cast<double>(w->as<T>()[c]) : 1.0;
          l = -static_cast<double>(x.as<T>()[(n * C + c) * D + d]) * wc;
          wsum += wc;
        }
      T* y = ctx.out(0).as<T>();
      if (reduction_ == "none") {
        for (size_t i = 0; i < loss.size(); ++i) y[i] = static_cast<T>(loss[i]);
        return;
      }
      double sum = 0;
      for (double l : loss) sum += l;
      y[0] = static_cast<T>(reduction_ == "sum" ? sum : sum / wsum);
    });
  }

 private:
  std::string what_, reduction_;
  bool has_ignore_;
  int64_t ignore_;
};

GEC_REGISTER_KERNEL("", "NegativeLogLikelihoodLoss", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  const std::string r = n.get_string("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean") fail(ErrorCode::kUnsupported, n.describe() + ": reduction '" + r + "' is not supported");
  return std::make_unique<NllKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
