// The textual IR (ir/text.h): print -> parse -> print is the identity, the
// canonical form ignores names, and bad text is a clear error with its line.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/text.h"
#include "test_util.h"

namespace gec::ir {
namespace {

using gec::testing::make;

const char* kEveryConstruct = R"(graph main {
  input %x: float32[N,3,?,4]
  input %s: seq(float32[?])
  const %k: int64[2] = [-1, 9000000000]
  const %W: float32[2,3] = [1.0, -2.5, 3.0, 9.31322575e-10, inf, -inf]
  %a, %b = Split(%x, _) {axis = 1, names = ["p", "q"], num = ints[], scales = [0.5, 1.0], split = [1, 2], t = tensor int32[2] = [3, 4]} : float32[N,1,?,4], float32[N,2,?,4] @split
  %c = com.graphengine::Gelu(%a) {approximate = "none"} : float32[N,1,?,4] @"gelu node"
  %d = If(%k) {else_branch = graph, then_branch = graph} : float32[*] @if
    graph else_body {
      %e = Identity(%W) : float32[2,3] @e
      output %e
    }
    graph then_body {
      %f = Neg(%c) : float32[N,1,?,4] @f
      output %f
    }
  output %c, %d, %b
}
)";

TEST(IrText, PrintParsePrintIsTheIdentity) {
  auto g = parse_graph(kEveryConstruct);
  EXPECT_EQ(print_graph(*g), kEveryConstruct);
  g->verify();
  EXPECT_EQ(g->inputs()[0]->type.dims[0].param, "N");
  EXPECT_FALSE(g->inputs()[0]->type.dims[2].is_static());
  EXPECT_EQ(g->inputs()[1]->type.kind, ValueKind::kSequence);
  const Node* split = g->nodes().front().get();
  EXPECT_EQ(split->inputs().size(), 2u);
  EXPECT_EQ(split->input(1), nullptr);
  EXPECT_EQ(split->get_ints("split"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(split->get_floats("scales"), (std::vector<float>{0.5f, 1.0f}));
  EXPECT_EQ(split->get_tensor("t")->as<int32_t>()[1], 4);
  const Value* w = g->find_value("W");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->constant->as<float>()[3], std::ldexp(1.f, -30));
  EXPECT_EQ(g->find_value("k")->constant->as<int64_t>()[1], 9000000000);
  const Node* gelu = std::next(g->nodes().begin())->get();
  EXPECT_EQ(gelu->domain, "com.graphengine");
  EXPECT_EQ(gelu->name, "gelu node");
  // The subgraph reads %c and %W of the outer graph.
  const Graph* then_body = g->nodes().back()->get_graph("then_branch");
  ASSERT_NE(then_body, nullptr);
  EXPECT_EQ(then_body->nodes().front()->input(0), g->find_value("c"));
}

TEST(IrText, CanonicalFormIgnoresNames) {
  auto a = parse_graph(R"(graph a {
    input %x: float32[4]
    const %one: float32[1] = [1.0]
    %y = Add(%x, %one) : float32[4] @add
    %z = Relu(%y) : float32[4] @relu
    output %z
  })");
  auto b = parse_graph(R"(graph other {
    input %in: float32[4]
    const %c: float32[1] = [1.0]
    %t = Add(%in, %c) : float32[4] @n1
    %out = Relu(%t) : float32[4] @n2
    output %out
  })");
  PrintOptions canon;
  canon.canonical = true;
  EXPECT_EQ(print_graph(*a, canon), print_graph(*b, canon));
  EXPECT_NE(print_graph(*a), print_graph(*b));
  auto c = parse_graph(R"(graph c {
    input %x: float32[4]
    const %one: float32[1] = [2.0]
    %y = Add(%x, %one) : float32[4]
    %z = Relu(%y) : float32[4]
    output %z
  })");
  EXPECT_NE(print_graph(*a, canon), print_graph(*c, canon));  // constant data differs
}

TEST(IrText, LargeConstantsAreElidedAndThenNotParsable) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DType::kFloat32, {100}));
  g.inputs().push_back(x);
  Value* c = g.add_constant("big", Tensor(DType::kFloat32, {100}));
  Node* n = g.add_node("Add", {x, c}, {"y"}, "add");
  n->output(0)->type = x->type;
  g.outputs().push_back(n->output(0));
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("const %big: float32[100] = ...\n"), std::string::npos) << text;
  PrintOptions all;
  all.max_elements = 1000;
  EXPECT_NO_THROW(parse_graph(print_graph(g, all)));
  try {
    parse_graph(text);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3: expected constant data"), std::string::npos) << e.what();
  }
}

