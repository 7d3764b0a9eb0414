// Elementwise kernels (unary, Clip, binary with broadcasting, comparisons,
// logic, Where, variadic Max/Min/Sum/Mean, Pow, Cast) run through their infer
// function and CPU kernel. Expected values come from the ONNX operator text,
// computed by hand or by an independent loop over explicit indices.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

namespace gec {
namespace {
using namespace gec::testing;
using ir::Attribute;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> iota_f(int64_t n, float start = 0.f, float step = 1.f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

float run1(const std::string& op, float x, std::vector<Attribute> attrs = {}) {
  return values<float>(run_op(op, {make<float>({}, {x})}, std::move(attrs))[0])[0];
}

// ---- unary ---------------------------------------------------------------------------

TEST(ElementwiseUnary, ReluOddSizesKeepsNaN) {
  for (int64_t n : {1, 7, 16, 17, 33}) {
    std::vector<float> x = iota_f(n, -8.f), want(x.size());
    x[n / 2] = kNaN;
    for (size_t i = 0; i < x.size(); ++i) want[i] = std::isnan(x[i]) ? kNaN : (x[i] < 0 ? 0.f : x[i]);
    auto out = run_op("Relu", {make<float>({n}, x)});
    expect_close(values<float>(out[0]), want);
  }
}

TEST(ElementwiseUnary, VectorizedSigmoidTanhExpMatchLibm) {
  // Values span saturation, overflow (exp(100) = inf) and NaN, at lengths that
  // exercise full vectors and tails.
  for (int64_t n : {1, 7, 16, 17, 33}) {
    std::vector<float> x = iota_f(n, -40.f, 80.f / static_cast<float>(n));
    x[0] = 100.f;
    if (n > 2) x[n - 2] = kNaN;
    if (n > 3) x[1] = -100.f;
    std::vector<float> sig(x.size()), th(x.size()), ex(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      sig[i] = 1.f / (1.f + std::exp(-x[i]));
      th[i] = std::tanh(x[i]);
      ex[i] = std::exp(x[i]);
    }
    auto t = make<float>({n}, x);
    expect_close(values<float>(run_op("Sigmoid", {t})[0]), sig, 1e-6f, 1e-7f);
    expect_close(values<float>(run_op("Tanh", {t})[0]), th, 1e-6f, 1e-7f);
    std::vector<float> got = values<float>(run_op("Exp", {t})[0]);
    EXPECT_EQ(got[0], kInf);
    got[0] = ex[0] = 0.f;
    expect_close(got, ex, 1e-6f, 0.f);
  }
}

// com.graphengine::Swish (ONNX Swish-24: x * sigmoid(alpha * x)) against
// values worked out with libm in double, at lengths with full vectors and
// tails, saturation, +-inf and NaN; and Swish = x * Sigmoid(x) exactly for
// alpha 1 (the kernel shares Sigmoid's vector code).
TEST(ElementwiseUnary, SwishMatchesItsFormula) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float alpha : {1.f, 1.5f})
    for (int64_t n : {1, 7, 16, 17, 33}) {
      std::vector<float> x = iota_f(n, -30.f, 60.f / static_cast<float>(n));
      x[0] = 2.f;
      if (n > 2) x[n - 2] = kNaN;
      if (n > 3) x[1] = inf;
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        want[i] = static_cast<float>(static_cast<double>(x[i]) / (1.0 + std::exp(-static_cast<double>(alpha) * x[i])));
      auto t = make<float>({n}, x);
      std::vector<float> got =
          values<float>(run_op("Swish", {t}, {Attribute::Float("alpha", alpha)}, 1, ops::kGecDomain)[0]);
      SCOPED_TRACE("alpha " + std::to_string(alpha) + ", n " + std::to_string(n));
      if (alpha == 1.f) {
        const Tensor sig = run_op("Sigmoid", {t})[0];
        const std::vector<float> spelled = values<float>(run_op("Mul", {t, sig})[0]);
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(got[i] == spelled[i] || (std::isnan(got[i]) && std::isnan(spelled[i]))) << "at " << i;
      }
      if (n > 3) {  // +inf stays +inf (not inf * 1 computed as NaN)
        EXPECT_EQ(got[1], inf);
        got[1] = want[1] = 0.f;
      }
      expect_close(got, want, 1e-6f, 1e-7f);
    }
  // x = 2: 2 / (1 + e^-2) = 1.7615942; -1: -0.26894142; alpha 1.5 at 1: 0.81757448.
  EXPECT_NEAR(values<float>(run_op("Swish", {make<float>({}, {2.f})}, {Attribute::Float("alpha", 1.f)}, 1,
                                   ops::kGecDomain)[0])[0], 1.7615942f, 1e-6);
  EXPECT_NEAR(values<float>(run_op("Swish", {make<float>({}, {-1.f})}, {Attribute::Float("alpha", 1.f)}, 1,
                                   ops::kGecDomain)[0])[0], -0.26894142f, 1e-6);
  EXPECT_NEAR(values<float>(run_op("Swish", {make<float>({}, {1.f})}, {Attribute::Float("alpha", 1.5f)}, 1,
                                   ops::kGecDomain)[0])[0], 0.81757448f, 1e-6);
}

// Sigmoid (elementwise_simd.cc: exp_poly-inl.h's polynomial for e^-x)
// against double precision at 100001 points over [-100, 100]: within 2.5
// float ulp from -87 up (results from 1.6e-38); under 1.7e-38 absolute
// below (it gives 0 there); 1 at +inf, 0 at -inf, NaN kept. Swish alike
// within 3 ulp (one more rounding). On every Highway target this CPU has
// (without FMA, SSE4's MulAdd rounds twice).
TEST(ElementwiseUnary, SigmoidAndSwishWithinAFewUlpOfDoublePrecision) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x;
  for (int i = 0; i <= 100000; ++i) x.push_back(-100.f + 200.f * static_cast<float>(i) / 100000.f);
  const size_t n = x.size();
  x.push_back(inf);
  x.push_back(-inf);
  x.push_back(kNaN);
  const auto t = make<float>({static_cast<int64_t>(x.size())}, x);
  for_each_hwy_target([&] {
    const std::vector<float> sig = values<float>(run_op("Sigmoid", {t})[0]);
    const std::vector<float> sw =
        values<float>(run_op("Swish", {t}, {Attribute::Float("alpha", 1.f)}, 1, ops::kGecDomain)[0]);
    const auto ulps = [inf](float got, double want) {
      const float w = static_cast<float>(want);
      return std::fabs(static_cast<double>(got) - want) /
             (static_cast<double>(std::nextafter(std::fabs(w), inf)) - std::fabs(w));
    };
    for (size_t i = 0; i < n; ++i) {
      const double xd = x[i], s = 1.0 / (1.0 + std::exp(-xd));
      if (xd >= -87) {
        EXPECT_LE(ulps(sig[i], s), 2.5) << "Sigmoid(" << x[i] << ") = " << sig[i] << ", want " << s;
        if (std::fabs(xd * s) >= std::numeric_limits<float>::min()) {
          EXPECT_LE(ulps(sw[i], xd * s), 3.0) << "Swish(" << x[i] << ") = " << sw[i] << ", want " << xd * s;
        }
      } else {
        EXPECT_LE(std::fabs(sig[i] - s), 1.7e-38) << x[i];
      }
    }
    EXPECT_EQ(sig[n], 1.f);
    EXPECT_EQ(sig[n + 1], 0.f);
    EXPECT_TRUE(std::isnan(sig[n + 2]));
    EXPECT_EQ(sw[n], inf);
    EXPECT_TRUE(std::isnan(sw[n + 1]));  // -inf * 0
    EXPECT_TRUE(std::isnan(sw[n + 2]));
  });
}

