// The transformer_fusion rule `attention` (MatMul -> scale -> mask ->
// Softmax -> MatMul as one com.graphengine::ScaledDotProductAttention) and
// the operand-view rules that fold the heads' Transposes into it:
// Before / Expected, each guard, and the blocked kernel against the unfused
// ops on odd sizes (tails of every loop), masks of each kind and
// broadcasting, and fully masked rows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/kernel.h"
#include "ops/domain.h"
#include "passes/rewrite_rules.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

std::unique_ptr<Pass> attention_only() {
  std::vector<RewriteRule> rules;
  for (auto& r : transformer_fusion_rules())
    if (r.name == "attention") rules.push_back(r);
  return make_rule_pass("attention", rules);
}

/// The attention rule and the operand-view rules (attention_views,
/// attention_output_view) that fold the heads' Transposes and Q's scale.
std::unique_ptr<Pass> attention_with_views() {
  std::vector<RewriteRule> rules;
  for (auto& r : transformer_fusion_rules())
    if (r.name == "attention" || r.name == "attention_views" || r.name == "attention_output_view")
      rules.push_back(r);
  return make_rule_pass("attention_views", rules);
}

Tensor wave(const ir::Value* v, float phase) {
  Tensor t(v->type.dtype, v->type.static_shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float x = 1.5f * std::sin(0.61f * static_cast<float>(i) + phase);
    if (v->type.dtype == DType::kBool) t.as<uint8_t>()[i] = x > 0.9f;
    else t.as<float>()[i] = x;
  }
  return t;
}

/// Runs `text` unfused and after the rule (with `views`, the operand-view
/// rules too); expects `fused` attention nodes and outputs within 1e-5
/// (relative and absolute: the sums run in another order), NaN where the
/// unfused graph gives NaN. The rewritten graph goes to *rewritten when
/// given, for the caller's checks of its nodes.
void compare(const std::string& text, size_t fused, bool views = false,
             std::unique_ptr<ir::Graph>* rewritten = nullptr) {
  std::unique_ptr<ir::Graph> owned = ir::parse_graph(text);
  ir::Graph* g = owned.get();
  if (rewritten) *rewritten = std::move(owned);
  std::map<std::string, Tensor> feeds;
  float phase = 0.2f;
  for (const ir::Value* v : g->inputs()) feeds[v->name()] = wave(v, phase += 0.8f);
  const std::vector<Tensor> want = run_graph(*g, feeds);
  auto pass = views ? attention_with_views() : attention_only();
  pass->run(*g);
  g->verify();
  size_t n = 0;
  for (const auto& node : g->nodes()) n += node->op_type == "ScaledDotProductAttention";
  EXPECT_EQ(n, fused) << ir::print_graph(*g);
  const std::vector<Tensor> got = run_graph(*g, feeds);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    const auto a = values<float>(got[i]), b = values<float>(want[i]);
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isnan(b[k])) {
        EXPECT_TRUE(std::isnan(a[k])) << k;
        continue;
      }
      EXPECT_NEAR(a[k], b[k], 1e-5 + 1e-5 * std::fabs(b[k])) << "output " << i << " element " << k;
    }
  }
}

std::string attention_graph(const std::string& q, const std::string& kt, const std::string& v, const std::string& s,
                            const std::string& o, const std::string& extra_inputs, const std::string& body) {
  return "graph {\n  input %q: float32" + q + "\n  input %kt: float32" + kt + "\n  input %v: float32" + v + "\n" +
         extra_inputs + "  %s = MatMul(%q, %kt) : float32" + s + "\n" + body + "  %y = MatMul(%p, %v) : float32" + o +
         "\n  output %y\n}";
}

