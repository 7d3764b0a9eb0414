// Memory planner on small graphs: reuse, aliases, in-place, Concat slices,
// offset strategies, the plan verifier, stats. Expected offsets and sizes are
// worked out by hand from the lifetimes in each graph's comment.
#include <gtest/gtest.h>

#include "memory/lifetimes.h"
#include "memory/planner.h"
#include "ops/fused_conv.h"
#include "memory_test_util.h"
#include "test_util.h"

namespace gec::memory {
namespace {

using testing::add_input;
using testing::add_op;
constexpr DType F = DType::kFloat32;

// x -> a -> b -> c -> y with `op` at each node.
ir::Graph& chain(ir::Graph& g, int64_t n, const std::string& op) {
  ir::Value* cur = add_input(g, "x", F, {n});
  for (const char* name : {"a", "b", "c", "y"}) cur = add_op(g, op, {cur}, name, {n});
  g.outputs().push_back(cur);
  return g;
}

TEST(MemoryPlanner, ChainNeedsTwoBuffersWithoutInPlace) {
  ir::Graph g;
  chain(g, 1000, "Softmax");  // 4000 bytes -> 4032 aligned; Softmax is not in place
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.no_reuse_bytes, 4 * 4032);
  EXPECT_EQ(s.lower_bound_bytes, 2 * 4032);
  EXPECT_EQ(s.arena_bytes, 2 * 4032);
  EXPECT_NEAR(s.reuse_rate, 0.5, 1e-9);
  EXPECT_EQ(s.in_place, 0);
  verify_plan(g, P.ids, P.plan);
  EXPECT_EQ(P.at(g.inputs()[0]).storage, Storage::kGraphInput);
}

TEST(MemoryPlanner, ElementwiseChainRunsInOneBuffer) {
  ir::Graph g;
  chain(g, 1000, "Relu");  // b, c, y each overwrite the input that dies at their node
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.in_place, 3);
  EXPECT_EQ(s.arena_bytes, 4032);
  EXPECT_EQ(s.lower_bound_bytes, 4032);
  for (const char* n : {"b", "c", "y"}) EXPECT_EQ(P.at(g.find_value(n)).offset, P.at(g.find_value("a")).offset) << n;
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, NoInPlaceOverAnInputStillRead) {
  // a = Relu(x); b = Relu(a); y = Add(a, b): a is read after b's node.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {16});
  ir::Value* b = add_op(g, "Relu", {a}, "b", {16});
  ir::Value* y = add_op(g, "Add", {a, b}, "y", {16});
  g.outputs().push_back(y);
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_NE(P.at(b).offset, P.at(a).offset);
  EXPECT_EQ(P.at(y).offset, P.at(a).offset);  // both die at Add: over input 0
  EXPECT_EQ(s.in_place, 1);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, NoInPlaceOverABroadcastInput) {
  // y = Mul(a[4,1], b[4,8]): only b has y's shape.
  ir::Graph g;
  ir::Value* x1 = add_input(g, "x1", F, {4, 1});
  ir::Value* x2 = add_input(g, "x2", F, {4, 8});
  ir::Value* a = add_op(g, "Relu", {x1}, "a", {4, 1});
  ir::Value* b = add_op(g, "Relu", {x2}, "b", {4, 8});
  ir::Value* y = add_op(g, "Mul", {a, b}, "y", {4, 8});
  g.outputs().push_back(y);
  testing::Planned P(g);
  EXPECT_EQ(P.at(y).offset, P.at(b).offset);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, NoInPlaceWhenElementSizesDiffer) {
  // Cast is not on the list; Equal's bool output is smaller than float input.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {64});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {64});
  ir::Value* y = add_op(g, "Equal", {a, a}, "y", {64}, {}, DType::kBool);
  g.outputs().push_back(y);
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.in_place, 0);
  EXPECT_NE(P.at(y).offset, P.at(a).offset);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, AliasSharesBytesAndExtendsLifetime) {
  // step 0: a = Relu(x); 1: r1 = Identity(a); 2: r2 = Reshape(r1, [4,4]);
  // 3: b = Softmax(x); 4: y = Add(r2', b) where r2' = Reshape(r2,[16]) at 3.5.
  // a, r1 die early but their bytes live on as r2: b must not take them.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* shape44 = g.add_constant("s44", testing::make<int64_t>({2}, {4, 4}));
  ir::Value* shape16 = g.add_constant("s16", testing::make<int64_t>({1}, {16}));
  ir::Value* a = add_op(g, "Relu", {x}, "a", {16});
  ir::Value* r1 = add_op(g, "Identity", {a}, "r1", {16});
  ir::Value* r2 = add_op(g, "Reshape", {r1, shape44}, "r2", {4, 4});
  ir::Value* b = add_op(g, "Softmax", {x}, "b", {16});
  ir::Value* r3 = add_op(g, "Reshape", {r2, shape16}, "r3", {16});
  ir::Value* y = add_op(g, "Add", {r3, b}, "y", {16});
  g.outputs().push_back(y);
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.aliases, 3);
  EXPECT_EQ(P.at(r1).offset, P.at(a).offset);
  EXPECT_EQ(P.at(r2).offset, P.at(a).offset);
  EXPECT_EQ(P.at(r3).offset, P.at(a).offset);
  EXPECT_NE(P.at(b).offset, P.at(a).offset);
  EXPECT_EQ(P.at(y).offset, P.at(a).offset);  // the a/r1/r2/r3 block dies at the Add
  EXPECT_EQ(s.arena_bytes, 128);
  EXPECT_EQ(s.lower_bound_bytes, 128);
  EXPECT_EQ(s.no_reuse_bytes, 6 * 64);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, NeverAliasesGraphInputsOrConstants) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* c = g.add_constant("c", testing::make<float>({4}, {1, 2, 3, 4}));
  ir::Value* r = add_op(g, "Identity", {x}, "r", {16});
  ir::Value* rc = add_op(g, "Identity", {c}, "rc", {4});
  g.outputs() = {r, rc};
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.aliases, 0);
  EXPECT_EQ(P.at(r).storage, Storage::kArena);
  EXPECT_EQ(P.at(rc).storage, Storage::kArena);
  EXPECT_NE(P.at(r).offset, P.at(rc).offset);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, GraphOutputIsNeverOverwritten) {
  // y1 = Relu(x) is an output and is read by y2 = Relu(y1): not in place.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* y1 = add_op(g, "Relu", {x}, "y1", {16});
  ir::Value* y2 = add_op(g, "Relu", {y1}, "y2", {16});
  g.outputs() = {y1, y2};
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_NE(P.at(y1).offset, P.at(y2).offset);
  EXPECT_EQ(s.arena_bytes, 128);
  verify_plan(g, P.ids, P.plan);
}

