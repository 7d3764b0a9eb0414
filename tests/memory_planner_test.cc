// Memory planner: offsets reuse dead tensors' bytes, the plan verifier, stats.
#include <gtest/gtest.h>

#include "memory/planner.h"
#include "test_util.h"

namespace gec::memory {
namespace {

// x -> a -> b -> c -> y: a chain where each value dies at the next node.
ir::Graph& chain(ir::Graph& g, int64_t n) {
  ir::Value* x = g.add_value("x", ir::TensorType::of(DType::kFloat32, {n}));
  g.inputs().push_back(x);
  ir::Value* cur = x;
  for (const char* name : {"a", "b", "c", "y"}) cur = g.add_node("Relu", {cur}, {name})->output(0);
  for (auto& v : g.values())
    if (v.get() != x) v->type = ir::TensorType::of(DType::kFloat32, {n});
  g.outputs().push_back(cur);
  return g;
}

TEST(MemoryPlanner, ChainNeedsTwoBuffers) {
  ir::Graph g;
  chain(g, 1000);  // 4000 bytes -> 4032 aligned
  MemoryStats s = plan_memory(g);
  EXPECT_EQ(s.no_reuse_bytes, 4 * 4032);
  EXPECT_EQ(s.lower_bound_bytes, 2 * 4032);
  EXPECT_EQ(s.arena_bytes, 2 * 4032);
  EXPECT_NEAR(s.reuse_rate, 0.5, 1e-9);
  verify_plan(g, s.arena_bytes);
  EXPECT_EQ(g.inputs()[0]->storage, ir::Storage::kGraphInput);
}

TEST(MemoryPlanner, VerifierCatchesOverlap) {
  ir::Graph g;
  chain(g, 16);
  MemoryStats s = plan_memory(g);
  ir::Value* a = g.find_value("a");
  ir::Value* b = g.find_value("b");
  b->offset = a->offset;  // a and b are live together at b's producer
  EXPECT_THROW(verify_plan(g, s.arena_bytes), Error);
  b->offset = s.arena_bytes;  // outside
  EXPECT_THROW(verify_plan(g, s.arena_bytes), Error);
}

TEST(MemoryPlanner, DynamicShapesAndConstantsAreNotInTheArena) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{DType::kFloat32, true, {ir::Dim{-1, "n"}}});
  g.inputs().push_back(x);
  ir::Value* c = g.add_constant("c", testing::make<float>({1}, {2}));
  ir::Node* add = g.add_node("Add", {x, c}, {"y"});
  add->output(0)->type = x->type;
  g.outputs().push_back(add->output(0));
  MemoryStats s = plan_memory(g);
  EXPECT_EQ(add->output(0)->storage, ir::Storage::kDynamic);
  EXPECT_EQ(c->storage, ir::Storage::kWeight);
  EXPECT_EQ(s.arena_bytes, 0);
  EXPECT_EQ(s.weights_bytes, 4);
}

}  // namespace
}  // namespace gec::memory
