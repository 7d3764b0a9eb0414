// Weight-folding passes: Before / Expected graphs in the textual IR with the
// folded weights computed by hand, outputs unchanged (graph run node by node
// before and after), and each guard:
// intermediate that is a graph output (B07), several consumers, non-constant
// parameters, broadcasts along a non-channel axis, grouped convs (B01).
#include <gtest/gtest.h>

#include <algorithm>

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

// Before / Expected in the textual IR (ir/text.h). The BN has
// a = scale / sqrt(var + eps) = {2, 3} and b = B - mean * a = {8, 14}.
TEST(ConvBnFolding, FoldsIntoWeightsAndExistingBias) {
  auto pass = make_conv_bn_folding();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,2,1,1] = [1.0, 2.0, 3.0, 4.0]
  const %B: float32[2] = [1.0, -1.0]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %c = Conv(%x, %W, %B) {group = 1} : float32[1,2,2,2] @conv1
  %y = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 1.0} : float32[1,2,2,2] @y_bn
  output %y
})", R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,2,1,1] = [2.0, 4.0, 9.0, 12.0]
  const %B: float32[2] = [10.0, 11.0]    # B * a + b
  %y = Conv(%x, %W, %B) {group = 1} : float32[1,2,2,2]
  output %y
})", 1);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
  EXPECT_EQ(only_node(*g, "Conv")->fused_from, (std::vector<std::string>{"conv1", "y_bn"}));
}

TEST(ConvBnFolding, DepthwiseConvWithoutBias) {
  auto pass = make_conv_bn_folding();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,1,1,1] = [5.0, 7.0]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %c = Conv(%x, %W) {group = 2} : float32[1,2,2,2]
  %y = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 1.0} : float32[1,2,2,2]
  output %y
})", R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,1,1,1] = [10.0, 21.0]
  const %B: float32[2] = [8.0, 14.0]
  %y = Conv(%x, %W, %B) {group = 2} : float32[1,2,2,2]
  output %y
})", 1);
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

// A BatchNormalization no folding took (before its Conv, after a Concat)
// becomes Mul + Add of per-channel constants that broadcast along axis 1.
TEST(BatchNormToMulAdd, PerChannelScaleAndShift) {
  auto pass = make_batchnorm_to_mul_add();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,2,2]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %y = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 1.0} : float32[1,2,2,2] @norm1
  output %y
})", R"(graph {
  input %x: float32[1,2,2,2]
  const %a: float32[2,1,1] = [2.0, 3.0]
  const %c: float32[2,1,1] = [8.0, 14.0]
  %t = Mul(%x, %a) : float32[1,2,2,2]
  %y = Add(%t, %c) : float32[1,2,2,2]
  output %y
})", 1);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
  // A [N, C] input: the constants are [C].
  expect_rewrite(*pass, R"(graph {
  input %x: float32[3,2]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %y = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 1.0} : float32[3,2]
  output %y
})", R"(graph {
  input %x: float32[3,2]
  const %a: float32[2] = [2.0, 3.0]
  const %c: float32[2] = [8.0, 14.0]
  %t = Mul(%x, %a) : float32[3,2]
  %y = Add(%t, %c) : float32[3,2]
  output %y
})", 1);
}

TEST(BatchNormToMulAdd, GuardsKeepTheBatchNorm) {
  for (int which = 0; which < 3; ++which) {
    ir::Graph g;
    ir::Value* x = input(g, "x", which == 2 ? Shape{} : Shape{1, 2, 2, 2});
    if (which == 2) x->type = ir::TensorType{DType::kFloat32, false, {}};  // rank unknown
    ir::Node* bn = add_bn(g, x, "y");
    bn->output(0)->type = x->type;
    if (which == 0) bn->set_input(3, input(g, "mean", {2}));  // a run-time mean
    if (which == 1) bn->set_input(1, g.add_constant("s3", make<float>({3}, {1.f, 2.f, 3.f})));  // 3 scales for C = 2
    g.outputs().push_back(bn->output(0));
    EXPECT_EQ(make_batchnorm_to_mul_add()->run(g), 0) << "case " << which;
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"BatchNormalization"})) << "case " << which;
  }
}

// The pipeline lets the weight foldings go first: Conv -> BN folds into the
// Conv, BN -> Relu -> Conv becomes one fused Mul + Add + Relu group.
TEST(BatchNormToMulAdd, RunsAfterTheFoldings) {
  for (int level : {2, 3}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 2, 2, 2});
    ir::Node* conv = add_conv(g, x, {2, 2, 1, 1}, {1, 2, 3, 4}, {1, -1});
    ir::Node* bn1 = add_bn(g, conv->output(0), "y1");
    bn1->output(0)->type = conv->output(0)->type;
    ir::Node* bn2 = add_bn(g, x, "y2");
    bn2->output(0)->type = x->type;
    ir::Node* relu = g.add_node("Relu", {bn2->output(0)}, {"r"}, "relu");
    relu->output(0)->type = x->type;
    g.outputs() = {bn1->output(0), relu->output(0)};
    make_pipeline(level).run(g, CompileOptions{});
    std::vector<std::string> ops = ops_of(g);
    std::sort(ops.begin(), ops.end());
    EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "FusedElementwise"})) << "-O" << level;
  }
}

