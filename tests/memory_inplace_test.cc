// Every op of the planner's in-place allow-list, run through the runtime with
// its output planned over an input: the result must be bit-identical to the
// same kernel run out of place (evaluate_node into fresh memory). Sizes are
// odd (not a multiple of any vector width) and one is large enough for the
// kernels to split across threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "memory/planner.h"
#include "memory_test_util.h"
#include "ops/fused_conv.h"
#include "ops/op_schema.h"
#include "test_util.h"

namespace gec::memory {
namespace {

using testing::add_input;
using testing::add_op;

struct Case {
  std::string op;
  DType dt;
  int arity;        // tensor inputs that get an arena copy (Identity) first
  int over;         // input index the output should be planned over
  bool bcast0 = false;  // input 0 is a [1] tensor broadcast against the others
  std::vector<ir::Attribute> attrs = {};
  std::string domain = "";
};

Tensor sample(DType dt, int64_t n, int seed) {
  Tensor t(dt, {n});
  for (int64_t i = 0; i < n; ++i) {
    const double v = std::sin(0.37 * static_cast<double>(i + 1) + seed) * 4.0;
    if (dt == DType::kFloat32) t.as<float>()[i] = static_cast<float>(v);
    else if (dt == DType::kInt32) t.as<int32_t>()[i] = static_cast<int32_t>(std::lround(v * 10)) | 1;  // nonzero
    else t.as<uint8_t>()[i] = v > 0;
  }
  return t;
}

void run_case(const Case& k, int64_t n) {
  SCOPED_TRACE(k.op + " n=" + std::to_string(n));
  ir::Graph g;
  std::vector<Tensor> data;
  std::vector<ir::Value*> args;
  int first = 0;
  if (k.op == "Where") {  // condition: a bool graph input read in place
    data.push_back(sample(DType::kBool, n, 7));
    args.push_back(add_input(g, "cond", DType::kBool, {n}));
    first = 1;
  }
  for (int i = 0; i < k.arity; ++i) {
    const int64_t len = (i == 0 && k.bcast0) ? 1 : n;
    data.push_back(sample(k.dt, len, i + 1));
    ir::Value* x = add_input(g, "x" + std::to_string(i), k.dt, {len});
    args.push_back(add_op(g, "Identity", {x}, "t" + std::to_string(i), {len}));
  }
  std::vector<Tensor> consts;
  if (k.op == "Clip") {
    for (float v : {-1.5f, 2.5f}) args.push_back(g.add_constant("c" + std::to_string(v), testing::make<float>({}, {v})));
  }
  if (k.op == "Pow") args.push_back(g.add_constant("e", testing::make<float>({}, {2.0f})));
  ir::Value* y = add_op(g, k.op, args, "y", {n}, k.attrs, k.dt);
  y->producer()->domain = k.domain;
  g.outputs().push_back(y);
  MemoryStats st;
  auto session = testing::plan_and_load(g, &st);
  EXPECT_EQ(st.in_place, 1);
  testing::Planned plan(g);  // the same plan again, to read the offsets
  EXPECT_EQ(plan.at(y).offset, plan.at(args[static_cast<size_t>(first + k.over)]).offset) << "not planned in place";

  std::vector<TensorView> in;
  for (auto& t : data) in.push_back(t.view());
  std::vector<Tensor> got = session->run(in);

  // Reference: the same kernel, out of place.
  std::vector<Tensor> ref_in = data;
  if (k.op == "Clip") {
    ref_in.push_back(testing::make<float>({}, {-1.5f}));
    ref_in.push_back(testing::make<float>({}, {2.5f}));
  }
  if (k.op == "Pow") ref_in.push_back(testing::make<float>({}, {2.0f}));
  std::vector<Tensor> want = testing::run_op(k.op, ref_in, k.attrs, 1, k.domain);
  ASSERT_EQ(got[0].bytes(), want[0].bytes());
  EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].bytes()), 0);
}

