// Transformer path: the pass transformer_fusion (spelled-out GELU and
// LayerNorm -> Gelu / LayerNormalization; Before/Expected op lists, each
// guard, outputs of the graph unchanged within a stated tolerance), the
// com.graphengine::Gelu kernel against the ONNX Gelu-20 formula in double,
// and the MatMul kernel's folding of A's batch dims into M against a loop.
#include <algorithm>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kernels_nn_util.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

ir::Value* scalar(ir::Graph& g, float v) { return g.add_constant(g.unique_name("c"), make<float>({}, {v})); }

ir::Value* op(ir::Graph& g, const std::string& type, const std::vector<ir::Value*>& ins) {
  return g.add_node(type, ins, {g.unique_name(type)}, g.unique_name("n_" + type))->output(0);
}

int64_t count_op(const ir::Graph& g, const std::string& type) {
  const auto ops = ops_of(g);
  return std::count(ops.begin(), ops.end(), type);
}

ir::Value* axes(ir::Graph& g, std::vector<int64_t> a) {
  return g.add_constant(g.unique_name("axes"), make<int64_t>({static_cast<int64_t>(a.size())}, a));
}

/// Deterministic inputs in about [-4, 4], not symmetric.
Tensor wave(Shape s) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 4.f * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return t;
}

/// Runs the pass; the outputs on `wave` inputs must match the unfused
/// graph's within rtol/atol. Returns the number of rewrites.
int64_t fuse_and_compare(ir::Graph& g, float rtol, float atol) {
  infer_static_shapes(g);
  std::map<std::string, Tensor> feeds;
  for (ir::Value* in : g.inputs()) feeds[in->name()] = wave(in->type.static_shape());
  auto before = run_graph(g, feeds);
  const int64_t changes = make_transformer_fusion()->run(g);
  g.verify();
  auto after = run_graph(g, feeds);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    EXPECT_EQ(before[i].shape(), after[i].shape());
    expect_close(values<float>(after[i]), values<float>(before[i]), rtol, atol);
  }
  return changes;
}

// ---- GELU pattern ------------------------------------------------------------

const float kSqrt2 = 1.41421356f;

/// Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5): the form torch.onnx exports
/// for nn.GELU() below opset 20 (bert_like_encoder).
ir::Value* gelu_erf_torch(ir::Graph& g, ir::Value* x, float div = kSqrt2, float half = 0.5f) {
  ir::Value* e = op(g, "Erf", {op(g, "Div", {x, scalar(g, div)})});
  return op(g, "Mul", {op(g, "Mul", {x, op(g, "Add", {e, scalar(g, 1.f)})}), scalar(g, half)});
}

TEST(TransformerFusionGelu, ErfFormBecomesOneGelu) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3, 37});
  g.outputs().push_back(gelu_erf_torch(g, x));
  const std::string out_name = g.outputs()[0]->name();
  // Unfused: float erf + 4 float passes; fused: 0.5 x erfc(-x / sqrt 2).
  // Inputs in [-4, 4]: the unfused graph's own cancellation stays < 1e-6 abs.
  EXPECT_EQ(fuse_and_compare(g, 1e-6f, 1e-6f), 1);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gelu"}));
  ir::Node* gelu = only_node(g, "Gelu");
  EXPECT_EQ(gelu->domain, "com.graphengine");
  EXPECT_EQ(gelu->get_string("approximate", "?"), "none");
  EXPECT_EQ(gelu->input(0), x);
  EXPECT_EQ(g.outputs()[0]->name(), out_name);
  EXPECT_EQ(gelu->fused_from.size(), 5u);
}

