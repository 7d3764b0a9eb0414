// LayerNormalization (ONNX LayerNormalization-17), InstanceNormalization
// (InstanceNormalization-6) and LRN (LRN-13) on CPU, native loops.
//
// LayerNorm views X as [outer, inner] (inner = prod of dims from `axis`) and
// normalizes each row: Y = (X - mean) / sqrt(var + eps) * Scale + B, with
// Scale and B broadcast to [inner]; optional outputs Mean and InvStdDev.
// com.graphengine::SkipLayerNormalization(X, Skip, Scale, B) is the same on
// X + Skip (a residual Add before it), the sum made row by row in Y.
// InstanceNorm normalizes each (n, c) plane over its spatial elements with
// per-channel scale and bias. Statistics accumulate in double so long rows do
// not lose precision; the row loops are Highway's (norm_simd.h).
#include <cmath>
#include <vector>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/cpu/nn/norm_simd.h"
#include "kernels/kernel.h"
#include "ops/domain.h"

namespace gec::kernels::cpu {
namespace {

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const ir::Node& n)
      : desc_(n.describe()), axis_(n.get_int("axis", -1)), eps_(n.get_float("epsilon", 1e-5f)),
        skip_(n.op_type == "SkipLayerNormalization") {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const size_t p = skip_ ? 1 : 0;  // Scale and B come after Skip
    const float* skip = skip_ ? ctx.in(1).as<float>() : nullptr;
    if (skip_ && ctx.in(1).shape != x.shape) fail(ErrorCode::kInvalidArgument, desc_ + ": X and Skip differ in shape");
    require_f32(desc_, x.dtype);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= x.shape[i];
    const Shape norm(x.shape.begin() + axis, x.shape.end());
    // Scale and B as `inner` floats each (B zeros when absent), so the row
    // loop below is one branch-free, vectorizable line.
    const float* scale = expand(ctx.in(1 + p), norm, inner, scale_buf_);
    const float* bias = ctx.has_input(2 + p) ? expand(ctx.in(2 + p), norm, inner, bias_buf_) : zeros(inner);
    float* y = ctx.out(0).as<float>();
    float* mean_out = out_or_null(ctx, 1);
    float* inv_out = out_or_null(ctx, 2);
    const float* xp = x.as<float>();
    // Rows on both threads from 8 Ki elements (BERT's [128, 256] rows took
    // 40-56 us on one thread; the parallel region costs a few).
    parallel_for(outer, outer > 1 && outer * inner > 8192 ? ctx.num_threads : 1, [&](int64_t o) {
      float mean, inv;
      const float* xr = xp + o * inner;
      float* yr = y + o * inner;
      if (skip) {  // the residual sum, in Y's row (in L1 for what follows)
        norm_simd::add_rows(xr, skip + o * inner, inner, yr);
        xr = yr;
      }
      norm_simd::row_stats(xr, inner, eps_, &mean, &inv);
      if (mean_out) mean_out[o] = mean;
      if (inv_out) inv_out[o] = inv;
      norm_simd::normalize_row(xr, inner, mean, inv, scale, bias, yr);
    });
  }

 private:
  static float* out_or_null(const KernelContext& ctx, size_t i) {
    if (ctx.outputs.size() <= i || !ctx.outputs[i] || !ctx.outputs[i]->data) return nullptr;
    return ctx.out(i).as<float>();
  }

  /// `inner` zeros (B when it is absent), kept across runs.
  const float* zeros(int64_t inner) {
    if (static_cast<int64_t>(zeros_.size()) != inner) zeros_.assign(static_cast<size_t>(inner), 0.f);
    return zeros_.data();
  }

