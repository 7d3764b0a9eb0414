// The per-level pipelines, --dump-graph files and the IR -> ONNX exporter.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <filesystem>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "onnx/onnx_pb.h"
#include "ir/text.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

TEST(Pipeline, LevelsAddPassesAndEndWithShapeInference) {
  EXPECT_EQ(make_pipeline(0).names(), (std::vector<std::string>{"shape_inference"}));
  EXPECT_EQ(make_pipeline(1).names(),
            (std::vector<std::string>{"constant_folding", "noop_elimination", "cse",
                                      "dead_node_elimination", "shape_inference"}));
  auto o2 = make_pipeline(2).names();
  for (const char* p : {"conv_bn_folding", "conv_scale_folding", "gemm_bn_folding", "matmul_add_to_gemm"})
    EXPECT_NE(std::find(o2.begin(), o2.end(), p), o2.end()) << p;
  for (int level = 0; level <= 3; ++level) EXPECT_EQ(make_pipeline(level).names().back(), "shape_inference");
  EXPECT_GT(make_pipeline(3).names().size(), o2.size());
}

// x -> Conv -> Mul(per channel) -> BN -> Relu, Relu (duplicates) -> Add ->
// Reshape -> Reshape -> MatMul -> Add(bias) -> Identity -> y
void small_cnn(ir::Graph& g) {
  auto f32 = [&](const std::string& n, Shape s) {
    Tensor t(DType::kFloat32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 0.1f * static_cast<float>((i * 5) % 11) - 0.4f;
    return g.add_constant(n, std::move(t));
  };
  ir::Value* x = input(g, "x", {1, 2, 3, 3});
  ir::Node* conv = g.add_node("Conv", {x, f32("W", {4, 2, 1, 1}), f32("B", {4})}, {"conv"}, "conv");
  ir::Node* mul = g.add_node("Mul", {conv->output(0), f32("c", {4, 1, 1})}, {"mul"}, "mul");
  ir::Value* var = g.add_constant("var", make<float>({4}, {1, 2, 3, 4}));
  ir::Node* bn = g.add_node("BatchNormalization",
                            {mul->output(0), f32("s", {4}), f32("b", {4}), f32("m", {4}), var}, {"bn"}, "bn");
  ir::Node* r1 = g.add_node("Relu", {bn->output(0)}, {"r1"});
  ir::Node* r2 = g.add_node("Relu", {bn->output(0)}, {"r2"});
  ir::Node* sum = g.add_node("Add", {r1->output(0), r2->output(0)}, {"sum"});
  ir::Node* flat = g.add_node("Reshape", {sum->output(0), g.add_constant("s1", make<int64_t>({2}, {1, 36}))}, {"f1"});
  ir::Node* flat2 = g.add_node("Reshape", {flat->output(0), g.add_constant("s2", make<int64_t>({2}, {1, -1}))}, {"f2"});
  ir::Node* mm = g.add_node("MatMul", {flat2->output(0), f32("W2", {36, 3})}, {"mm"});
  ir::Node* bias = g.add_node("Add", {mm->output(0), f32("b2", {3})}, {"fc"});
  ir::Node* id = g.add_node("Identity", {bias->output(0)}, {"y"});
  g.outputs().push_back(id->output(0));
  infer_static_shapes(g);
}

TEST(Pipeline, O3MatchesO0OnASmallCnnAndFoldsIt) {
  ir::Graph g0, g3;
  small_cnn(g0);
  small_cnn(g3);
  CompileOptions o;
  o.verify_each_pass = true;
  make_pipeline(0).run(g0, o);
  make_pipeline(3).run(g3, o);
  // Conv+BN+Mul fold into the Conv, which then takes the Relu as a post-op
  // (conv_activation_fusion); the Add after the Relu stays.
  EXPECT_EQ(ops_of(g3), (std::vector<std::string>{"FusedConv", "Add", "Reshape", "Gemm"}));
  EXPECT_EQ(g3.outputs()[0]->name(), "y");
  Tensor x(DType::kFloat32, {1, 2, 3, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>(i % 4) - 1.5f;
  auto a = run_graph(g0, {{"x", x}}), b = run_graph(g3, {{"x", x}});
  ASSERT_EQ(b[0].shape(), (Shape{1, 3}));
  expect_close(values<float>(b[0]), values<float>(a[0]), 1e-5f, 1e-5f);
}

ir::Graph* small_model(ir::Graph& g) {
  ir::Value* x = input(g, "x", {1, 2});
  ir::Node* id = g.add_node("Identity", {x}, {"a"}, "id");
  ir::Node* add = g.add_node("Add", {id->output(0), g.add_constant("c", make<float>({2}, {1, 2}))}, {"y"}, "add");
  add->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 2});
  g.outputs().push_back(add->output(0));
  return &g;
}

TEST(DumpGraph, WritesOnnxAndDotBeforeAndAfterEachPass) {
  const auto dir = std::filesystem::temp_directory_path() / ("gec_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ir::Graph g;
  small_model(g);
  CompileOptions o;
  o.dump_graph_dir = dir.string();
  make_pipeline(1).run(g, o);
  for (const char* f : {"00_input.onnx", "00_input.dot", "01_constant_folding.onnx",
                        "02_noop_elimination.dot", "05_shape_inference.onnx"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  // The dump before the passes still has the Identity; the one after no-op elimination has not.
  auto before = frontend::import_onnx_file((dir / "00_input.onnx").string());
  auto after = frontend::import_onnx_file((dir / "02_noop_elimination.onnx").string());
  EXPECT_EQ(ops_of(*before.graph), (std::vector<std::string>{"Identity", "Add"}));
  EXPECT_EQ(ops_of(*after.graph), (std::vector<std::string>{"Add"}));
  // The textual IR dump parses back to the same graph.
  for (const char* f : {"00_input.gir", "02_noop_elimination.gir"}) {
    std::ifstream in(dir / f);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << f;
    auto parsed = ir::parse_graph(text.str());
    EXPECT_EQ(ir::print_graph(*parsed), text.str()) << f;
  }
  std::ifstream in(dir / "02_noop_elimination.gir");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(ops_of(*ir::parse_graph(text.str())), (std::vector<std::string>{"Add"}));
  std::filesystem::remove_all(dir);
}

TEST(OnnxExporter, ConstantsInitializersOwnDomainAndSubgraphs) {
  ir::Graph g;
  ir::Value* cond = input(g, "cond", {}, DType::kBool);
  ir::Value* x = input(g, "x", {2});
  ir::Value* w = g.add_constant("w", make<float>({2}, {3, 4}));
  auto body = std::make_shared<ir::Graph>();
  body->parent = &g;
  ir::Node* inner = body->add_node("Mul", {x, w}, {"o"});
  body->outputs().push_back(inner->output(0));
  ir::Node* iff = g.add_node("If", {cond}, {"i"}, "if");
  iff->set_attr(ir::Attribute::GraphAttr("then_branch", body));
  ir::Node* own = g.add_node("FusedThing", {iff->output(0)}, {"y"}, "f", "com.graphengine");
  own->set_attr(ir::Attribute::Floats("alpha", {0.5f}));
  g.outputs().push_back(own->output(0));

  onnx::ModelProto m;
  frontend::export_onnx(g, &m);
  const auto& gp = m.graph();
  ASSERT_EQ(gp.initializer_size(), 1);
  EXPECT_EQ(gp.initializer(0).name(), "w");
  EXPECT_EQ(gp.input_size(), 2);
  EXPECT_EQ(gp.output(0).name(), "y");
  ASSERT_EQ(gp.node_size(), 2);
  EXPECT_EQ(gp.node(1).domain(), "com.graphengine");
  EXPECT_EQ(gp.node(1).attribute(0).floats(0), 0.5f);
  ASSERT_EQ(gp.node(0).attribute(0).type(), onnx::AttributeProto::GRAPH);
  EXPECT_EQ(gp.node(0).attribute(0).g().node(0).op_type(), "Mul");
  EXPECT_EQ(gp.node(0).attribute(0).g().node(0).input(1), "w");  // outer-scope read by name
  bool has_own_domain = false;
  for (const auto& op : m.opset_import()) has_own_domain |= op.domain() == "com.graphengine";
  EXPECT_TRUE(has_own_domain);
}

TEST(OnnxExporter, ReduceAxesGoBackIntoTheAttributeForOpset17) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3});
  ir::Node* r = g.add_node("ReduceMean", {x, g.add_constant("axes", make<int64_t>({1}, {-1}))}, {"y"});
  ir::Node* s = g.add_node("ReduceSum", {x, g.add_constant("axes2", make<int64_t>({1}, {0}))}, {"z"});
  g.outputs() = {r->output(0), s->output(0)};
  onnx::ModelProto m;
  frontend::export_onnx(g, &m);
  const auto& mean = m.graph().node(0);
  EXPECT_EQ(mean.input_size(), 1);
  ASSERT_EQ(mean.attribute_size(), 1);
  EXPECT_EQ(mean.attribute(0).name(), "axes");
  EXPECT_EQ(mean.attribute(0).ints(0), -1);
  EXPECT_EQ(m.graph().node(1).input_size(), 2) << "ReduceSum-13 takes axes as an input";
}

}  // namespace
}  // namespace gec::passes
