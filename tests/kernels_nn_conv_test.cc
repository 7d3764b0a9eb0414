// Conv and ConvTranspose kernels: hand-computed small cases (ONNX Conv-11,
// ConvTranspose-11).
#include <dnnl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <omp.h>

#include <functional>
#include <sstream>

#include "kernels_nn_util.h"
#include "ops/fused_conv.h"

namespace gec {
namespace {
using namespace gec::testing;

std::vector<float> iota(int n, float start = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + i;
  return v;
}

// 3x3 kernel (ones, centre 2) over 1..16 in 4x4, pads 1, stride 2, bias 1.
// Windows centred at (0,0),(0,2),(2,0),(2,2): sums 14,30,57,99 plus the
// centre values 1,3,9,11 plus bias.
TEST(NnConv, Pad1Stride2WithBias) {
  std::vector<float> w(9, 1.f);
  w[4] = 2.f;
  auto out = run_op("Conv", {make<float>({1, 1, 4, 4}, iota(16)), make<float>({1, 1, 3, 3}, w), make<float>({1}, {1})},
                    {ais("pads", {1, 1, 1, 1}), ais("strides", {2, 2})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(out[0]), {16, 34, 67, 111});
}

TEST(NnConv, TwoGroupsDoNotMixChannels) {
  // X channels (over 2 pixels): [1,2], [3,4], [5,6], [7,8]; group 0 sees
  // channels 0,1, group 1 channels 2,3.
  auto out = run_op("Conv",
                    {make<float>({1, 4, 1, 2}, iota(8)), make<float>({2, 2, 1, 1}, {1, 10, 100, 1000})},
                    {ai("group", 2)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 1, 2}));
  expect_close(values<float>(out[0]), {1 + 30, 2 + 40, 500 + 7000, 600 + 8000});
}

TEST(NnConv, Depthwise) {
  // ch0: 1..9, kernel [[1,0],[0,1]] -> x[i][j] + x[i+1][j+1];
  // ch1: 10..18, kernel [[0,1],[0,0]] -> x[i][j+1].
  auto out = run_op("Conv",
                    {make<float>({1, 2, 3, 3}, iota(18)), make<float>({2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 0, 0})},
                    {ai("group", 2)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2, 2}));
  expect_close(values<float>(out[0]), {6, 8, 12, 14, 11, 12, 14, 15});
}

TEST(NnConv, AutoPadSameUpperAndLower1D) {
  auto x = make<float>({1, 1, 5}, iota(5));
  auto w = make<float>({1, 1, 2}, {1, 1});
  auto up = run_op("Conv", {x, w}, {as("auto_pad", "SAME_UPPER")});
  auto lo = run_op("Conv", {x, w}, {as("auto_pad", "SAME_LOWER")});
  EXPECT_EQ(up[0].shape(), (Shape{1, 1, 5}));
  expect_close(values<float>(up[0]), {3, 5, 7, 9, 5});  // pad at the end
  expect_close(values<float>(lo[0]), {1, 3, 5, 7, 9});  // pad at the start
}

TEST(NnConv, SameUpperStride2AndValid) {
  auto x = make<float>({1, 1, 5}, iota(5));
  auto w = make<float>({1, 1, 3}, {1, 1, 1});
  auto same = run_op("Conv", {x, w}, {as("auto_pad", "SAME_UPPER"), ais("strides", {2})});
  expect_close(values<float>(same[0]), {3, 9, 9});
  auto valid = run_op("Conv", {x, w}, {as("auto_pad", "VALID"), ais("strides", {2})});
  expect_close(values<float>(valid[0]), {6, 12});
}

TEST(NnConv, Dilation) {
  auto out = run_op("Conv", {make<float>({1, 1, 5}, iota(5)), make<float>({1, 1, 2}, {1, 1})}, {ais("dilations", {2})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3}));
  expect_close(values<float>(out[0]), {4, 6, 8});
}

TEST(NnConv, ThreeD) {
  auto out = run_op("Conv", {make<float>({1, 1, 2, 2, 2}, iota(8)), make<float>({1, 1, 2, 2, 2}, std::vector<float>(8, 1))});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 1, 1}));
  expect_close(values<float>(out[0]), {36});
}

TEST(NnConv, MultiChannelBatch) {
  // N=2, C=2, 1x1 conv to M=3 with W[m][c] = m*10 + c + 1, bias 0.5.
  auto out = run_op("Conv",
                    {make<float>({2, 2, 1, 1}, {1, 2, 3, 4}), make<float>({3, 2, 1, 1}, {1, 2, 11, 12, 21, 22}),
                     make<float>({3}, {0.5f, 0.5f, 0.5f})});
  expect_close(values<float>(out[0]), {5.5f, 35.5f, 65.5f, 11.5f, 81.5f, 151.5f});
}

TEST(NnConv, ShapeChangeAndNewWeightsRebuild) {
  KernelHarness h("Conv", 2, {});
  auto w1 = make<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  auto w2 = make<float>({1, 1, 2, 2}, {1, 0, 0, 0});
  expect_close(values<float>(h.run({make<float>({1, 1, 2, 2}, iota(4)), w1}, {1, 1, 1, 1})), {10});
  expect_close(values<float>(h.run({make<float>({1, 1, 3, 3}, iota(9)), w1}, {1, 1, 2, 2})), {12, 16, 24, 28});
  expect_close(values<float>(h.run({make<float>({1, 1, 3, 3}, iota(9)), w2}, {1, 1, 2, 2})), {1, 2, 4, 5});
}

TEST(NnConv, NonFloatIsUnsupported) {
  try {
    run_op("Conv", {make<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}), make<int32_t>({1, 1, 1, 1}, {1})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("test_Conv"), std::string::npos);
  }
}

TEST(NnConvTranspose, Stride1FullAndPadded) {
  auto x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  auto w = make<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  auto full = run_op("ConvTranspose", {x, w});
  EXPECT_EQ(full[0].shape(), (Shape{1, 1, 3, 3}));
  expect_close(values<float>(full[0]), {1, 3, 2, 4, 10, 6, 3, 7, 4});
  auto cropped = run_op("ConvTranspose", {x, w}, {ais("pads", {1, 1, 1, 1})});
  EXPECT_EQ(cropped[0].shape(), (Shape{1, 1, 1, 1}));
  expect_close(values<float>(cropped[0]), {10});
}

TEST(NnConvTranspose, Stride2StampsBlocksWithBias) {
  auto out = run_op("ConvTranspose",
                    {make<float>({1, 1, 2, 2}, {1, 2, 3, 4}), make<float>({1, 1, 2, 2}, {1, 1, 1, 1}), make<float>({1}, {0.5f})},
                    {ais("strides", {2, 2})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 4, 4}));
  std::vector<float> e = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  for (float& v : e) v += 0.5f;
  expect_close(values<float>(out[0]), e);
}

TEST(NnConvTranspose, WeightsAreInputMajor) {
  // W[ic][oc] = [[1,2,3],[4,5,6]]; out[oc] = sum_ic x[ic] * W[ic][oc].
  auto out = run_op("ConvTranspose", {make<float>({1, 2, 1, 1}, {1, 2}), make<float>({2, 3, 1, 1}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 1, 1}));
  expect_close(values<float>(out[0]), {9, 12, 15});
}

TEST(NnConvTranspose, Groups) {
  auto out = run_op("ConvTranspose", {make<float>({1, 2, 1, 1}, {2, 3}), make<float>({2, 1, 1, 1}, {10, 100})},
                    {ai("group", 2)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 1, 1}));
  expect_close(values<float>(out[0]), {20, 300});
}

TEST(NnConvTranspose, OutputPaddingAndOutputShape1D) {
  auto x = make<float>({1, 1, 2}, {1, 2});
  auto op = run_op("ConvTranspose", {x, make<float>({1, 1, 2}, {1, 1})}, {ais("strides", {2}), ais("output_padding", {1})});
  EXPECT_EQ(op[0].shape(), (Shape{1, 1, 5}));
  expect_close(values<float>(op[0]), {1, 1, 2, 2, 0});
  // Full result [1,1,3,2,2]; output_shape 4 -> total padding 1, put at the
  // start (NOTSET takes the larger half first).
  auto os = run_op("ConvTranspose", {x, make<float>({1, 1, 3}, {1, 1, 1})}, {ais("strides", {2}), ais("output_shape", {4})});
  EXPECT_EQ(os[0].shape(), (Shape{1, 1, 4}));
  expect_close(values<float>(os[0]), {1, 3, 2, 2});
}


/// A Conv (with `relu`: a FusedConv with a Relu) on deterministic X [xs],
/// W [ws] and, with `bias`, B [ws[0]], all in about [-2, 2].
struct ConvRun {
  std::vector<Tensor> in;
  std::vector<ir::Attribute> attrs;
  std::string op, domain;
};
ConvRun conv_run(const Shape& xs, const Shape& ws, std::vector<ir::Attribute> attrs, bool bias, bool relu) {
  Tensor x(DType::kFloat32, xs), w(DType::kFloat32, ws), b(DType::kFloat32, {ws[0]});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = static_cast<float>((i * 5) % 13) / 6.f - 1.f;
  for (int64_t i = 0; i < b.numel(); ++i) b.as<float>()[i] = static_cast<float>(i % 5) - 2.f;
  ConvRun r{{x, w}, std::move(attrs), relu ? ops::kFusedConvOp : "Conv", relu ? ops::kGecDomain : ""};
  if (bias) r.in.push_back(b);
  if (relu) r.attrs.push_back(ir::Attribute::String("activation", "Relu"));
  return r;
}

/// The implementation the node of `r` gets in a plan: X of shape `xs`, its
/// W (and B) constants, Y of shape `ys` (the kernel name the plan records).
std::string planned_impl(const ConvRun& r, const Shape& xs, const Shape& ys) {
  ir::Graph g;
  std::vector<ir::Value*> ins = {g.add_value("x", ir::TensorType::of(DType::kFloat32, xs)), g.add_constant("w", r.in[1])};
  if (r.in.size() > 2) ins.push_back(g.add_constant("b", r.in[2]));
  ir::Node* n = g.add_node(r.op, ins, {"y"}, "conv", r.domain);
  n->attrs = r.attrs;
  n->output(0)->type = ir::TensorType::of(DType::kFloat32, ys);
  return kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n))->impl_name();
}

/// Runs `r` with the kernel its node gets by default and with oneDNN's
/// convolution (variant "post_op"); expects the same outputs
/// (|a - b| <= atol + rtol |b|, 1e-5 each unless given). Returns the
/// output shape.
Shape expect_default_kernel_matches_onednn(const ConvRun& r, const std::string& trace, float rtol = 1e-5f,
                                           float atol = 1e-5f) {
  kernels::KernelConfig onednn;
  onednn.variant = "post_op";
  const auto got = run_op(r.op, r.in, r.attrs, 1, r.domain);
  const auto ref = run_op(r.op, r.in, r.attrs, 1, r.domain, onednn);
  EXPECT_EQ(got[0].shape(), ref[0].shape()) << trace;
  if (got[0].shape() == ref[0].shape()) expect_close(values<float>(got[0]), values<float>(ref[0]), rtol, atol);
  return ref[0].shape();
}

// The native plain-layout depthwise loop (conv.cc, depthwise_simd.cc) against
// oneDNN's convolution of the same node (variant "post_op" keeps oneDNN):
// strides, asymmetric pads, kernel sizes, channel counts that are not
// multiples of 16, with and without bias and a fused activation.
TEST(NnConv, NativeDepthwiseMatchesOneDnn) {
  struct Case {
    int64_t c, h, w, kh, kw, sh, sw;
    std::vector<int64_t> pads;
    bool bias, relu;
  };
  for (const Case& k : {Case{24, 9, 13, 3, 3, 1, 1, {1, 1, 1, 1}, true, false},
                        Case{72, 8, 8, 3, 3, 2, 2, {1, 1, 1, 1}, false, true},
                        Case{5, 7, 20, 5, 5, 1, 1, {2, 0, 1, 3}, true, true},
                        Case{8, 6, 17, 1, 3, 1, 2, {0, 1, 0, 1}, true, false},
                        Case{3, 4, 4, 3, 3, 1, 1, {0, 0, 0, 0}, false, false},
                        Case{4, 2, 2, 3, 3, 2, 2, {0, 0, 1, 1}, true, false},  // taps right of a 2-wide row
                        // Rows wide enough for whole vectors of outputs (16 lanes
                        // on AVX-512) with border columns on both sides.
                        Case{3, 5, 70, 3, 3, 2, 2, {1, 1, 1, 1}, true, true},
                        Case{2, 6, 71, 7, 7, 2, 2, {3, 2, 3, 4}, false, false},
                        Case{3, 4, 45, 5, 5, 1, 1, {2, 2, 2, 2}, true, false},
                        Case{2, 3, 50, 1, 9, 1, 1, {0, 0, 0, 0}, false, false},
                        Case{2, 5, 37, 3, 3, 3, 3, {1, 1, 1, 1}, true, false}}) {
    const ConvRun r = conv_run({2, k.c, k.h, k.w}, {k.c, 1, k.kh, k.kw},
                               {ir::Attribute::Int("group", k.c), ir::Attribute::Ints("pads", k.pads),
                                ir::Attribute::Ints("strides", {k.sh, k.sw})},
                               k.bias, k.relu);
    expect_default_kernel_matches_onednn(r, "C " + std::to_string(k.c));
  }
}

