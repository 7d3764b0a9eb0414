// ONNX function expansion in the frontend: ops without a GraphEngine kernel
// whose ONNX schema has a function body (static or context-dependent) import
// as their body nodes. Checks the structure and runs the imported graph node
// by node; expected values are computed by hand from the operator text.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "frontend/onnx/function_inline.h"
#include "frontend/onnx/importer.h"
#include "kernels/kernel.h"
#include "onnx/onnx_pb.h"
#include "test_util.h"

namespace gec::frontend {
namespace {

using gec::testing::make;
using gec::testing::values;

void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                          const std::vector<std::string>& outs, const std::string& name) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

onnx::ModelProto new_model(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("gec-test");
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

// Runs a graph without subgraphs node by node (inputs by name).
std::vector<Tensor> run_graph(const ir::Graph& g, const std::map<std::string, Tensor>& inputs) {
  std::map<const ir::Value*, Tensor> env;
  for (const ir::Value* in : g.inputs()) env[in] = inputs.at(in->name());
  auto get = [&](const ir::Value* v) -> const Tensor& { return v->is_constant() ? *v->constant : env.at(v); };
  for (const auto& n : g.nodes()) {
    std::vector<TensorView> views(n->inputs().size());
    std::vector<const TensorView*> ptrs;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      if (!n->input(i)) {
        ptrs.push_back(nullptr);
        continue;
      }
      views[i] = get(n->input(i)).view();
      ptrs.push_back(&views[i]);
    }
    auto outs = kernels::evaluate_node(*n, ptrs, 1);
    for (size_t j = 0; j < outs.size(); ++j) env[n->output(j)] = std::move(outs[j]);
  }
  std::vector<Tensor> r;
  for (const ir::Value* o : g.outputs()) r.push_back(get(o));
  return r;
}

// NegativeLogLikelihoodLoss-13 has a context-dependent body (it depends on
// whether `weight` is given and on `reduction`).
onnx::ModelProto nll_model(const std::string& reduction, bool ignore) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  set_type(g->add_input(), "t", onnx::TensorProto::INT64, {2});
  auto* n = add_node(g, "NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}, "nll");
  auto* a = n->add_attribute();
  a->set_name("reduction");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(reduction);
  if (ignore) {
    auto* ii = n->add_attribute();
    ii->set_name("ignore_index");
    ii->set_type(onnx::AttributeProto::INT);
    ii->set_i(0);
  }
  set_type(g->add_output(), "loss", onnx::TensorProto::FLOAT, reduction == "none" ? std::vector<int64_t>{2}
                                                                                   : std::vector<int64_t>{});
  return m;
}

std::map<std::string, Tensor> nll_inputs() {
  return {{"x", make<float>({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f})}, {"t", make<int64_t>({2}, {2, 0})}};
}

// The expansion itself (the importer uses it only for ops without a kernel,
// and other ops keep gaining kernels, so the body is checked here directly).
TEST(FrontendFunction, ContextDependentBodyIsRenamed) {
  onnx::ModelProto m = nll_model("mean", false);
  const onnx::NodeProto& call = m.graph().node(0);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema("NegativeLogLikelihoodLoss", 13, "");
  ASSERT_NE(schema, nullptr);
  std::vector<onnx::TypeProto> types(2);
  types[0].mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  types[1].mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  ExpandedFunction body;
  int fresh_count = 0;
  ASSERT_TRUE(expand_function(*schema, call, types,
                              [&](const std::string& b) { return b + "#" + std::to_string(fresh_count++); }, body));
  ASSERT_GT(body.nodes.size(), 1u);
  EXPECT_EQ(body.opsets.at(""), 13);
  // The last node writes the caller's output; the body reads only the
  // caller's inputs or its own fresh names.
  bool writes_loss = false;
  for (const auto& n : body.nodes) {
    for (const auto& o : n.output()) writes_loss |= o == "loss";
    EXPECT_EQ(n.name().rfind("nll/", 0), 0u) << n.name();
    for (const auto& in : n.input()) {
      const bool fresh = std::find(body.internal_names.begin(), body.internal_names.end(), in) !=
                         body.internal_names.end();
      EXPECT_TRUE(in.empty() || in == "x" || in == "t" || fresh) << in;
    }
  }
  EXPECT_TRUE(writes_loss);
  EXPECT_EQ(fresh_count, static_cast<int>(body.internal_names.size()));
}

// MeanVarianceNormalization-13 has a static body whose ReduceMean nodes
// take `axes` by reference (ref_attr_name).
TEST(FrontendFunction, ReferencedAttributeIsBound) {
  onnx::NodeProto call;
  call.set_op_type("MeanVarianceNormalization");
  call.set_name("mvn");
  call.add_input("x");
  call.add_output("y");
  auto* a = call.add_attribute();
  a->set_name("axes");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(1);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema("MeanVarianceNormalization", 13, "");
  ASSERT_NE(schema, nullptr);
  auto axes_of_reduces = [&](const ExpandedFunction& body) {
    std::vector<std::vector<int64_t>> r;
    for (const auto& n : body.nodes)
      for (const auto& at : n.attribute()) {
        EXPECT_TRUE(at.ref_attr_name().empty()) << n.op_type() << "." << at.name();
        if (n.op_type() == "ReduceMean" && at.name() == "axes") r.emplace_back(at.ints().begin(), at.ints().end());
      }
    return r;
  };
  ExpandedFunction body;
  ASSERT_TRUE(expand_function(*schema, call, {onnx::TypeProto()}, [](const std::string& b) { return b + "#"; }, body));
  const auto given = axes_of_reduces(body);
  ASSERT_FALSE(given.empty());
  for (const auto& ax : given) EXPECT_EQ(ax, (std::vector<int64_t>{1}));
  // Without the attribute, the schema default [0, 2, 3] is bound instead.
  call.clear_attribute();
  ExpandedFunction def;
  ASSERT_TRUE(expand_function(*schema, call, {onnx::TypeProto()}, [](const std::string& b) { return b + "#"; }, def));
  const auto defaults = axes_of_reduces(def);
  ASSERT_FALSE(defaults.empty());
  for (const auto& ax : defaults) EXPECT_EQ(ax, (std::vector<int64_t>{0, 2, 3}));
}

// Celu-12's body is context dependent (alpha becomes a Constant tensor).
TEST(FrontendFunction, CeluComputes) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  auto* n = add_node(g, "Celu", {"x"}, {"y"}, "celu");
  auto* a = n->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.f);
  set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2});
  ImportResult r = import_onnx_bytes(m.SerializeAsString(), ".");
  auto out = run_graph(*r.graph, {{"x", make<float>({2}, {-1.f, 1.f})}});
  // max(0,x) + min(0, alpha * (exp(x / alpha) - 1)) = [2 (e^-0.5 - 1), 1].
  const auto v = values<float>(out[0]);
  EXPECT_NEAR(v[0], -0.786938681f, 1e-6f);
  EXPECT_NEAR(v[1], 1.f, 1e-6f);
}

TEST(FrontendFunction, NegativeLogLikelihoodLossComputes) {
  ImportResult r = import_onnx_bytes(nll_model("mean", false).SerializeAsString(), ".");
  EXPECT_EQ(r.graph->outputs()[0]->name(), "loss");
  // Picks -x[0,2] = 3 and -x[1,0] = 0.5; mean 1.75.
  auto out = run_graph(*r.graph, nll_inputs());
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_NEAR(values<float>(out[0])[0], 1.75f, 1e-6f);
}

TEST(FrontendFunction, AttributesReachTheBody) {
  ImportResult none = import_onnx_bytes(nll_model("none", false).SerializeAsString(), ".");
  auto n = run_graph(*none.graph, nll_inputs());
  EXPECT_EQ(values<float>(n[0]), (std::vector<float>{3.f, 0.5f}));
  // ignore_index 0 drops the second sample: sum = 3.
  ImportResult sum = import_onnx_bytes(nll_model("sum", true).SerializeAsString(), ".");
  auto s = run_graph(*sum.graph, nll_inputs());
  EXPECT_NEAR(values<float>(s[0])[0], 3.f, 1e-6f);
}

}  // namespace
}  // namespace gec::frontend