TEST(AttentionRule, AdditiveMaskFormAsText) {
  auto pass = attention_only();
  auto g = expect_rewrite(*pass, R"(graph {
  input %q: float32[2,3,8,4]
  input %kt: float32[2,3,4,8]
  input %v: float32[2,3,8,5]
  input %m: float32[8,8]
  const %c: float32[] = [0.5]
  %s = MatMul(%q, %kt) : float32[2,3,8,8]
  %sc = Mul(%c, %s) : float32[2,3,8,8]
  %a = Add(%sc, %m) : float32[2,3,8,8]
  %p = Softmax(%a) {axis = -1} : float32[2,3,8,8]
  %y = MatMul(%p, %v) : float32[2,3,8,5]
  output %y
})", R"(graph {
  input %q: float32[2,3,8,4]
  input %kt: float32[2,3,4,8]
  input %v: float32[2,3,8,5]
  input %m: float32[8,8]
  %y = com.graphengine::ScaledDotProductAttention(%q, %kt, %v, %m) {mask_kind = "additive", scale = 0.5} : float32[2,3,8,5]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "ScaledDotProductAttention")->fused_from.size(), 5u);
}

// PyTorch's masked_fill: Where(mask, -1e30, scores) on a mask broadcast over
// batch and heads.
TEST(AttentionRule, MaskedFillMatchesUnfused) {
  compare(attention_graph("[2,3,8,4]", "[2,3,4,8]", "[2,3,8,5]", "[2,3,8,8]", "[2,3,8,5]",
                          "  input %m: bool[8,8]\n  const %c: float32[] = [0.5]\n  const %f: float32[] = [-1e30]\n",
                          "  %sc = Mul(%s, %c) : float32[2,3,8,8]\n  %w = Where(%m, %f, %sc) : float32[2,3,8,8]\n"
                          "  %p = Softmax(%w) {axis = -1} : float32[2,3,8,8]\n"),
          1);
}

// Odd sizes (S = 37, T = 45, D = 7, Dv = 5: no loop runs whole vectors
// only), an additive mask broadcast over heads, Div as the scale.
TEST(AttentionRule, AdditiveMaskOddSizesMatchUnfused) {
  compare(attention_graph("[2,2,37,7]", "[2,2,7,45]", "[2,2,45,5]", "[2,2,37,45]", "[2,2,37,5]",
                          "  input %m: float32[2,1,37,45]\n  const %c: float32[] = [2.6457513]\n",
                          "  %sc = Div(%s, %c) : float32[2,2,37,45]\n  %a = Add(%sc, %m) : float32[2,2,37,45]\n"
                          "  %p = Softmax(%a) {axis = 3} : float32[2,2,37,45]\n"),
          1);
}

// No scale, no mask, rank 3; a long key axis (T = 300 spans many vectors).
TEST(AttentionRule, PlainSoftmaxRank3) {
  compare(attention_graph("[3,65,16]", "[3,16,300]", "[3,300,24]", "[3,65,300]", "[3,65,24]", "",
                          "  %p = Softmax(%s) {axis = -1} : float32[3,65,300]\n"),
          1);
}

// The register tiles' every path (attention_simd.cc): S = 71 (blocks of
// 32, 32 and 7 rows: row groups of 4, then 2 and 1 on AVX-512; of 6, then
// 2 and 1 on AVX2), T = 313 (4-, 2- and 1-vector column tiles and a
// tail short of a vector on AVX-512: 256 + 32 + 16 + 9; on AVX2 6 x 2
// tiles, 1-vector ones and a tail: 304 + 8 + 1), Dv = 121 (the same along
// Dv: 64 + 32 + 16 + 9, and 112 + 8 + 1; the tail accumulated over five key
// chunks of V, 67 keys each, then 45), D = 64 as in BERT and ViT heads.
TEST(AttentionRule, WideHeadsMatchUnfused) {
  compare(attention_graph("[2,71,64]", "[2,64,313]", "[2,313,121]", "[2,71,313]", "[2,71,121]",
                          "  const %c: float32[] = [0.125]\n",
                          "  %sc = Mul(%s, %c) : float32[2,71,313]\n"
                          "  %p = Softmax(%sc) {axis = -1} : float32[2,71,313]\n"),
          1);
}

