// Highway loops of gemm_simd.h, compiled per SIMD target (see the header
// for the method). Loop nest of one thread's share [i0, i1) x [j0, j1):
//
//   for each block of kNc columns       (B's block: kKc x kNc floats)
//     for each block of kKc rows of K   (B's block packed into panels,
//                                        unless pack_b packed it before)
//       for each block of kMc rows of A (read in place, L2)
//         for each panel of NR columns  (kKc x NR floats, L1)
//           for each kMr rows of A      (register kernel: C += A B over kKc)
//
// NR is two vectors (16 floats with AVX2, 32 with AVX-512). A product of
// fewer than kSmallRows rows with B not packed ahead reads B in place
// (SmallRows): a packed copy would be read once or twice, so packing would
// mostly add a copy. A transposed A is copied into rows a block at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/common/gemm_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dot_simd.h"
#include "kernels/cpu/common/gemm_simd.h"

#ifndef GEC_GEMM_SIMD_BLOCKS  // once, not per target
#define GEC_GEMM_SIMD_BLOCKS
namespace gec::kernels::cpu::gemm_simd {
/// Rows of A per register kernel; rows of K and columns of B per packed block.
constexpr int64_t kMr = 6, kKc = 256, kNc = 256, kMc = 192;
/// Products of fewer rows read B in place (SmallRows), kMr rows per pass.
constexpr int64_t kSmallRows = 2 * kMr;
}  // namespace gec::kernels::cpu::gemm_simd
#endif

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::gemm_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// C[R, NR] at c (rows ldc apart; only the first `cols` columns exist)
/// = or += A[R, kc] (rows lda apart) x B panel [kc, NR] (rows ldp apart),
/// times alpha, + bias[cols] when `bias` (with `first`). `first`: the first
/// block of K (C is written, not read, unless `accumulate`). R x 2 accumulators stay in registers (-O3).
template <int R>
HWY_NOINLINE void Kernel(int64_t kc, const float* a, int64_t lda, const float* bp, int64_t ldp, float* c, int64_t ldc,
                         int64_t cols, bool first, const float* bias, float alpha, bool accumulate) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<decltype(d)>;
  V acc[R][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = hn::Zero(d);
  for (int64_t p = 0; p < kc; ++p, bp += ldp) {
    const V b0 = hn::LoadU(d, bp), b1 = hn::LoadU(d, bp + L);
    for (int i = 0; i < R; ++i) {
      const V ai = hn::Set(d, a[i * lda + p]);
      acc[i][0] = hn::MulAdd(ai, b0, acc[i][0]);
      acc[i][1] = hn::MulAdd(ai, b1, acc[i][1]);
    }
  }
  // Epilogue: alpha, then bias (first block) and C (later blocks, or
  // every block when accumulating).
  const bool add_c = !first || accumulate;
  if (alpha != 1.f) {
    const V va = hn::Set(d, alpha);
    for (int i = 0; i < R; ++i) {
      acc[i][0] = hn::Mul(acc[i][0], va);
      acc[i][1] = hn::Mul(acc[i][1], va);
    }
  }
  if (cols == 2 * L) {
    V b0 = hn::Zero(d), b1 = hn::Zero(d);
    if (first && bias) {
      b0 = hn::LoadU(d, bias);
      b1 = hn::LoadU(d, bias + L);
    }
    for (int i = 0; i < R; ++i) {
      float* ci = c + i * ldc;
      V c0 = hn::Add(acc[i][0], b0), c1 = hn::Add(acc[i][1], b1);
      if (add_c) {
        c0 = hn::Add(c0, hn::LoadU(d, ci));
        c1 = hn::Add(c1, hn::LoadU(d, ci + L));
      }
      hn::StoreU(c0, d, ci);
      hn::StoreU(c1, d, ci + L);
    }
    return;
  }
  HWY_ALIGN float tile[2 * HWY_MAX_BYTES / sizeof(float)] = {};  // a row of the block, then its first `cols` values
  for (int i = 0; i < R; ++i) {
    hn::Store(acc[i][0], d, tile);
    hn::Store(acc[i][1], d, tile + L);
    float* ci = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j) ci[j] = tile[j] + (first && bias ? bias[j] : 0.f) + (add_c ? ci[j] : 0.f);
  }
}

