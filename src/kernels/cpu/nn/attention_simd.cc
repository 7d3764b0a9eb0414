// Highway loops of the scaled dot-product attention kernel (attention.cc),
// compiled per SIMD target and picked at run time like elementwise_simd.cc.
//
// One block of query rows of one (batch, head):
//   ScoresBlock:  s[r][t] = scale * sum_d q[r][d] * kt[d][t]     (kt = K^T, [D, T] rows)
//   SoftmaxRows:  s[r][:] = softmax(s[r][:]) in place; a row holding a NaN
//                 or all -inf (every key masked) gives NaN, as Softmax does
//   OutputBlock:  o[r][e] = sum_t p[r][t] * v[t][e]                (v [T, Dv] rows)
// Vectors run along T (scores) and along Dv (output), both contiguous.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/attention_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/common/exp_poly-inl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::attention_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Register tiles: NR rows x NV vectors of accumulators, each vector loaded
// from B shared by NR rows, each broadcast of A by NV vectors. With 4 x 4
// on AVX-512 (16 of its 32 registers) a step of k loads 8 operands for 16
// FMAs, so the FMA units, not the loads, set the pace; targets with 16
// registers take 6 x 2 (12 accumulators, 2 vectors of B, a broadcast: the
// 4 x 2 tile before left the FMA latency uncovered; with the exponential
// below, a Whisper-like layer's 6 heads of 1500 x 1500 on AVX2, 2 threads,
// alternating builds: 29.8-31.3 -> 27.0-28.2 ms). Rows short of a tile go
// two at a time, then one. Against the 4 x 2 (scores) and 8 x 1 (output) tiles
// before, measured here on 2 threads (three alternating profiles): the
// attention nodes of bert_like_encoder 0.33-0.35 -> 0.31 ms per run, of
// ViT-B/16 9.7-10.2 -> 8.4-8.8 ms, of a Whisper-like encoder (1500
// frames) 69-73 -> 50-63 ms.
#if HWY_TARGET <= HWY_AVX3
constexpr int kTileVectors = 4;
constexpr int kTileRows = 4;
#else
constexpr int kTileVectors = 2;
constexpr int kTileRows = 6;
#endif

/// Both products' register tile: for NR rows r and the NV vectors of columns
/// [col, col + NV*lanes),
///   c[r][col ..] = scale * ((accumulate ? c[r][col ..] : 0) + sum_k a[r][k] * b[k][col ..])
/// with a's rows lda floats apart (its elements broadcast), b's and c's rows
/// ldb and ldc apart. Scores: a = Q, b = K^T, scale; output: a = P, b = V,
/// scale 1 (no multiply), accumulating over key chunks.
template <int NR, int NV, class D>
HWY_INLINE void ProductTile(D d, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                            int64_t K, int64_t col, float scale, bool accumulate) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V acc[NR][NV];
  HWY_UNROLL(8)
  for (int r = 0; r < NR; ++r) {
    HWY_UNROLL(8)
    for (int j = 0; j < NV; ++j) acc[r][j] = accumulate ? hn::LoadU(d, c + r * ldc + col + j * lanes) : hn::Zero(d);
  }
  for (int64_t k = 0; k < K; ++k) {
    const float* br = b + k * ldb + col;
    V bv[NV];
    HWY_UNROLL(8)
    for (int j = 0; j < NV; ++j) bv[j] = hn::LoadU(d, br + j * lanes);
    HWY_UNROLL(8)
    for (int r = 0; r < NR; ++r) {
      const V x = hn::Set(d, a[r * lda + k]);
      HWY_UNROLL(8)
      for (int j = 0; j < NV; ++j) acc[r][j] = hn::MulAdd(x, bv[j], acc[r][j]);
    }
  }
  const V sc = hn::Set(d, scale);
  HWY_UNROLL(8)
  for (int r = 0; r < NR; ++r) {
    HWY_UNROLL(8)
    for (int j = 0; j < NV; ++j)
      hn::StoreU(scale != 1.f ? hn::Mul(acc[r][j], sc) : acc[r][j], d, c + r * ldc + col + j * lanes);
  }
}