// Before / Expected in the textual IR (ir/text.h): the tanh form with x^3 as Pow.
TEST(TransformerFusionGelu, TanhFormAsText) {
  auto pass = make_transformer_fusion();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[2,8]
  const %three: float32[] = [3.0]
  const %k: float32[] = [0.044715]
  const %s: float32[] = [0.797884583]
  const %one: float32[] = [1.0]
  const %half: float32[] = [0.5]
  %x3 = Pow(%x, %three) : float32[2,8]
  %kx3 = Mul(%k, %x3) : float32[2,8]
  %inner = Add(%x, %kx3) : float32[2,8]
  %u = Mul(%inner, %s) : float32[2,8]
  %t = Tanh(%u) : float32[2,8]
  %onept = Add(%one, %t) : float32[2,8]
  %hx = Mul(%half, %x) : float32[2,8]
  %y = Mul(%hx, %onept) : float32[2,8]
  output %y
})", R"(graph {
  input %x: float32[2,8]
  %y = com.graphengine::Gelu(%x) {approximate = "tanh"} : float32[2,8]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "Gelu")->fused_from.size(), 8u);
}

// LayerNorm over the last axis with Scale and bias, as PyTorch exports it below opset 17.
TEST(TransformerFusionLayerNorm, WithScaleAndBiasAsText) {
  auto pass = make_transformer_fusion();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[2,4]
  const %axes: int64[1] = [-1]
  const %two: float32[] = [2.0]
  const %eps: float32[] = [1e-05]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  const %b: float32[4] = [0.0, 0.25, -0.25, 1.0]
  %m = ReduceMean(%x, %axes) {keepdims = 1} : float32[2,1]
  %d = Sub(%x, %m) : float32[2,4]
  %sq = Pow(%d, %two) : float32[2,4]
  %var = ReduceMean(%sq, %axes) {keepdims = 1} : float32[2,1]
  %ve = Add(%var, %eps) : float32[2,1]
  %sd = Sqrt(%ve) : float32[2,1]
  %n = Div(%d, %sd) : float32[2,4]
  %ng = Mul(%n, %g) : float32[2,4]
  %y = Add(%ng, %b) : float32[2,4]
  output %y
})", R"(graph {
  input %x: float32[2,4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  const %b: float32[4] = [0.0, 0.25, -0.25, 1.0]
  %y = LayerNormalization(%x, %g, %b) {axis = 1, epsilon = 9.99999975e-06} : float32[2,4]
  output %y
})", 1);
}

TEST(TransformerFusionGelu, HalfFirstAndMulByInverseSqrt2) {
  // (x * 0.5) * (1 + Erf(x * 0.70710678)), 0.5 and 1 on the left.
  ir::Graph g;
  ir::Value* x = input(g, "x", {5, 16});
  ir::Value* e = op(g, "Erf", {op(g, "Mul", {x, scalar(g, 0.70710678f)})});
  ir::Value* y = op(g, "Mul", {op(g, "Mul", {scalar(g, 0.5f), x}), op(g, "Add", {scalar(g, 1.f), e})});
  g.outputs().push_back(y);
  EXPECT_EQ(fuse_and_compare(g, 1e-6f, 1e-6f), 1);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gelu"}));
}

TEST(TransformerFusionGelu, TanhFormWithPowAndWithMulCube) {
  for (bool pow : {true, false}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {3, 33});
    ir::Value* cube = pow ? op(g, "Pow", {x, scalar(g, 3.f)}) : op(g, "Mul", {op(g, "Mul", {x, x}), x});
    ir::Value* inner = op(g, "Add", {x, op(g, "Mul", {scalar(g, 0.044715f), cube})});
    ir::Value* t = op(g, "Tanh", {op(g, "Mul", {inner, scalar(g, 0.7978845608f)})});
    ir::Value* y = op(g, "Mul", {x, op(g, "Mul", {scalar(g, 0.5f), op(g, "Add", {t, scalar(g, 1.f)})})});
    g.outputs().push_back(y);
    EXPECT_EQ(fuse_and_compare(g, 1e-5f, 1e-6f), 1) << "pow " << pow;
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Gelu"}));
    EXPECT_EQ(only_node(g, "Gelu")->get_string("approximate", "?"), "tanh");
  }
}