// a[1,2,4] and b[1,3,4] produced straight into c = Concat(a, b, axis 1).
TEST(MemoryPlanner, ConcatInputsAreProducedIntoTheirSlices) {
  ir::Graph g;
  ir::Value* x1 = add_input(g, "x1", F, {1, 2, 4});
  ir::Value* x2 = add_input(g, "x2", F, {1, 3, 4});
  ir::Value* a = add_op(g, "Relu", {x1}, "a", {1, 2, 4});
  ir::Value* b = add_op(g, "Softmax", {x2}, "b", {1, 3, 4});
  ir::Value* c = add_op(g, "Concat", {a, b}, "c", {1, 5, 4}, {ir::Attribute::Int("axis", 1)});
  ir::Value* y = add_op(g, "Softmax", {c}, "y", {1, 5, 4});
  g.outputs().push_back(y);
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.concats_in_place, 1);
  EXPECT_TRUE(P.plan.concat_done(P.ids.id(c)));
  EXPECT_EQ(P.at(a).offset, P.at(c).offset);
  EXPECT_EQ(P.at(b).offset, P.at(c).offset + 2 * 4 * 4);
  EXPECT_NE(P.at(y).offset, P.at(c).offset);
  EXPECT_EQ(s.arena_bytes, 128 + 128);  // c's 80 bytes -> 128, y 128
  verify_plan(g, P.ids, P.plan);
  // Planning leaves the graph as it was (the Concat keeps its one
  // attribute), and planning again gives the same plan.
  EXPECT_EQ(c->producer()->attrs.size(), 1u);
  testing::Planned again(g);
  EXPECT_EQ(again.plan.concat_in_place, P.plan.concat_in_place);
  EXPECT_EQ(again.at(b).offset, P.at(b).offset);
}

