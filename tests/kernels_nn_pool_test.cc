// MaxPool / AveragePool / global pools: hand-computed small cases (ONNX
// MaxPool-12, AveragePool-11; ceil_mode divisors as in ONNX Runtime).
#include <cmath>
#include <cstring>

#include <hwy/targets.h>

#include "kernels/cpu/nn/pool_simd.h"

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

// A 2-D float MaxPool in plain NCHW (native.pool, one float a pixel) gives
// the bits of the scalar loop that serves MaxPool with Indices
// (NativeMaxPoolKernel, an independent implementation): two images of five
// channels, ceil_mode windows with pads and dilations, on 1 and 2 threads.
TEST(NnMaxPool, PlainLayoutMatchesTheScalarLoop) {
  const Shape xs{2, 5, 11, 13};
  std::vector<float> v(static_cast<size_t>(shape_numel(xs)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.f;
  const Tensor x = make<float>(xs, v);
  for (const std::vector<ir::Attribute>& at :
       {std::vector<ir::Attribute>{ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1}),
                                   ai("ceil_mode", 1)},
        std::vector<ir::Attribute>{ais("kernel_shape", {2, 3}), ais("strides", {1, 2}), ais("pads", {0, 2, 1, 0}),
                                   ais("dilations", {2, 1})}})
    for (int threads : {1, 2}) {
      const std::vector<Tensor> fast = run_op("MaxPool", {x}, at, 1, "", {}, threads);
      const std::vector<Tensor> scalar = run_op("MaxPool", {x}, at, 2, "", {}, threads);
      ASSERT_EQ(fast[0].shape(), scalar[0].shape());
      EXPECT_EQ(values<float>(fast[0]), values<float>(scalar[0])) << "threads " << threads;
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

// The global mean's vector sums (pool_simd::sum_rows, pool_simd::sum) on
// every compiled target: sum_rows adds each lane in row order, so it gives
// the bits of a scalar loop for every lane count (whole 4-vector groups,
// single vectors, an 8-lane half vector, scalar lanes); sum is a
// reordered float sum, within a few float roundings of a double loop.
TEST(NnGlobalPool, VectorSumsOnEveryTargetMatchScalarLoops) {
  std::vector<float> x(300 * 140);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 10.f + static_cast<float>((i * 29) % 113) / 13.f;
  for_each_hwy_target([&] {
    for (int64_t lanes : {1, 3, 8, 16, 24, 72, 100, 130})
      for (int64_t count : {0, 1, 5, 256}) {
        const int64_t row = lanes + 7;
        SCOPED_TRACE("lanes " + std::to_string(lanes) + " rows " + std::to_string(count));
        std::vector<float> got(static_cast<size_t>(lanes), -1.f);
        kernels::cpu::pool_simd::sum_rows(x.data(), count, row, lanes, got.data());
        for (int64_t j = 0; j < lanes; ++j) {
          float want = 0.f;
          for (int64_t s = 0; s < count; ++s) want += x[static_cast<size_t>(s * row + j)];
          ASSERT_EQ(std::memcmp(&got[static_cast<size_t>(j)], &want, sizeof(float)), 0) << "lane " << j;
        }
      }
    for (int64_t n : {0, 1, 7, 16, 63, 64, 65, 1000, 4099}) {
      double want = 0;
      for (int64_t i = 0; i < n; ++i) want += x[static_cast<size_t>(i)];
      EXPECT_NEAR(kernels::cpu::pool_simd::sum(x.data(), n), want, 4e-7 * want + 1e-6) << "n " << n;
    }
  });
}

// native.pool through its kernel (nhwc, as a plan gives it): the rows are
// split among 1-4 threads without changing a bit of the result, for a
// max and a mean with pads on a two-image input of 20 channels.
TEST(NnPixelPool, ThreadsSplitRowsWithoutChangingABit) {
  const Shape xs{2, 20, 15, 14};  // 20 channels: whole vectors and a partial one on AVX2 and AVX-512
  Tensor x(DType::kFloat32, xs);  // nhwc bytes: [N][H][W][C]
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 53) % 97) / 9.f - 5.f;
  const TensorView view = x.view();
  for (const char* op : {"MaxPool", "AveragePool"}) {
    ir::Graph g;
    ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, xs));
    ir::Node* node = g.add_node(op, {in}, {"y"}, "pool");
    node->set_attr(ir::Attribute::Ints("kernel_shape", {3, 3}));
    node->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
    kernels::KernelConfig config;
    config.input_layouts = config.output_layouts = {ops::Layout::kNhwc};
    EXPECT_EQ(kernels::create_kernel(*node, config)->impl_name(), "native.pool");
    std::vector<float> first;
    for (int threads : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::string(op) + " on " + std::to_string(threads) + " threads");
      const std::vector<float> y = values<float>(kernels::evaluate_node(*node, {&view}, threads, nullptr, config)[0]);
      ASSERT_EQ(static_cast<int64_t>(y.size()), x.numel());
      if (first.empty()) first = y;
      for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(std::memcmp(&y[i], &first[i], sizeof(float)), 0) << i;
    }
  }
}

