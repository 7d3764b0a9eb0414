// The ppocr_v4_det speed work: the Resize fast path (4-D upsample as a 2-D
// resample per plane) against the general tap-product path and hand values,
// the native BatchNormalization kernel against the ONNX formula, and the
// conv_transpose_folding pass (BN / Mul / Add into ConvTranspose: folded
// weights by hand, outputs unchanged, guards).
//
// The general Resize path is reached with the same data laid out so that a
// leading dim is resized: X [1, C, H, W] with scales {1, 1, sh, sw} takes the
// fast path, the same buffer as [C, H, W, 1] with scales {1, sh, sw, 1} does
// not (dim 1 is resized and is not one of the last two), and both outputs
// have the same row-major order.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_nn_util.h"
#include "passes_util.h"

namespace gec {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

Tensor ramp(Shape s, float step = 0.37f) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = step * static_cast<float>((i * 7) % 23) - 3.f;
  return t;
}

struct ResizeCase {
  std::string mode, coord, nearest;
  float sh, sw;
};

std::vector<ir::Attribute> resize_attrs(const ResizeCase& c) {
  return {as("mode", c.mode), as("coordinate_transformation_mode", c.coord), as("nearest_mode", c.nearest)};
}

/// Resize of `x` [1, C, H, W] by (sh, sw): fast path and general path.
std::pair<Tensor, Tensor> fast_and_general(const Tensor& x, const ResizeCase& c) {
  const Shape& s = x.shape();
  auto fast = run_op("Resize", {x, Tensor(), make<float>({4}, {1, 1, c.sh, c.sw})}, resize_attrs(c));
  const Tensor moved = x.reshaped({s[1], s[2], s[3], 1});
  auto general = run_op("Resize", {moved, Tensor(), make<float>({4}, {1, c.sh, c.sw, 1})}, resize_attrs(c));
  return {fast[0], general[0]};
}

TEST(DetResizeFast, NearestAsymmetricFloorByHand) {
  // The ppocr_v4_det FPN upsample: x_orig = o / 2, floor.
  auto x = make<float>({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run_op("Resize", {x, Tensor(), make<float>({4}, {1, 1, 2, 2})},
                  resize_attrs({"nearest", "asymmetric", "floor", 2, 2}))[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 6}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3,  //
                                                  4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6}));
}

TEST(DetResizeFast, LinearHalfPixelByHand) {
  // ONNX resize_upsample_scales_linear: half_pixel, x_orig = (o + .5) / 2 - .5
  // = -.25 (clamped to 0), .25, .75, 1.25 (clamped to 1).
  auto x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  auto y = run_op("Resize", {x, Tensor(), make<float>({4}, {1, 1, 2, 2})},
                  resize_attrs({"linear", "half_pixel", "round_prefer_floor", 2, 2}))[0];
  expect_close(values<float>(y), {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f,
                                  3.75f, 4});
}

TEST(DetResizeFast, MatchesGeneralPathForEveryMode) {
  // Odd sizes (not a multiple of any vector width), several planes, outputs
  // above the 32K-element parallel threshold for the upsample cases.
  const std::vector<ResizeCase> cases = {
      {"nearest", "asymmetric", "floor", 2, 2},
      {"nearest", "asymmetric", "floor", 4, 4},
      {"nearest", "half_pixel", "round_prefer_floor", 2, 3},
      {"nearest", "half_pixel", "round_prefer_ceil", 1.5f, 0.5f},
      {"nearest", "tf_half_pixel_for_nn", "ceil", 0.6f, 1.7f},
      {"nearest", "align_corners", "round_prefer_floor", 2, 2},
      {"linear", "half_pixel", "round_prefer_floor", 2, 2},
      {"linear", "pytorch_half_pixel", "round_prefer_floor", 2, 0.5f},
      {"linear", "align_corners", "round_prefer_floor", 3, 2},
      {"linear", "asymmetric", "round_prefer_floor", 2, 2},
      {"linear", "half_pixel", "round_prefer_floor", 0.5f, 0.75f},
      {"linear", "half_pixel", "round_prefer_floor", 1, 2},
      {"cubic", "half_pixel", "round_prefer_floor", 2, 1.5f},
  };
  const Tensor x = ramp({1, 12, 13, 21});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.mode + " " + c.coord + " " + c.nearest + " " + std::to_string(c.sh) + "x" + std::to_string(c.sw));
    auto [fast, general] = fast_and_general(x, c);
    ASSERT_EQ(fast.numel(), general.numel());
    if (c.mode == "nearest") EXPECT_EQ(values<float>(fast), values<float>(general));  // a copy: exact
    else expect_close(values<float>(fast), values<float>(general), 1e-5f, 1e-5f);  // float vs double sums
  }
}

