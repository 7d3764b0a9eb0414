// MaxPool / AveragePool / global pools: hand-computed small cases (ONNX
// MaxPool-12, AveragePool-11; ceil_mode divisors as in ONNX Runtime).
#include <cstring>

#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1.f;
  return v;
}

TEST(NnMaxPool, TwoByTwoStride2) {
  auto out = run_op("MaxPool", {make<float>({1, 1, 4, 4}, iota(16))}, {ais("kernel_shape", {2, 2}), ais("strides", {2, 2})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(out[0]), {6, 8, 14, 16});
}

TEST(NnMaxPool, CeilModeKeepsPartialWindows) {
  auto x = make<float>({1, 1, 3, 3}, iota(9));
  auto ceil = run_op("MaxPool", {x}, {ais("kernel_shape", {2, 2}), ais("strides", {2, 2}), ai("ceil_mode", 1)});
  EXPECT_EQ(ceil[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(ceil[0]), {5, 6, 8, 9});
  auto floor = run_op("MaxPool", {x}, {ais("kernel_shape", {2, 2}), ais("strides", {2, 2})});
  EXPECT_EQ(floor[0].shape(), (Shape{1, 1, 1, 1}));
  expect_close(values<float>(floor[0]), {5});
}

TEST(NnMaxPool, PaddingNeverWinsOverNegatives) {
  auto out = run_op("MaxPool", {make<float>({1, 1, 1, 3}, {-1, -2, -3})},
                    {ais("kernel_shape", {1, 2}), ais("pads", {0, 1, 0, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 4}));
  expect_close(values<float>(out[0]), {-1, -1, -2, -3});
}

TEST(NnMaxPool, Dilation1D) {
  auto out = run_op("MaxPool", {make<float>({1, 1, 5}, {1, 5, 2, 4, 3})}, {ais("kernel_shape", {2}), ais("dilations", {2})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3}));
  expect_close(values<float>(out[0]), {2, 5, 3});
}

TEST(NnMaxPool, SameUpper) {
  // in 5, k 2, s 2 -> out 3, total pad 1 at the end: windows [1,2],[3,4],[5].
  auto out = run_op("MaxPool", {make<float>({1, 1, 5}, {1, 2, 3, 4, 5})},
                    {ais("kernel_shape", {2}), ais("strides", {2}), as("auto_pad", "SAME_UPPER")});
  expect_close(values<float>(out[0]), {2, 4, 5});
}

TEST(NnMaxPool, IndicesOutputOnSmallInput) {
  // One 2x2 window: max 4 at flat index 3 (the native MaxPool path).
  auto out = run_op("MaxPool", {make<float>({1, 1, 2, 2}, {1, 2, 3, 4})}, {ais("kernel_shape", {2, 2})}, 2);
  expect_close(values<float>(out[0]), {4});
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{3}));
  // Rank 6 (4 spatial dims) is refused with kUnsupported.
  try {
    run_op("MaxPool", {Tensor(DType::kFloat32, {1, 1, 1, 1, 1, 1})}, {ais("kernel_shape", {1, 1, 1, 1})}, 2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
}

TEST(NnAveragePool, CountIncludePad) {
  auto x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  std::vector<ir::Attribute> at = {ais("kernel_shape", {2, 2}), ais("pads", {1, 1, 1, 1}), ais("strides", {2, 2})};
  auto excl = run_op("AveragePool", {x}, at);
  EXPECT_EQ(excl[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(excl[0]), {1, 2, 3, 4});
  at.push_back(ai("count_include_pad", 1));
  auto incl = run_op("AveragePool", {x}, at);
  expect_close(values<float>(incl[0]), {0.25f, 0.5f, 0.75f, 1.f});
}

TEST(NnAveragePool, CeilMode) {
  // ONNX test averagepool_2d_ceil.
  auto out = run_op("AveragePool", {make<float>({1, 1, 4, 4}, iota(16))},
                    {ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ai("ceil_mode", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(out[0]), {6, 7.5f, 12, 13.5f});
}

TEST(NnAveragePool, CeilModeWithIncludedPadCountsOnlyRealPadding) {
  // Windows start at -1, 1, 3: (pad+1+2)/3, (2+3+4)/3, (4+pad)/2 (the ceil
  // cell beyond pad_end is not counted).
  auto out = run_op("AveragePool", {make<float>({1, 1, 4}, {1, 2, 3, 4})},
                    {ais("kernel_shape", {3}), ais("strides", {2}), ais("pads", {1, 1}), ai("ceil_mode", 1),
                     ai("count_include_pad", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3}));
  expect_close(values<float>(out[0]), {1, 3, 2});
}

TEST(NnGlobalPool, AverageAndMax) {
  auto x = make<float>({1, 2, 2, 2}, iota(8));
  auto avg = run_op("GlobalAveragePool", {x});
  EXPECT_EQ(avg[0].shape(), (Shape{1, 2, 1, 1}));
  expect_close(values<float>(avg[0]), {2.5f, 6.5f});
  auto mx = run_op("GlobalMaxPool", {x});
  expect_close(values<float>(mx[0]), {4, 8});
  auto one_d = run_op("GlobalAveragePool", {make<float>({2, 1, 3}, {1, 2, 3, -3, 0, 0})});
  EXPECT_EQ(one_d[0].shape(), (Shape{2, 1, 1}));
  expect_close(values<float>(one_d[0]), {2, -1});
}

// The native global pools read X in the layout the plan gives it: plain,
// nChw16c ([N][C/16][H][W][16]) and nhwc ([N][H][W][C]), batch 2, against
// the mean and max of each (n, c) computed here; a large window (160x160,
// as in ppocr_v4_det) too. Values have a large common offset, which a
// float accumulator over 25600 cells would blur beyond the tolerance.
TEST(NnGlobalPool, EveryLayoutAgainstAHandLoop) {
  for (const Shape& xs : {Shape{2, 32, 5, 7}, Shape{2, 48, 9, 4}, Shape{1, 16, 160, 160}}) {
    const int64_t N = xs[0], C = xs[1], S = xs[2] * xs[3];
    Tensor x(DType::kFloat32, xs);
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = 1000.f + static_cast<float>((i * 37) % 101) / 7.f;
    std::vector<float> mean(N * C), mx(N * C);
    for (int64_t nc = 0; nc < N * C; ++nc) {
      double acc = 0;
      float m = x.as<float>()[nc * S];
      for (int64_t s = 0; s < S; ++s) {
        acc += x.as<float>()[nc * S + s];
        m = std::max(m, x.as<float>()[nc * S + s]);
      }
      mean[nc] = static_cast<float>(acc / S);
      mx[nc] = m;
    }
    for (ops::Layout layout : {ops::Layout::kPlain, ops::Layout::kNChw16c, ops::Layout::kNhwc}) {
      // X's bytes in `layout`.
      Tensor held(DType::kFloat32, xs);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t s = 0; s < S; ++s) {
            const int64_t at = layout == ops::Layout::kPlain ? (n * C + c) * S + s
                               : layout == ops::Layout::kNhwc ? (n * S + s) * C + c
                                                              : ((n * (C / 16) + c / 16) * S + s) * 16 + c % 16;
            held.as<float>()[at] = x.as<float>()[(n * C + c) * S + s];
          }
      kernels::KernelConfig config;
      config.input_layouts = {layout};
      const std::string trace = shape_str(xs) + " " + ops::layout_name(layout);
      SCOPED_TRACE(trace);
      expect_close(values<float>(run_op("GlobalAveragePool", {held}, {}, 1, "", config)[0]), mean, 1e-6f, 1e-6f);
      expect_close(values<float>(run_op("GlobalMaxPool", {held}, {}, 1, "", config)[0]), mx, 0.f, 0.f);
    }
  }
  // A NaN anywhere in a window makes its max and mean NaN.
  for (const int64_t at : {0, 5, 11}) {
    std::vector<float> v(12, 1.f);
    v[at] = std::nanf("");
    const Tensor x = make<float>({1, 1, 3, 4}, v);
    EXPECT_TRUE(std::isnan(values<float>(run_op("GlobalMaxPool", {x})[0])[0])) << at;
    EXPECT_TRUE(std::isnan(values<float>(run_op("GlobalAveragePool", {x})[0])[0])) << at;
  }
}

// The nhwc mean reads each chunk of 256 rows contiguously, on as many
// threads as there are chunks (or 64-channel pieces of them): every
// thread count must give the same bits, and the mean a double loop gives.
TEST(NnGlobalPool, NhwcMeanIsTheSameOnEveryThreadCount) {
  for (const Shape& xs : {Shape{1, 144, 56, 56}, Shape{2, 200, 20, 15}, Shape{1, 1280, 7, 7}, Shape{1, 24, 40, 40}}) {
    const int64_t N = xs[0], C = xs[1], S = xs[2] * xs[3];
    Tensor x(DType::kFloat32, xs);  // nhwc bytes: [N][S][C]
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = 100.f + static_cast<float>((i * 53) % 97) / 9.f;
    std::vector<float> mean(N * C);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        double acc = 0;
        for (int64_t s = 0; s < S; ++s) acc += x.as<float>()[(n * S + s) * C + c];
        mean[n * C + c] = static_cast<float>(acc / S);
      }
    ir::Graph g;
    ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, xs));
    ir::Node* node = g.add_node("GlobalAveragePool", {in}, {"y"}, "gap");
    kernels::KernelConfig config;
    config.input_layouts = {ops::Layout::kNhwc};
    const TensorView view = x.view();
    std::vector<float> first;
    for (int threads : {1, 2, 3, 4}) {
      SCOPED_TRACE(shape_str(xs) + " on " + std::to_string(threads) + " threads");
      const std::vector<float> y = values<float>(kernels::evaluate_node(*node, {&view}, threads, nullptr, config)[0]);
      expect_close(y, mean, 1e-6f, 1e-6f);
      if (first.empty()) first = y;
      ASSERT_EQ(y.size(), first.size());
      for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(std::memcmp(&y[i], &first[i], sizeof(float)), 0) << i;
    }
  }
}

}  // namespace
}  // namespace gec