// BERT's additive mask (1 - m) * -10000 added on the left: the Mul-made mask
// is tried as the scores first, then the other side matches.
TEST(AttentionRule, MaskMadeByAMulOnTheLeft) {
  compare(attention_graph("[2,2,6,4]", "[2,2,4,6]", "[2,2,6,3]", "[2,2,6,6]", "[2,2,6,3]",
                          "  input %m: float32[2,1,1,6]\n  const %one: float32[] = [1.0]\n"
                          "  const %big: float32[] = [-10000.0]\n  const %c: float32[] = [0.5]\n",
                          "  %inv = Sub(%one, %m) : float32[2,1,1,6]\n  %mk = Mul(%inv, %big) : float32[2,1,1,6]\n"
                          "  %sc = Mul(%s, %c) : float32[2,2,6,6]\n  %a = Add(%mk, %sc) : float32[2,2,6,6]\n"
                          "  %p = Softmax(%a) {axis = -1} : float32[2,2,6,6]\n"),
          1);
}

// A row whose every key is masked with -inf: NaN, as the unfused Softmax.
TEST(AttentionRule, FullyMaskedRowsGiveNaNLikeSoftmax) {
  compare(attention_graph("[1,6,4]", "[1,4,6]", "[1,6,3]", "[1,6,6]", "[1,6,3]",
                          "  input %m: bool[6,1]\n  const %ninf: float32[] = [-inf]\n",
                          "  %w = Where(%m, %ninf, %s) : float32[1,6,6]\n  %p = Softmax(%w) {axis = -1} : float32[1,6,6]\n"),
          1);
}

// A NaN in Q: the unfused Softmax gives NaN for that row; so must the kernel
// (Highway's exp maps NaN to 0, which would drop it silently).
TEST(AttentionRule, NaNScoresPropagate) {
  auto g = ir::parse_graph(attention_graph("[1,5,4]", "[1,4,6]", "[1,6,3]", "[1,5,6]", "[1,5,3]", "",
                                           "  %p = Softmax(%s) {axis = -1} : float32[1,5,6]\n"));
  std::map<std::string, Tensor> feeds;
  float phase = 0.f;
  for (const ir::Value* v : g->inputs()) feeds[v->name()] = wave(v, phase += 0.8f);
  feeds["q"].as<float>()[2 * 4 + 1] = std::numeric_limits<float>::quiet_NaN();  // row 2
  // Row 3: scores of +inf (and -inf): exp(inf - inf) is NaN in the unfused Softmax.
  feeds["q"].as<float>()[3 * 4 + 1] = std::numeric_limits<float>::infinity();
  const std::vector<float> unfused = values<float>(run_graph(*g, feeds)[0]);
  attention_only()->run(*g);
  const std::vector<float> y = values<float>(run_graph(*g, feeds)[0]);
  for (int r = 0; r < 5; ++r)
    for (int e = 0; e < 3; ++e) {
      EXPECT_EQ(std::isnan(y[r * 3 + e]), r == 2 || r == 3) << r << "," << e;
      EXPECT_EQ(std::isnan(unfused[r * 3 + e]), r == 2 || r == 3) << r << "," << e;
    }
}