TEST(DetResizeFast, NearestCopiesIntegerDtypesExactly) {
  Tensor x(DType::kInt64, {1, 3, 5, 7});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<int64_t>()[i] = (int64_t{1} << 40) + i;  // not exact in float
  const std::vector<ir::Attribute> attrs = resize_attrs({"nearest", "asymmetric", "floor", 3, 2});
  auto fast = run_op("Resize", {x, Tensor(), make<float>({4}, {1, 1, 3, 2})}, attrs)[0];
  const Tensor moved = x.reshaped({3, 5, 7, 1});
  auto general = run_op("Resize", {moved, Tensor(), make<float>({4}, {1, 3, 2, 1})}, attrs)[0];
  ASSERT_EQ(fast.shape(), (Shape{1, 3, 15, 14}));
  EXPECT_EQ(values<int64_t>(fast), values<int64_t>(general));
  EXPECT_EQ(fast.as<int64_t>()[14 * 15 + 14 + 1], (int64_t{1} << 40) + 35);  // plane 1, row 1, col 1 -> (0, 0)
}

TEST(DetResizeFast, RankTwoAndTfCropAndResize) {
  // Rank 2: the whole tensor is one plane.
  auto x = make<float>({2, 2}, {1, 2, 3, 4});
  auto y = run_op("Resize", {x, Tensor(), make<float>({2}, {2, 1})}, resize_attrs({"nearest", "asymmetric", "floor", 2, 1}))[0];
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  // tf_crop_and_resize with outputs outside the roi stays on the general
  // path: those get extrapolation_value. roi H [0.5, 1.5] on 2 rows: x_orig =
  // 0.5 + o * 1 / 2 * 1 -> 0.5, 1.0, 1.5 (outside).
  auto c = run_op("Resize",
                  {make<float>({1, 1, 2, 1}, {10, 20}), make<float>({8}, {0, 0, 0.5f, 0, 1, 1, 1.5f, 1}), Tensor(),
                   make<int64_t>({4}, {1, 1, 3, 1})},
                  {as("mode", "linear"), as("coordinate_transformation_mode", "tf_crop_and_resize"),
                   ir::Attribute::Float("extrapolation_value", -7.f)})[0];
  expect_close(values<float>(c), {15, 20, -7});
}

TEST(DetResizeFast, KernelRebuildsTapsWhenScalesChangeAtSameShapes) {
  // in 5 -> out 10 with scale 2 and with scale 2.1 (floor(10.5)): same shapes,
  // different coordinates (asymmetric: o / 2 vs o / 2.1), so a kernel that
  // cached its taps per shape only would repeat the first answer.
  KernelHarness h("Resize", 3, resize_attrs({"nearest", "asymmetric", "floor", 1, 2}));
  const Tensor x = make<float>({1, 1, 1, 5}, {0, 1, 2, 3, 4});
  auto run = [&](float scale) {
    return values<float>(h.run({x, Tensor(), make<float>({4}, {1, 1, 1, scale})}, {1, 1, 1, 10}));
  };
  EXPECT_EQ(run(2.f), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}));
  // floor(o / 2.1): 0 0 0 1 1 2 2 3 3 4
  EXPECT_EQ(run(2.1f), (std::vector<float>{0, 0, 0, 1, 1, 2, 2, 3, 3, 4}));
}

// ---- BatchNormalization (native) ----

std::vector<Tensor> bn_inputs(const Tensor& x, int64_t c) {
  std::vector<float> s(c), b(c), m(c), v(c);
  for (int64_t k = 0; k < c; ++k) {
    s[k] = 0.5f + 0.25f * k;
    b[k] = -1.f + k;
    m[k] = 0.1f * k;
    v[k] = 0.75f + k;
  }
  return {x, make<float>({c}, s), make<float>({c}, b), make<float>({c}, m), make<float>({c}, v)};
}

/// ONNX BatchNormalization-15 (training_mode=0), in double.
std::vector<float> bn_reference(const std::vector<Tensor>& in, float eps) {
  const Tensor& x = in[0];
  const int64_t c = x.shape()[1], inner = x.numel() / (x.shape()[0] * c);
  std::vector<float> r(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = (i / inner) % c;
    const double a = in[1].as<float>()[k] / std::sqrt(static_cast<double>(in[4].as<float>()[k]) + eps);
    r[i] = static_cast<float>((x.as<float>()[i] - in[3].as<float>()[k]) * a + in[2].as<float>()[k]);
  }
  return r;
}

