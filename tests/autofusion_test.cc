// Automatic elementwise fusion: the autofusion pass (grouping, Before /
// Expected, one negative case per guard), the FusedElementwise kernel
// against the unfused kernels (bit for bit: it uses their formulas), its
// program checks on bad attributes, and the compile report's "fusion"
// object.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "frontend/onnx/exporter.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "ops/domain.h"
#include "ops/fused_elementwise.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

/// Deterministic inputs in about [-3, 3] (bool inputs alternate).
Tensor wave(const ir::Value* v, float phase) {
  Tensor t(v->type.dtype, v->type.static_shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float x = 3.f * std::sin(0.37f * static_cast<float>(i) + phase);
    if (v->type.dtype == DType::kBool) t.as<uint8_t>()[i] = x > 0;
    else if (v->type.dtype == DType::kInt32) t.as<int32_t>()[i] = static_cast<int32_t>(std::lround(x * 40)) | 1;  // odd: never 0
    else if (v->type.dtype == DType::kInt64) t.as<int64_t>()[i] = std::llround(x * 1e4) * 4096 + 1;  // odd
    else t.as<float>()[i] = x;
  }
  return t;
}

size_t count(const ir::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes()) n += node->op_type == op;
  return n;
}

/// Parses `text`, runs it unfused and after autofusion on the same inputs,
/// expects `groups` fused nodes and bit-identical outputs. Returns the fused
/// graph.
std::unique_ptr<ir::Graph> fuse_and_compare(const std::string& text, size_t groups) {
  auto g = ir::parse_graph(text);
  std::map<std::string, Tensor> feeds;
  float phase = 0.1f;
  for (const ir::Value* v : g->inputs()) feeds[v->name()] = wave(v, phase += 0.7f);
  const std::vector<Tensor> want = run_graph(*g, feeds);
  auto pass = make_autofusion();
  EXPECT_EQ(pass->run(*g), static_cast<int64_t>(groups));
  g->verify();
  EXPECT_EQ(count(*g, "FusedElementwise"), groups) << ir::print_graph(*g);
  const std::vector<Tensor> got = run_graph(*g, feeds);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
    if (got[i].bytes() != want[i].bytes()) continue;
    if (got[i].dtype() != DType::kFloat32) {
      EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), want[i].bytes()), 0) << "output " << i << " differs";
      continue;
    }
    // Bit for bit, except that any NaN equals any NaN (a NaN's sign and
    // payload depend on which operand an instruction propagates).
    int64_t differ = 0, first = -1;
    for (int64_t k = 0; k < got[i].numel(); ++k) {
      const float a = got[i].as<float>()[k], b = want[i].as<float>()[k];
      if (std::isnan(a) && std::isnan(b)) continue;
      if (std::memcmp(&a, &b, sizeof a) != 0) {
        if (first < 0) first = k;
        ++differ;
      }
    }
    EXPECT_EQ(differ, 0) << "output " << i << ": first at " << first << ": "
                         << (first >= 0 ? got[i].as<float>()[first] : 0.f) << " vs "
                         << (first >= 0 ? want[i].as<float>()[first] : 0.f);
  }
  return g;
}

// ---- grouping: Before / Expected -------------------------------------------------

TEST(AutoFusion, ChainBecomesOneNodeAsText) {
  auto pass = make_autofusion();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[2,8]
  const %b: float32[] = [0.5]
  const %c: float32[8] = [1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, 0.25]
  %a = Add(%x, %b) : float32[2,8] @a
  %m = Mul(%a, %c) : float32[2,8] @m
  %y = Sigmoid(%m) : float32[2,8] @y
  output %y
})", R"(graph {
  input %x: float32[2,8]
  const %b: float32[] = [0.5]
  const %c: float32[8] = [1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, 0.25]
  %y = com.graphengine::FusedElementwise(%x, %b, %c) {ops = ["Add", "Mul", "Sigmoid"], args = [0, 1, -1, 3, 2, -1, 4, -1, -1], params = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], results = [5]} : float32[2,8]
  output %y
})", 1);
  const ir::Node* f = only_node(*g, "FusedElementwise");
  EXPECT_EQ(f->fused_from, (std::vector<std::string>{"a", "m", "y"})) << "keeps the names it came from";
  EXPECT_EQ(f->output(0)->name(), "y") << "takes over its output's name";
}