// LeakyRelu, HardSigmoid, HardSwish and Clip (float32: the vector loop of
// elementwise_simd.h) against their ONNX formulas evaluated element by
// element in float, bit for bit: each product and sum rounded on its own.
// Random signs (the case a branch per element mispredicts), +-inf, NaN,
// lengths with full vectors and tails, and one large enough to be split
// across run_op's 2 threads; Clip also with min > max (every element becomes max).
TEST(ElementwiseUnary, PiecewiseActivationsMatchTheirFormulasExactly) {
  const auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  const auto clamp01 = [](float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); };
  for (int64_t n : {1, 7, 16, 17, 33, 70001}) {
    std::vector<float> x(static_cast<size_t>(n));
    uint32_t r = 12345;
    for (auto& v : x) {
      r = r * 1664525u + 1013904223u;
      v = static_cast<float>(static_cast<int32_t>(r >> 8) - (1 << 23)) / static_cast<float>(1 << 20);  // about [-8, 8)
    }
    x[0] = kNaN;
    if (n > 2) x[1] = kInf;
    if (n > 3) x[2] = -kInf;
    if (n > 4) x[3] = -0.f;
    const Tensor t = make<float>({n}, x);
    struct Case {
      std::string op;
      std::vector<Attribute> attrs;
      std::function<float(float)> f;
    };
    const float a = 0.15f, b = 0.45f;
    for (const Case& c : std::vector<Case>{
             {"LeakyRelu", {Attribute::Float("alpha", a)}, [&](float v) { return v < 0.f ? a * v : v; }},
             {"HardSigmoid", {Attribute::Float("alpha", a), Attribute::Float("beta", b)},
              [&](float v) { return clamp01(a * v + b); }},
             {"HardSwish", {}, [&](float v) { return v * clamp01(v * (1.f / 6.f) + 0.5f); }}}) {
      SCOPED_TRACE(c.op + ", n " + std::to_string(n));
      const std::vector<float> got = values<float>(run_op(c.op, {t}, c.attrs)[0]);  // on 2 threads
      ASSERT_EQ(got.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same(got[i], c.f(x[i]))) << "at " << i << ": x " << x[i];
    }
    for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-1.5f, 2.f}, {3.f, 1.f}}) {
      SCOPED_TRACE("Clip " + std::to_string(lo) + ".." + std::to_string(hi) + ", n " + std::to_string(n));
      const std::vector<float> got =
          values<float>(run_op("Clip", {t, make<float>({}, {lo}), make<float>({}, {hi})})[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        float v = x[i] < lo ? lo : x[i];
        v = v > hi ? hi : v;
        ASSERT_TRUE(same(got[i], v)) << "at " << i << ": x " << x[i];
      }
    }
  }
}

