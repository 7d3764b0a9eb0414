// Highway loops of dot_simd.h, compiled per SIMD target and picked at run
// time (the rest of the project is compiled for baseline x86-64, where a
// dot product runs on four-lane SSE2 vectors).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/common/dot_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>

#include "kernels/cpu/common/dot_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::dot_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// C[i][j .. j + J) for the R rows of A and J rows of B at `bj` (both known
/// at compile time: R x J accumulators, which -O3 keeps in registers, see
/// CMakeLists.txt; with 16 vector registers (AVX2, SSE4) the 4 x 4 block
/// spills a few, a speed matter only). J rows of B at once give R x J
/// independent FMA chains, enough to cover the FMA latency even for one row
/// of A.
template <int R, int J>
HWY_INLINE void DotsBlock(int64_t k, const float* a, const float* bj, float beta, float* c, int64_t ldc) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<decltype(d)>;
  V acc[R][J];
  for (int i = 0; i < R; ++i)
    for (int q = 0; q < J; ++q) acc[i][q] = hn::Zero(d);
  int64_t p = 0;
  for (; p + L <= k; p += L) {
    V bv[J];
    for (int q = 0; q < J; ++q) bv[q] = hn::LoadU(d, bj + q * k + p);
    for (int i = 0; i < R; ++i) {
      const V av = hn::LoadU(d, a + i * k + p);
      for (int q = 0; q < J; ++q) acc[i][q] = hn::MulAdd(av, bv[q], acc[i][q]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int q = 0; q < J; ++q) {
      float s = hn::GetLane(hn::SumOfLanes(d, acc[i][q]));
      for (int64_t t = p; t < k; ++t) s += a[i * k + t] * bj[q * k + t];
      float& out = c[i * ldc + q];
      out = beta == 0.f ? s : beta * out + s;
    }
}

/// Rows j < n of C for R rows of A: four rows of B at a time, then one.
template <int R>
void DotsRows(int64_t n, int64_t k, const float* a, const float* b, float beta, float* c, int64_t ldc) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) DotsBlock<R, 4>(k, a, b + j * k, beta, c + j, ldc);
  for (; j < n; ++j) DotsBlock<R, 1>(k, a, b + j * k, beta, c + j, ldc);
}

void DotsNt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += kMaxRows) {
    const float* ai = a + i * k;
    float* ci = c + i * ldc;
    switch (m - i) {
      case 1: DotsRows<1>(n, k, ai, b, beta, ci, ldc); break;
      case 2: DotsRows<2>(n, k, ai, b, beta, ci, ldc); break;
      case 3: DotsRows<3>(n, k, ai, b, beta, ci, ldc); break;
      default: DotsRows<4>(n, k, ai, b, beta, ci, ldc); break;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::dot_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::dot_simd {

HWY_EXPORT(DotsNt);

void dots_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  HWY_DYNAMIC_DISPATCH(DotsNt)(m, n, k, a, b, beta, c, ldc);
}

}  // namespace gec::kernels::cpu::dot_simd
#endif  // HWY_ONCE