// A value the group computes and something outside reads becomes a second
// output; broadcast inputs of any rank are read in place.
TEST(AutoFusion, EscapingValueIsAnOutputAndInputsBroadcast) {
  auto g = fuse_and_compare(R"(graph {
  input %x: float32[2,3,5]
  input %s: float32[3,1]
  input %w: float32[5,4]
  %d = Sub(%x, %s) : float32[2,3,5]
  %e = Exp(%d) : float32[2,3,5]
  %t = Tanh(%e) : float32[2,3,5]
  %mm = MatMul(%e, %w) : float32[2,3,4]
  output %t
  output %mm
})", 1);
  const ir::Node* f = only_node(*g, "FusedElementwise");
  EXPECT_EQ(f->outputs().size(), 2u) << "e (read by MatMul) and t";
}

// Two branches that meet: one group (the join merges both producers' groups).
TEST(AutoFusion, BranchesThatMeetMergeIntoOneGroup) {
  auto g = fuse_and_compare(R"(graph {
  input %x: float32[4,6]
  input %z: float32[4,6]
  %a = Relu(%x) : float32[4,6]
  %b = Neg(%z) : float32[4,6]
  %c = Abs(%b) : float32[4,6]
  %y = Max(%a, %c) : float32[4,6]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "FusedElementwise")->fused_from.size(), 4u);
}

// Every op the fused kernel runs, in groups, against the unfused kernels bit
// for bit: unary math and activations, comparisons into Where, logic, Clip,
// Cast both ways, Pow by 2 and by a tensor, PRelu, Gelu (both forms).
TEST(AutoFusion, EveryOpMatchesTheUnfusedKernelsBitForBit) {
  std::string unary;
  std::string last = "x";
  int k = 0;
  for (const char* op : {"Abs", "Sigmoid", "Tanh", "Softplus", "Softsign", "Neg", "Sign", "Erf", "Exp", "Floor",
                         "Ceil", "Round", "Sin", "Cos", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu",
                         "Celu", "ThresholdedRelu", "Mish", "Relu"}) {
    const std::string v = "u" + std::to_string(k++);
    unary += "  %" + v + " = " + op + "(%" + last + ") : float32[3,5,7]\n";
    last = v;
  }
  fuse_and_compare(R"(graph {
  input %x: float32[3,5,7]
  input %p: float32[5,1]
  input %q: float32[7]
  input %m: bool[3,5,7]
  const %two: float32[] = [2.0]
  const %lo: float32[] = [-0.5]
  const %hi: float32[] = [0.75]
)" + unary + R"(  %ab = Abs(%)" + last + R"() : float32[3,5,7]
  %l = Log(%ab) : float32[3,5,7]
  %sq = Sqrt(%ab) : float32[3,5,7]
  %r = Reciprocal(%sq) : float32[3,5,7]
  %pw = Pow(%ab, %q) : float32[3,5,7]
  %p2 = Pow(%x, %two) : float32[3,5,7]
  %mx = Max(%l, %p) : float32[3,5,7]
  %mn = Min(%mx, %q) : float32[3,5,7]
  %pr = PRelu(%x, %p) : float32[3,5,7]
  %gt = Greater(%x, %p) : bool[3,5,7]
  %le = LessOrEqual(%x, %q) : bool[3,5,7]
  %eq = Equal(%p2, %x) : bool[3,5,7]
  %an = And(%gt, %m) : bool[3,5,7]
  %xo = Xor(%an, %le) : bool[3,5,7]
  %no = Not(%xo) : bool[3,5,7]
  %or = Or(%no, %eq) : bool[3,5,7]
  %wh = Where(%or, %pw, %mn) : float32[3,5,7]
  %cl = Clip(%wh, %lo, %hi) : float32[3,5,7]
  %cf = Cast(%gt) {to = 1} : float32[3,5,7]
  %cb = Cast(%r) {to = 9} : bool[3,5,7]
  %g1 = com.graphengine::Gelu(%pr) {approximate = "none"} : float32[3,5,7]
  %g2 = com.graphengine::Gelu(%g1) {approximate = "tanh"} : float32[3,5,7]
  %s1 = Add(%cl, %cf) : float32[3,5,7]
  %s2 = Sub(%s1, %g2) : float32[3,5,7]
  %s3 = Div(%s2, %p) : float32[3,5,7]
  %y = Mul(%s3, %sq) : float32[3,5,7]
  output %y
  output %cb
})", 1);
}

