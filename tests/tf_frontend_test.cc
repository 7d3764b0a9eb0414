// The TensorFlow frontend on small GraphDefs built here: op semantics (padding
// modes, slicing masks, resize coordinate modes, integer floor division,
// converter-fused ops), the NCHW layout with transposes only where needed,
// outputs and inputs, TensorFlow.js model.json with quantized weights, and bad
// input. Expected values are worked out by hand from TensorFlow's op
// definitions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/model_format.h"
#include "frontend/tensorflow/importer.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "test_util.h"
#include "tf_graph.pb.h"

namespace fs = std::filesystem;

namespace gec {
namespace {

using testing::expect_error;
using testing::make;
using testing::values;
namespace tfp = gec::tf;

/// A GraphDef under construction.
struct TfGraph {
  tfp::GraphDef gd;

  tfp::NodeDef* node(const std::string& op, const std::string& name, const std::vector<std::string>& inputs = {}) {
    tfp::NodeDef* n = gd.add_node();
    n->set_op(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    (*n->mutable_attr())["T"].set_type(tfp::DT_FLOAT);
    return n;
  }
  static void ints(tfp::NodeDef* n, const std::string& a, const std::vector<int64_t>& v) {
    auto* l = (*n->mutable_attr())[a].mutable_list();
    for (int64_t x : v) l->add_i(x);
  }
  static void str(tfp::NodeDef* n, const std::string& a, const std::string& v) { (*n->mutable_attr())[a].set_s(v); }
  static void flag(tfp::NodeDef* n, const std::string& a, bool v) { (*n->mutable_attr())[a].set_b(v); }
  static void num(tfp::NodeDef* n, const std::string& a, int64_t v) { (*n->mutable_attr())[a].set_i(v); }

  void placeholder(const std::string& name, const Shape& shape, int dtype = tfp::DT_FLOAT) {
    tfp::NodeDef* n = node("Placeholder", name);
    (*n->mutable_attr())["dtype"].set_type(static_cast<tfp::DataType>(dtype));
    auto* s = (*n->mutable_attr())["shape"].mutable_shape();
    for (int64_t d : shape) s->add_dim()->set_size(d);
  }
  void const_f(const std::string& name, const Shape& shape, const std::vector<float>& v) {
    tfp::NodeDef* n = node("Const", name);
    auto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(tfp::DT_FLOAT);
    for (int64_t d : shape) t->mutable_tensor_shape()->add_dim()->set_size(d);
    t->set_tensor_content(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  }
  void const_i(const std::string& name, const Shape& shape, const std::vector<int32_t>& v) {
    tfp::NodeDef* n = node("Const", name);
    auto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(tfp::DT_INT32);
    for (int64_t d : shape) t->mutable_tensor_shape()->add_dim()->set_size(d);
    for (int32_t x : v) t->add_int_val(x);
  }

  std::string save(const std::string& tag) const {
    const std::string path = ::testing::TempDir() + "tf_" + std::to_string(getpid()) + "_" + tag + ".pb";
    std::ofstream(path, std::ios::binary) << gd.SerializeAsString();
    return path;
  }
  /// Compiles at `level` and runs on `inputs` (in Placeholder order).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int level = 0, CompileOptions o = {}) const {
    o.opt_level = level;
    const std::string path = save("run" + std::to_string(level));
    CompiledModel m = compile_file(path, o);
    std::remove(path.c_str());
    auto s = Session::load_from_bytes(m.gom);
    std::vector<TensorView> views;
    for (const auto& t : inputs) views.push_back(t.view());
    return s->run(views);
  }
  /// Imported (before any pass) IR: count nodes of `op`.
  size_t count_imported(const std::string& op) const {
    const std::string bytes = gd.SerializeAsString();
    frontend::ImportResult r = frontend::import_tf_graphdef(bytes.data(), bytes.size(), {});
    size_t n = 0;
    for (const auto& node : r.graph->nodes()) n += node->op_type == op;
    return n;
  }
};

Tensor iota(const Shape& s, float start = 1) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = start + static_cast<float>(i);
  return t;
}

// Conv2D on a 4x4 image (NHWC), 3x3 kernel of ones, stride 2: SAME pads one
// row/column at the end only ((ceil(4/2) - 1) * 2 + 3 - 4 = 1 in total,
// floor(1/2) = 0 before); VALID leaves a single output.
TEST(TfOps, Conv2DSamePadsAtTheEnd) {
  for (const char* padding : {"SAME", "VALID"}) {
    TfGraph g;
    g.placeholder("x", {1, 4, 4, 1});
    g.const_f("w", {3, 3, 1, 1}, std::vector<float>(9, 1.f));
    auto* c = g.node("Conv2D", "conv", {"x", "w"});
    TfGraph::ints(c, "strides", {1, 2, 2, 1});
    TfGraph::str(c, "padding", padding);
    for (int level : {0, 3}) {
      auto y = g.run({iota({1, 4, 4, 1})}, level);
      if (std::string(padding) == "SAME") {
        EXPECT_EQ(y[0].shape(), (Shape{1, 2, 2, 1}));
        EXPECT_EQ(values<float>(y[0]), (std::vector<float>{54, 45, 72, 54})) << "level " << level;
      } else {
        EXPECT_EQ(y[0].shape(), (Shape{1, 1, 1, 1}));
        EXPECT_EQ(values<float>(y[0]), (std::vector<float>{54}));
      }
    }
  }
}

// Depthwise with channel multiplier 2: output channel c * 2 + m is
// x[c] * filter[.., c, m].
TEST(TfOps, DepthwiseChannelMultiplierOrder) {
  TfGraph g;
  g.placeholder("x", {1, 1, 1, 2});
  g.const_f("w", {1, 1, 2, 2}, {10, 20, 30, 40});  // [c][m]
  auto* d = g.node("DepthwiseConv2dNative", "dw", {"x", "w"});
  TfGraph::ints(d, "strides", {1, 1, 1, 1});
  TfGraph::str(d, "padding", "VALID");
  auto y = g.run({make<float>({1, 1, 1, 2}, {1, 2})});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{10, 20, 60, 80}));
}

