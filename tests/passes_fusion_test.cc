// Weight-folding passes: folded weights against hand computation, outputs
// unchanged (graph run node by node before and after), and each guard:
// intermediate that is a graph output (B07), several consumers, non-constant
// parameters, broadcasts along a non-channel axis, grouped convs (B01).
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

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

ir::Node* add_conv(ir::Graph& g, ir::Value* x, Shape w_shape, std::vector<float> w,
                   std::vector<float> b, int64_t group = 1) {
  std::vector<ir::Value*> ins{x, g.add_constant("W", make<float>(w_shape, w))};
  if (!b.empty()) ins.push_back(g.add_constant("B", make<float>({w_shape[0]}, b)));
  ir::Node* c = g.add_node("Conv", ins, {"conv"}, "conv1");
  c->set_attr(ir::Attribute::Int("group", group));
  c->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, w_shape[0], 2, 2});
  return c;
}

Tensor ramp(Shape s) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  return t;
}

/// Runs `pass` and checks that the outputs on a ramp input stay the same.
void run_and_compare(ir::Graph& g, Pass& pass, Shape x_shape) {
  const Tensor x = ramp(x_shape);
  auto before = run_graph(g, {{"x", x}});
  pass.run(g);
  g.verify();
  auto after = run_graph(g, {{"x", x}});
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].shape(), after[i].shape());
    expect_close(values<float>(after[i]), values<float>(before[i]), 1e-5f, 1e-5f);
  }
}

TEST(ConvBnFolding, FoldsIntoWeightsAndExistingBias) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* conv = add_conv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {1, -1});
  ir::Node* bn = add_bn(g, conv->output(0), "y");
  g.outputs().push_back(bn->output(0));
  auto pass = make_conv_bn_folding();
  run_and_compare(g, *pass, {1, 2, 2, 2});
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(values<float>(*conv->input(1)->constant), (std::vector<float>{2, 4, 9, 12}));
  EXPECT_EQ(values<float>(*conv->input(2)->constant), (std::vector<float>{1 * 2 + 8, -1 * 3 + 14}));
  EXPECT_EQ(conv->fused_from, (std::vector<std::string>{"conv1", "y_bn"}));
}

TEST(ConvBnFolding, DepthwiseConvWithoutBias) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* conv = add_conv(g, x, {2, 1, 1, 1}, {5, 7}, {}, /*group=*/2);
  ir::Node* bn = add_bn(g, conv->output(0), "y");
  g.outputs().push_back(bn->output(0));
  auto pass = make_conv_bn_folding();
  run_and_compare(g, *pass, {1, 2, 2, 2});
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(values<float>(*conv->input(1)->constant), (std::vector<float>{10, 21}));
  EXPECT_EQ(values<float>(*conv->input(2)->constant), (std::vector<float>{8, 14}));
}

TEST(ConvBnFolding, GuardsIntermediateOutputConsumersAndConstants) {
  for (int which = 0; which < 3; ++which) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 2, 2, 2});
    ir::Node* conv = add_conv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {});
    ir::Node* bn = add_bn(g, conv->output(0), "y");
    g.outputs().push_back(bn->output(0));
    if (which == 0) g.outputs().push_back(conv->output(0));  // B07
    if (which == 1) g.outputs().push_back(g.add_node("Relu", {conv->output(0)}, {"r"})->output(0));
    if (which == 2) bn->set_input(3, input(g, "mean", {2}));
    EXPECT_EQ(make_conv_bn_folding()->run(g), 0) << "case " << which;
    EXPECT_EQ(bn->input(0), conv->output(0));
    EXPECT_EQ(values<float>(*conv->input(1)->constant), (std::vector<float>{1, 2, 3, 4}));
  }
}

