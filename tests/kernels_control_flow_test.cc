// Loop-16 and Scan-16 kernels, run through evaluate_node with a small
// SubgraphRunner that interprets the body node by node (outer-scope values
// come from the same environment, as the executor's frame provides them).
// Expected values are worked out by hand from the ONNX operator text.
#include <map>

#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;
using ir::Graph;
using ir::TensorType;
using ir::Value;

class MapRunner final : public kernels::SubgraphRunner {
 public:
  std::map<const Value*, Tensor> env;

  // Tensor bodies only (these tests carry no sequences).
  std::vector<AnyValue> run_values(const Graph& g, const std::vector<const AnyValue*>& inputs) override {
    for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = Tensor::copy_of(inputs[i]->tensor.view());
    for (const auto& n : g.nodes()) {
      std::vector<TensorView> views(n->inputs().size());
      std::vector<const TensorView*> ptrs;
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        const Value* v = n->input(i);
        if (!v) {
          ptrs.push_back(nullptr);
          continue;
        }
        views[i] = (v->is_constant() ? *v->constant : env.at(v)).view();
        ptrs.push_back(&views[i]);
      }
      auto outs = kernels::evaluate_node(*n, ptrs, 1, this);
      for (size_t j = 0; j < outs.size(); ++j) env[n->output(j)] = std::move(outs[j]);
    }
    std::vector<AnyValue> r;
    for (const Value* o : g.outputs())
      r.push_back(AnyValue::of_tensor(Tensor::copy_of((o->is_constant() ? *o->constant : env.at(o)).view())));
    return r;
  }
};

// Runs `node` (whose inputs are graph inputs bound to `in`) with the runner.
std::vector<Tensor> run_node(ir::Node* node, MapRunner& runner, const std::vector<Tensor>& in) {
  std::vector<TensorView> views(in.size());
  std::vector<const TensorView*> ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].defined()) {
      ptrs.push_back(nullptr);
      continue;
    }
    views[i] = in[i].view();
    ptrs.push_back(&views[i]);
    runner.env[node->input(i)] = in[i];
  }
  return kernels::evaluate_node(*node, ptrs, 1, &runner);
}

// Loop body: acc_out = acc + float(i); cond_out = acc_out < 3;
// scan = acc_out * k, where k is read from the enclosing graph.
struct LoopModel {
  Graph g;
  ir::Node* loop = nullptr;
  Value* k = nullptr;
};

void build_loop(LoopModel& m) {
  Value* trips = m.g.add_value("M", TensorType::of(DType::kInt64, {}));
  Value* cond = m.g.add_value("cond", TensorType::of(DType::kBool, {}));
  Value* acc0 = m.g.add_value("acc0", TensorType::of(DType::kFloat32, {1}));
  m.k = m.g.add_value("k", TensorType::of(DType::kFloat32, {}));
  auto body = std::make_shared<Graph>();
  body->parent = &m.g;
  Value* i = body->add_value("i", TensorType::of(DType::kInt64, {}));
  Value* c = body->add_value("c", TensorType::of(DType::kBool, {}));
  Value* acc = body->add_value("acc", TensorType::of(DType::kFloat32, {1}));
  body->inputs() = {i, c, acc};
  ir::Node* cast = body->add_node("Cast", {i}, {"fi"});
  cast->attrs = {Attribute::Int("to", static_cast<int64_t>(DType::kFloat32))};
  Value* acc_out = body->add_node("Add", {acc, cast->output(0)}, {"acc_out"})->output(0);
  Value* three = body->add_constant("three", make<float>({}, {3.f}));
  Value* c_out = body->add_node("Less", {acc_out, three}, {"c_out"})->output(0);
  Value* scan = body->add_node("Mul", {acc_out, m.k}, {"scan"})->output(0);
  scan->type = TensorType::of(DType::kFloat32, {1});  // as ONNX declares body outputs
  body->outputs() = {c_out, acc_out, scan};
  m.loop = m.g.add_node("Loop", {trips, cond, acc0}, {"acc_final", "scans"}, "loop");
  m.loop->attrs = {Attribute::GraphAttr("body", body)};
}

TEST(ControlFlowLoop, TripCountConditionScanOutputsAndOuterScope) {
  LoopModel m;
  build_loop(m);
  MapRunner runner;
  runner.env[m.k] = make<float>({}, {10.f});
  // i=0: acc 1 (1<3 go on); i=1: acc 2 (go on); i=2: acc 4 (stop).
  auto r = run_node(m.loop, runner, {i64(10), make<bool>({}, {true}), make<float>({1}, {1.f})});
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{4}));
  EXPECT_EQ(r[1].shape(), (Shape{3, 1}));
  EXPECT_EQ(values<float>(r[1]), (std::vector<float>{10, 20, 40}));
  // M = 2 stops first: acc 1 then 2.
  auto two = run_node(m.loop, runner, {i64(2), make<bool>({}, {true}), make<float>({1}, {1.f})});
  EXPECT_EQ(values<float>(two[0]), (std::vector<float>{2}));
  EXPECT_EQ(values<float>(two[1]), (std::vector<float>{10, 20}));
}

