// Highway loops of the native direct convolution (conv.cc's "direct"
// variant), compiled per SIMD target and picked at run time like
// depthwise_simd.cc.
//
// Y[n, oc, oh, ow] = B[oc] (+ Z[n, oc, oh, ow]) + sum over ic, kh, kw of
// W[oc, ic, kh, kw] * X[n, ic, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw], taps
// outside X counting zero (ONNX Conv-11, group 1, 2-D). The output channels
// run along the vector lanes: W is packed once as [kh][kw][ic][OCp] (OCp: OC
// rounded up to 16 with zero rows, direct_conv_simd.h), and a register tile
// of T output pixels x V vectors of channels keeps its sums over every tap:
// per tap and input channel, V weight vectors loaded and one input value
// broadcast per pixel, T x V multiply-adds (the blocking of direct
// convolution kernels such as oneDNN's jit_avx512_common_conv, written here
// with Highway instead of generated at run time, so nothing is compiled when
// a model loads). The pixels of a tile are consecutive in (n, oh, ow)
// order, across rows and images, so narrow outputs fill whole tiles too.
// Every tap is read without a bounds test: where a window crosses an edge,
// conv.cc first copies X with its zero border. Sums run tap by tap in
// (kh, kw, ic) order;
// Z is added and the piecewise-linear activations applied as each sum is
// stored (others run after, conv.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/direct_conv_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "kernels/cpu/nn/direct_conv_simd.h"
#include "kernels/cpu/nn/conv_activation-inl.h"

#include <algorithm>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::direct_conv_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Accumulators a tile may hold: the vector registers less the V weight
// vectors and one broadcast.
#if HWY_TARGET <= HWY_AVX3
constexpr int kRegisters = 32;
#else
constexpr int kRegisters = 16;
#endif
constexpr int kMaxV = kRegisters >= 32 ? 4 : 2;
template <int V>
constexpr int tile_pixels() {
  return std::min(12, std::max(1, (kRegisters - V - 2) / V));
}

// One tile: T consecutive output pixels (in (n, oh, ow) order, possibly
// across rows and images) from pixel q0, V vectors of output channels from
// vector v0. X is read without bounds: every tap lies inside it (conv.cc
// pads X where a window would cross an edge, so ph = pw = 0 here).
template <int T, int V>
HWY_NOINLINE void Tile(const Geometry& g, const float* x, const float* wp, const float* bias, const float* z, float* y,
                       int64_t q0, int64_t v0) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using Vec = hn::Vec<decltype(d)>;
  const int64_t plane = g.OH * g.OW;
  const int64_t x_image = g.IC * g.H * g.W, y_image = g.OC * plane;
  const float* px[T];   // each pixel's window corner in X
  int64_t py[T];        // each pixel's first channel in Y
#pragma GCC unroll 12
  for (int t = 0; t < T; ++t) {
    const int64_t q = q0 + t, n = q / plane, r = q % plane, oh = r / g.OW, ow = r % g.OW;
    px[t] = x + n * x_image + oh * g.sh * g.x_row + ow * g.sw * g.x_pix;
    py[t] = n * y_image + oh * g.y_row + ow * g.y_pix;
  }
  Vec acc[T][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const Vec b = hn::LoadU(d, bias + (v0 + v) * L);
#pragma GCC unroll 12
    for (int t = 0; t < T; ++t) acc[t][v] = b;
  }
  const int64_t blocks = (g.IC + g.x_cblk - 1) / g.x_cblk;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t tap = kh * g.dh * g.x_row + kw * g.dw * g.x_pix;
      const float* wk = wp + (kh * g.KW + kw) * g.IC * g.OCp + v0 * L;
      for (int64_t cb = 0; cb < blocks; ++cb) {
        const int64_t at = tap + cb * g.x_cstride;
        const float* wb = wk + cb * g.x_cblk * g.OCp;
        const int64_t n = std::min(g.x_cblk, g.IC - cb * g.x_cblk);
        const float* xt[T];
#pragma GCC unroll 12
        for (int t = 0; t < T; ++t) xt[t] = px[t] + at;
        for (int64_t j = 0; j < n; ++j) {
          Vec w[V];
#pragma GCC unroll 4
          for (int v = 0; v < V; ++v) w[v] = hn::LoadU(d, wb + j * g.OCp + v * L);
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) {
            const Vec b = hn::Set(d, xt[t][j]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[t][v] = hn::MulAdd(b, w[v], acc[t][v]);
          }
        }
      }
    }
  }
  const VecActivation<decltype(d)> activate(d, g.act, g.act_alpha, g.act_beta);
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const int64_t oc0 = (v0 + v) * L;
    if (oc0 >= g.OC) break;
    const int64_t valid = std::min(L, g.OC - oc0);
    const int64_t at = (oc0 / g.y_cblk) * g.y_cstride + (oc0 % g.y_cblk);