// A pool at the edge of two layout groups reads one layout and writes the
// other (schedule/layout_assignment.cc's stage edges): every pair of
// nChw16c and nhwc gives plain's pooling in the output's bytes,
// on 1 to 4 threads (4 start a thread's rows inside a 16-channel plane,
// checked below), for max and average windows that cross the edges
// (ceil_mode, pads). An nChw16c side
// with C % 16 != 0, and a MaxPool with Indices given any layout but plain,
// are refused.
TEST(NnPixelPool, ChangesLayoutBetweenNChw16cAndNhwc) {
  const Shape xs{2, 48, 23, 22};
  Tensor x(DType::kFloat32, xs);
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 37) % 101) / 7.f - 6.f;
  const std::vector<ops::Layout> layouts{ops::Layout::kNChw16c, ops::Layout::kNhwc};
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t stride : {1, 2}) {
      ir::Graph g;
      ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, xs));
      ir::Node* node = g.add_node(op, {in}, {"y"}, "edge");
      node->set_attr(ir::Attribute::Ints("kernel_shape", {3, 3}));
      node->set_attr(ir::Attribute::Ints("strides", {stride, stride}));
      node->set_attr(ir::Attribute::Ints("pads", {1, 0, 0, 1}));
      node->set_attr(ir::Attribute::Int("ceil_mode", 1));
      const TensorView plain_view = x.view();
      const Tensor want = kernels::evaluate_node(*node, {&plain_view}, 1)[0];
      for (ops::Layout from : layouts)
        for (ops::Layout to : layouts) {
          const Tensor xb = to_layout(x, from);
          const TensorView view = xb.view();
          kernels::KernelConfig config;
          config.input_layouts = {from};
          config.output_layouts = {to};
          EXPECT_EQ(kernels::create_kernel(*node, config)->impl_name(), "native.pool");
          const std::vector<float> expected = values<float>(to_layout(want, to));
          const int64_t oh = want.shape()[2], rows = xs[0] * (xs[1] / 16) * oh;
          bool mid_plane = false;  // a thread's first row inside a plane, with 4 threads
          for (int64_t t = 1; t < 4; ++t) mid_plane = mid_plane || (rows * t / 4) % oh != 0;
          EXPECT_TRUE(mid_plane);
          for (int threads : {1, 2, 3, 4}) {
            SCOPED_TRACE(std::string(op) + " stride " + std::to_string(stride) + " " + ops::layout_name(from) +
                         " -> " + ops::layout_name(to) + " on " + std::to_string(threads) + " threads");
            const std::vector<float> y = values<float>(kernels::evaluate_node(*node, {&view}, threads, nullptr, config)[0]);
            ASSERT_EQ(y.size(), expected.size());
            for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-5f * (1.f + std::fabs(expected[i]))) << i;
          }
        }
    }
  // 20 channels: nhwc holds them, nChw16c does not (whole blocks only).
  const Shape odd{1, 20, 6, 6};
  const Tensor xo(DType::kFloat32, odd);
  const TensorView view = xo.view();
  ir::Graph g;
  ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, odd));
  ir::Node* node = g.add_node("MaxPool", {in}, {"y"}, "odd");
  node->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
  node->set_attr(ir::Attribute::Ints("strides", {2, 2}));
  for (const auto& [from, to] : {std::pair{ops::Layout::kNhwc, ops::Layout::kNChw16c},
                                 std::pair{ops::Layout::kNChw16c, ops::Layout::kNChw16c}}) {
    kernels::KernelConfig config;
    config.input_layouts = {from};
    config.output_layouts = {to};
    expect_error([&] { kernels::evaluate_node(*node, {&view}, 1, nullptr, config); }, ErrorCode::kInvalidModel,
                 "nChw16c needs C % 16 == 0");
  }
  kernels::KernelConfig config;
  config.input_layouts = {ops::Layout::kNhwc};
  config.output_layouts = {ops::Layout::kPlain};
  expect_error([&] { kernels::create_kernel(*node, config); }, ErrorCode::kInvalidModel, "reads and writes nChw16c or nhwc");
  // With Indices: the plain loop's kernel, which takes plain only.
  ir::Graph gi;
  ir::Value* in16 = gi.add_value("x", ir::TensorType::of(DType::kFloat32, {1, 16, 6, 6}));
  ir::Node* with_indices = gi.add_node("MaxPool", {in16}, {"y", "indices"}, "with_indices");
  with_indices->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
  for (ops::Layout l : {ops::Layout::kNChw16c, ops::Layout::kNhwc}) {
    kernels::KernelConfig c;
    c.input_layouts = {l};
    c.output_layouts = {l, ops::Layout::kPlain};
    expect_error([&] { kernels::create_kernel(*with_indices, c); }, ErrorCode::kInvalidModel, "plain NCHW only");
  }
  EXPECT_NE(kernels::create_kernel(*with_indices, kernels::KernelConfig{}), nullptr);
}