TEST(ElementwiseUnary, ReluNegAbsSignOnIntegers) {
  auto x = make<int32_t>({4}, {-3, 0, 5, -1});
  EXPECT_EQ(values<int32_t>(run_op("Relu", {x})[0]), (std::vector<int32_t>{0, 0, 5, 0}));
  EXPECT_EQ(values<int32_t>(run_op("Neg", {x})[0]), (std::vector<int32_t>{3, 0, -5, 1}));
  EXPECT_EQ(values<int32_t>(run_op("Abs", {x})[0]), (std::vector<int32_t>{3, 0, 5, 1}));
  EXPECT_EQ(values<int32_t>(run_op("Sign", {x})[0]), (std::vector<int32_t>{-1, 0, 1, -1}));
}

TEST(ElementwiseUnary, MathFunctionsHandValues) {
  EXPECT_NEAR(run1("Sigmoid", 0.f), 0.5f, 1e-7);
  EXPECT_NEAR(run1("Sigmoid", 2.f), 0.8807970779778823f, 1e-6);
  EXPECT_EQ(run1("Sigmoid", -1000.f), 0.f);
  EXPECT_NEAR(run1("Tanh", 1.f), 0.7615941559557649f, 1e-6);
  EXPECT_NEAR(run1("Erf", 1.f), 0.8427007929497149f, 1e-6);
  EXPECT_NEAR(run1("Exp", 1.f), 2.718281828459045f, 1e-6);
  EXPECT_NEAR(run1("Log", 2.718281828459045f), 1.f, 1e-6);
  EXPECT_TRUE(std::isnan(run1("Log", -1.f)));
  EXPECT_EQ(run1("Sqrt", 9.f), 3.f);
  EXPECT_EQ(run1("Reciprocal", 4.f), 0.25f);
  EXPECT_EQ(run1("Floor", -1.5f), -2.f);
  EXPECT_EQ(run1("Ceil", -1.5f), -1.f);
  EXPECT_NEAR(run1("Sin", 0.5f), 0.479425538604203f, 1e-6);
  EXPECT_NEAR(run1("Cos", 0.5f), 0.8775825618903728f, 1e-6);
}