TEST(MemoryPlanner, ConcatIsLeftAloneWhenAnInputCannotMove) {
  struct Case {
    const char* why;
    Shape s1, s2, out;
    int64_t axis;
    bool a_twice, a_output, a_is_input;
  } cases[] = {
      {"outer dim 2", {2, 1}, {2, 3}, {2, 4}, 1, false, false, false},
      {"input read twice", {1, 2}, {1, 3}, {1, 5}, 1, true, false, false},
      {"input is a graph output", {1, 2}, {1, 3}, {1, 5}, 1, false, true, false},
      {"input is a graph input", {1, 2}, {1, 3}, {1, 5}, 1, false, false, true},
  };
  for (const Case& k : cases) {
    ir::Graph g;
    ir::Value* x1 = add_input(g, "x1", F, k.s1);
    ir::Value* x2 = add_input(g, "x2", F, k.s2);
    ir::Value* a = k.a_is_input ? x1 : add_op(g, "Relu", {x1}, "a", k.s1);
    ir::Value* b = add_op(g, "Relu", {x2}, "b", k.s2);
    ir::Value* c = add_op(g, "Concat", {a, b}, "c", k.out, {ir::Attribute::Int("axis", k.axis)});
    g.outputs().push_back(c);
    if (k.a_twice) g.outputs().push_back(add_op(g, "Relu", {a}, "a2", k.s1));
    if (k.a_output) g.outputs().push_back(a);
    testing::Planned P(g);
  const MemoryStats& s = P.stats();
    EXPECT_EQ(s.concats_in_place, 0) << k.why;
    EXPECT_FALSE(P.plan.concat_done(P.ids.id(c))) << k.why;
    verify_plan(g, P.ids, P.plan);
  }
}

TEST(MemoryPlanner, NestedConcatsShareOneBlock) {
  // c1 = Concat(a, b) [1,4], c2 = Concat(c1, d) [1,6]: a, b, d all in c2.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {1, 2});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {1, 2});
  ir::Value* b = add_op(g, "Neg", {x}, "b", {1, 2});
  ir::Value* c1 = add_op(g, "Concat", {a, b}, "c1", {1, 4}, {ir::Attribute::Int("axis", -1)});
  ir::Value* d = add_op(g, "Exp", {x}, "d", {1, 2});
  ir::Value* c2 = add_op(g, "Concat", {c1, d}, "c2", {1, 6}, {ir::Attribute::Int("axis", 1)});
  g.outputs().push_back(c2);
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(s.concats_in_place, 2);
  EXPECT_EQ(P.at(a).offset, P.at(c2).offset);
  EXPECT_EQ(P.at(b).offset, P.at(c2).offset + 8);
  EXPECT_EQ(P.at(c1).offset, P.at(c2).offset);
  EXPECT_EQ(P.at(d).offset, P.at(c2).offset + 16);
  EXPECT_EQ(s.arena_bytes, 64);
  verify_plan(g, P.ids, P.plan);
}