// 1-D depthwise convolutions (a Conformer's convolution module: 31 taps,
// "same" padding) run on the same loop as planes of height 1, against
// oneDNN's convolution: long and short rows, strides 1 to 3, asymmetric
// pads, with and without bias and a fused activation; the node is planned
// as the native kernel.
TEST(NnConv, NativeDepthwise1DMatchesOneDnn) {
  struct Case {
    int64_t c, w, k, s;
    std::vector<int64_t> pads;
    bool bias, relu;
  };
  for (const Case& k : {Case{144, 99, 31, 1, {15, 15}, true, true}, Case{20, 50, 5, 2, {2, 1}, false, false},
                        Case{3, 7, 3, 1, {0, 0}, true, false}, Case{6, 40, 9, 3, {4, 4}, false, true},
                        Case{16, 33, 15, 1, {7, 7}, true, false}}) {
    const ConvRun r = conv_run({2, k.c, k.w}, {k.c, 1, k.k},
                               {ir::Attribute::Int("group", k.c), ir::Attribute::Ints("pads", k.pads),
                                ir::Attribute::Ints("strides", {k.s})},
                               k.bias, k.relu);
    const std::string trace = "C " + std::to_string(k.c) + " W " + std::to_string(k.w) + " k " + std::to_string(k.k);
    const Shape ys = expect_default_kernel_matches_onednn(r, trace);
    EXPECT_EQ(planned_impl(r, {2, k.c, k.w}, ys), k.relu ? "native.depthwise+fused" : "native.depthwise") << trace;
  }
}


/// The kernel a plain convolution of the MatMul form gets: the MatMul where
/// oneDNN has its brgemm MatMul (AVX-512 here; elsewhere its MatMul is
/// gemm-based, no faster than the convolution, and the convolution stays).
std::string matmul_or_conv() {
  return testing::cpu_has_avx512() ? "onednn.conv_as_matmul" : "onednn.conv";
}

/// The kernel name the matmul form plans for output Y `ys`
/// [N, M, ...]: a handful of output positions per image run as dot products
/// (any CPU), the others as matmul_or_conv().
std::string matmul_form_impl(const Shape& ys, bool relu) {
  const int64_t per_image = shape_numel(ys) / (ys[0] * ys[1]);
  const std::string base = per_image <= 4 ? "native.conv_as_dots" : matmul_or_conv();
  return relu ? base + "+fused" : base;
}

// Plain convolutions that run as one oneDNN MatMul (conv.cc, MatmulForm):
// pointwise (1x1 and 1-D kernel 1, stride 1) and 1-D one-channel framed
// (an STFT front end: kernel 16, stride 5), batch 2, with and without bias
// and a fused activation, against oneDNN's convolution of the same node
// (variant "post_op" keeps oneDNN's convolution). Each case also checks
// that the kernel the node gets is the MatMul one.
TEST(NnConv, ConvAsMatmulMatchesOneDnnConvolution) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides;
    bool bias, relu;
  };
  for (const Case& k : {Case{{2, 24, 5, 7}, {40, 24, 1, 1}, {1, 1}, true, false},
                        Case{{2, 13, 3, 3}, {7, 13, 1, 1}, {}, false, true},
                        Case{{2, 6, 11}, {9, 6, 1}, {1}, true, true},
                        Case{{2, 1, 103}, {33, 1, 16}, {5}, true, false},
                        Case{{2, 3, 4, 4, 2}, {5, 3, 1, 1, 1}, {}, true, false},
                        Case{{1, 1, 64}, {8, 1, 64}, {16}, false, true}}) {
    std::vector<ir::Attribute> attrs;
    if (!k.strides.empty()) attrs.push_back(ir::Attribute::Ints("strides", k.strides));
    const ConvRun r = conv_run(k.x, k.w, attrs, k.bias, k.relu);
    const Shape ys = expect_default_kernel_matches_onednn(r, shape_str(k.x));
    EXPECT_EQ(planned_impl(r, k.x, ys), matmul_form_impl(ys, k.relu)) << shape_str(k.x);
  }
}

// The general window as a MatMul of X's columns (conv.cc, kIm2col):
// padding (symmetric, asymmetric, SAME_UPPER), strides, dilations, 1-D
// (silero-style 3-tap convs over a few frames) and 2-D (GoogLeNet's
// 24-channel 3x3 branch), batch 2, with and without bias and activation,
// against oneDNN's convolution of the same node.
TEST(NnConv, ColumnsMatmulMatchesOneDnnConvolution) {
  struct Case {
    Shape x, w;
    std::vector<ir::Attribute> attrs;
    bool bias, relu;
  };
  const std::vector<Case> cases = {
      {{2, 24, 14, 14}, {64, 24, 3, 3}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, true, true},
      {{2, 5, 9, 8}, {6, 5, 3, 2}, {ir::Attribute::Ints("pads", {0, 1, 2, 0}), ir::Attribute::Ints("strides", {2, 1})}, true, false},
      {{2, 4, 11, 10}, {3, 4, 3, 3}, {ir::Attribute::Ints("dilations", {2, 3}), ir::Attribute::Ints("pads", {2, 1, 0, 2})}, false, true},
      {{2, 6, 7, 9}, {5, 6, 3, 3}, {ir::Attribute::String("auto_pad", "SAME_UPPER"), ir::Attribute::Ints("strides", {2, 2})}, true, false},
      {{2, 129, 4}, {128, 129, 3}, {ir::Attribute::Ints("pads", {1, 1})}, true, true},
      {{2, 64, 2}, {64, 64, 3}, {ir::Attribute::Ints("pads", {1, 1}), ir::Attribute::Ints("strides", {2})}, true, false},
  };
  for (const Case& k : cases) {
    const ConvRun r = conv_run(k.x, k.w, k.attrs, k.bias, k.relu);
    const Shape ys = expect_default_kernel_matches_onednn(r, shape_str(k.x) + " * " + shape_str(k.w));
    EXPECT_EQ(planned_impl(r, k.x, ys), matmul_form_impl(ys, k.relu)) << shape_str(k.x);
  }
}

// A handful of output positions per image (silero-style encoder convs over
// 1-4 frames, a pointwise conv on a 1x2 map, the frames of a strided 1-D
// conv): the matmul form's dot products (dot_simd.h) for 1, 2, 3 and 4
// rows, channel counts that leave vector tails (K = 20, 27, 129 * 3), batch
// 3, and products large enough to split their channels over run_op's two
// threads, on every compiled Highway target, against oneDNN's convolution
// of the same node.
TEST(NnConv, ConvAsDotsMatchesOneDnnConvolution) {
  struct Case {
    Shape x, w;
    std::vector<ir::Attribute> attrs;
    bool bias, relu;
  };
  const std::vector<Case> cases = {
      {{3, 20, 1, 2}, {7, 20, 1, 1}, {}, true, true},
      {{2, 129, 4}, {128, 129, 3}, {ir::Attribute::Ints("pads", {1, 1})}, true, false},
      {{1, 9, 3}, {5, 9, 3}, {ir::Attribute::Ints("pads", {1, 1})}, false, true},
      {{3, 1, 40}, {6, 1, 27}, {ir::Attribute::Ints("strides", {6})}, true, false},
      {{1, 512, 1, 1}, {300, 512, 1, 1}, {}, true, true},
      {{2, 129, 3}, {256, 129, 3}, {ir::Attribute::Ints("pads", {1, 1})}, true, false},
  };
  // Sums of up to 387 products of size <= 1 that cancel to ~0.03: two
  // summation orders (oneDNN's and the dot products', the latter without
  // FMA on SSE4) differ by up to a few K * 2^-24, so 1e-4 absolute.
  for_each_hwy_target([&] {
    for (const Case& k : cases) {
      const std::string trace = shape_str(k.x) + " * " + shape_str(k.w);
      SCOPED_TRACE(trace);
      const ConvRun r = conv_run(k.x, k.w, k.attrs, k.bias, k.relu);
      const Shape ys = expect_default_kernel_matches_onednn(r, trace, 1e-5f, 1e-4f);
      EXPECT_EQ(matmul_form_impl(ys, false), "native.conv_as_dots") << trace;
      EXPECT_EQ(planned_impl(r, k.x, ys), matmul_form_impl(ys, k.relu)) << trace;
    }
  });
}

// The piecewise-linear activations of a FusedConv run as its MatMul form
// (a pointwise conv on plain NCHW), as MatMul post-ops (LeakyRelu, Clip)
// or after the product by the vector loop the unary kernels use
// (HardSigmoid, HardSwish); they match oneDNN's convolution with the same
// activation as post-ops (LeakyRelu-16, Clip-13, HardSigmoid-6, HardSwish-14).
TEST(NnConv, MatmulFormPiecewiseActivationsMatchOneDnnPostOps) {
  struct Act {
    std::string op;
    float alpha, beta;
  };
  for (const Act& a : {Act{"LeakyRelu", 0.1f, 0.f}, Act{"Clip", -0.5f, 0.75f}, Act{"HardSigmoid", 0.2f, 0.5f},
                       Act{"HardSwish", 0.f, 0.f}}) {
    ConvRun r = conv_run({1, 16, 9, 7}, {24, 16, 1, 1}, {}, true, false);
    r.op = ops::kFusedConvOp;
    r.domain = ops::kGecDomain;
    r.attrs.push_back(ir::Attribute::String("activation", a.op));
    if (a.op != "HardSwish") {
      r.attrs.push_back(ir::Attribute::Float("activation_alpha", a.alpha));
      r.attrs.push_back(ir::Attribute::Float("activation_beta", a.beta));
    }
    EXPECT_EQ(planned_impl(r, {1, 16, 9, 7}, {1, 24, 9, 7}), matmul_or_conv() + "+fused") << a.op;
    expect_default_kernel_matches_onednn(r, a.op);
  }
}

// With X and Y of shapes known only at run (a subgraph's values) and a
// constant W, the node still gets the MatMul kernel, which checks each
// shape at reshape: a pointwise conv of width 1 (oneDNN's convolution for it
// is ref:any) runs as a MatMul; frames larger than the bound (1-D, one
// channel, kernel 512, stride 1 over 4000 samples: 447x the bytes of X,
// the bound is 8x) run oneDNN's convolution inside the same kernel, as does
// a 2-D window of the columns form (3x3, strides 2x1), in oneDNN's own
// layout between reorders. All match oneDNN's convolution.
TEST(NnConv, ConvAsMatmulWithShapesKnownAtRun) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides;
    bool bias;
  };
  for (const Case& k : {Case{{1, 128, 1}, {1, 128, 1}, {}, true}, Case{{2, 16, 3, 5}, {8, 16, 1, 1}, {}, false},
                        Case{{1, 1, 4000}, {4, 1, 512}, {1}, true}, Case{{2, 8, 9, 7}, {16, 8, 3, 3}, {2, 1}, true}}) {
    std::vector<ir::Attribute> attrs;
    if (!k.strides.empty()) attrs.push_back(ir::Attribute::Ints("strides", k.strides));
    const ConvRun r = conv_run(k.x, k.w, attrs, k.bias, false);
    kernels::KernelConfig onednn;
    onednn.variant = "post_op";
    const Tensor want = run_op(r.op, r.in, r.attrs, 1, r.domain, onednn)[0];

    ir::Graph g;
    std::vector<ir::Value*> ins = {g.add_value("x", ir::TensorType{DType::kFloat32, false, {}}),
                                   g.add_constant("w", r.in[1])};
    if (k.bias) ins.push_back(g.add_constant("b", r.in[2]));
    ir::Node* n = g.add_node(r.op, ins, {"y"}, "conv", r.domain);
    n->attrs = r.attrs;
    auto kernel = kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n));
    EXPECT_EQ(kernel->impl_name(), "onednn.conv_as_matmul") << shape_str(k.x);
    std::vector<TensorView> views;
    for (const Tensor& t : r.in) views.push_back(t.view());
    Tensor y(DType::kFloat32, want.shape());
    TensorView yv = y.view();
    kernels::KernelContext ctx;
    for (TensorView& v : views) ctx.inputs.push_back(&v);
    ctx.outputs.push_back(&yv);
    ctx.num_threads = 1;
    kernel->reshape(ctx);
    kernel->run(ctx);
    expect_close(values<float>(y), values<float>(want), 1e-5f, 1e-5f);
  }
}