TEST(ElementwiseUnary, RoundIsHalfToEven) {
  auto out = run_op("Round", {make<float>({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f, 2.f, -3.f}));
}

TEST(ElementwiseUnary, ActivationsWithDefaultAttributes) {
  EXPECT_NEAR(run1("Softplus", 0.f), 0.6931471805599453f, 1e-6);
  EXPECT_NEAR(run1("Softplus", 100.f), 100.f, 1e-4);
  EXPECT_EQ(run1("Softsign", 3.f), 0.75f);
  EXPECT_NEAR(run1("HardSigmoid", 1.f), 0.7f, 1e-6);  // 0.2 * 1 + 0.5
  EXPECT_EQ(run1("HardSigmoid", -3.f), 0.f);
  EXPECT_EQ(run1("HardSigmoid", 3.f), 1.f);
  EXPECT_NEAR(run1("HardSwish", 1.f), 2.f / 3.f, 1e-6);  // 1 * (1/6 + 1/2)
  EXPECT_EQ(run1("HardSwish", -4.f), 0.f);
  EXPECT_EQ(run1("HardSwish", 4.f), 4.f);
  EXPECT_NEAR(run1("LeakyRelu", -2.f), -0.02f, 1e-7);
  EXPECT_EQ(run1("LeakyRelu", 3.f), 3.f);
  EXPECT_NEAR(run1("Elu", -1.f), -0.6321205588285577f, 1e-6);
  EXPECT_NEAR(run1("Selu", 1.f), 1.0507009873554805f, 1e-6);
  EXPECT_NEAR(run1("Selu", -1.f), -1.1113307378125625f, 1e-6);
  EXPECT_NEAR(run1("Celu", -1.f), -0.6321205588285577f, 1e-6);
  EXPECT_EQ(run1("ThresholdedRelu", 1.f), 0.f);  // alpha 1: strictly greater passes
  EXPECT_EQ(run1("ThresholdedRelu", 1.5f), 1.5f);
  EXPECT_NEAR(run1("Mish", 1.f), 0.8650983882673103f, 1e-6);
}

TEST(ElementwiseUnary, ActivationAttributes) {
  EXPECT_NEAR(run1("LeakyRelu", -2.f, {Attribute::Float("alpha", 0.5f)}), -1.f, 1e-7);
  EXPECT_NEAR(run1("Elu", -1.f, {Attribute::Float("alpha", 2.f)}), -1.2642411176571153f, 1e-6);
  // Celu alpha 2: 2 * (exp(-1/2) - 1)
  EXPECT_NEAR(run1("Celu", -1.f, {Attribute::Float("alpha", 2.f)}), -0.786938680574733f, 1e-6);
  EXPECT_NEAR(run1("HardSigmoid", 1.f, {Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 0.f)}),
              0.5f, 1e-7);
}

TEST(ElementwiseUnary, SignIsNaNIsInfNot) {
  auto x = make<float>({5}, {-2.f, 0.f, kNaN, kInf, -kInf});
  expect_close(values<float>(run_op("Sign", {x})[0]), {-1.f, 0.f, kNaN, 1.f, -1.f});
  EXPECT_EQ(values<bool>(run_op("IsNaN", {x})[0]), (std::vector<bool>{false, false, true, false, false}));
  EXPECT_EQ(values<bool>(run_op("IsInf", {x})[0]), (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(values<bool>(run_op("IsInf", {x}, {Attribute::Int("detect_negative", 0)})[0]),
            (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(values<bool>(run_op("Not", {make<bool>({3}, {true, false, true})})[0]),
            (std::vector<bool>{false, true, false}));
}

TEST(ElementwiseUnary, EmptyAndFloat64AndUnsupportedDtype) {
  auto e = run_op("Sigmoid", {make<float>({0, 4}, {})});
  EXPECT_EQ(e[0].shape(), (Shape{0, 4}));
  auto d = run_op("Exp", {make<double>({2}, {0.0, 1.0})});
  EXPECT_NEAR(values<double>(d[0])[1], 2.718281828459045, 1e-14);
  EXPECT_THROW(run_op("Exp", {make<int32_t>({2}, {1, 2})}), Error);
}

TEST(ElementwiseUnary, LargeTensorUsesThreadsCorrectly) {
  const int64_t n = 100003;
  std::vector<float> x = iota_f(n, -50000.f), want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] < 0 ? 0.01f * x[i] : x[i];
  expect_close(values<float>(run_op("LeakyRelu", {make<float>({n}, x)})[0]), want);
}

// ---- Clip ----------------------------------------------------------------------------

TEST(ElementwiseClip, MinMaxNaNAndMissingInputs) {
  auto x = make<float>({5}, {-3.f, 0.5f, kNaN, 7.f, 2.f});
  auto out = run_op("Clip", {x, make<float>({}, {0.f}), make<float>({}, {2.f})});
  expect_close(values<float>(out[0]), {0.f, 0.5f, kNaN, 2.f, 2.f});
  auto only_max = run_op("Clip", {x, Tensor(), make<float>({}, {1.f})});
  expect_close(values<float>(only_max[0]), {-3.f, 0.5f, kNaN, 1.f, 1.f});
  auto none = run_op("Clip", {x});
  expect_close(values<float>(none[0]), {-3.f, 0.5f, kNaN, 7.f, 2.f});
}

TEST(ElementwiseClip, MinAboveMaxGivesMax) {
  auto out = run_op("Clip", {make<float>({3}, {-5.f, 1.5f, 9.f}), make<float>({}, {2.f}),
                             make<float>({}, {1.f})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1.f, 1.f, 1.f}));
}

TEST(ElementwiseClip, Integers) {
  auto out = run_op("Clip", {make<int64_t>({4}, {-9, 3, 4, 100}), make<int64_t>({}, {0}),
                             make<int64_t>({}, {10})});
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{0, 3, 4, 10}));
}

