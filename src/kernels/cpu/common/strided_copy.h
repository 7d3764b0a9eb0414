// The one copy engine behind the data-movement kernels: copy a strided view
// of an input into a dense row-major output. Transpose (permuted strides),
// Slice (start offset, strides times steps), Expand and Tile (stride 0 on
// broadcast dims) and DepthToSpace all become one strided_copy call.
//
// The engine first drops size-1 dims and merges dims that are contiguous in
// both input and output, so common cases collapse to a few long runs:
// stride 1 innermost -> std::copy_n (memmove for trivial types), stride 0 ->
// std::fill_n, otherwise a 2-D tiled copy when some other dim has input
// stride 1 (batched transposes such as NCHW<->NHWC), else a strided loop.
// Big copies are split over OpenMP threads by output rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gec/tensor.h"
#include "kernels/cpu/common/transpose_simd.h"

namespace gec::kernels::cpu {

/// Copies below this many elements stay on one thread.
constexpr int64_t kParallelMinWork = 32 * 1024;
/// Copies of whole contiguous runs (memmove per row, runs of 16 or more
/// elements) below this many elements stay on one thread: the parallel
/// region and the other core's share of the data cost more than the copy.
/// Measured here, [S, 768] -> [S, 256] Slices (the work is S x 256 floats),
/// one thread against two: 32 Ki 2.6-2.8 us against 2.6-7.8, 64 Ki
/// 4.8-6.3 against 6.0-8.2, 128 Ki 11-12 against 9 (two threads ahead).
constexpr int64_t kParallelMinRunCopy = 128 * 1024;

/// Calls f(begin, end) over [0, n) split into contiguous chunks, one per
/// thread when `work` (elements touched) is large enough. f must not throw.
template <typename F>
void parallel_chunks(int64_t n, int64_t work, int threads, F&& f) {
  const int64_t nt = (work >= kParallelMinWork && threads > 1) ? std::min<int64_t>(threads, n) : 1;
  if (nt <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(nt)) schedule(static)
  for (int64_t t = 0; t < nt; ++t) f(n * t / nt, n * (t + 1) / nt);
}

/// Row-major element strides of a dense shape.
inline std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

namespace detail {

/// Drops size-1 dims and merges neighbours k, k+1 whose input strides chain
/// (stride[k] == stride[k+1] * dims[k+1]); output strides always chain.
inline void simplify(std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  std::vector<int64_t> d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = strides[i];
    } else {
      d.push_back(dims[i]);
      s.push_back(strides[i]);
    }
  }
  dims.swap(d);
  strides.swap(s);
}

/// Odometer over `dims` (row-major) starting at linear index `begin`,
/// tracking the offset sum(idx[k] * strides[k]).
struct Odometer {
  std::vector<int64_t> dims, strides, idx;
  int64_t off = 0;
  Odometer(const std::vector<int64_t>& d, const std::vector<int64_t>& s, int64_t begin)
      : dims(d), strides(s), idx(d.size(), 0) {
    for (size_t k = dims.size(); k-- > 0;) {
      idx[k] = begin % dims[k];
      begin /= dims[k];
      off += idx[k] * strides[k];
    }
  }
  void next() {
    for (size_t k = dims.size(); k-- > 0;) {
      off += strides[k];
      if (++idx[k] < dims[k]) return;
      off -= strides[k] * dims[k];
      idx[k] = 0;
    }
  }
};

/// out (rows x cols, dense) = in with in(r, c) at in[r*rs + c*cs]; tiled so
/// both sides stay in cache. rs == 1 is the transposing case.
template <typename T>
void tiled_2d_elements(const T* in, T* out, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        const T* src = in + r * rs;
        T* dst = out + r * cols;
        for (int64_t c = c0; c < c1; ++c) dst[c] = src[c * cs];
      }
    }
  }
}

/// tiled_2d_elements, with the transposing case (rs == 1) of 4-byte elements
/// in 8 x 8 register blocks where the CPU has them (transpose_simd.h).
template <typename T>
void tiled_2d(const T* in, T* out, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if constexpr (sizeof(T) == 4 && alignof(T) >= alignof(uint32_t)) {
    if (rs == 1) {
      transpose_simd::transpose32(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out), rows,
                                  cols, cs);
      return;
    }
  }
  tiled_2d_elements(in, out, rows, cols, rs, cs);
}

}  // namespace detail

/// out[dense index of i] = base[sum_k i_k * strides[k]] for every index i of
/// `dims` (element strides, any sign, 0 for broadcast). `out` must hold
/// numel(dims) elements and must not overlap the input.
template <typename T>
void strided_copy(const T* base, T* out, std::vector<int64_t> dims, std::vector<int64_t> strides,
                  int threads) {
  for (int64_t d : dims)
    if (d == 0) return;
  const int64_t total = shape_numel(dims);
  detail::simplify(dims, strides);
  const size_t r = dims.size();
  if (r == 0) {
    out[0] = base[0];
    return;
  }
  const int64_t inner = dims[r - 1], is = strides[r - 1];
  // Batched 2-D transpose: the dim before the last has input stride 1
  // (NCHW<->NHWC, [.., M, N] -> [.., N, M]); copy it in cache-sized tiles.
  if (r >= 2 && is != 1 && is != 0 && strides[r - 2] == 1 && dims[r - 2] >= 4) {
    const int64_t rows = dims[r - 2];
    std::vector<int64_t> bd(dims.begin(), dims.end() - 2), bs(strides.begin(), strides.end() - 2);
    // Work items are (batch, block of 64 rows) so a single big matrix also
    // spreads over threads.
    constexpr int64_t kRowBlock = 64;
    const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
    parallel_chunks(shape_numel(bd) * blocks, total, threads, [&](int64_t b, int64_t e) {
      detail::Odometer it(bd, bs, b / blocks);
      for (int64_t w = b; w < e; ++w) {
        const int64_t batch = w / blocks, r0 = (w % blocks) * kRowBlock;
        if (w != b && w % blocks == 0) it.next();
        const int64_t nr = std::min(kRowBlock, rows - r0);
        detail::tiled_2d(base + it.off + r0, out + (batch * rows + r0) * inner, nr, inner, 1, is);
      }
    });
    return;
  }
  std::vector<int64_t> od(dims.begin(), dims.end() - 1), os(strides.begin(), strides.end() - 1);
  const int64_t nrows = shape_numel(od);
  // Contiguous runs below kParallelMinRunCopy: counted as less work.
  const int64_t work = is == 1 && inner >= 16 && total < kParallelMinRunCopy ? 0 : total;
  parallel_chunks(nrows, work, threads, [&](int64_t b, int64_t e) {
    detail::Odometer it(od, os, b);
    T* dst = out + b * inner;
    for (int64_t row = b; row < e; ++row, it.next(), dst += inner) {
      const T* src = base + it.off;
      if (is == 1) std::copy_n(src, inner, dst);
      else if (is == 0) std::fill_n(dst, inner, *src);
      else
        for (int64_t c = 0; c < inner; ++c) dst[c] = src[c * is];
    }
  });
}

}  // namespace gec::kernels::cpu
