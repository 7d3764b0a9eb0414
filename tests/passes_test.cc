// Passes: before/expected structure on small graphs, and their guards.
#include <gtest/gtest.h>

#include <algorithm>

#include "passes/pass.h"
#include "test_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;

ir::Value* input(ir::Graph& g, const std::string& name, Shape s) {
  ir::Value* v = g.add_value(name, ir::TensorType::of(DType::kFloat32, s));
  g.inputs().push_back(v);
  return v;
}

std::vector<std::string> ops_of(const ir::Graph& g) {
  std::vector<std::string> r;
  for (auto& n : g.nodes()) r.push_back(n->op_type);
  return r;
}

TEST(NoopElimination, RemovesInnerIdentityAndKeepsOutputName) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Node* a = g.add_node("Identity", {x}, {"a"});
  ir::Node* r = g.add_node("Relu", {a->output(0)}, {"r"});
  ir::Node* out = g.add_node("Identity", {r->output(0)}, {"y"});
  g.outputs().push_back(out->output(0));
  EXPECT_EQ(make_noop_elimination()->run(g), 2);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.node_list()[0]->input(0), x);
}

TEST(NoopElimination, KeepsIdentityBetweenGraphInputAndOutput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Node* id = g.add_node("Identity", {x}, {"y"});
  g.outputs().push_back(id->output(0));
  EXPECT_EQ(make_noop_elimination()->run(g), 0);
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.nodes().size(), 1u);
}

TEST(DeadNodeElimination, RemovesUnusedChainsOnly) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Node* live = g.add_node("Relu", {x}, {"y"});
  ir::Node* dead1 = g.add_node("Relu", {x}, {"d1"});
  g.add_node("Sigmoid", {dead1->output(0)}, {"d2"});
  g.outputs().push_back(live->output(0));
  EXPECT_EQ(make_dead_node_elimination()->run(g), 2);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu"}));
}

TEST(ConstantFolding, FoldsShapeArithmeticOfStaticInput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3, 4});
  ir::Node* shape = g.add_node("Shape", {x}, {"s"});
  ir::Node* reshape = g.add_node("Reshape", {x, shape->output(0)}, {"y"});
  g.outputs().push_back(reshape->output(0));
  EXPECT_GE(make_constant_folding()->run(g), 1);
  make_dead_node_elimination()->run(g);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Reshape"}));
  ir::Value* s = g.node_list()[0]->input(1);
  ASSERT_TRUE(s->is_constant());
  EXPECT_EQ(values<int64_t>(*s->constant), (std::vector<int64_t>{2, 3, 4}));
}

TEST(ConstantFolding, NeverFoldsAGraphOutputOrDynamicShape) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{DType::kFloat32, true, {ir::Dim{-1, "n"}, ir::Dim{3, ""}}});
  g.inputs().push_back(x);
  ir::Node* shape = g.add_node("Shape", {x}, {"s"});  // dynamic: cannot fold
  ir::Value* c = g.add_constant("c", make<float>({2}, {1, 2}));
  ir::Node* neg = g.add_node("Neg", {c}, {"y"});  // graph output: stays
  g.outputs().push_back(shape->output(0));
  g.outputs().push_back(neg->output(0));
  EXPECT_EQ(make_constant_folding()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 2u);
}

TEST(ConstantFolding, DoesNotGrowTheModel) {
  ir::Graph g;
  ir::Value* shape = g.add_constant("shape", make<int64_t>({2}, {1024, 1024}));
  ir::Node* cos = g.add_node("ConstantOfShape", {shape}, {"big"});
  ir::Value* x = input(g, "x", {1024, 1024});
  ir::Node* add = g.add_node("Add", {x, cos->output(0)}, {"y"});
  g.outputs().push_back(add->output(0));
  make_constant_folding()->run(g);
  EXPECT_EQ(g.nodes().size(), 2u) << "a 4 MiB ConstantOfShape must stay a node";
}

// Found by fuzzing onnx_import: a ConstantOfShape of [2^20, 2^20] made
// folding allocate 4 TiB before its size check (out of memory). The limit is
// checked before anything is allocated.
TEST(ConstantFolding, RefusesHugeOutputsBeforeAllocating) {
  ir::Graph g;
  ir::Value* shape = g.add_constant("shape", make<int64_t>({2}, {1 << 20, 1 << 20}));
  ir::Node* cos = g.add_node("ConstantOfShape", {shape}, {"huge"});
  g.outputs().push_back(cos->output(0));
  const TensorView sv = shape->constant->view();
  testing::expect_error([&] { kernels::evaluate_node(*cos, {&sv}, 1, nullptr, {}, 1 << 20); },
                        ErrorCode::kUnsupported, "outputs would take more than 1048576 bytes");
  ir::Value* x = input(g, "x", {1});
  ir::Node* add = g.add_node("Add", {x, cos->output(0)}, {"y"});
  g.outputs() = {add->output(0)};
  make_constant_folding()->run(g);
  EXPECT_EQ(g.nodes().size(), 2u) << "the ConstantOfShape stays a node";
}

TEST(ShapeInference, MakesUnprovableShapesDynamic) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3});
  ir::Value* shp = g.add_value("shp", ir::TensorType::of(DType::kInt64, {2}));
  g.inputs().push_back(shp);
  ir::Node* r = g.add_node("Reshape", {x, shp}, {"y"});
  r->output(0)->type = ir::TensorType::of(DType::kFloat32, {3, 2});  // ONNX's guess
  ir::Node* relu = g.add_node("Relu", {x}, {"z"});
  g.outputs() = {r->output(0), relu->output(0)};
  infer_static_shapes(g);
  EXPECT_FALSE(r->output(0)->type.is_static());
  EXPECT_EQ(r->output(0)->type.dims.size(), 2u);
  EXPECT_EQ(relu->output(0)->type, ir::TensorType::of(DType::kFloat32, {2, 3}));
}

TEST(PassManager, RecordsStatsAndHonoursDisabledPasses) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Node* a = g.add_node("Identity", {x}, {"a"});
  ir::Node* r = g.add_node("Relu", {a->output(0)}, {"y"});
  g.outputs().push_back(r->output(0));
  CompileOptions o;
  o.disabled_passes = {"noop_elimination"};
  o.verify_each_pass = true;
  auto stats = make_pipeline(1).run(g, o);
  for (const auto& s : stats) EXPECT_NE(s.name, "noop_elimination");
  EXPECT_EQ(g.nodes().size(), 2u);
  o.disabled_passes.clear();
  stats = make_pipeline(1).run(g, o);
  auto it = std::find_if(stats.begin(), stats.end(), [](auto& s) { return s.name == "noop_elimination"; });
  ASSERT_NE(it, stats.end());
  EXPECT_EQ(it->nodes_before, 2u);
  EXPECT_EQ(it->nodes_after, 1u);
  EXPECT_EQ(it->changes, 1);
  EXPECT_EQ(stats.back().name, "shape_inference");
}

}  // namespace
}  // namespace gec::passes
