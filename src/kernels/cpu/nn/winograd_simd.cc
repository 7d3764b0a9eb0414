// Highway loops of the native F(4x4, 3x3) and F(2x2, 3x3) Winograd
// convolutions' input and output transforms (winograd_simd.h), compiled per
// SIMD target and picked
// at run time like direct_conv_simd.cc. Channels run along the vector
// lanes (X and Y are nhwc: a pixel's channels are contiguous); a channel
// count that is not a multiple of the vector width ends in one vector read
// and written through a stack buffer, so no lane outside a pixel is
// touched (the next pixel may be another thread's).
//
// The matrices are Lavin and Gray's (CVPR 2016, section 4.1 for F(2x2,
// 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; 1/2 1/2
// 1/2; 1/2 -1/2 1/2; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1]; section 4.2 for
// F(4x4, 3x3), interpolation points 0, +-1, +-2 and infinity:
//   B^T = [4  0 -5  0 1 0]      G = [ 1/4     0     0]   A^T = [1 1  1 1  1 0]
//         [0 -4 -4  1 1 0]          [-1/6  -1/6  -1/6]         [0 1 -1 2 -2 0]
//         [0  4 -4 -1 1 0]          [-1/6   1/6  -1/6]         [0 1  1 4  4 0]
//         [0 -2 -1  2 1 0]          [1/24  1/12   1/6]         [0 1 -1 8 -8 1]
//         [0  2 -1 -2 1 0]          [1/24 -1/12   1/6]
//         [0  4  0 -5 0 1]          [   0     0     1]
// V = B^T d B, U = G g G^T, Y = A^T (U . V) A, each 2-D product applied as
// a pass over rows and then one over columns.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/winograd_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "kernels/cpu/nn/winograd_simd.h"
#include "kernels/cpu/nn/conv_activation-inl.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::winograd_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// F(4x4, 3x3)'s B^T applied to six values (a row or a column of a 6x6 tile).
template <class D, class V>
HWY_INLINE void InputPass(D d, const V* i, V* o) {
  const V four = hn::Set(d, 4.f), five = hn::Set(d, 5.f), two = hn::Set(d, 2.f);
  o[0] = hn::Add(hn::NegMulAdd(five, i[2], hn::Mul(four, i[0])), i[4]);
  o[1] = hn::NegMulAdd(four, hn::Add(i[1], i[2]), hn::Add(i[3], i[4]));
  o[2] = hn::MulAdd(four, hn::Sub(i[1], i[2]), hn::Sub(i[4], i[3]));
  o[3] = hn::MulAdd(two, hn::Sub(i[3], i[1]), hn::Sub(i[4], i[2]));
  o[4] = hn::NegMulAdd(two, hn::Sub(i[3], i[1]), hn::Sub(i[4], i[2]));
  o[5] = hn::Add(hn::NegMulAdd(five, i[3], hn::Mul(four, i[1])), i[5]);
}

// F(2x2, 3x3)'s B^T applied to four values.
template <class D, class V>
HWY_INLINE void InputPass2(D, const V* i, V* o) {
  o[0] = hn::Sub(i[0], i[2]);
  o[1] = hn::Add(i[1], i[2]);
  o[2] = hn::Sub(i[2], i[1]);
  o[3] = hn::Sub(i[1], i[3]);
}

// F(2x2, 3x3)'s A^T applied to four values: two outputs.
template <class D, class V>
HWY_INLINE void OutputPass2(D, const V* m, V* o) {
  o[0] = hn::Add(hn::Add(m[0], m[1]), m[2]);
  o[1] = hn::Sub(hn::Sub(m[1], m[2]), m[3]);
}

// F(4x4, 3x3)'s A^T applied to six values: four outputs.
template <class D, class V>
HWY_INLINE void OutputPass(D d, const V* m, V* o) {
  const V two = hn::Set(d, 2.f), four = hn::Set(d, 4.f), eight = hn::Set(d, 8.f);
  const V s12 = hn::Add(m[1], m[2]), d12 = hn::Sub(m[1], m[2]);
  const V s34 = hn::Add(m[3], m[4]), d34 = hn::Sub(m[3], m[4]);
  o[0] = hn::Add(hn::Add(m[0], s12), s34);
  o[1] = hn::MulAdd(two, d34, d12);
  o[2] = hn::MulAdd(four, s34, s12);
  o[3] = hn::Add(hn::MulAdd(eight, d34, d12), m[5]);
}