// A window wholly in the padding (a dilation stepping over a 2x2 input)
// has no max to give: the pooling kernel (native.pool, plain or nChw16c)
// refuses it, naming the node, rather than writing -inf (which
// would turn an nChw16c block's zero padding into -inf for the next
// convolution). An AveragePool counting the pads gives 0 there and runs.
TEST(NnPixelPool, WindowsInThePaddingAreRefusedInEveryLayout) {
  const Shape xs{1, 16, 2, 2};
  const Tensor x = make<float>(xs, std::vector<float>(64, 1.f));
  const TensorView view = x.view();
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t include_pad : {0, 1})
      for (ops::Layout layout : {ops::Layout::kPlain, ops::Layout::kNChw16c}) {
        if (std::string(op) == "MaxPool" && include_pad) continue;
        SCOPED_TRACE(std::string(op) + " count_include_pad " + std::to_string(include_pad) + " in " +
                     ops::layout_name(layout));
        ir::Graph g;
        ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, xs));
        ir::Node* node = g.add_node(op, {in}, {"y"}, "gapped");
        node->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
        node->set_attr(ir::Attribute::Ints("dilations", {3, 3}));
        node->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
        if (std::string(op) == "AveragePool") node->set_attr(ir::Attribute::Int("count_include_pad", include_pad));
        kernels::KernelConfig config;
        config.input_layouts = config.output_layouts = {layout};
        if (include_pad) {
          const std::vector<Tensor> y = kernels::evaluate_node(*node, {&view}, 1, nullptr, config);
          ASSERT_EQ(y[0].shape(), (Shape{1, 16, 1, 1}));
          for (float v : values<float>(y[0])) EXPECT_EQ(v, 0.f);
          continue;
        }
        const auto pool = [&] { kernels::evaluate_node(*node, {&view}, 1, nullptr, config); };
        expect_error(pool, ErrorCode::kInvalidModel, "'gapped'");
        expect_error(pool, ErrorCode::kInvalidModel, "padding");
      }
}

