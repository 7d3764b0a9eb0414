// The matmul_epilogue rule (MatMul / Gemm + bias + activation ->
// com.graphengine::FusedMatMul with oneDNN's bias argument and eltwise
// post-op): Before / Expected, outputs within 1e-5 of the unfused graph for
// every activation, and one negative case per guard.
#include <gtest/gtest.h>

#include "passes/rewrite_rules.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

TEST(MatMulEpilogue, BatchedMatMulBiasReluAsText) {
  auto pass = make_matmul_epilogue_fusion();
  auto g = expect_rewrite(*pass, R"(graph {
  input %a: float32[2,3,4]
  const %w: float32[4,2] = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5]
  const %b: float32[2] = [0.1, -0.2]
  %m = MatMul(%a, %w) : float32[2,3,2] @mm
  %s = Add(%b, %m) : float32[2,3,2] @bias
  %y = Relu(%s) : float32[2,3,2] @act
  output %y
})", R"(graph {
  input %a: float32[2,3,4]
  const %w: float32[4,2] = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5]
  const %b: float32[2] = [0.1, -0.2]
  %y = com.graphengine::FusedMatMul(%a, %w, %b) {activation = "Relu"} : float32[2,3,2]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "FusedMatMul")->fused_from, (std::vector<std::string>{"mm", "bias", "act"}));
}

// Each activation, with and without a bias, on a Gemm and a MatMul.
TEST(MatMulEpilogue, EveryActivationMatchesUnfused) {
  const std::string w = "  const %w: float32[3,4] = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5, 0.3, 0.6, -0.9, 1.2]\n"
                        "  const %b: float32[4] = [0.1, -0.2, 0.3, -0.4]\n";
  for (const std::string act : {"Relu(%s)", "Tanh(%s)", "Sigmoid(%s)", "com.graphengine::Gelu(%s) {approximate = \"none\"}",
                                "com.graphengine::Gelu(%s) {approximate = \"tanh\"}",
                                "com.graphengine::Swish(%s) {alpha = 1.0}"}) {
    SCOPED_TRACE(act);
    auto pass = make_matmul_epilogue_fusion();
    auto g = expect_rewrite(*pass, "graph {\n  input %a: float32[5,3]\n" + w +
                                       "  %s = Gemm(%a, %w, %b) : float32[5,4]\n  %y = " + act +
                                       " : float32[5,4]\n  output %y\n}",
                            "graph {\n  input %a: float32[5,3]\n" + w +
                                "  %y = com.graphengine::FusedMatMul(%a, %w, %b) {activation = \"" +
                                (act[0] == 'R' ? "Relu" : act[0] == 'T' ? "Tanh" : act[0] == 'S' ? "Sigmoid"
                                 : act.find("Swish") != std::string::npos ? "Swish"
                                 : act.find("tanh") != std::string::npos ? "GeluTanh" : "Gelu") +
                                "\"} : float32[5,4]\n  output %y\n}",
                            1);
  }
  auto pass = make_matmul_epilogue_fusion();
  expect_rewrite(*pass, "graph {\n  input %a: float32[2,5,3]\n" + w +
                            "  %m = MatMul(%a, %w) : float32[2,5,4]\n  %y = Sigmoid(%m) : float32[2,5,4]\n  output %y\n}",
                 "graph {\n  input %a: float32[2,5,3]\n" + w +
                     "  %y = com.graphengine::FusedMatMul(%a, %w) {activation = \"Sigmoid\"} : float32[2,5,4]\n"
                     "  output %y\n}",
                 1);
}

// LLaMA-style SiLU after a projection, spelled out: transformer_fusion makes
// it a Swish, matmul_epilogue_fusion takes it. A Swish with another alpha
// stays a node of its own (the epilogue's Swish is alpha 1).
TEST(MatMulEpilogue, SpelledOutSiluBecomesTheEpilogue) {
  const std::string w = "  const %w: float32[3,4] = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5, 0.3, 0.6, -0.9, 1.2]\n";
  auto g = ir::parse_graph("graph {\n  input %a: float32[2,5,3]\n" + w +
                           "  %m = MatMul(%a, %w) : float32[2,5,4]\n  %s = Sigmoid(%m) : float32[2,5,4]\n"
                           "  %y = Mul(%m, %s) : float32[2,5,4]\n  output %y\n}");
  std::map<std::string, Tensor> feeds{{"a", ramp_for(g->inputs()[0])}};
  const std::vector<Tensor> want = run_graph(*g, feeds);
  EXPECT_EQ(make_transformer_fusion()->run(*g), 1);
  EXPECT_EQ(make_matmul_epilogue_fusion()->run(*g), 1);
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"FusedMatMul"}));
  EXPECT_EQ(only_node(*g, "FusedMatMul")->get_string("activation", ""), "Swish");
  gec::testing::expect_close(gec::testing::values<float>(run_graph(*g, feeds)[0]),
                             gec::testing::values<float>(want[0]), 1e-5f, 1e-5f);
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, "graph {\n  input %a: float32[5,3]\n" + w +
                              "  %m = MatMul(%a, %w) : float32[5,4]\n"
                              "  %y = com.graphengine::Swish(%m) {alpha = 1.5} : float32[5,4]\n  output %y\n}");
}

// ---- guards ------------------------------------------------------------------------

TEST(MatMulEpilogueGuards, BiasThatIsNotOneDimensional) {
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, R"(graph {
  input %a: float32[2,3,4]
  input %w: float32[4,2]
  input %b: float32[3,2]
  %m = MatMul(%a, %w) : float32[2,3,2]
  %y = Add(%m, %b) : float32[2,3,2]
  output %y
})");
}

TEST(MatMulEpilogueGuards, BatchedB) {
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, R"(graph {
  input %a: float32[2,3,4]
  input %w: float32[2,4,2]
  %m = MatMul(%a, %w) : float32[2,3,2]
  %y = Relu(%m) : float32[2,3,2]
  output %y
})");
}

TEST(MatMulEpilogueGuards, GemmWithTransposeOrScale) {
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, R"(graph {
  input %a: float32[3,4]
  input %w: float32[2,4]
  %m = Gemm(%a, %w) {transB = 1} : float32[3,2]
  %y = Relu(%m) : float32[3,2]
  output %y
})");
  expect_unchanged(*pass, R"(graph {
  input %a: float32[3,4]
  input %w: float32[4,2]
  %m = Gemm(%a, %w) {alpha = 0.5} : float32[3,2]
  %y = Relu(%m) : float32[3,2]
  output %y
})");
}

TEST(MatMulEpilogueGuards, ProductReadTwice) {
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, R"(graph {
  input %a: float32[2,3,4]
  input %w: float32[4,2]
  %m = MatMul(%a, %w) : float32[2,3,2]
  %r = Relu(%m) : float32[2,3,2]
  %y = Add(%r, %m) : float32[2,3,2]
  output %y
})");
}

TEST(MatMulEpilogueGuards, NothingToFuse) {
  auto pass = make_matmul_epilogue_fusion();
  expect_unchanged(*pass, R"(graph {
  input %a: float32[2,3,4]
  input %w: float32[4,2]
  %m = MatMul(%a, %w) : float32[2,3,2]
  %y = Neg(%m) : float32[2,3,2]
  output %y
})");
}

}  // namespace
}  // namespace gec::passes