// `lanes` channels at p (all of a vector, or the last few through a buffer).
template <class D>
HWY_INLINE hn::Vec<D> LoadPart(D d, const float* p, int64_t lanes) {
  if (lanes == static_cast<int64_t>(hn::Lanes(d))) return hn::LoadU(d, p);
  HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
  std::memcpy(buf, p, static_cast<size_t>(lanes) * sizeof(float));
  return hn::Load(d, buf);
}
template <class D>
HWY_INLINE void StorePart(D d, hn::Vec<D> v, float* p, int64_t lanes) {
  if (lanes == static_cast<int64_t>(hn::Lanes(d))) return hn::StoreU(v, d, p);
  HWY_ALIGN float buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, static_cast<size_t>(lanes) * sizeof(float));
}

// The transforms for output tiles of M x M (4: F(4x4, 3x3), 2: F(2x2, 3x3)).
template <int M>
void TransformInputM(const Geometry& g, const float* x, float* v, int64_t first, int64_t count, int64_t t_begin,
                     int64_t t_end) {
  constexpr int kIn = M + 2, kOut = M;
  const hn::ScalableTag<float> d;
  using Vec = hn::Vec<decltype(d)>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t per_image = g.tiles_h * g.tiles_w, estride = count * g.C;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t n = t / per_image, r = t % per_image;
    const int64_t ih0 = (r / g.tiles_w) * kOut - g.pad_top, iw0 = (r % g.tiles_w) * kOut - g.pad_left;
    const float* image = x + n * g.H * g.W * g.C;
    // Which of the tile's 6 rows and columns lie inside X.
    bool row_in[kIn], col_in[kIn];
    bool interior = true;
    for (int i = 0; i < kIn; ++i) {
      row_in[i] = ih0 + i >= 0 && ih0 + i < g.H;
      col_in[i] = iw0 + i >= 0 && iw0 + i < g.W;
      interior = interior && row_in[i] && col_in[i];
    }
    float* out = v + (t - first) * g.C;
    for (int64_t c = 0; c < g.C; c += L) {
      const int64_t lanes = std::min(L, g.C - c);
      Vec rows[kIn][kIn];  // B^T applied along each input row: rows[i][j]
      for (int i = 0; i < kIn; ++i) {
        Vec in[kIn];
        if (!row_in[i]) {
          for (int j = 0; j < kIn; ++j) rows[i][j] = hn::Zero(d);
          continue;
        }
        const float* row = image + (ih0 + i) * g.W * g.C + c;  // the row's first pixel
        for (int j = 0; j < kIn; ++j)
          in[j] = (interior || col_in[j]) ? LoadPart(d, row + (iw0 + j) * g.C, lanes) : hn::Zero(d);
        if constexpr (M == 4) InputPass(d, in, rows[i]); else InputPass2(d, in, rows[i]);
      }
      for (int j = 0; j < kIn; ++j) {
        Vec col[kIn], o[kIn];
        for (int i = 0; i < kIn; ++i) col[i] = rows[i][j];
        if constexpr (M == 4) InputPass(d, col, o); else InputPass2(d, col, o);
        for (int i = 0; i < kIn; ++i) StorePart(d, o[i], out + (i * kIn + j) * estride + c, lanes);
      }
    }
  }
}

