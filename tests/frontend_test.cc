// ONNX frontend: import of small models built here with the ONNX protobuf API,
// opset canonicalization (structure checked against the operator changelog),
// error reporting, and TensorProto file I/O.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/onnx/importer.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "frontend/onnx/tensor_proto.h"
#include "onnx/onnx_pb.h"
#include "ops/op_schema.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec::frontend {
namespace {

using gec::testing::expect_error;
using gec::testing::make;
using gec::testing::values;
using ir::Graph;
using ir::Node;
using ir::Value;

using namespace gec::testing::onnx_build;

ImportResult import(const onnx::ModelProto& m, ImportOptions opt = {}, bool check_support = false) {
  opt.check_support = check_support;
  return import_onnx_bytes(m.SerializeAsString(), ".", opt);
}

std::vector<std::string> op_types(const Graph& g) {
  std::vector<std::string> r;
  for (const auto& n : g.nodes()) r.push_back(n->op_type);
  return r;
}

Node* find_op(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes())
    if (n->op_type == op) return n.get();
  return nullptr;
}

std::vector<int64_t> const_ints(const Value* v) {
  EXPECT_TRUE(v && v->is_constant());
  if (!v || !v->is_constant()) return {};
  EXPECT_EQ(v->constant->dtype(), DType::kInt64);
  return values<int64_t>(*v->constant);
}