// ---- binary --------------------------------------------------------------------------

TEST(ElementwiseBinary, SameShapeOddSizes) {
  for (int64_t n : {1, 7, 16, 17, 33}) {
    std::vector<float> a = iota_f(n, 1.f), b = iota_f(n, 0.5f, 2.f);
    std::vector<float> sum(n), diff(n), prod(n), quot(n);
    for (int64_t i = 0; i < n; ++i) {
      sum[i] = a[i] + b[i];
      diff[i] = a[i] - b[i];
      prod[i] = a[i] * b[i];
      quot[i] = a[i] / b[i];
    }
    auto ta = make<float>({n}, a), tb = make<float>({n}, b);
    expect_close(values<float>(run_op("Add", {ta, tb})[0]), sum);
    expect_close(values<float>(run_op("Sub", {ta, tb})[0]), diff);
    expect_close(values<float>(run_op("Mul", {ta, tb})[0]), prod);
    expect_close(values<float>(run_op("Div", {ta, tb})[0]), quot);
  }
}

TEST(ElementwiseBinary, Broadcast214With31) {
  // [2,1,4] - [3,1] -> [2,3,4]; out[i,j,k] = a[i,0,k] - b[j,0].
  std::vector<float> a = iota_f(8), b = {100.f, 200.f, 300.f};
  auto out = run_op("Sub", {make<float>({2, 1, 4}, a), make<float>({3, 1}, b)});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3, 4}));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back(a[i * 4 + k] - b[j]);
  EXPECT_EQ(values<float>(out[0]), want);
}

TEST(ElementwiseBinary, ScalarAndRowVectorAndOuterBroadcast) {
  auto s = run_op("Mul", {make<float>({}, {3.f}), make<float>({3}, {1.f, 2.f, 3.f})});
  EXPECT_EQ(s[0].shape(), (Shape{3}));
  EXPECT_EQ(values<float>(s[0]), (std::vector<float>{3.f, 6.f, 9.f}));
  auto both = run_op("Add", {make<float>({}, {1.f}), make<float>({}, {2.f})});
  EXPECT_EQ(both[0].shape(), Shape{});
  EXPECT_EQ(values<float>(both[0]), (std::vector<float>{3.f}));
  // [3,1] + [1,2] -> [3,2]: both sides broadcast.
  auto outer = run_op("Add", {make<float>({3, 1}, {0.f, 10.f, 20.f}), make<float>({1, 2}, {1.f, 2.f})});
  EXPECT_EQ(values<float>(outer[0]), (std::vector<float>{1.f, 2.f, 11.f, 12.f, 21.f, 22.f}));
}

TEST(ElementwiseBinary, EmptyTensors) {
  auto out = run_op("Add", {make<float>({0, 3}, {}), make<float>({3}, {1.f, 2.f, 3.f})});
  EXPECT_EQ(out[0].shape(), (Shape{0, 3}));
  auto cmp = run_op("Less", {make<float>({2, 0}, {}), make<float>({1}, {1.f})});
  EXPECT_EQ(cmp[0].shape(), (Shape{2, 0}));
  EXPECT_EQ(cmp[0].dtype(), DType::kBool);
}