// The fused softmax's exponential (attention_simd.cc ExpNonPositive, a
// polynomial for x <= 0 that gives 0 below -87) against double precision:
// one query row whose scores run evenly over [-90, 0] across 512 keys
// (q = 1, K^T the scores, V the identity: the output row is the
// probabilities). Each within 1e-6 relative where it is a normal float
// (float32 rounding of the polynomial, the sum and the division), within
// 2e-38 absolute where the exponential underflows.
TEST(AttentionRule, SoftmaxOverWideScoresMatchesDoublePrecision) {
  const int T = 512;
  auto g = ir::parse_graph(attention_graph("[1,1]", "[1,512]", "[512,512]", "[1,512]", "[1,512]", "",
                                           "  %p = Softmax(%s) {axis = -1} : float32[1,512]\n"));
  std::map<std::string, Tensor> feeds;
  feeds["q"] = gec::testing::make<float>({1, 1}, {1.f});
  std::vector<float> scores(T), eye(static_cast<size_t>(T) * T, 0.f);
  for (int t = 0; t < T; ++t) {
    scores[t] = -90.f * static_cast<float>(t) / (T - 1);
    eye[static_cast<size_t>(t) * T + t] = 1.f;
  }
  feeds["kt"] = gec::testing::make<float>({1, T}, scores);
  feeds["v"] = gec::testing::make<float>({T, T}, eye);
  attention_only()->run(*g);
  size_t n = 0;
  for (const auto& node : g->nodes()) n += node->op_type == "ScaledDotProductAttention";
  ASSERT_EQ(n, 1u);
  const std::vector<float> p = values<float>(run_graph(*g, feeds)[0]);
  double sum = 0;
  for (int t = 0; t < T; ++t) sum += std::exp(static_cast<double>(scores[t]));
  for (int t = 0; t < T; ++t) {
    const double want = std::exp(static_cast<double>(scores[t])) / sum;
    if (want >= std::numeric_limits<float>::min())
      EXPECT_NEAR(p[t], want, 1e-6 * want) << "score " << scores[t];
    else
      EXPECT_NEAR(p[t], want, 2e-38) << "score " << scores[t];
  }
}

// ---- guards ------------------------------------------------------------------------

// A mask that broadcasts the scores up ([1,1,8,8] + [1,2,8,8]): not this
// pattern (the fused node would compute one head's scores only).
TEST(AttentionRuleGuards, MaskThatBroadcastsTheScoresUp) {
  compare(attention_graph("[1,1,8,4]", "[1,1,4,8]", "[1,1,8,5]", "[1,1,8,8]", "[1,2,8,5]", "  input %m: float32[1,2,8,8]\n",
                          "  %a = Add(%s, %m) : float32[1,2,8,8]\n  %p = Softmax(%a) {axis = -1} : float32[1,2,8,8]\n"),
          0);
}


TEST(AttentionRuleGuards, SoftmaxNotOverTheLastAxis) {
  compare(attention_graph("[2,4,4]", "[2,4,4]", "[2,4,4]", "[2,4,4]", "[2,4,4]", "",
                          "  %p = Softmax(%s) {axis = 1} : float32[2,4,4]\n"),
          0);
}

TEST(AttentionRuleGuards, BatchDimsThatBroadcast) {
  compare(attention_graph("[2,4,3]", "[1,3,4]", "[2,4,5]", "[2,4,4]", "[2,4,5]", "",
                          "  %p = Softmax(%s) {axis = -1} : float32[2,4,4]\n"),
          0);
}

TEST(AttentionRuleGuards, ScaleThatIsNotAConstant) {
  compare(attention_graph("[2,4,3]", "[2,3,4]", "[2,4,5]", "[2,4,4]", "[2,4,5]", "  input %c: float32[1]\n",
                          "  %sc = Mul(%s, %c) : float32[2,4,4]\n  %p = Softmax(%sc) {axis = -1} : float32[2,4,4]\n"),
          0);
}

// Where(m, scores, fill) keeps the scores where m is true: the kernel's
// boolean mask fills where it is true, so this form is left alone.
TEST(AttentionRuleGuards, WhereThatKeepsTheScoresWhereTrue) {
  compare(attention_graph("[2,4,3]", "[2,3,4]", "[2,4,5]", "[2,4,4]", "[2,4,5]",
                          "  input %m: bool[4,4]\n  const %f: float32[] = [-1e9]\n",
                          "  %w = Where(%m, %s, %f) : float32[2,4,4]\n  %p = Softmax(%w) {axis = -1} : float32[2,4,4]\n"),
          0);
}

TEST(AttentionRuleGuards, FillThatIsNotAConstant) {
  compare(attention_graph("[2,4,3]", "[2,3,4]", "[2,4,5]", "[2,4,4]", "[2,4,5]",
                          "  input %m: bool[4,4]\n  input %f: float32[]\n",
                          "  %w = Where(%m, %f, %s) : float32[2,4,4]\n  %p = Softmax(%w) {axis = -1} : float32[2,4,4]\n"),
          0);
}