TEST(TransformerFusionGelu, WrongConstantsAreNotFused) {
  for (auto [div, half] : {std::pair{1.4142f, 0.5f}, {kSqrt2, 0.4999f}, {1.7320508f, 0.5f}}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {4, 8});
    g.outputs().push_back(gelu_erf_torch(g, x, div, half));
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
    EXPECT_EQ(ops_of(g).size(), 5u);
  }
}

TEST(TransformerFusionGelu, IntermediateGraphOutputOrSecondReaderBlocks) {
  for (int variant = 0; variant < 2; ++variant) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {4, 8});
    ir::Value* e = op(g, "Erf", {op(g, "Div", {x, scalar(g, kSqrt2)})});
    ir::Value* s = op(g, "Add", {e, scalar(g, 1.f)});
    g.outputs().push_back(op(g, "Mul", {op(g, "Mul", {x, s}), scalar(g, 0.5f)}));
    if (variant == 0) g.outputs().push_back(e);               // Erf result is a graph output
    else g.outputs().push_back(op(g, "Neg", {s}));            // 1 + erf read elsewhere too
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0) << variant;
    EXPECT_EQ(count_op(g, "Erf"), 1);
  }
}

TEST(TransformerFusionGelu, ConstantThatBroadcastsXUpIsNotFused) {
  // 0.5 given as [2, 1]: the product has shape [2, 3], x has [3].
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  ir::Value* half = g.add_constant("half", make<float>({2, 1}, {0.5f, 0.5f}));
  ir::Value* e = op(g, "Erf", {op(g, "Div", {x, scalar(g, kSqrt2)})});
  g.outputs().push_back(op(g, "Mul", {op(g, "Mul", {x, op(g, "Add", {e, scalar(g, 1.f)})}), half}));
  EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
}

// ---- Gelu kernel -----------------------------------------------------------------

/// Gelu-20 in double. 1 + erf(t) and 1 + tanh(u) are written as erfc(-t)
/// and 2 / (1 + exp(-2u)) (the same numbers): in double the literal sums
/// still cancel for x < -5, leaving too few correct digits for a reference.
double gelu_ref(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * 2 / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

TEST(GeluKernel, MatchesGelu20FormulaAtEdgeSizes) {
  for_each_hwy_target([] {
    for (bool tanh_form : {false, true})
      for (int64_t n : {0, 1, 7, 16, 17, 1000}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) x[i] = -8.f + 16.f * static_cast<float>(i) / static_cast<float>(std::max<int64_t>(n - 1, 1));
        auto out = run_op("Gelu", {make<float>({n}, x)}, {ir::Attribute::String("approximate", tanh_form ? "tanh" : "none")},
                          1, "com.graphengine");
        ASSERT_EQ(out[0].shape(), (Shape{n}));
        // 1e-6 relative, also where 1 + erf cancels (x << 0). Below x = -3 the
        // function's condition number grows like x^2 (y ~ exp(-x^2 / 2)), so
        // rounding x / sqrt(2) alone costs ~x^2 * 6e-8 relative: 4e-6 at -8.
        const auto y = values<float>(out[0]);
        for (int64_t i = 0; i < n; ++i) {
          const double ref = gelu_ref(x[i], tanh_form);
          const double rel = 1e-6 * std::max(1.0, double(x[i]) * x[i] / 8);
          EXPECT_NEAR(y[i], ref, rel * std::fabs(ref)) << "x = " << x[i] << (tanh_form ? " tanh" : " erf");
        }
      }
  });
}

