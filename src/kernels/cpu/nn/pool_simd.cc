// Highway loop of 2-D pooling on pixel vectors (pool_simd.h), compiled per
// SIMD target and picked at run time like depthwise_simd.cc.
//
// In nChw16c and nhwc a pixel's channels are contiguous, so one output
// pixel is a few vectors: each tap of the window inside X is one load and a
// max (or an add) per vector, with no gather and no transposition. Taps
// outside X are skipped, never loaded, so the padding needs no copy. Four
// pixels of a row whose windows lie inside X along W run together: four
// independent accumulators, so the loads rather than the max latency set
// the pace (one accumulator per pixel took 1.4-1.6x longer). In GoogLeNet
// and SqueezeNet oneDNN 2.6's JIT pooling on nChw16c took 1.1-1.2x longer
// (all MaxPools of a run, alternating profiles: 0.82 against 0.75 ms, 0.197
// against 0.167 ms).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/pool_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/cpu/nn/pool_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::pool_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {
/// kG output pixels `step` floats apart in X (`ostep` in Y) at once, their
/// vectors [c, c + lanes) (`valid` < lanes: a last partial vector, `m` its
/// lanes), over ni x nj taps `row` and `col` floats apart from `at`, X's
/// float offset of the first pixel's first tap inside X. kG independent
/// accumulators keep the max (or add) latency off the critical path.
template <bool kMax, int kG, class D, class M>
HWY_INLINE void pool_pixels(D d, M m, int64_t valid, const float* x, int64_t at, int64_t step, int64_t row,
                            int64_t col, int64_t ni, int64_t nj, float divisor, float* out, int64_t ostep) {
  static_assert(kG == 1 || kG == 4, "one or four pixels");
  using V = hn::Vec<D>;
  const bool whole = valid == static_cast<int64_t>(hn::Lanes(d));
  // A partial vector: no lane outside the pixel is read or written (the
  // next pixel may be another thread's, the last one ends the tensor). AVX2
  // and AVX-512 have masked loads and stores; the other targets' MaskedLoad
  // reads the whole vector (aligned on SSE4), so they go through a buffer.
  const auto load = [&](const float* p) {
    if (whole) return hn::LoadU(d, p);
#if HWY_TARGET <= HWY_AVX2
    return hn::MaskedLoad(m, d, p);
#else
    HWY_ALIGN float part[HWY_MAX_BYTES / sizeof(float)] = {};
    std::copy(p, p + valid, part);
    return hn::Load(d, part);
#endif
  };
  const auto put = [&](V r, float* o) {
    if (!kMax) r = divisor > 0 ? hn::Div(r, hn::Set(d, divisor)) : hn::Zero(d);
    if (whole) {
      hn::StoreU(r, d, o);
      return;
    }
#if HWY_TARGET <= HWY_AVX2
    hn::BlendedStore(r, m, d, o);
#else
    HWY_ALIGN float part[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(r, d, part);
    std::copy(part, part + valid, o);
#endif
  };
  // Named accumulators, not an array: GCC keeps an array of vectors on the
  // stack, which put a store and a reload on every tap's chain.
  const V init = kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  V a0 = init, a1 = init, a2 = init, a3 = init;
  const auto fold = [](V acc, V v) { return kMax ? hn::Max(acc, v) : hn::Add(acc, v); };
  for (int64_t i = 0; i < ni; ++i) {
    for (int64_t j = 0; j < nj; ++j) {
      const float* p = x + (at + i * row + j * col);
      a0 = fold(a0, load(p));
      if constexpr (kG == 4) {
        a1 = fold(a1, load(p + step));
        a2 = fold(a2, load(p + 2 * step));
        a3 = fold(a3, load(p + 3 * step));
      }
    }
  }
  put(a0, out);
  if constexpr (kG == 4) {
    put(a1, out + ostep);
    put(a2, out + 2 * ostep);
    put(a3, out + 3 * ostep);
  }
  (void)m;
}

/// All P floats of kG output pixels, `ostep` floats apart in Y (see
/// pool_pixels).
template <bool kMax, int kG, class D, class M>
HWY_INLINE void pool_all_lanes(D d, M tail, int64_t lanes, int64_t whole, int64_t P, int64_t ostep, const float* x,
                               int64_t at, int64_t step, int64_t row, int64_t col, int64_t ni, int64_t nj,
                               float divisor, float* out) {
  for (int64_t c = 0; c < whole; c += lanes)
    pool_pixels<kMax, kG>(d, tail, lanes, x + c, at, step, row, col, ni, nj, divisor, out + c, ostep);
  if (whole < P)
    pool_pixels<kMax, kG>(d, tail, P - whole, x + whole, at, step, row, col, ni, nj, divisor, out + whole, ostep);
}

/// One window along one dim: its taps inside X are [lo, lo + n), and an
/// average divides by `counted` cells (those inside [-pad_begin, in +
/// pad_end) with count_include_pad, else the n inside X).
struct DimTaps {
  int64_t lo, n, counted;
};
DimTaps dim_taps(int64_t start, int64_t k, int64_t dil, int64_t in, int64_t pad_begin, int64_t pad_end,
                 bool include_pad) {
  int64_t lo, hi;
  taps_inside(start, k, dil, 0, in, lo, hi);
  if (!include_pad) return {lo, hi - lo, hi - lo};
  int64_t c_lo, c_hi;
  taps_inside(start, k, dil, -pad_begin, in + pad_end, c_lo, c_hi);
  return {lo, hi - lo, c_hi - c_lo};
}

template <bool kMax>
void pool_rows_of(const float* x, float* y, const Window& w, int64_t oh0, int64_t oh1) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t P = w.P, whole = P / lanes * lanes;
  const auto tail = hn::FirstN(d, static_cast<size_t>(P - whole));
  // floats per input row, tap column, output pixel's window step
  const int64_t x_pix = w.x_pix > 0 ? w.x_pix : P, y_pix = w.y_pix > 0 ? w.y_pix : P;
  const int64_t row = w.W * x_pix, col = w.dw * x_pix, step = w.sw * x_pix;
  // Output columns [ow_a, ow_b) have every tap inside X along W.
  const int64_t ow_a = std::min<int64_t>(w.OW, (w.pw + w.sw - 1) / w.sw);
  const int64_t reach = w.W - 1 + w.pw - (w.kw - 1) * w.dw;
  const int64_t ow_b = reach < 0 ? ow_a : std::max(ow_a, std::min<int64_t>(w.OW, reach / w.sw + 1));
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const int64_t ih0 = oh * w.sh - w.ph;
    const DimTaps r = dim_taps(ih0, w.kh, w.dh, w.H, w.ph, w.eh, w.count_include_pad);
    const int64_t top = (ih0 + r.lo * w.dh) * row;  // the window's first row inside X
    float* yrow = y + oh * w.OW * y_pix;
    for (int64_t ow = 0; ow < w.OW;) {
      const int64_t iw0 = ow * w.sw - w.pw;
      if (ow >= ow_a && ow + 4 <= ow_b) {  // four windows wholly inside X along W
        const float divisor = static_cast<float>(r.counted * w.kw);
        pool_all_lanes<kMax, 4>(d, tail, lanes, whole, P, y_pix, x, top + iw0 * x_pix, step, row * w.dh, col,
                                r.n, w.kw, divisor, yrow + ow * y_pix);
        ow += 4;
        continue;
      }
      const DimTaps c = dim_taps(iw0, w.kw, w.dw, w.W, w.pw, w.ew, w.count_include_pad);
      const float divisor = static_cast<float>(r.counted * c.counted);
      pool_all_lanes<kMax, 1>(d, tail, lanes, whole, P, y_pix, x, top + (iw0 + c.lo * w.dw) * x_pix, step,
                              row * w.dh, col, r.n, c.n, divisor, yrow + ow * y_pix);
      ++ow;
    }
  }
}
}  // namespace