// The scores are also read elsewhere (a graph output): the driver's guard.
TEST(AttentionRuleGuards, ScoresReadOutsideThePattern) {
  auto pass = attention_only();
  expect_unchanged(*pass, R"(graph {
  input %q: float32[2,4,3]
  input %kt: float32[2,3,4]
  input %v: float32[2,4,5]
  %s = MatMul(%q, %kt) : float32[2,4,4]
  %p = Softmax(%s) {axis = -1} : float32[2,4,4]
  %y = MatMul(%p, %v) : float32[2,4,5]
  output %y
  output %s
})");
}

// ---- the fused ops' own checks (what a crafted .gom reaches) ---------------------

TEST(FusedOpsInfer, BadAttributesAndShapesAreRefused) {
  const Tensor q = make<float>({1, 2, 3}, std::vector<float>(6, 0.5f));
  const Tensor kt = make<float>({1, 3, 4}, std::vector<float>(12, 0.25f));
  const Tensor v = make<float>({1, 4, 2}, std::vector<float>(8, 1.f));
  auto sdpa = [&](std::vector<Tensor> in, std::vector<ir::Attribute> a) {
    return run_op("ScaledDotProductAttention", in, a, 1, ops::kGecDomain);
  };
  EXPECT_EQ(values<float>(sdpa({q, kt, v}, {})[0]), std::vector<float>(4, 1.f)) << "uniform weights over V's rows of 1";
  expect_error([&] { sdpa({q, kt, v}, {ir::Attribute::String("mask_kind", "causal")}); }, ErrorCode::kInvalidModel,
               "mask_kind must be none, additive or boolean");
  expect_error([&] { sdpa({q, kt, v}, {ir::Attribute::String("mask_kind", "additive")}); }, ErrorCode::kInvalidModel,
               "needs input 3");
  expect_error([&] { sdpa({q, kt, v, make<float>({3, 4}, std::vector<float>(12, 0.f))}, {ir::Attribute::String("mask_kind", "additive")}); },
               ErrorCode::kInvalidModel, "cannot be broadcast");
  expect_error([&] { sdpa({q, kt, v, make<float>({2, 4}, std::vector<float>(8, 0.f))}, {ir::Attribute::String("mask_kind", "boolean")}); },
               ErrorCode::kInvalidModel, "a boolean mask must be bool");
  expect_error([&] { sdpa({q, make<float>({1, 2, 4}, std::vector<float>(8, 0.f)), v}, {}); }, ErrorCode::kInvalidModel,
               "Kt is not [..., D, T]");

  const Tensor a = make<float>({2, 3}, std::vector<float>(6, 1.f));
  const Tensor w = make<float>({3, 2}, std::vector<float>(6, 1.f));
  auto fmm = [&](std::vector<Tensor> in, std::vector<ir::Attribute> at) {
    return run_op("FusedMatMul", in, at, 1, ops::kGecDomain);
  };
  EXPECT_EQ(values<float>(fmm({a, w, make<float>({2}, {-4.f, 1.f})}, {ir::Attribute::String("activation", "Relu")})[0]),
            (std::vector<float>{0.f, 4.f, 0.f, 4.f}));
  expect_error([&] { fmm({a, w}, {ir::Attribute::String("activation", "Mish")}); }, ErrorCode::kInvalidModel,
               "activation 'Mish' is not one of");
  expect_error([&] { fmm({a, w, make<float>({3}, {1.f, 2.f, 3.f})}, {}); }, ErrorCode::kInvalidModel, "bias must be [2]");
  expect_error([&] { fmm({a, make<float>({1, 3, 2}, std::vector<float>(6, 1.f))}, {}); }, ErrorCode::kInvalidModel,
               "B rank 2");

  const Tensor x = make<float>({2, 4}, std::vector<float>(8, 1.f));
  const Tensor g = make<float>({4}, std::vector<float>(4, 1.f));
  auto sln = [&](std::vector<Tensor> in) { return run_op("SkipLayerNormalization", in, {}, 1, ops::kGecDomain); };
  expect_error([&] { sln({x, make<float>({1, 4}, std::vector<float>(4, 1.f)), g}); }, ErrorCode::kInvalidModel,
               "X and Skip must be float32 of one shape");
  expect_error([&] { sln({x, x, make<float>({3}, std::vector<float>(3, 1.f))}); }, ErrorCode::kInvalidModel,
               "does not broadcast to the normalized shape");
  expect_error([&] { sln({x, x}); }, ErrorCode::kInvalidModel, "needs X, Skip and Scale");
}