TEST(ConvScaleFolding, PerChannelMulThenAdd) {
  auto pass = make_conv_scale_folding();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,2,1,1] = [1.0, 2.0, 3.0, 4.0]
  const %B: float32[2] = [1.0, -1.0]
  const %c: float32[2,1,1] = [2.0, 3.0]
  const %d: float32[1,2,1,1] = [5.0, 6.0]
  %conv = Conv(%x, %W, %B) {group = 1} : float32[1,2,2,2]
  %m = Mul(%c, %conv) : float32[1,2,2,2]
  %y = Add(%m, %d) : float32[1,2,2,2]
  output %y
})", R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,2,1,1] = [2.0, 4.0, 9.0, 12.0]
  const %B: float32[2] = [7.0, 3.0]     # 1*2 + 5, -1*3 + 6
  %y = Conv(%x, %W, %B) {group = 1} : float32[1,2,2,2]
  output %y
})", 2);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
}

// Shared case B01: a per-channel Add after a grouped Conv adds to each
// output channel's bias only; weights of other groups are untouched.
TEST(ConvScaleFolding, GroupedConvAddStaysPerChannel) {
  auto pass = make_conv_scale_folding();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,1,1,1] = [5.0, 7.0]
  const %d: float32[2,1,1] = [1.0, 2.0]
  %conv = Conv(%x, %W) {group = 2} : float32[1,2,2,2]
  %y = Add(%conv, %d) : float32[1,2,2,2]
  output %y
})", R"(graph {
  input %x: float32[1,2,2,2]
  const %W: float32[2,1,1,1] = [5.0, 7.0]
  const %B: float32[2] = [1.0, 2.0]
  %y = Conv(%x, %W, %B) {group = 2} : float32[1,2,2,2]
  output %y
})", 1);
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
    SCOPED_TRACE(trans ? "transB = 1" : "transB = 0");
    const std::string attrs = std::string("{beta = 2.0, transB = ") + (trans ? "1" : "0") + "}";
    auto pass = make_gemm_bn_folding();
    // transB = 0: B[k][n] * a[n]; transB = 1: B[n][k] * a[n]. Bias: beta * C * a + b
    // = {2*1*2 + 8, 2*1*3 + 14}, and beta becomes 1.
    auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[3,2]
  const %B: float32[2,2] = [1.0, 2.0, 3.0, 4.0]
  const %C: float32[2] = [1.0, 1.0]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %gemm = Gemm(%x, %B, %C) )" + attrs + R"( : float32[3,2] @fc
  %y = BatchNormalization(%gemm, %s, %b, %m, %v) {epsilon = 1.0} : float32[3,2]
  output %y
})", std::string(R"(graph {
  input %x: float32[3,2]
  const %B: float32[2,2] = )") + (trans ? "[2.0, 4.0, 9.0, 12.0]" : "[2.0, 6.0, 6.0, 12.0]") + R"(
  const %C: float32[2] = [12.0, 20.0]
  %y = Gemm(%x, %B, %C) {beta = 1.0, transB = )" + (trans ? "1" : "0") + R"(} : float32[3,2]
  output %y
})", 1);
    EXPECT_EQ(g->outputs()[0]->name(), "y");
  }
}

TEST(GemmBnFolding, MatMulBecomesGemm) {
  auto pass = make_gemm_bn_folding();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[3,2]
  const %W: float32[2,2] = [1.0, 2.0, 3.0, 4.0]
  const %s: float32[2] = [4.0, 3.0]
  const %b: float32[2] = [10.0, 20.0]
  const %m: float32[2] = [1.0, 2.0]
  const %v: float32[2] = [3.0, 0.0]
  %mm = MatMul(%x, %W) : float32[3,2]
  %y = BatchNormalization(%mm, %s, %b, %m, %v) {epsilon = 1.0} : float32[3,2]
  output %y
})", R"(graph {
  input %x: float32[3,2]
  const %W: float32[2,2] = [2.0, 6.0, 6.0, 12.0]
  const %C: float32[2] = [8.0, 14.0]
  %y = Gemm(%x, %W, %C) {beta = 1.0} : float32[3,2]
  output %y
})", 1);
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
  auto pass = make_matmul_add_to_gemm();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[3,2]
  const %W: float32[2,4] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  const %bias: float32[4] = [1.0, 2.0, 3.0, 4.0]
  %mm = MatMul(%x, %W) : float32[3,4]
  %y = Add(%bias, %mm) : float32[3,4]
  output %y
})", R"(graph {
  input %x: float32[3,2]
  const %W: float32[2,4] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  const %bias: float32[4] = [1.0, 2.0, 3.0, 4.0]
  %y = Gemm(%x, %W, %bias) : float32[3,4]
  output %y
})", 1);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
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