// The converter-fused conv: conv + BiasAdd + Relu6 from fused_ops.
TEST(TfOps, FusedConv2DAppliesItsFusedOps) {
  TfGraph g;
  g.placeholder("x", {1, 1, 2, 1});
  g.const_f("w", {1, 1, 1, 1}, {4});
  g.const_f("b", {1}, {-3});
  auto* c = g.node("_FusedConv2D", "fc", {"x", "w", "b"});
  TfGraph::ints(c, "strides", {1, 1, 1, 1});
  TfGraph::str(c, "padding", "VALID");
  auto* l = (*c->mutable_attr())["fused_ops"].mutable_list();
  l->add_s("BiasAdd");
  l->add_s("Relu6");
  for (int level : {0, 3})
    EXPECT_EQ(values<float>(g.run({make<float>({1, 1, 2, 1}, {0.5f, 3})}, level)[0]), (std::vector<float>{0, 6}));
}

// Conv2DBackpropInput (transposed conv), SAME, stride 2, 3x3 ones on a 2x2
// input of ones, output 4x4: per dim the taps hit rows 0, 1, 2 (twice), 3.
TEST(TfOps, Conv2DBackpropInputSame) {
  TfGraph g;
  g.placeholder("x", {1, 2, 2, 1});
  g.const_i("sizes", {4}, {1, 4, 4, 1});
  g.const_f("w", {3, 3, 1, 1}, std::vector<float>(9, 1.f));
  auto* c = g.node("Conv2DBackpropInput", "up", {"sizes", "w", "x"});
  TfGraph::ints(c, "strides", {1, 2, 2, 1});
  TfGraph::str(c, "padding", "SAME");
  auto y = g.run({make<float>({1, 2, 2, 1}, {1, 1, 1, 1})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 4, 4, 1}));
  const std::vector<float> per_dim = {1, 1, 2, 1};
  std::vector<float> want;
  for (float r : per_dim)
    for (float c2 : per_dim) want.push_back(r * c2);
  EXPECT_EQ(values<float>(y[0]), want);
}

// ResizeBilinear 2 -> 4 wide, each coordinate mode; ResizeNearestNeighbor 3 -> 2.
TEST(TfOps, ResizeCoordinateModes) {
  struct Case {
    bool align, half;
    std::vector<float> row;
  };
  for (const Case& k : {Case{true, false, {0, 1.f / 3, 2.f / 3, 1}}, Case{false, true, {0, 0.25f, 0.75f, 1}},
                        Case{false, false, {0, 0.5f, 1, 1}}}) {
    TfGraph g;
    g.placeholder("x", {1, 1, 2, 1});
    g.const_i("size", {2}, {1, 4});
    auto* r = g.node("ResizeBilinear", "rs", {"x", "size"});
    TfGraph::flag(r, "align_corners", k.align);
    TfGraph::flag(r, "half_pixel_centers", k.half);
    testing::expect_close(values<float>(g.run({make<float>({1, 1, 2, 1}, {0, 1})})[0]), k.row);
  }
  for (const auto& [half, want] : std::vector<std::pair<bool, std::vector<float>>>{{true, {0, 2}}, {false, {0, 1}}}) {
    TfGraph g;
    g.placeholder("x", {1, 1, 3, 1});
    g.const_i("size", {2}, {1, 2});
    auto* r = g.node("ResizeNearestNeighbor", "rs", {"x", "size"});
    TfGraph::flag(r, "half_pixel_centers", half);
    EXPECT_EQ(values<float>(g.run({make<float>({1, 1, 3, 1}, {0, 1, 2})})[0]), want) << "half_pixel_centers " << half;
  }
}

