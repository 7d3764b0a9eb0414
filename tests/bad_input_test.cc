// Malformed models must end in gec::Error, never a crash, a hang, a huge
// allocation or a silently wrong shape: window attributes that would make
// libonnx's shape inference divide by zero, shape arithmetic that overflows
// int64 (Tile, Range, ConstantOfShape, Expand, OneHot, Reshape, Pad, window
// geometry), and memory-planner byte sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "frontend/onnx/importer.h"
#include "gec/error.h"
#include "ir/graph.h"
#include "memory/lifetimes.h"
#include "memory/planner.h"
#include "memory_test_util.h"
#include "onnx/onnx_pb.h"
#include "ops/nn_shape.h"
#include "ops/op_schema.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec {
namespace {

using gec::testing::expect_error;

using gec::testing::make;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// ---- window attributes checked before ONNX shape inference -----------------------

void set_type(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A float output of rank 4 with symbolic dims (the checker wants a shape).
void set_out_type(onnx::ValueInfoProto* vi, const std::string& name) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"n", "c", "h", "w"}) tt->mutable_shape()->add_dim()->set_dim_param(d);
}

void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// X[1,1,8,8] -> op (W[1,1,3,3] for Conv/ConvTranspose) -> Y, with one
// window attribute set to `vals`; other window attributes valid.
onnx::ModelProto window_model(const std::string& op, const std::string& attr, const std::vector<int64_t>& vals) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("main");
  set_type(g->add_input(), "X", {1, 1, 8, 8});
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("win");
  n->add_input("X");
  const bool conv = op == "Conv" || op == "ConvTranspose";
  if (conv) {
    auto* w = g->add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 1, 3, 3}) w->add_dims(d);
    for (int i = 0; i < 9; ++i) w->add_float_data(1.f);
    n->add_input("W");
  }
  n->add_output("Y");
  if (attr != "kernel_shape") attr_ints(n, "kernel_shape", {3, 3});
  attr_ints(n, attr, vals);
  set_out_type(g->add_output(), "Y");
  return m;
}

void expect_window_refused(const std::string& op, const std::string& attr, const std::vector<int64_t>& vals) {
  SCOPED_TRACE(op + " " + attr);
  frontend::ImportOptions opt;
  opt.check_support = false;
  const std::string bytes = window_model(op, attr, vals).SerializeAsString();
  expect_error([&] { frontend::import_onnx_bytes(bytes, ".", opt); }, ErrorCode::kInvalidModel,
               "node 'win' (" + op + "): attribute " + attr);
}

TEST(BadInputWindow, ZeroStridesAreRefusedBeforeShapeInference) {
  for (const char* op : {"Conv", "MaxPool", "AveragePool", "LpPool", "ConvTranspose"})
    expect_window_refused(op, "strides", {0, 1});
}

TEST(BadInputWindow, NegativeStridesDilationsKernelPadsAreRefused) {
  expect_window_refused("Conv", "strides", {-1, 1});
  expect_window_refused("Conv", "dilations", {1, 0});
  expect_window_refused("MaxPool", "dilations", {-2, 1});
  expect_window_refused("MaxPool", "kernel_shape", {0, 3});
  expect_window_refused("AveragePool", "kernel_shape", {3, -3});
  expect_window_refused("Conv", "pads", {0, 0, -1, 0});
  expect_window_refused("ConvTranspose", "dilations", {0, 0});
  expect_window_refused("MaxPool", "strides", {int64_t{1} << 40, 1});  // above 2^31-1
}

// Found by fuzzing onnx_import: a Conv of a rank-2 graph input with 4 pads
// crashed libonnx's shape inference. Ranks that do not fit are refused first.
TEST(BadInputWindow, RanksThatDoNotFitAreRefusedBeforeShapeInference) {
  onnx::ModelProto m = testing::onnx_build::new_model(13);
  auto* g = m.mutable_graph();
  testing::onnx_build::add_input(g, "x", testing::onnx_build::kFloat, "40,8");
  testing::onnx_build::add_float_init(g, "w", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  testing::onnx_build::attr_ints(testing::onnx_build::add_node(g, "Conv", {"x", "w"}, {"y"}, "c"), "pads", {1, 1, 1, 1});
  testing::onnx_build::add_output(g, "y", testing::onnx_build::kFloat, "");
  testing::expect_error([&] { frontend::import_onnx_bytes(m.SerializeAsString(), "."); }, ErrorCode::kInvalidModel,
                        "input X has rank 2, needs N x C x D1");
}

TEST(BadInputWindow, ValidAttributesStillImport) {
  frontend::ImportOptions opt;
  opt.check_support = false;
  onnx::ModelProto m = window_model("MaxPool", "strides", {2, 2});
  auto r = frontend::import_onnx_bytes(m.SerializeAsString(), ".", opt);
  ASSERT_EQ(r.graph->node_list().size(), 1u);
  EXPECT_EQ(r.graph->node_list()[0]->op_type, "MaxPool");
}

TEST(BadInputWindow, SubgraphNodesAreChecked) {
  // If with a then_branch holding a Conv with strides 0.
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("main");
  set_type(g->add_input(), "X", {1, 1, 8, 8});
  auto* c = g->add_input();
  c->set_name("C");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  c->mutable_type()->mutable_tensor_type()->mutable_shape();
  auto* n = g->add_node();
  n->set_op_type("If");
  n->set_name("if");
  n->add_input("C");
  n->add_output("Y");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sg = a->mutable_g();
    sg->set_name(branch);
    auto* p = sg->add_node();
    p->set_op_type("MaxPool");
    p->set_name(std::string("pool_") + branch);
    p->add_input("X");
    p->add_output(std::string("Z_") + branch);
    attr_ints(p, "kernel_shape", {2, 2});
    attr_ints(p, "strides", {1, std::string(branch) == "then_branch" ? 0 : 1});
    set_out_type(sg->add_output(), std::string("Z_") + branch);
  }
  set_out_type(g->add_output(), "Y");
  frontend::ImportOptions opt;
  opt.check_support = false;
  expect_error([&] { frontend::import_onnx_bytes(m.SerializeAsString(), ".", opt); }, ErrorCode::kInvalidModel,
               "node 'pool_then_branch' (MaxPool): attribute strides");
}

