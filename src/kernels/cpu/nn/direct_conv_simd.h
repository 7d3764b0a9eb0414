// The native direct convolution's vector loops (direct_conv_simd.cc), used by
// conv.cc's "direct" variant.
#pragma once

#include <cstdint>

#include "kernels/cpu/elementwise/elementwise_simd.h"

namespace gec::kernels::cpu::direct_conv_simd {

/// Output channels are packed in groups of this many (the widest vector,
/// AVX-512's 16 floats): W's packed rows hold OCp = OC rounded up to it.
inline constexpr int64_t kOcGroup = 16;

/// Activations the loops apply as they store, with ONNX's formulas and NaN
/// passed through (as elementwise_simd.cc's piecewise loops): Relu
/// (x < 0 ? 0 : x), Clip (alpha = min, beta = max), LeakyRelu (alpha),
/// HardSigmoid (clamp(alpha x + beta, 0, 1)), HardSwish (x HardSigmoid(x)
/// with alpha 1/6, beta 0.5).
enum class Activation : int { kNone, kRelu, kClip, kLeakyRelu, kHardSigmoid, kHardSwish };

/// The Activation of one of elementwise_simd.h's piecewise-linear loops
/// (same order, same parameters).
inline Activation piecewise(simd::PiecewiseOp op) {
  static_assert(static_cast<int>(simd::PiecewiseOp::kClip) == 0 &&
                    static_cast<int>(simd::PiecewiseOp::kHardSwish) == 3,
                "PiecewiseOp's order");
  return static_cast<Activation>(static_cast<int>(Activation::kClip) + static_cast<int>(op));
}

/// A 2-D convolution's sizes and the element strides of X, Y (and Z) in
/// their layouts. A channel c of X lives at
///   (c / x_cblk) * x_cstride + ih * x_row + iw * x_pix + c % x_cblk
/// from its image: NCHW is x_cblk 1, x_cstride H*W, x_row W, x_pix 1; NHWC
/// x_cblk IC, x_row W*IC, x_pix IC; nChw16c x_cblk 16, x_cstride H*W*16,
/// x_row W*16, x_pix 16. Y and Z alike with the y_ strides, whose channel
/// blocks (y_cblk) hold whole vectors: NHWC or nChw16c.
struct Geometry {
  int64_t IC = 0, H = 0, W = 0, OC = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;  // no padding: every tap of every output lies inside X
  int64_t OCp = 0;  // OC rounded up to kOcGroup
  int64_t x_cblk = 1, x_cstride = 0, x_row = 0, x_pix = 0;
  int64_t y_cblk = 1, y_cstride = 0, y_row = 0, y_pix = 0;
  /// The activation applied to each sum (after Z) before it is stored.
  Activation act = Activation::kNone;
  float act_alpha = 0.f, act_beta = 0.f;
};

/// Pixels [q_begin, q_end) of the N*OH*OW output pixels (in (n, oh, ow)
/// order), output-channel vectors [v_begin, v_end) (units of the target's
/// float vector, direct_conv_vectors; v_end = -1: all), of Y = act(conv(X, W) + B (+ Z when z is not null: Z in Y's
/// layout, may be Y itself)). X holds every tap: a convolution with padding
/// gets X copied with its zero border first (conv.cc). `w_packed`: W as
/// [KH][KW][IC][OCp], zero past OC; `bias_padded`: OCp floats, zero past OC
/// (and zero without B).
void direct_conv_pixels(const Geometry& g, const float* x, const float* w_packed, const float* bias_padded,
                        const float* z, float* y, int64_t q_begin, int64_t q_end, int64_t v_begin = 0,
                        int64_t v_end = -1);
/// Output-channel vectors of `g` on this CPU's SIMD target: ceil(OC / lanes).
int64_t direct_conv_vectors(const Geometry& g);

}  // namespace gec::kernels::cpu::direct_conv_simd
