// float16 / bfloat16 <-> float32 conversions shared by the elementwise and
// reduction kernels. Ops without a native half path convert their inputs to
// float32, compute, and convert the result back (round to nearest even), as
// the ONNX reference does by computing in numpy float32 and casting.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gec/tensor.h"

namespace gec::kernels::cpu {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// IEEE binary16, round to nearest even; overflow gives infinity.
inline uint16_t float_to_half(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal half, counted in units of 2^-24. The product is
    // exact and nearbyint rounds half to even; 1024 encodes the smallest normal.
    const auto m = static_cast<uint32_t>(std::nearbyint(bits_float(x) * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  const uint32_t mant = x & 0x7fffffu;
  uint32_t h = ((((x >> 23) - 127 + 15)) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry bumps the exponent: right
  return static_cast<uint16_t>(sign | h);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/// bfloat16 = the top half of a float32, round to nearest even; NaN stays NaN.
inline uint16_t float_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

inline bool is_half_dtype(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

/// A float32 copy of a float16/bfloat16 view.
inline Tensor half_to_f32_tensor(const TensorView& v) {
  Tensor t(DType::kFloat32, v.shape);
  const uint16_t* s = v.as<uint16_t>();
  float* d = t.as<float>();
  const bool bf = v.dtype == DType::kBFloat16;
  for (int64_t i = 0; i < v.numel(); ++i) d[i] = bf ? bf16_to_float(s[i]) : half_to_float(s[i]);
  return t;
}

/// Writes float32 `src` into the half view `dst` (same numel), rounding to nearest even.
inline void f32_to_half_view(const TensorView& src, TensorView& dst) {
  const float* s = src.as<float>();
  uint16_t* d = dst.as<uint16_t>();
  const bool bf = dst.dtype == DType::kBFloat16;
  for (int64_t i = 0; i < dst.numel(); ++i) d[i] = bf ? float_to_bf16(s[i]) : float_to_half(s[i]);
}

}  // namespace gec::kernels::cpu