// ---- window geometry arithmetic ------------------------------------------------------

TEST(BadInputWindow, GeometryOverflowIsAnError) {
  ops::WindowAttrs a;
  a.kernel = {int64_t{1} << 40};
  a.dilations = {int64_t{1} << 40};  // (k-1)*d overflows int64
  a.strides = {1};
  a.pads = {0, 0};
  a.output_padding = {0};
  expect_error([&] { ops::window_geometry("node 'c' (Conv)", a, {16}); }, ErrorCode::kInvalidModel,
               "node 'c' (Conv): (kernel-1)*dilation overflows");
  a.kernel = {3};
  a.dilations = {1};
  a.strides = {int64_t{1} << 40};
  expect_error([&] { ops::conv_transpose_geometry("node 't' (ConvTranspose)", a, {int64_t{1} << 30}); },
               ErrorCode::kInvalidModel, "node 't' (ConvTranspose)");
}

TEST(BadInputWindow, ResolveRefusesNegativeOutputPadding) {
  ops::WindowAttrs a;
  a.kernel = {3};
  a.output_padding = {-1};
  expect_error([&] { ops::resolve_window_attrs(a, 1, nullptr, "node 't' (ConvTranspose)"); },
               ErrorCode::kInvalidModel, "output_padding must be non-negative");
}

// ---- shape_numel ---------------------------------------------------------------------

TEST(BadInputTensor, ShapeNumelRefusesOverflowAndHugeCounts) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  // An empty tensor may have huge other dims: 0 elements, no overflow.
  EXPECT_EQ(shape_numel({0, kI64Max, kI64Max}), 0);
  EXPECT_EQ(shape_numel({int64_t{1} << 24, int64_t{1} << 24}), int64_t{1} << 48);
  expect_error([] { shape_numel({int64_t{1} << 32, int64_t{1} << 32}); }, ErrorCode::kInternal, "2^48");
  expect_error([] { shape_numel({int64_t{1} << 24, (int64_t{1} << 24) + 1}); }, ErrorCode::kInternal, "2^48");
  expect_error([] { shape_numel({2, -1}); }, ErrorCode::kInternal, "negative");
}

// ---- InferContext::set_output and the value-dependent ops ------------------------------

// Output 0's shape from the op's registered infer function alone.
Shape infer_shape0(const std::string& op, const std::vector<Tensor>& inputs) {
  ir::Graph g;
  ir::Node* n = g.add_node(op, {}, {"y"}, "infer_" + op);
  std::vector<TensorView> views;
  for (const Tensor& t : inputs) views.push_back(t.view());
  ops::InferContext ctx;
  ctx.node = n;
  for (const TensorView& v : views) ctx.inputs.push_back(&v);
  const ops::OpSchema* s = ops::find_schema("", op);
  if (!s) {
    ADD_FAILURE() << "no schema for " << op;
    return {};
  }
  s->infer(ctx);
  return ctx.out_shapes.at(0);
}

TEST(BadInputInfer, SetOutputRefusesMoreThan2To48Bytes) {
  ir::Graph g;
  ir::Node* n = g.add_node("Foo", {}, {"y"}, "big");
  ops::InferContext ctx;
  ctx.node = n;
  ctx.set_output(0, DType::kFloat32, {int64_t{1} << 23, int64_t{1} << 23});  // 2^46 * 4 = 2^48 bytes: allowed
  EXPECT_EQ(ctx.out_shapes[0][0], int64_t{1} << 23);
  ctx.set_output(0, DType::kFloat32, {0, kI64Max});  // empty
  expect_error([&] { ctx.set_output(0, DType::kFloat64, {int64_t{1} << 23, int64_t{1} << 23}); },
               ErrorCode::kInvalidModel, "node 'big' (Foo): output shape");
  expect_error([&] { ctx.set_output(0, DType::kUInt8, {kI64Max, 2}); }, ErrorCode::kInvalidModel,
               "larger than 2^48 bytes");
}