// Our Swish (alpha 1 and not) inside a group: the same bits as its own kernel.
TEST(AutoFusion, SwishInAGroupMatchesItsKernel) {
  fuse_and_compare(R"(graph {
  input %x: float32[3,5,7]
  input %p: float32[5,1]
  %w1 = com.graphengine::Swish(%x) {alpha = 1.0} : float32[3,5,7]
  %w2 = com.graphengine::Swish(%w1) {alpha = 1.5} : float32[3,5,7]
  %y = Mul(%w2, %p) : float32[3,5,7]
  output %y
})", 1);
}

// ---- guards: one negative case each ---------------------------------------------

TEST(AutoFusionGuards, SingleOpsStayAsTheyAre) {
  auto pass = make_autofusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,8]
  %y = Relu(%x) : float32[2,8]
  output %y
})");
}

// An intermediate smaller than the group's shape (a [2,1] Sqrt feeding a
// [2,4] Div) starts its own group: here both stay single.
TEST(AutoFusionGuards, AnOpOfAnotherShapeIsNotJoined) {
  auto pass = make_autofusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,4]
  input %v: float32[2,1]
  %s = Sqrt(%v) : float32[2,1]
  %y = Div(%x, %s) : float32[2,4]
  output %y
})");
}

// Integer groups: int64 and int32 arithmetic, Div toward zero, comparisons,
// Where, Cast between the integer types, bool and float32: bit for bit.
TEST(AutoFusion, IntegerGroupsMatchBitForBit) {
  fuse_and_compare(R"(graph {
  input %x: int64[3,7]
  input %z: int64[7]
  input %i: int32[3,7]
  const %k: int64[] = [-3]
  %a = Mul(%x, %z) : int64[3,7]
  %b = Add(%a, %k) : int64[3,7]
  %d = Div(%b, %z) : int64[3,7]
  %n = Neg(%d) : int64[3,7]
  %m = Max(%n, %x) : int64[3,7]
  %c = Cast(%i) {to = 7} : int64[3,7]
  %s = Sub(%m, %c) : int64[3,7]
  %g = Greater(%s, %x) : bool[3,7]
  %w = Where(%g, %s, %c) : int64[3,7]
  %t = Cast(%w) {to = 6} : int32[3,7]
  %ab = Abs(%t) : int32[3,7]
  %f = Cast(%ab) {to = 1} : float32[3,7]
  output %w
  output %f
})", 1);
}

// An integer zero divisor is an error, as in the Div kernel.
TEST(AutoFusion, IntegerDivisionByZeroIsAnError) {
  auto g = ir::parse_graph(R"(graph {
  input %x: int32[4]
  input %z: int32[4]
  %a = Add(%x, %x) : int32[4] @a
  %y = Div(%a, %z) : int32[4] @y
  output %y
})");
  EXPECT_EQ(make_autofusion()->run(*g), 1);
  const std::map<std::string, Tensor> feeds = {{"x", make<int32_t>({4}, {1, 2, 3, 4})}, {"z", make<int32_t>({4}, {1, 0, 1, 1})}};
  // The error names the model's nodes the fused one computes.
  expect_error([&] { run_graph(*g, feeds); }, ErrorCode::kInvalidArgument,
               "(com.graphengine::FusedElementwise fused from 'a', 'y'): integer division by zero");
}

