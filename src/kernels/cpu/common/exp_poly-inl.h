// e^x as a short polynomial for the kernels whose arguments are bounded
// (the softmax's shifted scores, the sigmoid's, Gelu's erfc): Highway vector
// code, a Highway "-inl" header included once per SIMD target from inside a
// foreach_target pass (attention_simd.cc, elementwise_simd.cc, gelu_simd.cc).
//
// Cody and Waite's range reduction: x = n ln 2 + r with n = round(x / ln 2),
// |r| <= ln 2 / 2, ln 2 split in two parts so n ln 2 is exact to float
// precision; e^r by its Taylor polynomial of degree 7 (truncation at most
// 7.3e-9 relative on that interval); 2^n put into the exponent bits. Measured
// against double precision over [-87, 87]: within 2 float ulp. About a
// third of the instructions of Highway's Exp, which covers the whole float
// range (and was a quarter of a Whisper-like encoder's attention time and
// most of EfficientNet's SiLU time on AVX2).
#if defined(GEC_KERNELS_CPU_COMMON_EXP_POLY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GEC_KERNELS_CPU_COMMON_EXP_POLY_INL_H_
#undef GEC_KERNELS_CPU_COMMON_EXP_POLY_INL_H_
#else
#define GEC_KERNELS_CPU_COMMON_EXP_POLY_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::exp_poly {
namespace HWY_NAMESPACE {

/// The arguments ExpPoly takes: [-kExpPolyLimit, kExpPolyLimit] (n within
/// [-126, 126]: 2^n a normal float).
inline constexpr float kExpPolyLimit = 87.f;

/// e^x for x in [-kExpPolyLimit, kExpPolyLimit] (not NaN): the caller
/// clamps, and handles NaN and what lies outside.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V ExpPoly(D d, V x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::RebindToSigned<D> di;
  const V n = hn::Round(hn::Mul(x, hn::Set(d, 1.44269504088896341f)));
  V r = hn::MulAdd(n, hn::Set(d, -0.693145751953125f), x);
  r = hn::MulAdd(n, hn::Set(d, -1.42860682030941723e-6f), r);
  V p = hn::Set(d, 1.f / 5040);
  p = hn::MulAdd(p, r, hn::Set(d, 1.f / 720));
  p = hn::MulAdd(p, r, hn::Set(d, 1.f / 120));
  p = hn::MulAdd(p, r, hn::Set(d, 1.f / 24));
  p = hn::MulAdd(p, r, hn::Set(d, 1.f / 6));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.f));
  const V two_n = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127))));
  return hn::Mul(p, two_n);
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::exp_poly
HWY_AFTER_NAMESPACE();

#endif  // GEC_KERNELS_CPU_COMMON_EXP_POLY_INL_H_ per target