std::vector<Case> cases() {
  constexpr DType F = DType::kFloat32, I = DType::kInt32, B = DType::kBool;
  std::vector<Case> c;
  for (const char* op : {"Relu", "Neg", "Abs", "Sign", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal",
                         "Floor", "Ceil", "Round", "Sin", "Cos", "Softplus", "Softsign", "HardSigmoid", "HardSwish",
                         "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Mish", "Clip"})
    c.push_back({op, F, 1, 0});
  c.push_back({"Relu", I, 1, 0});
  c.push_back({"Not", B, 1, 0});
  c.push_back({"Swish", F, 1, 0, false, {ir::Attribute::Float("alpha", 1.f)}, ops::kGecDomain});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "PRelu", "Max", "Min", "Sum", "Mean"}) {
    c.push_back({op, F, 2, 0});
    c.push_back({op, F, 2, 1, true});  // over input 1, input 0 broadcast
  }
  c.push_back({"Mod", I, 2, 0});
  c.push_back({"Mod", I, 2, 1, true});
  c.push_back({"Mod", F, 2, 0, false, {ir::Attribute::Int("fmod", 1)}});
  for (const char* op : {"And", "Or", "Xor"}) c.push_back({op, B, 2, 0});
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    c.push_back({op, I, 2, 0});
    c.push_back({op, I, 2, 1, true});
  }
  c.push_back({"BitwiseNot", I, 1, 0});
  c.push_back({"Sum", F, 3, 0});
  c.push_back({"Max", F, 3, 0});
  c.push_back({"Pow", F, 1, 0});
  c.push_back({"Where", F, 2, 0});
  // A fused group sigmoid(x0 * x1) + x1 (registers 0, 1 the inputs), over
  // input 0, and over input 1 with input 0 broadcast.
  const std::vector<ir::Attribute> program = {
      ir::Attribute::Strings("ops", {"Mul", "Sigmoid", "Add"}),
      ir::Attribute::Ints("args", {0, 1, -1, 2, -1, -1, 3, 1, -1}),
      ir::Attribute::Floats("params", std::vector<float>(9, 0.f)),
      ir::Attribute::Ints("results", {4})};
  c.push_back({"FusedElementwise", F, 2, 0, false, program, ops::kGecDomain});
  c.push_back({"FusedElementwise", F, 2, 1, true, program, ops::kGecDomain});
  return c;
}

TEST(MemoryInPlace, EveryListedOpGivesTheOutOfPlaceResult) {
  for (const Case& k : cases()) {
    // PRelu's slope must broadcast to X (unidirectional): no "over slope" case.
    if (k.op == "PRelu" && k.over == 1) continue;
    run_case(k, 1037);
  }
}

TEST(MemoryInPlace, LargeTensorsSplitAcrossThreads) {
  for (const Case& k : cases())
    if (k.op == "Add" || k.op == "Relu" || k.op == "Sigmoid" || k.op == "Where" || k.op == "Sum")
      if (!(k.op == "PRelu" && k.over == 1)) run_case(k, 40000 + 3);
}

// FusedConv's residual Z (input 3; ops::IoPair::alone): Y is planned over Z
// when Z dies at the convolution and no other input shares its storage,
// and the run gives the bits of the same node run out of place. X read as
// Z too, or Z an alias (Reshape) of X, keeps Y apart: the convolution
// reads all of X while it writes Y.
enum class ZIs { kOwnValue, kX, kAliasOfX };

