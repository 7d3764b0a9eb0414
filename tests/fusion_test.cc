// conv_activation_fusion and com.graphengine::FusedConv:
//  - pattern tests: Before / Expected graphs in the textual IR where the
//    pattern is written out, and the graph after the pass (incl. a spelled-out HardSwish) against the expected one (op,
//    domain, inputs, activation attributes, fused_from, output names), with
//    outputs unchanged, and each guard (two consumers, graph output, Clip
//    bound not constant, broadcasting residual, activation before the Add);
//  - kernel tests: hand-computed small cases, and the fused node against Conv
//    followed by the separate ONNX activation kernel for every activation;
//    residual in place (Y is Z's buffer) and the no-input-channel path;
//  - the --dump-graph export of a FusedConv (domain com.graphengine).
//
// The kernel tests run the activation both ways the kernel has (oneDNN
// eltwise post-op, and the ai.onnx kernel in place after the conv).
// Tolerance of fused vs separate: |fused - ref| <= 1e-5 + 1e-5 * |ref|
// (oneDNN may pick another convolution implementation once post-ops are
// attached, summing in another order; its exp/tanh are polynomial
// approximations a few ulp from libm).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "kernels_nn_util.h"
#include "onnx/onnx_pb.h"
#include "ops/fused_conv.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Deterministic values in [-2.5, 2.5): both signs, several magnitudes.
Tensor wave(Shape s, int seed = 0) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.as<float>()[i] = 0.5f * static_cast<float>((i * 7 + seed * 3) % 11) - 2.5f + 0.01f * static_cast<float>(i % 3);
  return t;
}

// ---- pattern tests ----------------------------------------------------------

/// x [1,2,3,3] -> Conv (W [2,2,1,1], bias) named conv1, output "c".
ir::Node* add_conv(ir::Graph& g, ir::Value* x, bool bias = true) {
  std::vector<ir::Value*> ins{x, g.add_constant("W", make<float>({2, 2, 1, 1}, {1, -2, 0.5f, 3}))};
  if (bias) ins.push_back(g.add_constant("B", make<float>({2}, {0.5f, -1})));
  ir::Node* c = g.add_node("Conv", ins, {"c"}, "conv1");
  c->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 2, 3, 3});
  return c;
}

/// A unary node named `name` over `in` with output `out` of `in`'s type.
ir::Node* add_unary(ir::Graph& g, const std::string& op, ir::Value* in, const std::string& out,
                    const std::string& name) {
  ir::Node* n = g.add_node(op, {in}, {out}, name);
  n->output(0)->type = in->type;
  return n;
}

ir::Node* add_add(ir::Graph& g, ir::Value* a, ir::Value* b, const std::string& out) {
  ir::Node* n = g.add_node("Add", {a, b}, {out}, "add1");
  n->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 2, 3, 3});
  return n;
}

/// Runs the pass; checks it made `changes` rewrites, that the graph verifies
/// and that every output keeps its values on the given feeds.
void run_pass_and_compare(ir::Graph& g, const std::map<std::string, Tensor>& feeds, int64_t changes) {
  auto before = run_graph(g, feeds);
  EXPECT_EQ(make_conv_activation_fusion()->run(g), changes);
  g.verify();
  auto after = run_graph(g, feeds);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].shape(), before[i].shape());
    expect_close(values<float>(after[i]), values<float>(before[i]), 1e-5f, 1e-5f);
  }
}

// Before / Expected in the textual IR (ir/text.h).
constexpr const char* kConvConsts = R"(
  const %W: float32[2,2,1,1] = [1.0, -2.0, 0.5, 3.0]
  const %B: float32[2] = [0.5, -1.0])";

TEST(ConvActivationFusion, ConvReluBecomesOneFusedConv) {
  auto pass = make_conv_activation_fusion();
  auto g = expect_rewrite(*pass, std::string(R"(graph {
  input %x: float32[1,2,3,3])") + kConvConsts + R"(
  %c = Conv(%x, %W, %B) : float32[1,2,3,3] @conv1
  %y = Relu(%c) : float32[1,2,3,3] @relu1
  output %y
})", std::string(R"(graph {
  input %x: float32[1,2,3,3])") + kConvConsts + R"(
  %y = com.graphengine::FusedConv(%x, %W, %B) {activation = "Relu", activation_alpha = 0.0, activation_beta = 0.0} : float32[1,2,3,3]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "FusedConv")->fused_from, (std::vector<std::string>{"conv1", "relu1"}));
  EXPECT_EQ(g->outputs()[0]->name(), "y");
}

