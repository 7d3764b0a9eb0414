// IR: construction, use lists, topological order, verification.
#include <gtest/gtest.h>

#include "ir/graph.h"

namespace gec::ir {
namespace {

TEST(IrGraph, UseListsFollowRewiring) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DType::kFloat32, {2}));
  g.inputs().push_back(x);
  Node* a = g.add_node("Relu", {x}, {"a"});
  Node* b = g.add_node("Identity", {a->output(0)}, {"b"});
  g.outputs().push_back(b->output(0));
  EXPECT_EQ(x->uses().size(), 1u);
  g.replace_all_uses(b->output(0), a->output(0));
  EXPECT_EQ(g.outputs()[0], a->output(0));
  b->set_input(0, nullptr);
  EXPECT_TRUE(a->output(0)->uses().empty());
  g.remove_node(b);
  g.verify();
  EXPECT_EQ(g.nodes().size(), 1u);
}

TEST(IrGraph, TopoSortReordersAndDetectsCycles) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DType::kFloat32, {2}));
  g.inputs().push_back(x);
  Value* mid = g.add_value("mid");
  Node* consumer = g.add_node("Relu", {mid}, {"y"});
  g.add_node_with_outputs("Relu", {x}, {mid});
  g.outputs().push_back(consumer->output(0));
  EXPECT_THROW(g.verify(), gec::Error);  // consumer comes first
  g.topo_sort();
  g.verify();
  EXPECT_EQ(g.node_list().back(), consumer);

  Graph c;
  Value* p = c.add_value("p");
  Value* q = c.add_value("q");
  c.add_node_with_outputs("Relu", {q}, {p});
  c.add_node_with_outputs("Relu", {p}, {q});
  EXPECT_THROW(c.topo_sort(), gec::Error);
}

TEST(IrGraph, VerifyRejectsDoubleDefinitionAndRemovingUsedNode) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DType::kFloat32, {}));
  g.inputs().push_back(x);
  Node* a = g.add_node("Relu", {x}, {"a"});
  g.add_node("Relu", {a->output(0)}, {"b"});
  EXPECT_THROW(g.remove_node(a), gec::Error);
}

// Found by fuzzing onnx_import: removing an If whose branches read an outer
// value left the branch nodes in that value's use list after they were
// freed (use after free in verify()).
TEST(IrGraph, RemovingANodeDropsItsSubgraphsUsesOfOuterValues) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DType::kFloat32, {2}));
  Value* c = g.add_value("c", TensorType::of(DType::kBool, {}));
  g.inputs() = {x, c};
  Node* relu = g.add_node("Relu", {x}, {"a"});
  Value* a = relu->output(0);
  auto branch = std::make_shared<Graph>();
  branch->parent = &g;
  Node* neg = branch->add_node("Neg", {a}, {"t"});
  branch->outputs().push_back(neg->output(0));
  Node* iff = g.add_node("If", {c}, {"y"});
  iff->attrs.push_back(Attribute::GraphAttr("then_branch", branch));
  ASSERT_EQ(a->uses().size(), 1u);
  g.remove_node(iff);
  EXPECT_TRUE(a->uses().empty());
  g.remove_node(relu);  // now unused
  g.verify();
}

TEST(IrTensorType, StaticnessAndPrinting) {
  TensorType t = TensorType::of(DType::kFloat32, {1, 3});
  EXPECT_TRUE(t.is_static());
  t.dims[1] = Dim{-1, "n"};
  EXPECT_FALSE(t.is_static());
  EXPECT_EQ(t.str(), "float32[1,n]");
  TensorType u;
  EXPECT_FALSE(u.is_static());
  EXPECT_EQ(u.str(), "undefined[*]");
}

}  // namespace
}  // namespace gec::ir
