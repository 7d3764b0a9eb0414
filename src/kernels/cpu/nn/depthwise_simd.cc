// Highway loop of the plain-layout (NCHW) depthwise convolution (conv.cc's
// native path), compiled per SIMD target and picked at run time like
// elementwise_simd.cc.
//
// One output plane of one channel: y[oh][ow] = bias + sum over the kernel
// taps (i, j) of k[i][j] * x[oh*sh + i - ph][ow*sw + j - pw], taps outside the
// input counting zero (ONNX Conv-11 with group = channels, dilation 1).
// For stride 1 along W every tap is a contiguous run of the input row, so
// each tap adds a shifted input row into the output row a vector at a time;
// other strides take the scalar loop.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/depthwise_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::depthwise_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void DepthwisePlane(const float* x, int64_t H, int64_t W, const float* k, int64_t kh, int64_t kw, int64_t sh,
                    int64_t sw, int64_t ph, int64_t pw, float bias, float* y, int64_t OH, int64_t OW) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t oh = 0; oh < OH; ++oh) {
    float* yrow = y + oh * OW;
    std::fill(yrow, yrow + OW, bias);
    for (int64_t i = 0; i < kh; ++i) {
      const int64_t ih = oh * sh + i - ph;
      if (ih < 0 || ih >= H) continue;
      const float* xrow = x + ih * W;
      for (int64_t j = 0; j < kw; ++j) {
        const float kv = k[i * kw + j];
        // Outputs whose tap lands inside the row: 0 <= ow*sw + j - pw < W.
        if (W - 1 - j + pw < 0) continue;  // the tap is right of the row for every output
        const int64_t lo = std::max<int64_t>(0, (pw - j + sw - 1) / sw);
        const int64_t hi = std::min<int64_t>(OW, (W - 1 - j + pw) / sw + 1);
        if (lo >= hi) continue;
        if (sw == 1) {
          const float* src = xrow + j - pw;
          const auto vk = hn::Set(d, kv);
          int64_t ow = lo;
          for (; ow + lanes <= hi; ow += lanes)
            hn::StoreU(hn::MulAdd(vk, hn::LoadU(d, src + ow), hn::LoadU(d, yrow + ow)), d, yrow + ow);
          for (; ow < hi; ++ow) yrow[ow] += kv * src[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) yrow[ow] += kv * xrow[ow * sw + j - pw];
        }
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
