// CPU kernels of the unary elementwise ops (math functions, activations,
// IsNaN/IsInf, Not) and Clip. Each op is one scalar formula, written once as a
// template and run by a straight loop over the flat tensor (OpenMP-split when
// large, `omp simd` so the compiler vectorizes what it can); float32 Relu,
// Sigmoid, Tanh and Exp use the Highway loops of elementwise_simd.h. Formulas follow
// the ONNX operator text; NaN inputs give NaN wherever the text's formula
// would (Relu, Clip, LeakyRelu, Sign, ...).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

// Float-only ops (float32/float64).
#define GEC_FLOAT_UNARY(X)                                                                      \
  X(Sigmoid) X(Tanh) X(Erf) X(Exp) X(Log) X(Sqrt) X(Reciprocal) X(Floor) X(Ceil) X(Round) X(Sin) \
  X(Cos) X(Softplus) X(Softsign) X(HardSigmoid) X(HardSwish) X(LeakyRelu) X(Elu) X(Selu) X(Celu) \
  X(ThresholdedRelu) X(Mish) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh)
// Ops also defined on integers.
#define GEC_NUMERIC_UNARY(X) X(Relu) X(Neg) X(Abs) X(Sign) X(Shrink)

enum class U {
#define GEC_ENUM(n) k##n,
  GEC_FLOAT_UNARY(GEC_ENUM) GEC_NUMERIC_UNARY(GEC_ENUM)
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
    return static_cast<T>(-x);
  } else if constexpr (op == U::kAbs) {
    if constexpr (std::is_unsigned_v<T>) return x;
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

/// y[i] = f(x[i]) over n elements, split across threads when large.
template <typename TIn, typename TOut, typename F>
void map_unary(const TIn* x, TOut* y, int64_t n, int num_threads, F f) {
  parallel_ranges(n, num_threads, [&](int64_t b, int64_t e) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
  });
}

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(U op, UnaryParams p, std::string what) : op_(op), p_(p), what_(std::move(what)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    const int64_t n = x.numel();
    const int nt = ctx.num_threads;
    if (op_ == U::kNot) {
      check_dtype(x.dtype == DType::kBool, x.dtype);
      map_unary(x.as<uint8_t>(), y.as<uint8_t>(), n, nt, [](uint8_t v) -> uint8_t { return v == 0; });
      return;
    }
    if (op_ == U::kIsNaN || op_ == U::kIsInf) {
      const UnaryParams p = p_;
      const bool is_nan = op_ == U::kIsNaN;
      dispatch_float(x.dtype, what_, [&](auto tag) {
        using T = decltype(tag);
        map_unary(x.as<T>(), y.as<uint8_t>(), n, nt, [p, is_nan](T v) -> uint8_t {
          if (is_nan) return v != v;
          return (std::isinf(v) && ((v > 0 && p.detect_positive) || (v < 0 && p.detect_negative)));
        });
      });
      return;
    }
    if (is_numeric_op()) {
      dispatch_arith(x.dtype, what_, [&](auto tag) { run_numeric<decltype(tag)>(x, y, n, nt); });
    } else {
      dispatch_float(x.dtype, what_, [&](auto tag) { run_float<decltype(tag)>(x, y, n, nt); });
    }
  }

 private:
  bool is_numeric_op() const {
    return op_ == U::kRelu || op_ == U::kNeg || op_ == U::kAbs || op_ == U::kSign || op_ == U::kShrink;
  }
  void check_dtype(bool ok, DType t) const {
    if (!ok) fail(ErrorCode::kUnsupported, what_ + ": dtype " + dtype_name(t) + " is not supported");
  }

  template <U op, typename T>
  void map_op(const TensorView& x, TensorView& y, int64_t n, int nt) const {
    if constexpr (std::is_same_v<T, float> &&
                  (op == U::kRelu || op == U::kSigmoid || op == U::kTanh || op == U::kExp)) {
      constexpr simd::UnOp s = op == U::kRelu      ? simd::UnOp::kRelu
                               : op == U::kSigmoid ? simd::UnOp::kSigmoid
                               : op == U::kTanh    ? simd::UnOp::kTanh
                                                   : simd::UnOp::kExp;
      const float* xp = x.as<float>();
      float* yp = y.as<float>();
      parallel_ranges(n, nt, [&](int64_t b, int64_t e) { simd::unary_f32(s, xp + b, yp + b, e - b); });
      return;
    }
    const UnaryParams p = p_;
    map_unary(x.as<T>(), y.as<T>(), n, nt, [p](T v) { return unary_value<op, T>(v, p); });
  }

  template <typename T>
  void run_numeric(const TensorView& x, TensorView& y, int64_t n, int nt) const {
    // ONNX Neg is defined on signed types only.
    check_dtype(op_ != U::kNeg || !std::is_unsigned_v<T>, x.dtype);
    switch (op_) {
#define GEC_CASE(name) \
  case U::k##name: return map_op<U::k##name, T>(x, y, n, nt);
      GEC_NUMERIC_UNARY(GEC_CASE)
#undef GEC_CASE
      default: break;
    }
  }

  template <typename T>
  void run_float(const TensorView& x, TensorView& y, int64_t n, int nt) const {
    switch (op_) {
#define GEC_CASE(name) \
  case U::k##name: return map_op<U::k##name, T>(x, y, n, nt);
      GEC_FLOAT_UNARY(GEC_CASE)
#undef GEC_CASE
      default: break;
    }
  }

  U op_;
  UnaryParams p_;
  std::string what_;
};