// Past |x| = 13.2 the exponential of the erf form's erfc drops below e^-87,
// where the kernel takes erfc = 0: y is x above, and within 1e-37 of the
// exact value below; -9..-12.6 runs the polynomial exponential near its low
// end. Every SIMD target.
TEST(GeluKernel, ErfFormTailsBeyondTheExponentialsRange) {
  for_each_hwy_target([] {
    std::vector<float> x;
    for (float v = 9.f; v <= 40.f; v += 0.37f) {
      x.push_back(v);
      x.push_back(-v);
    }
    const int64_t n = static_cast<int64_t>(x.size());
    auto out = run_op("Gelu", {make<float>({n}, x)}, {}, 1, "com.graphengine");
    const auto y = values<float>(out[0]);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = gelu_ref(x[i], false);
      if (x[i] > 0) {
        EXPECT_EQ(y[i], x[i]);
      } else {
        // The relative bound of MatchesGelu20FormulaAtEdgeSizes (x^2 growth),
        // or 1e-37 absolute (below x = -12.6, where y is under 8x FLT_MIN).
        const double rel = 1e-6 * std::max(1.0, double(x[i]) * x[i] / 8);
        EXPECT_NEAR(y[i], ref, std::max(rel * std::fabs(ref), 1e-37)) << "x = " << x[i];
      }
    }
  });
}

TEST(GeluKernel, NaNAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = run_op("Gelu", {make<float>({3}, {NAN, inf, -inf})}, {}, 1, "com.graphengine");
  auto v = values<float>(out[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], inf);
  EXPECT_TRUE(std::isnan(v[2]));  // the formula's -inf * 0
}

TEST(GeluKernel, BadApproximateIsRefused) {
  EXPECT_THROW(run_op("Gelu", {make<float>({1}, {1.f})}, {ir::Attribute::String("approximate", "fast")}, 1,
                      "com.graphengine"),
               Error);
}

// ---- LayerNorm pattern -------------------------------------------------------------

struct LnChain {
  ir::Value* x = nullptr;
  ir::Value* out = nullptr;
  ir::Value* d = nullptr;
};

/// The torch.onnx form of nn.LayerNorm below opset 17, over `ax`:
/// d = x - mean(x); d / sqrt(mean(d^2) + eps) [* gamma] [+ beta].
LnChain layernorm_chain(ir::Graph& g, Shape s, std::vector<int64_t> ax, float eps, float exponent, ir::Value* gamma,
                        ir::Value* beta) {
  LnChain c;
  c.x = input(g, "x", s);
  ir::Value* mean = op(g, "ReduceMean", {c.x, axes(g, ax)});
  c.d = op(g, "Sub", {c.x, mean});
  ir::Value* var = op(g, "ReduceMean", {op(g, "Pow", {c.d, scalar(g, exponent)}), axes(g, ax)});
  ir::Value* n = op(g, "Div", {c.d, op(g, "Sqrt", {op(g, "Add", {var, scalar(g, eps)})})});
  if (gamma) n = op(g, "Mul", {n, gamma});
  if (beta) n = op(g, "Add", {beta, n});
  c.out = n;
  g.outputs().push_back(n);
  return c;
}

TEST(TransformerFusionLayerNorm, FullChainWithScaleAndBias) {
  ir::Graph g;
  ir::Value* gamma = g.add_constant("gamma", make<float>({5}, {1, 2, 3, 0.5f, -1}));
  ir::Value* beta = g.add_constant("beta", make<float>({5}, {0, 1, -1, 2, 0.25f}));
  LnChain c = layernorm_chain(g, {2, 3, 5}, {-1}, 1e-5f, 2.f, gamma, beta);
  const std::string out_name = c.out->name();
  // Same math; the kernel keeps statistics in double: 1e-5 rel / 1e-6 abs.
  EXPECT_EQ(fuse_and_compare(g, 1e-5f, 1e-6f), 1);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"LayerNormalization"}));
  ir::Node* ln = only_node(g, "LayerNormalization");
  EXPECT_EQ(ln->get_int("axis", -100), 2);
  EXPECT_EQ(ln->get_float("epsilon", 0), 1e-5f);
  EXPECT_EQ(ln->input(0), c.x);
  EXPECT_EQ(ln->input(1), gamma);
  EXPECT_EQ(ln->input(2), beta);
  EXPECT_EQ(g.outputs()[0]->name(), out_name);
  EXPECT_EQ(ln->fused_from.size(), 9u);
}

