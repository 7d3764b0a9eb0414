// Reduce* (axes as input 1, keepdims, noop_with_empty_axes) and ArgMax/ArgMin
// kernels through their infer functions. Expected values are hand-computed
// or come from a naive reference loop over explicit indices in this file.
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

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

/// Reference: folds x over the axes in `axes` (normalized), in double.
std::vector<float> naive_reduce(const std::vector<float>& x, const Shape& shape, const std::set<int64_t>& axes,
                                double init, const std::function<double(double, double)>& fold,
                                const std::function<double(double, int64_t)>& fin) {
  const size_t r = shape.size();
  int64_t out_n = 1, count = 1;
  for (size_t d = 0; d < r; ++d) (axes.count(d) ? count : out_n) *= shape[d];
  std::vector<double> acc(static_cast<size_t>(out_n), init);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t rem = i, o = 0, mul = 1;
    for (size_t d = r; d-- > 0;) {
      const int64_t idx = rem % shape[d];
      rem /= shape[d];
      if (!axes.count(d)) {
        o += idx * mul;
        mul *= shape[d];
      }
    }
    acc[o] = fold(acc[o], x[i]);
  }
  std::vector<float> out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(fin(acc[i], count));
  return out;
}

std::vector<float> naive_sum(const std::vector<float>& x, const Shape& s, const std::set<int64_t>& axes) {
  return naive_reduce(x, s, axes, 0.0, [](double a, double v) { return a + v; },
                      [](double a, int64_t) { return a; });
}

Tensor axes_of(std::vector<int64_t> a) { return make<int64_t>({static_cast<int64_t>(a.size())}, a); }

std::vector<Tensor> reduce(const std::string& op, const Tensor& x, const Tensor& axes, int64_t keepdims = 1,
                           int64_t noop = 0) {
  return run_op(op, {x, axes},
                {Attribute::Int("keepdims", keepdims), Attribute::Int("noop_with_empty_axes", noop)});
}

// Found by fuzzing gom_load: ReduceSumSquare of large int64s overflowed a
// signed multiply (undefined). Integer reductions wrap around, as numpy.
TEST(KernelsReduce, IntegerReductionsWrapAround) {
  const int64_t big = int64_t{1} << 62;
  auto y = reduce("ReduceSumSquare", make<int64_t>({2}, {big, 3}), make<int64_t>({1}, {0}), 0);
  EXPECT_EQ(values<int64_t>(y[0]), (std::vector<int64_t>{9})) << "(2^62)^2 wraps to 0";
  y = reduce("ReduceSum", make<int64_t>({2}, {INT64_MAX, 1}), make<int64_t>({1}, {0}), 0);
  EXPECT_EQ(values<int64_t>(y[0]), (std::vector<int64_t>{INT64_MIN}));
}


TEST(ReduceKernel, SumMiddleAxisKeepdims) {
  const Shape s{2, 3, 4};
  std::vector<float> x = iota_f(24);
  auto out = reduce("ReduceSum", make<float>(s, x), axes_of({1}));
  ASSERT_EQ(out[0].shape(), (Shape{2, 1, 4}));
  // sum_j (12 i + 4 j + k) = 36 i + 3 k + 12
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57}));
}

TEST(ReduceKernel, NegativeAxesAndNoKeepdims) {
  const Shape s{2, 3, 4};
  std::vector<float> x = iota_f(24, -5.f, 0.5f);
  auto out = reduce("ReduceSum", make<float>(s, x), axes_of({-1}), 0);
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  expect_close(values<float>(out[0]), naive_sum(x, s, {2}));
  auto two = reduce("ReduceSum", make<float>(s, x), axes_of({0, -1}), 0);
  ASSERT_EQ(two[0].shape(), (Shape{3}));
  expect_close(values<float>(two[0]), naive_sum(x, s, {0, 2}));
  auto lead = reduce("ReduceSum", make<float>(s, x), axes_of({0}), 1);
  ASSERT_EQ(lead[0].shape(), (Shape{1, 3, 4}));
  expect_close(values<float>(lead[0]), naive_sum(x, s, {0}));
  auto mid2 = reduce("ReduceSum", make<float>(s, x), axes_of({0, 1}), 0);
  ASSERT_EQ(mid2[0].shape(), (Shape{4}));
  expect_close(values<float>(mid2[0]), naive_sum(x, s, {0, 1}));
}