// A dim known only as a named symbol fuses (the same name is the same size,
// ONNX's dim_param convention); an unnamed unknown dim cannot be proved equal
// to another and does not.
TEST(AutoFusionGuards, UnknownDimsAreNotFusedNamedOnesAre) {
  auto pass = make_autofusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[?,4]
  %a = Relu(%x) : float32[?,4]
  %y = Neg(%a) : float32[?,4]
  output %y
})");
  auto g = ir::parse_graph(R"(graph {
  input %x: float32[N,4]
  input %b: float32[4]
  %a = Add(%x, %b) : float32[N,4]
  %y = Neg(%a) : float32[N,4]
  output %y
})");
  EXPECT_EQ(pass->run(*g), 1);
  EXPECT_EQ(count(*g, "FusedElementwise"), 1u);
}

// Relu -> MatMul -> Add that also reads the Relu: fusing Relu with Add would
// make the fused node both feed and read the MatMul.
TEST(AutoFusionGuards, AMergeThatWouldMakeACycleIsRefused) {
  auto pass = make_autofusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[4,4]
  input %w: float32[4,4]
  %a = Relu(%x) : float32[4,4]
  %b = MatMul(%a, %w) : float32[4,4]
  %y = Add(%a, %b) : float32[4,4]
  output %y
})");
}

// Ops outside the kernel's table (variadic Max, Pow with an integer
// exponent, Cast to int32, Mod) stay unfused.
TEST(AutoFusionGuards, OpsTheKernelDoesNotRunStayUnfused) {
  auto pass = make_autofusion();
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,4]
  input %z: float32[2,4]
  const %e: int64[] = [3]
  %m = Max(%x, %z, %x) : float32[2,4]
  %p = Pow(%m, %e) : float32[2,4]
  %c = Cast(%p) {to = 6} : int32[2,4]
  output %c
})");
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,4]
  input %z: float32[2,4]
  %m = Mod(%x, %z) {fmod = 1} : float32[2,4]
  %y = Relu(%m) : float32[2,4]
  output %y
})");
}

// A chain reading more distinct inputs than one fused node takes is split
// into groups that each stay within the limit.
TEST(AutoFusionGuards, InputLimitSplitsAGroup) {
  std::string text = "graph {\n  input %x: float32[2,4]\n";
  const int n = ops::kMaxFusedInputs + 4;
  for (int i = 0; i < n; ++i) text += "  input %i" + std::to_string(i) + ": float32[2,4]\n";
  std::string last = "x";
  for (int i = 0; i < n; ++i) {
    text += "  %a" + std::to_string(i) + " = Add(%" + last + ", %i" + std::to_string(i) + ") : float32[2,4]\n";
    last = "a" + std::to_string(i);
  }
  text += "  output %" + last + "\n}";
  auto g = fuse_and_compare(text, 2);
  for (const auto& node : g->nodes())
    if (node->op_type == "FusedElementwise") {
      EXPECT_LE(node->inputs().size(), static_cast<size_t>(ops::kMaxFusedInputs));
    }
}