/// Rows [0, m) of A (rows lda apart) against one B panel: kMr rows at a
/// time, then the rest.
HWY_INLINE void PanelRows(const Product& pr, int64_t m, int64_t kc, const float* a, int64_t lda, const float* bp,
                          int64_t ldp, float* c, int64_t ldc, int64_t cols, bool first, const float* bias) {
  const float alpha = pr.alpha;
  const bool accumulate = pr.accumulate;
  int64_t i = 0;
  for (; i + kMr <= m; i += kMr)
    Kernel<kMr>(kc, a + i * lda, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate);
  const float* ai = a + i * lda;
  switch (m - i) {
    case 1: Kernel<1>(kc, ai, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate); break;
    case 2: Kernel<2>(kc, ai, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate); break;
    case 3: Kernel<3>(kc, ai, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate); break;
    case 4: Kernel<4>(kc, ai, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate); break;
    case 5: Kernel<5>(kc, ai, lda, bp, ldp, c + i * ldc, ldc, cols, first, bias, alpha, accumulate); break;
    default: break;
  }
}

/// Copies A[i0 .. i0 + m, p0 .. p0 + kc) from A^T (a_transposed) into
/// rows of kc floats at out: the register kernel reads A row by row.
void TransposeA(const Product& pr, int64_t i0, int64_t m, int64_t p0, int64_t kc, float* out) {
  for (int64_t p = 0; p < kc; ++p) {
    const float* src = pr.a + (p0 + p) * pr.lda + i0;
    for (int64_t i = 0; i < m; ++i) out[i * kc + p] = src[i];
  }
}

/// Copies B[p0 .. p0 + kc, j0 .. j0 + nc) into panels of NR columns, panel
/// q at out + q * kc * NR, row p of it NR floats; columns past nc are 0.
/// B is read row by row (contiguous streams), B^T column by column.
void PackB(const Product& pr, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t full = nc / nr, rest = nc - full * nr;
  if (!pr.b_transposed) {
    for (int64_t p = 0; p < kc; ++p) {
      const float* row = pr.b + (p0 + p) * pr.ldb + j0;
      float* dst = out + p * nr;
      for (int64_t q = 0; q < full; ++q, row += nr, dst += kc * nr) {
        hn::StoreU(hn::LoadU(d, row), d, dst);
        hn::StoreU(hn::LoadU(d, row + L), d, dst + L);
      }
      if (rest) {
        for (int64_t j = 0; j < rest; ++j) dst[j] = row[j];
        for (int64_t j = rest; j < nr; ++j) dst[j] = 0.f;
      }
    }
    return;
  }
  for (int64_t q = 0; q * nr < nc; ++q) {
    float* panel = out + q * kc * nr;
    const int64_t jq = j0 + q * nr, cols = std::min(nr, nc - q * nr);
    for (int64_t j = 0; j < cols; ++j) {
      const float* col = pr.b + (jq + j) * pr.ldb + p0;
      for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = col[p];
    }
    for (int64_t j = cols; j < nr; ++j)
      for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = 0.f;
  }
}

/// C[i, j .. j + cols) (+)= alpha A[i, p0 .. p0 + kc) B[p0 .. p0 + kc, j .. j + cols)
/// for the R rows from i0, reading B in place, eight rows of it per pass
/// over C's rows (kept in L1): eight contiguous streams of B, one load and
/// one store of C per eight multiply-adds.
template <int R>
void SmallRows(const Product& pr, int64_t i0, int64_t p0, int64_t kc, int64_t j, int64_t cols) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<decltype(d)>;
  // A(i, p) for i < R, p < kc of this block, times alpha.
  const auto a_at = [&](int i, int64_t p) {
    const int64_t row = i0 + i, col = p0 + p;
    return pr.alpha * (pr.a_transposed ? pr.a[col * pr.lda + row] : pr.a[row * pr.lda + col]);
  };
  float* c = pr.c + i0 * pr.ldc + j;
  const float* b = pr.b + p0 * pr.ldb + j;
  const float* bias = pr.bias ? pr.bias + j : nullptr;
  // The value C starts from at the first row of K: bias, C, both or 0.
  const auto start = [&](int i, int64_t x) {
    return (bias ? bias[x] : 0.f) + (pr.accumulate ? c[i * pr.ldc + x] : 0.f);
  };
  constexpr int64_t kRows = 8;
  int64_t p = 0;
  for (; p + kRows <= kc; p += kRows) {
    V av[R][kRows];
    for (int i = 0; i < R; ++i)
      for (int64_t q = 0; q < kRows; ++q) av[i][q] = hn::Set(d, a_at(i, p + q));
    const bool init = p0 == 0 && p == 0;
    int64_t x = 0;
    for (; x + L <= cols; x += L) {
      V acc[R];
      for (int i = 0; i < R; ++i) {
        if (!init) {
          acc[i] = hn::LoadU(d, c + i * pr.ldc + x);
          continue;
        }
        acc[i] = bias ? hn::LoadU(d, bias + x) : hn::Zero(d);
        if (pr.accumulate) acc[i] = hn::Add(acc[i], hn::LoadU(d, c + i * pr.ldc + x));
      }
      for (int64_t q = 0; q < kRows; ++q) {
        const V bq = hn::LoadU(d, b + (p + q) * pr.ldb + x);
        for (int i = 0; i < R; ++i) acc[i] = hn::MulAdd(av[i][q], bq, acc[i]);
      }
      for (int i = 0; i < R; ++i) hn::StoreU(acc[i], d, c + i * pr.ldc + x);
    }
    for (; x < cols; ++x)
      for (int i = 0; i < R; ++i) {
        float sum = init ? start(i, x) : c[i * pr.ldc + x];
        for (int64_t q = 0; q < kRows; ++q) sum += a_at(i, p + q) * b[(p + q) * pr.ldb + x];
        c[i * pr.ldc + x] = sum;
      }
  }
  for (; p < kc; ++p) {  // the last rows of the block, one at a time
    const bool init = p0 == 0 && p == 0;
    for (int i = 0; i < R; ++i) {
      const float ai = a_at(i, p);
      for (int64_t x = 0; x < cols; ++x) {
        const float prev = init ? start(i, x) : c[i * pr.ldc + x];
        c[i * pr.ldc + x] = prev + ai * b[p * pr.ldb + x];
      }
    }
  }
}

