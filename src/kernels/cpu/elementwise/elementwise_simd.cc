// Highway implementations of elementwise_simd.h. This file is compiled once
// per SIMD target (foreach_target.h re-includes it); HWY_EXPORT builds the
// table that HWY_DYNAMIC_DISPATCH picks from by the running CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/elementwise/elementwise_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/common/exp_poly-inl.h"

#include <cmath>

#include "kernels/cpu/elementwise/elementwise_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <int kOp, class V>
HWY_INLINE V bin(V a, V b) {
  if constexpr (kOp == 0) return hn::Add(a, b);
  else if constexpr (kOp == 1) return hn::Sub(a, b);
  else if constexpr (kOp == 2) return hn::Mul(a, b);
  else return hn::Div(a, b);
}

template <int kOp>
inline float bin1(float a, float b) {
  if constexpr (kOp == 0) return a + b;
  else if constexpr (kOp == 1) return a - b;
  else if constexpr (kOp == 2) return a * b;
  else return a / b;
}

template <int kOp, bool kAS, bool kBS>
void BinaryLoop(const float* a, const float* b, float* o, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto sa = hn::Set(d, a[0]);
  const auto sb = hn::Set(d, b[0]);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto va = kAS ? sa : hn::LoadU(d, a + i);
    const auto vb = kBS ? sb : hn::LoadU(d, b + i);
    hn::StoreU(bin<kOp>(va, vb), d, o + i);
  }
  for (; i < n; ++i) o[i] = bin1<kOp>(kAS ? a[0] : a[i], kBS ? b[0] : b[i]);
}

template <int kOp>
void BinaryVariant(const float* a, bool as, const float* b, bool bs, float* o, int64_t n) {
  if (as) BinaryLoop<kOp, true, false>(a, b, o, n);
  else if (bs) BinaryLoop<kOp, false, true>(a, b, o, n);
  else BinaryLoop<kOp, false, false>(a, b, o, n);
}