TEST(TransformerFusionLayerNorm, NoAffineAndTwoTrailingAxes) {
  ir::Graph g;
  layernorm_chain(g, {3, 4, 6}, {1, 2}, 1e-3f, 2.f, nullptr, nullptr);
  EXPECT_EQ(fuse_and_compare(g, 1e-5f, 1e-6f), 1);
  ir::Node* ln = only_node(g, "LayerNormalization");
  EXPECT_EQ(ln->get_int("axis", -100), 1);
  EXPECT_EQ(ln->get_float("epsilon", 0), 1e-3f);
  EXPECT_EQ(values<float>(*ln->input(1)->constant), (std::vector<float>{1.f}));
  EXPECT_FALSE(ln->has_input(2));
}

TEST(TransformerFusionLayerNorm, ScaleThatBroadcastsOutsideTheNormalizedDimsStaysAMul) {
  // gamma [3, 1] spans axis 0 (not normalized): LayerNormalization's Scale
  // cannot hold it, so only the core becomes LN and the Mul stays.
  ir::Graph g;
  ir::Value* gamma = g.add_constant("gamma", make<float>({3, 1}, {1, 2, 3}));
  layernorm_chain(g, {3, 4}, {-1}, 1e-5f, 2.f, gamma, nullptr);
  EXPECT_EQ(fuse_and_compare(g, 1e-5f, 1e-6f), 1);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"LayerNormalization", "Mul"}));
}

TEST(TransformerFusionLayerNorm, GuardsBlockFusion) {
  {  // exponent 3 is not a variance
    ir::Graph g;
    layernorm_chain(g, {2, 6}, {-1}, 1e-5f, 3.f, nullptr, nullptr);
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
  }
  {  // a leading axis is not LayerNormalization
    ir::Graph g;
    layernorm_chain(g, {2, 6, 3}, {1}, 1e-5f, 2.f, nullptr, nullptr);
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
  }
  {  // x - mean is also a graph output
    ir::Graph g;
    LnChain c = layernorm_chain(g, {2, 6}, {-1}, 1e-5f, 2.f, nullptr, nullptr);
    g.outputs().push_back(c.d);
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
  }
  {  // x - mean read by a third node
    ir::Graph g;
    LnChain c = layernorm_chain(g, {2, 6}, {-1}, 1e-5f, 2.f, nullptr, nullptr);
    g.outputs().push_back(op(g, "Neg", {c.d}));
    EXPECT_EQ(fuse_and_compare(g, 0, 0), 0);
    EXPECT_EQ(count_op(g, "ReduceMean"), 2);
  }
}

// ---- MatMul batch folding (kernel) --------------------------------------------------

/// numpy.matmul by loops (A, B of rank >= 2), for the reference.
std::vector<float> matmul_ref(const Tensor& a, const Tensor& b, Shape& out_shape) {
  Shape as = a.shape(), bs = b.shape();
  const size_t r = std::max(as.size(), bs.size());
  as.insert(as.begin(), r - as.size(), 1);
  bs.insert(bs.begin(), r - bs.size(), 1);
  const int64_t m = as[r - 2], k = as[r - 1], n = bs[r - 1];
  out_shape.assign(r, 0);
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < r; ++i) batches *= (out_shape[i] = std::max(as[i], bs[i]));
  out_shape[r - 2] = m;
  out_shape[r - 1] = n;
  std::vector<float> y;
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, aoff = 0, boff = 0, ast = 1, bst = 1;
    for (size_t i = r - 2; i-- > 0;) {
      const int64_t idx = rem % out_shape[i];
      rem /= out_shape[i];
      aoff += (as[i] == 1 ? 0 : idx) * ast;
      boff += (bs[i] == 1 ? 0 : idx) * bst;
      ast *= as[i];
      bst *= bs[i];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(a.as<float>()[(aoff * m + i) * k + p]) * b.as<float>()[(boff * k + p) * n + j];
        y.push_back(static_cast<float>(acc));
      }
  }
  return y;
}