// PyTorch's nn.MultiheadAttention at batch 1: Q and V as [S, H, D] heads
// transposed to [H, S, D], Q divided by sqrt(D) after the transpose, the
// output transposed back. The view rules leave no Transpose or Div: the
// node reads Q and V and writes its output through q_perm, v_perm and
// out_perm, with the divisor in its scale; outputs as the unfused graph's.
TEST(AttentionViews, TorchHeadsFoldIntoTheNode) {
  const std::string text = R"(graph {
  input %q0: float32[5,2,4]
  input %kt: float32[2,4,6]
  input %v0: float32[6,2,3]
  const %c: float32[] = [2.0]
  %q1 = Transpose(%q0) {perm = [1, 0, 2]} : float32[2,5,4]
  %q = Div(%q1, %c) : float32[2,5,4]
  %v = Transpose(%v0) {perm = [1, 0, 2]} : float32[2,6,3]
  %s = MatMul(%q, %kt) : float32[2,5,6]
  %p = Softmax(%s) {axis = -1} : float32[2,5,6]
  %o = MatMul(%p, %v) : float32[2,5,3]
  %y = Transpose(%o) {perm = [1, 0, 2]} : float32[5,2,3]
  output %y
})";
  std::unique_ptr<ir::Graph> g;
  compare(text, 1, true, &g);
  ASSERT_TRUE(g);
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"ScaledDotProductAttention"}));
  const ir::Node* a = only_node(*g, "ScaledDotProductAttention");
  EXPECT_EQ(a->get_ints("q_perm"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(a->get_ints("v_perm"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(a->get_ints("out_perm"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_FLOAT_EQ(a->get_float("scale", 0.f), 0.5f);
  EXPECT_EQ(a->output(0)->type.static_shape(), (Shape{5, 2, 3}));
}

// Hugging Face's [B, S, H, D] -> [B, H, S, D] heads (perm [0, 2, 1, 3]) with
// an additive mask, batch 2, and a Mul scale on the left.
TEST(AttentionViews, FourDimensionalHeadsWithAMask) {
  const std::string text = R"(graph {
  input %q0: float32[2,5,3,4]
  input %kt: float32[2,3,4,7]
  input %v0: float32[2,7,3,6]
  input %m: float32[2,1,1,7]
  const %c: float32[] = [0.5]
  %q1 = Transpose(%q0) {perm = [0, 2, 1, 3]} : float32[2,3,5,4]
  %q = Mul(%c, %q1) : float32[2,3,5,4]
  %v = Transpose(%v0) {perm = [0, 2, 1, 3]} : float32[2,3,7,6]
  %s = MatMul(%q, %kt) : float32[2,3,5,7]
  %a = Add(%s, %m) : float32[2,3,5,7]
  %p = Softmax(%a) {axis = -1} : float32[2,3,5,7]
  %o = MatMul(%p, %v) : float32[2,3,5,6]
  %y = Transpose(%o) {perm = [0, 2, 1, 3]} : float32[2,5,3,6]
  output %y
})";
  std::unique_ptr<ir::Graph> g;
  compare(text, 1, true, &g);
  ASSERT_TRUE(g);
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"ScaledDotProductAttention"}));
  EXPECT_EQ(only_node(*g, "ScaledDotProductAttention")->get_ints("out_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
}

// Perms that are not their own inverse (a 3-cycle of the leading axes on
// Q, two stacked Transposes on V that compose into one view, an output
// perm that is a 3-cycle too), so a composition in the wrong order or an
// inverse taken for the perm would give other numbers.
TEST(AttentionViews, CyclicPermsComposeInTheRightOrder) {
  const std::string text = R"(graph {
  input %q0: float32[3,4,2,5]
  input %kt: float32[2,3,5,6]
  input %v0: float32[3,6,2,7]
  %q = Transpose(%q0) {perm = [2, 0, 1, 3]} : float32[2,3,4,5]
  %v1 = Transpose(%v0) {perm = [1, 0, 2, 3]} : float32[6,3,2,7]
  %v = Transpose(%v1) {perm = [2, 1, 0, 3]} : float32[2,3,6,7]
  %s = MatMul(%q, %kt) : float32[2,3,4,6]
  %p = Softmax(%s) {axis = -1} : float32[2,3,4,6]
  %o = MatMul(%p, %v) : float32[2,3,4,7]
  %y = Transpose(%o) {perm = [1, 2, 0, 3]} : float32[3,4,2,7]
  output %y
})";
  std::unique_ptr<ir::Graph> g;
  compare(text, 1, true, &g);
  ASSERT_TRUE(g);
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"ScaledDotProductAttention"}));
  const ir::Node* a = only_node(*g, "ScaledDotProductAttention");
  EXPECT_EQ(a->get_ints("q_perm"), (std::vector<int64_t>{2, 0, 1, 3}));
  EXPECT_EQ(a->get_ints("v_perm"), (std::vector<int64_t>{2, 0, 1, 3}));  // [1,0,2,3] then [2,1,0,3]
  EXPECT_EQ(a->get_ints("out_perm"), (std::vector<int64_t>{1, 2, 0, 3}));
}