// The oneDNN convolutions a run of `op` (its default kernel) executes, as
// their implementation names (oneDNN's verbose log).
std::vector<std::string> convolution_impls(const std::function<void()>& run) {
  EXPECT_EQ(dnnl_set_verbose(1), dnnl_success);
  const std::string log = capture_stdout(run);
  dnnl_set_verbose(0);
  std::vector<std::string> impls;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    // onednn_verbose,exec,cpu,<primitive>,<implementation>,...
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    if (f.size() > 4 && f[1] == "exec" && f[3] == "convolution") impls.push_back(f[4]);
  }
  return impls;
}

// Plain convolutions that no MatMul form takes (grouped ones; with a
// residual sum; 1-D and 2-D) get oneDNN's gemm-based implementation in
// NCHW: the kernel runs them in the layout oneDNN prefers, between
// reorders, where oneDNN has a better implementation there (`blocked`),
// and keeps gemm where it has none (3 or 6 channels per group; without
// AVX-512 also 4 channels per group: its AVX2 kernels take groups of whole
// 8-channel blocks only, `blocked` holds with AVX-512, `blocked_avx2`
// without). Either way
// the outputs are those of oneDNN's plain convolution (variant "post_op"),
// with bias, activation and the residual Z added by the sum post-op.
TEST(NnConv, PlainGemmConvolutionsRunInABlockedLayout) {
  struct Case {
    Shape x, w;
    std::vector<ir::Attribute> attrs;
    bool bias, relu, residual, blocked, blocked_avx2;
  };
  using A = ir::Attribute;
  const std::vector<Case> cases = {
      {{2, 8, 12, 10}, {8, 4, 3, 3}, {A::Int("group", 2), A::Ints("pads", {1, 1, 1, 1})}, true, true, false, true, false},
      {{1, 16, 9, 9}, {32, 4, 3, 3}, {A::Int("group", 4), A::Ints("strides", {2, 2})}, false, false, false, true, false},
      {{2, 8, 7, 11}, {8, 4, 3, 1}, {A::Int("group", 2), A::Ints("pads", {1, 0, 1, 0})}, true, false, true, true, false},
      {{2, 8, 7, 11}, {8, 4, 3, 3}, {A::Int("group", 2), A::Ints("pads", {1, 1, 1, 1})}, true, true, true, true, false},
      {{2, 32, 20}, {32, 16, 3}, {A::Int("group", 2), A::Ints("pads", {1, 1})}, true, true, false, true, true},
      {{2, 12, 7, 11}, {12, 6, 3, 1}, {A::Int("group", 2), A::Ints("pads", {1, 0, 1, 0})}, true, false, false, false, false},
      {{2, 6, 20}, {6, 3, 3}, {A::Int("group", 2), A::Ints("pads", {2, 0})}, true, true, true, false, false},
  };
  const bool avx512 = testing::cpu_has_avx512();
  for (const Case& k : cases) {
    const std::string trace = shape_str(k.x) + " * " + shape_str(k.w);
    ConvRun r = conv_run(k.x, k.w, k.attrs, k.bias, k.relu || k.residual);
    if (k.residual) {
      if (!k.relu) r.attrs.pop_back();  // a FusedConv with the sum only
      const Shape ys = run_op("Conv", {r.in[0], r.in[1]}, k.attrs)[0].shape();
      Tensor z(DType::kFloat32, ys);
      for (int64_t i = 0; i < z.numel(); ++i) z.as<float>()[i] = static_cast<float>((i * 3) % 17) / 8.f - 1.f;
      if (!k.bias) r.in.push_back(Tensor());
      r.in.push_back(z);
    }
    kernels::KernelConfig onednn;
    onednn.variant = "post_op";
    Tensor want, got;
    const std::vector<std::string> plain =
        convolution_impls([&] { want = run_op(r.op, r.in, r.attrs, 1, r.domain, onednn)[0]; });
    ASSERT_EQ(plain.size(), 1u) << trace;
    EXPECT_NE(plain[0].find("gemm"), std::string::npos) << trace << ": not a case oneDNN runs as gemm: " << plain[0];
    const std::vector<std::string> impls =
        convolution_impls([&] { got = run_op(r.op, r.in, r.attrs, 1, r.domain)[0]; });
    ASSERT_EQ(impls.size(), 1u) << trace;
    EXPECT_EQ(impls[0].find("gemm") == std::string::npos, avx512 ? k.blocked : k.blocked_avx2)
        << trace << ": " << impls[0];
    ASSERT_EQ(got.shape(), want.shape()) << trace;
    expect_close(values<float>(got), values<float>(want), 1e-5f, 1e-5f);
  }
}

// ConvTranspose with stride equal to the kernel (2x2 / 2, 3x3 / 3, 1x2 /
// 1x2), batch 2, with and without bias: the MatMul-and-scatter kernel
// against the operator's formula written out, in which each output cell
// has one source cell: Y[n,oc,i*KH+a,j*KW+b] = B[oc] + sum_ic X[n,ic,i,j]
// W[ic,oc,a,b]. The product is made in bands of input rows of at most
// 1 MiB: 24 outputs 2x2 over 48x64 take 2 bands of 24 rows; 64 outputs 2x2
// over 37x128 (37 is prime, a row 128 KiB) 37 bands of one row. A stride
// other than the kernel keeps the deconvolution.
TEST(NnConvTranspose, StrideEqualToKernelRunsAsOneMatmul) {
  struct Case {
    int64_t ic, oc, h, w, kh, kw;
    bool bias;
  };
  for (const Case& k : {Case{5, 3, 4, 6, 2, 2, true}, Case{16, 8, 3, 3, 3, 3, false}, Case{4, 2, 5, 7, 1, 2, true},
                        Case{8, 24, 48, 64, 2, 2, true}, Case{8, 64, 37, 128, 2, 2, false}}) {
    const int64_t N = 2, OH = k.h * k.kh, OW = k.w * k.kw;
    Tensor x(DType::kFloat32, {N, k.ic, k.h, k.w}), w(DType::kFloat32, {k.ic, k.oc, k.kh, k.kw}), b(DType::kFloat32, {k.oc});
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
    for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = static_cast<float>((i * 5) % 13) / 6.f - 1.f;
    for (int64_t i = 0; i < b.numel(); ++i) b.as<float>()[i] = static_cast<float>(i % 5) - 2.f;
    std::vector<float> want(N * k.oc * OH * OW);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < k.oc; ++oc)
        for (int64_t r = 0; r < OH; ++r)
          for (int64_t c = 0; c < OW; ++c) {
            const int64_t i = r / k.kh, a = r % k.kh, j = c / k.kw, bb = c % k.kw;
            double acc = k.bias ? b.as<float>()[oc] : 0.0;
            for (int64_t ic = 0; ic < k.ic; ++ic)
              acc += double(x.as<float>()[((n * k.ic + ic) * k.h + i) * k.w + j]) *
                     w.as<float>()[((ic * k.oc + oc) * k.kh + a) * k.kw + bb];
            want[((n * k.oc + oc) * OH + r) * OW + c] = static_cast<float>(acc);
          }
    std::vector<Tensor> in = {x, w};
    if (k.bias) in.push_back(b);
    const std::vector<ir::Attribute> attrs = {ir::Attribute::Ints("strides", {k.kh, k.kw})};
    const auto got = run_op("ConvTranspose", in, attrs);
    ASSERT_EQ(got[0].shape(), (Shape{N, k.oc, OH, OW}));
    expect_close(values<float>(got[0]), want, 1e-5f, 1e-5f);

    ir::Graph g;
    ir::Node* n = g.add_node("ConvTranspose", {g.add_value("x", ir::TensorType::of(DType::kFloat32, x.shape())),
                                               g.add_constant("w", w)},
                             {"y"}, "deconv");
    n->attrs = attrs;
    EXPECT_EQ(kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n))->impl_name(), "onednn.deconv_as_matmul");
    n->attrs = {ir::Attribute::Ints("strides", {1, 1})};
    EXPECT_EQ(kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n))->impl_name(), "onednn.deconv");
  }
}

// Forms the MatMul path does not take keep oneDNN's convolution: two
// groups, a 3-D window, columns over the 16 MiB bound (64 channels 3x3 over
// 128x128: 36 MiB); the general windows (padding, dilation, two channels in
// 1-D, a stride on a 1x1, 512 channels k3 s2 over 3199 frames) run as a
// MatMul of their columns.
TEST(NnConv, OtherPlainFormsKeepTheConvolution) {
  struct Case {
    Shape x, w, y;
    std::vector<ir::Attribute> attrs;
    bool matmul;
  };
  const std::vector<Case> cases = {
      {{1, 8, 5, 5}, {4, 8, 1, 1}, {1, 4, 7, 7}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, true},
      {{1, 8, 5, 5}, {4, 4, 1, 1}, {1, 4, 5, 5}, {ir::Attribute::Int("group", 2)}, false},
      {{1, 1, 40}, {4, 1, 3}, {1, 4, 36}, {ir::Attribute::Ints("dilations", {2})}, true},
      {{1, 2, 40}, {4, 2, 8}, {1, 4, 33}, {}, true},
      {{1, 8, 6, 6}, {4, 8, 1, 1}, {1, 4, 3, 3}, {ir::Attribute::Ints("strides", {2, 2})}, true},
      {{1, 2, 4, 4, 4}, {3, 2, 2, 2, 2}, {1, 3, 3, 3, 3}, {}, false},
      {{1, 64, 128, 128}, {64, 64, 3, 3}, {1, 64, 128, 128}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, false},
      // wav2vec 2.0's second feature convolution: 9.4 MiB of columns, under the bound.
      {{1, 512, 3199}, {512, 512, 3}, {1, 512, 1599}, {ir::Attribute::Ints("strides", {2})}, true},
  };
  for (const Case& k : cases) {
    ir::Graph g;
    Tensor w(DType::kFloat32, k.w);
    ir::Node* n = g.add_node("Conv", {g.add_value("x", ir::TensorType::of(DType::kFloat32, k.x)), g.add_constant("w", w)},
                             {"y"}, "conv");
    n->attrs = k.attrs;
    n->output(0)->type = ir::TensorType::of(DType::kFloat32, k.y);
    EXPECT_EQ(kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n))->impl_name(),
              k.matmul ? matmul_or_conv() : "onednn.conv")
        << shape_str(k.x) << " * " << shape_str(k.w);
  }
}



/// A 3x3, pads 1 Conv (or, with an activation or a residual, a FusedConv)
/// node over static types: X [xs], W [m, xs[1], 3, 3] and B constants, Y.
struct WinogradCase {
  Shape xs;
  int64_t m;
  int64_t stride = 1;
  bool relu = false, residual = false;
  int64_t kernel = 3, group = 1;
};
ir::Node* winograd_case_node(ir::Graph& g, const WinogradCase& k) {
  const int64_t oh = (k.xs[2] + 2 - k.kernel) / k.stride + 1, ow = (k.xs[3] + 2 - k.kernel) / k.stride + 1;
  std::vector<ir::Value*> ins = {g.add_value("x", ir::TensorType::of(DType::kFloat32, k.xs)),
                                 g.add_constant("w", Tensor(DType::kFloat32, {k.m, k.xs[1] / k.group, k.kernel, k.kernel})),
                                 g.add_constant("b", Tensor(DType::kFloat32, {k.m}))};
  const bool fused = k.relu || k.residual;
  if (k.residual) ins.push_back(g.add_value("z", ir::TensorType::of(DType::kFloat32, {k.xs[0], k.m, oh, ow})));
  ir::Node* n = g.add_node(fused ? ops::kFusedConvOp : "Conv", ins, {"y"}, "conv", fused ? ops::kGecDomain : "");
  n->attrs = {ir::Attribute::Ints("pads", {1, 1, 1, 1}), ir::Attribute::Ints("strides", {k.stride, k.stride}),
              ir::Attribute::Int("group", k.group)};
  if (k.relu) n->attrs.push_back(ir::Attribute::String("activation", "Relu"));
  n->output(0)->type = ir::TensorType::of(DType::kFloat32, {k.xs[0], k.m, oh, ow});
  return n;
}

