// Highway loops of the scaled dot-product attention kernel (attention.cc),
// compiled per SIMD target and picked at run time like elementwise_simd.cc.
//
// One block of query rows of one (batch, head):
//   ScoresBlock:  s[r][t] = scale * sum_d q[r][d] * kt[d][t]     (kt = K^T, [D, T] rows)
//   SoftmaxRows:  s[r][:] = softmax(s[r][:]) in place; a row holding a NaN
//                 or all -inf (every key masked) gives NaN, as Softmax does
//   OutputBlock:  o[r][e] = sum_t p[r][t] * v[t][e]                (v [T, Dv] rows)
// Vectors run along T (scores) and along Dv (output), both contiguous.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/nn/attention_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::attention_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// s[r][t0 .. t0 + 2*lanes) for rows r0 .. r0+3: eight independent
/// accumulators (an FMA's latency is hidden), each K^T row load shared by 4
/// query rows.
void ScoresBlock(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds, int64_t rows,
                 int64_t D, int64_t T, float scale) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto sc = hn::Set(d, scale);
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* q0 = q + r * ldq;
    float* s0 = s + r * lds;
    int64_t t = 0;
    for (; t + 2 * lanes <= T; t += 2 * lanes) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
      for (int64_t k = 0; k < D; ++k) {
        const float* kr = kt + k * ldk + t;
        const auto k0 = hn::LoadU(d, kr), k1 = hn::LoadU(d, kr + lanes);
        const auto x0 = hn::Set(d, q0[k]), x1 = hn::Set(d, q0[ldq + k]);
        const auto x2 = hn::Set(d, q0[2 * ldq + k]), x3 = hn::Set(d, q0[3 * ldq + k]);
        a0 = hn::MulAdd(x0, k0, a0), b0 = hn::MulAdd(x0, k1, b0);
        a1 = hn::MulAdd(x1, k0, a1), b1 = hn::MulAdd(x1, k1, b1);
        a2 = hn::MulAdd(x2, k0, a2), b2 = hn::MulAdd(x2, k1, b2);
        a3 = hn::MulAdd(x3, k0, a3), b3 = hn::MulAdd(x3, k1, b3);
      }
      hn::StoreU(hn::Mul(a0, sc), d, s0 + t), hn::StoreU(hn::Mul(b0, sc), d, s0 + t + lanes);
      hn::StoreU(hn::Mul(a1, sc), d, s0 + lds + t), hn::StoreU(hn::Mul(b1, sc), d, s0 + lds + t + lanes);
      hn::StoreU(hn::Mul(a2, sc), d, s0 + 2 * lds + t), hn::StoreU(hn::Mul(b2, sc), d, s0 + 2 * lds + t + lanes);
      hn::StoreU(hn::Mul(a3, sc), d, s0 + 3 * lds + t), hn::StoreU(hn::Mul(b3, sc), d, s0 + 3 * lds + t + lanes);
    }
    for (; t < T; ++t)
      for (int64_t i = 0; i < 4; ++i) {
        float acc = 0.f;
        for (int64_t k = 0; k < D; ++k) acc += q0[i * ldq + k] * kt[k * ldk + t];
        s0[i * lds + t] = acc * scale;
      }
  }
  for (; r < rows; ++r) {
    const float* qr = q + r * ldq;
    float* sr = s + r * lds;
    int64_t t = 0;
    for (; t + lanes <= T; t += lanes) {
      auto a = hn::Zero(d);
      for (int64_t k = 0; k < D; ++k) a = hn::MulAdd(hn::Set(d, qr[k]), hn::LoadU(d, kt + k * ldk + t), a);
      hn::StoreU(hn::Mul(a, sc), d, sr + t);
    }
    for (; t < T; ++t) {
      float acc = 0.f;
      for (int64_t k = 0; k < D; ++k) acc += qr[k] * kt[k * ldk + t];
      sr[t] = acc * scale;
    }
  }
}

