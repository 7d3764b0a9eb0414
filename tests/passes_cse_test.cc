// Common subexpression elimination: what merges, and what must never merge
// (different attributes down to the float bits, nondeterministic ops,
// training-mode Dropout, subgraph ops, graph outputs).
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

TEST(Cse, MergesIdenticalNodesAndChains) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  ir::Node* a1 = g.add_node("Relu", {x}, {"a1"});
  ir::Node* a2 = g.add_node("Relu", {x}, {"a2"});
  ir::Node* b1 = g.add_node("Neg", {a1->output(0)}, {"b1"});
  ir::Node* b2 = g.add_node("Neg", {a2->output(0)}, {"b2"});
  ir::Node* sum = g.add_node("Add", {b1->output(0), b2->output(0)}, {"y"});
  g.outputs().push_back(sum->output(0));
  EXPECT_EQ(make_cse()->run(g), 2);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu", "Neg", "Add"}));
  EXPECT_EQ(sum->input(0), sum->input(1));
}

TEST(Cse, AttributesCompareExactlyFloatsBitwise) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  auto leaky = [&](const std::string& n, float alpha) {
    ir::Node* node = g.add_node("LeakyRelu", {x}, {n});
    node->set_attr(ir::Attribute::Float("alpha", alpha));
    g.outputs().push_back(node->output(0));
    return node;
  };
  leaky("p", 0.f);
  leaky("m", -0.f);  // == 0.f numerically, different bits
  leaky("q", 0.1f);
  ir::Node* t1 = g.add_node("Transpose", {x}, {"t1"});
  t1->set_attr(ir::Attribute::Ints("perm", {0}));
  ir::Node* t2 = g.add_node("Transpose", {x}, {"t2"});  // no perm attribute: not the same key
  ir::Node* add = g.add_node("Add", {t1->output(0), t2->output(0)}, {"s"});
  g.outputs().push_back(add->output(0));
  EXPECT_EQ(make_cse()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 6u);
}

TEST(Cse, MergesSameAttributesInAnyOrder) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  ir::Node* c1 = g.add_node("Clip", {x}, {"c1"});
  c1->set_attr(ir::Attribute::Int("a", 1));
  c1->set_attr(ir::Attribute::Float("b", 2.f));
  ir::Node* c2 = g.add_node("Clip", {x}, {"c2"});
  c2->set_attr(ir::Attribute::Float("b", 2.f));
  c2->set_attr(ir::Attribute::Int("a", 1));
  ir::Node* add = g.add_node("Add", {c1->output(0), c2->output(0)}, {"y"});
  g.outputs().push_back(add->output(0));
  EXPECT_EQ(make_cse()->run(g), 1);
}

TEST(Cse, NeverMergesNondeterministicOps) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  ir::Node* r1 = g.add_node("RandomNormalLike", {x}, {"r1"});
  ir::Node* r2 = g.add_node("RandomNormalLike", {x}, {"r2"});
  ir::Node* b1 = g.add_node("Bernoulli", {x}, {"b1"});
  ir::Node* b2 = g.add_node("Bernoulli", {x}, {"b2"});
  ir::Value* train = g.add_constant("train", make<bool>({}, {true}));
  ir::Node* d1 = g.add_node("Dropout", {x, nullptr, train}, {"d1"});
  ir::Node* d2 = g.add_node("Dropout", {x, nullptr, train}, {"d2"});
  ir::Node* s = g.add_node("Sum", {r1->output(0), r2->output(0), b1->output(0), b2->output(0),
                                   d1->output(0), d2->output(0)}, {"y"});
  g.outputs().push_back(s->output(0));
  EXPECT_EQ(make_cse()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 7u);
}

