// Highway loops of the Gelu kernel (gelu.cc), compiled per SIMD target and
// picked at run time like elementwise_simd.cc. No 1 + erf / 1 + tanh
// cancellation for x << 0:
//
//   "none": y = 0.5 x (1 + erf(t)), t = x / sqrt(2), with 1 + erf(t) taken as
//           2 - erfc(t) for t >= 0 (in [1, 2]) and erfc(|t|) for t < 0.
//           erfc(z), z >= 0, is the Chebyshev fit of Numerical Recipes
//           (2nd ed., 6.2, "erfcc"): r = 1 / (1 + z/2),
//           erfc(z) = r exp(-z^2 + P(r)), fractional error < 1.2e-7 for all
//           z >= 0. One exp of (P(r) - e) - z2, z2 = fl(z*z) and e its
//           rounding error (exact where the target has FMA), folded in
//           before z2: the sum's own rounding is at most half an ulp of
//           z^2 + |P|, a relative error of about z^2 * 6e-8 in erfc, the
//           size of the one rounding t = x / sqrt(2) already costs (the
//           function's condition number grows like x^2). Two exps, one of
//           -z2 and one of P(r) - e, avoided that rounding at twice the
//           cost (the Gelu nodes of a wav2vec2-like model: 0.99 -> 0.72-0.80
//           ms per run). The exp is exp_poly-inl.h's polynomial (the
//           exponent is at most about 1e-7; below -87, and NaN from an
//           infinite x, give erfc = 0): 2.1 -> 1.7 ns an element against
//           Highway's full-range Exp (AVX2, one thread, in L1).
//   "tanh": y = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
//           (0.5 (1 + tanh u) = 1 / (1 + exp(-2u))).
//
// NaN gives NaN; +inf gives +inf; -inf gives NaN in the erf form (as the
// formula's -inf * 0 does) but -inf in the tanh form (where the formula
// gives NaN).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/elementwise/gelu_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/common/exp_poly-inl.h"

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::gelu_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE V GeluErf(D d, V x) {
  const V t = hn::Mul(x, hn::Set(d, 0.70710678118654752f));
  const V z = hn::Abs(t);
  const V r = hn::Div(hn::Set(d, 1.f), hn::MulAdd(z, hn::Set(d, 0.5f), hn::Set(d, 1.f)));
  // P(r) by Horner, highest coefficient first.
  V p = hn::Set(d, 0.17087277f);
  for (float c : {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f,
                  1.00002368f, -1.26551223f})
    p = hn::MulAdd(p, r, hn::Set(d, c));
  const V z2 = hn::Mul(z, z);
  const V z2_err = hn::MulSub(z, z, z2);  // z*z - z2, exact with FMA
  // The exponent is at most about 1e-7 (z = 0); below -kExpPolyLimit (z
  // past 9.3), and where it is NaN (z = inf), erfc is 0 to float precision.
  const V a = hn::Sub(hn::Sub(p, z2_err), z2);
  const auto live = hn::Ge(a, hn::Set(d, -exp_poly::HWY_NAMESPACE::kExpPolyLimit));
  const V e = hn::IfThenElseZero(live, hn::Mul(r, exp_poly::HWY_NAMESPACE::ExpPoly(d, hn::IfThenElseZero(live, a))));
  const V one_plus_erf = hn::IfThenElse(hn::Ge(t, hn::Zero(d)), hn::Sub(hn::Set(d, 2.f), e), e);
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), one_plus_erf);
}

template <class D, class V>
HWY_INLINE V GeluTanh(D d, V x) {
  const V x3 = hn::Mul(hn::Mul(x, x), x);
  const V u = hn::Mul(hn::Set(d, 0.79788456080286536f), hn::MulAdd(hn::Set(d, 0.044715f), x3, x));
  // exp(-2u) overflows above 88.7: clamp (the quotient is ~0 there anyway).
  const V a = hn::Min(hn::Mul(hn::Set(d, -2.f), u), hn::Set(d, 88.f));
  return hn::Div(x, hn::Add(hn::Set(d, 1.f), hn::Exp(d, a)));
}

void GeluF32(bool tanh_form, const float* x, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    hn::StoreU(tanh_form ? GeluTanh(d, v) : GeluErf(d, v), d, y + i);
  }
  if (i < n) {  // tail through a padded vector
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    const auto v = hn::Load(d, buf);
    hn::Store(tanh_form ? GeluTanh(d, v) : GeluErf(d, v), d, buf);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::gelu_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::gelu_simd {

HWY_EXPORT(GeluF32);

/// y[i] = Gelu(x[i]) for i < n (see the file comment); y may alias x.
void gelu_f32(bool tanh_form, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(GeluF32)(tanh_form, x, y, n);
}

}  // namespace gec::kernels::cpu::gelu_simd
#endif  // HWY_ONCE
