// The rewrite driver (passes/rewrite_rules.h): the guards it applies for every
// rule, the commit (replacement, fused_from, removal), per-rule counts,
// disabling a rule by name, and the error when rules never settle.
#include <gtest/gtest.h>

#include <set>

#include "passes/pass.h"
#include "passes_util.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

using testing::input;
using testing::ops_of;

// Neg(Neg(x)) -> x's Identity, written without any guard of its own: the
// driver's guards are all that protect it.
std::vector<RewriteRule> double_neg_rules() {
  auto match = [](const ir::Graph&, ir::Node* outer) -> std::optional<Match> {
    ir::Node* inner = outer->input(0) ? outer->input(0)->producer() : nullptr;
    if (!is_op(inner, "Neg")) return std::nullopt;
    return Match{outer, {inner, outer}, {inner->input(0)}, {}};
  };
  auto rewrite = [](ir::Graph& g, const Match& m) {
    ir::Node* id = g.add_node("Identity", {m.values[0]}, {g.unique_name("id")}, m.last->name);
    id->output(0)->type = m.last->output(0)->type;
    return id->output(0);
  };
  return {{"double_neg", {"Neg"}, "Neg(Neg(x)) -> Identity(x)", match, rewrite}};
}

ir::Value* neg(ir::Graph& g, ir::Value* x, const std::string& name) {
  ir::Node* n = g.add_node("Neg", {x}, {name}, name + "_node");
  n->output(0)->type = x->type;
  return n->output(0);
}

TEST(RewriteDriver, CommitsReplacementFusedFromAndRemovesThePattern) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  g.outputs().push_back(neg(g, neg(g, x, "a"), "y"));
  std::map<std::string, int64_t> hits;
  EXPECT_EQ(apply_rules(g, double_neg_rules(), {}, hits), 1);
  g.verify();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Identity"}));
  EXPECT_EQ(hits["double_neg"], 1);
  EXPECT_EQ(g.outputs()[0]->name(), "y");  // graph outputs keep their names
  EXPECT_EQ(g.nodes().front()->fused_from, (std::vector<std::string>{"a_node", "y_node"}));
}

TEST(RewriteDriver, GuardKeepsPatternWhoseInnerValueHasAnotherReader) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  ir::Value* a = neg(g, x, "a");
  g.outputs().push_back(neg(g, a, "y"));
  g.outputs().push_back(neg(g, a, "z"));  // a is read outside each Neg(Neg) pattern
  std::map<std::string, int64_t> hits;
  EXPECT_EQ(apply_rules(g, double_neg_rules(), {}, hits), 0);
  EXPECT_EQ(ops_of(g).size(), 3u);
}

TEST(RewriteDriver, GuardKeepsPatternWhoseInnerValueIsAGraphOutput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  ir::Value* a = neg(g, x, "a");
  g.outputs().push_back(neg(g, a, "y"));
  g.outputs().push_back(a);
  std::map<std::string, int64_t> hits;
  EXPECT_EQ(apply_rules(g, double_neg_rules(), {}, hits), 0);
}

TEST(RewriteDriver, ChainsRewriteNewlyMatchingNodes) {
  // Neg^4(x): the first rewrite leaves Neg(Neg(Identity)), which matches again.
  ir::Graph g;
  ir::Value* v = input(g, "x", {3});
  for (const char* n : {"a", "b", "c", "y"}) v = neg(g, v, n);
  g.outputs().push_back(v);
  std::map<std::string, int64_t> hits;
  EXPECT_EQ(apply_rules(g, double_neg_rules(), {}, hits), 2);
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Identity", "Identity"}));
}

TEST(RewriteDriver, DisabledRuleDoesNotFire) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  g.outputs().push_back(neg(g, neg(g, x, "a"), "y"));
  std::map<std::string, int64_t> hits;
  EXPECT_EQ(apply_rules(g, double_neg_rules(), {"double_neg"}, hits), 0);
  EXPECT_EQ(ops_of(g).size(), 2u);
}

TEST(RewriteDriver, RulesThatNeverSettleAreAnError) {
  // Relu(x) -> Relu(Relu(x)): grows forever.
  auto match = [](const ir::Graph&, ir::Node* r) -> std::optional<Match> { return Match{r, {r}, {r->input(0)}, {}}; };
  auto rewrite = [](ir::Graph& g, const Match& m) {
    ir::Node* a = g.add_node("Relu", {m.values[0]}, {g.unique_name("r")}, "r");
    ir::Node* b = g.add_node("Relu", {a->output(0)}, {g.unique_name("r")}, "r");
    return b->output(0);
  };
  std::vector<RewriteRule> rules{{"grow", {"Relu"}, "Relu(x) -> Relu(Relu(x))", match, rewrite}};
  ir::Graph g;
  ir::Value* x = input(g, "x", {3});
  ir::Node* r = g.add_node("Relu", {x}, {"y"}, "relu");
  g.outputs().push_back(r->output(0));
  std::map<std::string, int64_t> hits;
  try {
    apply_rules(g, rules, {}, hits);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("did not settle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("grow"), std::string::npos) << e.what();
  }
}

TEST(RewriteRules, EveryTableRowIsComplete) {
  const std::vector<std::string> passes = all_pass_names();
  std::set<std::string> names;
  for (const RewriteRule* r : all_rules()) {
    EXPECT_FALSE(r->name.empty());
    EXPECT_TRUE(names.insert(r->name).second) << "two rules named " << r->name;
    EXPECT_FALSE(r->roots.empty()) << r->name;
    EXPECT_NE(r->formula.find("->"), std::string::npos) << r->name << ": formula '" << r->formula << "'";
    EXPECT_TRUE(r->match && r->rewrite) << r->name;
    EXPECT_NE(std::find(passes.begin(), passes.end(), r->name), passes.end()) << r->name << " not valid for --disable-pass";
  }
  EXPECT_GE(names.size(), 12u);
}

TEST(RewriteRules, RulePassReportsHitsAndHonoursDisabledNames) {
  auto build = [](ir::Graph& g) {
    ir::Value* x = input(g, "x", {1, 2, 2, 2});
    ir::Node* c = g.add_node("Conv", {x, g.add_constant("W", gec::testing::make<float>({2, 2, 1, 1}, {1, 2, 3, 4}))},
                             {"conv"}, "conv1");
    c->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 2, 2, 2});
    ir::Node* m = g.add_node("Mul", {c->output(0), g.add_constant("s", gec::testing::make<float>({}, {2.f}))}, {"y"}, "mul");
    m->output(0)->type = c->output(0)->type;
    g.outputs().push_back(m->output(0));
  };
  {
    ir::Graph g;
    build(g);
    auto pass = make_conv_scale_folding();
    EXPECT_EQ(pass->run(g), 1);
    EXPECT_EQ(pass->rule_hits().at("conv_mul"), 1);
    EXPECT_EQ(pass->rule_hits().at("conv_add"), 0);
  }
  {
    ir::Graph g;
    build(g);
    auto pass = make_conv_scale_folding();
    pass->set_disabled({"conv_mul"});
    EXPECT_EQ(pass->run(g), 0);
    EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Conv", "Mul"}));
  }
}

}  // namespace
}  // namespace gec::passes