void BinaryF32(int op, const float* a, bool as, const float* b, bool bs, float* o, int64_t n) {
  if (n <= 0) return;
  if (as && bs) {  // both repeat: one value
    const float v = op == 0 ? bin1<0>(a[0], b[0]) : op == 1 ? bin1<1>(a[0], b[0])
                  : op == 2 ? bin1<2>(a[0], b[0]) : bin1<3>(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
    return;
  }
  switch (op) {
    case 0: return BinaryVariant<0>(a, as, b, bs, o, n);
    case 1: return BinaryVariant<1>(a, as, b, bs, o, n);
    case 2: return BinaryVariant<2>(a, as, b, bs, o, n);
    default: return BinaryVariant<3>(a, as, b, bs, o, n);
  }
}

/// e^x over the whole float range: Highway's Exp is valid up to +104 and
/// maps NaN to 0, so overflow and NaN are patched here.
template <class D, class V>
HWY_INLINE V SafeExp(D d, V x) {
  const V big = hn::Set(d, 88.7228f);
  const V e = hn::CallExp(d, hn::Min(x, big));
  const V r = hn::IfThenElse(hn::Gt(x, big), hn::Set(d, HUGE_VALF), e);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

template <int kOp, class D, class V>
HWY_INLINE V un(D d, V x) {
  if constexpr (kOp == 0) {
    return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Zero(d), x);  // NaN < 0 is false
  } else if constexpr (kOp == 1) {
    // 1 / (1 + e^-x), e^-x by exp_poly-inl.h's polynomial within its
    // range: above 87 the sigmoid rounds to 1; below -87 it is under
    // 1.7e-38, given as 0 (so -inf * Sigmoid(-inf) is NaN, as in the
    // formula). NaN stays NaN. Within 2.1 ulp of double precision.
    const V one = hn::Set(d, 1.0f), limit = hn::Set(d, exp_poly::HWY_NAMESPACE::kExpPolyLimit);
    const V e = exp_poly::HWY_NAMESPACE::ExpPoly(d, hn::Min(hn::Max(hn::Neg(x), hn::Neg(limit)), limit));
    const V r = hn::IfThenZeroElse(hn::Lt(x, hn::Neg(limit)), hn::Div(one, hn::Add(one, e)));
    return hn::IfThenElse(hn::IsNaN(x), x, r);
  } else if constexpr (kOp == 2) {
    return hn::IfThenElse(hn::IsNaN(x), x, hn::CallTanh(d, x));
  } else {
    return SafeExp(d, x);
  }
}

/// y[i] = f(x[i]) a vector at a time, f taking and giving a vector of d. The
/// tail goes through a padded vector: an element's result does not depend
/// on where a range starts or ends (thread splits, fused blocks).
template <class D, class F>
HWY_INLINE void MapVectors(D d, F f, const float* x, float* y, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    hn::Store(f(hn::Load(d, buf)), d, buf);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

template <int kOp>
void UnaryLoop(const float* x, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  MapVectors(d, [&](decltype(hn::Zero(d)) v) { return un<kOp>(d, v); }, x, y, n);
}

/// y = x * sigmoid(alpha * x), the sigmoid of un<1> (so x -> Sigmoid -> Mul
/// and Swish give the same bits for alpha 1).
void SwishF32(float alpha, const float* x, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto a = hn::Set(d, alpha);
  MapVectors(d, [&](decltype(hn::Zero(d)) v) { return hn::Mul(v, un<1>(d, alpha == 1.f ? v : hn::Mul(a, v))); }, x, y, n);
}

template <int kOp, class D, class V>
HWY_INLINE V piecewise(D d, V x, V a, V b) {
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  // clamp(v, 0, 1) as v < 0 ? 0 : (v > 1 ? 1 : v): NaN stays NaN.
  const auto clamp01 = [&](V v) { return hn::IfThenElse(hn::Gt(v, one), one, hn::IfThenElse(hn::Lt(v, zero), zero, v)); };
  if constexpr (kOp == 0) {  // min(max(x, a), b): a > b gives b, as Clip-13 says
    const V v = hn::IfThenElse(hn::Lt(x, a), a, x);
    return hn::IfThenElse(hn::Gt(v, b), b, v);
  } else if constexpr (kOp == 1) return hn::IfThenElse(hn::Lt(x, zero), hn::Mul(a, x), x);
  else if constexpr (kOp == 2) return clamp01(hn::Add(hn::Mul(a, x), b));
  else return hn::Mul(x, clamp01(hn::Add(hn::Mul(a, x), b)));
}

template <int kOp>
void PiecewiseLoop(float alpha, float beta, const float* x, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto a = hn::Set(d, alpha), b = hn::Set(d, beta);
  MapVectors(d, [&](decltype(hn::Zero(d)) v) { return piecewise<kOp>(d, v, a, b); }, x, y, n);
}

void PiecewiseF32(int op, float a, float b, const float* x, float* y, int64_t n) {
  switch (op) {
    case 0: return PiecewiseLoop<0>(a, b, x, y, n);
    case 1: return PiecewiseLoop<1>(a, b, x, y, n);
    case 2: return PiecewiseLoop<2>(a, b, x, y, n);
    default: return PiecewiseLoop<3>(a, b, x, y, n);
  }
}

void UnaryF32(int op, const float* x, float* y, int64_t n) {
  switch (op) {
    case 0: return UnaryLoop<0>(x, y, n);
    case 1: return UnaryLoop<1>(x, y, n);
    case 2: return UnaryLoop<2>(x, y, n);
    default: return UnaryLoop<3>(x, y, n);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::simd {

HWY_EXPORT(BinaryF32);
HWY_EXPORT(UnaryF32);
HWY_EXPORT(SwishF32);
HWY_EXPORT(PiecewiseF32);

void binary_f32(BinOp op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* o, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF32)(static_cast<int>(op), a, a_scalar, b, b_scalar, o, n);
}

void unary_f32(UnOp op, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryF32)(static_cast<int>(op), x, y, n);
}

void swish_f32(float alpha, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SwishF32)(alpha, x, y, n);
}

void piecewise_f32(PiecewiseOp op, float a, float b, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(PiecewiseF32)(static_cast<int>(op), a, b, x, y, n);
}

}  // namespace gec::kernels::cpu::simd
#endif  // HWY_ONCE
