// The scalar formula of each unary elementwise op (ONNX operator text,
// opset 17), shared by the unary kernels (elementwise_unary.cc) and the
// fused elementwise kernel (fused_elementwise.cc), so that a fused group
// computes exactly what the separate kernels would.
#pragma once

#include <cmath>
#include <type_traits>

namespace gec::kernels::cpu::unary_formulas {

// Float-only ops (float32/float64).
#define GEC_FLOAT_UNARY(X)                                                                      \
  X(Sigmoid) X(Tanh) X(Erf) X(Exp) X(Log) X(Sqrt) X(Reciprocal) X(Floor) X(Ceil) X(Round) X(Sin) \
  X(Cos) X(Softplus) X(Softsign) X(HardSigmoid) X(HardSwish) X(LeakyRelu) X(Elu) X(Selu) X(Celu) \
  X(ThresholdedRelu) X(Mish) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh)
// Float-only ops of our domain (com.graphengine).
#define GEC_OWN_FLOAT_UNARY(X) X(Swish)
// Ops also defined on integers.
#define GEC_NUMERIC_UNARY(X) X(Relu) X(Neg) X(Abs) X(Sign) X(Shrink)

enum class U {
#define GEC_ENUM(n) k##n,
  GEC_FLOAT_UNARY(GEC_ENUM) GEC_OWN_FLOAT_UNARY(GEC_ENUM) GEC_NUMERIC_UNARY(GEC_ENUM)
#undef GEC_ENUM
  kIsNaN, kIsInf, kNot
};

struct UnaryParams {
  float alpha = 0.f, beta = 0.f, gamma = 0.f;
  bool detect_negative = true, detect_positive = true;  // IsInf
};

template <typename T>
inline T softplus(T x) {  // ln(1 + e^x) without overflow for large x
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

/// The scalar formula of op `op` (ONNX operator text, opset 17).
template <U op, typename T>
inline T unary_value(T x, const UnaryParams& p) {
  const T a = static_cast<T>(p.alpha);
  if constexpr (op == U::kRelu) {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < T(0) ? T(0) : x;  // NaN < 0 is false: NaN passes through
  } else if constexpr (op == U::kNeg) {
    if constexpr (std::is_integral_v<T>)  // wraps for the most negative value (no signed overflow)
      return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
    else return static_cast<T>(-x);
  } else if constexpr (op == U::kAbs) {
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (std::is_integral_v<T>)
      return x < T(0) ? static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x)) : x;
    else return x < T(0) ? static_cast<T>(-x) : x;
  } else if constexpr (op == U::kSign) {
    if constexpr (std::is_floating_point_v<T>)
      if (x != x) return x;
    return x > T(0) ? T(1) : (x == T(0) ? T(0) : static_cast<T>(-1));
  } else if constexpr (op == U::kSigmoid) {
    return T(1) / (T(1) + std::exp(-x));
  } else if constexpr (op == U::kTanh) {
    return std::tanh(x);
  } else if constexpr (op == U::kErf) {
    return std::erf(x);
  } else if constexpr (op == U::kExp) {
    return std::exp(x);
  } else if constexpr (op == U::kLog) {
    return std::log(x);
  } else if constexpr (op == U::kSqrt) {
    return std::sqrt(x);
  } else if constexpr (op == U::kReciprocal) {
    return T(1) / x;
  } else if constexpr (op == U::kFloor) {
    return std::floor(x);
  } else if constexpr (op == U::kCeil) {
    return std::ceil(x);
  } else if constexpr (op == U::kRound) {
    return std::nearbyint(x);  // default rounding mode: half to even, as ONNX Round
  } else if constexpr (op == U::kSin) {
    return std::sin(x);
  } else if constexpr (op == U::kCos) {
    return std::cos(x);
  } else if constexpr (op == U::kSoftplus) {
    return softplus(x);
  } else if constexpr (op == U::kSoftsign) {
    return x / (T(1) + std::fabs(x));
  } else if constexpr (op == U::kHardSigmoid || op == U::kHardSwish) {
    const T v = a * x + static_cast<T>(p.beta);
    const T c = v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
    return op == U::kHardSigmoid ? c : x * c;
  } else if constexpr (op == U::kLeakyRelu) {
    return x < T(0) ? a * x : x;
  } else if constexpr (op == U::kElu) {
    return x < T(0) ? a * std::expm1(x) : x;
  } else if constexpr (op == U::kSelu) {
    const T g = static_cast<T>(p.gamma);
    return x <= T(0) ? g * (a * std::exp(x) - a) : g * x;
  } else if constexpr (op == U::kCelu) {
    return x > T(0) ? x : a * std::expm1(x / a);  // max(0,x) + min(0, a*(e^(x/a)-1))
  } else if constexpr (op == U::kThresholdedRelu) {
    return x > a ? x : T(0);
  } else if constexpr (op == U::kMish) {
    return x * std::tanh(softplus(x));
  } else if constexpr (op == U::kSwish) {
    return x / (T(1) + std::exp(-a * x));  // Swish-24: x * sigmoid(alpha * x)
  } else if constexpr (op == U::kTan) {
    return std::tan(x);
  } else if constexpr (op == U::kAsin) {
    return std::asin(x);
  } else if constexpr (op == U::kAcos) {
    return std::acos(x);
  } else if constexpr (op == U::kAtan) {
    return std::atan(x);
  } else if constexpr (op == U::kSinh) {
    return std::sinh(x);
  } else if constexpr (op == U::kCosh) {
    return std::cosh(x);
  } else if constexpr (op == U::kAsinh) {
    return std::asinh(x);
  } else if constexpr (op == U::kAcosh) {
    return std::acosh(x);
  } else if constexpr (op == U::kAtanh) {
    return std::atanh(x);
  } else if constexpr (op == U::kShrink) {
    // Shrink-9: x < -lambd -> x + bias; x > lambd -> x - bias; else 0. Computed
    // in double so integer inputs compare against a fractional lambd exactly.
    const double v = static_cast<double>(x), l = p.alpha, b = p.beta;
    return static_cast<T>(v < -l ? v + b : (v > l ? v - b : 0.0));
  }
}

}  // namespace gec::kernels::cpu::unary_formulas