TEST(ConvScaleFolding, PerChannelMulThenAdd) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* conv = add_conv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {1, -1});
  ir::Node* mul = g.add_node("Mul", {g.add_constant("c", make<float>({2, 1, 1}, {2, 3})), conv->output(0)}, {"m"});
  ir::Node* add = g.add_node("Add", {mul->output(0), g.add_constant("d", make<float>({1, 2, 1, 1}, {5, 6}))}, {"y"});
  g.outputs().push_back(add->output(0));
  auto pass = make_conv_scale_folding();
  run_and_compare(g, *pass, {1, 2, 2, 2});
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(values<float>(*conv->input(1)->constant), (std::vector<float>{2, 4, 9, 12}));
  EXPECT_EQ(values<float>(*conv->input(2)->constant), (std::vector<float>{1 * 2 + 5, -1 * 3 + 6}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
}

// Shared case B01: a per-channel Add after a grouped Conv adds to each
// output channel's bias only; weights of other groups are untouched.
TEST(ConvScaleFolding, GroupedConvAddStaysPerChannel) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 2, 2});
  ir::Node* conv = add_conv(g, x, {2, 1, 1, 1}, {5, 7}, {}, /*group=*/2);
  ir::Node* add = g.add_node("Add", {conv->output(0), g.add_constant("d", make<float>({2, 1, 1}, {1, 2}))}, {"y"});
  g.outputs().push_back(add->output(0));
  auto pass = make_conv_scale_folding();
  run_and_compare(g, *pass, {1, 2, 2, 2});
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(values<float>(*conv->input(1)->constant), (std::vector<float>{5, 7}));
  EXPECT_EQ(values<float>(*conv->input(2)->constant), (std::vector<float>{1, 2}));
}

TEST(ConvScaleFolding, GuardsBroadcastAlongOtherAxesAndGraphOutput) {
  for (int which = 0; which < 3; ++which) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 2, 2, 2});
    ir::Node* conv = add_conv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {});
    Tensor c = which == 0 ? make<float>({1, 1, 1, 2}, {2, 3})   // along width
             : which == 1 ? make<float>({1, 1, 2, 1, 1}, {2, 3})  // grows the rank
                          : make<float>({2, 1, 1}, {2, 3});
    ir::Node* mul = g.add_node("Mul", {conv->output(0), g.add_constant("c", c)}, {"y"});
    g.outputs().push_back(mul->output(0));
    if (which == 2) g.outputs().push_back(conv->output(0));  // B07
    EXPECT_EQ(make_conv_scale_folding()->run(g), 0) << "case " << which;
    EXPECT_EQ(g.nodes().size(), 2u);
  }
}

ir::Node* add_gemm(ir::Graph& g, ir::Value* a, bool trans_b, bool with_c) {
  std::vector<ir::Value*> ins{a, g.add_constant("B", make<float>({2, 2}, {1, 2, 3, 4}))};
  if (with_c) ins.push_back(g.add_constant("C", make<float>({2}, {1, 1})));
  ir::Node* gemm = g.add_node("Gemm", ins, {"gemm"}, "fc");
  gemm->set_attr(ir::Attribute::Int("transB", trans_b ? 1 : 0));
  gemm->set_attr(ir::Attribute::Float("beta", 2.f));
  gemm->output(0)->type = ir::TensorType::of(DType::kFloat32, {3, 2});
  return gemm;
}

TEST(GemmBnFolding, ScalesColumnsAndBias) {
  for (bool trans : {false, true}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {3, 2});
    ir::Node* gemm = add_gemm(g, x, trans, true);
    ir::Node* bn = add_bn(g, gemm->output(0), "y");
    g.outputs().push_back(bn->output(0));
    auto pass = make_gemm_bn_folding();
    run_and_compare(g, *pass, {3, 2});
    ir::Node* fused = only_node(g, "Gemm");
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gemm"}));
    // transB = 0: B[k][n] * a[n]; transB = 1: B[n][k] * a[n].
    EXPECT_EQ(values<float>(*fused->input(1)->constant),
              trans ? (std::vector<float>{2, 4, 9, 12}) : (std::vector<float>{2, 6, 6, 12}));
    // beta * C * a + b = {2*1*2 + 8, 2*1*3 + 14}, beta becomes 1.
    EXPECT_EQ(values<float>(*fused->input(2)->constant), (std::vector<float>{12, 20}));
    EXPECT_EQ(fused->get_float("beta", 0.f), 1.f);
    EXPECT_EQ(fused->output(0)->name(), "y");
  }
}