std::string temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("gec_frontend_" + tag + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// x[1,3,8,8] -> Conv(W[4,3,3,3], B[4], pads 1) -> Relu (unnamed) -> y[1,4,8,8]
onnx::ModelProto conv_relu_model() {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,3,8,8");
  add_float_init(g, "W", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
  add_float_init(g, "B", {4}, {1, 2, 3, 4});
  auto* conv = add_node(g, "Conv", {"x", "W", "B"}, {"c"}, "conv1");
  attr_ints(conv, "pads", {1, 1, 1, 1});
  attr_ints(conv, "kernel_shape", {3, 3});
  add_node(g, "Relu", {"c"}, {"y"});
  add_output(g, "y", kFloat, "1,4,8,8");
  return m;
}

// ---- import ---------------------------------------------------------------------------

TEST(FrontendImport, ConvReluModel) {
  ImportResult r = import(conv_relu_model());
  const Graph& g = *r.graph;
  EXPECT_EQ(r.opset, 13);
  EXPECT_EQ(r.producer, "gec-test 0.1");
  EXPECT_EQ(r.onnx_nodes, 2u);
  EXPECT_EQ(g.name, "main");
  ASSERT_EQ(g.inputs().size(), 1u);  // W and B are constants, not inputs
  EXPECT_EQ(g.inputs()[0]->name(), "x");
  EXPECT_EQ(g.inputs()[0]->type.str(), "float32[1,3,8,8]");
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Conv", "Relu"}));
  Node* conv = find_op(g, "Conv");
  EXPECT_EQ(conv->name, "conv1");
  EXPECT_EQ(conv->domain, "");
  EXPECT_EQ(conv->get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  ASSERT_EQ(conv->inputs().size(), 3u);
  EXPECT_EQ(conv->input(0), g.inputs()[0]);
  ASSERT_TRUE(conv->input(1)->is_constant());
  EXPECT_EQ(conv->input(1)->name(), "W");
  EXPECT_EQ(conv->input(1)->constant->shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(values<float>(*conv->input(2)->constant), (std::vector<float>{1, 2, 3, 4}));
  // ONNX shape inference typed the intermediate value.
  EXPECT_EQ(conv->output(0)->name(), "c");
  EXPECT_EQ(conv->output(0)->type.str(), "float32[1,4,8,8]");
  Node* relu = find_op(g, "Relu");
  EXPECT_EQ(relu->name, "Relu_1");  // unnamed: <OpType>_<index>
  EXPECT_EQ(relu->input(0), conv->output(0));
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0], relu->output(0));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  g.verify();
}

TEST(FrontendImport, ConstantNodesBecomeConstantValues) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  auto* c1 = add_node(g, "Constant", {}, {"two"}, "c_tensor");
  auto* t = attr(c1, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(kFloat);
  t->add_dims(2);
  t->add_float_data(2.f);
  t->add_float_data(3.f);
  attr_f(add_node(g, "Constant", {}, {"half"}), "value_float", 0.5f);
  attr_ints(add_node(g, "Constant", {}, {"shape"}), "value_ints", {2, 1});
  attr_i(add_node(g, "Constant", {}, {"seven"}), "value_int", 7);
  attr_s(add_node(g, "Constant", {}, {"word"}), "value_string", "hello");
  add_node(g, "Mul", {"x", "two"}, {"m"}, "mul");
  add_node(g, "Add", {"m", "half"}, {"a"}, "add");
  add_node(g, "Reshape", {"a", "shape"}, {"y"}, "reshape");
  add_output(g, "y", kFloat, "2,1");
  add_output(g, "seven", kInt64, "");
  add_output(g, "word", onnx::TensorProto::STRING, "");
  ImportResult r = import(m);
  const Graph& gr = *r.graph;
  EXPECT_EQ(r.onnx_nodes, 8u);
  EXPECT_EQ(op_types(gr), (std::vector<std::string>{"Mul", "Add", "Reshape"}));
  Value* two = find_op(gr, "Mul")->input(1);
  ASSERT_TRUE(two->is_constant());
  EXPECT_EQ(two->name(), "two");
  EXPECT_EQ(two->type.str(), "float32[2]");
  EXPECT_EQ(values<float>(*two->constant), (std::vector<float>{2, 3}));
  Value* half = find_op(gr, "Add")->input(1);
  ASSERT_TRUE(half->is_constant());
  EXPECT_EQ(half->constant->shape(), Shape{});
  EXPECT_EQ(values<float>(*half->constant), (std::vector<float>{0.5f}));
  EXPECT_EQ(const_ints(find_op(gr, "Reshape")->input(1)), (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(gr.outputs().size(), 3u);
  EXPECT_EQ(values<int64_t>(*gr.outputs()[1]->constant), (std::vector<int64_t>{7}));
  EXPECT_EQ(gr.outputs()[2]->constant->as<std::string>()[0], "hello");
  EXPECT_EQ(gr.outputs()[0]->type.str(), "float32[2,1]");
}

TEST(FrontendImport, InputThatIsAlsoInitializerIsConstant) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  add_input(g, "bias", kFloat, "2");
  add_float_init(g, "bias", {2}, {10, 20});
  add_node(g, "Add", {"x", "bias"}, {"y"}, "add");
  add_output(g, "y", kFloat, "2");
  ImportResult r = import(m);
  ASSERT_EQ(r.graph->inputs().size(), 1u);
  EXPECT_EQ(r.graph->inputs()[0]->name(), "x");
  Value* bias = find_op(*r.graph, "Add")->input(1);
  ASSERT_TRUE(bias->is_constant());
  EXPECT_EQ(values<float>(*bias->constant), (std::vector<float>{10, 20}));
}

// If(cond) with branches that read the outer `x` and outer initializer `one`
// directly, and a Constant inside a branch.
TEST(FrontendImport, IfWithOuterScopeReads) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "cond", kBool, "");
  add_input(g, "x", kFloat, "2");
  add_float_init(g, "one", {}, {1.f});
  auto* iff = add_node(g, "If", {"cond"}, {"y"}, "branch");
  auto* then_g = attr(iff, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  add_node(then_g, "Add", {"x", "one"}, {"t_out"}, "then_add");
  add_output(then_g, "t_out", kFloat, "2");
  auto* else_g = attr(iff, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  attr_f(add_node(else_g, "Constant", {}, {"k"}, "else_k"), "value_float", 3.f);
  add_node(else_g, "Mul", {"x", "k"}, {"e_out"}, "else_mul");
  add_output(else_g, "e_out", kFloat, "2");
  add_output(g, "y", kFloat, "2");

  ImportResult r = import(m);
  const Graph& main = *r.graph;
  EXPECT_EQ(r.onnx_nodes, 4u);
  ASSERT_EQ(main.nodes().size(), 1u);
  Node* n = find_op(main, "If");
  ASSERT_NE(n, nullptr);
  Graph* then_ir = n->get_graph("then_branch");
  Graph* else_ir = n->get_graph("else_branch");
  ASSERT_TRUE(then_ir && else_ir);
  EXPECT_EQ(then_ir->parent, &main);
  EXPECT_EQ(else_ir->parent, &main);
  EXPECT_EQ(then_ir->name, "then");
  Node* add = find_op(*then_ir, "Add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0), main.find_value("x"));    // outer values referenced directly
  EXPECT_EQ(add->input(1), main.find_value("one"));
  EXPECT_EQ(add->input(1)->owner(), &main);
  ASSERT_EQ(then_ir->outputs().size(), 1u);
  EXPECT_EQ(then_ir->outputs()[0], add->output(0));
  Node* mul = find_op(*else_ir, "Mul");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->input(0), main.find_value("x"));
  ASSERT_TRUE(mul->input(1)->is_constant());
  EXPECT_EQ(mul->input(1)->owner(), else_ir);  // the Constant lives in its branch
  EXPECT_EQ(main.count_nodes_recursive(), 3u);
  main.verify();
}

// Loop body: its own inputs (iteration, condition, carried value) become the
// subgraph's inputs; `x` is read from the main graph.
TEST(FrontendImport, LoopBodyIsSubgraphWithInputs) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "trip", kInt64, "");
  add_input(g, "x", kFloat, "2");
  auto* loop = add_node(g, "Loop", {"trip", "", "x"}, {"y"}, "loop");
  auto* body = attr(loop, "body", onnx::AttributeProto::GRAPH)->mutable_g();
  body->set_name("body");
  add_input(body, "i", kInt64, "");
  add_input(body, "c", kBool, "");
  add_input(body, "acc", kFloat, "2");
  add_node(body, "Identity", {"c"}, {"c_out"});
  add_node(body, "Add", {"acc", "x"}, {"acc_out"});
  add_output(body, "c_out", kBool, "");
  add_output(body, "acc_out", kFloat, "2");
  add_output(g, "y", kFloat, "2");
  ImportResult r = import(m);
  Node* n = find_op(*r.graph, "Loop");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->inputs().size(), 3u);
  EXPECT_EQ(n->input(1), nullptr);  // omitted optional condition
  Graph* b = n->get_graph("body");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->inputs().size(), 3u);
  EXPECT_EQ(b->inputs()[2]->name(), "acc");
  EXPECT_EQ(b->inputs()[2]->type.str(), "float32[2]");
  Node* add = find_op(*b, "Add");
  EXPECT_EQ(add->input(0), b->inputs()[2]);
  EXPECT_EQ(add->input(1), r.graph->find_value("x"));
  EXPECT_EQ(add->name, "Add_2");  // numbered in file order, subgraphs after their node
  EXPECT_EQ(find_op(*b, "Identity")->name, "Identity_1");
  EXPECT_EQ(r.onnx_nodes, 3u);
  r.graph->verify();
}