/// Default attribute values from the ONNX operator text.
UnaryParams read_params(U op, const ir::Node& n) {
  UnaryParams p;
  switch (op) {
    case U::kLeakyRelu: p.alpha = n.get_float("alpha", 0.01f); break;
    case U::kElu:
    case U::kCelu:
    case U::kThresholdedRelu: p.alpha = n.get_float("alpha", 1.0f); break;
    case U::kSelu:
      p.alpha = n.get_float("alpha", 1.67326319217681884765625f);
      p.gamma = n.get_float("gamma", 1.05070102710723876953125f);
      break;
    case U::kHardSigmoid:
      p.alpha = n.get_float("alpha", 0.2f);
      p.beta = n.get_float("beta", 0.5f);
      break;
    case U::kHardSwish:  // HardSwish-14: x * HardSigmoid(x) with alpha 1/6, beta 0.5
      p.alpha = 1.0f / 6.0f;
      p.beta = 0.5f;
      break;
    case U::kShrink:  // alpha = lambd, beta = bias
      p.alpha = n.get_float("lambd", 0.5f);
      p.beta = n.get_float("bias", 0.0f);
      break;
    case U::kIsInf:
      p.detect_negative = n.get_int("detect_negative", 1) != 0;
      p.detect_positive = n.get_int("detect_positive", 1) != 0;
      break;
    default: break;
  }
  return p;
}

KernelFactory unary_factory(U op) {
  return [op](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<UnaryKernel>(op, read_params(op, n), n.describe());
  };
}

const bool kUnaryRegistered = [] {
#define GEC_REG(name) register_kernel("", #name, unary_factory(U::k##name), __FILE__);
  GEC_FLOAT_UNARY(GEC_REG)
  GEC_NUMERIC_UNARY(GEC_REG)
  GEC_REG(IsNaN)
  GEC_REG(IsInf)
  GEC_REG(Not)
#undef GEC_REG
  return true;
}();

// ---- Clip-13 -------------------------------------------------------------------

/// y = min(max(x, lo), hi) with lo/hi the optional scalar inputs 1 and 2. A NaN
/// x stays NaN (both comparisons are false); lo > hi gives hi everywhere, as
/// the ONNX text specifies.
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(std::string what) : what_(std::move(what)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    dispatch_arith(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (std::is_floating_point_v<T>) {
        lo = -std::numeric_limits<T>::infinity();
        hi = std::numeric_limits<T>::infinity();
      }
      if (ctx.has_input(1) && ctx.in(1).numel() > 0) lo = ctx.in(1).as<T>()[0];
      if (ctx.has_input(2) && ctx.in(2).numel() > 0) hi = ctx.in(2).as<T>()[0];
      map_unary(x.as<T>(), ctx.out(0).as<T>(), x.numel(), ctx.num_threads, [lo, hi](T v) {
        v = v < lo ? lo : v;
        return v > hi ? hi : v;
      });
    });
  }

 private:
  std::string what_;
};

GEC_REGISTER_KERNEL("", "Clip", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<ClipKernel>(n.describe());
});

}  // namespace
}  // namespace gec::kernels::cpu
