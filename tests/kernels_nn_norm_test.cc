// BatchNormalization, Softmax / LogSoftmax, LayerNormalization,
// InstanceNormalization and LRN kernels: hand-computed small cases.
#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(NnBatchNorm, PerChannelAffine) {
  // ch0: (x-1)/2*1+0; ch1: (x-3)/1*2+1.
  std::vector<Tensor> p = {make<float>({2}, {1, 2}), make<float>({2}, {0, 1}), make<float>({2}, {1, 3}),
                           make<float>({2}, {4, 1})};
  auto out = run_op("BatchNormalization", {make<float>({1, 2, 1, 2}, {1, 2, 3, 4}), p[0], p[1], p[2], p[3]},
                    {af("epsilon", 0.f)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 1, 2}));
  expect_close(values<float>(out[0]), {0, 0.5f, 1, 3});
  auto rank2 = run_op("BatchNormalization", {make<float>({2, 2}, {1, 3, 3, 4}), p[0], p[1], p[2], p[3]},
                      {af("epsilon", 0.f)});
  expect_close(values<float>(rank2[0]), {0, 1, 1, 3});
}

TEST(NnBatchNorm, EpsilonIsAddedToVariance) {
  // var 0, eps 0.25 -> divide by 0.5.
  auto out = run_op("BatchNormalization",
                    {make<float>({1, 1, 2}, {1, 2}), make<float>({1}, {1}), make<float>({1}, {0}),
                     make<float>({1}, {0}), make<float>({1}, {0})},
                    {af("epsilon", 0.25f)});
  expect_close(values<float>(out[0]), {2, 4});
}

TEST(NnSoftmax, LargeValuesAreStable) {
  auto out = run_op("Softmax", {make<float>({1, 3}, {1000, 1001, 1002})});
  expect_close(values<float>(out[0]), {0.090030573f, 0.244728471f, 0.665240956f});
  auto lg = run_op("LogSoftmax", {make<float>({1, 3}, {1000, 1001, 1002})});
  expect_close(values<float>(lg[0]), {-2.407605964f, -1.407605964f, -0.407605964f}, 1e-5f, 1e-5f);
}

TEST(NnSoftmax, Axis0) {
  // Columns [0,0] -> [.5,.5]; [1,3] -> [1/(1+e^2), e^2/(1+e^2)].
  auto out = run_op("Softmax", {make<float>({2, 2}, {0, 1, 0, 3})}, {ai("axis", 0)});
  expect_close(values<float>(out[0]), {0.5f, 0.119202922f, 0.5f, 0.880797078f});
}

TEST(NnSoftmax, MiddleAxisOfRank3) {
  // [1,2,2]: along axis 1 pairs (0,ln3) and (ln3,0) -> [.25,.75] and [.75,.25].
  const float l3 = std::log(3.f);
  auto out = run_op("Softmax", {make<float>({1, 2, 2}, {0, l3, l3, 0})}, {ai("axis", 1)});
  expect_close(values<float>(out[0]), {0.25f, 0.75f, 0.75f, 0.25f});
}

TEST(NnLayerNorm, LastAxisWithStats) {
  // eps 1. Row [1,2,3,4]: mean 2.5, var 1.25 -> inv 1/1.5 -> [-1,-1/3,1/3,1];
  // row [2,2,2,2]: normalized 0 -> Y = B. Scale [1,2,1,1], B [0,0,0,1].
  auto out = run_op("LayerNormalization",
                    {make<float>({2, 4}, {1, 2, 3, 4, 2, 2, 2, 2}), make<float>({4}, {1, 2, 1, 1}), make<float>({4}, {0, 0, 0, 1})},
                    {af("epsilon", 1.f)}, 3);
  expect_close(values<float>(out[0]), {-1, -2.f / 3, 1.f / 3, 2, 0, 0, 0, 1});
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  expect_close(values<float>(out[1]), {2.5f, 2});
  expect_close(values<float>(out[2]), {2.f / 3, 1});
}

TEST(NnLayerNorm, Axis0NoBias) {
  // Whole tensor: mean 4, var 5, eps 4 -> inv 1/3.
  auto out = run_op("LayerNormalization", {make<float>({2, 2}, {1, 3, 5, 7}), make<float>({2, 2}, {1, 1, 1, 1})},
                    {ai("axis", 0), af("epsilon", 4.f)});
  expect_close(values<float>(out[0]), {-1, -1.f / 3, 1.f / 3, 1});
}