TEST(FrontendImport, ExternalDataRelativeToModelFolder) {
  const std::string dir = temp_dir("extdata");
  // weights.bin: 8 junk bytes, then W = {1.5, -2, 4} as little-endian float32.
  const float w[3] = {1.5f, -2.f, 4.f};
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    f.write("JUNKJUNK", 8);
    f.write(reinterpret_cast<const char*>(w), sizeof w);
  }
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "3");
  onnx::TensorProto* t = g->add_initializer();
  t->set_name("W");
  t->set_data_type(kFloat);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "weights.bin");
  kv("offset", "8");
  kv("length", "12");
  add_node(g, "Mul", {"x", "W"}, {"y"}, "mul");
  add_output(g, "y", kFloat, "3");
  {
    std::ofstream f(dir + "/model.onnx", std::ios::binary);
    m.SerializeToOstream(&f);
  }
  ImportOptions opt;
  opt.check_support = false;
  ImportResult r = import_onnx_file(dir + "/model.onnx", opt);
  Value* W = find_op(*r.graph, "Mul")->input(1);
  ASSERT_TRUE(W->is_constant());
  EXPECT_EQ(values<float>(*W->constant), (std::vector<float>{1.5f, -2.f, 4.f}));

  // The same bytes loaded from another folder: the checker finds no weights.bin.
  expect_error([&] { import_onnx_bytes(m.SerializeAsString(), dir + "/nowhere", opt); }, ErrorCode::kInvalidModel,
               "weights.bin");
  // A location that leaves the model folder is refused.
  t->mutable_external_data(0)->set_value("../" + std::filesystem::path(dir).filename().string() + "/weights.bin");
  expect_error([&] { import_onnx_bytes(m.SerializeAsString(), dir, opt); }, ErrorCode::kInvalidModel,
               "inside the model folder");
  std::filesystem::remove_all(dir);
}

// External data a model names is read only from regular files inside the
// model folder after following symlinks, and its size is checked before the
// tensor is allocated: a symlink to /etc/passwd, a path through a folder
// symlink to /, a FIFO (which would block the reader) and a tensor declared
// [2^31] over a small file are each refused with a clear error.
TEST(FrontendImport, ExternalDataStaysInsideTheFolderAndIsARegularFile) {
  const std::string dir = temp_dir("extdata_hostile");
  {
    std::ofstream f(dir + "/small.bin", std::ios::binary);
    f.write("0123456789ab", 12);
  }
  std::filesystem::create_symlink("/etc/passwd", dir + "/passwd.bin");
  std::filesystem::create_symlink("/", dir + "/sub");
  ASSERT_EQ(::mkfifo((dir + "/fifo.bin").c_str(), 0600), 0);
  auto model_with = [&](const std::string& location, int64_t dim) {
    onnx::ModelProto m = new_model(13);
    auto* g = m.mutable_graph();
    add_input(g, "x", kFloat, std::to_string(dim));
    onnx::TensorProto* t = g->add_initializer();
    t->set_name("W");
    t->set_data_type(kFloat);
    t->add_dims(dim);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    add_node(g, "Mul", {"x", "W"}, {"y"}, "mul");
    add_output(g, "y", kFloat, std::to_string(dim));
    return m.SerializeAsString();
  };
  ImportOptions opt;
  opt.check_support = false;
  EXPECT_NO_THROW(import_onnx_bytes(model_with("small.bin", 3), dir, opt));
  expect_error([&] { import_onnx_bytes(model_with("passwd.bin", 3), dir, opt); }, ErrorCode::kInvalidModel,
               "outside the folder");
  expect_error([&] { import_onnx_bytes(model_with("sub/etc/passwd", 3), dir, opt); }, ErrorCode::kInvalidModel,
               "outside the folder");
  expect_error([&] { import_onnx_bytes(model_with("fifo.bin", 3), dir, opt); }, ErrorCode::kIo,
               "not a regular file");
  expect_error([&] { import_onnx_bytes(model_with("small.bin", int64_t{1} << 31), dir, opt); }, ErrorCode::kIo,
               "has 12 bytes, need 8589934592");
  std::filesystem::remove_all(dir);
}

// y = If(c) { If(c) { ... Identity(x) ... } } else Identity(x), `depth`
// Ifs deep: every branch reads x and c from the main graph.
std::string nested_ifs(int depth) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  add_input(g, "c", onnx::TensorProto::BOOL, "");
  onnx::GraphProto* cur = g;
  std::string out = "y";
  for (int d = 0; d < depth; ++d) {
    onnx::NodeProto* n = add_node(cur, "If", {"c"}, {out}, "if" + std::to_string(d));
    onnx::GraphProto* else_g = attr(n, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
    else_g->set_name("else" + std::to_string(d));
    add_node(else_g, "Identity", {"x"}, {"e" + std::to_string(d)});
    add_output(else_g, "e" + std::to_string(d), kFloat, "2");
    onnx::GraphProto* then_g = attr(n, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
    then_g->set_name("then" + std::to_string(d));
    out = "t" + std::to_string(d);
    add_output(then_g, out, kFloat, "2");
    cur = then_g;
  }
  add_node(cur, "Identity", {"x"}, {out});
  add_output(g, "y", kFloat, "2");
  return m.SerializeAsString();
}

// Subgraphs nest up to 64 deep, as deep as a .gom may (protobuf's default
// recursion limit of 100 messages stopped at about 30); deeper is refused
// naming the cause.
TEST(FrontendImport, DeeplyNestedSubgraphs) {
  ImportOptions opt;
  opt.check_support = false;
  EXPECT_NO_THROW(import_onnx_bytes(nested_ifs(64), ".", opt));  // the .gom reader's limit too
  expect_error([&] { import_onnx_bytes(nested_ifs(65), ".", opt); }, ErrorCode::kUnsupported,
               "subgraphs nested 65 deep; at most 64");
  expect_error([&] { import_onnx_bytes(nested_ifs(200), ".", opt); }, ErrorCode::kInvalidModel,
               "nested deeper than");
}

TEST(FrontendImport, InputShapesOverrideSymbolicDims) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "N,3,H,W");
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y", kFloat, "N,3,H,W");

  ImportResult plain = import(m);
  EXPECT_EQ(plain.graph->inputs()[0]->type.str(), "float32[N,3,H,W]");
  EXPECT_EQ(plain.graph->inputs()[0]->type.dims[0].value, -1);
  EXPECT_EQ(plain.graph->inputs()[0]->type.dims[0].param, "N");

  ImportOptions opt;
  opt.input_shapes["x"] = {2, 3, 4, 5};
  ImportResult fixed = import(m, opt);
  EXPECT_EQ(fixed.graph->inputs()[0]->type.str(), "float32[2,3,4,5]");
  EXPECT_TRUE(fixed.graph->inputs()[0]->type.is_static());
  EXPECT_EQ(find_op(*fixed.graph, "Relu")->output(0)->type.str(), "float32[2,3,4,5]");

  ImportOptions unknown;
  unknown.input_shapes["nope"] = {1};
  expect_error([&] { import(m, unknown); }, ErrorCode::kInvalidArgument, "no input 'nope'");
  ImportOptions rank;
  rank.input_shapes["x"] = {1, 3, 4};
  expect_error([&] { import(m, rank); }, ErrorCode::kInvalidArgument, "float32[N,3,H,W]");
  ImportOptions dim;
  dim.input_shapes["x"] = {1, 4, 8, 8};  // dim 1 is fixed at 3
  expect_error([&] { import(m, dim); }, ErrorCode::kInvalidArgument, "input shape x:[1,4,8,8]");
}

