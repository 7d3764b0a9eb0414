// Highway loop of the plain-layout (NCHW) depthwise convolution (conv.cc's
// native path), compiled per SIMD target and picked at run time like
// elementwise_simd.cc.
//
// One output plane of one channel: y[oh][ow] = bias + sum over the kernel
// taps (i, j) of k[i][j] * x[oh*sh + i - ph][ow*sw + j - pw], taps outside the
// input counting zero (ONNX Conv-11 with group = channels, dilation 1): bias,
// then one multiply-add per tap in (i, j) order.
// For strides 1 and 2 along W the plane is first copied with its rows
// zero-padded (rows above and below are skipped), then a vector of outputs
// keeps its sum in a register over all taps (stride 1: each tap a contiguous
// run of the padded row; stride 2: the even lanes of two vectors), one store
// per vector. A tap on a padding column adds k * 0: the same value as
// skipping it, but for the sign of a zero result (and a NaN where the weight
// is infinite, as zero-padding engines give). Other strides take one output
// at a time, skipping the taps outside the row. (The loop this replaced added
// each tap into the output row in memory, worked the tap bounds out with
// integer divisions per row and tap, and ran stride 2 one element at a time.)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/depthwise_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::depthwise_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void DepthwisePlane(const float* x, int64_t H, int64_t W, const float* k, int64_t kh, int64_t kw, int64_t sh,
                    int64_t sw, int64_t ph, int64_t pw, float bias, float* y, int64_t OH, int64_t OW) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (sw != 1 && sw != 2) {
    const hn::CappedTag<float, 1> d1;  // one lane, the same multiply-add as the vectors
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t i_lo = std::max<int64_t>(0, ph - oh * sh), i_hi = std::min<int64_t>(kh, H + ph - oh * sh);
      for (int64_t ow = 0; ow < OW; ++ow) {
        auto acc = hn::Set(d1, bias);
        for (int64_t i = i_lo; i < i_hi; ++i) {
          const float* xrow = x + (oh * sh + i - ph) * W;
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t iw = ow * sw + j - pw;
            if (iw >= 0 && iw < W) acc = hn::MulAdd(hn::Set(d1, k[i * kw + j]), hn::Set(d1, xrow[iw]), acc);
          }
        }
        y[oh * OW + ow] = hn::GetLane(acc);
      }
    }
    return;
  }
  // The plane with its rows zero-padded: pw zeros on the left, and on the
  // right as many as the last vector of outputs reads (OW rounded up to
  // whole vectors; stride 2 loads two vectors a tap).
  const int64_t vectors = (OW + lanes - 1) / lanes;
  const int64_t wp = std::max<int64_t>(pw + W, vectors * lanes * sw + kw);
  // Kept per thread up to 1 Mi floats (a 1000x1000 plane); larger planes
  // get a buffer of their own for this call.
  constexpr size_t kKeep = size_t{1} << 20;
  const size_t need = static_cast<size_t>(H * wp);
  thread_local std::vector<float> kept;
  std::vector<float> own;
  std::vector<float>& buf = need <= kKeep ? kept : own;
  if (buf.size() < need) buf.resize(need);
  float* const padded = buf.data();
  for (int64_t r = 0; r < H; ++r) {
    float* row = padded + r * wp;
    std::fill(row, row + pw, 0.f);
    std::copy(x + r * W, x + (r + 1) * W, row + pw);
    std::fill(row + pw + W, row + wp, 0.f);
  }
  HWY_ALIGN float out[HWY_MAX_BYTES / sizeof(float)];
  for (int64_t oh = 0; oh < OH; ++oh) {
    const int64_t i_lo = std::max<int64_t>(0, ph - oh * sh), i_hi = std::min<int64_t>(kh, H + ph - oh * sh);
    float* yrow = y + oh * OW;
    for (int64_t ow0 = 0; ow0 < OW; ow0 += lanes) {
      auto acc = hn::Set(d, bias);
      for (int64_t i = i_lo; i < i_hi; ++i) {
        const float* prow = padded + (oh * sh + i - ph) * wp + ow0 * sw;
        const float* krow = k + i * kw;
        for (int64_t j = 0; j < kw; ++j) {
          decltype(acc) v;
          if (sw == 1) {
            v = hn::LoadU(d, prow + j);
          } else {
#if HWY_TARGET == HWY_SCALAR
            v = hn::LoadU(d, prow + j);
#else
            v = hn::ConcatEven(d, hn::LoadU(d, prow + j + lanes), hn::LoadU(d, prow + j));  // p[0], p[2], ...
#endif
          }
          acc = hn::MulAdd(hn::Set(d, krow[j]), v, acc);
        }
      }
      const int64_t n = std::min(lanes, OW - ow0);
      if (n == lanes) {
        hn::StoreU(acc, d, yrow + ow0);
      } else {
        hn::Store(acc, d, out);
        std::copy(out, out + n, yrow + ow0);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::depthwise_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::depthwise_simd {

HWY_EXPORT(DepthwisePlane);

void depthwise_plane(const float* x, int64_t H, int64_t W, const float* k, int64_t kh, int64_t kw, int64_t sh,
                     int64_t sw, int64_t ph, int64_t pw, float bias, float* y, int64_t OH, int64_t OW) {
  HWY_DYNAMIC_DISPATCH(DepthwisePlane)(x, H, W, k, kh, kw, sh, sw, ph, pw, bias, y, OH, OW);
}

}  // namespace gec::kernels::cpu::depthwise_simd
#endif  // HWY_ONCE