// Two groups that would read each other: chain A and chain B each exceed the
// input limit when merged, b2 = A's a1 + b0 joins B, a4 = a1 + b3 (a B value)
// would join A: then A reads B and B reads A. The merge must be refused, and
// whatever groups form, the graph stays acyclic and computes the same.
TEST(AutoFusionGuards, TwoGroupsNeverReadEachOther) {
  std::string text = "graph {\n";
  for (int i = 0; i < 5; ++i) text += "  input %x" + std::to_string(i) + ": float32[2,3]\n  input %y" + std::to_string(i) + ": float32[2,3]\n";
  text += R"(  %a0 = Add(%x0, %x1) : float32[2,3]
  %a1 = Add(%a0, %x2) : float32[2,3]
  %a2 = Add(%a1, %x3) : float32[2,3]
  %a3 = Add(%a2, %x4) : float32[2,3]
  %c0 = Add(%y0, %y1) : float32[2,3]
  %c1 = Add(%c0, %y2) : float32[2,3]
  %c2 = Add(%c1, %y3) : float32[2,3]
  %b0 = Add(%c2, %y4) : float32[2,3]
  %b2 = Add(%b0, %a1) : float32[2,3]
  %b3 = Relu(%b0) : float32[2,3]
  %a4 = Add(%a1, %b3) : float32[2,3]
  output %a3
  output %b2
  output %a4
}
)";
  auto g = ir::parse_graph(text);
  std::map<std::string, Tensor> feeds;
  float phase = 0.f;
  for (const ir::Value* v : g->inputs()) feeds[v->name()] = wave(v, phase += 0.5f);
  const std::vector<Tensor> want = run_graph(*g, feeds);
  make_autofusion()->run(*g);
  g->verify();  // acyclic, uses consistent
  const std::vector<Tensor> got = run_graph(*g, feeds);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(values<float>(got[i]), values<float>(want[i])) << i;
}

// ---- the kernel's program checks (a crafted .gom reaches them) ------------------

TEST(FusedElementwiseKernel, BadProgramsAreRefused) {
  const Tensor x = make<float>({2}, {1.f, -2.f});
  auto run = [&](std::vector<std::string> ops, std::vector<int64_t> args, std::vector<int64_t> results) {
    return run_op("FusedElementwise", {x},
                  {ir::Attribute::Strings("ops", ops), ir::Attribute::Ints("args", args),
                   ir::Attribute::Floats("params", std::vector<float>(3 * ops.size(), 0.f)),
                   ir::Attribute::Ints("results", results)},
                  1, ops::kGecDomain);
  };
  EXPECT_EQ(values<float>(run({"Neg", "Relu"}, {0, -1, -1, 1, -1, -1}, {2})[0]), (std::vector<float>{0.f, 2.f}));
  expect_error([&] { run({"Conv"}, {0, -1, -1}, {1}); }, ErrorCode::kInvalidModel, "not an op the fused kernel runs");
  expect_error([&] { run({"Neg"}, {1, -1, -1}, {1}); }, ErrorCode::kInvalidModel, "is not an earlier register");
  expect_error([&] { run({"Not"}, {0, -1, -1}, {1}); }, ErrorCode::kInvalidModel, "operand 0 is float32, expected bool");
  expect_error([&] { run({"Add"}, {0, -1, -1}, {1}); }, ErrorCode::kInvalidModel, "operand 1 is missing");
  expect_error([&] { run({"Neg"}, {0, -1, -1}, {7}); }, ErrorCode::kInvalidModel, "result register 7 is out of range");
  expect_error([&] { run({"Neg"}, {0, -1}, {1}); }, ErrorCode::kInvalidModel, "3 entries per instruction");
  expect_error([&] { run({"Neg"}, {0, 0, -1}, {1}); }, ErrorCode::kInvalidModel, "takes no operand 1");
  // A Clip whose max is a whole block (it must be one element: the kernel
  // reads one).
  expect_error([&] { run({"Neg", "Clip"}, {0, -1, -1, 0, -1, 1}, {2}); }, ErrorCode::kInvalidModel,
               "Clip's min/max must hold one element");
  // Cast targets: not a dtype code, float to integer.
  auto cast = [&](float to) {
    return run_op("FusedElementwise", {x},
                  {ir::Attribute::Strings("ops", {"Cast"}), ir::Attribute::Ints("args", {0, -1, -1}),
                   ir::Attribute::Floats("params", {to, 0.f, 0.f}), ir::Attribute::Ints("results", {1})},
                  1, ops::kGecDomain);
  };
  for (float to : {std::nanf(""), 1e30f, 1.5f, 6.f})
    expect_error([&] { cast(to); }, ErrorCode::kInvalidModel, "a Cast the fused kernel does not run");
}

