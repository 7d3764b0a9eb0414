// Op traits (ops/op_schema.h): every registered op declares what the planner,
// the layout pass, the fusion rules and automatic fusion read, and the traits
// agree with each other. A new op registered without its pattern kind fails
// here, naming it.
#include <gtest/gtest.h>

#include "kernels/kernel.h"
#include "ops/fused_conv.h"
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

std::string label(const std::pair<std::string, std::string>& op) { return domain_label(op.first) + "::" + op.second; }

TEST(OpTraits, EveryRegisteredOpDeclaresItsPatternKind) {
  const auto ops = registered_ops();
  ASSERT_GT(ops.size(), 150u);
  for (const auto& op : ops)
    EXPECT_NE(find_schema(op.first, op.second)->traits.pattern, PatternKind::kUnset)
        << label(op) << " has no pattern kind: add .traits = traits(PatternKind::k...) to its registration";
}

TEST(OpTraits, InPlaceAndPassThroughOnlyOnElementwiseOps) {
  for (const auto& op : registered_ops()) {
    const OpTraits& t = find_schema(op.first, op.second)->traits;
    const bool elementwise = t.pattern == PatternKind::kElementwise || t.pattern == PatternKind::kBroadcast;
    // In place needs an elementwise op, or pairs whose input no other input
    // may share (IoPair::alone: FusedConv's residual, summed element by element).
    for (const IoPair& p : t.may_inplace) {
      EXPECT_TRUE(elementwise || p.alone) << label(op) << " is in place over input " << p.input
                                          << " but neither elementwise nor alone";
    }
    if (t.layout == LayoutRule::kUnaryPassThrough || t.layout == LayoutRule::kBinaryPassThrough) {
      EXPECT_TRUE(elementwise) << label(op) << " passes a blocked layout through but is not elementwise";
    }
    if (t.conv_epilogue) {
      EXPECT_EQ(t.pattern, PatternKind::kElementwise) << label(op);
    }
    for (const IoPair& p : t.alias) EXPECT_TRUE(p.input == 0 && p.output == 0) << label(op);
    if (!t.alias.empty()) {
      EXPECT_TRUE(t.may_inplace.empty()) << label(op) << " is both a view and in place";
    }
  }
}

// FusedConv's residual Z, and only it, may take Y's storage, and only
// where X, W and B do not share Z's (the convolution reads them throughout).
TEST(OpTraits, FusedConvIsInPlaceOnlyOverItsResidual) {
  const OpTraits& t = find_schema(kGecDomain, "FusedConv")->traits;
  ASSERT_EQ(t.may_inplace.size(), 1u);
  EXPECT_EQ(t.may_inplace[0], (IoPair{3, 0, true}));
}

// FusedConv reads the parameters of every activation that declares itself a
// conv epilogue; an op marked so without that support would be fused wrongly.
TEST(OpTraits, EveryConvEpilogueIsKnownToFusedConv) {
  int count = 0;
  for (const auto& op : registered_ops()) {
    if (!find_schema(op.first, op.second)->traits.conv_epilogue) continue;
    ++count;
    ir::Graph g;
    ir::Value* x = g.add_value("x", ir::TensorType::of(DType::kFloat32, {2}));
    g.inputs().push_back(x);
    ir::Node* n = g.add_node(op.second, {x}, {"y"}, "act", op.first);
    EXPECT_TRUE(is_fusable_activation(op.second)) << label(op);
    if (op.second == "Clip") continue;  // bounds are inputs; activation_of reads constants (fusion_test)
    const auto a = activation_of(*n);
    ASSERT_TRUE(a.has_value()) << label(op);
    EXPECT_EQ(a->op, op.second);
  }
  // Relu LeakyRelu Clip Sigmoid Tanh HardSigmoid HardSwish Elu Selu Softplus Mish, com.graphengine::Swish
  EXPECT_EQ(count, 12);
  EXPECT_FALSE(is_fusable_activation("Exp"));
}

TEST(OpTraits, PlannerAndLayoutReadTheRegistration) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType::of(DType::kFloat32, {4}));
  g.inputs().push_back(x);
  EXPECT_EQ(traits_of(*g.add_node("Reshape", {x}, {"r"}, "r")).alias.size(), 1u);
  EXPECT_EQ(traits_of(*g.add_node("Where", {x, x, x}, {"w"}, "w")).may_inplace,
            (std::vector<IoPair>{{1, 0}, {2, 0}}));
  EXPECT_EQ(traits_of(*g.add_node("Conv", {x, x}, {"c"}, "c")).layout, LayoutRule::kConv);
  EXPECT_EQ(traits_of(*g.add_node("FusedConv", {x, x}, {"f"}, "f", kGecDomain)).layout, LayoutRule::kConv);
  // Unknown ops get default traits: opaque to every consumer.
  const OpTraits& none = traits_of(*g.add_node("NoSuchOp", {x}, {"n"}, "n", "example.domain"));
  EXPECT_EQ(none.pattern, PatternKind::kUnset);
  EXPECT_TRUE(none.may_inplace.empty() && none.alias.empty());
  EXPECT_EQ(none.layout, LayoutRule::kPlainOnly);
}

TEST(OpTraits, DefaultDomainHasOneSpelling) {
  EXPECT_EQ(canonical_domain("ai.onnx"), "");
  EXPECT_EQ(canonical_domain(""), "");
  EXPECT_EQ(canonical_domain(kGecDomain), kGecDomain);
  EXPECT_EQ(find_schema("ai.onnx", "Relu"), find_schema("", "Relu"));
  EXPECT_EQ(kernels::find_kernel("ai.onnx", "Relu"), kernels::find_kernel("", "Relu"));
}

TEST(OpTraits, SecondRegistrationIsAnErrorNamingBoth) {
  if (!find_schema("test.traits", "Dup"))  // (once per process: --gtest_repeat)
    register_schema({.domain = "test.traits", .op_type = "Dup", .infer = {}, .traits = traits(PatternKind::kOpaque)});
  try {
    register_schema({.domain = "test.traits", .op_type = "Dup", .infer = {}, .traits = traits(PatternKind::kOpaque)});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test.traits::Dup is registered twice"), std::string::npos) << e.what();
  }
  auto f = [](const ir::Node&, const kernels::KernelConfig&) -> std::unique_ptr<kernels::Kernel> { return nullptr; };
  if (!kernels::find_kernel("test.traits", "Dup")) kernels::register_kernel("test.traits", "Dup", f, "first.cc");
  try {
    kernels::register_kernel("test.traits", "Dup", f, "second.cc");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in first.cc and in second.cc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gec::ops
