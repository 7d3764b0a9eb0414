// Highway loops of norm_simd.h, compiled per SIMD target and picked at run
// time like elementwise_simd.cc (the rest of the project is compiled for
// baseline x86-64, where these loops would run on SSE2 scalars).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/norm_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>
#include <cstdint>

#include "kernels/cpu/nn/norm_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::norm_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void RowStats(const float* x, int64_t n, float eps, float* mean, float* inv_std) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // half a float vector, promoted to doubles
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dd));
  auto s0 = hn::Zero(dd), s1 = hn::Zero(dd);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    s0 = hn::Add(s0, hn::PromoteTo(dd, hn::LoadU(df, x + i)));
    s1 = hn::Add(s1, hn::PromoteTo(dd, hn::LoadU(df, x + i + lanes)));
  }
  double s = hn::GetLane(hn::SumOfLanes(dd, hn::Add(s0, s1)));
  for (; i < n; ++i) s += x[i];
  const double m = n ? s / static_cast<double>(n) : 0.0;
  const auto vm = hn::Set(dd, m);
  auto q0 = hn::Zero(dd), q1 = hn::Zero(dd);
  i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto a = hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + i)), vm);
    const auto b = hn::Sub(hn::PromoteTo(dd, hn::LoadU(df, x + i + lanes)), vm);
    q0 = hn::MulAdd(a, a, q0);
    q1 = hn::MulAdd(b, b, q1);
  }
  double s2 = hn::GetLane(hn::SumOfLanes(dd, hn::Add(q0, q1)));
  for (; i < n; ++i) s2 += (x[i] - m) * (x[i] - m);
  const double var = n ? s2 / static_cast<double>(n) : 0.0;
  *mean = static_cast<float>(m);
  *inv_std = static_cast<float>(1.0 / std::sqrt(var + eps));
}

void NormalizeRow(const float* x, int64_t n, float mean, float inv_std, const float* scale, const float* bias,
                  float* y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, mean), vi = hn::Set(d, inv_std);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto c = hn::Mul(hn::Mul(hn::Sub(hn::LoadU(d, x + i), vm), vi), hn::LoadU(d, scale + i));
    hn::StoreU(hn::Add(c, hn::LoadU(d, bias + i)), d, y + i);
  }
  for (; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
}

void ScaleShift(const float* x, int64_t n, float a, float b, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Add(hn::Mul(hn::LoadU(d, x + i), va), vb), d, y + i);
  for (; i < n; ++i) y[i] = x[i] * a + b;
}

void AddRows(const float* x, const float* s, int64_t n, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, s + i)), d, y + i);
  for (; i < n; ++i) y[i] = x[i] + s[i];
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::norm_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::norm_simd {

HWY_EXPORT(RowStats);
HWY_EXPORT(NormalizeRow);
HWY_EXPORT(ScaleShift);
HWY_EXPORT(AddRows);

void row_stats(const float* x, int64_t n, float eps, float* mean, float* inv_std) {
  HWY_DYNAMIC_DISPATCH(RowStats)(x, n, eps, mean, inv_std);
}
void normalize_row(const float* x, int64_t n, float mean, float inv_std, const float* scale, const float* bias,
                   float* y) {
  HWY_DYNAMIC_DISPATCH(NormalizeRow)(x, n, mean, inv_std, scale, bias, y);
}
void scale_shift(const float* x, int64_t n, float a, float b, float* y) {
  HWY_DYNAMIC_DISPATCH(ScaleShift)(x, n, a, b, y);
}
void add_rows(const float* x, const float* s, int64_t n, float* y) { HWY_DYNAMIC_DISPATCH(AddRows)(x, s, n, y); }

}  // namespace gec::kernels::cpu::norm_simd
#endif  // HWY_ONCE
