// gemm_simd (our float32 GEMM for the products oneDNN would run as sgemm):
// sizes at, below and past each block (6 rows of the register kernel, 12
// rows read in place, a panel of two vectors, 256 rows of K, 256 columns
// per packed block, 192 rows per block of A), A and B plain and
// transposed, B packed ahead (pack_b) or not, with and without bias, alpha
// and accumulation into C, rows longer than the matrix (lda, ldb, ldc), on
// one and two threads; against a double-precision loop at rtol 1e-5, atol
// 1e-5 * sqrt(k).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/common/gemm_simd.h"

namespace gec {
namespace {

using kernels::cpu::gemm_simd::gemm;
using kernels::cpu::gemm_simd::Product;

/// Values in [-1, 1) from a small linear congruential sequence.
std::vector<float> values_for(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / float(1u << 23) - 1.f;
  }
  return v;
}

/// What a product adds to the plain one.
struct Extras {
  bool a_transposed = false;
  float alpha = 1.f;
  bool accumulate = false;
  bool packed = false;  // B through pack_b
};

void check(int64_t m, int64_t n, int64_t k, bool transposed, bool bias, int64_t pad, int threads, Extras x = {}) {
  SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) +
               (x.a_transposed ? " A^T" : " A") + (transposed ? " B^T" : " B") + (bias ? " bias" : "") + " pad " +
               std::to_string(pad) + " threads " + std::to_string(threads) + " alpha " + std::to_string(x.alpha) +
               (x.accumulate ? " C +=" : "") + (x.packed ? " packed B" : ""));
  const int64_t lda = (x.a_transposed ? m : k) + pad, ldb = (transposed ? k : n) + pad, ldc = n + pad;
  const std::vector<float> a = values_for(size_t((x.a_transposed ? k : m) * lda), 3),
                           b = values_for(size_t((transposed ? n : k) * ldb), 5), bv = values_for(size_t(n), 7);
  const float kSentinel = 1234.5f;
  std::vector<float> c(size_t(m * ldc), kSentinel);
  const std::vector<float> c0 = values_for(c.size(), 11);
  if (x.accumulate)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[size_t(i * ldc + j)] = c0[size_t(i * ldc + j)];
  Product p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a.data();
  p.lda = lda;
  p.a_transposed = x.a_transposed;
  p.alpha = x.alpha;
  p.accumulate = x.accumulate;
  p.b = b.data();
  p.ldb = ldb;
  p.b_transposed = transposed;
  p.bias = bias ? bv.data() : nullptr;
  p.c = c.data();
  p.ldc = ldc;
  std::vector<float> packed;
  if (x.packed) {
    packed.assign(kernels::cpu::gemm_simd::packed_b_floats(k, n), -1.f);
    kernels::cpu::gemm_simd::pack_b(p, packed.data());
    p.b_packed = packed.data();
    p.b = nullptr;  // not read
  }
  gemm(p, threads);
  const double atol = 1e-5 * std::sqrt(double(k) + 1);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t q = 0; q < k; ++q)
        sum += double(x.a_transposed ? a[size_t(q * lda + i)] : a[size_t(i * lda + q)]) *
               (transposed ? b[size_t(j * ldb + q)] : b[size_t(q * ldb + j)]);
      const double want =
          x.alpha * sum + (bias ? bv[size_t(j)] : 0.0) + (x.accumulate ? c0[size_t(i * ldc + j)] : 0.0);
      const double got = c[size_t(i * ldc + j)];
      if (std::fabs(got - want) > atol + 1e-5 * std::fabs(want) && ++bad <= 5)
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << got << ", want " << want;
    }
    for (int64_t j = n; j < ldc; ++j)  // the padding of C's rows is not written
      if (c[size_t(i * ldc + j)] != kSentinel && ++bad <= 5) ADD_FAILURE() << "C[" << i << "," << j << "] written";
  }
}

TEST(GemmSimd, EdgeSizesPlainAndTransposed) {
  for (int64_t m : {1, 5, 6, 7, 11, 12, 13, 37, 200})
    for (int64_t n : {1, 15, 16, 17, 33, 300})
      for (int64_t k : {1, 7, 256, 300})
        for (bool t : {false, true})
          for (bool packed : {false, true}) check(m, n, k, t, (m + n + k) % 2 == 0, 0, 1, {false, 1.f, false, packed});
}

TEST(GemmSimd, BiasStridesAndThreads) {
  for (int threads : {1, 2})
    for (bool t : {false, true})
      for (bool bias : {false, true}) {
        for (bool packed : {false, true}) {
          const Extras x{false, 1.f, false, packed};
          check(128, 768, 300, t, bias, 3, threads, x);  // column split, two blocks of K
          check(400, 40, 520, t, bias, 5, threads, x);   // row split, blocks of A
          check(3, 1000, 64, t, bias, 1, threads, x);    // a few rows: B read in place or dot products
          check(4, 37, 64, t, bias, 0, threads, x);
          check(3, 4096, 256, t, bias, 0, threads, x);      // large enough for two threads: dots or columns split
          check(10, 4096, 256, false, bias, 2, threads, x);  // B read in place, columns split
        }
      }
}

TEST(GemmSimd, TransposedAAlphaAndAccumulation) {
  for (int threads : {1, 2})
    for (int64_t m : {3, 13, 200})
      for (bool t : {false, true}) {
        check(m, 70, 300, t, true, 2, threads, {true, 1.f, false});
        check(m, 70, 300, t, true, 2, threads, {true, 1.f, false, true});
        check(m, 70, 300, t, false, 1, threads, {false, 0.5f, true});
        check(m, 70, 300, t, false, 1, threads, {false, 0.5f, true, true});
        check(m, 33, 20, t, true, 0, threads, {true, -2.f, true});
      }
}

TEST(GemmSimd, EmptyInnerDimGivesBiasOrC) {
  check(7, 19, 0, false, true, 0, 2);
  check(7, 19, 0, true, false, 2, 1);
  check(7, 19, 0, true, true, 1, 1, {false, 1.f, true});
}

}  // namespace
}  // namespace gec