// StridedSlice with shrink, ellipsis + new axis + strided end mask, and a
// negative stride.
TEST(TfOps, StridedSliceMasks) {
  auto slice = [](const std::vector<int32_t>& b, const std::vector<int32_t>& e, const std::vector<int32_t>& s,
                  std::map<std::string, int64_t> masks, const Shape& in_shape) {
    TfGraph g;
    g.placeholder("x", in_shape);
    const Shape n = {static_cast<int64_t>(b.size())};
    g.const_i("b", n, b);
    g.const_i("e", n, e);
    g.const_i("s", n, s);
    auto* ss = g.node("StridedSlice", "ss", {"x", "b", "e", "s"});
    for (const auto& [k, v] : masks) TfGraph::num(ss, k, v);
    return g.run({iota(in_shape, 0)})[0];
  };
  // x[0, 1:3, :] of [2,3,4]: shape [2,4], elements 4..11.
  Tensor a = slice({0, 1}, {0, 3}, {1, 1}, {{"shrink_axis_mask", 1}}, {2, 3, 4});
  EXPECT_EQ(a.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(a)[0], 4);
  EXPECT_EQ(values<float>(a)[7], 11);
  // x[..., newaxis, ::2] of [2,3,4]: [2,3,1,2], the even columns.
  Tensor b = slice({0, 0, 0}, {0, 0, 0}, {1, 1, 2}, {{"ellipsis_mask", 1}, {"new_axis_mask", 2}, {"begin_mask", 4},
                                                     {"end_mask", 4}}, {2, 3, 4});
  EXPECT_EQ(b.shape(), (Shape{2, 3, 1, 2}));
  EXPECT_EQ(values<float>(b)[0], 0);
  EXPECT_EQ(values<float>(b)[1], 2);
  EXPECT_EQ(values<float>(b)[2], 4);
  // x[:, ::-1] of [2,3].
  Tensor c = slice({0, 0}, {0, 0}, {1, -1}, {{"begin_mask", 3}, {"end_mask", 3}}, {2, 3});
  EXPECT_EQ(values<float>(c), (std::vector<float>{2, 1, 0, 5, 4, 3}));
}

// Integer FloorDiv / FloorMod round toward -inf (not toward zero); floats too.
TEST(TfOps, FloorDivAndFloorModRoundDown) {
  TfGraph g;
  g.placeholder("a", {4}, tfp::DT_INT32);
  g.const_i("b", {4}, {2, -2, 2, -2});
  (*g.node("FloorDiv", "q", {"a", "b"})->mutable_attr())["T"].set_type(tfp::DT_INT32);
  (*g.node("FloorMod", "m", {"a", "b"})->mutable_attr())["T"].set_type(tfp::DT_INT32);
  auto y = g.run({make<int32_t>({4}, {-7, -7, 7, 7})});
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{-4, 3, 3, -4}));
  EXPECT_EQ(values<int32_t>(y[1]), (std::vector<int32_t>{1, -1, 1, -1}));
  TfGraph f;
  f.placeholder("a", {2});
  f.const_f("b", {2}, {2, -2});
  f.node("FloorDiv", "q", {"a", "b"});
  f.node("FloorMod", "m", {"a", "b"});
  auto z = f.run({make<float>({2}, {-7.5f, -7.5f})});
  EXPECT_EQ(values<float>(z[0]), (std::vector<float>{-4, 3}));
  EXPECT_EQ(values<float>(z[1]), (std::vector<float>{0.5f, -1.5f}));
}

TEST(TfOps, PackUnpackSplitVAndSparseToDense) {
  TfGraph g;
  g.placeholder("x", {2, 3});
  auto* un = g.node("Unpack", "un", {"x"});
  TfGraph::num(un, "num", 3);
  TfGraph::num(un, "axis", 1);
  auto* pk = g.node("Pack", "pk", {"un:2", "un:0"});
  TfGraph::num(pk, "axis", 0);
  g.const_i("sizes", {2}, {-1, 1});
  g.const_i("axis", {}, {1});
  auto* sv = g.node("SplitV", "sv", {"x", "sizes", "axis"});
  TfGraph::num(sv, "num_split", 2);
  g.const_i("idx", {2, 1}, {0, 2});
  g.const_i("shape", {1}, {4});
  g.const_f("vals", {2}, {5, 6});
  g.const_f("dflt", {}, {-1});
  g.node("SparseToDense", "sd", {"idx", "shape", "vals", "dflt"});
  CompileOptions o;
  o.outputs = {"pk", "sv:0", "sv:1", "sd"};
  auto y = g.run({iota({2, 3}, 0)}, 0, o);
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{2, 5, 0, 3}));  // column 2, then column 0
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{0, 1, 3, 4}));
  EXPECT_EQ(values<float>(y[2]), (std::vector<float>{2, 5}));
  EXPECT_EQ(values<float>(y[3]), (std::vector<float>{5, -1, 6, -1}));
}