TEST(MatMulBatchFold, MatchesLoopReference) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 2, 5}, {5, 4}},           // A 3-D, B 2-D: folds to [6, 5] x [5, 4]
      {{128, 1, 17}, {17, 9}},       // M = 1 per batch (the attention projection's shape)
      {{2, 3, 4, 5}, {5, 7}},        // A 4-D
      {{2, 3, 4, 5}, {1, 1, 5, 7}},  // B's batch dims all 1: folds too
      {{1, 4, 5}, {5, 3}},           // nothing to fold
      {{2, 1, 4, 5}, {3, 5, 6}},     // B has a real batch dim: not folded, broadcast
      {{4, 3, 5}, {4, 5, 2}},        // plain batched
  };
  for (const auto& [as, bs] : cases) {
    Tensor a = wave(as), b = wave(bs);
    Shape ref_shape;
    auto ref = matmul_ref(a, b, ref_shape);
    auto out = run_op("MatMul", {a, b});
    EXPECT_EQ(out[0].shape(), ref_shape) << shape_str(as) << " x " << shape_str(bs);
    expect_close(values<float>(out[0]), ref, 1e-5f, 1e-5f);
  }
}

TEST(MatMulBatchFold, ShapeChangeBetweenFoldedAndBatchedRuns) {
  // One kernel, run on foldable and unfoldable pairs in turn: the cached
  // primitive must be rebuilt each time the shapes change.
  KernelHarness h("MatMul", 2, {});
  for (auto [as, bs] : {std::pair<Shape, Shape>{{2, 3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}}, {{6, 1, 4}, {4, 5}}}) {
    Tensor ta = wave(as), tb = wave(bs);
    Shape ref_shape;
    auto ref = matmul_ref(ta, tb, ref_shape);
    expect_close(values<float>(h.run({ta, tb}, ref_shape)), ref, 1e-5f, 1e-5f);
  }
}

// ---- residual Add + LayerNormalization ------------------------------------------

TEST(TransformerFusionResidual, AddThenLayerNormAsText) {
  auto pass = make_transformer_fusion();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[2,3,4]
  input %r: float32[2,3,4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  const %b: float32[4] = [0.0, 0.25, -0.25, 1.0]
  %s = Add(%x, %r) : float32[2,3,4] @res
  %y = LayerNormalization(%s, %g, %b) {axis = -1, epsilon = 1e-05} : float32[2,3,4] @ln
  output %y
})", R"(graph {
  input %x: float32[2,3,4]
  input %r: float32[2,3,4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  const %b: float32[4] = [0.0, 0.25, -0.25, 1.0]
  %y = com.graphengine::SkipLayerNormalization(%x, %r, %g, %b) {axis = -1, epsilon = 9.99999975e-06} : float32[2,3,4]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "SkipLayerNormalization")->fused_from, (std::vector<std::string>{"res", "ln"}));
}

// Guards: an Add that broadcasts, a sum read elsewhere (pre-LN residual
// streams keep it), Mean read.
TEST(TransformerFusionResidual, GuardsBlockFusion) {
  auto pass = make_transformer_fusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,3,4]
  input %r: float32[4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  %s = Add(%x, %r) : float32[2,3,4]
  %y = LayerNormalization(%s, %g) {axis = -1} : float32[2,3,4]
  output %y
})");
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,3,4]
  input %r: float32[2,3,4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  %s = Add(%x, %r) : float32[2,3,4]
  %y = LayerNormalization(%s, %g) {axis = -1} : float32[2,3,4]
  %z = Add(%y, %s) : float32[2,3,4]
  output %z
})");
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,3,4]
  input %r: float32[2,3,4]
  const %g: float32[4] = [1.0, 2.0, 0.5, -1.0]
  %s = Add(%x, %r) : float32[2,3,4]
  %y, %mean = LayerNormalization(%s, %g) {axis = -1} : float32[2,3,4], float32[2,3,1]
  output %y
  output %mean
})");
}

}  // namespace
}  // namespace gec::passes