// ---- end to end: sessions, threads, the report ----------------------------------

/// An ONNX model (from the textual IR) compiled with `o`.
CompiledModel compile_text(const std::string& text, CompileOptions o) {
  auto g = ir::parse_graph(text);
  const std::string bytes = frontend::export_onnx_bytes(*g);
  return compile_any_bytes(bytes.data(), bytes.size(), o);
}

/// `text` compiled as it is and with --disable-pass autofusion, each loaded
/// into a Session; `fusion` is the fused compile's report "fusion" object.
struct FusedAndPlain {
  nlohmann::json fusion;
  std::unique_ptr<Session> fused, plain;
};
FusedAndPlain compile_fused_and_plain(const std::string& text) {
  CompileOptions off;
  off.disabled_passes = {"autofusion"};
  const CompiledModel f = compile_text(text, {}), p = compile_text(text, off);
  return {nlohmann::json::parse(f.report_json)["fusion"], Session::load_from_bytes(f.gom),
          Session::load_from_bytes(p.gom)};
}

// A LayerNorm-like tail spelled out over a large tensor, fused vs
// --disable-pass autofusion, on 2 threads (the kernel splits rows across
// them): identical bits; the report counts the group.
TEST(AutoFusion, SessionsAgreeAndTheReportCountsGroups) {
  const std::string text = R"(graph {
  input %x: float32[8,64,96]
  input %mu: float32[8,64,1]
  input %sd: float32[8,64,1]
  const %g: float32[] = [1.5]
  const %b: float32[] = [-0.25]
  %d = Sub(%x, %mu) : float32[8,64,96]
  %n = Div(%d, %sd) : float32[8,64,96]
  %s = Mul(%n, %g) : float32[8,64,96]
  %t = Add(%s, %b) : float32[8,64,96]
  %y = Tanh(%t) : float32[8,64,96]
  output %y
})";
  CompileOptions on, off;
  off.disabled_passes = {"autofusion"};
  CompiledModel fused = compile_text(text, on), plain = compile_text(text, off);
  const auto rf = nlohmann::json::parse(fused.report_json)["fusion"];
  const auto rp = nlohmann::json::parse(plain.report_json)["fusion"];
  EXPECT_EQ(rf["groups"], 1);
  EXPECT_EQ(rf["ops_in_groups"], 5);
  EXPECT_EQ(rf["kernels_before"], 5);
  EXPECT_EQ(rf["kernels_after"], 1);
  EXPECT_EQ(rf["rules"]["autofusion"], 1);
  EXPECT_EQ(rp["groups"], 0);
  EXPECT_EQ(rp["kernels_after"], 5);
  auto g = ir::parse_graph(text);
  std::vector<Tensor> in;
  float phase = 0.f;
  for (const ir::Value* v : g->inputs()) in.push_back(wave(v, phase += 0.9f));
  // sd > 0
  for (int64_t i = 0; i < in[2].numel(); ++i) in[2].as<float>()[i] = 0.5f + std::fabs(in[2].as<float>()[i]);
  std::vector<TensorView> views;
  for (const Tensor& t : in) views.push_back(t.view());
  SessionOptions so;
  so.num_threads = 2;
  so.adapt_threads = false;
  auto a = Session::load_from_bytes(fused.gom, so)->run(views);
  auto b = Session::load_from_bytes(plain.gom, so)->run(views);
  ASSERT_EQ(a[0].bytes(), b[0].bytes());
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].bytes()), 0);
}