TEST(ReduceKernel, EmptyAxesMeansAllUnlessNoop) {
  auto x = make<float>({2, 2}, {1.f, 2.f, 3.f, 4.f});
  auto all = run_op("ReduceSum", {x});
  EXPECT_EQ(all[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(values<float>(all[0]), (std::vector<float>{10.f}));
  auto all_empty_input = reduce("ReduceMean", x, axes_of({}), 0);
  EXPECT_EQ(all_empty_input[0].shape(), Shape{});
  EXPECT_EQ(values<float>(all_empty_input[0]), (std::vector<float>{2.5f}));
  auto noop = reduce("ReduceSum", x, axes_of({}), 1, 1);
  EXPECT_EQ(noop[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(noop[0]), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  auto noop_missing = run_op("ReduceMax", {x, Tensor()}, {Attribute::Int("noop_with_empty_axes", 1)});
  EXPECT_EQ(values<float>(noop_missing[0]), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
}

TEST(ReduceKernel, AllReductionsHandValues) {
  auto x = make<float>({2, 2}, {1.f, -2.f, 3.f, 4.f});
  auto ax = axes_of({1});
  auto v = [&](const char* op) { return values<float>(reduce(op, x, ax, 0)[0]); };
  EXPECT_EQ(v("ReduceSum"), (std::vector<float>{-1.f, 7.f}));
  EXPECT_EQ(v("ReduceMean"), (std::vector<float>{-0.5f, 3.5f}));
  EXPECT_EQ(v("ReduceMax"), (std::vector<float>{1.f, 4.f}));
  EXPECT_EQ(v("ReduceMin"), (std::vector<float>{-2.f, 3.f}));
  EXPECT_EQ(v("ReduceProd"), (std::vector<float>{-2.f, 12.f}));
  EXPECT_EQ(v("ReduceSumSquare"), (std::vector<float>{5.f, 25.f}));
  EXPECT_EQ(v("ReduceL1"), (std::vector<float>{3.f, 7.f}));
  expect_close(v("ReduceL2"), {std::sqrt(5.f), 5.f});
  auto pos = make<float>({2, 2}, {1.f, 2.f, 3.f, 4.f});
  expect_close(values<float>(reduce("ReduceLogSum", pos, ax, 0)[0]), {std::log(3.f), std::log(7.f)});
  // ln(e^1 + e^2) = 2.3132616875182228, ln(e^3 + e^4) = 4.313261687518223
  expect_close(values<float>(reduce("ReduceLogSumExp", pos, ax, 0)[0]), {2.3132616875182228f, 4.313261687518223f});
}

TEST(ReduceKernel, LogSumExpDoesNotOverflow) {
  auto out = reduce("ReduceLogSumExp", make<float>({3}, {1000.f, 1000.f, -kInf}), axes_of({0}), 0);
  expect_close(values<float>(out[0]), {1000.6931471805599f});
  auto all_neg_inf = reduce("ReduceLogSumExp", make<float>({2}, {-kInf, -kInf}), axes_of({0}), 0);
  EXPECT_EQ(values<float>(all_neg_inf[0])[0], -kInf);
}

TEST(ReduceKernel, MaxMinPropagateNaN) {
  // NaN in the contiguous (shape A) and row-accumulate (shape B) loops.
  auto x = make<float>({2, 3}, {1.f, kNaN, 3.f, 4.f, 5.f, 6.f});
  expect_close(values<float>(reduce("ReduceMax", x, axes_of({1}), 0)[0]), {kNaN, 6.f});
  expect_close(values<float>(reduce("ReduceMin", x, axes_of({1}), 0)[0]), {kNaN, 4.f});
  expect_close(values<float>(reduce("ReduceMax", x, axes_of({0}), 0)[0]), {4.f, kNaN, 6.f});
  expect_close(values<float>(reduce("ReduceMin", x, axes_of({0}), 0)[0]), {1.f, kNaN, 3.f});
}

TEST(ReduceKernel, OddInnerLengths) {
  for (int64_t n : {1, 7, 16, 17, 33}) {
    const Shape s{3, n};
    std::vector<float> x = iota_f(3 * n, -10.f, 0.75f);
    expect_close(values<float>(reduce("ReduceSum", make<float>(s, x), axes_of({1}), 0)[0]), naive_sum(x, s, {1}));
    auto mx = naive_reduce(x, s, {1}, -1e30, [](double a, double v) { return std::max(a, v); },
                           [](double a, int64_t) { return a; });
    expect_close(values<float>(reduce("ReduceMax", make<float>(s, x), axes_of({1}), 0)[0]), mx);
    expect_close(values<float>(reduce("ReduceSum", make<float>(s, x), axes_of({0}), 0)[0]), naive_sum(x, s, {0}));
  }
}

TEST(ReduceKernel, LargeTensorsAcrossThreads) {
  struct Case { Shape s; std::set<int64_t> axes; };
  for (const Case& c : {Case{{64, 1000}, {0}}, Case{{64, 1000}, {1}}, Case{{3, 50000}, {0}},
                        Case{{50000, 3}, {0}}, Case{{4, 100, 200}, {1}}}) {
    const int64_t n = shape_numel(c.s);
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37) % 101) / 101.f - 0.5f;
    std::vector<int64_t> ax(c.axes.begin(), c.axes.end());
    auto out = reduce("ReduceMean", make<float>(c.s, x), axes_of(ax), 0);
    auto want = naive_reduce(x, c.s, c.axes, 0.0, [](double a, double v) { return a + v; },
                             [](double a, int64_t k) { return a / static_cast<double>(k); });
    expect_close(values<float>(out[0]), want, 1e-4f, 1e-5f);
  }
}

TEST(ReduceKernel, IntegerDtypes) {
  auto x = make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(values<int64_t>(reduce("ReduceSum", x, axes_of({1}), 0)[0]), (std::vector<int64_t>{6, 15}));
  EXPECT_EQ(values<int64_t>(reduce("ReduceMean", x, axes_of({1}), 0)[0]), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(values<int64_t>(reduce("ReduceProd", x, axes_of({0}), 0)[0]), (std::vector<int64_t>{4, 10, 18}));
  auto i32 = make<int32_t>({4}, {-7, 3, -9, 2});
  EXPECT_EQ(values<int32_t>(reduce("ReduceMax", i32, axes_of({0}), 0)[0]), (std::vector<int32_t>{3}));
  EXPECT_EQ(values<int32_t>(reduce("ReduceMin", i32, axes_of({0}), 0)[0]), (std::vector<int32_t>{-9}));
  EXPECT_EQ(values<int32_t>(reduce("ReduceL1", i32, axes_of({0}), 0)[0]), (std::vector<int32_t>{21}));
  EXPECT_THROW(reduce("ReduceLogSum", i32, axes_of({0}), 0), Error);
}

TEST(ReduceKernel, EmptySetAndScalarInput) {
  auto e = make<float>({2, 0}, {});
  auto sum = reduce("ReduceSum", e, axes_of({1}), 1);
  EXPECT_EQ(sum[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(sum[0]), (std::vector<float>{0.f, 0.f}));
  EXPECT_EQ(values<float>(reduce("ReduceProd", e, axes_of({1}), 0)[0]), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(values<float>(reduce("ReduceMax", e, axes_of({1}), 0)[0]), (std::vector<float>{-kInf, -kInf}));
  auto kept_empty = reduce("ReduceSum", e, axes_of({0}), 0);
  EXPECT_EQ(kept_empty[0].shape(), (Shape{0}));
  auto sq = run_op("ReduceSumSquare", {make<float>({}, {-3.f})});
  EXPECT_EQ(sq[0].shape(), Shape{});
  EXPECT_EQ(values<float>(sq[0]), (std::vector<float>{9.f}));
}

TEST(ReduceKernel, InferNeedsAxesValue) {
  // Reducing a size-1 axis keeps the values; the axis is bounds-checked.
  auto x = make<float>({3, 1}, {1.f, 2.f, 3.f});
  EXPECT_EQ(values<float>(reduce("ReduceL1", x, axes_of({1}), 0)[0]), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_THROW(reduce("ReduceSum", x, axes_of({2}), 0), Error);
  EXPECT_THROW(reduce("ReduceSum", x, axes_of({0, -2}), 0), Error);  // duplicate
}

// ---- ArgMax / ArgMin ------------------------------------------------------------------

std::vector<Tensor> arg(const std::string& op, const Tensor& x, int64_t axis, int64_t keep = 1, int64_t last = 0) {
  return run_op(op, {x}, {Attribute::Int("axis", axis), Attribute::Int("keepdims", keep),
                          Attribute::Int("select_last_index", last)});
}

TEST(ArgReduceKernel, TiesAndSelectLastIndex) {
  auto x = make<float>({2, 4}, {1.f, 5.f, 5.f, 0.f, -1.f, -3.f, 2.f, -3.f});
  auto mx = arg("ArgMax", x, 1);
  EXPECT_EQ(mx[0].dtype(), DType::kInt64);
  EXPECT_EQ(mx[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(mx[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, -1, 0, 1)[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, 1, 0)[0]), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, 1, 0, 1)[0]), (std::vector<int64_t>{3, 3}));
  auto col = arg("ArgMax", x, 0, 0);
  EXPECT_EQ(col[0].shape(), (Shape{4}));
  EXPECT_EQ(values<int64_t>(col[0]), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, 0, 0)[0]), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(ArgReduceKernel, NaNWinsAndIntegers) {
  auto x = make<float>({5}, {1.f, kNaN, 9.f, kNaN, 0.f});
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 0, 0)[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, 0, 0)[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 0, 0, 1)[0]), (std::vector<int64_t>{3}));
  auto i = make<int32_t>({2, 3}, {4, 9, 9, 7, 1, 8});
  EXPECT_EQ(values<int64_t>(arg("ArgMax", i, 1, 0)[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<int64_t>(arg("ArgMax", i, 0, 0)[0]), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ArgReduceKernel, MiddleAxisOfRank3) {
  const Shape s{2, 3, 2};
  std::vector<float> x = {0, 5, 3, 1, 2, 9, 8, 0, 8, 4, 1, 4};
  auto out = arg("ArgMax", make<float>(s, x), 1, 1);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 2}));
  // [0]: column k=0: 0,3,2 -> 1; k=1: 5,1,9 -> 2. [1]: k=0: 8,8,1 -> 0; k=1: 0,4,4 -> 1
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{1, 2, 0, 1}));
}

}  // namespace
}  // namespace gec