/// The last n < lanes columns [col, col + n) of ProductTile's product for
/// `rows` rows: b's n columns copied once into a zero-padded buffer of K
/// rows of one vector, the tiles run on it into a buffer of one vector per
/// row, and n floats of each row copied to c (with accumulate, c's n floats
/// copied in first). Scalar loops per column ran each column as one chain
/// of dependent multiply-adds: with T = 99 keys and 36-float heads (a
/// Conformer block) the 3 score and 4 output tail columns took about 30
/// times the vector columns' time (attention 0.101 -> 0.068 ms per node).
HWY_INLINE void ProductTailColumns(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                                   int64_t rows, int64_t K, int64_t col, int64_t n, float scale, bool accumulate) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  thread_local std::vector<float> tail;
  tail.assign(static_cast<size_t>(std::max<int64_t>(K, 1) * lanes), 0.f);
  for (int64_t k = 0; k < K; ++k) std::copy(b + k * ldb + col, b + k * ldb + col + n, tail.data() + k * lanes);
  HWY_ALIGN float out[kTileRows * HWY_MAX_BYTES / sizeof(float)];
  for (int64_t r = 0; r < rows;) {
    const int64_t nr = rows - r >= kTileRows ? kTileRows : 1;
    for (int64_t i = 0; i < nr; ++i) {
      std::fill(out + i * lanes, out + (i + 1) * lanes, 0.f);
      if (accumulate) std::copy(c + (r + i) * ldc + col, c + (r + i) * ldc + col + n, out + i * lanes);
    }
    if (nr == kTileRows)
      ProductTile<kTileRows, 1>(d, a + r * lda, lda, tail.data(), lanes, out, lanes, K, 0, scale, accumulate);
    else
      ProductTile<1, 1>(d, a + r * lda, lda, tail.data(), lanes, out, lanes, K, 0, scale, accumulate);
    for (int64_t i = 0; i < nr; ++i) std::copy(out + i * lanes, out + i * lanes + n, c + (r + i) * ldc + col);
    r += nr;
  }
}

/// Columns [t, t + NV*lanes) of the block's scores, kTileRows rows at a
/// time: the K^T tile (D x NV vectors) stays in L1 across the row groups.
template <int NV>
HWY_INLINE void ScoresColumns(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds,
                              int64_t rows, int64_t K, int64_t t, float scale) {
  const hn::ScalableTag<float> d;
  int64_t r = 0;
  for (; r + kTileRows <= rows; r += kTileRows)
    ProductTile<kTileRows, NV>(d, q + r * ldq, ldq, kt, ldk, s + r * lds, lds, K, t, scale, false);
  if (kTileRows > 2)
    for (; r + 2 <= rows; r += 2) ProductTile<2, NV>(d, q + r * ldq, ldq, kt, ldk, s + r * lds, lds, K, t, scale, false);
  for (; r < rows; ++r) ProductTile<1, NV>(d, q + r * ldq, ldq, kt, ldk, s + r * lds, lds, K, t, scale, false);
}

void ScoresBlock(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds, int64_t rows,
                 int64_t D, int64_t T, float scale) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t t = 0;
  for (; t + kTileVectors * lanes <= T; t += kTileVectors * lanes)
    ScoresColumns<kTileVectors>(q, ldq, kt, ldk, s, lds, rows, D, t, scale);
  if (kTileVectors > 2)
    for (; t + 2 * lanes <= T; t += 2 * lanes) ScoresColumns<2>(q, ldq, kt, ldk, s, lds, rows, D, t, scale);
  for (; t + lanes <= T; t += lanes) ScoresColumns<1>(q, ldq, kt, ldk, s, lds, rows, D, t, scale);
  if (t < T) ProductTailColumns(q, ldq, kt, ldk, s, lds, rows, D, t, T - t, scale, false);
}

/// e^x for x <= 0 (not NaN), the softmax's max-shifted scores (-inf, a
/// masked key, gives 0): exp_poly-inl.h's polynomial; below -87 (e^x under
/// 1.7e-38, near float's smallest normal) 0. The softmax of a Whisper-like
/// encoder's 1500 x 1500 scores took a quarter of its attention's time on
/// Highway's Exp.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpNonPositive(D d, V x) {
  const V lowest = hn::Set(d, -exp_poly::HWY_NAMESPACE::kExpPolyLimit);
  return hn::IfThenZeroElse(hn::Lt(x, lowest), exp_poly::HWY_NAMESPACE::ExpPoly(d, hn::Max(x, lowest)));
}