TEST(BadInputInfer, TileWithHugeRepeats) {
  // 2 * 2^62 overflows int64 in one dim.
  expect_error([] { testing::run_op("Tile", {make<float>({2}, {1, 2}), make<int64_t>({1}, {int64_t{1} << 62})}); },
               ErrorCode::kInvalidModel, "Tile");
  // Each dim fits, the product does not (2^32 * 2^32 elements).
  expect_error(
      [] {
        testing::run_op("Tile", {make<float>({1, 1}, {1}), make<int64_t>({2}, {int64_t{1} << 32, int64_t{1} << 32})});
      },
      ErrorCode::kInvalidModel, "2^48 bytes");
}

TEST(BadInputInfer, ConstantOfShapeExpandOneHotWithHugeDims) {
  expect_error([] { testing::run_op("ConstantOfShape", {make<int64_t>({3}, {1 << 20, 1 << 20, 1 << 20})}); },
               ErrorCode::kInvalidModel, "ConstantOfShape");
  expect_error(
      [] {
        testing::run_op("Expand", {make<float>({1}, {1}), make<int64_t>({2}, {int64_t{1} << 40, int64_t{1} << 40})});
      },
      ErrorCode::kInvalidModel, "Expand");
  expect_error(
      [] {
        testing::run_op("OneHot", {make<int64_t>({4}, {0, 1, 2, 3}), make<int64_t>({}, {int64_t{1} << 62}),
                                   make<float>({2}, {0, 1})});
      },
      ErrorCode::kInvalidModel, "OneHot");
}

TEST(BadInputInfer, RangeWithHugeSpan) {
  // limit - start overflows int64; the count (2^64-1) does not fit either.
  expect_error(
      [] {
        testing::run_op("Range", {make<int64_t>({}, {std::numeric_limits<int64_t>::min()}),
                                  make<int64_t>({}, {kI64Max}), make<int64_t>({}, {1})});
      },
      ErrorCode::kInvalidModel, "Range");
  // Fits int64 but 2^62 int64 elements are far more than 2^48 bytes.
  expect_error(
      [] {
        testing::run_op("Range", {make<int64_t>({}, {0}), make<int64_t>({}, {int64_t{1} << 62}),
                                  make<int64_t>({}, {1})});
      },
      ErrorCode::kInvalidModel, "2^48 bytes");
  // Still exact at the int64 extremes (schema only; the kernel is not the
  // subject here): ceil((2^64 - 1) / 2^62) = 4 elements.
  EXPECT_EQ(infer_shape0("Range", {make<int64_t>({}, {std::numeric_limits<int64_t>::min()}),
                                   make<int64_t>({}, {kI64Max}), make<int64_t>({}, {int64_t{1} << 62})}),
            Shape({4}));
  // Negative delta of INT64_MIN: from 0 down to INT64_MIN is one step.
  EXPECT_EQ(infer_shape0("Range", {make<int64_t>({}, {0}), make<int64_t>({}, {std::numeric_limits<int64_t>::min()}),
                                   make<int64_t>({}, {std::numeric_limits<int64_t>::min()})}),
            Shape({1}));
}

TEST(BadInputInfer, ReshapeAndPadOverflow) {
  // Known dims 2^32 * 2^32 overflow before -1 could be inferred.
  expect_error(
      [] {
        testing::run_op("Reshape", {make<float>({1}, {1}), make<int64_t>({3}, {-1, int64_t{1} << 32, int64_t{1} << 32})});
      },
      ErrorCode::kInvalidModel, "overflows int64");
  expect_error(
      [] { testing::run_op("Pad", {make<float>({1}, {1}), make<int64_t>({2}, {kI64Max, kI64Max})}); },
      ErrorCode::kInvalidModel, "overflows int64");
}

// ---- memory planner byte sizes -------------------------------------------------------

TEST(BadInputMemory, PlannerRefusesValuesPast2To48Bytes) {
  ir::Graph g;
  ir::Value* x = testing::add_input(g, "x", DType::kFloat32, {1});
  ir::Value* y = testing::add_op(g, "Relu", {x}, "huge", {int64_t{1} << 30, int64_t{1} << 30});
  g.outputs().push_back(testing::add_op(g, "Softmax", {y}, "out", {1}));
  expect_error([&] { memory::plan_memory(g, ir::ValueIndex(g)); }, ErrorCode::kInvalidModel, "value 'huge'");
}

TEST(BadInputMemory, ValueBytesIsExactBelowTheLimit) {
  ir::Graph g;
  ir::Value* v = g.add_value("v", ir::TensorType::of(DType::kFloat64, {3, 5}));
  EXPECT_EQ(memory::value_bytes(v), 120);
  ir::Value* e = g.add_value("e", ir::TensorType::of(DType::kFloat64, {0, kI64Max}));
  EXPECT_EQ(memory::value_bytes(e), 0);
  ir::Value* o = g.add_value("o", ir::TensorType::of(DType::kInt64, {kI64Max, 2}));
  expect_error([&] { memory::value_bytes(o); }, ErrorCode::kInvalidModel, "value 'o'");
}

}  // namespace
}  // namespace gec