// The resnet block tail: Relu(Add(z, Conv(x))), the Conv on the Add's right;
// no bias, so input 2 stays omitted.
TEST(ConvActivationFusion, ResidualAddThenReluBecomeSumAndEltwise) {
  auto pass = make_conv_activation_fusion();
  auto g = expect_rewrite(*pass, std::string(R"(graph {
  input %x: float32[1,2,3,3]
  input %z: float32[1,2,3,3])") + kConvConsts + R"(
  %c = Conv(%x, %W) : float32[1,2,3,3] @conv1
  %s = Add(%z, %c) : float32[1,2,3,3] @add1
  %y = Relu(%s) : float32[1,2,3,3] @relu1
  output %y
})", R"(graph {
  input %x: float32[1,2,3,3]
  input %z: float32[1,2,3,3]
  const %W: float32[2,2,1,1] = [1.0, -2.0, 0.5, 3.0]
  %y = com.graphengine::FusedConv(%x, %W, _, %z) {activation = "Relu", activation_alpha = 0.0, activation_beta = 0.0} : float32[1,2,3,3]
  output %y
})", 2);
  EXPECT_EQ(only_node(*g, "FusedConv")->fused_from, (std::vector<std::string>{"conv1", "add1", "relu1"}));
  EXPECT_EQ(g->outputs()[0]->name(), "y");
}

TEST(ConvActivationFusion, ResidualWithoutActivation) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 3, 3});
  ir::Value* z = input(g, "z", {1, 2, 3, 3});
  ir::Node* conv = add_conv(g, x);
  g.outputs().push_back(add_add(g, conv->output(0), z, "y")->output(0));
  run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}, {"z", wave({1, 2, 3, 3}, 2)}}, 1);
  ir::Node* f = only_node(g, "FusedConv");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->input(3), z);
  EXPECT_NE(f->input(2), nullptr);
  EXPECT_EQ(f->get_string("activation", "?"), "");
}

TEST(ConvActivationFusion, ClipBoundsAndDefaultsBecomeAttributes) {
  struct Case {
    std::string op;
    bool has_min, has_max;
    float alpha, beta;
  };
  const Case cases[] = {{"Clip", true, true, 0.f, 6.f},         // Relu6
                        {"Clip", false, true, -kInf, 6.f},      // max only
                        {"Clip", true, false, -1.f, kInf},      // min only
                        {"HardSigmoid", false, false, 0.2f, 0.5f},
                        {"LeakyRelu", false, false, 0.01f, 0.f}};
  for (const Case& c : cases) {
    ir::Graph g;
    ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
    ir::Node* act = add_unary(g, c.op, conv->output(0), "y", "act");
    if (c.op == "Clip") {
      act->set_input(1, c.has_min ? g.add_constant("lo", make<float>({}, {c.alpha})) : nullptr);
      if (c.has_max) act->set_input(2, g.add_constant("hi", make<float>({}, {c.beta})));
    }
    g.outputs().push_back(act->output(0));
    run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}}, 1);
    ir::Node* f = only_node(g, "FusedConv");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->get_string("activation", "?"), c.op);
    EXPECT_EQ(f->get_float("activation_alpha", 99.f), c.alpha) << c.op;
    EXPECT_EQ(f->get_float("activation_beta", 99.f), c.beta) << c.op;
  }
}