/// Rows [i0, i1) x columns [j0, j1) of C on the calling thread.
void GemmBlock(const Product& pr, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const hn::ScalableTag<float> d;
  const int64_t nr = 2 * static_cast<int64_t>(hn::Lanes(d));
  const int64_t m = i1 - i0;
  const float* bias = pr.bias;
  if (pr.b_packed) {  // B's panels as pack_b wrote them: nothing to copy
    const int64_t np = (pr.n + nr - 1) / nr * nr;  // columns of a packed block
    for (int64_t p0 = 0; p0 < pr.k; p0 += kKc) {
      const int64_t kc = std::min(kKc, pr.k - p0);
      const float* block = pr.b_packed + p0 * np;
      for (int64_t ic = i0; ic < i1; ic += kMc) {
        const int64_t mc = std::min(kMc, i1 - ic);
        const float* a = pr.a + ic * pr.lda + p0;
        int64_t lda = pr.lda;
        if (pr.a_transposed) {
          thread_local std::vector<float> rows;
          rows.resize(static_cast<size_t>(kKc * kMc));
          TransposeA(pr, ic, mc, p0, kc, rows.data());
          a = rows.data();
          lda = kc;
        }
        for (int64_t j = j0; j < j1; j += nr)
          PanelRows(pr, mc, kc, a, lda, block + j * kc, nr, pr.c + ic * pr.ldc + j, pr.ldc, std::min(nr, j1 - j),
                    p0 == 0, bias ? bias + j : nullptr);
      }
    }
    return;
  }
  if (m < kSmallRows && !pr.b_transposed) {  // B in place: a copy would be read at most twice
    constexpr int64_t kChunk = 512;             // columns of C per pass (kMr x 2 KiB in L1)
    for (int64_t i = i0; i < i1; i += kMr)
      for (int64_t j = j0; j < j1; j += kChunk)
        for (int64_t p0 = 0; p0 < pr.k; p0 += kKc) {
          const int64_t kc = std::min(kKc, pr.k - p0), cols = std::min(kChunk, j1 - j);
          switch (std::min(kMr, i1 - i)) {
            case 1: SmallRows<1>(pr, i, p0, kc, j, cols); break;
            case 2: SmallRows<2>(pr, i, p0, kc, j, cols); break;
            case 3: SmallRows<3>(pr, i, p0, kc, j, cols); break;
            case 4: SmallRows<4>(pr, i, p0, kc, j, cols); break;
            case 5: SmallRows<5>(pr, i, p0, kc, j, cols); break;
            default: SmallRows<6>(pr, i, p0, kc, j, cols); break;
          }
        }
    return;
  }
  thread_local std::vector<float> packed, packed_a;
  if (pr.a_transposed) packed_a.resize(static_cast<size_t>(kKc * kMc));
  packed.resize(static_cast<size_t>(kKc * (kNc + nr)));
  for (int64_t jc = j0; jc < j1; jc += kNc) {
    const int64_t nc = std::min(kNc, j1 - jc);
    for (int64_t p0 = 0; p0 < pr.k; p0 += kKc) {
      const int64_t kc = std::min(kKc, pr.k - p0);
      PackB(pr, p0, kc, jc, nc, nr, packed.data());
      for (int64_t ic = i0; ic < i1; ic += kMc) {  // A's block of kMc rows in L2, B's block in L2/L3
        const int64_t mc = std::min(kMc, i1 - ic);
        const float* a = pr.a + ic * pr.lda + p0;
        int64_t lda = pr.lda;
        if (pr.a_transposed) {
          TransposeA(pr, ic, mc, p0, kc, packed_a.data());
          a = packed_a.data();
          lda = kc;
        }
        for (int64_t q = 0; q * nr < nc; ++q) {
          const int64_t j = jc + q * nr;
          PanelRows(pr, mc, kc, a, lda, packed.data() + q * kc * nr, nr, pr.c + ic * pr.ldc + j, pr.ldc,
                    std::min(nr, nc - q * nr), p0 == 0, bias ? bias + j : nullptr);
        }
      }
    }
  }
}

