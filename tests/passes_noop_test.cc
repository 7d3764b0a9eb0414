// No-op elimination: each rule before/after, the Reshape-merge guards (B03)
// and graph outputs keeping their names.
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

ir::Value* ints(ir::Graph& g, const std::string& n, std::vector<int64_t> v) {
  return g.add_constant(n, make<int64_t>({static_cast<int64_t>(v.size())}, v));
}

TEST(NoopElimination, RemovesEachKindOfNoop) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3});
  ir::Value* v = x;
  auto chain = [&](ir::Node* n) { v = n->output(0); return n; };
  chain(g.add_node("Relu", {v}, {"r"}));
  chain(g.add_node("Dropout", {v}, {"d"}));
  chain(g.add_node("Cast", {v}, {"c"}))->set_attr(ir::Attribute::Int("to", 1));
  chain(g.add_node("Reshape", {v, ints(g, "s", {2, 3})}, {"rs"}));
  chain(g.add_node("Transpose", {v}, {"t"}))->set_attr(ir::Attribute::Ints("perm", {0, 1}));
  chain(g.add_node("Pad", {v, ints(g, "p", {0, 0, 0, 0})}, {"pd"}));
  chain(g.add_node("Slice", {v, ints(g, "st", {0}), ints(g, "en", {100}), ints(g, "ax", {1})}, {"sl"}));
  chain(g.add_node("Unsqueeze", {v, ints(g, "ua", {0})}, {"u"}));  // [1,2,3]: stays
  chain(g.add_node("Squeeze", {v, ints(g, "sa", {0})}, {"y"}));    // back to [2,3]: stays
  g.outputs().push_back(v);
  EXPECT_EQ(make_noop_elimination()->run(g), 6);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu", "Unsqueeze", "Squeeze"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
}

TEST(NoopElimination, KeepsNodesThatChangeSomething) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3});
  ir::Node* cast = g.add_node("Cast", {x}, {"c"});
  cast->set_attr(ir::Attribute::Int("to", static_cast<int64_t>(DType::kFloat64)));
  ir::Node* t = g.add_node("Transpose", {x}, {"t"});  // default perm reverses: [3,2]
  ir::Node* sl = g.add_node("Slice", {x, ints(g, "st", {-1}), ints(g, "en", {-100}), ints(g, "ax", {1}),
                                      ints(g, "sp", {-1})}, {"s"});  // reversed: same shape, not a no-op
  ir::Value* training = g.add_constant("tm", make<bool>({}, {true}));
  ir::Node* drop = g.add_node("Dropout", {x, nullptr, training}, {"d"});
  g.outputs() = {cast->output(0), t->output(0), sl->output(0), drop->output(0)};
  EXPECT_EQ(make_noop_elimination()->run(g), 0);
  EXPECT_EQ(g.nodes().size(), 4u);
}

TEST(NoopElimination, ComposesConsecutiveTransposes) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3, 4});
  ir::Node* t1 = g.add_node("Transpose", {x}, {"t1"});
  t1->set_attr(ir::Attribute::Ints("perm", {1, 0, 2}));  // [3,2,4]
  ir::Node* t2 = g.add_node("Transpose", {t1->output(0)}, {"y"});
  t2->set_attr(ir::Attribute::Ints("perm", {0, 2, 1}));  // [3,4,2]
  g.outputs().push_back(t2->output(0));
  make_noop_elimination()->run(g);
  g.verify();
  ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Transpose"}));
  ir::Node* t = only_node(g, "Transpose");
  EXPECT_EQ(t->input(0), x);
  EXPECT_EQ(t->get_ints("perm"), (std::vector<int64_t>{1, 2, 0}));  // p1[p2[i]]
  EXPECT_EQ(t->output(0)->name(), "y");
}

// A Transpose that moves only dims of size 1 keeps every byte in place:
// it becomes a Reshape to its output shape, with the same values. One that
// reorders two dims of size > 1 stays.
TEST(NoopElimination, TransposeOfSizeOneDimsBecomesReshape) {
  struct Case {
    Shape x;
    std::vector<int64_t> perm;
    bool reshape;
  };
  for (const Case& c : {Case{{1, 5, 3}, {1, 0, 2}, true}, Case{{5, 1, 3}, {1, 0, 2}, true},
                        Case{{1, 5, 1, 3}, {2, 1, 3, 0}, true}, Case{{2, 5, 3}, {1, 0, 2}, false},
                        Case{{1, 5, 1, 3}, {0, 3, 2, 1}, false}}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", c.x);
    ir::Node* t = g.add_node("Transpose", {x}, {"t"});
    t->set_attr(ir::Attribute::Ints("perm", c.perm));
    Shape ys;
    for (int64_t a : c.perm) ys.push_back(c.x[static_cast<size_t>(a)]);
    t->output(0)->type = ir::TensorType::of(DType::kFloat32, ys);
    ir::Node* relu = g.add_node("Relu", {t->output(0)}, {"y"});
    relu->output(0)->type = t->output(0)->type;
    g.outputs().push_back(relu->output(0));
    const std::map<std::string, Tensor> feeds = {{"x", ramp_for(x)}};
    const std::vector<Tensor> want = run_graph(g, feeds);
    make_noop_elimination()->run(g);
    g.verify();
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{c.reshape ? "Reshape" : "Transpose", "Relu"}))
        << shape_str(c.x) << " perm " << shape_str(c.perm);
    const std::vector<Tensor> got = run_graph(g, feeds);
    EXPECT_EQ(got[0].shape(), ys);
    EXPECT_EQ(values<float>(got[0]), values<float>(want[0])) << shape_str(c.x);
  }
}