// Each guard leaves the graph exactly as it was.
TEST(ConvActivationFusion, GuardsKeepTheGraph) {
  for (int which = 0; which < 6; ++which) {
    ir::Graph g;
    ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
    ir::Value* c = conv->output(0);
    ir::Node* last = nullptr;
    switch (which) {
      case 0:  // second consumer of the Conv output
        last = add_unary(g, "Relu", c, "y", "relu1");
        g.outputs().push_back(add_unary(g, "Sigmoid", c, "y2", "sig")->output(0));
        break;
      case 1:  // the intermediate is a graph output
        last = add_unary(g, "Relu", c, "y", "relu1");
        g.outputs().push_back(c);
        break;
      case 2:  // Clip min is a graph input, not a constant
        last = add_unary(g, "Clip", c, "y", "clip1");
        last->set_input(1, input(g, "lo", {}));
        break;
      case 3:  // Clip min > max: ONNX gives max everywhere, oneDNN's clip would not
        last = add_unary(g, "Clip", c, "y", "clip1");
        last->set_input(1, g.add_constant("lo", make<float>({}, {2.f})));
        last->set_input(2, g.add_constant("hi", make<float>({}, {1.f})));
        break;
      case 4:  // residual broadcasts per channel: no Add fusion, hence no Relu either
        last = add_unary(g, "Relu", add_add(g, c, input(g, "z", {1, 2, 1, 1}), "s")->output(0), "y", "relu1");
        break;
      case 5:  // residual of another dtype
        last = add_add(g, c, input(g, "z", {1, 2, 3, 3}, DType::kFloat64), "y");
        break;
    }
    g.outputs().insert(g.outputs().begin(), last->output(0));
    const std::vector<std::string> before = ops_of(g);
    EXPECT_EQ(make_conv_activation_fusion()->run(g), 0) << "case " << which;
    EXPECT_EQ(ops_of(g), before) << "case " << which;
    EXPECT_EQ(conv->op_type, "Conv") << "case " << which;
    EXPECT_EQ(conv->inputs().size(), 3u) << "case " << which;
  }
}

// act(conv + z) is the only order the FusedConv computes: an Add after the
// activation stays a separate node, and a second activation too.
TEST(ConvActivationFusion, ActivationIsTheLastPostOp) {
  ir::Graph g;
  ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
  ir::Node* relu = add_unary(g, "Relu", conv->output(0), "r", "relu1");
  ir::Node* add = add_add(g, relu->output(0), input(g, "z", {1, 2, 3, 3}), "s");
  g.outputs().push_back(add_unary(g, "Tanh", add->output(0), "y", "tanh1")->output(0));
  ir::Node* tanh2 = add_unary(g, "Sigmoid", relu->output(0), "y2", "sig");
  g.outputs().push_back(tanh2->output(0));
  // The Conv output has one reader (relu1): Conv+Relu fuse. relu1's output
  // is read twice and the FusedConv already ends in an activation: the Add,
  // Tanh and Sigmoid stay.
  run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}, {"z", wave({1, 2, 3, 3}, 1)}}, 1);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"FusedConv", "Add", "Tanh", "Sigmoid"}));
}

TEST(ConvActivationFusion, RunsAtO2AndO3AfterTheFoldings) {
  for (int level : {2, 3}) {
    auto names = make_pipeline(level).names();
    auto at = std::find(names.begin(), names.end(), "conv_activation_fusion");
    ASSERT_NE(at, names.end()) << "-O" << level;
    for (const char* folding : {"conv_bn_folding", "conv_scale_folding"}) {
      auto last_folding = std::find(names.rbegin(), names.rend(), folding);
      ASSERT_NE(last_folding, names.rend()) << folding;
      EXPECT_LT(names.rend() - last_folding - 1, at - names.begin()) << folding << " at -O" << level;
    }
  }
  auto o1 = make_pipeline(1).names();
  EXPECT_EQ(std::find(o1.begin(), o1.end(), "conv_activation_fusion"), o1.end());
}

TEST(ConvActivationFusion, DumpedGraphHasOurDomain) {
  ir::Graph g;
  g.name = "fusion_dump";
  ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
  g.outputs().push_back(add_unary(g, "Relu", conv->output(0), "y", "relu1")->output(0));
  ASSERT_EQ(make_conv_activation_fusion()->run(g), 1);
  const auto dir = std::filesystem::temp_directory_path() / ("gec_fusion_dump_" + std::to_string(::getpid()));
  dump_graph(g, dir.string(), 1, "fused");
  onnx::ModelProto m;
  std::ifstream f(dir / "01_fused.onnx", std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&f));
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "FusedConv");
  EXPECT_EQ(m.graph().node(0).domain(), "com.graphengine");
  bool imported = false;
  for (const auto& op : m.opset_import()) imported |= op.domain() == "com.graphengine";
  EXPECT_TRUE(imported);
  std::filesystem::remove_all(dir);
}