/// The nChw16c -> nChw16c config of a winograd_case_node.
kernels::KernelConfig blocked_config(const ir::Node& n, const std::string& variant = "") {
  kernels::KernelConfig c = kernels::KernelConfig::for_node(n);
  c.input_layouts.assign(n.inputs().size(), ops::Layout::kPlain);
  c.input_layouts[0] = ops::Layout::kNChw16c;
  if (n.inputs().size() > 3) c.input_layouts[3] = ops::Layout::kNChw16c;
  c.output_layouts = {ops::Layout::kNChw16c};
  c.variant = variant;
  return c;
}

/// A double-precision 2-D convolution of plain X [N, C, H, W] and W [M, C,
/// KH, KW] into Y of shape `ys` (ONNX Conv-11 with begin pads pt, pl; the
/// end pads are what Y's size implies): bias b[m] (null: none) first, then
/// the taps in (c, ky, kx) order, then the residual z (null: none) and the
/// activation `act` ("" or Relu, Clip, LeakyRelu, HardSigmoid, HardSwish,
/// Sigmoid, with alpha and beta as those ops take them). Returns Y; *largest
/// gets the largest |y|.
std::vector<float> reference_conv2d(const Tensor& x, const Tensor& w, const Shape& ys, std::array<int64_t, 2> strides,
                                    std::array<int64_t, 2> pads, std::array<int64_t, 2> dilations, const float* b,
                                    const float* z, const std::string& act, float alpha, float beta, float* largest) {
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t M = w.shape()[0], KH = w.shape()[2], KW = w.shape()[3], OH = ys[2], OW = ys[3];
  std::vector<float> want(static_cast<size_t>(N * M * OH * OW));
  *largest = 0;
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = b ? b[m] : 0.0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t iy = oy * strides[0] - pads[0] + ky * dilations[0];
                const int64_t ix = ox * strides[1] - pads[1] + kx * dilations[1];
                if (iy < 0 || ix < 0 || iy >= H || ix >= W) continue;
                acc += double(x.as<float>()[((nn * C + c) * H + iy) * W + ix]) *
                       w.as<float>()[((m * C + c) * KH + ky) * KW + kx];
              }
          const size_t at = static_cast<size_t>(((nn * M + m) * OH + oy) * OW + ox);
          if (z) acc += z[at];
          const auto clamp01 = [](double v) { return std::min(1.0, std::max(0.0, v)); };
          if (act == "Relu") acc = acc < 0 ? 0 : acc;
          if (act == "Clip") acc = std::min<double>(std::max<double>(acc, alpha), beta);
          if (act == "LeakyRelu") acc = acc < 0 ? alpha * acc : acc;
          if (act == "HardSigmoid") acc = clamp01(alpha * acc + beta);
          if (act == "HardSwish") acc = acc * clamp01(acc / 6 + 0.5);
          if (act == "Sigmoid") acc = 1 / (1 + std::exp(-acc));
          want[at] = static_cast<float>(acc);
          *largest = std::max(*largest, std::fabs(want[at]));
        }
  return want;
}

/// Inputs of a 3x3 winograd_case_node (pads 1, its stride) with Y [ys] and
/// what it should compute, as a double-precision loop: X, W, B and Z
/// filled with fixed patterns, X and Z also in nChw16c, Y in nChw16c, and
/// the largest |y| (the tolerances scale with it).
struct ConvReference {
  Tensor w, b, xb, zb;
  std::vector<float> want_blocked;
  float largest = 0;
};
ConvReference conv_reference(const WinogradCase& k, const Shape& ys) {
  const int64_t C = k.xs[1], M = k.m, S = k.stride;
  Tensor x(DType::kFloat32, k.xs), w(DType::kFloat32, {M, C, 3, 3}), b(DType::kFloat32, {M}), z(DType::kFloat32, ys);
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = static_cast<float>((i * 5) % 13) / 60.f - 0.1f;
  for (int64_t i = 0; i < b.numel(); ++i) b.as<float>()[i] = static_cast<float>(i % 5) - 2.f;
  for (int64_t i = 0; i < z.numel(); ++i) z.as<float>()[i] = static_cast<float>((i * 3) % 17) / 4.f - 2.f;
  float largest = 0;
  const std::vector<float> want = reference_conv2d(x, w, ys, {S, S}, {1, 1}, {1, 1}, b.as<float>(),
                                                   k.residual ? z.as<float>() : nullptr, k.relu ? "Relu" : "", 0.f,
                                                   0.f, &largest);
  ConvReference r{std::move(w), std::move(b), to_nchw16c(x), to_nchw16c(z), {}, largest};
  r.want_blocked = values<float>(to_nchw16c(testing::make<float>(ys, want)));
  return r;
}

// The compile-time choice (kernels::choose_variant) takes Winograd for 3x3,
// stride-1, ungrouped convolutions of constant weights in nChw16c with 32
// or more channels
// where oneDNN's F(4x4,3x3) kernel over at least 25 output tiles or its
// F(2x2,3x3) kernel with at most 4 output-channel groups and 256 Ki 2x2
// tiles x input x output channels applies, wanting at most 64 MiB of
// scratchpad (oneDNN 2.6 has both on AVX-512 only; on
// other CPUs every answer is ""), and never for the other forms. oneDNN
// picks among its Winograd kernels by the thread count too: the answers
// below are for 2 OpenMP threads (this project's CI machine), set here.
TEST(NnConv, WinogradIsChosenOnlyWhereItPays) {
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
  struct Case {
    WinogradCase k;
    bool blocked;
    bool winograd;  // on AVX-512
  };
  const std::vector<Case> cases = {
      {{{1, 64, 56, 56}, 64}, true, true},                          // F(2x2,3x3), 2 groups
      {{{1, 128, 28, 28}, 128, 1, true}, true, true},               // F(4x4,3x3)
      {{{1, 256, 14, 14}, 256, 1, true, true}, true, true},         // with a residual sum
      {{{2, 512, 7, 7}, 512}, true, true},                          // batch 2
      {{{1, 64, 56, 56}, 64}, false, false},                        // plain layouts
      {{{1, 64, 56, 56}, 64, 2}, true, false},                      // stride 2
      {{{1, 192, 14, 14}, 208}, true, false},                       // F(2x2,3x3) with 13 groups
      {{{1, 16, 56, 56}, 32}, true, false},                         // too few channels
      {{{1, 64, 28, 28}, 64, 1, false, false, 3, 2}, true, false},  // grouped
      {{{1, 64, 28, 28}, 64, 1, false, false, 5}, true, false},     // 5x5
      {{{1, 256, 16, 16}, 256}, true, false},                       // F(4x4,3x3) over 16 tiles only
      {{{2, 256, 16, 16}, 256}, true, true},                        //   over 32 tiles
      {{{1, 32, 28, 28}, 64}, true, true},                          // F(2x2,3x3): 196 tiles x 32 x 64 (392 Ki)
      {{{1, 512, 28, 28}, 512}, true, true},                        // F(4x4,3x3), 49 MiB of scratchpad
      {{{1, 2048, 28, 28}, 512}, true, false},                      //   167 MiB: over the 64 MiB cap
  };
  const bool avx512 = testing::cpu_has_avx512();
  for (const Case& c : cases) {
    ir::Graph g;
    const ir::Node* n = winograd_case_node(g, c.k);
    kernels::KernelConfig config = c.blocked ? blocked_config(*n) : kernels::KernelConfig::for_node(*n);
    const std::string trace = shape_str(c.k.xs) + " -> " + std::to_string(c.k.m) +
                              (c.blocked ? " nChw16c" : " plain") + " stride " + std::to_string(c.k.stride) +
                              " kernel " + std::to_string(c.k.kernel) + " group " + std::to_string(c.k.group);
    EXPECT_EQ(kernels::choose_variant(*n, config), c.winograd && avx512 ? "winograd" : "") << trace;
  }
  // F(2x2,3x3) below 256 Ki tiles x channels: GoogLeNet's 5x5-branch
  // convolutions (49 tiles x 32 x 64 = 98 Ki; 16 x 32 x 128 = 64 Ki) take
  // the direct variant, small enough for our own loops.
  for (const WinogradCase& k : {WinogradCase{{1, 32, 14, 14}, 64}, WinogradCase{{1, 32, 7, 7}, 128}}) {
    ir::Graph g;
    const ir::Node* n = winograd_case_node(g, k);
    EXPECT_EQ(kernels::choose_variant(*n, blocked_config(*n)), "direct") << shape_str(k.xs) << " -> " << k.m;
  }
  // Weights fed as a graph input would be transformed again in every run.
  ir::Graph g;
  ir::Node* n = winograd_case_node(g, {{1, 64, 56, 56}, 64});
  n->set_input(1, g.add_value("w_fed", n->input(1)->type));
  EXPECT_EQ(kernels::choose_variant(*n, blocked_config(*n)), "");
  omp_set_num_threads(threads_before);
}

// The winograd variant against the direct kernel and a double-precision
// loop: same shapes, post-ops (bias, residual sum, Relu) and layouts; the
// verbose log shows oneDNN ran a Winograd primitive. Tolerance: Winograd
// rounds through transformed tiles, so both are held to 2e-5 of the
// largest |y| (outputs here reach 20-60). Where oneDNN has no Winograd
// kernel (no AVX-512) the variant runs the direct one and only the values
// are checked.
TEST(NnConv, WinogradVariantMatchesTheDirectConvolution) {
  struct Case {
    WinogradCase k;
    std::string variant;
  };
  const std::vector<Case> cases = {
      {{{1, 64, 20, 20}, 64, 1, true}, "winograd"},                 // F(2x2,3x3) + Relu
      {{{1, 128, 28, 28}, 128, 1, true, true}, "winograd"},         // F(4x4,3x3) + sum + Relu
      {{{1, 128, 28, 28}, 128, 1, true, true}, "winograd+kernel"},  //   the Relu run after it
      {{{2, 256, 7, 7}, 256}, "winograd"},                          // plain Conv, batch 2
  };
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
  for (const Case& c : cases) {
    const WinogradCase& k = c.k;
    ir::Graph g;
    ir::Node* n = winograd_case_node(g, k);
    const ConvReference r = conv_reference(k, n->output(0)->type.static_shape());
    const std::vector<float>& want_blocked = r.want_blocked;
    const float largest = r.largest;
    const TensorView xv = r.xb.view(), wv = r.w.view(), bv = r.b.view(), zv = r.zb.view();
    std::vector<const TensorView*> views = {&xv, &wv, &bv};
    if (k.residual) views.push_back(&zv);
    const std::string trace = shape_str(k.xs) + " -> " + std::to_string(k.m) + " " + c.variant;
    SCOPED_TRACE(trace);
    const std::vector<Tensor> direct = kernels::evaluate_node(*n, views, 2, nullptr, blocked_config(*n));
    std::vector<Tensor> wino;
    ASSERT_EQ(dnnl_set_verbose(1), dnnl_success);
    const std::string log = testing::capture_stdout(
        [&] { wino = kernels::evaluate_node(*n, views, 2, nullptr, blocked_config(*n, c.variant)); });
    dnnl_set_verbose(0);
    EXPECT_EQ(kernels::create_kernel(*n, blocked_config(*n, c.variant))->impl_name(),
              k.relu || k.residual ? "onednn.conv.winograd+fused" : "onednn.conv.winograd");
    if (testing::cpu_has_avx512()) {
      EXPECT_NE(log.find("wino"), std::string::npos) << log;
    }
    const float atol = 2e-5f * largest;
    expect_close(values<float>(direct[0]), want_blocked, 0.f, atol);
    expect_close(values<float>(wino[0]), want_blocked, 0.f, atol);
  }
  omp_set_num_threads(threads_before);
}

