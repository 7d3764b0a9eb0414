// The per-row vector loops of LayerNormalization (ONNX LayerNormalization-17)
// / com.graphengine::SkipLayerNormalization and InstanceNormalization (ONNX
// InstanceNormalization-6) (norm_simd.cc), used by normalization.cc.
#pragma once

#include <cstdint>

namespace gec::kernels::cpu::norm_simd {

/// Mean and 1 / sqrt(var + eps) of x[0 .. n) (population variance, two
/// passes: the mean, then the squared deviations from it), both sums in
/// double, in vector partial sums (another order than a sequential loop:
/// still double, far below float rounding). n == 0 gives mean 0 and
/// 1 / sqrt(eps).
void row_stats(const float* x, int64_t n, float eps, float* mean, float* inv_std);

/// y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i] for i < n (y may be x).
void normalize_row(const float* x, int64_t n, float mean, float inv_std, const float* scale, const float* bias,
                   float* y);

/// y[i] = x[i] * a + b for i < n (y may be x).
void scale_shift(const float* x, int64_t n, float a, float b, float* y);

/// y[i] = x[i] + s[i] for i < n (y may be x or s).
void add_rows(const float* x, const float* s, int64_t n, float* y);

}  // namespace gec::kernels::cpu::norm_simd