/// x -> Conv -> a spelled-out HardSwish of the conv output (form 0:
/// Div(Mul(c, Clip(Add(c, 3), 0, 6)), 6) as paddle2onnx writes it; form 1:
/// Mul(Div(Clip(Add(3, c), 0, 6), 6), c); form 2: Mul(c, HardSigmoid(c, 1/6, 1/2)));
/// `three` replaces the 3 (a guard test passes another value).
ir::Value* spelled_out_hardswish(ir::Graph& g, ir::Value* c, int form, float three = 3.f) {
  auto k = [&g](const std::string& n, float v) { return g.add_constant(n, make<float>({}, {v})); };
  auto node = [&g, c](const std::string& op, std::vector<ir::Value*> in, const std::string& out) {
    ir::Node* n = g.add_node(op, in, {out}, out + "_node");
    n->output(0)->type = c->type;
    return n->output(0);
  };
  if (form == 2) {
    ir::Value* h = node("HardSigmoid", {c}, "hs");
    h->producer()->set_attr(ir::Attribute::Float("alpha", 1.f / 6.f));
    return node("Mul", {c, h}, "y");
  }
  ir::Value* a = form == 0 ? node("Add", {c, k("three", three)}, "a") : node("Add", {k("three", three), c}, "a");
  ir::Value* r6 = node("Clip", {a, k("zero", 0.f), k("six", 6.f)}, "r6");
  if (form == 0) return node("Div", {node("Mul", {c, r6}, "m"), k("six2", 6.f)}, "y");
  return node("Mul", {node("Div", {r6, k("six2", 6.f)}, "d"), c}, "y");
}

TEST(ConvActivationFusion, SpelledOutHardSwishJoinsTheConv) {
  for (int form = 0; form < 3; ++form) {
    ir::Graph g;
    ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
    g.outputs().push_back(spelled_out_hardswish(g, conv->output(0), form));
    run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}}, 2);  // HardSwish, then Conv + HardSwish
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"FusedConv"})) << "form " << form;
    ir::Node* f = only_node(g, "FusedConv");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->get_string("activation", "?"), "HardSwish");
    EXPECT_EQ(f->fused_from.front(), "conv1");
    EXPECT_EQ(f->fused_from.size(), form == 2 ? 3u : 5u) << "form " << form;
    EXPECT_EQ(g.outputs()[0]->name(), "y");
  }
}

TEST(ConvActivationFusion, SpelledOutHardSwishGuards) {
  for (int which = 0; which < 2; ++which) {
    ir::Graph g;
    ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
    g.outputs().push_back(spelled_out_hardswish(g, conv->output(0), 0, which == 0 ? 2.f : 3.f));
    if (which == 1) g.outputs().push_back(g.find_value("r6"));  // an intermediate is a graph output
    const std::vector<std::string> before = ops_of(g);
    EXPECT_EQ(make_conv_activation_fusion()->run(g), 0) << "case " << which;
    EXPECT_EQ(ops_of(g), before) << "case " << which;
  }
}