TEST(ElementwiseBinary, LargeBroadcastsAcrossThreads) {
  // Many rows ([300,200] + [200]), few long rows ([3,40000] + [3,1]) and one
  // row ([70001] + []) take the three parallel paths of the row walker.
  struct Case { Shape a, b; };
  for (const Case& c : {Case{{300, 200}, {200}}, Case{{3, 40000}, {3, 1}}, Case{{70001}, {}}}) {
    const int64_t na = shape_numel(c.a), nb = shape_numel(c.b);
    std::vector<float> a = iota_f(na, 0.f, 0.5f), b = iota_f(nb, 7.f, 3.f);
    auto out = run_op("Add", {make<float>(c.a, a), make<float>(c.b, b)});
    const int64_t cols = c.a.back();
    std::vector<float> want(na);
    for (int64_t i = 0; i < na; ++i) {
      const int64_t bi = c.b.empty() ? 0 : (c.b.back() == 1 ? i / cols : i % cols);
      want[i] = a[i] + b[bi];
    }
    expect_close(values<float>(out[0]), want);
  }
}

TEST(ElementwiseBinary, IntegerDivisionTruncatesAndModSigns) {
  auto a = make<int32_t>({4}, {7, -7, 7, -7});
  auto b = make<int32_t>({4}, {2, 2, -2, -2});
  EXPECT_EQ(values<int32_t>(run_op("Div", {a, b})[0]), (std::vector<int32_t>{3, -3, -3, 3}));
  // fmod=0: sign of the divisor (Python %); fmod=1: sign of the dividend (C fmod).
  EXPECT_EQ(values<int32_t>(run_op("Mod", {a, b})[0]), (std::vector<int32_t>{1, 1, -1, -1}));
  EXPECT_EQ(values<int32_t>(run_op("Mod", {a, b}, {Attribute::Int("fmod", 1)})[0]),
            (std::vector<int32_t>{1, -1, 1, -1}));
  auto f = run_op("Mod", {make<float>({2}, {5.5f, -5.5f}), make<float>({}, {2.f})},
                  {Attribute::Int("fmod", 1)});
  EXPECT_EQ(values<float>(f[0]), (std::vector<float>{1.5f, -1.5f}));
  // Integer division by zero is an error, not a silent 0.
  EXPECT_THROW(run_op("Div", {make<int64_t>({2}, {5, 6}), make<int64_t>({2}, {0, 3})}), Error);
}

TEST(ElementwiseBinary, PowMixedDtypes) {
  auto ff = run_op("Pow", {make<float>({3}, {2.f, 4.f, 9.f}), make<float>({3}, {3.f, 0.5f, -1.f})});
  expect_close(values<float>(ff[0]), {8.f, 2.f, 1.f / 9.f});
  auto fi = run_op("Pow", {make<float>({2}, {1.5f, -2.f}), make<int64_t>({}, {2})});
  EXPECT_EQ(values<float>(fi[0]), (std::vector<float>{2.25f, 4.f}));
  auto ii = run_op("Pow", {make<int64_t>({3}, {2, 3, -2}), make<int64_t>({3}, {10, 3, 3})});
  EXPECT_EQ(values<int64_t>(ii[0]), (std::vector<int64_t>{1024, 27, -8}));
  auto sq = run_op("Pow", {make<float>({2, 2}, {1.f, -2.f, 3.f, kNaN}), make<float>({}, {2.f})});
  expect_close(values<float>(sq[0]), {1.f, 4.f, 9.f, kNaN});
}

TEST(ElementwiseBinary, ComparisonsGiveBool) {
  auto a = make<float>({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, kNaN});
  auto b = make<float>({3}, {2.f, 2.f, 2.f});
  auto lt = run_op("Less", {a, b});
  EXPECT_EQ(lt[0].dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(lt[0]), (std::vector<bool>{true, false, false, false, false, false}));
  EXPECT_EQ(values<bool>(run_op("LessOrEqual", {a, b})[0]),
            (std::vector<bool>{true, true, false, false, false, false}));
  EXPECT_EQ(values<bool>(run_op("Greater", {a, b})[0]),
            (std::vector<bool>{false, false, true, true, true, false}));
  EXPECT_EQ(values<bool>(run_op("GreaterOrEqual", {a, b})[0]),
            (std::vector<bool>{false, true, true, true, true, false}));
  EXPECT_EQ(values<bool>(run_op("Equal", {a, b})[0]),
            (std::vector<bool>{false, true, false, false, false, false}));
  auto eb = run_op("Equal", {make<bool>({2}, {true, false}), make<bool>({}, {false})});
  EXPECT_EQ(values<bool>(eb[0]), (std::vector<bool>{false, true}));
  auto ei = run_op("Equal", {make<int64_t>({3}, {1, 2, 3}), make<int64_t>({1}, {2})});
  EXPECT_EQ(values<bool>(ei[0]), (std::vector<bool>{false, true, false}));
}

