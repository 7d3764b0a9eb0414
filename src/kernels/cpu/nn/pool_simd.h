// The vector loops of pooling (pool_simd.cc): 2-D MaxPool / AveragePool on
// pixel vectors, used by pool.cc's "native.pool" kernel for inputs in the
// nChw16c or nhwc layout (or plain NCHW, one float a pixel), and the sums of GlobalAveragePool
// ("native.global_pool") in every layout.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gec::kernels::cpu::pool_simd {

/// One 2-D pooling window over a plane of pixels: X [H][W] pixels to
/// Y [OH][OW] pixels, P floats each (16 for one nChw16c channel block, C for
/// an nhwc image), consecutive pixels x_pix floats apart in X and y_pix in
/// Y (P, or C when the plane is one 16-channel block of an nhwc image: a
/// pool that changes layout, pool.cc). Window taps: kernel kh x kw, strides sh,
/// sw, dilations dh, dw (>= 1), begin pads ph, pw and end pads eh, ew as
/// ONNX pads (ceil_mode's extra cells lie beyond eh, ew). The caller
/// (pool.cc) has checked that these values are below 2^31 and a window
/// step below 2^62 floats, so the offsets fit int64. A window with no tap
/// inside X gives -inf (max) or 0 (mean): pool.cc refuses the first and
/// the uncounted-pads mean.
struct Window {
  int64_t H = 0, W = 0, P = 0, OH = 0, OW = 0;
  int64_t x_pix = 0, y_pix = 0;  // floats from one pixel to the next (>= P; 0: P)
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0, eh = 0, ew = 0;
  bool is_max = true;
  /// AveragePool: count the cells inside [-pads, in + pads) (ONNX
  /// count_include_pad = 1) rather than those inside X only. Cells of a
  /// ceil_mode window beyond the end pads are never counted.
  bool count_include_pad = false;
};

/// Taps [lo, hi) of a window whose first cell is `start` (k taps `dil`
/// apart, dil >= 1) with cells inside [begin, end); lo == hi when none is.
/// Closed form: no loop over the taps, which a model may make huge.
inline void taps_inside(int64_t start, int64_t k, int64_t dil, int64_t begin, int64_t end, int64_t& lo,
                        int64_t& hi) {
  lo = start >= begin ? 0 : (begin - start + dil - 1) / dil;
  hi = start >= end ? 0 : std::min<int64_t>(k, (end - 1 - start) / dil + 1);
  if (lo > k) lo = k;
  if (hi < lo) hi = lo;
}

/// Output rows [oh0, oh1) of one plane: each output pixel is the max or the
/// mean of its taps inside X, all P floats at once. The max runs in tap
/// order with the CPU's vector max, which on the x86 targets returns the
/// tap where either operand is NaN (as oneDNN's and ONNX Runtime's x86
/// pooling loops): a NaN survives unless a later tap of the window is a
/// number. (Highway's portable EMU128 fallback skips a NaN operand.) A
/// MaxPool window with no tap inside X gives -inf, an AveragePool one 0.
/// Source of the semantics: ONNX MaxPool-12 and AveragePool-11
/// (AveragePool-19's dilations too).
void pool_rows(const float* x, float* y, const Window& w, int64_t oh0, int64_t oh1);

/// out[j] = the float sum of x[s * row + j] over rows s < count, for lanes
/// j < `lanes`, each lane added in row order (so the result is the same bits
/// as a scalar loop over s, on every target). Rows `row` floats apart
/// (row >= lanes); lanes > 0, count >= 0 (0 gives zeros). The rows of an
/// nhwc image (row = C) or of one nChw16c channel block (row = lanes = 16).
void sum_rows(const float* x, int64_t count, int64_t row, int64_t lanes, float* out);

/// The float sum of x[0 .. n): vector partial sums, then those lanes added
/// (not the order of a sequential loop: a different rounding, of the same
/// size). One channel of a plain NCHW image.
float sum(const float* x, int64_t n);

}  // namespace gec::kernels::cpu::pool_simd