// Rows long enough for the vector loops (norm_simd.cc) with a tail after
// them: LayerNorm over [3, 1000] rows (1000 = 62 x 16 + 8) and
// SkipLayerNormalization over [2, 2, 333], InstanceNorm over planes of
// 37 x 3, each against a double-precision loop within 1e-5.
TEST(NnLayerNorm, LongRowsMatchADoubleLoop) {
  const auto wave = [](Shape s, float k) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 3.f + std::sin(k * static_cast<float>(i)) * 2.f;
    return make<float>(s, v);
  };
  // Y = (X - mean) / sqrt(var + eps) * scale + bias per row of `n`.
  const auto reference = [](const std::vector<float>& x, int64_t n, const std::vector<float>& scale,
                            const std::vector<float>& bias, float eps, bool per_row_affine) {
    std::vector<float> y(x.size());
    for (size_t r = 0; r * n < x.size(); ++r) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < n; ++i) m += x[r * n + i];
      m /= n;
      for (int64_t i = 0; i < n; ++i) v += (x[r * n + i] - m) * (x[r * n + i] - m);
      const double inv = 1.0 / std::sqrt(v / n + eps);
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = per_row_affine ? r % scale.size() : static_cast<size_t>(i);
        y[r * n + i] = static_cast<float>((x[r * n + i] - m) * inv * scale[k] + bias[k]);
      }
    }
    return y;
  };
  const auto near = [](const std::vector<float>& a, const std::vector<float>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 + 1e-5 * std::fabs(b[i])) << i;
  };
  Tensor x = wave({3, 1000}, 0.37f), g = wave({1000}, 0.11f), b = wave({1000}, 0.23f);
  near(values<float>(run_op("LayerNormalization", {x, g, b}, {af("epsilon", 1e-5f)})[0]),
       reference(values<float>(x), 1000, values<float>(g), values<float>(b), 1e-5f, false));
  Tensor xs = wave({2, 2, 333}, 0.41f), skip = wave({2, 2, 333}, 0.07f), g2 = wave({333}, 0.13f), b2 = wave({333}, 0.29f);
  std::vector<float> sum = values<float>(xs);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += values<float>(skip)[i];
  near(values<float>(run_op("SkipLayerNormalization", {xs, skip, g2, b2}, {af("epsilon", 1e-5f)}, 1,
                            ops::kGecDomain)[0]),
       reference(sum, 333, values<float>(g2), values<float>(b2), 1e-5f, false));
  Tensor xi = wave({1, 2, 37, 3}, 0.53f), gi = make<float>({2}, {1.5f, -0.5f}), bi = make<float>({2}, {0.25f, 2.f});
  near(values<float>(run_op("InstanceNormalization", {xi, gi, bi}, {af("epsilon", 1e-5f)})[0]),
       reference(values<float>(xi), 111, values<float>(gi), values<float>(bi), 1e-5f, true));
}

TEST(NnInstanceNorm, PerPlane) {
  // ch0 [1,3]: mean 2, var 1, eps 1 -> +-1/sqrt(2); ch1 constant -> bias.
  auto out = run_op("InstanceNormalization",
                    {make<float>({1, 2, 2}, {1, 3, 5, 5}), make<float>({2}, {1, 2}), make<float>({2}, {0, 1})},
                    {af("epsilon", 1.f)});
  expect_close(values<float>(out[0]), {-0.70710678f, 0.70710678f, 1, 1});
}

TEST(NnLrn, OddAndEvenSize) {
  auto x = make<float>({1, 3, 1, 1}, {1, 2, 3});
  // size 3, alpha/size = 1, beta 1, bias 1: windows {0,1}, {0,1,2}, {1,2}.
  auto odd = run_op("LRN", {x}, {ai("size", 3), af("alpha", 3.f), af("beta", 1.f), af("bias", 1.f)});
  expect_close(values<float>(odd[0]), {1.f / 6, 2.f / 15, 3.f / 14});
  // size 2: windows [c, c+1] -> {0,1}, {1,2}, {2}.
  auto even = run_op("LRN", {x}, {ai("size", 2), af("alpha", 2.f), af("beta", 1.f), af("bias", 1.f)});
  expect_close(values<float>(even[0]), {1.f / 6, 2.f / 14, 3.f / 10});
}

}  // namespace
}  // namespace gec
