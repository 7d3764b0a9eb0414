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

}  // namespace gec::kernels::cpu::simd
