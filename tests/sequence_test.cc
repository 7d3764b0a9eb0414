// Sequence and optional values end to end: small ONNX models built here are
// compiled (-O0 and -O3), saved as .gom, loaded and run through
// Session::run_values. Expected values are worked out by hand from the ONNX
// operator texts (SplitToSequence-11, SequenceInsert-11, SequenceErase-11,
// SequenceAt-11, SequenceLength-11, ConcatFromSequence-11, Optional-15,
// OptionalHasElement-15, OptionalGetElement-15).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gec/compiler.h"
#include "frontend/onnx/tensor_proto.h"
#include "gec/runtime.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec {
namespace {

using namespace gec::testing;
using namespace gec::testing::onnx_build;
namespace fs = std::filesystem;

// Compiles `m` at `level` through a file (the public API reads files) and
// loads the result from a saved .gom, so the .gom round trip is covered.
std::unique_ptr<Session> compile_and_load(const onnx::ModelProto& m, int level) {
  const fs::path dir = fs::temp_directory_path() / ("gec_sequence_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string onnx_path = (dir / "model.onnx").string(), gom_path = (dir / "model.gom").string();
  {
    std::ofstream f(onnx_path, std::ios::binary);
    m.SerializeToOstream(&f);
  }
  CompileOptions o;
  o.opt_level = level;
  save_gom(compile_onnx_file(onnx_path, o), gom_path);
  SessionOptions so;
  so.num_threads = 1;
  auto s = Session::load(gom_path, so);
  fs::remove_all(dir);
  return s;
}

// x float[2,3], y float[2,1]:
//   s1 = SplitToSequence(x, axis 1)          -> [x[:,0:1], x[:,1:2], x[:,2:3]]
//   s2 = SequenceInsert(s1, y, position 0)   -> [y, x0, x1, x2]
//   s3 = SequenceErase(s2, position -1)      -> [y, x0, x1]
//   n  = SequenceLength(s3)                   -> 3
//   c  = ConcatFromSequence(s3, axis 1)      -> [y | x0 | x1], float[2,3]
//   a  = SequenceAt(s3, position -2)          -> x0
//   outputs: n, c, a, s3
onnx::ModelProto split_insert_erase_model() {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2,3");
  add_input(g, "y", kFloat, "2,1");
  add_int64_init(g, "zero", {}, {0});
  add_int64_init(g, "minus1", {}, {-1});
  add_int64_init(g, "minus2", {}, {-2});
  attr_i(add_node(g, "SplitToSequence", {"x"}, {"s1"}, "split"), "axis", 1);
  add_node(g, "SequenceInsert", {"s1", "y", "zero"}, {"s2"}, "insert");
  add_node(g, "SequenceErase", {"s2", "minus1"}, {"s3"}, "erase");
  add_node(g, "SequenceLength", {"s3"}, {"n"}, "length");
  attr_i(add_node(g, "ConcatFromSequence", {"s3"}, {"c"}, "concat"), "axis", 1);
  add_node(g, "SequenceAt", {"s3", "minus2"}, {"a"}, "at");
  add_output(g, "n", kInt64, "");
  add_output(g, "c", kFloat, "2,3");
  add_output(g, "a", kFloat, "2,1");
  set_sequence_type(g->add_output(), "s3", kFloat, "2,1");
  return m;
}

TEST(Sequence, SplitInsertEraseConcatAtLength) {
  for (int level : {0, 3}) {
    SCOPED_TRACE("-O" + std::to_string(level));
    auto s = compile_and_load(split_insert_erase_model(), level);
    ASSERT_EQ(s->outputs().size(), 4u);
    EXPECT_EQ(s->outputs()[3].kind, ValueKind::kSequence);
    // Element dims are a run-time matter (sequences may mix shapes); the rank stays.
    EXPECT_EQ(s->outputs()[3].str(), "s3: seq(float32[?,?])");
    const Tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor y = make<float>({2, 1}, {10, 20});
    auto outs = s->run_values({AnyValue::of_tensor(x), AnyValue::of_tensor(y)});
    ASSERT_EQ(outs.size(), 4u);
    EXPECT_EQ(values<int64_t>(outs[0].tensor), (std::vector<int64_t>{3}));
    EXPECT_EQ(outs[1].tensor.shape(), (Shape{2, 3}));
    EXPECT_EQ(values<float>(outs[1].tensor), (std::vector<float>{10, 1, 2, 20, 4, 5}));
    EXPECT_EQ(values<float>(outs[2].tensor), (std::vector<float>{1, 4}));
    ASSERT_EQ(outs[3].kind, ValueKind::kSequence);
    EXPECT_EQ(outs[3].elem_dtype, DType::kFloat32);
    ASSERT_EQ(outs[3].elements.size(), 3u);
    EXPECT_EQ(values<float>(outs[3].elements[0]), (std::vector<float>{10, 20}));
    EXPECT_EQ(values<float>(outs[3].elements[2]), (std::vector<float>{2, 5}));
  }
}

// SplitToSequence with a scalar split: pieces of 2, the last one shorter;
// ConcatFromSequence with new_axis = 1 stacks equal pieces.
TEST(Sequence, ScalarSplitLeavesAShorterLastPieceAndNewAxisStacks) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "5");
  add_int64_init(g, "two", {}, {2});
  add_node(g, "SplitToSequence", {"x", "two"}, {"s"}, "split");
  add_node(g, "SplitToSequence", {"x"}, {"ones"}, "split_ones");  // keepdims 1: five [1] pieces
  auto* stack = add_node(g, "ConcatFromSequence", {"ones"}, {"st"}, "stack");
  attr_i(stack, "axis", 0);
  attr_i(stack, "new_axis", 1);
  set_sequence_type(g->add_output(), "s", kFloat, "?");
  add_output(g, "st", kFloat, "5,1");
  auto s = compile_and_load(m, 3);
  auto outs = s->run_values({AnyValue::of_tensor(make<float>({5}, {1, 2, 3, 4, 5}))});
  ASSERT_EQ(outs[0].elements.size(), 3u);
  EXPECT_EQ(outs[0].elements[0].shape(), (Shape{2}));
  EXPECT_EQ(outs[0].elements[2].shape(), (Shape{1}));
  EXPECT_EQ(values<float>(outs[0].elements[2]), (std::vector<float>{5}));
  EXPECT_EQ(outs[1].tensor.shape(), (Shape{5, 1}));
  EXPECT_EQ(values<float>(outs[1].tensor), (std::vector<float>{1, 2, 3, 4, 5}));
}