TEST(ControlFlowLoop, ZeroIterationsKeepInitialValues) {
  LoopModel m;
  build_loop(m);
  MapRunner runner;
  runner.env[m.k] = make<float>({}, {10.f});
  auto z = run_node(m.loop, runner, {i64(0), make<bool>({}, {true}), make<float>({1}, {7.f})});
  EXPECT_EQ(values<float>(z[0]), (std::vector<float>{7}));
  EXPECT_EQ(z[1].shape(), (Shape{0, 1}));
  auto f = run_node(m.loop, runner, {i64(5), make<bool>({}, {false}), make<float>({1}, {7.f})});
  EXPECT_EQ(values<float>(f[0]), (std::vector<float>{7}));
  // Omitted M: the condition alone ends the loop.
  auto c = run_node(m.loop, runner, {Tensor(), make<bool>({}, {true}), make<float>({1}, {0.f})});
  // acc: 0, 1, 3 (stop: 3 < 3 is false).
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{3}));
  EXPECT_EQ(values<float>(c[1]), (std::vector<float>{0, 10, 30}));
}

// Scan body: s_out = s + x_t; y_t = s_out (a running sum).
struct ScanModel {
  Graph g;
  ir::Node* scan = nullptr;
};

void build_scan(ScanModel& m, std::vector<Attribute> attrs, bool scan8 = false) {
  Value* s0 = m.g.add_value("s0", TensorType::of(DType::kFloat32, {2}));
  Value* x = m.g.add_value("x");
  auto body = std::make_shared<Graph>();
  body->parent = &m.g;
  Value* s = body->add_value("s", TensorType::of(DType::kFloat32, {2}));
  Value* xt = body->add_value("xt", TensorType::of(DType::kFloat32, {2}));
  body->inputs() = {s, xt};
  Value* s_out = body->add_node("Add", {s, xt}, {"s_out"})->output(0);
  Value* y = body->add_node("Identity", {s_out}, {"y"})->output(0);
  y->type = TensorType::of(DType::kFloat32, {2});
  body->outputs() = {s_out, y};
  m.scan = scan8 ? m.g.add_node("Scan", {nullptr, s0, x}, {"s_final", "ys"}, "scan")
                : m.g.add_node("Scan", {s0, x}, {"s_final", "ys"}, "scan");
  attrs.push_back(Attribute::GraphAttr("body", body));
  attrs.push_back(Attribute::Int("num_scan_inputs", 1));
  m.scan->attrs = std::move(attrs);
}

Tensor x32() { return make<float>({3, 2}, {1, 2, 3, 4, 5, 6}); }
Tensor zeros2() { return make<float>({2}, {0, 0}); }

TEST(ControlFlowScan, RunningSumForwardAndReversed) {
  ScanModel f;
  build_scan(f, {});
  MapRunner runner;
  auto r = run_node(f.scan, runner, {zeros2(), x32()});
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{9, 12}));
  EXPECT_EQ(r[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(r[1]), (std::vector<float>{1, 2, 4, 6, 9, 12}));

  ScanModel rin;
  build_scan(rin, {Attribute::Ints("scan_input_directions", {1})});
  auto ri = run_node(rin.scan, runner, {zeros2(), x32()});
  EXPECT_EQ(values<float>(ri[1]), (std::vector<float>{5, 6, 8, 10, 9, 12}));

  ScanModel rout;
  build_scan(rout, {Attribute::Ints("scan_output_directions", {1})});
  auto ro = run_node(rout.scan, runner, {zeros2(), x32()});
  EXPECT_EQ(values<float>(ro[1]), (std::vector<float>{9, 12, 4, 6, 1, 2}));
}

TEST(ControlFlowScan, InputAndOutputAxes) {
  ScanModel m;
  build_scan(m, {Attribute::Ints("scan_input_axes", {1}), Attribute::Ints("scan_output_axes", {-1})});
  MapRunner runner;
  // x^T: the sequence runs along axis 1.
  auto r = run_node(m.scan, runner, {zeros2(), make<float>({2, 3}, {1, 3, 5, 2, 4, 6})});
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{9, 12}));
  EXPECT_EQ(r[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(r[1]), (std::vector<float>{1, 4, 9, 2, 6, 12}));
  // An empty sequence: the state passes through, the scan output is [2, 0].
  auto e = run_node(m.scan, runner, {zeros2(), make<float>({2, 0}, {})});
  EXPECT_EQ(values<float>(e[0]), (std::vector<float>{0, 0}));
  EXPECT_EQ(e[1].shape(), (Shape{2, 0}));
}

TEST(ControlFlowScan, Scan8BatchMajorRunsEachRow) {
  // The canonical Scan-8 form: input 0 (sequence_lens) omitted, batch_major.
  ScanModel m;
  build_scan(m, {Attribute::Int("batch_major", 1)}, /*scan8=*/true);
  MapRunner runner;
  // Row 0 is x32(); row 1 is all ones.
  auto r = run_node(m.scan, runner,
                    {Tensor(), make<float>({2, 2}, {0, 0, 10, 10}),
                     make<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1})});
  EXPECT_EQ(r[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{9, 12, 13, 13}));
  EXPECT_EQ(r[1].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<float>(r[1]), (std::vector<float>{1, 2, 4, 6, 9, 12, 11, 11, 12, 12, 13, 13}));
}

}  // namespace
}  // namespace gec