void SoftmaxRows(float* s, int64_t lds, int64_t rows, int64_t T) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    float* x = s + r * lds;
    // The row's max, and whether it holds a NaN (a NaN wins), a vector at a time.
    auto vm = hn::Set(d, -std::numeric_limits<float>::infinity());
    auto vnan = hn::Zero(d);
    int64_t i = 0;
    for (; i + lanes <= T; i += lanes) {
      const auto v = hn::LoadU(d, x + i);
      vm = hn::Max(vm, v);
      vnan = hn::IfThenElse(hn::IsNaN(v), hn::Set(d, 1.f), vnan);
    }
    float mx = hn::GetLane(hn::MaxOfLanes(d, vm));
    bool nan = hn::GetLane(hn::MaxOfLanes(d, vnan)) > 0.f;
    for (; i < T; ++i) {
      nan = nan || x[i] != x[i];
      mx = x[i] > mx ? x[i] : mx;
    }
    if (nan) mx = std::numeric_limits<float>::quiet_NaN();
    // A NaN score, a score of +inf (inf - inf), or every key masked (-inf -
    // -inf): NaN, as the unfused Softmax.
    if (!(std::fabs(mx) < std::numeric_limits<float>::infinity())) {
      std::fill(x, x + T, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const auto vmax = hn::Set(d, mx);
    auto vsum = hn::Zero(d);
    int64_t t = 0;
    for (; t + lanes <= T; t += lanes) {
      const auto e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + t), vmax));
      hn::StoreU(e, d, x + t);
      vsum = hn::Add(vsum, e);
    }
    float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
    if (t < T) {
      HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
      for (int64_t j = 0; j < lanes; ++j) buf[j] = t + j < T ? x[t + j] - mx : -std::numeric_limits<float>::infinity();
      hn::Store(ExpNonPositive(d, hn::Load(d, buf)), d, buf);
      for (int64_t j = t; j < T; ++j) {
        x[j] = buf[j - t];
        sum += x[j];
      }
    }
    const auto inv = hn::Set(d, 1.f / sum);
    t = 0;
    for (; t + lanes <= T; t += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, x + t), inv), d, x + t);
    for (; t < T; ++t) x[t] *= 1.f / sum;
  }
}

/// NR output rows over T keys: tiles of kTileVectors, then 2 and 1 vectors
/// along Dv, then the columns short of a vector (ProductTailColumns).
template <int NR>
HWY_INLINE void OutputRows(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t T,
                           int64_t Dv, bool accumulate) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t e = 0;
  for (; e + kTileVectors * lanes <= Dv; e += kTileVectors * lanes)
    ProductTile<NR, kTileVectors>(d, p, ldp, v, ldv, o, ldo, T, e, 1.f, accumulate);
  if (kTileVectors > 2)
    for (; e + 2 * lanes <= Dv; e += 2 * lanes) ProductTile<NR, 2>(d, p, ldp, v, ldv, o, ldo, T, e, 1.f, accumulate);
  for (; e + lanes <= Dv; e += lanes) ProductTile<NR, 1>(d, p, ldp, v, ldv, o, ldo, T, e, 1.f, accumulate);
}

/// The block's output in chunks of keys whose V rows (chunk x Dv floats:
/// 32 KiB for Dv <= 512, 16 keys above) stay in L1 while every row group
/// reads them; each row's
/// sums are stored between chunks (in the order t = 0, 1, ... as before).
void OutputBlock(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t rows,
                 int64_t T, int64_t Dv) {
  const int64_t chunk = std::max<int64_t>(16, 8192 / std::max<int64_t>(Dv, 1));
  for (int64_t t0 = 0; t0 < T || t0 == 0; t0 += chunk) {
    const int64_t n = std::min(chunk, T - t0);
    const bool accumulate = t0 > 0;
    int64_t r = 0;
    for (; r + kTileRows <= rows; r += kTileRows)
      OutputRows<kTileRows>(p + r * ldp + t0, ldp, v + t0 * ldv, ldv, o + r * ldo, ldo, n, Dv, accumulate);
    if (kTileRows > 2)
      for (; r + 2 <= rows; r += 2)
        OutputRows<2>(p + r * ldp + t0, ldp, v + t0 * ldv, ldv, o + r * ldo, ldo, n, Dv, accumulate);
    for (; r < rows; ++r) OutputRows<1>(p + r * ldp + t0, ldp, v + t0 * ldv, ldv, o + r * ldo, ldo, n, Dv, accumulate);
    // Dv's last columns short of a vector: once for all rows of the chunk.
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
    const int64_t whole = Dv / lanes * lanes;
    if (whole < Dv)
      ProductTailColumns(p + t0, ldp, v + t0 * ldv, ldv, o, ldo, rows, n, whole, Dv - whole, 1.f, accumulate);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::attention_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::attention_simd {

HWY_EXPORT(ScoresBlock);
HWY_EXPORT(SoftmaxRows);
HWY_EXPORT(OutputBlock);

void scores_block(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds, int64_t rows,
                  int64_t D, int64_t T, float scale) {
  HWY_DYNAMIC_DISPATCH(ScoresBlock)(q, ldq, kt, ldk, s, lds, rows, D, T, scale);
}
void softmax_rows(float* s, int64_t lds, int64_t rows, int64_t T) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRows)(s, lds, rows, T);
}
void output_block(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t rows,
                  int64_t T, int64_t Dv) {
  HWY_DYNAMIC_DISPATCH(OutputBlock)(p, ldp, v, ldv, o, ldo, rows, T, Dv);
}

}  // namespace gec::kernels::cpu::attention_simd
#endif  // HWY_ONCE