// ---- errors ---------------------------------------------------------------------------

TEST(FrontendErrors, TruncatedBytesAreInvalidModel) {
  const std::string bytes = conv_relu_model().SerializeAsString();
  expect_error([&] { import_onnx_bytes(bytes.substr(0, bytes.size() / 2), "."); }, ErrorCode::kInvalidModel,
               "not a valid ONNX model");
  ImportOptions named;
  named.source_name = "garbage.onnx";
  expect_error([&] { import_onnx_bytes("\xff\xff\xff garbage", ".", named); }, ErrorCode::kInvalidModel,
               "garbage.onnx: not a valid ONNX model");
  const std::string dir = temp_dir("trunc");
  {
    std::ofstream f(dir + "/cut.onnx", std::ios::binary);
    f << bytes.substr(0, bytes.size() - 7);
  }
  expect_error([&] { import_onnx_file(dir + "/cut.onnx"); }, ErrorCode::kInvalidModel,
               dir + "/cut.onnx: not a valid ONNX model");
  expect_error([&] { import_onnx_file(dir + "/missing.onnx"); }, ErrorCode::kIo, "missing.onnx");
  std::filesystem::remove_all(dir);
}

TEST(FrontendErrors, CheckerRejectionIsInvalidModel) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  add_node(g, "Relu", {"x", "x"}, {"y"}, "two_input_relu");  // Relu-14 takes one input
  add_output(g, "y", kFloat, "2");
  expect_error([&] { import(m); }, ErrorCode::kInvalidModel, "rejected by the ONNX checker");
  try {
    import(m);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "message must be one line";
  }
  // A node reading a value that no earlier node defines.
  onnx::ModelProto m2 = new_model(13);
  add_input(m2.mutable_graph(), "x", kFloat, "2");
  add_node(m2.mutable_graph(), "Relu", {"ghost"}, {"y"}, "r");
  add_output(m2.mutable_graph(), "y", kFloat, "2");
  expect_error([&] { import(m2); }, ErrorCode::kInvalidModel, "ghost");
}

// Opsets 18..23 import (tests/new_opsets runs them against ONNX Runtime);
// 24 and later are refused by name.
TEST(FrontendErrors, OpsetAboveTwentyThree) {
  onnx::ModelProto m = conv_relu_model();
  for (int64_t v : {18, 21, 23}) {
    m.mutable_opset_import(0)->set_version(v);
    m.set_ir_version(v >= 21 ? 10 : 8);
    EXPECT_EQ(op_types(*import(m).graph), (std::vector<std::string>{"Conv", "Relu"})) << "opset " << v;
  }
  m.mutable_opset_import(0)->set_version(24);
  expect_error([&] { import(m); }, ErrorCode::kUnsupported, "model uses ai.onnx opset 24; supported 1..23");
}

// Found by fuzzing onnx_import: ai.onnx imported twice (14 and 23) crashed
// libonnx's shape inference. A domain listed twice is an invalid model.
TEST(FrontendErrors, DomainImportedTwiceIsInvalid) {
  onnx::ModelProto m = conv_relu_model();
  m.add_opset_import()->set_version(23);
  expect_error([&] { import(m); }, ErrorCode::kInvalidModel, "opset_import lists domain ai.onnx twice");
}

// libonnx 1.12 does not know an opset-18 node that uses the new signature;
// the checker skips it, and our own checks still catch what is malformed
// around it.
TEST(FrontendErrors, NewOpsetNodesAreCheckedByUs) {
  onnx::ModelProto m = new_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2,3");
  add_int64_init(g, "axes", {1}, {1});
  add_node(g, "ReduceMax", {"x", "axes"}, {"r"}, "reduce");
  add_node(g, "Relu", {"ghost"}, {"y"}, "relu");
  add_output(g, "y", kFloat, "2,1");
  expect_error([&] { import(m); }, ErrorCode::kInvalidModel, "ghost");
  // A removed attribute the older schema would accept: refused, not ignored.
  onnx::ModelProto ra = new_model(18);
  add_input(ra.mutable_graph(), "x", kFloat, "2,3");
  attr_ints(add_node(ra.mutable_graph(), "ReduceMean", {"x"}, {"y"}, "mean"), "axes", {1});
  add_output(ra.mutable_graph(), "y", kFloat, "2,1");
  expect_error([&] { import(ra); }, ErrorCode::kInvalidModel, "attribute axes was removed at opset 18");
  // A new op with the wrong arity (libonnx has no schema to check it by).
  onnx::ModelProto ge = new_model(20);
  add_input(ge.mutable_graph(), "x", kFloat, "2");
  add_node(ge.mutable_graph(), "Gelu", {"x", "x"}, {"y"}, "gelu");
  add_output(ge.mutable_graph(), "y", kFloat, "2");
  expect_error([&] { import(ge); }, ErrorCode::kInvalidModel, "node 'gelu' (Gelu-20): takes 1 inputs, not 2");
  // Resize-18 antialias is 0 or 1.
  onnx::ModelProto r = new_model(18);
  auto* rg = r.mutable_graph();
  add_input(rg, "x", kFloat, "1,1,4,4");
  add_float_init(rg, "scales", {4}, {1, 1, 0.5f, 0.5f});
  auto* n = add_node(rg, "Resize", {"x", "", "scales"}, {"y"}, "shrink");
  attr_i(n, "antialias", 2);
  attr_s(n, "mode", "linear");
  add_output(rg, "y", kFloat, "1,1,2,2");
  expect_error([&] { import(r); }, ErrorCode::kInvalidModel, "node 'shrink' (Resize-18): antialias must be 0 or 1, got 2");
}