TEST(NoopElimination, InverseTransposesVanish) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 2, 3, 4});
  ir::Node* t1 = g.add_node("Transpose", {x}, {"nhwc"});
  t1->set_attr(ir::Attribute::Ints("perm", {0, 2, 3, 1}));
  ir::Node* t2 = g.add_node("Transpose", {t1->output(0)}, {"nchw"});
  t2->set_attr(ir::Attribute::Ints("perm", {0, 3, 1, 2}));
  ir::Node* r = g.add_node("Relu", {t2->output(0)}, {"y"});
  g.outputs().push_back(r->output(0));
  make_noop_elimination()->run(g);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(only_node(g, "Relu")->input(0), x);
}

TEST(NoopElimination, MergesReshapesWithStaticShapeAsExplicitShape) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3, 4});
  ir::Node* r1 = g.add_node("Reshape", {x, ints(g, "s1", {6, -1})}, {"a"});
  ir::Node* r2 = g.add_node("Reshape", {r1->output(0), ints(g, "s2", {0, 2, -1})}, {"y"});
  g.outputs().push_back(r2->output(0));
  make_noop_elimination()->run(g);
  g.verify();
  ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Reshape"}));
  ir::Node* r = only_node(g, "Reshape");
  EXPECT_EQ(r->input(0), x);
  ASSERT_TRUE(r->input(1)->is_constant());
  // The 0 copied dim 0 of [6,4] = 6: the merged node says so explicitly.
  EXPECT_EQ(values<int64_t>(*r->input(1)->constant), (std::vector<int64_t>{6, 2, 2}));
  EXPECT_EQ(r->get_int("allowzero", 0), 1);
}

// Shared case B03: [0,3] -Reshape(allowzero=1)-> [3,0] -Reshape([0,0])-> [3,0].
// A naive merge Reshape(x, [0,0]) would copy x's dims and give [0,3].
TEST(NoopElimination, ReshapeMergeKeepsAllowzeroSemanticsOnZeroSize) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {0, 3});
  ir::Node* r1 = g.add_node("Reshape", {x, ints(g, "s1", {3, 0})}, {"a"});
  r1->set_attr(ir::Attribute::Int("allowzero", 1));
  ir::Node* r2 = g.add_node("Reshape", {r1->output(0), ints(g, "s2", {0, 0})}, {"y"});
  g.outputs().push_back(r2->output(0));
  make_noop_elimination()->run(g);
  auto out = run_graph(g, {{"x", Tensor(DType::kFloat32, {0, 3})}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
}

TEST(NoopElimination, NeverMergesZeroCopyReshapeOfUnknownShape) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{DType::kFloat32, true, {ir::Dim{-1, "n"}, ir::Dim{3, ""}}});
  g.inputs().push_back(x);
  ir::Node* r1 = g.add_node("Reshape", {x, ints(g, "s1", {3, -1})}, {"a"});
  ir::Node* r2 = g.add_node("Reshape", {r1->output(0), ints(g, "s2", {0, 1, -1})}, {"y"});
  ir::Node* r3 = g.add_node("Reshape", {r1->output(0), ints(g, "s3", {-1})}, {"z"});
  g.outputs() = {r2->output(0), r3->output(0)};
  make_noop_elimination()->run(g);
  g.verify();
  EXPECT_EQ(r2->input(0), r1->output(0)) << "0 reads the intermediate's dim 0: no merge";
  EXPECT_EQ(r3->input(0), x) << "no 0 in the shape: merge is safe";
}

TEST(NoopElimination, NoopProducingGraphOutputHandsOverItsName) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3});
  ir::Node* relu = g.add_node("Relu", {x}, {"r"});
  ir::Node* cast = g.add_node("Cast", {relu->output(0)}, {"y"});
  cast->set_attr(ir::Attribute::Int("to", 1));
  g.outputs().push_back(cast->output(0));
  EXPECT_EQ(make_noop_elimination()->run(g), 1);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(g.outputs()[0], relu->output(0));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
}

TEST(NoopElimination, KeepsNoopBetweenGraphInputAndOutput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2});
  ir::Node* id = g.add_node("Identity", {x}, {"y"});
  g.outputs().push_back(id->output(0));
  EXPECT_EQ(make_noop_elimination()->run(g), 0);
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.nodes().size(), 1u);
}

}  // namespace
}  // namespace gec::passes