void run_fused_conv_case(ZIs z_is) {
  SCOPED_TRACE(static_cast<int>(z_is));
  constexpr int64_t C = 6, H = 5, W = 7;
  ir::Graph g;
  Tensor wt(DType::kFloat32, {C, C, 1, 1}), bt(DType::kFloat32, {C});
  for (int64_t i = 0; i < wt.numel(); ++i) wt.as<float>()[i] = static_cast<float>((i * 5) % 13) / 8.f - 0.7f;
  for (int64_t i = 0; i < C; ++i) bt.as<float>()[i] = static_cast<float>(i) / 4.f - 0.5f;
  std::vector<Tensor> data = {sample(DType::kFloat32, C * H * W, 1), sample(DType::kFloat32, C * H * W, 2)};
  for (Tensor& t : data) t = t.reshaped({1, C, H, W});
  ir::Value* x = add_op(g, "Identity", {add_input(g, "x0", DType::kFloat32, {1, C, H, W})}, "x", {1, C, H, W});
  ir::Value* z = nullptr;
  if (z_is == ZIs::kOwnValue) {
    z = add_op(g, "Identity", {add_input(g, "z0", DType::kFloat32, {1, C, H, W})}, "z", {1, C, H, W});
  } else if (z_is == ZIs::kX) {
    z = x;
    data.pop_back();
  } else {
    ir::Value* shape = g.add_constant("shape", testing::make<int64_t>({4}, {1, C, H, W}));
    z = add_op(g, "Reshape", {x, shape}, "z", {1, C, H, W});
    data.pop_back();
  }
  ir::Value* w = g.add_constant("w", wt);
  ir::Value* b = g.add_constant("b", bt);
  ir::Value* y = add_op(g, ops::kFusedConvOp, {x, w, b, z}, "y", {1, C, H, W},
                        {ir::Attribute::String("activation", "Relu")});
  y->producer()->domain = ops::kGecDomain;
  g.outputs().push_back(y);
  MemoryStats st;
  auto session = testing::plan_and_load(g, &st);
  testing::Planned plan(g);
  if (z_is == ZIs::kOwnValue) {
    EXPECT_EQ(st.in_place, 1);
    EXPECT_EQ(plan.at(y).offset, plan.at(z).offset) << "not planned in place";
  } else {
    EXPECT_EQ(st.in_place, 0);
    EXPECT_NE(plan.at(y).offset, plan.at(x).offset) << "Y over X";
  }
  std::vector<TensorView> in;
  for (auto& t : data) in.push_back(t.view());
  const std::vector<Tensor> got = session->run(in);
  // Reference: the same kernel, out of place.
  const std::vector<Tensor> want =
      testing::run_op(ops::kFusedConvOp, {data[0], wt, bt, data[z_is == ZIs::kOwnValue ? 1 : 0]},
                      {ir::Attribute::String("activation", "Relu")}, 1, ops::kGecDomain);
  ASSERT_EQ(got[0].bytes(), want[0].bytes());
  EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].bytes()), 0);
}

TEST(MemoryInPlace, FusedConvResidualOnlyWhereNoOtherInputSharesIt) {
  for (ZIs z_is : {ZIs::kOwnValue, ZIs::kX, ZIs::kAliasOfX}) run_fused_conv_case(z_is);
}

// The cases above run every op whose registration declares an in-place input
// (ops::OpTraits::may_inplace): an op marked in place without a case here fails.
TEST(MemoryInPlace, CasesCoverEveryOpThatDeclaresInPlace) {
  std::set<std::pair<std::string, std::string>> tested;
  for (const Case& k : cases()) tested.insert({k.domain, k.op});
  tested.insert({ops::kGecDomain, ops::kFusedConvOp});  // FusedConvResidualOnlyWhereNoOtherInputSharesIt
  int ops_in_place = 0;
  for (const auto& [domain, op] : ops::registered_ops()) {
    if (ops::find_schema(domain, op)->traits.may_inplace.empty()) continue;
    ++ops_in_place;
    EXPECT_TRUE(tested.count({domain, op})) << op << " declares an in-place input but no case runs it";
  }
  EXPECT_EQ(ops_in_place, static_cast<int>(tested.size()));
}

TEST(MemoryInPlace, ListCoversOnlyElementwiseOps) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", DType::kFloat32, {4});
  for (const char* op : {"Softmax", "MatMul", "Conv", "Cast", "Equal", "Transpose", "Concat"}) {
    ir::Value* y = add_op(g, op, {x}, std::string("y_") + op, {4});
    EXPECT_TRUE(in_place_inputs(*y->producer()).empty()) << op;
  }
  ir::Value* w = add_op(g, "Where", {x, x, x}, "w", {4});
  EXPECT_EQ(in_place_inputs(*w->producer()), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace gec::memory
