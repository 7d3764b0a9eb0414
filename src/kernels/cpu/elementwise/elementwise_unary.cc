// CPU kernels of the unary elementwise ops (math functions, activations,
// IsNaN/IsInf, Not) and Clip. Each op is one scalar formula, written once as a
// template and run by a straight loop over the flat tensor (OpenMP-split when
// large, `omp simd` so the compiler vectorizes what it can); float32 Relu,
// Sigmoid, Tanh, Exp, Swish, LeakyRelu, HardSigmoid, HardSwish and Clip use
// the Highway loops of elementwise_simd.h. Formulas follow
// the ONNX operator text; NaN inputs give NaN wherever the text's formula
// would (Relu, Clip, LeakyRelu, Sign, ...).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/cpu/elementwise/unary_formulas.h"
#include "kernels/kernel.h"
#include "ops/fused_elementwise.h"

namespace gec::kernels::cpu {
namespace {

using unary_formulas::U;
using unary_formulas::unary_value;
using unary_formulas::UnaryParams;

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
    if constexpr (std::is_same_v<T, float> &&
                  (op == U::kLeakyRelu || op == U::kHardSigmoid || op == U::kHardSwish)) {
      constexpr simd::PiecewiseOp s = op == U::kLeakyRelu     ? simd::PiecewiseOp::kLeakyRelu
                                      : op == U::kHardSigmoid ? simd::PiecewiseOp::kHardSigmoid
                                                              : simd::PiecewiseOp::kHardSwish;
      const float* xp = x.as<float>();
      float* yp = y.as<float>();
      const float a = p_.alpha, b = p_.beta;
      parallel_ranges(n, nt, [&](int64_t b0, int64_t e) { simd::piecewise_f32(s, a, b, xp + b0, yp + b0, e - b0); });
      return;
    }
    if constexpr (std::is_same_v<T, float> && op == U::kSwish) {
      const float* xp = x.as<float>();
      float* yp = y.as<float>();
      const float alpha = p_.alpha;
      parallel_ranges(n, nt, [&](int64_t b, int64_t e) { simd::swish_f32(alpha, xp + b, yp + b, e - b); });
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
      GEC_OWN_FLOAT_UNARY(GEC_CASE)
#undef GEC_CASE
      default: break;
    }
  }

  U op_;
  UnaryParams p_;
  std::string what_;
};

/// Attribute values (ONNX defaults filled in by ops::activation_params).
UnaryParams read_params(U op, const ir::Node& n) {
  const std::array<float, 3> a = ops::activation_params(n);
  UnaryParams p;
  p.alpha = a[0];
  p.beta = a[1];
  p.gamma = a[2];
  if (op == U::kIsInf) {
    p.detect_negative = n.get_int("detect_negative", 1) != 0;
    p.detect_positive = n.get_int("detect_positive", 1) != 0;
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
#define GEC_REG(name) register_kernel(ops::kGecDomain, #name, unary_factory(U::k##name), __FILE__);
  GEC_OWN_FLOAT_UNARY(GEC_REG)
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
      if constexpr (std::is_same_v<T, float>) {
        const float* xp = x.as<float>();
        float* yp = ctx.out(0).as<float>();
        parallel_ranges(x.numel(), ctx.num_threads, [&](int64_t b, int64_t e) {
          simd::piecewise_f32(simd::PiecewiseOp::kClip, lo, hi, xp + b, yp + b, e - b);
        });
        return;
      }
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