// xs: seq(float32), p: int64 -> SequenceAt(xs, p).
onnx::ModelProto sequence_at_model() {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  set_sequence_type(g->add_input(), "xs", kFloat, "?");
  add_input(g, "p", kInt64, "");
  add_node(g, "SequenceAt", {"xs", "p"}, {"y"}, "pick");
  add_output(g, "y", kFloat, "?");
  return m;
}

TEST(Sequence, SequenceInputsAreCheckedAndPositionsBoundsChecked) {
  auto s = compile_and_load(sequence_at_model(), 0);
  ASSERT_EQ(s->inputs()[0].kind, ValueKind::kSequence);
  const AnyValue xs = AnyValue::sequence(DType::kFloat32, {make<float>({2}, {1, 2}), make<float>({1}, {3})});
  auto outs = s->run_values({xs, AnyValue::of_tensor(make<int64_t>({}, {-1}))});
  EXPECT_EQ(values<float>(outs[0].tensor), (std::vector<float>{3}));
  expect_error([&] { s->run_values({xs, AnyValue::of_tensor(make<int64_t>({}, {2}))}); },
               ErrorCode::kInvalidArgument, "node 'pick' (SequenceAt): position 2 is out of range");
  // A tensor where the model takes a sequence, and an element of another dtype.
  expect_error([&] { s->run_values({AnyValue::of_tensor(make<float>({1}, {1})), AnyValue::of_tensor(make<int64_t>({}, {0}))}); },
               ErrorCode::kInvalidArgument, "input 'xs': expected seq(float32");
  const AnyValue mixed = AnyValue::sequence(DType::kFloat32, {make<int64_t>({1}, {1})});
  expect_error([&] { s->run_values({mixed, AnyValue::of_tensor(make<int64_t>({}, {0}))}); },
               ErrorCode::kInvalidArgument, "an element int64[1]");
  // The tensor-only API refuses the model and says what to use.
  const Tensor p = make<int64_t>({}, {0});
  expect_error([&] { s->run({p.view(), p.view()}); }, ErrorCode::kInvalidArgument, "run_values");
}