// The compile-time choice of the nhwc variant (nhwc_pays): a strided
// spatial convolution in nChw16c whose work saved in oneDNN's nhwc brgemm
// kernel (28% of its FLOPs) outweighs reordering X, Y and Z (100 FLOPs an
// element): ResNet-50's stride-2 3x3 convolutions from 128 channels up.
// Never stride 1 (Winograd's or the direct kernel's), 1x1, grouped, plain,
// or where the reorders cost more; nowhere without AVX-512 (no brgemm).
TEST(NnConv, NhwcVariantIsChosenForStridedConvolutionsWhereItPays) {
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
  struct Case {
    WinogradCase k;
    bool blocked;
    std::string avx512;  // the answer on AVX-512; "" elsewhere
  };
  const std::vector<Case> cases = {
      {{{1, 128, 56, 56}, 128, 2, true}, true, "nhwc"},               // ResNet-50's layer2.0 conv2
      {{{1, 512, 14, 14}, 512, 2, true, true}, true, "nhwc"},         //   layer4.0's shape, with a residual sum
      {{{1, 128, 130, 130}, 128, 2, true}, true, ""},                 // 65x65 outputs: beyond the range measured
      {{{1, 64, 56, 56}, 64, 2, true}, true, ""},                     // reorders 25 MFLOP against 16 saved
      {{{1, 128, 28, 28}, 128, 1, true}, true, "winograd"},           // stride 1: Winograd
      {{{1, 256, 14, 14}, 256, 1, false, false, 5}, true, ""},        // stride 1, 5x5 (no Winograd): direct
      {{{1, 2048, 14, 14}, 2048, 2, false, false, 1}, true, ""},      // 1x1 (would pay by the FLOPs)
      {{{1, 512, 14, 14}, 512, 2, true, false, 3, 2}, true, ""},      // grouped (would pay by the FLOPs)
      {{{1, 128, 56, 56}, 128, 2, true}, false, ""},                  // plain layouts
  };
  const bool avx512 = testing::cpu_has_avx512();
  for (const Case& c : cases) {
    ir::Graph g;
    const ir::Node* n = winograd_case_node(g, c.k);
    const kernels::KernelConfig config = c.blocked ? blocked_config(*n) : kernels::KernelConfig::for_node(*n);
    EXPECT_EQ(kernels::choose_variant(*n, config), avx512 ? c.avx512 : "")
        << shape_str(c.k.xs) << " -> " << c.k.m << " stride " << c.k.stride << " kernel " << c.k.kernel
        << " group " << c.k.group << (c.blocked ? " nChw16c" : " plain");
  }
  omp_set_num_threads(threads_before);
}

// The nhwc variant against the direct kernel and a double-precision loop:
// strided 3x3 convolutions with bias, residual sum and Relu, nChw16c in and
// out; the verbose log shows oneDNN ran its brgemm kernel on nhwc and the
// reorders (on AVX-512; elsewhere the variant runs the direct kernel and
// only the values are checked). Both held to 1e-5 of the largest |y| (the
// products sum in another order).
TEST(NnConv, NhwcVariantMatchesTheDirectConvolution) {
  struct Case {
    WinogradCase k;
    std::string variant;
  };
  const std::vector<Case> cases = {
      {{{1, 32, 20, 20}, 48, 2, true}, "nhwc"},                 // + Relu
      {{{1, 64, 15, 15}, 32, 2, true, true}, "nhwc"},           // + sum + Relu, odd size
      {{{1, 64, 15, 15}, 32, 2, true, true}, "nhwc+kernel"},    //   the Relu run after it
      {{{2, 32, 12, 12}, 64, 3}, "nhwc"},                       // plain Conv, batch 2, stride 3
  };
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
  for (const Case& c : cases) {
    const WinogradCase& k = c.k;
    ir::Graph g;
    ir::Node* n = winograd_case_node(g, k);
    const ConvReference r = conv_reference(k, n->output(0)->type.static_shape());
    const std::vector<float>& want_blocked = r.want_blocked;
    const float largest = r.largest;
    const TensorView xv = r.xb.view(), wv = r.w.view(), bv = r.b.view(), zv = r.zb.view();
    std::vector<const TensorView*> views = {&xv, &wv, &bv};
    if (k.residual) views.push_back(&zv);
    SCOPED_TRACE(shape_str(k.xs) + " -> " + std::to_string(k.m) + " stride " + std::to_string(k.stride) + " " +
                 c.variant);
    const std::vector<Tensor> direct = kernels::evaluate_node(*n, views, 2, nullptr, blocked_config(*n));
    std::vector<Tensor> nhwc;
    ASSERT_EQ(dnnl_set_verbose(1), dnnl_success);
    const std::string log = testing::capture_stdout(
        [&] { nhwc = kernels::evaluate_node(*n, views, 2, nullptr, blocked_config(*n, c.variant)); });
    dnnl_set_verbose(0);
    EXPECT_EQ(kernels::create_kernel(*n, blocked_config(*n, c.variant))->impl_name(),
              k.relu || k.residual ? "onednn.conv.nhwc+fused" : "onednn.conv.nhwc");
    if (testing::cpu_has_avx512()) {
      EXPECT_NE(log.find("brg"), std::string::npos) << log;
      // X (and Z) reordered nChw16c -> nhwc, Y back (the weights' reorder is
      // plain -> blocked and matches neither).
      const auto reordered = [&log](const std::string& from, const std::string& to) {
        std::istringstream lines(log);
        for (std::string line; std::getline(lines, line);)
          if (line.find(",reorder,") != std::string::npos &&
              line.find("src_f32::blocked:" + from + ":") != std::string::npos &&
              line.find("dst_f32::blocked:" + to + ":") != std::string::npos)
            return true;
        return false;
      };
      EXPECT_TRUE(reordered("aBcd16b", "acdb")) << log;
      EXPECT_TRUE(reordered("acdb", "aBcd16b")) << log;
    }
    const float atol = 1e-5f * largest;
    expect_close(values<float>(direct[0]), want_blocked, 0.f, atol);
    expect_close(values<float>(nhwc[0]), want_blocked, 0.f, atol);
  }
  omp_set_num_threads(threads_before);
}

// A variant the kernel does not know, or winograd on plain layouts, is a
// clear error naming the node.
TEST(NnConv, UnknownOrMisplacedVariantIsRefused) {
  ir::Graph g;
  ir::Node* n = winograd_case_node(g, {{1, 64, 8, 8}, 64, 1, true});
  for (const std::string& v : {std::string("fast"), std::string("winograd+winograd"), std::string("winograd+"),
                               std::string("+winograd"), std::string("post_op+kernel"), std::string("nhwc+winograd"),
                               std::string("direct+nhwc")}) {
    try {
      kernels::create_kernel(*n, blocked_config(*n, v));
      FAIL() << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidModel) << v;
      EXPECT_NE(std::string(e.what()).find("conv"), std::string::npos) << e.what();
    }
  }
  kernels::KernelConfig plain = kernels::KernelConfig::for_node(*n);
  plain.variant = "winograd";
  gec::testing::expect_error([&] { kernels::create_kernel(*n, plain); }, ErrorCode::kInvalidModel,
                             "node 'conv' (com.graphengine::FusedConv): the winograd variant needs nChw16c");
  plain.variant = "nhwc";
  gec::testing::expect_error([&] { kernels::create_kernel(*n, plain); }, ErrorCode::kInvalidModel,
                             "node 'conv' (com.graphengine::FusedConv): the nhwc variant needs nChw16c");
  EXPECT_EQ(kernels::create_kernel(*n, blocked_config(*n, "winograd+post_op"))->impl_name(),
            "onednn.conv.winograd+fused");
  // An op without variants refuses one rather than ignoring it.
  ir::Node* relu = g.add_node("Relu", {n->output(0)}, {"r"}, "relu");
  relu->output(0)->type = n->output(0)->type;
  kernels::KernelConfig rc = kernels::KernelConfig::for_node(*relu);
  rc.variant = "winograd";
  gec::testing::expect_error([&] { kernels::create_kernel(*relu, rc); }, ErrorCode::kInvalidModel,
                             "node 'relu' (Relu): kernel variant 'winograd' given to an op that has none");
  rc.variant = "";
  EXPECT_NE(kernels::create_kernel(*relu, rc), nullptr);
}


/// One direct-variant case: X [xs] * W [m, xs[1], kh, kw] with the window
/// attributes, in layout `in` -> `out`, bias or not, residual Z or not, a
/// fused activation ("" = none) with its alpha and beta.
struct DirectCase {
  Shape xs;
  int64_t m, kh, kw;
  std::vector<int64_t> strides, pads, dilations;
  ops::Layout in, out;
  bool bias = true, residual = false;
  std::string act{};
  float alpha = 0.f, beta = 0.f;
};

ir::Node* direct_case_node(ir::Graph& g, const DirectCase& k) {
  const int64_t oh = (k.xs[2] + k.pads[0] + k.pads[2] - k.dilations[0] * (k.kh - 1) - 1) / k.strides[0] + 1;
  const int64_t ow = (k.xs[3] + k.pads[1] + k.pads[3] - k.dilations[1] * (k.kw - 1) - 1) / k.strides[1] + 1;
  std::vector<ir::Value*> ins = {g.add_value("x", ir::TensorType::of(DType::kFloat32, k.xs)),
                                 g.add_constant("w", Tensor(DType::kFloat32, {k.m, k.xs[1], k.kh, k.kw}))};
  const bool fused = !k.act.empty() || k.residual;
  if (k.bias || k.residual) ins.push_back(k.bias ? g.add_constant("b", Tensor(DType::kFloat32, {k.m})) : nullptr);
  if (k.residual) ins.push_back(g.add_value("z", ir::TensorType::of(DType::kFloat32, {k.xs[0], k.m, oh, ow})));
  ir::Node* n = g.add_node(fused ? ops::kFusedConvOp : "Conv", ins, {"y"}, "conv", fused ? ops::kGecDomain : "");
  n->attrs = {ir::Attribute::Ints("pads", k.pads), ir::Attribute::Ints("strides", k.strides),
              ir::Attribute::Ints("dilations", k.dilations)};
  if (!k.act.empty()) {
    n->attrs.push_back(ir::Attribute::String("activation", k.act));
    n->attrs.push_back(ir::Attribute::Float("activation_alpha", k.alpha));
    n->attrs.push_back(ir::Attribute::Float("activation_beta", k.beta));
  }
  n->output(0)->type = ir::TensorType::of(DType::kFloat32, {k.xs[0], k.m, oh, ow});
  return n;
}

kernels::KernelConfig direct_config(const ir::Node& n, ops::Layout in, ops::Layout out, const std::string& variant) {
  kernels::KernelConfig c = kernels::KernelConfig::for_node(n);
  c.input_layouts.assign(n.inputs().size(), ops::Layout::kPlain);
  c.input_layouts[0] = in;
  if (n.inputs().size() > 3) c.input_layouts[3] = out;
  c.output_layouts = {out};
  c.variant = variant;
  return c;
}

/// Calls check(node, inputs, expected, largest) for case `k`: its node
/// (direct_case_node), X / W / B / Z filled from fixed patterns, X and Z in
/// the case's layouts, and a double-precision loop of ONNX Conv-11 plus
/// FusedConv's residual and activation (reference_conv2d) in Y's layout,
/// with the largest |y|.
void with_direct_case(const DirectCase& k,
                      const std::function<void(ir::Node&, const std::vector<const TensorView*>&,
                                               const std::vector<float>&, float)>& check) {
  ir::Graph g;
  ir::Node* n = direct_case_node(g, k);
  const Shape ys = n->output(0)->type.static_shape();
  const int64_t C = k.xs[1], M = k.m;
  Tensor x(DType::kFloat32, k.xs), w(DType::kFloat32, {M, C, k.kh, k.kw}), b(DType::kFloat32, {M}),
      z(DType::kFloat32, ys);
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = static_cast<float>((i * 5) % 13) / 30.f - 0.2f;
  for (int64_t i = 0; i < b.numel(); ++i) b.as<float>()[i] = static_cast<float>(i % 5) / 2.f - 1.f;
  for (int64_t i = 0; i < z.numel(); ++i) z.as<float>()[i] = static_cast<float>((i * 3) % 17) / 4.f - 2.f;
  float largest = 0;
  const std::vector<float> want =
      reference_conv2d(x, w, ys, {k.strides[0], k.strides[1]}, {k.pads[0], k.pads[1]},
                       {k.dilations[0], k.dilations[1]}, k.bias ? b.as<float>() : nullptr,
                       k.residual ? z.as<float>() : nullptr, k.act, k.alpha, k.beta, &largest);
  const Tensor xl = to_layout(x, k.in), zl = to_layout(z, k.out);
  const TensorView xv = xl.view(), wv = w.view(), bv = b.view(), zv = zl.view();
  std::vector<const TensorView*> views = {&xv, &wv};
  if (k.bias || k.residual) views.push_back(k.bias ? &bv : nullptr);
  if (k.residual) views.push_back(&zv);
  const std::vector<float> expected = values<float>(to_layout(testing::make<float>(ys, want), k.out));
  check(*n, views, expected, largest);
}

