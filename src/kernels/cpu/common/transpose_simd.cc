// Highway loop of transpose_simd.h, compiled per SIMD target and picked at
// run time like elementwise_simd.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/common/transpose_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>

#include "kernels/cpu/common/strided_copy.h"
#include "kernels/cpu/common/transpose_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::transpose_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET <= HWY_AVX2
/// An 8 x 8 block: a[i] = in[i * cs .. + 8) (8 input rows), out[j * cols +
/// i] = a[i][j]; the unpack / 64-bit unpack / 128-bit concat sequence, 24
/// shuffles for 64 elements.
HWY_INLINE void Block8x8(const uint32_t* in, int64_t cs, uint32_t* out, int64_t cols) {
  const hn::FixedTag<uint32_t, 8> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  using V = hn::Vec<decltype(d)>;
  V a[8];
  for (int i = 0; i < 8; ++i) a[i] = hn::LoadU(d, in + i * cs);
  V t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = hn::InterleaveLower(d, a[2 * i], a[2 * i + 1]);      // columns 0 1 | 4 5 of rows 2i, 2i+1
    t[2 * i + 1] = hn::InterleaveUpper(d, a[2 * i], a[2 * i + 1]);  // columns 2 3 | 6 7
  }
  const auto lo64 = [&](V x, V y) { return hn::BitCast(d, hn::InterleaveLower(d64, hn::BitCast(d64, x), hn::BitCast(d64, y))); };
  const auto hi64 = [&](V x, V y) { return hn::BitCast(d, hn::InterleaveUpper(d64, hn::BitCast(d64, x), hn::BitCast(d64, y))); };
  // u[k]: column k | k + 4 of rows 0-3 (k < 4) or rows 4-7 (k >= 4).
  const V u0 = lo64(t[0], t[2]), u1 = hi64(t[0], t[2]), u2 = lo64(t[1], t[3]), u3 = hi64(t[1], t[3]);
  const V u4 = lo64(t[4], t[6]), u5 = hi64(t[4], t[6]), u6 = lo64(t[5], t[7]), u7 = hi64(t[5], t[7]);
  hn::StoreU(hn::ConcatLowerLower(d, u4, u0), d, out + 0 * cols);
  hn::StoreU(hn::ConcatLowerLower(d, u5, u1), d, out + 1 * cols);
  hn::StoreU(hn::ConcatLowerLower(d, u6, u2), d, out + 2 * cols);
  hn::StoreU(hn::ConcatLowerLower(d, u7, u3), d, out + 3 * cols);
  hn::StoreU(hn::ConcatUpperUpper(d, u4, u0), d, out + 4 * cols);
  hn::StoreU(hn::ConcatUpperUpper(d, u5, u1), d, out + 5 * cols);
  hn::StoreU(hn::ConcatUpperUpper(d, u6, u2), d, out + 6 * cols);
  hn::StoreU(hn::ConcatUpperUpper(d, u7, u3), d, out + 7 * cols);
}
#endif

void Transpose32(const uint32_t* in, uint32_t* out, int64_t rows, int64_t cols, int64_t cs) {
#if HWY_TARGET <= HWY_AVX2
  const int64_t r8 = rows / 8 * 8, c8 = cols / 8 * 8;
  for (int64_t c = 0; c < c8; c += 8)
    for (int64_t r = 0; r < r8; r += 8) Block8x8(in + r + c * cs, cs, out + r * cols + c, cols);
  // The edges: fewer than 8 columns of the first r8 rows, then fewer than 8 rows.
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < r8 ? c8 : 0; c < cols; ++c) out[r * cols + c] = in[r + c * cs];
#else
  // Targets without 256-bit vectors: strided_copy.h's 16 x 16 tiles.
  detail::tiled_2d_elements(in, out, rows, cols, 1, cs);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::transpose_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::transpose_simd {

HWY_EXPORT(Transpose32);

void transpose32(const uint32_t* in, uint32_t* out, int64_t rows, int64_t cols, int64_t cs) {
  HWY_DYNAMIC_DISPATCH(Transpose32)(in, out, rows, cols, cs);
}

}  // namespace gec::kernels::cpu::transpose_simd
#endif  // HWY_ONCE