// x: optional(float32[2]) -> has = OptionalHasElement(x), y = OptionalGetElement(x);
// z = Optional() of type optional(tensor(int64)) -> has_z = OptionalHasElement(z).
onnx::ModelProto optional_model() {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  set_optional_type(g->add_input(), "x", kFloat, "2");
  add_node(g, "OptionalHasElement", {"x"}, {"has"}, "has");
  add_node(g, "OptionalGetElement", {"x"}, {"y"}, "get");
  auto* none = add_node(g, "Optional", {}, {"z"}, "none");
  onnx::AttributeProto* type = attr(none, "type", onnx::AttributeProto::TYPE_PROTO);
  onnx::ValueInfoProto tmp;
  set_type(&tmp, "t", kInt64, "");
  *type->mutable_tp() = tmp.type();
  add_node(g, "OptionalHasElement", {"z"}, {"has_z"}, "has_z");
  add_output(g, "has", kBool, "");
  add_output(g, "y", kFloat, "2");
  add_output(g, "has_z", kBool, "");
  return m;
}

TEST(Optional, HasGetAndNone) {
  for (int level : {0, 3}) {
    SCOPED_TRACE("-O" + std::to_string(level));
    auto s = compile_and_load(optional_model(), level);
    EXPECT_EQ(s->inputs()[0].str(), "x: optional(float32[2])");
    const AnyValue x = AnyValue::optional_of(AnyValue::of_tensor(make<float>({2}, {7, 8})));
    auto outs = s->run_values({x});
    EXPECT_EQ(values<uint8_t>(outs[0].tensor), (std::vector<uint8_t>{1}));
    EXPECT_EQ(values<float>(outs[1].tensor), (std::vector<float>{7, 8}));
    EXPECT_EQ(values<uint8_t>(outs[2].tensor), (std::vector<uint8_t>{0}));
    // OptionalGetElement of None is refused, naming the node.
    expect_error([&] { s->run_values({AnyValue::none(ValueKind::kOptionalTensor, DType::kFloat32)}); },
                 ErrorCode::kInvalidArgument, "node 'get' (OptionalGetElement)");
  }
}

// A tensor fed to a sequence op, and a sequence declared as a tensor output:
// refused at compile time, naming the node and the value (they would
// otherwise reach kernels that read the wrong kind of value).
TEST(Sequence, KindMismatchesAreRefusedAtCompileTime) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "2");
  add_input(g, "p", kInt64, "");
  add_node(g, "SequenceAt", {"x", "p"}, {"y"}, "at");
  add_output(g, "y", kFloat, "");
  expect_error([&] { compile_and_load(m, 0); }, ErrorCode::kInvalidModel,
               "node 'at' (SequenceAt): input 0 'x' is float32[2], the op needs a sequence");

  onnx::ModelProto m2 = new_model(17, 8);
  auto* g2 = m2.mutable_graph();
  add_input(g2, "x", kFloat, "2");
  add_node(g2, "SequenceConstruct", {"x"}, {"s"}, "make");
  add_output(g2, "s", kFloat, "2");
  expect_error([&] { compile_and_load(m2, 0); }, ErrorCode::kInvalidModel,
               "node 'make' (SequenceConstruct): output 's' is float32[2], the op needs a sequence");
}

// A model declaring SequenceAt's result a scalar, fed a [40] element: the
// unproven scalar gets no arena slot (it did, and Relu overflowed it).
TEST(Sequence, AnElementLargerThanDeclaredIsNotPlannedStatically) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  set_sequence_type(g->add_input(), "xs", kFloat, "");
  add_int64_init(g, "zero", {}, {0});
  add_node(g, "SequenceAt", {"xs", "zero"}, {"e"}, "at");
  add_node(g, "Relu", {"e"}, {"y"}, "relu");
  add_output(g, "y", kFloat, "");
  auto s = compile_and_load(m, 3);
  std::vector<float> big(40, -1.f);
  big[7] = 2.f;
  auto outs = s->run_values({AnyValue::sequence(DType::kFloat32, {make<float>({40}, big)})});
  ASSERT_EQ(outs[0].tensor.shape(), (Shape{40}));
  EXPECT_EQ(values<float>(outs[0].tensor)[7], 2.f);
  EXPECT_EQ(values<float>(outs[0].tensor)[8], 0.f);
}