/// FusedConv `n` (with a residual, views[3] its Z) run by one kernel of
/// `config` with Z's buffer as Y's, as the memory planner places them
/// (FusedConv's residual is in place, ops::IoPair::alone): Y starts as Z's
/// bytes, and the result must match `expected` within `tolerance`.
/// One reshape and run of `kernel` (made for node `n`) over `views` on
/// `threads` threads with `scratch`; with `z_in_y`, Y's buffer is Z's
/// (views[3]) and starts as Z's bytes, as the memory planner places
/// FusedConv's residual. Returns Y.
Tensor run_conv_kernel(kernels::Kernel& kernel, const ir::Node& n, const std::vector<const TensorView*>& views,
                       bool z_in_y, int threads, kernels::ScratchBuffer& scratch) {
  Tensor y(DType::kFloat32, n.output(0)->type.static_shape());
  if (z_in_y) std::memcpy(y.data(), views[3]->data, y.bytes());
  TensorView yv = y.view();
  kernels::KernelContext ctx;
  ctx.inputs = views;
  if (z_in_y) ctx.inputs[3] = &yv;
  ctx.outputs = {&yv};
  ctx.num_threads = threads;
  ctx.scratch = &scratch;
  omp_set_num_threads(threads);
  kernel.reshape(ctx);
  kernel.run(ctx);
  omp_set_num_threads(2);
  return y;
}

void expect_residual_in_place(ir::Node& n, const kernels::KernelConfig& config,
                              const std::vector<const TensorView*>& views, const std::vector<float>& expected,
                              float tolerance, int threads) {
  ASSERT_EQ(static_cast<size_t>(shape_numel(n.output(0)->type.static_shape())) * sizeof(float),
            static_cast<size_t>(views[3]->numel()) * sizeof(float));
  auto kernel = kernels::create_kernel(n, config);
  kernels::ScratchBuffer scratch;
  expect_close(values<float>(run_conv_kernel(*kernel, n, views, true, threads, scratch)), expected, 0.f, tolerance);
}

/// Each case of `cases` through kernel variant `variant` (layouts of the
/// case, kernel `impl` or `impl`+fused) on 1 and 2 threads against
/// with_direct_case's double-precision reference, within `tolerance` of
/// the largest |y|, and with the residual in place where a case has one;
/// with `no_onednn_convolution`, also that no oneDNN convolution ran
/// (oneDNN's verbose log).
void expect_variant_matches_reference(const std::vector<DirectCase>& cases, const std::string& variant,
                                      const std::string& impl, float tolerance,
                                      bool no_onednn_convolution = false) {
  for (const DirectCase& k : cases) {
    with_direct_case(k, [&](ir::Node& n, const std::vector<const TensorView*>& views,
                            const std::vector<float>& expected, float largest) {
      const kernels::KernelConfig config = direct_config(n, k.in, k.out, variant);
      EXPECT_EQ(kernels::create_kernel(n, config)->impl_name(), k.act.empty() && !k.residual ? impl : impl + "+fused");
      for (int threads : {1, 2}) {
        SCOPED_TRACE(shape_str(k.xs) + " -> " + std::to_string(k.m) + " " + std::to_string(k.kh) + "x" +
                     std::to_string(k.kw) + " " + ops::layout_name(k.in) + " -> " + ops::layout_name(k.out) + " " +
                     k.act + " threads " + std::to_string(threads));
        std::vector<Tensor> got;
        const std::vector<std::string> impls =
            convolution_impls([&] { got = kernels::evaluate_node(n, views, threads, nullptr, config); });
        if (no_onednn_convolution) {
          EXPECT_TRUE(impls.empty()) << impls[0];
        }
        expect_close(values<float>(got[0]), expected, 0.f, tolerance * largest);
        if (k.residual) {
          SCOPED_TRACE("Z in Y");
          expect_residual_in_place(n, config, views, expected, tolerance * largest, threads);
        }
      }
    });
  }
}