// Mean over H, W without keep_dims of an NCHW-held tensor, and a channel
// Concat of two: no transpose besides the input's.
TEST(TfLayout, NhwcChainsNeedOneTransposeAtTheInput) {
  TfGraph g;
  g.placeholder("x", {1, 3, 3, 2});
  g.const_f("w", {1, 1, 2, 2}, {1, 0, 0, 1});  // identity 1x1
  for (const char* name : {"c1", "c2"}) {
    auto* c = g.node("Conv2D", name, {"x", "w"});
    TfGraph::ints(c, "strides", {1, 1, 1, 1});
    TfGraph::str(c, "padding", "SAME");
  }
  g.node("Relu", "r", {"c1"});
  g.const_f("b", {2}, {1, 2});
  g.node("BiasAdd", "ba", {"r", "b"});
  g.const_i("ax", {}, {3});
  auto* cat = g.node("ConcatV2", "cat", {"ba", "c2", "ax"});
  TfGraph::num(cat, "N", 2);
  g.const_i("hw", {2}, {1, 2});
  g.node("Mean", "mean", {"cat", "hw"});
  EXPECT_EQ(g.count_imported("Transpose"), 1u) << "only the input's NHWC -> NCHW";
  Tensor x = iota({1, 3, 3, 2}, 0);
  auto y = g.run({x});
  ASSERT_EQ(y[0].shape(), (Shape{1, 4}));
  // Channel means of x: even elements 0..16 -> 8, odd 1..17 -> 9; +bias for the first pair.
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{9, 11, 8, 9}));
  // A Reshape needs TensorFlow's layout: one more transpose, just before it.
  TfGraph h = g;
  h.const_i("flat", {1}, {-1});
  h.node("Reshape", "flat_r", {"cat", "flat"});
  EXPECT_EQ(h.count_imported("Transpose"), 2u);
  CompileOptions o;
  o.outputs = {"flat_r"};
  auto f = h.run({x}, 3, o);
  EXPECT_EQ(f[0].shape(), (Shape{36}));
  EXPECT_EQ(values<float>(f[0])[0], 1);  // x[0,0,0,0] + bias 1, first in NHWC order
  EXPECT_EQ(values<float>(f[0])[1], 3);  // x[0,0,0,1] + bias 2
}

// AvgPool SAME averages only the window's part inside the image; MaxPool
// SAME ignores the padding; an NCHW Conv2D with EXPLICIT padding.
TEST(TfOps, PoolsSameAndNchwExplicitConv) {
  TfGraph g;
  g.placeholder("x", {1, 2, 2, 1});
  for (const char* op : {"AvgPool", "MaxPool"}) {
    auto* p = g.node(op, op, {"x"});
    TfGraph::ints(p, "ksize", {1, 2, 2, 1});
    TfGraph::ints(p, "strides", {1, 1, 1, 1});
    TfGraph::str(p, "padding", "SAME");
  }
  auto y = g.run({make<float>({1, 2, 2, 1}, {1, 2, 3, 4})}, 3);
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{2.5f, 3, 3.5f, 4}));
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{4, 4, 4, 4}));
  TfGraph c;
  c.placeholder("x", {1, 1, 2, 2});  // NCHW
  c.const_f("w", {1, 1, 1, 1}, {2});
  auto* conv = c.node("Conv2D", "conv", {"x", "w"});
  TfGraph::str(conv, "data_format", "NCHW");
  TfGraph::ints(conv, "strides", {1, 1, 1, 1});
  TfGraph::str(conv, "padding", "EXPLICIT");
  TfGraph::ints(conv, "explicit_paddings", {0, 0, 0, 0, 1, 0, 0, 1});  // H: 1 before, W: 1 after
  auto z = c.run({make<float>({1, 1, 2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(z[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values<float>(z[0]), (std::vector<float>{0, 0, 0, 2, 4, 0, 6, 8, 0}));
}

TEST(TfOps, DenseNormAndActivations) {
  TfGraph g;
  g.placeholder("x", {1, 1, 1, 2});
  // FusedBatchNormV3 (NHWC): (x - mean) / sqrt(var + eps) * scale + offset.
  g.const_f("scale", {2}, {2, 1});
  g.const_f("offset", {2}, {1, 0});
  g.const_f("mean", {2}, {1, 2});
  g.const_f("var", {2}, {4, 1});
  auto* bn = g.node("FusedBatchNormV3", "bn", {"x", "scale", "offset", "mean", "var"});
  (*bn->mutable_attr())["epsilon"].set_f(0.f);
  auto* lr = g.node("LeakyRelu", "lr", {"bn"});
  (*lr->mutable_attr())["alpha"].set_f(0.5f);
  g.const_f("m", {2, 3}, {1, 2, 3, 4, 5, 6});
  g.const_f("v", {1, 2}, {1, -1});
  auto* mm = g.node("MatMul", "mm", {"v", "m"});  // [1,2] x [2,3]
  (void)mm;
  auto* mt = g.node("MatMul", "mt", {"m", "v"});  // [2,3]^T? no: transpose_a, then [3,2] x ... use v^T
  TfGraph::flag(mt, "transpose_a", true);
  (*mt->mutable_attr())["transpose_b"].set_b(true);
  CompileOptions o;
  o.outputs = {"lr", "mm", "mt"};
  auto y = g.run({make<float>({1, 1, 1, 2}, {3, 0})}, 0, o);
  // bn: (3-1)/2*2+1 = 3, (0-2)/1*1+0 = -2 -> leaky: 3, -1
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{3, -1}));
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{-3, -3, -3}));
  ASSERT_EQ(y[2].shape(), (Shape{3, 1}));  // m^T [3,2] x v^T [2,1]
  EXPECT_EQ(values<float>(y[2]), (std::vector<float>{-3, -3, -3}));
}