void PoolRows(const float* x, float* y, const Window& w, int64_t oh0, int64_t oh1) {
  if (w.is_max)
    pool_rows_of<true>(x, y, w, oh0, oh1);
  else
    pool_rows_of<false>(x, y, w, oh0, oh1);
}

void SumRows(const float* x, int64_t count, int64_t row, int64_t lanes, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  // Four vectors of lanes at a time: four independent add chains per row.
  for (; j + 4 * L <= lanes; j += 4 * L) {
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    const float* p = x + j;
    for (int64_t s = 0; s < count; ++s, p += row) {
      a0 = hn::Add(a0, hn::LoadU(d, p));
      a1 = hn::Add(a1, hn::LoadU(d, p + L));
      a2 = hn::Add(a2, hn::LoadU(d, p + 2 * L));
      a3 = hn::Add(a3, hn::LoadU(d, p + 3 * L));
    }
    hn::StoreU(a0, d, out + j);
    hn::StoreU(a1, d, out + j + L);
    hn::StoreU(a2, d, out + j + 2 * L);
    hn::StoreU(a3, d, out + j + 3 * L);
  }
  for (; j + L <= lanes; j += L) {
    auto a0 = hn::Zero(d);
    const float* p = x + j;
    for (int64_t s = 0; s < count; ++s, p += row) a0 = hn::Add(a0, hn::LoadU(d, p));
    hn::StoreU(a0, d, out + j);
  }
  const hn::CappedTag<float, 8> d8;  // 8 lanes left over (nhwc C = 72, 120, ...): a narrower vector
  if (static_cast<int64_t>(hn::Lanes(d8)) < L && j + 8 <= lanes) {
    auto a0 = hn::Zero(d8);
    const float* p = x + j;
    for (int64_t s = 0; s < count; ++s, p += row) a0 = hn::Add(a0, hn::LoadU(d8, p));
    hn::StoreU(a0, d8, out + j);
    j += 8;
  }
  for (; j < lanes; ++j) {  // fewer lanes than a vector: one scalar chain each
    float a = 0.f;
    for (int64_t s = 0; s < count; ++s) a += x[s * row + j];
    out[j] = a;
  }
}

float Sum(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    a0 = hn::Add(a0, hn::LoadU(d, x + i));
    a1 = hn::Add(a1, hn::LoadU(d, x + i + L));
    a2 = hn::Add(a2, hn::LoadU(d, x + i + 2 * L));
    a3 = hn::Add(a3, hn::LoadU(d, x + i + 3 * L));
  }
  for (; i + L <= n; i += L) a0 = hn::Add(a0, hn::LoadU(d, x + i));
  float tail = 0.f;
  for (; i < n; ++i) tail += x[i];
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)))) + tail;
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::pool_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::pool_simd {

HWY_EXPORT(PoolRows);
HWY_EXPORT(SumRows);
HWY_EXPORT(Sum);

void pool_rows(const float* x, float* y, const Window& w, int64_t oh0, int64_t oh1) {
  HWY_DYNAMIC_DISPATCH(PoolRows)(x, y, w, oh0, oh1);
}

void sum_rows(const float* x, int64_t count, int64_t row, int64_t lanes, float* out) {
  HWY_DYNAMIC_DISPATCH(SumRows)(x, count, row, lanes, out);
}

float sum(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(Sum)(x, n); }

}  // namespace gec::kernels::cpu::pool_simd
#endif  // HWY_ONCE