// oneDNN's own convolutions (no native variant, plain, nhwc and nChw16c;
// gemm-based in plain NCHW, JIT elsewhere) and its nhwc kernel between
// reorders (the "nhwc" variant) with the residual in place, as the memory
// planner places FusedConv's Y over a dying Z: each against the
// double-precision reference within 1e-5 of the largest |y|.
TEST(NnConv, ResidualInPlaceOnOneDnnConvolutions) {
  using L = ops::Layout;
  const std::vector<std::pair<std::string, DirectCase>> cases = {
      {"", {{1, 32, 13, 11}, 48, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kPlain, L::kPlain, true, true, "Relu"}},
      {"", {{1, 32, 13, 11}, 48, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kPlain, L::kPlain, false, true, ""}},
      {"", {{2, 32, 13, 11}, 48, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"}},
      {"", {{1, 64, 28, 28}, 256, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"}},
      {"", {{1, 32, 13, 11}, 48, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNChw16c, true, true, "Relu"}},
      {"nhwc", {{1, 32, 13, 11}, 48, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNChw16c, true, true, "Relu"}},
  };
  for (const auto& c : cases) {
    const std::string& variant = c.first;  // named: clang 14 captures no structured bindings
    const DirectCase& k = c.second;
    with_direct_case(k, [&](ir::Node& n, const std::vector<const TensorView*>& views,
                            const std::vector<float>& expected, float largest) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE("'" + variant + "' " + shape_str(k.xs) + " " + ops::layout_name(k.in) + " threads " +
                     std::to_string(threads));
        expect_residual_in_place(n, direct_config(n, k.in, k.out, variant), views, expected, 1e-5f * largest,
                                 threads);
      }
    });
  }
}

// The direct variant (our own loops, conv.cc) against a double-precision
// loop of ONNX Conv-11 plus FusedConv's residual and activation: every
// layout pair it takes, output channels that fill no whole vector (24, 40
// and 12 and 3 in nhwc: a last vector of channels that is partial on every
// vector width), strides, dilations, asymmetric pads, 1x3 / 3x1 / 1x1 / 5x5
// windows, batch 2 (nhwc and nChw16c), no bias, each activation the loops apply (Relu, Clip,
// LeakyRelu, HardSigmoid, HardSwish) and one they leave to the epilogue
// (Sigmoid), 1x1 maps (the dot products), on 1 and 2 threads. Tolerance
// 1e-5 of the largest |y| (float32 sums of up to 960 products, in another
// order than the loop).
TEST(NnConv, DirectVariantMatchesAReferenceLoop) {
  using L = ops::Layout;
  const std::vector<DirectCase> cases = {
      {{1, 24, 20, 9}, 24, 1, 3, {1, 1}, {0, 1, 0, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "LeakyRelu", 0.2f},
      {{1, 1, 19, 8}, 24, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kPlain, L::kNhwc},
      {{2, 40, 7, 5}, 40, 3, 1, {2, 1}, {2, 0, 1, 0}, {1, 1}, L::kNhwc, L::kNhwc, false, true, "Relu"},
      {{1, 32, 9, 9}, 48, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, L::kNChw16c, L::kNChw16c, true, true, "Clip", -0.5f, 1.f},
      {{1, 16, 12, 12}, 64, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNChw16c, L::kNChw16c, true, false, "HardSigmoid",
       0.2f, 0.5f},
      {{1, 3, 17, 15}, 16, 5, 5, {2, 2}, {2, 1, 2, 3}, {1, 1}, L::kPlain, L::kNChw16c, true, false, "HardSwish"},
      {{1, 96, 3, 2}, 96, 1, 3, {1, 1}, {0, 1, 0, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "Sigmoid"},
      {{1, 16, 6, 6}, 80, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNhwc},
      {{2, 8, 5, 7}, 12, 3, 3, {1, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      {{1, 5, 4, 9}, 3, 1, 3, {1, 1}, {0, 2, 0, 0}, {1, 2}, L::kPlain, L::kNhwc},
      {{2, 32, 5, 5}, 32, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNChw16c, false, true, "LeakyRelu", 0.1f},
      // One pixel an image under a 1x1 window (run_direct_dots): five images
      // (four, then one, at a time), W split over the threads, no bias.
      {{5, 96, 1, 1}, 40, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "HardSigmoid", 0.2f,
       0.5f},
      {{1, 960, 1, 1}, 240, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNChw16c, L::kNChw16c, true, false, "Relu"},
      {{2, 240, 1, 1}, 963, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kPlain, L::kNhwc, false, true, "Sigmoid"},
      // At most 64 output pixels and 4+ channel vectors a thread: the
      // threads split the output channels (enough work for two threads:
      // 49 x 204 x 48 / 8 multiply-adds; 204 fills no whole 8- or
      // 16-float vector, so a range ends in a partial one).
      {{1, 48, 7, 7}, 204, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      {{1, 16, 6, 5}, 144, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNChw16c, true, true, "Clip", -0.5f,
       1.f},
  };
  expect_variant_matches_reference(cases, "direct", "native.direct", 1e-5f);
}

// The compile-time choice takes the direct variant for a small 2-D,
// ungrouped convolution of constant weights into an nhwc or nChw16c Y, and
// never for a plain Y, a grouped or fed W, more than 4 Mi multiply-adds,
// fewer than 64 products per output over more than 256 pixels, or a huge
// zero border.
// A spatial nhwc convolution with fewer than 32 output channels takes
// oneDNN's direct JIT kernel where it would get a brgemm one (as fast
// there, quicker to create; conv.cc kCheapCreationMaxOutputChannels); 48
// outputs, a 1x1 kernel or nChw16c keep what oneDNN picks first. Checked
// where this CPU has the brgemm kernels (AVX-512); elsewhere nothing
// changes, which the last lines check.
TEST(NnConv, FewOutputChannelsInNhwcTakeTheCheaperKernel) {
  using L = ops::Layout;
  const auto impl = [](const DirectCase& k) {
    ir::Graph g;
    return kernels::implementation_for_layout(*direct_case_node(g, k), k.in, k.out);
  };
  const DirectCase narrow{{1, 96, 40, 40}, 24, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  DirectCase wide = narrow, pointwise = narrow, blocked = narrow;
  wide.m = 48;
  pointwise.kh = pointwise.kw = 1;
  pointwise.pads = {0, 0, 0, 0};
  blocked.m = 16;
  blocked.in = blocked.out = L::kNChw16c;
  if (impl(wide).rfind("brgconv", 0) == 0) {
    EXPECT_EQ(impl(narrow).rfind("jit:", 0), 0u) << impl(narrow);
    EXPECT_EQ(impl(pointwise).rfind("brgconv_1x1", 0), 0u) << impl(pointwise);
  }
  EXPECT_FALSE(kernels::is_reference_implementation(impl(narrow))) << impl(narrow);
  // nChw16c has oneDNN JIT kernels with AVX-512 only (the layout
  // assignment moves such groups to nhwc elsewhere).
  EXPECT_EQ(kernels::is_reference_implementation(impl(blocked)), !testing::cpu_has_avx512()) << impl(blocked);
}

TEST(NnConv, DirectIsChosenForSmallConvolutions) {
  using L = ops::Layout;
  const auto choice = [](const DirectCase& k, const std::function<void(ir::Graph&, ir::Node*)>& edit = {}) {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, k);
    if (edit) edit(g, n);
    return kernels::choose_variant(*n, direct_config(*n, k.in, k.out, ""));
  };
  const DirectCase small{{1, 48, 16, 8}, 48, 1, 3, {1, 1}, {0, 1, 0, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  EXPECT_EQ(choice(small), "direct");  // 48 * 48 * 3 * 128 = 0.9 Mi multiply-adds
  DirectCase blocked = small;
  blocked.in = blocked.out = L::kNChw16c;
  EXPECT_EQ(choice(blocked), "direct");
  DirectCase plain_out = small;
  plain_out.out = L::kPlain;
  EXPECT_EQ(choice(plain_out), "");
  DirectCase large = small;
  large.xs = {1, 48, 128, 64};  // 57 Mi
  EXPECT_EQ(choice(large), "");
  EXPECT_EQ(choice(small, [](ir::Graph& g, ir::Node* n) { n->set_input(1, g.add_value("w_fed", n->input(1)->type)); }),
            "");
  EXPECT_EQ(choice(small, [](ir::Graph&, ir::Node* n) { n->attrs.push_back(ir::Attribute::Int("group", 2)); }), "");
  // Few products per output over many pixels stay on oneDNN; over a few
  // pixels (a squeeze-excite block's 1x1 convolution) they take the loops.
  DirectCase thin{{1, 16, 56, 56}, 48, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc};
  EXPECT_EQ(choice(thin), "");  // 16 products per output, 3136 pixels
  thin.xs = {1, 16, 1, 1};
  EXPECT_EQ(choice(thin), "direct");
  // One 16-channel block of nChw16c outputs over many pixels stays on
  // oneDNN (SqueezeNet's 64 -> 16 squeeze at 55x55); in nhwc, or over a
  // few pixels, it takes the loops.
  DirectCase squeeze{{1, 64, 55, 55}, 16, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNChw16c, L::kNChw16c};
  EXPECT_EQ(choice(squeeze), "");  // 3025 pixels
  DirectCase squeeze_nhwc = squeeze;
  squeeze_nhwc.in = squeeze_nhwc.out = L::kNhwc;
  EXPECT_EQ(choice(squeeze_nhwc), "direct");
  squeeze.xs = {1, 64, 16, 16};
  EXPECT_EQ(choice(squeeze), "direct");  // 256 pixels
  squeeze.m = 32;
  squeeze.xs = {1, 64, 40, 40};
  EXPECT_EQ(choice(squeeze), "direct");  // two blocks, 1600 pixels
  // Pads and strides far beyond X: the zero border would be most of what
  // the loops read (plan_direct_conv refuses it), so oneDNN keeps it, or
  // where its nhwc kernel is gemm-based the taps variant, which reads X's
  // one pixel only.
  DirectCase padded = small;
  padded.xs = {1, 16, 1, 1};
  padded.m = 16;
  padded.kh = padded.kw = 1;
  padded.strides = {1000, 1000};
  padded.pads = {1000, 1000, 1000, 1000};
  ir::Graph pg;
  const bool taps =
      kernels::implementation_for_layout(*direct_case_node(pg, padded), L::kNhwc, L::kNhwc) == "native.taps";
  EXPECT_EQ(choice(padded), taps ? "taps" : "");
}

// The direct variant forced (a crafted .gom) onto a convolution whose zero
// border would dwarf X and Y is refused at reshape, not allocated.
TEST(NnConv, DirectVariantRefusesAHugeZeroBorder) {
  using L = ops::Layout;
  const DirectCase k{{1, 16, 1, 1}, 16, 1, 1, {20000, 20000}, {20000, 20000, 20000, 20000}, {1, 1}, L::kNhwc, L::kNhwc};
  ir::Graph g;
  ir::Node* n = direct_case_node(g, k);
  const Tensor x(DType::kFloat32, k.xs), w(DType::kFloat32, {16, 16, 1, 1}), b(DType::kFloat32, {16});
  const TensorView xv = x.view(), wv = w.view(), bv = b.view();
  expect_error([&] { kernels::evaluate_node(*n, {&xv, &wv, &bv}, 1, nullptr, direct_config(*n, L::kNhwc, L::kNhwc, "direct")); },
               ErrorCode::kUnsupported, "the direct variant would copy X [1,16,1,1] with a zero border");
}

// The direct variant where it cannot run is a clear error naming the node:
// with winograd, with oneDNN's post-op activation, a plain Y, a grouped W,
// and (at reshape) an nChw16c layout for channels not divisible by 16.
TEST(NnConv, DirectVariantWhereItCannotRunIsRefused) {
  using L = ops::Layout;
  const DirectCase k{{1, 24, 8, 8}, 24, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "Relu"};
  ir::Graph g;
  ir::Node* n = direct_case_node(g, k);
  for (const std::string& v : {std::string("direct+winograd"), std::string("direct+direct")})
    expect_error([&] { kernels::create_kernel(*n, direct_config(*n, L::kNhwc, L::kNhwc, v)); },
                 ErrorCode::kInvalidModel, "node 'conv' (com.graphengine::FusedConv): kernel variant");
  for (const kernels::KernelConfig& c :
       {direct_config(*n, L::kNhwc, L::kNhwc, "direct+post_op"), direct_config(*n, L::kNhwc, L::kPlain, "direct")})
    expect_error([&] { kernels::create_kernel(*n, c); }, ErrorCode::kInvalidModel,
                 "node 'conv' (com.graphengine::FusedConv): the direct variant needs group 1, an nhwc or nChw16c output");
  EXPECT_EQ(kernels::create_kernel(*n, direct_config(*n, L::kNhwc, L::kNhwc, "direct+kernel"))->impl_name(),
            "native.direct+fused");
  ir::Graph g2;
  ir::Node* grouped = direct_case_node(g2, {{1, 24, 8, 8}, 24, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc});
  grouped->attrs.push_back(ir::Attribute::Int("group", 2));
  expect_error([&] { kernels::create_kernel(*grouped, direct_config(*grouped, L::kNhwc, L::kNhwc, "direct")); },
               ErrorCode::kInvalidModel, "the direct variant needs group 1");
  const Tensor x(DType::kFloat32, k.xs), w(DType::kFloat32, {24, 24, 3, 3}), b(DType::kFloat32, {24});
  const TensorView xv = x.view(), wv = w.view(), bv = b.view();
  expect_error([&] { kernels::evaluate_node(*n, {&xv, &wv, &bv}, 1, nullptr, direct_config(*n, L::kNChw16c, L::kNhwc, "direct")); },
               ErrorCode::kInvalidModel, "layout nChw16c for [1,24,8,8]");
}

// The winograd_nhwc variant (our own F(4x4, 3x3) Winograd convolution,
// winograd_simd.h) against a double-precision loop of ONNX Conv-11 plus
// FusedConv's residual and activation: outputs that fill no whole 4x4 tile
// (odd sizes), channel counts that fill no whole vector (24 -> 40, 27 ->
// 19, 100 -> 97), output rows of 256 floats (U's rows padded), both tile
// sizes (F(2x2, 3x3) on maps under 9 4x4 tiles), symmetric, zero and asymmetric pads (the window past X reads zeros),
// batch 2, no bias, each activation the transform applies (Relu, Clip,
// HardSwish) and one it leaves to the epilogue (Sigmoid), a map of 1922
// tiles that runs in three blocks, on 1 and 2 threads. Tolerance 3e-5 of
// the largest |y|: Winograd's transformed tiles reach about 10x the inputs,
// and float32 rounds there (oneDNN's own Winograd is held to 2e-5 above).
TEST(NnConv, WinogradNhwcVariantMatchesAReferenceLoop) {
  using L = ops::Layout;
  const std::vector<DirectCase> cases = {
      {{1, 32, 12, 12}, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc},
      {{1, 24, 13, 10}, 40, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "Relu"},
      {{2, 27, 9, 11}, 19, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc, false, true, "Clip", -0.5f, 1.f},
      {{1, 48, 7, 15}, 64, 3, 3, {1, 1}, {2, 1, 0, 2}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "HardSwish"},
      {{2, 32, 6, 5}, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "Sigmoid"},
      {{2, 32, 124, 124}, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      // F(2x2, 3x3): maps of fewer than 9 4x4 tiles, 96+ channels.
      {{1, 128, 7, 7}, 256, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      {{2, 100, 8, 7}, 97, 3, 3, {1, 1}, {1, 0, 1, 2}, {1, 1}, L::kNhwc, L::kNhwc, false, false, "Clip", -0.5f, 1.f},
  };
  // Our transforms and one oneDNN MatMul: no oneDNN convolution runs.
  expect_variant_matches_reference(cases, "winograd_nhwc", "native.winograd", 3e-5f, /*no_onednn_convolution=*/true);
}

// The compile-time choice takes winograd_nhwc for a 3x3, stride-1,
// undilated, ungrouped convolution of constant weights between nhwc values
// with at least 24 channels on each side and 9 4x4 output tiles per image
// (or, with 96 channels, 16 2x2 tiles: F(2x2, 3x3), unless im2col_nhwc
// applies too: 192 or more output channels over a map of at most 64
// pixels, where that one takes it),
// where oneDNN's nhwc kernel for it is not a brgemm one (CPUs without
// AVX-512; with it, nothing changes: oneDNN's kernels stay). Not for a
// stride of 2, a 5x5 or dilated window, groups, 16 channels, a 7x7 map of
// 64 channels, a 5x5 map, plain or nChw16c layouts or weights fed as an input.
TEST(NnConv, WinogradNhwcIsChosenOnlyWhereItPays) {
  using L = ops::Layout;
  const bool brgemm = testing::cpu_has_avx512();
  struct Case {
    DirectCase k;
    bool chosen;  // without AVX-512
  };
  const std::vector<Case> cases = {
      {{{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, true},
      {{{1, 256, 14, 14}, 256, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"}, true},
      {{{1, 24, 28, 28}, 40, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc}, true},
      {{{1, 64, 56, 56}, 64, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, false},
      {{{1, 64, 56, 56}, 64, 5, 5, {1, 1}, {2, 2, 2, 2}, {1, 1}, L::kNhwc, L::kNhwc}, false},
      {{{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, L::kNhwc, L::kNhwc}, false},
      {{{1, 16, 56, 56}, 16, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, false},
      {{{1, 128, 7, 7}, 128, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, true},   // F(2x2, 3x3)
      {{{1, 512, 7, 7}, 512, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, false},  //   yields to im2col_nhwc
      {{{1, 64, 7, 7}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, false},    //   too few channels
      {{{1, 512, 5, 5}, 512, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc}, false},  //   9 2x2 tiles
      {{{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kPlain, L::kPlain}, false},
      {{{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNChw16c, L::kNChw16c}, false},
  };
  for (const Case& c : cases) {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, c.k);
    const std::string v = kernels::choose_variant(*n, direct_config(*n, c.k.in, c.k.out, ""));
    EXPECT_EQ(v == "winograd_nhwc", c.chosen && !brgemm)
        << shape_str(c.k.xs) << " -> " << c.k.m << " " << c.k.kh << "x" << c.k.kw << " stride " << c.k.strides[0]
        << " " << ops::layout_name(c.k.in) << ": " << v;
  }
  if (!brgemm) {
    ir::Graph g;
    const DirectCase k{{1, 512, 7, 7}, 512, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
    ir::Node* n = direct_case_node(g, k);
    EXPECT_EQ(kernels::choose_variant(*n, direct_config(*n, k.in, k.out, "")), "im2col_nhwc");
  }
  ir::Graph g;
  ir::Node* grouped = direct_case_node(g, {{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc});
  grouped->attrs.push_back(ir::Attribute::Int("group", 2));
  grouped->set_input(1, g.add_constant("w2", Tensor(DType::kFloat32, {64, 32, 3, 3})));
  EXPECT_NE(kernels::choose_variant(*grouped, direct_config(*grouped, L::kNhwc, L::kNhwc, "")), "winograd_nhwc");
  ir::Graph g2;
  ir::Node* fed = direct_case_node(g2, {{1, 64, 56, 56}, 64, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc});
  fed->set_input(1, g2.add_value("w_fed", fed->input(1)->type));
  EXPECT_NE(kernels::choose_variant(*fed, direct_config(*fed, L::kNhwc, L::kNhwc, "")), "winograd_nhwc");
}

// The taps variant (conv.cc run_taps: only the taps inside X, one MatMul
// per tap) against a double-precision loop of ONNX Conv-11 plus FusedConv's
// residual and activation: DeepLab's atrous 3x3 (dilation 12 over 14x14),
// strides and asymmetric pads with gathered regions, a dense window (whole
// rows of X read in place), output pixels that no tap reaches (Y = B +
// Z there), batch 2, an activation left to the epilogue, regions in several
// chunks, on 1 and 2 threads. Tolerance 1e-5 of the largest |y|.
TEST(NnConv, TapsVariantMatchesAReferenceLoop) {
  using L = ops::Layout;
  const std::vector<DirectCase> cases = {
      {{1, 24, 14, 14}, 40, 3, 3, {1, 1}, {12, 12, 12, 12}, {12, 12}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      {{2, 16, 9, 11}, 8, 3, 3, {2, 2}, {5, 4, 6, 3}, {4, 5}, L::kNhwc, L::kNhwc, false, false, "HardSwish"},
      {{1, 8, 5, 5}, 16, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, L::kNhwc, L::kNhwc},
      {{1, 8, 4, 4}, 8, 3, 3, {1, 1}, {6, 6, 6, 6}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Sigmoid"},
      {{2, 32, 7, 6}, 24, 3, 2, {1, 1}, {3, 2, 3, 2}, {3, 4}, L::kNhwc, L::kNhwc, true, false, "Clip", -0.5f, 1.f},
      // Rows of 70000 pixels, 2.2 MB each gathered with their products:
      // regions in chunks of 3 rows within the 8 MiB block (3 + 3 + 2, 3 + 3 + 1).
      {{1, 4, 8, 70000}, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc},
  };
  expect_variant_matches_reference(cases, "taps", "native.taps", 1e-5f);
}

// The im2col_nhwc variant (conv.cc run_im2col_nhwc: each output pixel's
// window gathered as a row of columns, one oneDNN MatMul a chunk of output
// rows) against a double-precision loop of ONNX Conv-11 plus FusedConv's
// residual and activation: ResNet's stride-2 3x3, a 5x5 window with
// stride (2, 1), dilation 2 and asymmetric pads, no bias, batch 2, an
// activation left to the epilogue, and rows of 4551 output pixels whose
// columns (2.6 MB a row) go three rows a chunk (3 + 3 + 2), on 1 and 2
// threads. Tolerance 1e-5 of the largest |y|.
TEST(NnConv, Im2colNhwcVariantMatchesAReferenceLoop) {
  using L = ops::Layout;
  const std::vector<DirectCase> cases = {
      {{1, 32, 14, 14}, 24, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      {{2, 16, 11, 9}, 8, 5, 5, {2, 1}, {3, 1, 2, 2}, {2, 2}, L::kNhwc, L::kNhwc, false, false, "Sigmoid"},
      {{1, 16, 8, 9102}, 8, 3, 3, {1, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "HardSwish"},
      // Stride 1 over a small map (the variant's other case), a 1x3 window.
      {{1, 40, 8, 8}, 24, 1, 3, {1, 1}, {0, 1, 0, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
      // A padded 3x3 over 7x7 with B and a residual: the convolutions
      // F(2x2, 3x3) Winograd leaves to this variant.
      {{1, 24, 7, 7}, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"},
  };
  expect_variant_matches_reference(cases, "im2col_nhwc", "native.im2col_nhwc", 1e-5f);
}

// One taps / im2col_nhwc kernel object run again at another thread count
// (a session's step tuning does this: its MatMuls are made anew for the
// count, oneDNN sizing a primitive by it) and again at the first, with a
// run's scratch buffer, and with Z's buffer as Y's (the residual in place):
// each run matches the double-precision reference within 1e-5 of the
// largest |y|.
TEST(NnConv, TapsAndIm2colNhwcKernelsRunAgainAtOtherThreadCounts) {
  using L = ops::Layout;
  const std::vector<std::pair<std::string, DirectCase>> cases = {
      {"taps", {{2, 24, 14, 14}, 40, 3, 3, {1, 1}, {12, 12, 12, 12}, {12, 12}, L::kNhwc, L::kNhwc, true, true, "Relu"}},
      {"im2col_nhwc", {{2, 32, 14, 14}, 24, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, true, "Relu"}},
  };
  for (const auto& c : cases) {
    // Named, not structured bindings: clang 14 (the sanitizer build) does
    // not let a lambda capture those.
    const std::string& variant = c.first;
    const DirectCase& k = c.second;
    with_direct_case(k, [&](ir::Node& n, const std::vector<const TensorView*>& views,
                            const std::vector<float>& expected, float largest) {
      auto kernel = kernels::create_kernel(n, direct_config(n, k.in, k.out, variant));
      kernels::ScratchBuffer scratch;
      for (int threads : {1, 2, 1}) {
        for (bool in_place : {false, true}) {
          SCOPED_TRACE(variant + " threads " + std::to_string(threads) + (in_place ? " Z in Y" : ""));
          expect_close(values<float>(run_conv_kernel(*kernel, n, views, in_place, threads, scratch)), expected, 0.f,
                       1e-5f * largest);
        }
      }
    });
  }
}

// The variant choice gives "im2col_nhwc" to a strided nhwc convolution of
// 16 or more input channels and a window larger than 1x1 exactly where
// oneDNN's nhwc kernel for it is a JIT one that is not brgemm (jit:avx2:
// CPUs without AVX-512); at stride 1 only over at most 64 output pixels
// with 192 or more output channels and where Winograd does not take it;
// never to a 1x1 window, to ResNet's 3-channel stem, in plain layouts, or
// where the direct loops take it.
TEST(NnConv, Im2colNhwcIsChosenForStridedOrSmallMapConvolutionsWithoutBrgemm) {
  using L = ops::Layout;
  const auto choice = [](const DirectCase& k) {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, k);
    return kernels::choose_variant(*n, direct_config(*n, k.in, k.out, ""));
  };
  const DirectCase strided{{1, 128, 56, 56}, 128, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  ir::Graph g;
  const std::string impl = kernels::implementation_for_layout(*direct_case_node(g, strided), L::kNhwc, L::kNhwc);
  EXPECT_EQ(choice(strided) == "im2col_nhwc", impl.rfind("jit", 0) == 0) << impl;
  if (!testing::cpu_has_avx512()) {
    EXPECT_EQ(choice(strided), "im2col_nhwc") << impl;
  }
  DirectCase unit = strided;  // stride 1 over 56x56: Winograd's, or oneDNN's kernel
  unit.strides = {1, 1};
  EXPECT_NE(choice(unit), "im2col_nhwc");
  // Stride 1 over at most 64 output pixels with 192 or more output channels
  // (Inception's 1x3 / 3x1 at 8x8, and 3x3 over 7x7, which the Winograd
  // variant's F(2x2, 3x3) leaves to it); not with fewer channels, where
  // F(2x2, 3x3) keeps a 3x3 over 7x7 at 96-191 output channels.
  DirectCase small_map{{1, 384, 8, 8}, 384, 1, 3, {1, 1}, {0, 1, 0, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  {
    ir::Graph gs;
    const std::string small_impl =
        kernels::implementation_for_layout(*direct_case_node(gs, small_map), L::kNhwc, L::kNhwc);
    EXPECT_EQ(choice(small_map) == "im2col_nhwc", small_impl.rfind("jit:avx2", 0) == 0) << small_impl;
  }
  DirectCase narrow = small_map;
  narrow.m = 128;
  EXPECT_NE(choice(narrow), "im2col_nhwc");
  DirectCase wider_map = small_map;
  wider_map.xs = {1, 384, 9, 8};  // 72 output pixels
  EXPECT_NE(choice(wider_map), "im2col_nhwc");
  DirectCase square{{1, 256, 7, 7}, 256, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  DirectCase square_narrow = square;
  square_narrow.m = 128;
  if (!testing::cpu_has_avx512()) {
    EXPECT_EQ(choice(square), "im2col_nhwc");
    EXPECT_EQ(choice(square_narrow), "winograd_nhwc");
  }
  DirectCase pointwise = strided;
  pointwise.kh = pointwise.kw = 1;
  pointwise.pads = {0, 0, 0, 0};
  EXPECT_NE(choice(pointwise), "im2col_nhwc");
  DirectCase stem{{1, 3, 224, 224}, 64, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, L::kNhwc, L::kNhwc};
  EXPECT_NE(choice(stem), "im2col_nhwc");
  DirectCase plain = strided;
  plain.in = plain.out = L::kPlain;
  EXPECT_NE(choice(plain), "im2col_nhwc");
  DirectCase small{{1, 16, 8, 8}, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  EXPECT_EQ(choice(small), "direct");
}

// The layout query reports native.taps for an nhwc convolution most of
// whose (tap, pixel) pairs fall in the zero padding when oneDNN has only a
// gemm-based or reference kernel for it there, and the variant choice then
// takes "taps"; a dense window, a plain or grouped one, or fed weights
// never. Where oneDNN has a JIT kernel for the atrous one (not on this
// project's AVX2 and AVX-512 machines with oneDNN 2.6: gemm), that stays.
TEST(NnConv, TapsVariantIsChosenWhereOnlyAGemmWouldRun) {
  using L = ops::Layout;
  const DirectCase atrous{{1, 96, 14, 14}, 64, 3, 3, {1, 1}, {12, 12, 12, 12}, {12, 12}, L::kNhwc, L::kNhwc};
  const DirectCase dense{{1, 64, 14, 14}, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc};
  {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, atrous);
    const std::string impl = kernels::implementation_for_layout(*n, L::kNhwc, L::kNhwc);
    const std::string v = kernels::choose_variant(*n, direct_config(*n, L::kNhwc, L::kNhwc, ""));
    if (impl == "native.taps") {
      EXPECT_EQ(v, "taps");
    } else {
      EXPECT_EQ(impl.find("gemm"), std::string::npos) << impl;
      EXPECT_FALSE(kernels::is_reference_implementation(impl)) << impl;
    }
    // Plain layouts keep oneDNN's kernel.
    EXPECT_NE(kernels::implementation_for_layout(*n, L::kPlain, L::kPlain), "native.taps");
    EXPECT_NE(kernels::choose_variant(*n, direct_config(*n, L::kPlain, L::kPlain, "")), "taps");
  }
  {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, dense);
    EXPECT_NE(kernels::implementation_for_layout(*n, L::kNhwc, L::kNhwc), "native.taps");
    EXPECT_NE(kernels::choose_variant(*n, direct_config(*n, L::kNhwc, L::kNhwc, "")), "taps");
  }
  {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, atrous);
    n->attrs.push_back(ir::Attribute::Int("group", 2));
    n->set_input(1, g.add_constant("w2", Tensor(DType::kFloat32, {64, 48, 3, 3})));
    EXPECT_NE(kernels::implementation_for_layout(*n, L::kNhwc, L::kNhwc), "native.taps");
  }
  {
    ir::Graph g;
    ir::Node* n = direct_case_node(g, atrous);
    n->set_input(1, g.add_value("w_fed", n->input(1)->type));
    EXPECT_NE(kernels::implementation_for_layout(*n, L::kNhwc, L::kNhwc), "native.taps");
  }
  {
    // Small enough for the direct loops (nothing made at load): they win.
    DirectCase small = atrous;
    small.xs = {1, 16, 14, 14};
    small.m = 16;
    ir::Graph g;
    ir::Node* n = direct_case_node(g, small);
    EXPECT_EQ(kernels::choose_variant(*n, direct_config(*n, L::kNhwc, L::kNhwc, "")), "direct");
  }
  // The variant where it cannot run is refused, naming the node.
  ir::Graph g;
  ir::Node* n = direct_case_node(g, atrous);
  gec::testing::expect_error([&] { kernels::create_kernel(*n, direct_config(*n, L::kPlain, L::kPlain, "taps")); },
                             ErrorCode::kInvalidModel,
                             "node 'conv' (Conv): the taps variant needs group 1, nhwc input and output");
}

// The winograd_nhwc variant where it cannot run is a clear error naming the
// node: beside another variant, with oneDNN's post-op activation, or with a
// non-nhwc layout.
TEST(NnConv, WinogradNhwcVariantWhereItCannotRunIsRefused) {
  using L = ops::Layout;
  const DirectCase k{{1, 24, 8, 8}, 24, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, L::kNhwc, L::kNhwc, true, false, "Relu"};
  ir::Graph g;
  ir::Node* n = direct_case_node(g, k);
  for (const std::string& v : {std::string("winograd_nhwc+direct"), std::string("winograd_nhwc+winograd_nhwc")})
    expect_error([&] { kernels::create_kernel(*n, direct_config(*n, L::kNhwc, L::kNhwc, v)); },
                 ErrorCode::kInvalidModel, "node 'conv' (com.graphengine::FusedConv): kernel variant");
  for (const kernels::KernelConfig& c : {direct_config(*n, L::kNhwc, L::kNhwc, "winograd_nhwc+post_op"),
                                         direct_config(*n, L::kNChw16c, L::kNChw16c, "winograd_nhwc"),
                                         direct_config(*n, L::kPlain, L::kPlain, "winograd_nhwc")})
    expect_error([&] { kernels::create_kernel(*n, c); }, ErrorCode::kInvalidModel,
                 "node 'conv' (com.graphengine::FusedConv): the winograd_nhwc variant needs group 1, nhwc input and output");
}

}  // namespace
}  // namespace gec