TEST(MemoryPlanner, DynamicShapesAndConstantsAreNotInTheArena) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{F, true, {ir::Dim{-1, "n"}}});
  g.inputs().push_back(x);
  ir::Value* c = g.add_constant("c", testing::make<float>({1}, {2}));
  ir::Node* add = g.add_node("Add", {x, c}, {"y"});
  add->output(0)->type = x->type;
  g.outputs().push_back(add->output(0));
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  EXPECT_EQ(P.at(add->output(0)).storage, Storage::kDynamic);
  EXPECT_EQ(P.at(c).storage, Storage::kWeight);
  EXPECT_EQ(s.arena_bytes, 0);
  EXPECT_EQ(s.weights_bytes, 4);
}

// ---- offset strategies ---------------------------------------------------------

void expect_valid(const std::vector<BlockSpan>& b, int64_t arena) {
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_GE(b[i].offset, 0);
    EXPECT_LE(b[i].offset + b[i].size, arena);
    for (size_t j = i + 1; j < b.size(); ++j) {
      if (b[i].first <= b[j].last && b[j].first <= b[i].last) {
        EXPECT_TRUE(b[i].offset + b[i].size <= b[j].offset || b[j].offset + b[j].size <= b[i].offset)
            << i << " and " << j;
      }
    }
  }
}

TEST(MemoryOffsets, DisjointLifetimesShareOffsetZero) {
  std::vector<BlockSpan> b = {{0, 1, 128}, {2, 3, 64}, {4, 5, 128}};
  std::string name;
  EXPECT_EQ(assign_offsets(b, 6, name), 128);
  for (const auto& x : b) EXPECT_EQ(x.offset, 0);
}

TEST(MemoryOffsets, ReachesThePeakOfLiveBytes) {
  // A[0,1] 192, B[1,2] 128, C[2,3] 128, D[2,2] 64: the peak is 320 at step 1
  // (A+B) and step 2 (B+C+D); C and D fit under A's bytes once A is dead.
  std::vector<BlockSpan> b = {{0, 1, 192}, {1, 2, 128}, {2, 3, 128}, {2, 2, 64}};
  std::string name;
  const int64_t arena = assign_offsets(b, 4, name);
  expect_valid(b, arena);
  EXPECT_EQ(arena, 320);
  EXPECT_FALSE(name.empty());
}

TEST(MemoryOffsets, EmptyPlan) {
  std::vector<BlockSpan> b;
  std::string name;
  EXPECT_EQ(assign_offsets(b, 0, name), 0);
}

// ---- verifier ------------------------------------------------------------------

TEST(MemoryVerifier, CatchesAWriteOverALiveValue) {
  // a = Relu(x); b = Relu(a); y = Add(a, b): b must not sit on a.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {16});
  ir::Value* b = add_op(g, "Relu", {a}, "b", {16});
  g.outputs().push_back(add_op(g, "Add", {a, b}, "y", {16}));
  testing::Planned P(g);
  verify_plan(g, P.ids, P.plan);
  P.at(b).offset = P.at(a).offset;
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
  P.at(b).offset = P.at(a).offset + 32;  // partial overlap
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
}

TEST(MemoryVerifier, InPlaceOnlyForListedOps) {
  ir::Graph g;
  chain(g, 16, "Softmax");
  testing::Planned P(g);
  P.at(g.find_value("b")).offset = P.at(g.find_value("a")).offset;  // a dies at b, but Softmax is not listed
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
  ir::Graph h;
  chain(h, 16, "Relu");
  testing::Planned Q(h);
  verify_plan(h, Q.ids, Q.plan);  // the same layout with Relu is right
}