TEST(DetBatchNorm, HandValues) {
  // c0: (x - 0) / sqrt(3 + 1) * 4 + 10 = 2x + 10; c1: (x - 2) / sqrt(0 + 1) * 3 + 20.
  auto out = run_op("BatchNormalization",
                    {make<float>({1, 2, 1, 2}, {1, -1, 2, 4}), make<float>({2}, {4, 3}), make<float>({2}, {10, 20}),
                     make<float>({2}, {0, 2}), make<float>({2}, {3, 0})},
                    {ir::Attribute::Float("epsilon", 1.f)});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{12, 8, 20, 26}));
}

TEST(DetBatchNorm, RanksAndLargePlanesMatchFormula) {
  // Rank 2 ([N, C], inner 1), rank 3, and a plane larger than the 16K block
  // and not a multiple of it, with N > 1 (plane p holds channel p % C).
  for (const Shape& s : {Shape{5, 3}, Shape{2, 3, 7}, Shape{2, 3, 16384 + 37}, Shape{1, 24, 33, 35}}) {
    SCOPED_TRACE(shape_str(s));
    auto in = bn_inputs(ramp(s), s[1]);
    auto out = run_op("BatchNormalization", in, {ir::Attribute::Float("epsilon", 1e-5f)});
    EXPECT_EQ(out[0].shape(), s);
    expect_close(values<float>(out[0]), bn_reference(in, 1e-5f), 1e-6f, 1e-6f);
  }
}

TEST(DetBatchNorm, NanPropagates) {
  auto out = run_op("BatchNormalization",
                    {make<float>({1, 1, 2}, {NAN, 1}), make<float>({1}, {1}), make<float>({1}, {0}),
                     make<float>({1}, {0}), make<float>({1}, {1})},
                    {ir::Attribute::Float("epsilon", 0.f)});
  auto v = values<float>(out[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1.f);
}

// ---- conv_transpose_folding ----

// BN with a = scale / sqrt(var + eps) = {2, 3} and b = B - mean * a = {8, 14}.
ir::Node* add_bn(ir::Graph& g, ir::Value* x, const std::string& out) {
  ir::Node* bn = g.add_node("BatchNormalization",
                            {x, g.add_constant(out + "_s", make<float>({2}, {4.f, 3.f})),
                             g.add_constant(out + "_b", make<float>({2}, {10.f, 20.f})),
                             g.add_constant(out + "_m", make<float>({2}, {1.f, 2.f})),
                             g.add_constant(out + "_v", make<float>({2}, {3.f, 0.f}))},
                            {out}, out + "_bn");
  bn->set_attr(ir::Attribute::Float("epsilon", 1.f));
  return bn;
}

ir::Node* add_deconv(ir::Graph& g, ir::Value* x, Shape w_shape, std::vector<float> w, std::vector<float> b,
                     int64_t group, int64_t stride, Shape out_shape) {
  std::vector<ir::Value*> ins{x, g.add_constant("W", make<float>(w_shape, w))};
  if (!b.empty()) ins.push_back(g.add_constant("B", make<float>({w_shape[1] * group}, b)));
  ir::Node* c = g.add_node("ConvTranspose", ins, {"deconv"}, "deconv1");
  c->set_attr(ir::Attribute::Int("group", group));
  c->set_attr(ir::Attribute::Ints("strides", {stride, stride}));
  c->output(0)->type = ir::TensorType::of(DType::kFloat32, out_shape);
  return c;
}

/// Runs the pass and checks that outputs on a ramp input stay the same.
void fold_and_compare(ir::Graph& g, Shape x_shape) {
  const Tensor x = ramp(x_shape, 0.25f);
  auto before = run_graph(g, {{"x", x}});
  EXPECT_EQ(passes::make_conv_transpose_folding()->run(g), 1);
  g.verify();
  auto after = run_graph(g, {{"x", x}});
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].shape(), after[i].shape());
    expect_close(values<float>(after[i]), values<float>(before[i]), 1e-5f, 1e-5f);
  }
}

TEST(ConvTransposeFolding, ScalesAlongOutputChannelAxisOne) {
  // W [C_in=2, C_out=2, 1, 1] = {{1, 2}, {3, 4}}: output channel j is column
  // j, so W' = {{1*2, 2*3}, {3*2, 4*3}} (a Conv-style row scaling would give
  // {2, 4, 9, 12}).
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* ct = add_deconv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {1, -1}, 1, 1, {1, 2, 2, 2});
  g.outputs().push_back(add_bn(g, ct->output(0), "y")->output(0));
  fold_and_compare(g, {1, 2, 2, 2});
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"ConvTranspose"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(values<float>(*ct->input(1)->constant), (std::vector<float>{2, 6, 6, 12}));
  EXPECT_EQ(values<float>(*ct->input(2)->constant), (std::vector<float>{1 * 2 + 8, -1 * 3 + 14}));
  EXPECT_EQ(ct->fused_from, (std::vector<std::string>{"deconv1", "y_bn"}));
}