// Guards: a Transpose that moves the last axis (Q's rows would not be
// contiguous), a Q transpose another node reads too, and an output the
// graph returns besides the Transpose stay; outputs still match.
TEST(AttentionViews, GuardsKeepTheTransposes) {
  const std::string text = R"(graph {
  input %q0: float32[2,4,5]
  input %kt: float32[2,4,6]
  input %v0: float32[6,2,3]
  %q = Transpose(%q0) {perm = [0, 2, 1]} : float32[2,5,4]
  %v = Transpose(%v0) {perm = [1, 0, 2]} : float32[2,6,3]
  %s = MatMul(%q, %kt) : float32[2,5,6]
  %p = Softmax(%s) {axis = -1} : float32[2,5,6]
  %o = MatMul(%p, %v) : float32[2,5,3]
  %y = Transpose(%o) {perm = [1, 0, 2]} : float32[5,2,3]
  %r = Relu(%v) : float32[2,6,3]
  output %y
  output %o
  output %r
})";
  std::unique_ptr<ir::Graph> g;
  compare(text, 1, true, &g);
  ASSERT_TRUE(g);
  const ir::Node* a = only_node(*g, "ScaledDotProductAttention");
  EXPECT_FALSE(a->has_attr("q_perm"));
  EXPECT_FALSE(a->has_attr("v_perm"));
  EXPECT_FALSE(a->has_attr("out_perm"));
  size_t transposes = 0;
  for (const auto& n : g->nodes()) transposes += n->op_type == "Transpose";
  EXPECT_EQ(transposes, 3u);
}

// A perm attribute that is not a permutation keeping the last axis last
// (a hostile or corrupt model) is an error naming the attribute, at shape
// inference and in the kernel, not a read outside Q.
TEST(AttentionViews, BadPermsAreRefused) {
  for (const char* perm : {"[2, 1, 0]", "[1, 1, 2]", "[1, 0]", "[0, 1, 3]"}) {
    const std::string text = std::string(R"(graph {
  input %q: float32[2,5,4]
  input %kt: float32[2,4,6]
  input %v: float32[2,6,3]
  %y = com.graphengine::ScaledDotProductAttention(%q, %kt, %v) {q_perm = )") +
                             perm + R"(, scale = 1.0} : float32[2,5,3]
  output %y
})";
    auto g = ir::parse_graph(text);
    try {
      infer_static_shapes(*g);
      ADD_FAILURE() << "q_perm " << perm << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("q_perm"), std::string::npos) << e.what();
    }
    std::map<std::string, Tensor> feeds;
    for (const ir::Value* v : g->inputs()) feeds[v->name()] = wave(v, 0.3f);
    try {
      run_graph(*g, feeds);
      ADD_FAILURE() << "the kernel ran q_perm " << perm;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("q_perm"), std::string::npos) << e.what();
    }
  }
}