/// pack_b's layout: block p0 of K at out + p0 * np, panel q of it at
/// + q * kc * NR (PackB's layout for all n columns).
void PackAllB(const Product& pr, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t nr = 2 * static_cast<int64_t>(hn::Lanes(d));
  const int64_t np = (pr.n + nr - 1) / nr * nr;
  for (int64_t p0 = 0; p0 < pr.k; p0 += kKc) PackB(pr, p0, std::min(kKc, pr.k - p0), 0, pr.n, nr, out + p0 * np);
}

/// Columns are split between threads in multiples of this.
int64_t PanelWidth() { return 2 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::gemm_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::gemm_simd {

HWY_EXPORT(GemmBlock);
HWY_EXPORT(PanelWidth);
HWY_EXPORT(PackAllB);

size_t packed_b_floats(int64_t k, int64_t n) {
  const int64_t nr = HWY_DYNAMIC_DISPATCH(PanelWidth)();
  return static_cast<size_t>(k * ((n + nr - 1) / nr * nr));
}

std::string packed_b_layout(const Product& p) {
  return "gec.gemm/" + std::to_string(HWY_DYNAMIC_DISPATCH(PanelWidth)()) + "x" + std::to_string(kKc) + "/" +
         std::to_string(p.k) + "x" + std::to_string(p.n) + (p.b_transposed ? "/from_transposed" : "");
}

void pack_b(const Product& p, float* out) {
  if (p.k > 0 && p.n > 0) HWY_DYNAMIC_DISPATCH(PackAllB)(p, out);
}

void gemm(const Product& p, int threads) {
  if (p.m <= 0 || p.n <= 0) return;
  if (p.k <= 0) {
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        float& out = p.c[i * p.ldc + j];
        out = (p.bias ? p.bias[j] : 0.f) + (p.accumulate ? out : 0.f);
      }
    return;
  }
  if (p.b_transposed && !p.b_packed && p.m <= dot_simd::kMaxRows && p.lda == p.k && p.ldb == p.k && !p.a_transposed &&
      p.alpha == 1.f && !p.accumulate) {
    // A few rows against B^T: dot products of rows, no copy of B.
    const int nt = threads > 1 && p.m * p.n * p.k >= (int64_t{1} << 18) ? threads : 1;
    if (p.bias)
      for (int64_t i = 0; i < p.m; ++i) std::memcpy(p.c + i * p.ldc, p.bias, static_cast<size_t>(p.n) * sizeof(float));
    parallel_for(nt, nt, [&](int64_t t) {
      const int64_t j0 = p.n * t / nt, j1 = p.n * (t + 1) / nt;
      dot_simd::dots_nt(p.m, j1 - j0, p.k, p.a, p.b + j0 * p.ldb, p.bias ? 1.f : 0.f, p.c + j0, p.ldc);
    });
    return;
  }
  const int64_t nr = HWY_DYNAMIC_DISPATCH(PanelWidth)();
  // One thread below ~1 MFLOP (a parallel region costs several microseconds).
  const int nt = threads > 1 && p.m * p.n * p.k >= (int64_t{1} << 19) ? threads : 1;
  const int64_t panels = (p.n + nr - 1) / nr;
  if (nt == 1) {
    HWY_DYNAMIC_DISPATCH(GemmBlock)(p, 0, p.m, 0, p.n);
  } else if (panels >= 4 * nt || p.m < 4 * kMr * nt) {  // columns: each thread packs only its part of B
    parallel_for(nt, nt, [&](int64_t t) {
      const int64_t j0 = std::min(p.n, panels * t / nt * nr), j1 = std::min(p.n, panels * (t + 1) / nt * nr);
      if (j0 < j1) HWY_DYNAMIC_DISPATCH(GemmBlock)(p, 0, p.m, j0, j1);
    });
  } else {  // rows, in multiples of kMr
    const int64_t blocks = (p.m + kMr - 1) / kMr;
    parallel_for(nt, nt, [&](int64_t t) {
      const int64_t i0 = std::min(p.m, blocks * t / nt * kMr), i1 = std::min(p.m, blocks * (t + 1) / nt * kMr);
      if (i0 < i1) HWY_DYNAMIC_DISPATCH(GemmBlock)(p, i0, i1, 0, p.n);
    });
  }
}

}  // namespace gec::kernels::cpu::gemm_simd
#endif  // HWY_ONCE