// SiLU as PyTorch exports it, Mul(x, Sigmoid(x)) in either operand order:
// transformer_fusion makes it one com.graphengine::Swish; after a Conv,
// conv_activation_fusion then makes that the Conv's post-op.
TEST(ConvActivationFusion, SpelledOutSiluBecomesSwish) {
  for (int order = 0; order < 2; ++order) {
    ir::Graph g;
    ir::Node* conv = add_conv(g, input(g, "x", {1, 2, 3, 3}));
    ir::Value* c = conv->output(0);
    ir::Value* s = add_unary(g, "Sigmoid", c, "s", "sig")->output(0);
    ir::Node* mul = g.add_node("Mul", order == 0 ? std::vector<ir::Value*>{c, s} : std::vector<ir::Value*>{s, c},
                               {"y"}, "mul");
    mul->output(0)->type = c->type;
    g.outputs().push_back(mul->output(0));
    const auto before = run_graph(g, {{"x", wave({1, 2, 3, 3})}});
    EXPECT_EQ(make_transformer_fusion()->run(g), 1);                // the swish rule
    run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}}, 1);       // Conv + Swish
    expect_close(values<float>(run_graph(g, {{"x", wave({1, 2, 3, 3})}})[0]), values<float>(before[0]), 1e-5f, 1e-5f);
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"FusedConv"})) << "order " << order;
    ir::Node* f = only_node(g, "FusedConv");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->get_string("activation", "?"), "Swish");
    EXPECT_EQ(f->get_float("activation_alpha", 0.f), 1.f);
    EXPECT_EQ(f->fused_from, (std::vector<std::string>{"conv1", "sig", "mul"}));
    EXPECT_EQ(g.outputs()[0]->name(), "y");
  }
  // Not after a Conv: one Swish of our domain. The Sigmoid read twice: nothing.
  for (bool shared : {false, true}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 2, 3, 3});
    ir::Value* s = add_unary(g, "Sigmoid", x, "s", "sig")->output(0);
    ir::Node* mul = g.add_node("Mul", {x, s}, {"y"}, "mul");
    mul->output(0)->type = x->type;
    g.outputs().push_back(mul->output(0));
    if (shared) g.outputs().push_back(s);
    const auto before = run_graph(g, {{"x", wave({1, 2, 3, 3})}});
    EXPECT_EQ(make_transformer_fusion()->run(g), shared ? 0 : 1);
    run_pass_and_compare(g, {{"x", wave({1, 2, 3, 3})}}, 0);
    expect_close(values<float>(run_graph(g, {{"x", wave({1, 2, 3, 3})}})[0]), values<float>(before[0]), 1e-5f, 1e-5f);
    if (shared) {
      EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Sigmoid", "Mul"}));
    } else {
      ir::Node* n = only_node(g, "Swish");
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->domain, ops::kGecDomain);
    }
  }
}

// A one-element constant of higher rank broadcasts x up a rank (x [4], a
// [1,1] three: the root is [1,4]); HardSwish(x) would be [4], so no rewrite.
TEST(ConvActivationFusion, SpelledOutHardSwishKeepsTheDeclaredShape) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  auto node = [&g](const std::string& op, std::vector<ir::Value*> in, const std::string& out, const Shape& s) {
    ir::Node* n = g.add_node(op, in, {out}, out + "_node");
    n->output(0)->type = ir::TensorType::of(DType::kFloat32, s);
    return n->output(0);
  };
  ir::Value* a = node("Add", {x, g.add_constant("three", make<float>({1, 1}, {3.f}))}, "a", {1, 4});
  ir::Value* r6 = node("Clip", {a, g.add_constant("zero", make<float>({}, {0.f})),
                                g.add_constant("six", make<float>({}, {6.f}))}, "r6", {1, 4});
  ir::Value* m = node("Mul", {x, r6}, "m", {1, 4});
  g.outputs().push_back(node("Div", {m, g.add_constant("six2", make<float>({}, {6.f}))}, "y", {1, 4}));
  const std::vector<std::string> before = ops_of(g);
  EXPECT_EQ(make_conv_activation_fusion()->run(g), 0);
  EXPECT_EQ(ops_of(g), before);
}

// ---- kernel tests -------------------------------------------------------------

std::vector<ir::Attribute> act_attrs(const std::string& op, float alpha, float beta) {
  return {as("activation", op), af("activation_alpha", alpha), af("activation_beta", beta)};
}

/// FusedConv over `in`; `variant` is the kernel variant: "" (auto),
/// "post_op" or "kernel" (where the activation runs).
Tensor run_fused(const std::vector<Tensor>& in, std::vector<ir::Attribute> attrs, const std::string& variant = "") {
  kernels::KernelConfig config;
  config.variant = variant;
  return run_op("FusedConv", in, std::move(attrs), 1, "com.graphengine", config)[0];
}

// 1x1 conv, W = 2, B = -1 over x = {-2, 1, 4}: conv = {-5, 1, 7};
// + z {1, -5, 0} = {-4, -4, 7}; Relu -> {0, 0, 7}; Clip[0, 6] -> {0, 0, 6}.
TEST(FusedConvKernel, HandComputedResidualRelu6) {
  const Tensor x = make<float>({1, 1, 1, 3}, {-2, 1, 4}), w = make<float>({1, 1, 1, 1}, {2}),
               b = make<float>({1}, {-1}), z = make<float>({1, 1, 1, 3}, {1, -5, 0});
  expect_close(values<float>(run_fused({x, w, b, z}, act_attrs("Relu", 0, 0))), {0, 0, 7});
  expect_close(values<float>(run_fused({x, w, b, z}, act_attrs("Clip", 0, 6))), {0, 0, 6});
  expect_close(values<float>(run_fused({x, w, b, z}, act_attrs("", 0, 0))), {-4, -4, 7});
  expect_close(values<float>(run_fused({x, w, b}, act_attrs("LeakyRelu", 0.5f, 0))), {-2.5f, 1, 7});
}