// Named symbolic dims: the fused node runs on the dynamic path, at each size
// equal to the unfused model. Inputs that bind one symbol to two sizes so
// that an output of the group would be smaller than the group are refused
// (kInvalidArgument), never computed over the wrong shape.
TEST(AutoFusion, SymbolicDimsRunAtAnySize) {
  const std::string text = R"(graph {
  input %x: float32[N,M]
  input %b: float32[N,M]
  %a = Add(%b, %b) : float32[N,M]
  %s = Sigmoid(%a) : float32[N,M]
  %y = Mul(%s, %x) : float32[N,M]
  output %a
  output %y
})";
  const FusedAndPlain m = compile_fused_and_plain(text);
  EXPECT_EQ(m.fusion["groups"], 1);
  Session* const sf = m.fused.get();
  Session* const sp = m.plain.get();
  for (int64_t n : {1, 3, 70}) {
    ir::Graph tmp;
    const Tensor x = wave(tmp.add_value("x", ir::TensorType::of(DType::kFloat32, {n, 5})), 0.3f);
    const Tensor b = wave(tmp.add_value("b", ir::TensorType::of(DType::kFloat32, {n, 5})), 1.1f);
    auto got = sf->run({x.view(), b.view()});
    auto want = sp->run({x.view(), b.view()});
    for (size_t k = 0; k < 2; ++k) {
      ASSERT_EQ(got[k].shape(), (Shape{n, 5}));
      EXPECT_EQ(std::memcmp(got[k].data(), want[k].data(), want[k].bytes()), 0) << "N = " << n << ", output " << k;
    }
  }
  // b fed as [1, 5]: the unfused model's `a` would be [1, 5], the group's
  // shape is [4, 5].
  ir::Graph tmp;
  const Tensor x = wave(tmp.add_value("x", ir::TensorType::of(DType::kFloat32, {4, 5})), 0.3f);
  const Tensor b = wave(tmp.add_value("b", ir::TensorType::of(DType::kFloat32, {1, 5})), 1.1f);
  try {
    auto got = sf->run({x.view(), b.view()});
    EXPECT_EQ(got[0].shape(), (Shape{1, 5})) << "if the runtime accepts the inputs, `a` must keep its own shape";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::kInvalidArgument) << e.what();
  }
}

// After an op whose output shape our inference cannot work out (a pool over
// an input of dynamic size), the output's unnamed dims get symbols of their
// own, and the elementwise ops after it carry them (numpy broadcast), so the
// chain is one group; the public API shows those dims unnamed. The group
// runs like the unfused chain at two sizes. (A per-channel operand
// [1,2,1,1] would still split the group: its static 2 next to a symbol gives
// the static dim, which is not the symbol.)
TEST(AutoFusion, AChainAfterAnOpOfRunTimeSizeIsOneGroup) {
  const std::string text = R"(graph {
  input %x: float32[1,2,H,W]
  const %g: float32[] = [1.5]
  const %b: float32[] = [-0.25]
  %p = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : float32[1,2,?,?]
  %s = Mul(%p, %g) : float32[1,2,?,?]
  %t = Add(%s, %b) : float32[1,2,?,?]
  %y = Sigmoid(%t) : float32[1,2,?,?]
  output %y
})";
  const FusedAndPlain m = compile_fused_and_plain(text);
  EXPECT_EQ(m.fusion["groups"], 1);
  EXPECT_EQ(m.fusion["ops_in_groups"], 3);
  Session* const sf = m.fused.get();
  Session* const sp = m.plain.get();
  ASSERT_EQ(sf->outputs().size(), 1u);
  // Dims 0 and 1 are named here (our inference gives up on the whole shape
  // of a pool over a dynamic input); 2 and 3 by ONNX shape inference.
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(sf->outputs()[0].dim_params.at(k), "") << sf->outputs()[0].str();
  for (const Shape& xs : {Shape{1, 2, 6, 9}, Shape{1, 2, 33, 4}}) {
    ir::Graph tmp;
    const Tensor x = wave(tmp.add_value("x", ir::TensorType::of(DType::kFloat32, xs)), 0.3f);
    auto got = sf->run({x.view()});
    auto want = sp->run({x.view()});
    ASSERT_EQ(got[0].shape(), want[0].shape());
    EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].bytes()), 0) << shape_str(xs);
  }
}

}  // namespace
}  // namespace gec::passes