TEST(Cse, NeverMergesOpsWithSubgraphs) {
  ir::Graph g;
  ir::Value* cond = input(g, "cond", {}, DType::kBool);
  ir::Value* x = input(g, "x", {2});
  auto branch = [&] {
    auto b = std::make_shared<ir::Graph>();
    b->parent = &g;
    ir::Node* n = b->add_node("Relu", {x}, {"o"});
    b->outputs().push_back(n->output(0));
    return b;
  };
  std::vector<ir::Node*> ifs;
  for (int i = 0; i < 2; ++i) {
    ir::Node* n = g.add_node("If", {cond}, {"if" + std::to_string(i)});
    n->set_attr(ir::Attribute::GraphAttr("then_branch", branch()));
    n->set_attr(ir::Attribute::GraphAttr("else_branch", branch()));
    g.outputs().push_back(n->output(0));
  }
  EXPECT_EQ(make_cse()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 2u);
}

// Two input-less Optional() nodes differ only in their outputs' types
// (Optional-15's `type` attribute lives in the output value's type).
TEST(Cse, NeverMergesNodesWhoseOutputsDifferInKindOrDtype) {
  ir::Graph g;
  ir::Node* a = g.add_node("Optional", {}, {"none_f"});
  ir::Node* b = g.add_node("Optional", {}, {"none_i"});
  ir::Node* c = g.add_node("Optional", {}, {"none_s"});
  a->output(0)->type.kind = ValueKind::kOptionalTensor;
  a->output(0)->type.dtype = DType::kFloat32;
  b->output(0)->type.kind = ValueKind::kOptionalTensor;
  b->output(0)->type.dtype = DType::kInt64;
  c->output(0)->type.kind = ValueKind::kOptionalSequence;
  c->output(0)->type.dtype = DType::kFloat32;
  for (ir::Node* n : {a, b, c}) g.add_node("OptionalHasElement", {n->output(0)}, {n->output(0)->name() + "_has"});
  for (const auto& n : g.nodes())
    if (n->op_type == "OptionalHasElement") g.outputs().push_back(n->output(0));
  EXPECT_EQ(make_cse()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 6u);
}

TEST(Cse, KeepsADuplicateThatIsAGraphOutput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {4});
  ir::Node* a = g.add_node("Relu", {x}, {"a"});
  ir::Node* b = g.add_node("Relu", {x}, {"b"});
  g.outputs() = {a->output(0), b->output(0)};
  EXPECT_EQ(make_cse()->run(g), 0);
  EXPECT_EQ(g.outputs()[0]->name(), "a");
  EXPECT_EQ(g.outputs()[1]->name(), "b");
  EXPECT_EQ(g.nodes().size(), 2u);
}

TEST(Cse, DedupsSmallIdenticalConstantsOnly) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Value* c1 = g.add_constant("c1", make<float>({2}, {1.f, 2.f}));
  ir::Value* c2 = g.add_constant("c2", make<float>({2}, {1.f, 2.f}));
  ir::Value* c3 = g.add_constant("c3", make<int32_t>({2}, {1, 2}));  // another dtype
  ir::Value* c4 = g.add_constant("c4", make<float>({1, 2}, {1.f, 2.f}));  // another shape
  ir::Node* a1 = g.add_node("Add", {x, c1}, {"a1"});
  ir::Node* a2 = g.add_node("Add", {x, c2}, {"a2"});
  ir::Node* cast = g.add_node("Cast", {c3}, {"k"});
  cast->set_attr(ir::Attribute::Int("to", 1));
  ir::Node* a3 = g.add_node("Add", {x, c4}, {"a3"});
  ir::Node* s = g.add_node("Sum", {a1->output(0), a2->output(0), cast->output(0)}, {"y"});
  g.outputs() = {s->output(0), a3->output(0)};
  EXPECT_EQ(make_cse()->run(g), 2);  // c2 -> c1, then a2 -> a1
  g.verify();
  EXPECT_EQ(s->input(0), s->input(1));
  EXPECT_EQ(a3->input(1), c4);
  EXPECT_EQ(cast->input(0), c3);
}

}  // namespace
}  // namespace gec::passes