void expect_parse_error(const std::string& text, const std::string& want) {
  try {
    parse_graph(text);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(IrText, BadTextIsAnErrorNamingTheLine) {
  expect_parse_error("graph g {\n  %y = Relu(%x) : float32[1]\n  output %y\n}", "line 2: expected a value defined earlier: %x");
  expect_parse_error("graph g {\n input %x: float32[1]\n input %x: float32[1]\n}", "line 3: expected a new value name: %x is defined twice");
  expect_parse_error("graph g {\n input %x: float17[1]\n}", "line 2: expected a dtype: 'float17' is not");
  expect_parse_error("graph g {\n const %c: int64[2] = [1]\n}", "line 2: expected 2 elements, not 1");
  expect_parse_error("graph g {\n input %x: float32[1]\n %y = Relu(%x : float32[1]\n}", "line 3: expected ','");
  expect_parse_error("graph g {\n input %x: float32[1]\n", "expected '}'");
  expect_parse_error("graph g { input %x: float32[1] } trailing", "the end of the text");
  expect_parse_error("graph g {\n  %a, %b = Split(%x) : float32[1]\n}", "line 2: expected a value defined earlier");
  // Numbers: out of the dtype's range, not integers, not numbers at all.
  expect_parse_error("graph g {\n const %c: int8[1] = [300]\n}", "line 2: expected an integer in [-128, 127], not '300'");
  expect_parse_error("graph g {\n const %c: uint8[1] = [-1]\n}", "line 2: expected an integer in [0, 255], not '-1'");
  expect_parse_error("graph g {\n const %c: int64[1] = [1.5]\n}", "not '1.5'");
  expect_parse_error("graph g {\n const %c: int64[1] = [99999999999999999999]\n}", "not '99999999999999999999'");
  expect_parse_error("graph g {\n const %c: float32[1] = [1e999]\n}", "expected a number, not '1e999'");
  expect_parse_error("graph g {\n input %x: float32[3abc]\n}", "not '3abc'");
  // Sizes are checked before anything is allocated.
  expect_parse_error("graph g {\n const %c: float32[17179869184] = []\n}", "line 2: expected 17179869184 elements, not 0");
  expect_parse_error("graph g {\n const %c: float32[4294967296,4294967296,4294967296] = []\n}", "a shape whose size fits");
  // Types nest only as optional(seq(...)); graphs at most 64 deep.
  expect_parse_error("graph g {\n input %x: seq(seq(float32[1]))\n}", "seq of a tensor type");
  EXPECT_EQ(parse_graph("graph g {\n input %x: optional(seq(float32[1]))\n output %x\n}")->inputs()[0]->type.kind,
            ValueKind::kOptionalSequence);
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "graph {\n input %c" + std::to_string(i) + ": bool[]\n %o" + std::to_string(i) + " = If(%c" + std::to_string(i) + ") {b = graph}\n";
  expect_parse_error(deep, "at most 64 nested graphs");
}

// Names as exporters make them (PyTorch: /layer1/conv/Conv) and values that
// hold subnormal floats survive a round trip.
TEST(IrText, ExporterNamesAndSubnormalsRoundTrip) {
  Graph g;
  Value* x = g.add_value("/input.1", TensorType::of(DType::kFloat32, {2}));
  g.inputs().push_back(x);
  Tensor t(DType::kFloat32, {2});
  t.as<float>()[0] = 1.40129846e-45f;  // the smallest subnormal
  t.as<float>()[1] = -0.f;
  Value* c = g.add_constant("_", std::move(t));
  Node* n = g.add_node("Add", {x, c}, {"/layer1/Add_output_0"}, "/layer1/Add");
  n->output(0)->type = x->type;
  n->set_attr(Attribute::Float("alpha", 1.17549435e-38f / 4));
  g.outputs().push_back(n->output(0));
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("@\"/layer1/Add\""), std::string::npos) << text;
  auto back = parse_graph(text);
  EXPECT_EQ(print_graph(*back), text);
  EXPECT_EQ(back->nodes().front()->name, "/layer1/Add");
  EXPECT_EQ(back->find_value("_")->constant->as<float>()[0], 1.40129846e-45f);
}

}  // namespace
}  // namespace gec::ir