TEST(TfOps, IndexingAndShapeOps) {
  TfGraph g;
  g.placeholder("x", {2, 3});
  g.const_i("k", {}, {2});
  auto* topk = g.node("TopKV2", "topk", {"x", "k"});
  TfGraph::flag(topk, "sorted", true);
  g.const_i("idx", {2}, {2, 0});
  g.const_i("ax1", {}, {1});
  g.node("GatherV2", "gather", {"x", "idx", "ax1"});
  g.const_i("nd", {2, 2}, {1, 2, 0, 0});
  g.node("GatherNd", "gnd", {"x", "nd"});
  g.const_i("mult", {2}, {1, 2});
  g.node("Tile", "tile", {"x", "mult"});
  g.const_i("b", {2}, {0, 1});
  g.const_i("sz", {2}, {-1, 2});
  g.node("Slice", "slice", {"x", "b", "sz"});
  g.node("Shape", "shape", {"x"});
  g.const_i("dims", {2}, {1, 2});
  g.const_f("seven", {}, {7});
  g.node("Fill", "fill", {"dims", "seven"});
  g.const_i("r0", {}, {1});
  g.const_i("r1", {}, {7});
  g.const_i("r2", {}, {3});
  (*g.node("Range", "range", {"r0", "r1", "r2"})->mutable_attr())["Tidx"].set_type(tfp::DT_INT32);
  g.const_i("pads", {2, 2}, {0, 0, 2, 1});
  auto* mp = g.node("MirrorPad", "mpad", {"x", "pads"});
  TfGraph::str(mp, "mode", "REFLECT");
  CompileOptions o;
  o.outputs = {"topk:0", "topk:1", "gather", "gnd", "tile", "slice", "shape", "fill", "range", "mpad"};
  auto y = g.run({make<float>({2, 3}, {5, 1, 9, 2, 8, 3})}, 0, o);
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{9, 5, 8, 3}));
  EXPECT_EQ(y[1].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(y[1]), (std::vector<int32_t>{2, 0, 1, 2}));
  EXPECT_EQ(values<float>(y[2]), (std::vector<float>{9, 5, 3, 2}));
  EXPECT_EQ(values<float>(y[3]), (std::vector<float>{3, 5}));
  EXPECT_EQ(y[4].shape(), (Shape{2, 6}));
  EXPECT_EQ(values<float>(y[5]), (std::vector<float>{1, 9, 8, 3}));
  EXPECT_EQ(y[6].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(y[6]), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(values<float>(y[7]), (std::vector<float>{7, 7}));
  EXPECT_EQ(values<int32_t>(y[8]), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(values<float>(y[9]), (std::vector<float>{9, 1, 5, 1, 9, 1, 3, 8, 2, 8, 3, 8}));
}

// NonMaxSuppressionV3: boxes [y1, x1, y2, x2]; box 1 overlaps box 0 (IoU
// 0.81) and goes; box 2 stays; box 3 is under the score threshold.
TEST(TfOps, NonMaxSuppressionAndSelect) {
  TfGraph g;
  g.placeholder("boxes", {4, 4});
  g.placeholder("scores", {4});
  g.const_i("max", {}, {10});
  g.const_f("iou", {}, {0.5f});
  g.const_f("th", {}, {0.1f});
  g.node("NonMaxSuppressionV3", "nms", {"boxes", "scores", "max", "iou", "th"});
  g.placeholder("cond", {2}, tfp::DT_BOOL);
  g.placeholder("a", {2, 2});
  g.placeholder("b", {2, 2});
  g.node("Select", "sel", {"cond", "a", "b"});  // v1: the vector picks rows
  auto y = g.run({make<float>({4, 4}, {0, 0, 10, 10, 0, 1, 10, 10, 20, 20, 30, 30, 0, 0, 1, 1}),
                  make<float>({4}, {0.9f, 0.8f, 0.7f, 0.05f}), make<bool>({2}, {true, false}),
                  make<float>({2, 2}, {1, 2, 3, 4}), make<float>({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(y[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{1, 2, 7, 8}));
}

TEST(TfGraphIo, OutputsInputsAndNames) {
  TfGraph g;
  g.placeholder("x", {-1, 2});
  g.node("Relu", "a", {"x"});
  g.node("Neg", "b", {"x"});
  g.node("NoOp", "init", {"^a"});
  const std::string path = g.save("io");
  CompiledModel m = compile_file(path);
  auto r = nlohmann::json::parse(m.report_json);
  EXPECT_EQ(r["frontend"], "tensorflow");
  ASSERT_TRUE(r.contains("warnings"));
  EXPECT_NE(r["warnings"][0].get<std::string>().find("input 'x': unknown dims set to 1"), std::string::npos);
  auto s = Session::load_from_bytes(m.gom);
  ASSERT_EQ(s->outputs().size(), 2u);  // a and b: nobody reads them (NoOp has no outputs)
  EXPECT_EQ(s->outputs()[0].name, "a:0");
  EXPECT_EQ(s->outputs()[1].name, "b:0");
  EXPECT_EQ(s->inputs()[0].dims, (Shape{1, 2}));
  CompileOptions o;
  o.input_shapes = {{"x", {3, 2}}};
  o.outputs = {"b:0"};
  auto s2 = Session::load_from_bytes(compile_file(path, o).gom);
  EXPECT_EQ(s2->inputs()[0].dims, (Shape{3, 2}));
  ASSERT_EQ(s2->outputs().size(), 1u);
  EXPECT_EQ(s2->outputs()[0].name, "b:0");
  o.outputs = {"nope"};
  expect_error([&] { compile_file(path, o); }, ErrorCode::kInvalidArgument, "--outputs names 'nope'");
  o.outputs = {};
  o.input_shapes = {{"x", {3, 5}}};
  expect_error([&] { compile_file(path, o); }, ErrorCode::kInvalidArgument, "does not fit its declared shape");
  std::remove(path.c_str());
}

TEST(TfBadInput, TruncatedCyclicUnknownOpsAndBadInputs) {
  TfGraph g;
  g.placeholder("x", {1, 4, 4, 1});
  g.const_f("w", {3, 3, 1, 1}, std::vector<float>(9, 1.f));
  auto* c = g.node("Conv2D", "conv", {"x", "w"});
  TfGraph::ints(c, "strides", {1, 1, 1, 1});
  TfGraph::str(c, "padding", "SAME");
  const std::string bytes = g.gd.SerializeAsString();
  // Truncated: the last node's bytes cut short.
  const std::string cut = g.save("cut");
  { std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 7); }
  expect_error([&] { compile_file(cut); }, ErrorCode::kInvalidModel, "");
  std::remove(cut.c_str());
  // A cycle.
  TfGraph cyc;
  cyc.placeholder("x", {2});
  cyc.node("Add", "a", {"x", "b"});
  cyc.node("Relu", "b", {"a"});
  cyc.node("Neg", "out", {"b"});
  const std::string cp = cyc.save("cycle");
  expect_error([&] { compile_file(cp); }, ErrorCode::kInvalidModel, "cycle through node");
  std::remove(cp.c_str());
  // Unknown ops, all in one message; v1 control flow says what to do.
  TfGraph un;
  un.placeholder("x", {2});
  un.node("Switch", "sw1", {"x", "x"});
  un.node("Switch", "sw2", {"sw1", "x"});
  un.node("FancyOp", "fancy", {"sw2"});
  const std::string up = un.save("unknown");
  try {
    compile_file(up);
    ADD_FAILURE() << "must fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(msg.find("2 ops are not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 'sw1' op Switch (TensorFlow) (TensorFlow 1 control flow"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(and 1 more node)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 'fancy' op FancyOp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gec ops --tensorflow"), std::string::npos) << msg;
  }
  std::remove(up.c_str());
  // An input naming no node.
  TfGraph dangling;
  dangling.placeholder("x", {2});
  dangling.node("Add", "a", {"x", "ghost:0"});
  const std::string dp = dangling.save("dangling");
  expect_error([&] { compile_file(dp); }, ErrorCode::kInvalidModel, "reads 'ghost:0', which names no node");
  std::remove(dp.c_str());
  // Random bytes starting like a GraphDef.
  const std::string junk = ::testing::TempDir() + "tf_junk.pb";
  { std::ofstream(junk, std::ios::binary) << std::string("\x0a\xff\xff\xff\x0f garbage", 14); }
  expect_error([&] { compile_file(junk); }, ErrorCode::kInvalidModel, "not a valid TensorFlow GraphDef");
  std::remove(junk.c_str());
}

// Attributes and constants no converter may trust: each is refused with a
// clear error (before, several divided by zero, read out of bounds or
// allocated without bound).
TEST(TfBadInput, HostileAttributesAndConstants) {
  auto conv_graph = [](const std::vector<int64_t>& strides, const std::string& padding) {
    TfGraph g;
    g.placeholder("x", {1, 4, 4, 1});
    g.const_f("w", {3, 3, 1, 1}, std::vector<float>(9, 1.f));
    auto* c = g.node("Conv2D", "conv", {"x", "w"});
    TfGraph::ints(c, "strides", strides);
    TfGraph::str(c, "padding", padding);
    return g;
  };
  // Stride 0 with SAME padding (was a division by zero).
  {
    TfGraph g = conv_graph({1, 0, 0, 1}, "SAME");
    const std::string p = g.save("stride0");
    expect_error([&] { compile_file(p); }, ErrorCode::kInvalidModel, "strides entries must lie in [1,");
    std::remove(p.c_str());
  }
  // ConcatV2 with only its axis input.
  {
    TfGraph g;
    g.placeholder("x", {2});
    g.const_i("axis", {}, {0});
    g.node("ConcatV2", "cat", {"axis"});
    g.node("Neg", "y", {"cat", "x"});
    const std::string p = g.save("concat_axis_only");
    expect_error([&] { compile_file(p); }, ErrorCode::kInvalidModel, "at least one input besides the axis");
    std::remove(p.c_str());
  }
  // An empty constant where one value is needed (ExpandDims' dim).
  {
    TfGraph g;
    g.placeholder("x", {2});
    g.const_i("dim", {0}, {});
    g.node("ExpandDims", "y", {"x", "dim"});
    const std::string p = g.save("empty_dim");
    expect_error([&] { compile_file(p); }, ErrorCode::kInvalidModel, "dim must hold one value, got 0");
    std::remove(p.c_str());
  }
  // A StridedSlice spec wider than its 64-bit masks.
  {
    TfGraph g;
    g.placeholder("x", {2});
    g.const_i("b", {64}, std::vector<int32_t>(64, 0));
    g.const_i("s", {64}, std::vector<int32_t>(64, 1));
    g.node("StridedSlice", "y", {"x", "b", "b", "s"});
    const std::string p = g.save("wide_slice");
    expect_error([&] { compile_file(p); }, ErrorCode::kInvalidModel, "at most 62");
    std::remove(p.c_str());
  }
  // Split into 2^30 outputs along an empty axis.
  {
    TfGraph g;
    g.placeholder("x", {0, 2});
    g.const_i("axis", {}, {0});
    TfGraph::num(g.node("Split", "y", {"axis", "x"}), "num_split", int64_t{1} << 30);
    const std::string p = g.save("huge_split");
    expect_error([&] { compile_file(p); }, ErrorCode::kUnsupported, "num_split 1073741824 (at most 4096)");
    std::remove(p.c_str());
  }
  // A splat constant of 2^40 elements: refused, not zero-filled.
  {
    TfGraph g;
    g.placeholder("x", {2});
    g.const_i("big", {1 << 20, 1 << 20}, {7});
    g.node("Add", "y", {"x", "big"});
    const std::string p = g.save("huge_splat");
    expect_error([&] { compile_file(p); }, ErrorCode::kUnsupported, "larger than the 4294967296 bytes supported");
    std::remove(p.c_str());
  }
  // A soft_nms_sigma of the wrong dtype.
  {
    TfGraph g;
    g.placeholder("boxes", {2, 4});
    g.placeholder("scores", {2});
    g.const_i("k", {}, {2});
    g.const_f("iou", {}, {0.5f});
    g.const_f("th", {}, {0.f});
    g.const_i("sigma", {}, {0});
    g.node("NonMaxSuppressionV5", "nms", {"boxes", "scores", "k", "iou", "th", "sigma"});
    const std::string p = g.save("nms_sigma");
    expect_error([&] { compile_file(p); }, ErrorCode::kInvalidModel, "soft_nms_sigma must be one float32");
    std::remove(p.c_str());
  }
}

// A large splat constant (one value filling a big shape) stays a
// ConstantOfShape node: the weights block does not hold it, the result is
// the same.
TEST(TfOps, LargeSplatConstantIsConstantOfShape) {
  TfGraph g;
  g.placeholder("x", {1, 512, 1024});
  g.const_i("n", {1, 512, 1024}, {3});  // 2 MiB of int32 threes
  {
    auto* c = g.node("Cast", "nf", {"n"});
    (*c->mutable_attr())["SrcT"].set_type(tfp::DT_INT32);
    (*c->mutable_attr())["DstT"].set_type(tfp::DT_FLOAT);
  }
  g.node("AddV2", "y", {"x", "nf"});
  EXPECT_EQ(g.count_imported("ConstantOfShape"), 1u);
  CompiledModel m = compile_file(g.save("splat"), CompileOptions{});
  EXPECT_LT(nlohmann::json::parse(m.report_json)["memory"]["weights_bytes"].get<int64_t>(), 4096);
  auto y = g.run({iota({1, 512, 1024}, 0)});
  ASSERT_EQ(y.size(), 1u);
  const float* v = y[0].as<float>();
  for (int64_t i = 0; i < y[0].numel(); i += 997) EXPECT_EQ(v[i], static_cast<float>(i) + 3.f) << i;
}

// A TensorFlow.js graph model: the GraphDef as JSON, weights in a shard, one
// of them uint8-quantized (value = q * scale + min) and one float16.
TEST(Tfjs, ModelJsonWithQuantizedWeights) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("tfjs_" + std::to_string(getpid()));
  fs::create_directories(dir);
  nlohmann::json topo = {
      {"node",
       {{{"name", "x"}, {"op", "Placeholder"},
         {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"shape", {{"shape", {{"dim", {{{"size", "3"}}}}}}}}}}},
        {{"name", "scale"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"value", {{"tensor", {{"dtype", "DT_FLOAT"}}}}}}}},
        {{"name", "shift"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"value", {{"tensor", {{"dtype", "DT_FLOAT"}}}}}}}},
        {{"name", "half"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"value", {{"tensor", {{"dtype", "DT_FLOAT"}}}}}}}},
        {{"name", "m"}, {"op", "Mul"}, {"input", {"x", "scale"}}, {"attr", {{"T", {{"type", "DT_FLOAT"}}}}}},
        {{"name", "a"}, {"op", "AddV2"}, {"input", {"m", "shift"}}, {"attr", {{"T", {{"type", "DT_FLOAT"}}}}}},
        {{"name", "y"}, {"op", "Mul"}, {"input", {"a", "half"}}, {"attr", {{"T", {{"type", "DT_FLOAT"}}}}}}}},
      {"versions", {{"producer", 1}}}};
  nlohmann::json weights = {
      {{"name", "scale"}, {"shape", {3}}, {"dtype", "float32"}, {"quantization", {{"dtype", "uint8"}, {"scale", 0.5}, {"min", -1.0}}}},
      {{"name", "shift"}, {"shape", {3}}, {"dtype", "float32"}},
      {{"name", "half"}, {"shape", nlohmann::json::array()}, {"dtype", "float32"}, {"quantization", {{"dtype", "float16"}}}}};
  nlohmann::json model = {{"format", "graph-model"}, {"modelTopology", topo},
                          {"weightsManifest", {{{"paths", {"group1-shard1of1.bin"}}, {"weights", weights}}}}};
  std::string shard;
  shard += std::string("\x02\x04\x06", 3);  // scale = 2*0.5-1, 4*0.5-1, 6*0.5-1 = 0, 1, 2
  const float shift[3] = {10, 20, 30};
  shard.append(reinterpret_cast<const char*>(shift), sizeof shift);
  shard += std::string("\x00\x38", 2);  // float16 0.5
  { std::ofstream(dir / "group1-shard1of1.bin", std::ios::binary) << shard; }
  { std::ofstream(dir / "model.json") << model.dump(); }
  CompiledModel m = compile_file((dir / "model.json").string());
  EXPECT_EQ(nlohmann::json::parse(m.report_json)["frontend"], "tfjs");
  auto s = Session::load_from_bytes(m.gom);
  auto y = s->run({make<float>({3}, {4, 4, 4}).view()});
  // (x * scale + shift) * 0.5 = (0 + 10, 4 + 20, 8 + 30) / 2
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{5, 12, 19}));
  // A missing shard is an I/O error naming it; a short one too.
  fs::remove(dir / "group1-shard1of1.bin");
  expect_error([&] { compile_file((dir / "model.json").string()); }, ErrorCode::kIo, "group1-shard1of1.bin");
  { std::ofstream(dir / "group1-shard1of1.bin", std::ios::binary) << shard.substr(0, 5); }
  expect_error([&] { compile_file((dir / "model.json").string()); }, ErrorCode::kIo, "end before weight 'shift'");
  // A shard path leaving the folder is refused.
  model["weightsManifest"][0]["paths"][0] = "../elsewhere.bin";
  { std::ofstream(dir / "model.json") << model.dump(); }
  expect_error([&] { compile_file((dir / "model.json").string()); }, ErrorCode::kInvalidModel, "must stay inside");
  model["weightsManifest"][0]["paths"][0] = "group1-shard1of1.bin";
  { std::ofstream(dir / "group1-shard1of1.bin", std::ios::binary) << shard; }
  // A field of the wrong JSON type is a malformed model (was an internal error).
  nlohmann::json bad = model;
  bad["weightsManifest"][0]["weights"][0]["name"] = 3;
  { std::ofstream(dir / "model.json") << bad.dump(); }
  expect_error([&] { compile_file((dir / "model.json").string()); }, ErrorCode::kInvalidModel, "has the wrong type");
  // A weight naming a node that is not a Const.
  bad = model;
  bad["weightsManifest"][0]["weights"][1]["name"] = "x";
  { std::ofstream(dir / "model.json") << bad.dump(); }
  expect_error([&] { compile_file((dir / "model.json").string()); }, ErrorCode::kInvalidModel, "not a Const");
  fs::remove_all(dir);
}

TEST(TfFormat, DetectedFromTheBytes) {
  EXPECT_EQ(frontend::detect_format("\x0a\x05", 2), frontend::ModelFormat::kTfGraphDef);
  EXPECT_EQ(frontend::detect_format("  {\"modelTopology\"", 18), frontend::ModelFormat::kTfjs);
  EXPECT_EQ(frontend::detect_format("\x08\x07", 2), frontend::ModelFormat::kOnnx);
  EXPECT_FALSE(frontend::tensorflow_ops().empty());
}

}  // namespace
}  // namespace gec