struct ActCase {
  std::string op;
  std::vector<ir::Attribute> onnx_attrs;  // of the separate ONNX node
  float alpha, beta;                       // the same, as FusedConv attributes
};

std::vector<ActCase> all_activations() {
  return {{"Relu", {}, 0, 0},
          {"LeakyRelu", {af("alpha", 0.1f)}, 0.1f, 0},
          {"Clip", {}, -1.5f, 2.f},
          {"Sigmoid", {}, 0, 0},
          {"Tanh", {}, 0, 0},
          {"HardSigmoid", {af("alpha", 0.3f), af("beta", 0.4f)}, 0.3f, 0.4f},
          {"HardSwish", {}, 0, 0},
          {"Elu", {af("alpha", 0.7f)}, 0.7f, 0},
          {"Selu", {af("alpha", 1.5f), af("gamma", 1.1f)}, 1.5f, 1.1f},
          {"Softplus", {}, 0, 0},
          {"Mish", {}, 0, 0},
          {"Swish", {af("alpha", 1.5f)}, 1.5f, 0}};
}

/// The separate ONNX activation node's result on `v`.
Tensor reference_activation(const ActCase& c, const Tensor& v) {
  if (c.op == "Clip") return run_op("Clip", {v, make<float>({}, {c.alpha}), make<float>({}, {c.beta})})[0];
  return run_op(c.op, {v}, c.onnx_attrs, 1, ops::activation_domain(c.op))[0];
}

// Every activation, with and without a residual, on a 3x3 pad-1 conv whose
// sizes are not multiples of any vector width (C=3, M=5, 7x9 pixels, N=2).
TEST(FusedConvKernel, MatchesConvThenSeparateActivation) {
  const Tensor x = wave({2, 3, 7, 9}, 1), w = wave({5, 3, 3, 3}, 2), b = wave({5}, 3), z = wave({2, 5, 7, 9}, 4);
  const std::vector<ir::Attribute> conv_attrs{ais("pads", {1, 1, 1, 1})};
  // Scaled down so that the conv output spans about [-4, 4]: every branch of
  // every activation is reached, nothing saturates.
  Tensor ws = w;
  for (int64_t i = 0; i < ws.numel(); ++i) ws.as<float>()[i] *= 0.1f;
  const Tensor conv = run_op("Conv", {x, ws, b}, conv_attrs)[0];
  const Tensor sum = run_op("Add", {conv, z})[0];
  for (const ActCase& c : all_activations()) {
    for (bool residual : {false, true}) {
      for (const char* impl : {"post_op", "kernel", ""}) {
        std::vector<ir::Attribute> attrs = conv_attrs;
        for (auto& a : act_attrs(c.op, c.alpha, c.beta)) attrs.push_back(a);
        std::vector<Tensor> in{x, ws, b};
        if (residual) in.push_back(z);
        const Tensor fused = run_fused(in, attrs, impl);
        const Tensor ref = reference_activation(c, residual ? sum : conv);
        ASSERT_EQ(fused.shape(), ref.shape());
        SCOPED_TRACE(c.op + (residual ? " + residual, " : ", ") + impl);
        expect_close(values<float>(fused), values<float>(ref), 1e-5f, 1e-5f);
      }
    }
  }
}

// With the activation kernel (what gemm-based convolutions get), a NaN
// reaching Relu stays NaN as ONNX Relu says (shared case B11); the numbers
// around it are unchanged. 1x1 conv W = 1: y = relu(x).
TEST(FusedConvKernel, ActivationKernelKeepsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make<float>({1, 1, 1, 3}, {nan, -1, 2}), w = make<float>({1, 1, 1, 1}, {1});
  auto attrs = act_attrs("Relu", 0, 0);
  const Tensor y = run_fused({x, w}, attrs, "kernel");
  const std::vector<float> v = values<float>(y);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.f);
  EXPECT_EQ(v[2], 2.f);
  gec::testing::expect_error([&] { run_fused({x, w}, attrs, "fastest"); }, ErrorCode::kInvalidModel,
                        "kernel variant 'fastest' is not winograd, winograd_nhwc, direct, nhwc, taps, im2col_nhwc, post_op or kernel");
}