// Found by fuzzing onnx_import: names and strings of a model are bytes;
// one that is not UTF-8 made the compile report's JSON throw (terminate).
// The report replaces it with U+FFFD.
TEST(FrontendErrors, NonUtf8NamesReachTheReportReplaced) {
  onnx::ModelProto m = conv_relu_model();
  m.set_producer_name(std::string("gec-t\xaf\xff", 7));
  m.mutable_graph()->mutable_node(0)->set_name(std::string("conv\xc3", 5));
  const std::string bytes = m.SerializeAsString();
  CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const std::string gom(cm.gom->begin(), cm.gom->end());  // METADATA holds the producer
  EXPECT_NE(gom.find("gec-t\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos);
  EXPECT_NO_THROW(nlohmann::json::parse(cm.report_json));
  EXPECT_GT(Session::load_from_bytes(cm.gom)->node_count(), 0u);
}

// Every unsupported op of a model in one error, each once with its first
// node and the count of the others.
TEST(FrontendErrors, AllUnsupportedOpsInOneMessage) {
  onnx::ModelProto m = new_model(23);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,2,4,4");
  add_input(g, "img", onnx::TensorProto::UINT8, "100");
  add_node(g, "Attention", {"x", "x", "x"}, {"a"}, "attn1");
  add_node(g, "Attention", {"a", "a", "a"}, {"b"}, "attn2");
  add_node(g, "Relu", {"b"}, {"y"}, "ok");
  add_node(g, "ImageDecoder", {"img"}, {"z"}, "decode");
  add_output(g, "y", kFloat, "");
  add_output(g, "z", onnx::TensorProto::UINT8, "");
  try {
    import(m, {}, /*check_support=*/true);
    ADD_FAILURE() << "must fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(msg.find("2 ops are not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 'attn1' op Attention (domain ai.onnx, opset 23)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(and 1 more node)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 'decode' op ImageDecoder"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("attn2"), std::string::npos) << "each op once: " << msg;
  }
}

// Opsets below 7 import node by node: Conv-1 and Relu-6 are still current at
// opset 7; Add-6 with broadcast/axis becomes Unsqueeze + Add; Dropout-6
// without is_test is training mode and is refused.
TEST(FrontendErrors, OpsetSixAcceptsOnlyKnownForms) {
  onnx::ModelProto ok = conv_relu_model();
  ok.mutable_opset_import(0)->set_version(6);
  ImportResult r = import(ok);
  EXPECT_EQ(op_types(*r.graph), (std::vector<std::string>{"Conv", "Relu"}));

  onnx::ModelProto m = new_model(6, 3);
  auto* g = m.mutable_graph();
  add_input(g, "a", kFloat, "2,3,4");
  add_input(g, "b", kFloat, "3");
  auto* add = add_node(g, "Add", {"a", "b"}, {"y"}, "add6");
  attr_i(add, "broadcast", 1);
  attr_i(add, "axis", 1);
  add_output(g, "y", kFloat, "2,3,4");
  ImportResult rb = import(m);
  EXPECT_EQ(op_types(*rb.graph), (std::vector<std::string>{"Unsqueeze", "Add"}));
  EXPECT_EQ(const_ints(find_op(*rb.graph, "Unsqueeze")->input(1)), (std::vector<int64_t>{1}));
  EXPECT_FALSE(find_op(*rb.graph, "Add")->has_attr("broadcast"));

  onnx::ModelProto d = new_model(6, 3);
  auto* gd = d.mutable_graph();
  add_input(gd, "x", kFloat, "4");
  add_node(gd, "Dropout", {"x"}, {"y"}, "drop6");
  add_output(gd, "y", kFloat, "4");
  expect_error([&] { import(d); }, ErrorCode::kUnsupported, "node 'drop6' (Dropout-6): is_test = 0 is training mode");

  // Relu-1 differs from Relu-6 only by consumed_inputs, which is dropped.
  onnx::ModelProto v1 = new_model(1, 3);
  auto* g1 = v1.mutable_graph();
  add_input(g1, "x", kFloat, "4");
  attr_ints(add_node(g1, "Relu", {"x"}, {"y"}, "relu1"), "consumed_inputs", {0});
  add_output(g1, "y", kFloat, "4");
  ImportResult r1 = import(v1);
  ASSERT_EQ(r1.graph->nodes().size(), 1u);
  EXPECT_FALSE(r1.graph->nodes().front()->has_attr("consumed_inputs"));
}

// An op with a GraphEngine schema but no kernel (registered here under a
// made-up domain and name, so that other components' ops never collide).
TEST(FrontendErrors, UnsupportedOpMessageNamesNodeOpOpsetAndInputs) {
  if (!ops::find_schema("com.gectest", "MadeUpOp"))
    ops::register_schema({.domain = "com.gectest", .op_type = "MadeUpOp", .infer = ops::infer_same_as_input0,
                          .traits = ops::traits(ops::PatternKind::kOpaque)});
  onnx::ModelProto m = new_model(13);
  auto* imp = m.add_opset_import();
  imp->set_domain("com.gectest");
  imp->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,3,224,224");
  add_int64_init(g, "k", {2}, {4, 5});
  add_node(g, "MadeUpOp", {"x", "k"}, {"y"}, "mystery")->set_domain("com.gectest");
  add_output(g, "y", kFloat, "1,3,224,224");
  try {
    import(m, {}, /*check_support=*/true);
    ADD_FAILURE() << "MadeUpOp has no kernel; import must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_EQ(std::string(e.what()),
              "unsupported op: node 'mystery' op MadeUpOp (domain com.gectest, opset 1), inputs "
              "float32[1,3,224,224], int64[2]");
  }
  // Without the support check the node imports as is.
  ImportResult r = import(m);
  EXPECT_EQ(find_op(*r.graph, "MadeUpOp")->domain, "com.gectest");
}

TEST(FrontendErrors, UnknownDomainIsUnsupported) {
  onnx::ModelProto m = new_model(13);
  auto* imp = m.add_opset_import();
  imp->set_domain("com.nobody");
  imp->set_version(3);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  add_node(g, "Whatever", {"x"}, {"y"}, "w")->set_domain("com.nobody");
  add_output(g, "y", kFloat, "2");
  expect_error([&] { import(m); }, ErrorCode::kUnsupported,
               "unsupported op: node 'w' op Whatever (domain com.nobody, opset 3), inputs float32[2]");
}

// ---- canonicalization -----------------------------------------------------------------

// Opset 9: Clip-6 (attrs) -> Slice-1 (attrs) -> Softmax-1 (axis 1 of 4, flatten
// semantics) -> Squeeze-1 (axes attr).
TEST(FrontendCanonicalize, Opset9SqueezeSliceClipSoftmax) {
  onnx::ModelProto m = new_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,3,4,5");
  auto* clip = add_node(g, "Clip", {"x"}, {"c"}, "clip");
  attr_f(clip, "min", 0.f);
  attr_f(clip, "max", 6.f);
  auto* slice = add_node(g, "Slice", {"c"}, {"s"}, "slice");
  attr_ints(slice, "starts", {0});
  attr_ints(slice, "ends", {2});
  attr_ints(slice, "axes", {1});
  attr_i(add_node(g, "Softmax", {"s"}, {"sm"}, "softmax"), "axis", 1);
  attr_ints(add_node(g, "Squeeze", {"sm"}, {"y"}, "squeeze"), "axes", {0});
  add_output(g, "y", kFloat, "2,4,5");
  ImportResult r = import(m);
  const Graph& gr = *r.graph;
  gr.verify();

  Node* c = find_op(gr, "Clip");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->attrs.empty());
  ASSERT_EQ(c->inputs().size(), 3u);
  EXPECT_EQ(values<float>(*c->input(1)->constant), (std::vector<float>{0.f}));
  EXPECT_EQ(c->input(1)->constant->shape(), Shape{});  // Clip-11 bounds are scalars
  EXPECT_EQ(values<float>(*c->input(2)->constant), (std::vector<float>{6.f}));

  Node* s = find_op(gr, "Slice");
  EXPECT_TRUE(s->attrs.empty());
  ASSERT_EQ(s->inputs().size(), 4u);
  EXPECT_EQ(s->input(0), c->output(0));
  EXPECT_EQ(const_ints(s->input(1)), (std::vector<int64_t>{0}));
  EXPECT_EQ(const_ints(s->input(2)), (std::vector<int64_t>{2}));
  EXPECT_EQ(const_ints(s->input(3)), (std::vector<int64_t>{1}));

  // Softmax-1 axis=1 on [1,2,4,5]: Reshape(Softmax(Flatten(s, 1), -1), Shape(s)).
  Node* flat = find_op(gr, "Flatten");
  Node* sm = find_op(gr, "Softmax");
  Node* shape = find_op(gr, "Shape");
  Node* reshape = find_op(gr, "Reshape");
  ASSERT_TRUE(flat && sm && shape && reshape);
  EXPECT_EQ(flat->input(0), s->output(0));
  EXPECT_EQ(flat->get_int("axis"), 1);
  EXPECT_EQ(flat->output(0)->type.str(), "float32[1,40]");
  EXPECT_EQ(sm->name, "softmax");
  EXPECT_EQ(sm->input(0), flat->output(0));
  EXPECT_EQ(sm->get_int("axis"), -1);
  EXPECT_EQ(shape->input(0), s->output(0));
  EXPECT_EQ(reshape->input(0), sm->output(0));
  EXPECT_EQ(reshape->input(1), shape->output(0));
  EXPECT_EQ(reshape->output(0)->name(), "sm");  // the ONNX value keeps its name
  EXPECT_EQ(reshape->output(0)->type.str(), "float32[1,2,4,5]");

  Node* sq = find_op(gr, "Squeeze");
  EXPECT_FALSE(sq->has_attr("axes"));
  EXPECT_EQ(sq->input(0), reshape->output(0));
  EXPECT_EQ(const_ints(sq->input(1)), (std::vector<int64_t>{0}));
  EXPECT_EQ(gr.outputs()[0], sq->output(0));
  EXPECT_EQ(op_types(gr), (std::vector<std::string>{"Clip", "Slice", "Flatten", "Softmax", "Shape", "Reshape",
                                                     "Squeeze"}));
}