void SoftmaxRows(float* s, int64_t lds, int64_t rows, int64_t T) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    float* x = s + r * lds;
    // The row's max, and whether it holds a NaN (a NaN wins), a vector at a time.
    auto vm = hn::Set(d, -std::numeric_limits<float>::infinity());
    auto vnan = hn::Zero(d);
    int64_t i = 0;
    for (; i + lanes <= T; i += lanes) {
      const auto v = hn::LoadU(d, x + i);
      vm = hn::Max(vm, v);
      vnan = hn::IfThenElse(hn::IsNaN(v), hn::Set(d, 1.f), vnan);
    }
    float mx = hn::GetLane(hn::MaxOfLanes(d, vm));
    bool nan = hn::GetLane(hn::MaxOfLanes(d, vnan)) > 0.f;
    for (; i < T; ++i) {
      nan = nan || x[i] != x[i];
      mx = x[i] > mx ? x[i] : mx;
    }
    if (nan) mx = std::numeric_limits<float>::quiet_NaN();
    // A NaN score, or every key masked (-inf - -inf): NaN, as the unfused Softmax.
    if (mx != mx || mx == -std::numeric_limits<float>::infinity()) {
      std::fill(x, x + T, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const auto vmax = hn::Set(d, mx);
    auto vsum = hn::Zero(d);
    int64_t t = 0;
    for (; t + lanes <= T; t += lanes) {
      const auto e = hn::CallExp(d, hn::Sub(hn::LoadU(d, x + t), vmax));  // <= 0 in: no overflow
      hn::StoreU(e, d, x + t);
      vsum = hn::Add(vsum, e);
    }
    float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
    if (t < T) {
      HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
      for (int64_t j = 0; j < lanes; ++j) buf[j] = t + j < T ? x[t + j] - mx : -std::numeric_limits<float>::infinity();
      hn::Store(hn::CallExp(d, hn::Load(d, buf)), d, buf);
      for (int64_t j = t; j < T; ++j) {
        x[j] = buf[j - t];
        sum += x[j];
      }
    }
    const auto inv = hn::Set(d, 1.f / sum);
    t = 0;
    for (; t + lanes <= T; t += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, x + t), inv), d, x + t);
    for (; t < T; ++t) x[t] *= 1.f / sum;
  }
}

/// o[r][e0 .. e0+lanes) for rows r0 .. r0+7: eight independent accumulators
/// over t, each V row load shared by 8 rows.
void OutputBlock(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t rows,
                 int64_t T, int64_t Dv) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t e = 0;
  for (; e + lanes <= Dv; e += lanes) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8) {
      const float* p0 = p + r * ldp;
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
      for (int64_t t = 0; t < T; ++t) {
        const auto vv = hn::LoadU(d, v + t * ldv + e);
        a0 = hn::MulAdd(hn::Set(d, p0[t]), vv, a0);
        a1 = hn::MulAdd(hn::Set(d, p0[ldp + t]), vv, a1);
        a2 = hn::MulAdd(hn::Set(d, p0[2 * ldp + t]), vv, a2);
        a3 = hn::MulAdd(hn::Set(d, p0[3 * ldp + t]), vv, a3);
        a4 = hn::MulAdd(hn::Set(d, p0[4 * ldp + t]), vv, a4);
        a5 = hn::MulAdd(hn::Set(d, p0[5 * ldp + t]), vv, a5);
        a6 = hn::MulAdd(hn::Set(d, p0[6 * ldp + t]), vv, a6);
        a7 = hn::MulAdd(hn::Set(d, p0[7 * ldp + t]), vv, a7);
      }
      float* o0 = o + r * ldo + e;
      hn::StoreU(a0, d, o0), hn::StoreU(a1, d, o0 + ldo), hn::StoreU(a2, d, o0 + 2 * ldo), hn::StoreU(a3, d, o0 + 3 * ldo);
      hn::StoreU(a4, d, o0 + 4 * ldo), hn::StoreU(a5, d, o0 + 5 * ldo), hn::StoreU(a6, d, o0 + 6 * ldo);
      hn::StoreU(a7, d, o0 + 7 * ldo);
    }
    for (; r < rows; ++r) {
      auto a = hn::Zero(d);
      for (int64_t t = 0; t < T; ++t) a = hn::MulAdd(hn::Set(d, p[r * ldp + t]), hn::LoadU(d, v + t * ldv + e), a);
      hn::StoreU(a, d, o + r * ldo + e);
    }
  }
  for (; e < Dv; ++e)
    for (int64_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (int64_t t = 0; t < T; ++t) acc += p[r * ldp + t] * v[t * ldv + e];
      o[r * ldo + e] = acc;
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::attention_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec::kernels::cpu::attention_simd {

HWY_EXPORT(ScoresBlock);
HWY_EXPORT(SoftmaxRows);
HWY_EXPORT(OutputBlock);

void scores_block(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds, int64_t rows,
                  int64_t D, int64_t T, float scale) {
  HWY_DYNAMIC_DISPATCH(ScoresBlock)(q, ldq, kt, ldk, s, lds, rows, D, T, scale);
}
void softmax_rows(float* s, int64_t lds, int64_t rows, int64_t T) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRows)(s, lds, rows, T);
}
void output_block(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t rows,
                  int64_t T, int64_t Dv) {
  HWY_DYNAMIC_DISPATCH(OutputBlock)(p, ldp, v, ldv, o, ldo, rows, T, Dv);
}

}  // namespace gec::kernels::cpu::attention_simd
#endif  // HWY_ONCE