template <int M>
void TransformOutputM(const Geometry& g, const float* m, int64_t first, int64_t count, const float* bias,
                      const float* z, float* y, int64_t t_begin, int64_t t_end) {
  constexpr int64_t kIn = M + 2, kOut = M;
  const hn::ScalableTag<float> d;
  using Vec = hn::Vec<decltype(d)>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t per_image = g.tiles_h * g.tiles_w, estride = count * g.K;
  const direct_conv_simd::HWY_NAMESPACE::VecActivation<decltype(d)> activate(d, g.act, g.act_alpha, g.act_beta);
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t n = t / per_image, r = t % per_image;
    const int64_t oh0 = (r / g.tiles_w) * kOut, ow0 = (r % g.tiles_w) * kOut;
    const int64_t rows = std::min(kOut, g.OH - oh0), cols = std::min(kOut, g.OW - ow0);
    const int64_t at = (n * g.OH * g.OW + oh0 * g.OW + ow0) * g.K;
    const float* in = m + (t - first) * g.K;
    for (int64_t k = 0; k < g.K; k += L) {
      const int64_t lanes = std::min(L, g.K - k);
      Vec s[kOut][kIn];  // A^T applied along each column: s[a][j]
      for (int j = 0; j < kIn; ++j) {
        Vec col[kIn], o[kOut];
        for (int i = 0; i < kIn; ++i) col[i] = LoadPart(d, in + (i * kIn + j) * estride + k, lanes);
        if constexpr (M == 4) OutputPass(d, col, o); else OutputPass2(d, col, o);
        for (int a = 0; a < kOut; ++a) s[a][j] = o[a];
      }
      const Vec b = bias ? LoadPart(d, bias + k, lanes) : hn::Zero(d);
      for (int64_t a = 0; a < rows; ++a) {
        Vec o[kOut];
        if constexpr (M == 4) OutputPass(d, s[a], o); else OutputPass2(d, s[a], o);
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t off = at + (a * g.OW + c) * g.K + k;
          Vec res = hn::Add(o[c], b);
          if (z) res = hn::Add(res, LoadPart(d, z + off, lanes));
          StorePart(d, activate(res), y + off, lanes);
        }
      }
    }
  }
}

void TransformInput(const Geometry& g, const float* x, float* v, int64_t first, int64_t count, int64_t t_begin,
                    int64_t t_end) {
  if (g.m == 4) return TransformInputM<4>(g, x, v, first, count, t_begin, t_end);
  TransformInputM<2>(g, x, v, first, count, t_begin, t_end);
}

void TransformOutput(const Geometry& g, const float* m, int64_t first, int64_t count, const float* bias,
                     const float* z, float* y, int64_t t_begin, int64_t t_end) {
  if (g.m == 4) return TransformOutputM<4>(g, m, first, count, bias, z, y, t_begin, t_end);
  TransformOutputM<2>(g, m, first, count, bias, z, y, t_begin, t_end);
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::winograd_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::winograd_simd {

HWY_EXPORT(TransformInput);
HWY_EXPORT(TransformOutput);

Geometry make_geometry(int64_t m, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW,
                       int64_t pad_top, int64_t pad_left) {
  Geometry g;
  g.m = m == 2 ? 2 : 4;
  g.N = N;
  g.C = C;
  g.H = H;
  g.W = W;
  g.K = K;
  g.OH = OH;
  g.OW = OW;
  g.pad_top = pad_top;
  g.pad_left = pad_left;
  g.tiles_h = (OH + g.m - 1) / g.m;
  g.tiles_w = (OW + g.m - 1) / g.m;
  return g;
}

void transform_weights(int64_t m, const float* w, int64_t K, int64_t C, int64_t ldu, float* u) {
  static constexpr double G4[6][3] = {{1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  static constexpr double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const double(*G)[3] = m == 2 ? G2 : G4;
  const int kIn = m == 2 ? 4 : 6;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float* f = w + (k * C + c) * 9;
      double gf[6][3];  // G g
      for (int i = 0; i < kIn; ++i)
        for (int j = 0; j < 3; ++j) gf[i][j] = G[i][0] * f[j] + G[i][1] * f[3 + j] + G[i][2] * f[6 + j];
      for (int i = 0; i < kIn; ++i)
        for (int j = 0; j < kIn; ++j) {
          const double e = gf[i][0] * G[j][0] + gf[i][1] * G[j][1] + gf[i][2] * G[j][2];
          u[((i * kIn + j) * C + c) * ldu + k] = static_cast<float>(e);
        }
    }
}

void transform_input(const Geometry& g, const float* x, float* v, int64_t first, int64_t count, int64_t t_begin,
                     int64_t t_end) {
  HWY_DYNAMIC_DISPATCH(TransformInput)(g, x, v, first, count, t_begin, t_end);
}

void transform_output(const Geometry& g, const float* m, int64_t first, int64_t count, const float* bias,
                      const float* z, float* y, int64_t t_begin, int64_t t_end) {
  HWY_DYNAMIC_DISPATCH(TransformOutput)(g, m, first, count, bias, z, y, t_begin, t_end);
}

}  // namespace gec::kernels::cpu::winograd_simd
#endif  // HWY_ONCE