  /// Scale or B as given when it has `inner` elements; otherwise broadcast
  /// (right-aligned, numpy rules; one element fills all) into `buf` of
  /// `inner` floats. The schema has checked that t broadcasts to `norm`.
  const float* expand(const TensorView& t, const Shape& norm, int64_t inner, std::vector<float>& buf) const {
    const int64_t n = t.numel();
    if (n == inner) return t.as<float>();
    if (n == 1) {
      buf.assign(static_cast<size_t>(inner), t.as<float>()[0]);
      return buf.data();
    }
    const size_t k = norm.size(), m = t.shape.size();
    if (m > k) fail(ErrorCode::kInvalidArgument, desc_ + ": Scale/B do not broadcast to the normalized shape");
    std::vector<int64_t> stride(k, 0);  // element stride of t along each normalized dim (0 = broadcast)
    int64_t st = 1;
    for (size_t j = 0; j < m; ++j) {
      const int64_t d = t.shape[m - 1 - j];
      if (d != 1 && d != norm[k - 1 - j])
        fail(ErrorCode::kInvalidArgument, desc_ + ": Scale/B do not broadcast to the normalized shape");
      stride[k - 1 - j] = d == 1 ? 0 : st;
      st *= d;
    }
    buf.resize(static_cast<size_t>(inner));
    const float* src = t.as<float>();
    for (int64_t i = 0; i < inner; ++i) {
      int64_t rem = i, off = 0;
      for (size_t j = k; j-- > 0;) {
        off += (rem % norm[j]) * stride[j];
        rem /= norm[j];
      }
      buf[i] = src[off];
    }
    return buf.data();
  }

  std::string desc_;
  int64_t axis_;
  float eps_;
  bool skip_;
  std::vector<float> scale_buf_, bias_buf_;  // broadcast Scale/B, reused across runs
  std::vector<float> zeros_;                 // B when absent
};

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(const ir::Node& n) : desc_(n.describe()), eps_(n.get_float("epsilon", 1e-5f)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    const int64_t n = x.shape[0], c = x.shape[1];
    const int64_t planes = n * c, spatial = planes ? x.numel() / planes : 0;
    if (ctx.in(1).numel() != c || ctx.in(2).numel() != c)  // the schema checks this; guard the reads
      fail(ErrorCode::kInvalidArgument, desc_ + ": scale and B must have C=" + std::to_string(c) + " elements");
    const float* scale = ctx.in(1).as<float>();
    const float* bias = ctx.in(2).as<float>();
    const float* xp = x.as<float>();
    float* y = ctx.out(0).as<float>();
    parallel_for(planes, x.numel() > 32768 ? ctx.num_threads : 1, [&](int64_t p) {
      float mean, inv;
      norm_simd::row_stats(xp + p * spatial, spatial, eps_, &mean, &inv);
      const float a = inv * scale[p % c], b = bias[p % c] - mean * inv * scale[p % c];
      norm_simd::scale_shift(xp + p * spatial, spatial, a, b, y + p * spatial);
    });
  }

 private:
  std::string desc_;
  float eps_;
};

/// LRN-13: y = x / (bias + alpha / size * sum of x^2 over channels
/// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(const ir::Node& n)
      : desc_(n.describe()),
        alpha_(n.get_float("alpha", 1e-4f)),
        beta_(n.get_float("beta", 0.75f)),
        bias_(n.get_float("bias", 1.f)),
        size_(n.get_int("size")) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    const int64_t n = x.shape[0], c = x.shape[1];
    const int64_t spatial = n * c != 0 ? x.numel() / (n * c) : 0;
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    const float* xp = x.as<float>();
    float* y = ctx.out(0).as<float>();
    parallel_for(n * c, x.numel() > 32768 ? ctx.num_threads : 1, [&](int64_t p) {
      const int64_t b = p / c, ch = p % c;
      for (int64_t i = 0; i < spatial; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
          const double v = xp[(b * c + k) * spatial + i];
          sq += v * v;
        }
        y[p * spatial + i] =
            static_cast<float>(xp[p * spatial + i] / std::pow(bias_ + alpha_ / size_ * sq, static_cast<double>(beta_)));
      }
    });
  }

 private:
  std::string desc_;
  float alpha_, beta_, bias_;
  int64_t size_;
};

GEC_REGISTER_KERNEL("", "LayerNormalization",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      if (n.get_int("stash_type", 1) != 1)
                        fail(ErrorCode::kUnsupported, n.describe() + ": stash_type other than float32 is not supported");
                      return std::make_unique<LayerNormKernel>(n);
                    });
GEC_REGISTER_KERNEL(ops::kGecDomain, "SkipLayerNormalization",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
                      for (DType d : config_.input_dtypes) require_f32(n, d);
                      return std::make_unique<LayerNormKernel>(n);
                    });
GEC_REGISTER_KERNEL("", "InstanceNormalization",
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<InstanceNormKernel>(n);
                    });
GEC_REGISTER_KERNEL("", "LRN", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
  for (DType d : dts) require_f32(n, d);
  if (!n.has_attr("size") || n.get_int("size") < 1)
    fail(ErrorCode::kInvalidModel, n.describe() + ": size must be given and >= 1");
  return std::make_unique<LrnKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
