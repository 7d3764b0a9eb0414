// matmul_merge: projections of one input (Q, K, V) merged into one
// FusedMatMul and a Split; outputs within 1e-5 of the separate products;
// guards (different K, an activation, a non-constant weight, one projection).
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

const char* kWeights = R"(
  const %wq: float32[4,3] = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5, 0.3, 0.6, -0.9, 1.2]
  const %wk: float32[4,2] = [0.1, 0.2, 0.3, 0.4, -0.5, -0.6, 0.7, 0.8]
  const %wv: float32[4,3] = [1.0, 0.0, -1.0, 0.5, 0.5, 0.5, -0.25, 0.75, 0.125, 2.0, -2.0, 0.0]
  const %bq: float32[3] = [0.1, -0.2, 0.3]
  const %bv: float32[3] = [-0.1, 0.2, 0.05]
)";

TEST(MatMulMerge, QkvProjectionsBecomeOneProductAndASplit) {
  auto pass = make_matmul_merge();
  auto g = expect_rewrite(*pass, std::string("graph {\n  input %x: float32[2,5,4]") + kWeights + R"(
  %q = com.graphengine::FusedMatMul(%x, %wq, %bq) : float32[2,5,3] @q
  %k = MatMul(%x, %wk) : float32[2,5,2] @k
  %v = com.graphengine::FusedMatMul(%x, %wv, %bv) : float32[2,5,3] @v
  %qk = Concat(%q, %k) {axis = -1} : float32[2,5,5]
  %y = Concat(%qk, %v) {axis = -1} : float32[2,5,8]
  output %y
})", std::string("graph {\n  input %x: float32[2,5,4]") + R"(
  const %w: float32[4,8] = [0.5, -1.0, 0.25, 0.1, 0.2, 1.0, 0.0, -1.0, 2.0, -0.75, 1.5, 0.3, 0.4, 0.5, 0.5, 0.5, 1.0, -0.5, 0.3, -0.5, -0.6, -0.25, 0.75, 0.125, 0.6, -0.9, 1.2, 0.7, 0.8, 2.0, -2.0, 0.0]
  const %b: float32[8] = [0.1, -0.2, 0.3, 0.0, 0.0, -0.1, 0.2, 0.05]
  const %s: int64[3] = [3, 2, 3]
  %m = com.graphengine::FusedMatMul(%x, %w, %b) : float32[2,5,8]
  %q, %k, %v = Split(%m, %s) {axis = -1} : float32[2,5,3], float32[2,5,2], float32[2,5,3]
  %qk = Concat(%q, %k) {axis = -1} : float32[2,5,5]
  %y = Concat(%qk, %v) {axis = -1} : float32[2,5,8]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "FusedMatMul")->fused_from, (std::vector<std::string>{"q", "k", "v"}));
}

TEST(MatMulMergeGuards, NothingToMerge) {
  auto pass = make_matmul_merge();
  // One projection; an activation; a weight that is not constant.
  for (const std::string body : {
           "  %q = MatMul(%x, %wq) : float32[2,5,3]\n  %y = Neg(%q) : float32[2,5,3]\n  output %y\n",
           "  %q = com.graphengine::FusedMatMul(%x, %wq) {activation = \"Relu\"} : float32[2,5,3]\n"
           "  %v = MatMul(%x, %wv) : float32[2,5,3]\n  output %q\n  output %v\n",
           "  %q = MatMul(%x, %win) : float32[2,5,3]\n  %v = MatMul(%x, %wv) : float32[2,5,3]\n  output %q\n  output %v\n"}) {
    SCOPED_TRACE(body);
    expect_unchanged(*pass, std::string("graph {\n  input %x: float32[2,5,4]\n  input %win: float32[4,3]") + kWeights +
                                body + "}");
  }
  // More rows than merging pays for.
  expect_unchanged(*pass, std::string("graph {\n  input %x: float32[2,40,4]") + kWeights + R"(
  %q = MatMul(%x, %wq) : float32[2,40,3]
  %v = MatMul(%x, %wv) : float32[2,40,3]
  output %q
  output %v
})");
  // x read as B, not A.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[5,4]
  const %a: float32[2,5] = [0.1, 0.2, 0.3, 0.4, -0.5, -0.6, 0.7, 0.8, 1.0, 1.0]
  const %c: float32[1,5] = [0.1, 0.2, 0.3, 0.4, -0.5]
  %p = MatMul(%a, %x) : float32[2,4]
  %r = MatMul(%c, %x) : float32[1,4]
  output %p
  output %r
})");
}

}  // namespace
}  // namespace gec::passes