// FusedConv's residual Z may take Y's bytes (ops::IoPair::alone), but not
// when Z is also its X: the convolution reads all of X while it writes Y.
TEST(MemoryVerifier, FusedConvOverItsResidualOnlyWhenXIsAnotherValue) {
  const auto graph = [](ir::Graph& g, bool z_is_x) {
    ir::Value* x0 = add_input(g, "x0", F, {1, 4, 3, 3});
    ir::Value* x = add_op(g, "Relu", {x0}, "x", {1, 4, 3, 3});
    ir::Value* z = z_is_x ? x : add_op(g, "Neg", {x0}, "z", {1, 4, 3, 3});
    ir::Value* w = g.add_constant("w", Tensor(DType::kFloat32, {4, 4, 1, 1}));
    ir::Value* b = g.add_constant("b", Tensor(DType::kFloat32, {4}));
    ir::Value* y = add_op(g, ops::kFusedConvOp, {x, w, b, z}, "y", {1, 4, 3, 3});
    y->producer()->domain = ops::kGecDomain;
    g.outputs().push_back(add_op(g, "Softmax", {y}, "s", {1, 4, 3, 3}));
    return std::make_pair(y, z);
  };
  {
    ir::Graph g;
    auto [y, z] = graph(g, false);
    testing::Planned P(g);
    ASSERT_EQ(P.at(y).offset, P.at(z).offset);  // the planner's choice
    verify_plan(g, P.ids, P.plan);
  }
  ir::Graph g;
  auto [y, z] = graph(g, true);
  testing::Planned P(g);
  ASSERT_NE(P.at(y).offset, P.at(z).offset);  // the planner keeps them apart
  P.at(y).offset = P.at(z).offset;            // a plan that does not
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
}

TEST(MemoryVerifier, CatchesOutsideAndMisaligned) {
  ir::Graph g;
  chain(g, 16, "Softmax");
  testing::Planned P(g);
  const MemoryStats& s = P.stats();
  ir::Value* b = g.find_value("b");
  const int64_t ok = P.at(b).offset;
  P.at(b).offset = s.arena_bytes;
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
  P.at(b).offset = ok + 2;  // not a multiple of 4
  P.plan.arena_bytes += 64;
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
}

TEST(MemoryVerifier, CatchesAConcatInputOutsideItsSlice) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {1, 2});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {1, 2});
  ir::Value* b = add_op(g, "Neg", {x}, "b", {1, 2});
  ir::Value* c = add_op(g, "Concat", {a, b}, "c", {1, 4}, {ir::Attribute::Int("axis", 1)});
  g.outputs().push_back(add_op(g, "Softmax", {c}, "y", {1, 4}));
  testing::Planned P(g);
  ASSERT_TRUE(P.plan.concat_done(P.ids.id(c)));
  verify_plan(g, P.ids, P.plan);
  std::swap(P.at(a).offset, P.at(b).offset);  // the inputs swapped: output would be wrong
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
}

TEST(MemoryVerifier, CatchesAnAliasOverwrittenWhileLive) {
  // r = Identity(a) (alias) is read at the end; b written over it is wrong
  // even though a itself is dead by then.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {16});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {16});
  ir::Value* r = add_op(g, "Identity", {a}, "r", {16});
  ir::Value* b = add_op(g, "Softmax", {x}, "b", {16});
  g.outputs().push_back(add_op(g, "Add", {r, b}, "y", {16}));
  testing::Planned P(g);
  verify_plan(g, P.ids, P.plan);
  P.at(b).offset = P.at(a).offset;
  EXPECT_THROW(verify_plan(g, P.ids, P.plan), Error);
}

TEST(MemoryPlanner, ArenaTensorsListsLifetimes) {
  ir::Graph g;
  chain(g, 16, "Softmax");
  testing::Planned P(g);
  auto t = arena_tensors(g, P.ids, P.plan);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "a");
  EXPECT_EQ(t[0].first, 0);
  EXPECT_EQ(t[0].last, 1);
  EXPECT_EQ(t[3].name, "y");
  EXPECT_EQ(t[3].last, 4);  // graph output: to the end
  EXPECT_EQ(t[3].bytes, 64);
}

}  // namespace
}  // namespace gec::memory
