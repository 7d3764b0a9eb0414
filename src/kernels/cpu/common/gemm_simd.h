// A float32 GEMM of our own (gemm_simd.cc), compiled per SIMD target with
// Highway and picked at run time, for the products oneDNN 2.6 runs as sgemm
// on CPUs without AVX-512. oneDNN's sgemm generates its kernels in the first
// call of each process (23-33 ms and 4 MB here, most of the first run of a
// small transformer or a model with a single MatMul); this one is compiled
// ahead of time and costs nothing before its first product.
//
// The method is the one of BLIS and GotoBLAS (Goto and van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3),
// 2008): B is copied, a block of kKc rows by a few hundred columns at a
// time, into panels of two vectors' width that the register kernel reads
// contiguously from L1/L2; A is read in place, six rows at a time, one
// broadcast element per row and step; each 6 x (2 vectors) block of C
// lives in twelve registers for a whole block of K.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gec::kernels::cpu::gemm_simd {

/// One product C = alpha A op(B) (+ bias) (+ C), float32, all row-major.
///   A: [m, k] with row i at a + i * lda; or, when a_transposed, A^T [k, m]
///      with row p (column p of A) at a + p * lda.
///   B: [k, n] with row p at b + p * ldb; or, when b_transposed, B^T [n, k]
///      with row j (column j of B) at b + j * ldb.
///   b_packed: B as pack_b() wrote it for this k, n (then b, ldb and
///      b_transposed are not read), or null.
///   bias: [n], added to every row of C, or null.
///   C: [m, n], row i at c + i * ldc; overwritten, or added to when
///      `accumulate`. C may not alias A, B or bias.
struct Product {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  bool a_transposed = false;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool b_transposed = false;
  const float* b_packed = nullptr;
  const float* bias = nullptr;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.f;
  bool accumulate = false;
};

/// Runs `p` on up to `threads` OpenMP threads (1: the calling thread only,
/// no parallel region). Columns of C are split between threads when there
/// are enough of them, else rows. Sums run in vector lanes over K in blocks,
/// so results differ from a sequential loop's by rounding only. m, n or
/// k of 0 is allowed (k = 0: C = bias, or 0, or C unchanged plus bias).
void gemm(const Product& p, int threads);

/// B packed ahead of the products (a constant weight, packed once at
/// compile time or load): for each block of 256 rows of K, the columns in
/// panels of two vectors' width (16 floats with AVX2, 32 with AVX-512),
/// each panel's rows contiguous, columns past n zero. pack_b reads p.b,
/// p.ldb, p.b_transposed, p.k and p.n and writes packed_b_floats(k, n)
/// floats to `out`. The layout depends on this CPU's vector width:
/// packed_b_layout names it for the copy packed from `p`'s data (for
/// stored and shared copies, SharedWeights::Packed, which key them by the
/// data's address): p.k, p.n and whether the data is B or B^T (the same
/// square bytes read both ways pack into different copies).
size_t packed_b_floats(int64_t k, int64_t n);
std::string packed_b_layout(const Product& p);
void pack_b(const Product& p, float* out);

}  // namespace gec::kernels::cpu::gemm_simd