TEST(ConvTransposeFolding, GroupedStride2WithoutBias) {
  // group 2, W [C_in=4, C_out/group=1, 2, 2]: input channels 0,1 feed output
  // channel 0 (a = 2), 2,3 feed channel 1 (a = 3); the bias is added.
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 4, 2, 3});
  std::vector<float> w(16);
  for (int i = 0; i < 16; ++i) w[i] = static_cast<float>(i + 1);
  ir::Node* ct = add_deconv(g, x, {4, 1, 2, 2}, w, {}, 2, 2, {1, 2, 4, 6});
  g.outputs().push_back(add_bn(g, ct->output(0), "y")->output(0));
  fold_and_compare(g, {1, 4, 2, 3});
  std::vector<float> want(16);
  for (int i = 0; i < 16; ++i) want[i] = w[i] * (i < 8 ? 2.f : 3.f);
  EXPECT_EQ(values<float>(*ct->input(1)->constant), want);
  ASSERT_EQ(ct->inputs().size(), 3u);
  EXPECT_EQ(values<float>(*ct->input(2)->constant), (std::vector<float>{8, 14}));
}

TEST(ConvTransposeFolding, BiasAddThenBnThenScalarMul) {
  // The ppocr_v4_det head: ConvTranspose -> Add([1, M, 1, 1] bias) -> BN,
  // here followed by a scalar Mul: all three fold (W' = W * a * 0.5,
  // B' = ((c * a) + b) * 0.5 with a = {2, 3}, b = {8, 14}, c = {1, -2}).
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* ct = add_deconv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {}, 1, 1, {1, 2, 2, 2});
  ir::Node* add = g.add_node("Add", {g.add_constant("c", make<float>({1, 2, 1, 1}, {1, -2})), ct->output(0)}, {"a"});
  add->output(0)->type = ct->output(0)->type;
  ir::Node* bn = add_bn(g, add->output(0), "b");
  ir::Node* mul = g.add_node("Mul", {bn->output(0), g.add_constant("h", make<float>({}, {0.5f}))}, {"y"});
  g.outputs().push_back(mul->output(0));
  const Tensor xin = ramp({1, 2, 2, 2}, 0.25f);
  auto before = run_graph(g, {{"x", xin}});
  EXPECT_EQ(passes::make_conv_transpose_folding()->run(g), 3);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"ConvTranspose"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  expect_close(values<float>(run_graph(g, {{"x", xin}})[0]), values<float>(before[0]), 1e-5f, 1e-5f);
  EXPECT_EQ(values<float>(*ct->input(1)->constant), (std::vector<float>{1, 3, 3, 6}));
  EXPECT_EQ(values<float>(*ct->input(2)->constant), (std::vector<float>{(2 + 8) * 0.5f, (-6 + 14) * 0.5f}));
}

TEST(ConvTransposeFolding, Guards) {
  for (int which = 0; which < 5; ++which) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 2, 2, 2});
    ir::Node* ct = add_deconv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {}, 1, 1, {1, 2, 2, 2});
    ir::Node* bn = add_bn(g, ct->output(0), "y");
    g.outputs().push_back(bn->output(0));
    if (which == 0) g.outputs().push_back(ct->output(0));  // the un-normalized value is needed
    if (which == 1) g.outputs().push_back(g.add_node("Relu", {ct->output(0)}, {"r"})->output(0));
    if (which == 2) bn->set_input(3, input(g, "mean", {2}));
    if (which == 3) ct->set_input(1, input(g, "w", {2, 2, 1, 1}));
    if (which == 4) {  // an Add that broadcasts along W, not along channels
      ir::Node* add = g.add_node("Add", {ct->output(0), g.add_constant("c", make<float>({2}, {1, 2}))}, {"a"});
      bn->set_input(0, add->output(0));
    }
    EXPECT_EQ(passes::make_conv_transpose_folding()->run(g), 0) << "case " << which;
    EXPECT_EQ(which == 4 ? bn->input(0)->producer()->input(0) : bn->input(0), ct->output(0));
    if (which != 3) {
      EXPECT_EQ(values<float>(*ct->input(1)->constant), (std::vector<float>{1, 2, 3, 4}));
    }
  }
}

}  // namespace
}  // namespace gec