// SequenceLength's output bound to a caller buffer is written there.
TEST(Sequence, CallerOutputBuffersReceiveSequenceOpResults) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "3,2");
  attr_i(add_node(g, "SplitToSequence", {"x"}, {"s"}, "split"), "axis", 0);
  add_node(g, "SequenceLength", {"s"}, {"n"}, "len");
  add_output(g, "n", kInt64, "");
  auto s = compile_and_load(m, 2);
  const Tensor x = make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor n = make<int64_t>({}, {-999});
  s->run({x.view()}, {n.view()});
  EXPECT_EQ(values<int64_t>(n), (std::vector<int64_t>{3}));
}

// A Loop whose body makes an optional scan output: refused, naming the node.
TEST(Sequence, LoopScanOutputsMustBeTensors) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  add_input(g, "M", kInt64, "");
  add_output(g, "scan", kFloat, "?,2");
  auto* loop = add_node(g, "Loop", {"M", ""}, {"scan"}, "loop");
  onnx::AttributeProto* body = attr(loop, "body", onnx::AttributeProto::GRAPH);
  onnx::GraphProto* b = body->mutable_g();
  b->set_name("body");
  add_input(b, "i", kInt64, "");
  add_input(b, "c", kBool, "");
  add_node(b, "Identity", {"c"}, {"c_out"});
  add_node(b, "Optional", {}, {"o"});
  auto* opt_type = b->mutable_node(1)->add_attribute();
  opt_type->set_name("type");
  opt_type->set_type(onnx::AttributeProto::TYPE_PROTO);
  onnx::ValueInfoProto tmp;
  set_type(&tmp, "t", kFloat, "2");
  *opt_type->mutable_tp() = tmp.type();
  add_output(b, "c_out", kBool, "");
  set_optional_type(b->add_output(), "o", kFloat, "2");
  expect_error([&] { compile_and_load(m, 0); }, ErrorCode::kInvalidModel,
               "node 'loop' (Loop): body output 'o' is optional(float32[2]); scan outputs");
}

// Test-data files are read as the kind the model declares, and a file of
// another kind is refused rather than read as None or as an empty sequence.
TEST(Sequence, ValueFilesOfAnotherKindAreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("gec_seq_files_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string seq = (dir / "seq.pb").string(), opt = (dir / "opt.pb").string(), ten = (dir / "t.pb").string();
  frontend::write_value_proto_file(seq, AnyValue::sequence(DType::kFloat32, {make<float>({1}, {1})}), "s");
  frontend::write_value_proto_file(opt, AnyValue::optional_of(AnyValue::of_tensor(make<float>({1}, {2}))), "o");
  frontend::write_value_proto_file(ten, AnyValue::of_tensor(make<float>({1}, {3})), "t");
  EXPECT_EQ(frontend::read_value_proto_file(opt, ValueKind::kOptionalTensor).tensor.numel(), 1);
  expect_error([&] { frontend::read_value_proto_file(opt, ValueKind::kOptionalSequence); }, ErrorCode::kInvalidModel,
               "an OptionalProto of TENSOR");
  expect_error([&] { frontend::read_value_proto_file(ten, ValueKind::kOptionalTensor); }, ErrorCode::kInvalidModel,
               "not a valid ONNX OptionalProto");
  expect_error([&] { frontend::read_value_proto_file(ten, ValueKind::kSequence); }, ErrorCode::kInvalidModel,
               "not a valid ONNX SequenceProto");
  EXPECT_EQ(frontend::read_value_proto_file(seq, ValueKind::kSequence).elements.size(), 1u);
  fs::remove_all(dir);
}

TEST(Sequence, MapInputsAreRefusedAtCompileTime) {
  onnx::ModelProto m = new_model(17, 8);
  auto* g = m.mutable_graph();
  onnx::ValueInfoProto* in = g->add_input();
  in->set_name("dict");
  auto* map = in->mutable_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  onnx::ValueInfoProto tmp;
  set_type(&tmp, "v", kFloat, "");
  *map->mutable_value_type() = tmp.type();
  add_node(g, "Identity", {"dict"}, {"out"}, "id");
  *g->add_output() = *in;
  g->mutable_output(0)->set_name("out");
  expect_error([&] { compile_and_load(m, 0); }, ErrorCode::kUnsupported, "graph input 'dict' has type map");
}

}  // namespace
}  // namespace gec