TEST(ElementwiseBinary, LogicOps) {
  auto a = make<bool>({4}, {false, false, true, true});
  auto b = make<bool>({4}, {false, true, false, true});
  EXPECT_EQ(values<bool>(run_op("And", {a, b})[0]), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(values<bool>(run_op("Or", {a, b})[0]), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(values<bool>(run_op("Xor", {a, b})[0]), (std::vector<bool>{false, true, true, false}));
  auto bc = run_op("And", {make<bool>({2, 1}, {true, false}), make<bool>({2}, {true, false})});
  EXPECT_EQ(values<bool>(bc[0]), (std::vector<bool>{true, false, false, false}));
}

TEST(ElementwiseBinary, PReluSlopePerChannel) {
  auto out = run_op("PRelu", {make<float>({2, 3}, {-1.f, -2.f, 3.f, 4.f, -5.f, kNaN}),
                              make<float>({3}, {0.1f, 0.2f, 0.3f})});
  expect_close(values<float>(out[0]), {-0.1f, -0.4f, 3.f, 4.f, -1.f, kNaN});
  EXPECT_THROW(run_op("PRelu", {make<float>({3}, {1, 2, 3}), make<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
               Error);
}

TEST(ElementwiseBinary, IncompatibleShapesAndDtypesAreErrors) {
  EXPECT_THROW(run_op("Add", {make<float>({2}, {1, 2}), make<float>({3}, {1, 2, 3})}), Error);
  EXPECT_THROW(run_op("Add", {make<float>({2}, {1, 2}), make<int32_t>({2}, {1, 2})}), Error);
}

// ---- Where ---------------------------------------------------------------------------

TEST(ElementwiseWhere, ThreeWayBroadcast) {
  // cond [2,1], x [1,3], y [] -> [2,3]
  auto out = run_op("Where", {make<bool>({2, 1}, {true, false}), make<float>({1, 3}, {1.f, 2.f, 3.f}),
                              make<float>({}, {-1.f})});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1.f, 2.f, 3.f, -1.f, -1.f, -1.f}));
  auto ints = run_op("Where", {make<bool>({3}, {false, true, false}), make<int64_t>({3}, {1, 2, 3}),
                               make<int64_t>({3}, {7, 8, 9})});
  EXPECT_EQ(values<int64_t>(ints[0]), (std::vector<int64_t>{7, 2, 9}));
}

// ---- variadic ------------------------------------------------------------------------

TEST(ElementwiseVariadic, MaxMinPropagateNaNOnBroadcastPath) {
  auto a = make<float>({3}, {kNaN, 1.f, 2.f});
  auto s = make<float>({}, {1.5f});
  expect_close(values<float>(run_op("Max", {a, s})[0]), {kNaN, 1.5f, 2.f});
  expect_close(values<float>(run_op("Min", {s, a})[0]), {kNaN, 1.f, 1.5f});
  auto n = make<float>({}, {kNaN});
  expect_close(values<float>(run_op("Max", {a, n})[0]), {kNaN, kNaN, kNaN});
  expect_close(values<float>(run_op("Min", {n, a})[0]), {kNaN, kNaN, kNaN});
}

TEST(ElementwiseVariadic, ThreeInputsWithBroadcast) {
  auto a = make<float>({2, 2}, {1.f, 5.f, 3.f, 0.f});
  auto b = make<float>({2}, {2.f, 4.f});
  auto c = make<float>({2, 1}, {0.f, 10.f});
  EXPECT_EQ(values<float>(run_op("Max", {a, b, c})[0]), (std::vector<float>{2.f, 5.f, 10.f, 10.f}));
  EXPECT_EQ(values<float>(run_op("Min", {a, b, c})[0]), (std::vector<float>{0.f, 0.f, 2.f, 0.f}));
  EXPECT_EQ(values<float>(run_op("Sum", {a, b, c})[0]), (std::vector<float>{3.f, 9.f, 15.f, 14.f}));
  expect_close(values<float>(run_op("Mean", {a, b, c})[0]), {1.f, 3.f, 5.f, 14.f / 3.f});
  auto one = run_op("Sum", {a});
  EXPECT_EQ(values<float>(one[0]), (std::vector<float>{1.f, 5.f, 3.f, 0.f}));
  // The broadcast-only input comes first: the output is still the full shape.
  auto grow = run_op("Max", {make<int32_t>({}, {3}), make<int32_t>({3}, {1, 4, 2})});
  EXPECT_EQ(values<int32_t>(grow[0]), (std::vector<int32_t>{3, 4, 3}));
}

// ---- Cast ----------------------------------------------------------------------------

TEST(ElementwiseCast, FloatToIntTruncatesTowardZero) {
  auto out = run_op("Cast", {make<float>({4}, {2.7f, -2.7f, 0.4f, -0.9f})},
                    {Attribute::Int("to", static_cast<int64_t>(DType::kInt32))});
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{2, -2, 0, 0}));
}