// Window values a hostile model may give: a kernel of 2^31 + 1 cells with
// pads of 2^30 on each side of a 2-cell input is a valid geometry (one
// output), which native.pool refuses in its reshape rather than looping
// over the taps; taps_inside counts in closed form, and agrees with a loop
// on small windows.
TEST(NnPixelPool, HugeWindowsAreRefusedAndTapsAreCountedInClosedForm) {
  const Shape xs{1, 16, 2, 2};
  const Tensor x = make<float>(xs, std::vector<float>(64, 1.f));
  const TensorView view = x.view();
  ir::Graph g;
  ir::Value* in = g.add_value("x", ir::TensorType::of(DType::kFloat32, xs));
  ir::Node* node = g.add_node("MaxPool", {in}, {"y"}, "huge");
  const int64_t big = (int64_t{1} << 31) + 1, pad = int64_t{1} << 30;
  node->set_attr(ir::Attribute::Ints("kernel_shape", {big, 1}));
  node->set_attr(ir::Attribute::Ints("pads", {pad, 0, pad, 0}));
  kernels::KernelConfig config;
  config.input_layouts = config.output_layouts = {ops::Layout::kNChw16c};
  expect_error([&] { kernels::evaluate_node(*node, {&view}, 1, nullptr, config); }, ErrorCode::kInvalidModel, "'huge'");
  using kernels::cpu::pool_simd::taps_inside;
  for (int64_t start = -9; start <= 9; ++start)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t dil = 1; dil <= 4; ++dil) {
        int64_t lo, hi, want_lo = k, want_hi = k;
        for (int64_t i = 0; i < k; ++i)
          if (start + i * dil >= -2 && start + i * dil < 5) {
            if (want_lo == k) want_lo = i;
            want_hi = i + 1;
          }
        if (want_lo == k) want_hi = want_lo;
        taps_inside(start, k, dil, -2, 5, lo, hi);
        ASSERT_EQ(hi - lo, want_hi - want_lo) << start << " " << k << " " << dil;
        if (hi > lo) {
          ASSERT_EQ(lo, want_lo) << start << " " << k << " " << dil;
        }
      }
  int64_t lo, hi;
  taps_inside(-(int64_t{1} << 31), int64_t{1} << 31, (int64_t{1} << 31) - 1, 0, 5, lo, hi);
  EXPECT_EQ(lo, hi);  // tap 1 is at -1, tap 2 past the end: none inside
  taps_inside(-(int64_t{1} << 31), int64_t{1} << 31, int64_t{1} << 30, 0, 5, lo, hi);
  EXPECT_EQ(hi - lo, 1);  // tap 2 lands on cell 0
  EXPECT_EQ(lo, 2);
}

// pool_simd's loop (native.pool's core) on every Highway target this CPU
// runs, against a double-precision loop over the ONNX definition: planes of
// P = 3, 16, 20, 27 and 40 floats per pixel (a lone partial vector, whole
// vectors, whole vectors and a tail), windows with pads, strides, dilations
// and ceil_mode cells, both AveragePool counts. Guard floats after Y must
// stay untouched (no lane written past a pixel). Max exact, mean within
// 1e-6 relative.
struct PixelPoolCase {
  int64_t H, W, kh, kw, sh, sw, dh, dw, ph, pw, eh, ew;
  bool ceil_mode = false;  // the output size rounded up: the last windows reach past the end pads
};

