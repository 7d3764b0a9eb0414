// CPU kernels of Det-11, LpNormalization-1 and MeanVarianceNormalization-13
// (float32/float64; native loops, accumulating in double).
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

/// Determinant of the row-major m x m matrix `a` (overwritten) by Gaussian
/// elimination with partial pivoting.
double det_inplace(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
    if (a[piv * m + c] == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[piv * m + k]);
      det = -det;
    }
    const double d = a[c * m + c];
    det *= d;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / d;
      if (f == 0.0) continue;
      for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

/// Det-11: X [*, M, M] -> Y [*]; the determinant of an empty (0 x 0) matrix is 1.
class DetKernel final : public Kernel {
 public:
  explicit DetKernel(std::string what) : what_(std::move(what)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t m = x.shape.back();
    const int64_t batch = ctx.out(0).numel();
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      std::vector<double> a(static_cast<size_t>(m * m));
      for (int64_t b = 0; b < batch; ++b) {
        const T* src = x.as<T>() + b * m * m;
        for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(src[i]);
        ctx.out(0).as<T>()[b] = static_cast<T>(det_inplace(a.data(), m));
      }
    });
  }

 private:
  std::string what_;
};

/// Views a shape as [outer, mid, inner] around the dims in `axes`: only used
/// with one axis, or with axes that are the reduction set of MVN (handled by
/// a mask instead).
void split_at_axis(const Shape& s, int64_t axis, int64_t& outer, int64_t& mid, int64_t& inner) {
  outer = mid = inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) (i < axis ? outer : i == axis ? mid : inner) *= s[i];
}

/// LpNormalization-1: y = x / ||x||_p along `axis` (p = 1 or 2). A zero
/// norm divides by zero as the ONNX reference does (0/0 = NaN).
class LpNormKernel final : public Kernel {
 public:
  explicit LpNormKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", -1)), p_(n.get_int("p", 2)) {
    if (p_ != 1 && p_ != 2) fail(ErrorCode::kUnsupported, what_ + ": p = " + std::to_string(p_) + " is not supported");
  }
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    int64_t outer, mid, inner;
    split_at_axis(x.shape, axis_ < 0 ? axis_ + r : axis_, outer, mid, inner);
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.as<T>();
      T* py = ctx.out(0).as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * mid * inner + i;
          double acc = 0;
          for (int64_t k = 0; k < mid; ++k) {
            const double v = px[base + k * inner];
            acc += p_ == 1 ? std::fabs(v) : v * v;
          }
          const double norm = p_ == 1 ? acc : std::sqrt(acc);
          for (int64_t k = 0; k < mid; ++k) py[base + k * inner] = static_cast<T>(px[base + k * inner] / norm);
        }
    });
  }

 private:
  std::string what_;
  int64_t axis_, p_;
};

/// MeanVarianceNormalization-13 (its ONNX function body): over `axes`
/// (default [0, 2, 3]), y = (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(const ir::Node& n) : what_(n.describe()), axes_(n.get_ints("axes", {0, 2, 3})) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    std::vector<bool> reduced(static_cast<size_t>(r), false);
    for (int64_t a : axes_) reduced[a < 0 ? a + r : a] = true;
    // Group index of every element = its index with the reduced dims dropped.
    const int64_t n = x.numel();
    std::vector<int64_t> group(static_cast<size_t>(n));
    int64_t groups = 1;
    for (int64_t d = 0; d < r; ++d)
      if (!reduced[d]) groups *= x.shape[d];
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t g = 0;
      for (int64_t d = 0; d < r; ++d)
        if (!reduced[d]) g = g * x.shape[d] + idx[d];
      group[e] = g;
      for (int64_t d = r; d-- > 0;) {
        if (++idx[d] < x.shape[d]) break;
        idx[d] = 0;
      }
    }
    const double count = groups > 0 ? static_cast<double>(n) / static_cast<double>(groups) : 1.0;
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.as<T>();
      T* py = ctx.out(0).as<T>();
      std::vector<double> s1(static_cast<size_t>(groups), 0.0), s2(static_cast<size_t>(groups), 0.0);
      for (int64_t e = 0; e < n; ++e) {
        s1[group[e]] += px[e];
        s2[group[e]] += static_cast<double>(px[e]) * px[e];
      }
      for (int64_t e = 0; e < n; ++e) {
        const double mean = s1[group[e]] / count;
        const double var = s2[group[e]] / count - mean * mean;
        py[e] = static_cast<T>((px[e] - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
      }
    });
  }

 private:
  std::string what_;
  std::vector<int64_t> axes_;
};

GEC_REGISTER_KERNEL("", "Det", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<DetKernel>(n.describe());
});
GEC_REGISTER_KERNEL("", "LpNormalization", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<LpNormKernel>(n);
});
GEC_REGISTER_KERNEL("", "MeanVarianceNormalization",
                    [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
                      return std::make_unique<MvnKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
