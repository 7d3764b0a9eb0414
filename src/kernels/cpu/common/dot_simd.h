// Dot products of a few rows against many (dot_simd.cc), compiled per SIMD
// target: the products of one to four rows that oneDNN's GEMMs pay a
// per-call overhead for (an RNN step's H R^T, a convolution with a handful
// of output positions).
#pragma once

#include <cstdint>

namespace gec::kernels::cpu::dot_simd {

/// The rows of A dots_nt multiplies per pass over B.
inline constexpr int64_t kMaxRows = 4;

/// C[i * ldc + j] = sum over p < k of A[i * k + p] * B[j * k + p]
/// (+ beta * C[i * ldc + j] when beta != 0) for i < m, j < n: A [m, k] and
/// B [n, k] row-major (C = A B^T + beta C). Rows of A go kMaxRows at a time;
/// each B row is loaded once per k-chunk and multiplied with every one of
/// them (vector partial sums, then their lanes added: not the order of a
/// sequential loop). C may not alias A or B.
void dots_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c, int64_t ldc);

}  // namespace gec::kernels::cpu::dot_simd