// The kernel's own checks (a plan from a .gom reaches it without this
// build's shape inference having made its types): a bad v_perm or out_perm,
// and an output shape the views do not give, are errors naming the node;
// an empty output allocates nothing per batch (Q [2^32, 0, 4]).
TEST(AttentionViews, KernelRefusesViewsThatDoNotFit) {
  const auto run = [](const std::vector<ir::Attribute>& attrs, const Shape& qs, const Shape& ks, const Shape& vs,
                      const Shape& ys) {
    ir::Graph g;
    ir::Node* n = g.add_node("ScaledDotProductAttention",
                             {g.add_value("q", ir::TensorType::of(DType::kFloat32, qs)),
                              g.add_value("kt", ir::TensorType::of(DType::kFloat32, ks)),
                              g.add_value("v", ir::TensorType::of(DType::kFloat32, vs))},
                             {"y"}, "att", ops::kGecDomain);
    n->attrs = attrs;
    n->output(0)->type = ir::TensorType::of(DType::kFloat32, ys);
    auto k = kernels::create_kernel(*n, kernels::KernelConfig::for_node(*n));
    std::vector<float> buf(4096, 0.5f), out(4096, 0.f);
    const auto view = [](std::vector<float>& b, const Shape& s) { return TensorView{b.data(), DType::kFloat32, s}; };
    TensorView q = view(buf, qs), kt = view(buf, ks), v = view(buf, vs), y = view(out, ys);
    kernels::KernelContext ctx;
    ctx.node = n;
    ctx.inputs = {&q, &kt, &v};
    ctx.outputs = {&y};
    k->reshape(ctx);
    k->run(ctx);
  };
  const auto refused = [&](const std::vector<ir::Attribute>& attrs, const Shape& qs, const Shape& vs,
                           const Shape& ys, const char* want) {
    try {
      run(attrs, qs, {2, 4, 6}, vs, ys);
      ADD_FAILURE() << "accepted; wanted an error about " << want;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("att"), std::string::npos) << e.what();
    }
  };
  refused({ir::Attribute::Ints("v_perm", {2, 1, 0})}, {2, 5, 4}, {2, 6, 3}, {2, 5, 3}, "v_perm");
  refused({ir::Attribute::Ints("out_perm", {0, 0, 2})}, {2, 5, 4}, {2, 6, 3}, {2, 5, 3}, "out_perm");
  refused({ir::Attribute::Ints("q_perm", {1, 0})}, {2, 5, 4}, {2, 6, 3}, {2, 5, 3}, "q_perm");
  // Views that fit their tensors but not each other or the output.
  refused({ir::Attribute::Ints("out_perm", {1, 0, 2})}, {2, 5, 4}, {2, 6, 3}, {2, 5, 3}, "do not fit");
  refused({ir::Attribute::Ints("q_perm", {1, 0, 2})}, {2, 5, 4}, {2, 6, 3}, {2, 5, 3}, "do not fit");
  refused({}, {2, 5, 4}, {2, 7, 3}, {2, 5, 3}, "do not fit");
  // The same views with fitting shapes run.
  EXPECT_NO_THROW(run({ir::Attribute::Ints("q_perm", {1, 0, 2}), ir::Attribute::Ints("out_perm", {1, 0, 2})},
                      {5, 2, 4}, {2, 4, 6}, {2, 6, 3}, {5, 2, 3}));
  const int64_t huge = int64_t{1} << 32;
  EXPECT_NO_THROW(run({}, {huge, 0, 4}, {huge, 4, 6}, {huge, 6, 3}, {huge, 0, 3}));
}

}  // namespace
}  // namespace gec::passes