TEST(FrontendCanonicalize, SoftmaxOnLastAxisNeedsNoFlatten) {
  onnx::ModelProto m = new_model(11);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2,3");
  attr_i(add_node(g, "LogSoftmax", {"x"}, {"y"}, "lsm"), "axis", 1);
  add_output(g, "y", kFloat, "2,3");
  ImportResult r = import(m);
  EXPECT_EQ(op_types(*r.graph), (std::vector<std::string>{"LogSoftmax"}));
  EXPECT_EQ(find_op(*r.graph, "LogSoftmax")->get_int("axis"), -1);
}

TEST(FrontendCanonicalize, Opset13SoftmaxIsUnchanged) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2,3,4");
  attr_i(add_node(g, "Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
  add_output(g, "y", kFloat, "2,3,4");
  ImportResult r = import(m);
  EXPECT_EQ(op_types(*r.graph), (std::vector<std::string>{"Softmax"}));
  EXPECT_EQ(find_op(*r.graph, "Softmax")->get_int("axis"), 1);
}

// Opset 9: Pad-2, ReduceMean-1, Split-2, Unsqueeze-1, TopK-1, Upsample-9,
// BatchNormalization-9 and Dropout-7 with a used mask.
TEST(FrontendCanonicalize, Opset9AttributeFormsBecomeInputs) {
  onnx::ModelProto m = new_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,2,4,4");
  auto* pad = add_node(g, "Pad", {"x"}, {"p"}, "pad");
  attr_ints(pad, "pads", {0, 0, 1, 1, 0, 0, 1, 1});
  attr_f(pad, "value", 2.5f);
  auto* rm = add_node(g, "ReduceMean", {"p"}, {"rm"}, "mean");
  attr_ints(rm, "axes", {2, 3});
  attr_i(rm, "keepdims", 0);
  auto* split = add_node(g, "Split", {"rm"}, {"s0", "s1"}, "split");
  attr_i(split, "axis", 1);
  attr_ints(split, "split", {1, 1});
  attr_ints(add_node(g, "Unsqueeze", {"s0"}, {"u"}, "unsq"), "axes", {2});
  attr_i(add_node(g, "TopK", {"s1"}, {"tv", "ti"}, "topk"), "k", 1);
  add_float_init(g, "scales", {4}, {1, 1, 2, 2});
  attr_s(add_node(g, "Upsample", {"x", "scales"}, {"up"}, "up"), "mode", "nearest");
  for (const char* n : {"bn_s", "bn_b", "bn_m", "bn_v"}) add_float_init(g, n, {2}, {1, 1});
  attr_f(add_node(g, "BatchNormalization", {"x", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"}, "bn"), "epsilon", 1e-3f);
  add_node(g, "Dropout", {"bn"}, {"d", "mask"}, "drop");
  add_output(g, "u", kFloat, "1,1,1");
  add_output(g, "tv", kFloat, "1,1");
  add_output(g, "ti", kInt64, "1,1");
  add_output(g, "up", kFloat, "1,2,8,8");
  add_output(g, "d", kFloat, "1,2,4,4");
  add_output(g, "mask", kBool, "1,2,4,4");
  ImportResult r = import(m);
  const Graph& gr = *r.graph;
  gr.verify();

  Node* p = find_op(gr, "Pad");
  EXPECT_FALSE(p->has_attr("pads"));
  EXPECT_FALSE(p->has_attr("value"));
  EXPECT_EQ(const_ints(p->input(1)), (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(values<float>(*p->input(2)->constant), (std::vector<float>{2.5f}));

  Node* mean = find_op(gr, "ReduceMean");
  EXPECT_FALSE(mean->has_attr("axes"));
  EXPECT_EQ(mean->get_int("keepdims", 1), 0);
  EXPECT_EQ(const_ints(mean->input(1)), (std::vector<int64_t>{2, 3}));

  Node* sp = find_op(gr, "Split");
  EXPECT_FALSE(sp->has_attr("split"));
  EXPECT_EQ(sp->get_int("axis"), 1);
  EXPECT_EQ(const_ints(sp->input(1)), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(sp->outputs().size(), 2u);

  EXPECT_EQ(const_ints(find_op(gr, "Unsqueeze")->input(1)), (std::vector<int64_t>{2}));

  Node* topk = find_op(gr, "TopK");
  EXPECT_FALSE(topk->has_attr("k"));
  EXPECT_EQ(const_ints(topk->input(1)), (std::vector<int64_t>{1}));
  EXPECT_EQ(topk->input(1)->constant->shape(), Shape{1});

  // Upsample-9 -> Resize(X, roi omitted, scales) with asymmetric/floor.
  EXPECT_EQ(find_op(gr, "Upsample"), nullptr);
  Node* rs = find_op(gr, "Resize");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->name, "up");
  ASSERT_EQ(rs->inputs().size(), 3u);
  EXPECT_EQ(rs->input(1), nullptr);
  EXPECT_EQ(rs->input(2)->name(), "scales");
  EXPECT_EQ(rs->get_string("mode", ""), "nearest");
  EXPECT_EQ(rs->get_string("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_EQ(rs->get_string("nearest_mode", ""), "floor");

  Node* bn = find_op(gr, "BatchNormalization");
  EXPECT_EQ(bn->outputs().size(), 1u);
  EXPECT_FLOAT_EQ(bn->get_float("epsilon", 0.f), 1e-3f);

  // Dropout -> Identity; its mask -> ConstantOfShape(Shape(bn), true).
  EXPECT_EQ(find_op(gr, "Dropout"), nullptr);
  Node* id = find_op(gr, "Identity");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->input(0), bn->output(0));
  EXPECT_EQ(id->output(0)->name(), "d");
  Node* cos = find_op(gr, "ConstantOfShape");
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->output(0)->name(), "mask");
  EXPECT_EQ(cos->input(0)->producer()->op_type, "Shape");
  EXPECT_EQ(cos->input(0)->producer()->input(0), bn->output(0));
  const Tensor* v = cos->get_tensor("value");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(*v), (std::vector<bool>{true}));
}

TEST(FrontendCanonicalize, BatchNormTrainingOutputsAreUnsupported) {
  onnx::ModelProto m = new_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,2,4,4");
  for (const char* n : {"s", "b", "mu", "var"}) add_float_init(g, n, {2}, {1, 1});
  add_node(g, "BatchNormalization", {"x", "s", "b", "mu", "var"}, {"y", "run_mean", "", "", ""}, "bn");
  add_output(g, "y", kFloat, "1,2,4,4");
  add_output(g, "run_mean", kFloat, "2");
  expect_error([&] { import(m); }, ErrorCode::kUnsupported, "node 'bn' (BatchNormalization-9): training statistics");
}

TEST(FrontendCanonicalize, Resize10BecomesResize13Asymmetric) {
  onnx::ModelProto m = new_model(10);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,1,2,2");
  add_float_init(g, "sc", {4}, {1, 1, 2, 2});
  attr_s(add_node(g, "Resize", {"x", "sc"}, {"y"}, "rs"), "mode", "linear");
  add_output(g, "y", kFloat, "1,1,4,4");
  ImportResult r = import(m);
  Node* rs = find_op(*r.graph, "Resize");
  ASSERT_EQ(rs->inputs().size(), 3u);
  EXPECT_EQ(rs->input(1), nullptr);
  EXPECT_EQ(rs->input(2)->name(), "sc");
  EXPECT_EQ(rs->get_string("mode", ""), "linear");
  EXPECT_EQ(rs->get_string("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_FALSE(rs->has_attr("nearest_mode"));
}

// ---- TensorProto ----------------------------------------------------------------------

template <typename T>
void expect_round_trip(const std::string& dir, const Tensor& t, const std::string& name) {
  const std::string path = dir + "/" + name + ".pb";
  write_tensor_proto_file(path, t.view(), name);
  std::string got_name;
  Tensor back = read_tensor_proto_file(path, &got_name);
  EXPECT_EQ(got_name, name);
  EXPECT_EQ(back.dtype(), t.dtype());
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(values<T>(back), values<T>(t));
}

TEST(FrontendTensorProto, FileRoundTrip) {
  const std::string dir = temp_dir("tp");
  expect_round_trip<float>(dir, make<float>({2, 3}, {1, -2, 3.5f, 0, 1e-7f, -0.f}), "input_0");
  expect_round_trip<int64_t>(dir, make<int64_t>({3}, {INT64_MIN, 0, INT64_MAX}), "ids");
  expect_round_trip<bool>(dir, make<bool>({2, 2}, {true, false, false, true}), "mask");
  expect_round_trip<float>(dir, make<float>({}, {42.f}), "scalar");
  expect_round_trip<float>(dir, make<float>({0, 3}, {}), "empty");
  // float16 stays raw 16-bit: 1.0 = 0x3C00, -2.0 = 0xC000, +inf = 0x7C00.
  Tensor h(DType::kFloat16, {3});
  const uint16_t bits[3] = {0x3C00, 0xC000, 0x7C00};
  std::memcpy(h.data(), bits, sizeof bits);
  const std::string hp = dir + "/half.pb";
  write_tensor_proto_file(hp, h.view(), "half");
  Tensor hb = read_tensor_proto_file(hp);
  EXPECT_EQ(hb.dtype(), DType::kFloat16);
  EXPECT_EQ(std::vector<uint16_t>(hb.as<uint16_t>(), hb.as<uint16_t>() + 3), (std::vector<uint16_t>{0x3C00, 0xC000, 0x7C00}));
  // Strings.
  Tensor s(DType::kString, {2});
  s.as<std::string>()[0] = "hello";
  s.as<std::string>()[1] = std::string("a\0b", 3);
  write_tensor_proto_file(dir + "/s.pb", s.view(), "s");
  Tensor sb = read_tensor_proto_file(dir + "/s.pb");
  ASSERT_EQ(sb.dtype(), DType::kString);
  EXPECT_EQ(sb.as<std::string>()[0], "hello");
  EXPECT_EQ(sb.as<std::string>()[1], std::string("a\0b", 3));
  expect_error([&] { read_tensor_proto_file(dir + "/none.pb"); }, ErrorCode::kIo, "none.pb");
  std::filesystem::remove_all(dir);
}

TEST(FrontendTensorProto, TypedFields) {
  onnx::TensorProto p;
  p.set_name("f16");
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(0x3C00);
  p.add_int32_data(0x3800);  // 0.5
  Tensor h = tensor_from_proto(p, ".");
  EXPECT_EQ(h.as<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(h.as<uint16_t>()[1], 0x3800);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  EXPECT_EQ(values<bool>(tensor_from_proto(b, ".")), (std::vector<bool>{true, false, true}));

  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(2);
  i8.add_int32_data(-128);
  i8.add_int32_data(127);
  EXPECT_EQ(values<int8_t>(tensor_from_proto(i8, ".")), (std::vector<int8_t>{-128, 127}));

  onnx::TensorProto u32;
  u32.set_data_type(onnx::TensorProto::UINT32);
  u32.add_uint64_data(4000000000ull);
  Tensor u = tensor_from_proto(u32, ".");  // no dims: a scalar
  EXPECT_EQ(u.shape(), Shape{});
  EXPECT_EQ(*u.as<uint32_t>(), 4000000000u);

  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_dims(1);
  d.add_double_data(0.1);
  EXPECT_EQ(*tensor_from_proto(d, ".").as<double>(), 0.1);

  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(1);
  s.add_string_data("xyz");
  EXPECT_EQ(tensor_from_proto(s, ".").as<std::string>()[0], "xyz");

  onnx::TensorProto bad;
  bad.set_name("short");
  bad.set_data_type(onnx::TensorProto::FLOAT);
  bad.add_dims(2);
  bad.set_raw_data(std::string(4, '\0'));  // one float, two expected
  expect_error([&] { tensor_from_proto(bad, "."); }, ErrorCode::kInvalidModel, "tensor 'short': raw_data has 4 bytes");
  onnx::TensorProto few;
  few.set_name("few");
  few.set_data_type(onnx::TensorProto::INT64);
  few.add_dims(3);
  few.add_int64_data(1);
  expect_error([&] { tensor_from_proto(few, "."); }, ErrorCode::kInvalidModel, "tensor 'few'");
}

// The compiler's decisions (layouts, the memory plan) live in the plans, not
// in node attributes: an attribute named like the old __gec_layout_out is an
// ordinary attribute of the node and decides nothing.
TEST(Frontend, NoAttributeCarriesACompilerDecision) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,4");
  add_output(g, "y", kFloat, "1,4");
  auto* relu = add_node(g, "Relu", {"x"}, {"y"}, "act");
  attr_s(relu, "__gec_layout_out", "nChw16c");
  ImportResult r = import(m);
  ASSERT_EQ(r.graph->nodes().size(), 1u);
  EXPECT_EQ(r.graph->nodes().front()->get_string("__gec_layout_out", ""), "nChw16c");
}

}  // namespace
}  // namespace gec::frontend
