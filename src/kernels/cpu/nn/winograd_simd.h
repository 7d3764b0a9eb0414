// The native Winograd convolution's transforms (winograd_simd.cc), used by
// conv.cc's "winograd_nhwc" variant: a 3x3, stride-1, undilated, ungrouped
// 2-D convolution over nhwc X and Y as F(4x4, 3x3) minimal filtering
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
// CVPR 2016): each 4x4 tile of outputs comes from a 6x6 tile of inputs
// through 36 products per input and output channel instead of 144.
//
// The three steps, per run (conv.cc):
//   1. transform_input: V[e][t][c] = (B^T d B)[e] for every 6x6 (4x4) input
//      tile d of channel c (tile t, element e = 6 (4) * row + column);
//   2. 36 (16) matrix products M[e] = V[e] x U[e] ([T, C] x [C, K], one
//      oneDNN MatMul with that batch), U = transform_weights(W) made once;
//   3. transform_output: Y = A^T M A + B (+ Z), then the activation.
// Their sums run in another order than the direct convolution's, through
// transformed values up to about 10x the inputs: results differ from it by
// float32 rounding (NnConv.WinogradNhwcVariantMatchesAReferenceLoop in
// tests/kernels_nn_conv_test.cc bounds it).
#pragma once

#include <cstdint>

#include "kernels/cpu/nn/direct_conv_simd.h"

namespace gec::kernels::cpu::winograd_simd {

/// Transformed elements per tile: (m + 2)^2 for output tiles of m x m.
inline constexpr int64_t elements(int64_t m) { return (m + 2) * (m + 2); }

/// One convolution's sizes: X nhwc [N, H, W, C], Y nhwc [N, OH, OW, K],
/// padding before each side (the rest of the window past X reads zeros),
/// and the tiles covering Y (the last row and column of tiles may reach
/// past it; those outputs are not stored).
struct Geometry {
  /// Output tile side: 4 (F(4x4, 3x3), 36 elements per tile) or 2 (F(2x2,
  /// 3x3), 16 elements: for small maps, where 4x4 tiles would be few).
  int64_t m = 4;
  int64_t N = 0, H = 0, W = 0, C = 0, OH = 0, OW = 0, K = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  /// Applied to each output (after B and Z) as it is stored: none, Relu or
  /// one of the piecewise-linear ones (direct_conv_simd.h's formulas).
  direct_conv_simd::Activation act = direct_conv_simd::Activation::kNone;
  float act_alpha = 0.f, act_beta = 0.f;
  int64_t tiles() const { return N * tiles_h * tiles_w; }
  int64_t elems() const { return elements(m); }
};

/// The geometry of Y = conv(X, W) with X [N, C, H, W] and Y [N, K, OH, OW]
/// (ONNX dims; held nhwc) and the padding before H and W, in output tiles of
/// m x m (4 or 2).
Geometry make_geometry(int64_t m, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW,
                       int64_t pad_top, int64_t pad_left);

/// U[e][c][k] = (G g G^T)[e] for g = W[k, c, :, :] (W ONNX [K, C, 3, 3];
/// U elements(m) x C rows of `ldu` >= K floats, the last ldu - K of each
/// left as they are) for output tiles of m x m, computed in double.
void transform_weights(int64_t m, const float* w, int64_t K, int64_t C, int64_t ldu, float* u);

/// V[e][t - first][c] for tiles [t_begin, t_end) of g.tiles() (tile t =
/// (n * tiles_h + i) * tiles_w + j covers outputs from row m i, column m j
/// of image n); X nhwc; V holds the block of `count` tiles from `first` (which
/// contains [t_begin, t_end)): elems() x count x C floats.
void transform_input(const Geometry& g, const float* x, float* v, int64_t first, int64_t count, int64_t t_begin,
                     int64_t t_end);

/// Y (nhwc) = act(A^T M A + bias (+ Z)) for tiles [t_begin, t_end): M the
/// block of `count` tiles from `first`, elems() x count x K floats; bias K floats
/// or null; Z nhwc like Y or null (may be Y).
void transform_output(const Geometry& g, const float* m, int64_t first, int64_t count, const float* bias,
                      const float* z, float* y, int64_t t_begin, int64_t t_end);

}  // namespace gec::kernels::cpu::winograd_simd