TEST(GemmBnFolding, MatMulBecomesGemm) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3, 2});
  ir::Node* mm = g.add_node("MatMul", {x, g.add_constant("W", make<float>({2, 2}, {1, 2, 3, 4}))}, {"mm"});
  mm->output(0)->type = ir::TensorType::of(DType::kFloat32, {3, 2});
  ir::Node* bn = add_bn(g, mm->output(0), "y");
  g.outputs().push_back(bn->output(0));
  auto pass = make_gemm_bn_folding();
  run_and_compare(g, *pass, {3, 2});
  ir::Node* fused = only_node(g, "Gemm");
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gemm"}));
  EXPECT_EQ(values<float>(*fused->input(1)->constant), (std::vector<float>{2, 6, 6, 12}));
  EXPECT_EQ(values<float>(*fused->input(2)->constant), (std::vector<float>{8, 14}));
}

TEST(GemmBnFolding, GuardsGraphOutputIntermediate) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3, 2});
  ir::Node* gemm = add_gemm(g, x, false, false);
  ir::Node* bn = add_bn(g, gemm->output(0), "y");
  g.outputs() = {bn->output(0), gemm->output(0)};
  EXPECT_EQ(make_gemm_bn_folding()->run(g), 0);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gemm", "BatchNormalization"}));
}

TEST(MatMulAddToGemm, FusesBiasForTwoDimensionalA) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3, 2});
  ir::Value* w = g.add_constant("W", make<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  ir::Node* mm = g.add_node("MatMul", {x, w}, {"mm"});
  mm->output(0)->type = ir::TensorType::of(DType::kFloat32, {3, 4});
  ir::Value* bias = g.add_constant("bias", make<float>({4}, {1, 2, 3, 4}));
  ir::Node* add = g.add_node("Add", {bias, mm->output(0)}, {"y"});
  add->output(0)->type = ir::TensorType::of(DType::kFloat32, {3, 4});
  g.outputs().push_back(add->output(0));
  auto pass = make_matmul_add_to_gemm();
  run_and_compare(g, *pass, {3, 2});
  ir::Node* gemm = only_node(g, "Gemm");
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gemm"}));
  EXPECT_EQ(gemm->input(0), x);
  EXPECT_EQ(gemm->input(1), w);
  EXPECT_EQ(gemm->input(2), bias);
  EXPECT_EQ(gemm->output(0)->name(), "y");
}

TEST(MatMulAddToGemm, GuardsRankBiasShapeAndGraphOutput) {
  for (int which = 0; which < 3; ++which) {
    ir::Graph g;
    Shape xs = which == 0 ? Shape{2, 3, 2} : Shape{3, 2};
    ir::Value* x = input(g, "x", xs);
    ir::Node* mm = g.add_node("MatMul", {x, g.add_constant("W", make<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}))}, {"mm"});
    Shape ms = xs;
    ms.back() = 4;
    mm->output(0)->type = ir::TensorType::of(DType::kFloat32, ms);
    Tensor b = which == 1 ? make<float>({3, 4}, std::vector<float>(12, 1.f)) : make<float>({4}, {1, 2, 3, 4});
    ir::Node* add = g.add_node("Add", {mm->output(0), g.add_constant("bias", b)}, {"y"});
    g.outputs().push_back(add->output(0));
    if (which == 2) g.outputs().push_back(mm->output(0));
    EXPECT_EQ(make_matmul_add_to_gemm()->run(g), 0) << "case " << which;
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"MatMul", "Add"}));
  }
}

}  // namespace
}  // namespace gec::passes