TEST(ElementwiseCast, BoolConversions) {
  auto tb = run_op("Cast", {make<float>({4}, {0.f, 0.5f, kNaN, -0.f})},
                   {Attribute::Int("to", static_cast<int64_t>(DType::kBool))});
  EXPECT_EQ(values<bool>(tb[0]), (std::vector<bool>{false, true, true, false}));
  auto fb = run_op("Cast", {make<bool>({2}, {true, false})},
                   {Attribute::Int("to", static_cast<int64_t>(DType::kFloat32))});
  EXPECT_EQ(values<float>(fb[0]), (std::vector<float>{1.f, 0.f}));
  auto il = run_op("Cast", {make<int64_t>({2}, {-3, 1 << 20})},
                   {Attribute::Int("to", static_cast<int64_t>(DType::kFloat64))});
  EXPECT_EQ(values<double>(il[0]), (std::vector<double>{-3.0, 1048576.0}));
}

TEST(ElementwiseCast, Float16AndBFloat16Bits) {
  auto h = run_op("Cast", {make<float>({7}, {1.f, -2.f, 65504.f, 70000.f, 5.9604645e-8f, 0.1f, kNaN})},
                  {Attribute::Int("to", static_cast<int64_t>(DType::kFloat16))});
  ASSERT_EQ(h[0].dtype(), DType::kFloat16);
  const uint16_t* hb = h[0].as<uint16_t>();
  EXPECT_EQ(hb[0], 0x3c00);
  EXPECT_EQ(hb[1], 0xc000);
  EXPECT_EQ(hb[2], 0x7bff);  // largest half
  EXPECT_EQ(hb[3], 0x7c00);  // overflow -> inf
  EXPECT_EQ(hb[4], 0x0001);  // smallest subnormal 2^-24
  EXPECT_EQ(hb[5], 0x2e66);  // 0.1 rounds to 0.0999755859375
  EXPECT_EQ(hb[6] & 0x7c00, 0x7c00);
  EXPECT_NE(hb[6] & 0x03ff, 0);
  auto back = run_op("Cast", {h[0]}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat32))});
  std::vector<float> bv = values<float>(back[0]);
  EXPECT_EQ(bv[0], 1.f);
  EXPECT_EQ(bv[1], -2.f);
  EXPECT_EQ(bv[2], 65504.f);
  EXPECT_EQ(bv[3], kInf);
  EXPECT_EQ(bv[4], 5.9604645e-8f);
  EXPECT_EQ(bv[5], 0.0999755859375f);
  EXPECT_TRUE(std::isnan(bv[6]));
  auto b = run_op("Cast", {make<float>({3}, {1.f, 3.140625f, -0.5f})},
                  {Attribute::Int("to", static_cast<int64_t>(DType::kBFloat16))});
  const uint16_t* bb = b[0].as<uint16_t>();
  EXPECT_EQ(bb[0], 0x3f80);
  EXPECT_EQ(bb[1], 0x4049);
  EXPECT_EQ(bb[2], 0xbf00);
}

TEST(ElementwiseCast, CastLikeTakesTargetDtype) {
  auto out = run_op("CastLike", {make<double>({2}, {1.9, -1.9}), make<int64_t>({}, {0})});
  EXPECT_EQ(out[0].dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{1, -1}));
}

TEST(ElementwiseCast, ComplexTargetIsUnsupported) {
  try {
    run_op("Cast", {make<float>({1}, {1.f})}, {Attribute::Int("to", static_cast<int64_t>(DType::kComplex64))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
}

}  // namespace
}  // namespace gec