void expect_pixel_pool_matches_reference(const PixelPoolCase& c, int64_t P, bool is_max, bool include_pad) {
  kernels::cpu::pool_simd::Window w;
  w.H = c.H, w.W = c.W, w.P = P, w.kh = c.kh, w.kw = c.kw, w.sh = c.sh, w.sw = c.sw, w.dh = c.dh, w.dw = c.dw;
  w.ph = c.ph, w.pw = c.pw, w.eh = c.eh, w.ew = c.ew, w.is_max = is_max, w.count_include_pad = include_pad;
  const int64_t round = c.ceil_mode ? 1 : 0;
  w.OH = (c.H + c.ph + c.eh - ((c.kh - 1) * c.dh + 1) + round * (c.sh - 1)) / c.sh + 1;
  w.OW = (c.W + c.pw + c.ew - ((c.kw - 1) * c.dw + 1) + round * (c.sw - 1)) / c.sw + 1;
  std::vector<float> x(static_cast<size_t>(c.H * c.W * P));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 + 11) % 101) / 50.f - 1.f;
  constexpr float kGuard = 12345.f;
  const size_t ny = static_cast<size_t>(w.OH * w.OW * P);
  std::vector<float> y(ny + 64, kGuard);
  kernels::cpu::pool_simd::pool_rows(x.data(), y.data(), w, 0, w.OH);
  for (size_t i = ny; i < y.size(); ++i) ASSERT_EQ(y[i], kGuard) << "written past Y at " << i;
  for (int64_t oh = 0; oh < w.OH; ++oh)
    for (int64_t ow = 0; ow < w.OW; ++ow)
      for (int64_t p = 0; p < P; ++p) {
        double best = -INFINITY, sum = 0;
        int64_t inside = 0, counted = 0;
        for (int64_t i = 0; i < c.kh; ++i)
          for (int64_t j = 0; j < c.kw; ++j) {
            const int64_t ih = oh * c.sh - c.ph + i * c.dh, iw = ow * c.sw - c.pw + j * c.dw;
            const bool in_x = ih >= 0 && ih < c.H && iw >= 0 && iw < c.W;
            const bool in_pads = ih >= -c.ph && ih < c.H + c.eh && iw >= -c.pw && iw < c.W + c.ew;
            if (in_pads) ++counted;
            if (!in_x) continue;
            const double v = x[static_cast<size_t>((ih * c.W + iw) * P + p)];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        ASSERT_GT(inside, 0) << "a test window in the padding";
        const float got = y[static_cast<size_t>((oh * w.OW + ow) * P + p)];
        if (is_max) {
          ASSERT_EQ(got, static_cast<float>(best)) << "at " << oh << "," << ow << " lane " << p;
        } else {
          const double want = sum / static_cast<double>(include_pad ? counted : inside);
          ASSERT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want))) << "at " << oh << "," << ow << " lane " << p;
        }
      }
}

TEST(NnPixelPool, EveryTargetMatchesAReferenceLoop) {
  const std::vector<PixelPoolCase> cases = {
      {11, 13, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0},  // GoogLeNet-style 3x3/2
      {9, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   // 3x3/1 pad 1: four-pixel groups and border pixels
      {7, 9, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1},    // an end pad
      {8, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},  // ceil_mode: the last windows reach past the end pads
      {13, 12, 3, 2, 2, 1, 2, 3, 2, 1, 1, 0},  // dilations, uneven pads
  };
  for_each_hwy_target([&] {
    for (const PixelPoolCase& c : cases)
      for (int64_t P : {1, 3, 16, 20, 27, 40})  // 1: a plain NCHW plane
        for (int kind = 0; kind < 3; ++kind) {
          SCOPED_TRACE("P " + std::to_string(P) + " window " + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
                       " on " + std::to_string(c.H) + "x" + std::to_string(c.W) +
                       (kind == 0 ? " max" : kind == 1 ? " mean" : " mean with pads"));
          expect_pixel_pool_matches_reference(c, P, kind == 0, kind == 2);
        }
  });
}

}  // namespace
}  // namespace gec