#pragma GCC unroll 12
    for (int t = 0; t < T; ++t) {
      const int64_t o = py[t] + at;
      Vec r = acc[t][v];
      if (valid == L) {
        if (z) r = hn::Add(r, hn::LoadU(d, z + o));
        hn::StoreU(activate(r), d, y + o);
      } else {
        // The last vector of NHWC channels: no lane outside the pixel is
        // read or written (the next pixel may be another thread's). AVX2
        // and AVX-512 have masked loads and stores; elsewhere through a
        // buffer (copying it cost oww-sized layers of 8-24 channels up to
        // 2x on AVX-512).
#if HWY_TARGET <= HWY_AVX2
        const auto m = hn::FirstN(d, static_cast<size_t>(valid));
        if (z) r = hn::Add(r, hn::MaskedLoad(m, d, z + o));
        hn::BlendedStore(activate(r), m, d, y + o);
#else
        HWY_ALIGN float part[HWY_MAX_BYTES / sizeof(float)] = {};
        if (z) {
          std::copy(z + o, z + o + valid, part);
          r = hn::Add(r, hn::Load(d, part));
        }
        hn::Store(activate(r), d, part);
        std::copy(part, part + valid, y + o);
#endif
      }
    }
  }
}

// Pixels [q_begin, q_end) for vectors [v0, v0 + V): tiles of T, then 4, then 1.
template <int V>
HWY_INLINE void PixelChunk(const Geometry& g, const float* x, const float* wp, const float* bias, const float* z,
                           float* y, int64_t q_begin, int64_t q_end, int64_t v0) {
  constexpr int T = tile_pixels<V>();
  int64_t q = q_begin;
  for (; q + T <= q_end; q += T) Tile<T, V>(g, x, wp, bias, z, y, q, v0);
  if (T > 4)
    for (; q + 4 <= q_end; q += 4) Tile<(T > 4 ? 4 : 1), V>(g, x, wp, bias, z, y, q, v0);
  for (; q < q_end; ++q) Tile<1, V>(g, x, wp, bias, z, y, q, v0);
}

int64_t Vectors(const Geometry& g) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  return (g.OC + L - 1) / L;
}

void DirectConvPixels(const Geometry& g, const float* x, const float* wp, const float* bias, const float* z, float* y,
                      int64_t q_begin, int64_t q_end, int64_t v_begin, int64_t v_end) {
  if (v_end < 0) v_end = Vectors(g);
  const int64_t vectors = v_end - v_begin;
  if (vectors <= 0) return;
  // Vectors per chunk: as even as kMaxV allows (6 -> 3 + 3, not 4 + 2).
  const int64_t chunks = (vectors + kMaxV - 1) / kMaxV;
  // Pixels in slices that keep a chunk's outputs and their inputs in cache
  // while the next chunk reads the same inputs.
  constexpr int64_t kSlice = 96;
  for (int64_t s = q_begin; s < q_end; s += kSlice) {
    const int64_t e = std::min(q_end, s + kSlice);
    int64_t v0 = v_begin;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t nv = (v_end - v0) / (chunks - c);
      switch (nv) {
        case 1: PixelChunk<1>(g, x, wp, bias, z, y, s, e, v0); break;
        case 2: PixelChunk<2>(g, x, wp, bias, z, y, s, e, v0); break;
#if HWY_TARGET <= HWY_AVX3
        case 3: PixelChunk<3>(g, x, wp, bias, z, y, s, e, v0); break;
        default: PixelChunk<4>(g, x, wp, bias, z, y, s, e, v0); break;
#else
        default: PixelChunk<2>(g, x, wp, bias, z, y, s, e, v0); break;
#endif
      }
      v0 += nv;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::direct_conv_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::direct_conv_simd {

HWY_EXPORT(DirectConvPixels);
HWY_EXPORT(Vectors);

void direct_conv_pixels(const Geometry& g, const float* x, const float* w_packed, const float* bias_padded,
                        const float* z, float* y, int64_t q_begin, int64_t q_end, int64_t v_begin, int64_t v_end) {
  HWY_DYNAMIC_DISPATCH(DirectConvPixels)(g, x, w_packed, bias_padded, z, y, q_begin, q_end, v_begin, v_end);
}

int64_t direct_conv_vectors(const Geometry& g) { return HWY_DYNAMIC_DISPATCH(Vectors)(g); }

}  // namespace gec::kernels::cpu::direct_conv_simd
#endif  // HWY_ONCE