// Grouped (depthwise) conv, no bias, stride 2: the residual adds to the
// output of each group.
TEST(FusedConvKernel, DepthwiseStride2ResidualNoBias) {
  const Tensor x = wave({1, 4, 9, 5}), w = wave({4, 1, 3, 3}, 6), z = wave({1, 4, 4, 2}, 7);
  const std::vector<ir::Attribute> attrs{ai("group", 4), ais("strides", {2, 2})};
  const Tensor conv = run_op("Conv", {x, w}, attrs)[0];
  const Tensor ref = run_op("Relu", {run_op("Add", {conv, z})[0]})[0];
  std::vector<ir::Attribute> fa = attrs;
  for (auto& a : act_attrs("Relu", 0, 0)) fa.push_back(a);
  const Tensor fused = run_fused({x, w, Tensor(), z}, fa);
  EXPECT_EQ(fused.shape(), (Shape{1, 4, 4, 2}));
  expect_close(values<float>(fused), values<float>(ref), 1e-5f, 1e-5f);
}

/// A FusedConv kernel run with Y's buffer given by the caller (in place on Z).
Tensor run_in_place(const Tensor& x, const Tensor& w, Tensor& z, const std::string& act) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  for (const Tensor* t : {&x, &w, static_cast<const Tensor*>(nullptr), static_cast<const Tensor*>(&z)})
    ins.push_back(t ? g.add_value("v" + std::to_string(ins.size()), ir::TensorType::of(t->dtype(), t->shape()))
                    : nullptr);
  ir::Node* n = g.add_node("FusedConv", ins, {"y"}, "inplace", "com.graphengine");
  n->attrs = act_attrs(act, 0, 0);
  auto k = kernels::create_kernel(*n);
  TensorView xv = x.view(), wv = w.view(), zv = z.view(), yv = z.view();
  kernels::KernelContext ctx;
  ctx.inputs = {&xv, &wv, nullptr, &zv};
  ctx.outputs = {&yv};
  ctx.num_threads = 2;
  k->reshape(ctx);
  k->run(ctx);
  return z;
}

TEST(FusedConvKernel, OutputInPlaceOnResidual) {
  const Tensor x = wave({1, 3, 5, 5}), w = wave({3, 3, 1, 1}, 3);
  Tensor z = wave({1, 3, 5, 5}, 8);
  const Tensor ref = run_op("Relu", {run_op("Add", {run_op("Conv", {x, w})[0], z})[0]})[0];
  const Tensor y = run_in_place(x, w, z, "Relu");
  expect_close(values<float>(y), values<float>(ref), 1e-5f, 1e-5f);
}

// No input channels: Y = act(B + Z) without oneDNN. B = {1, -3}, z = {0.5, 1}
// per channel -> {1.5, -2} -> Relu {1.5, 0}.
TEST(FusedConvKernel, NoInputChannelsIsActOfBiasPlusResidual) {
  const Tensor x(DType::kFloat32, {1, 0, 1, 2}), w(DType::kFloat32, {2, 0, 1, 1});
  const Tensor b = make<float>({2}, {1, -3}), z = make<float>({1, 2, 1, 2}, {0.5f, 0.5f, 1, 1});
  const Tensor y = run_fused({x, w, b, z}, act_attrs("Relu", 0, 0));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 2}));
  expect_close(values<float>(y), {1.5f, 1.5f, 0, 0});
}

TEST(FusedConvKernel, RefusesBroadcastResidualAndUnknownActivation) {
  const Tensor x = wave({1, 2, 3, 3}), w = wave({2, 2, 1, 1});
  EXPECT_THROW(run_fused({x, w, Tensor(), wave({1, 2, 1, 1})}, act_attrs("Relu", 0, 0)), Error);
  EXPECT_THROW(run_fused({x, w}, act_attrs("Gelu", 0, 0)), Error);
}

}  // namespace
}  // namespace gec::passes
