// float32 hot loops of the elementwise kernels, compiled for several x86
// targets with Highway and picked at run time (dynamic dispatch; the build
// stays portable, no -march). Callers split work across threads; these run
// one contiguous range on the calling thread.
#pragma once

#include <cstdint>

namespace gec::kernels::cpu::simd {

enum class BinOp : int { kAdd, kSub, kMul, kDiv };

/// o[i] = a[i] op b[i] for i < n; a_scalar (b_scalar) means every element of
/// that operand is a[0] (b[0]). o may alias a or b.
void binary_f32(BinOp op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* o, int64_t n);

enum class UnOp : int { kRelu, kSigmoid, kTanh, kExp };

/// y[i] = f(x[i]) for i < n; NaN in gives NaN out. Sigmoid/Tanh/Exp are
/// within a few ULP of libm. y may alias x.
void unary_f32(UnOp op, const float* x, float* y, int64_t n);

/// y[i] = x[i] * sigmoid(alpha * x[i]) (com.graphengine::Swish, ONNX
/// Swish-24) with unary_f32's sigmoid: for alpha 1 the bits of Sigmoid then
/// Mul. y may alias x.
void swish_f32(float alpha, const float* x, float* y, int64_t n);

enum class PiecewiseOp : int { kClip, kLeakyRelu, kHardSigmoid, kHardSwish };

/// The piecewise-linear activations, y[i] = f(x[i]) with parameters a, b:
///   kClip         v = x < a ? a : x; v > b ? b : v     (Clip-13: min(max(x, a), b))
///   kLeakyRelu    x < 0 ? a * x : x                    (LeakyRelu-16: a = alpha)
///   kHardSigmoid  clamp(a * x + b, 0, 1)               (HardSigmoid-6: alpha, beta)
///   kHardSwish    x * clamp(a * x + b, 0, 1)           (HardSwish-14: a = 1/6, b = 0.5)
/// each product and sum rounded on its own (never a fused multiply-add: the
/// same bits as the scalar formulas of unary_formulas.h), and NaN in gives
/// NaN out (the comparisons are false for NaN). Branch-free vector code: the
/// scalar loops with a branch per element ran at about one element per 5 ns
/// on random signs. y may alias x.
void piecewise_f32(PiecewiseOp op, float a, float b, const float* x, float* y, int64_t n);

}  // namespace gec::kernels::cpu::simd
