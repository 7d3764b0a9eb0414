// Multi-stream plans: stream assignment and event pruning (Before/Expected on
// small graphs), the happens-before order and its checks, the memory plan
// and its verifier under concurrency, and runs that give the same bits at
// any stream count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "memory/planner.h"
#include "memory_test_util.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "runtime/executor.h"
#include "schedule/concurrency.h"
#include "schedule/schedule.h"
#include "test_util.h"

namespace gec {
namespace {

using testing::add_input;
using testing::add_op;
namespace ob = testing::onnx_build;

ir::Value* weight(ir::Graph& g, const std::string& name, int64_t n) {
  Tensor w(DType::kFloat32, {n, n});
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = static_cast<float>(i % 7) / 7.f;
  return g.add_constant(name, std::move(w));
}

int64_t position(const ir::Graph& g, const std::string& name) {
  const std::vector<ir::Node*> nodes = g.node_list();
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i]->name == name) return static_cast<int64_t>(i);
  ADD_FAILURE() << "no node " << name;
  return -1;
}

// Before: y = a2 + b2 with a2 = (x a1w) a2w and b2 = (x b1w) b2w, two
// independent MatMul chains. Expected at 2 streams: one chain per stream,
// the Add after both, one event (the chain the Add is not on), nothing else.
TEST(Streams, IndependentChainsGoToTwoStreamsJoinedByOneEvent) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", DType::kFloat32, {128, 128});
  ir::Value* a1 = add_op(g, "MatMul", {x, weight(g, "wa1", 128)}, "a1", {128, 128});
  ir::Value* a2 = add_op(g, "MatMul", {a1, weight(g, "wa2", 128)}, "a2", {128, 128});
  ir::Value* b1 = add_op(g, "MatMul", {x, weight(g, "wb1", 128)}, "b1", {128, 128});
  ir::Value* b2 = add_op(g, "MatMul", {b1, weight(g, "wb2", 128)}, "b2", {128, 128});
  g.outputs().push_back(add_op(g, "Add", {a2, b2}, "y", {128, 128}));
  schedule::StreamOptions o;
  o.streams = 2;
  o.threads = 2;
  const schedule::StreamAssignment a = schedule::assign_streams(g, o);
  ASSERT_EQ(a.schedule.streams, 2);
  auto stream = [&](const char* n) { return a.schedule.steps[static_cast<size_t>(position(g, n))].stream; };
  EXPECT_EQ(stream("n_a1"), stream("n_a2"));
  EXPECT_EQ(stream("n_b1"), stream("n_b2"));
  EXPECT_NE(stream("n_a1"), stream("n_b1"));
  EXPECT_EQ(position(g, "n_y"), 4);  // last in the new order
  EXPECT_EQ(a.events_before_pruning, 1);
  EXPECT_EQ(a.schedule.events, 1);
  const schedule::Step& y = a.schedule.steps[4];
  ASSERT_EQ(y.wait_events.size(), 1u);
  const char* other = stream("n_y") == stream("n_a2") ? "n_b2" : "n_a2";
  EXPECT_EQ(a.schedule.steps[static_cast<size_t>(position(g, other))].record_event, y.wait_events[0]);
  EXPECT_GT(a.estimate_ms, 0);
  EXPECT_GE(a.estimate_ms, a.critical_path_ms * 0.999);
  g.verify();
}

TEST(Streams, AutoKeepsAChainOnOneStreamAndSpreadsWideGraphsOfSmallOps) {
  ir::Graph chain;
  ir::Value* v = add_input(chain, "x", DType::kFloat32, {256, 256});
  for (int i = 0; i < 6; ++i) v = add_op(chain, "MatMul", {v, weight(chain, "w" + std::to_string(i), 256)}, "m" + std::to_string(i), {256, 256});
  chain.outputs().push_back(v);
  schedule::StreamOptions o;
  o.threads = 2;
  EXPECT_EQ(schedule::assign_streams(chain, o).schedule.streams, 1);

  // Eight branches of four Relus on 8192 floats each: on two threads, every
  // Relu would pay a parallel region; two streams of one thread overlap them.
  ir::Graph wide;
  ir::Value* x = add_input(wide, "x", DType::kFloat32, {1, 8192});
  std::vector<ir::Value*> ends;
  for (int b = 0; b < 8; ++b) {
    ir::Value* r = x;
    for (int k = 0; k < 4; ++k)
      r = add_op(wide, k % 2 ? "Relu" : "Sigmoid", {r}, "r" + std::to_string(b) + "_" + std::to_string(k), {1, 8192});
    ends.push_back(r);
  }
  ir::Node* cat = wide.add_node("Concat", ends, {"y"}, "cat");
  cat->attrs.push_back(ir::Attribute::Int("axis", 1));
  cat->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 8 * 8192});
  wide.outputs().push_back(cat->output(0));
  const schedule::StreamAssignment a = schedule::assign_streams(wide, o);
  EXPECT_EQ(a.schedule.streams, 2) << a.choice;
  EXPECT_NE(a.choice.find("auto: 2"), std::string::npos) << a.choice;
  EXPECT_LT(a.estimate_ms, 0.85 * a.sequential_estimate_ms);
  wide.verify();
}

// Before: a1 -> a2 on stream 0; b on stream 1 reads a1 and a2; c on stream 1
// reads a1; d on stream 0 reads b; e on stream 2 reads a1 and b.
// Expected: b waits for a2 only (a1 precedes a2 on its stream), c waits for
// nothing (b's wait covers it), d waits for b, e waits for b only (b waited
// for a2, after a1).
TEST(Streams, EventsImpliedByStreamOrderOrOtherEventsArePruned) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", DType::kFloat32, {4});
  ir::Value* a1 = add_op(g, "Relu", {x}, "a1", {4});
  ir::Value* a2 = add_op(g, "Neg", {a1}, "a2", {4});
  ir::Value* b = add_op(g, "Add", {a1, a2}, "b", {4});
  ir::Value* c = add_op(g, "Neg", {a1}, "c", {4});
  ir::Value* d = add_op(g, "Neg", {b}, "d", {4});
  ir::Value* e = add_op(g, "Add", {a1, b}, "e", {4});
  g.outputs() = {c, d, e};
  int64_t before = 0;
  const schedule::GraphSchedule s = schedule::place_events(g, {0, 0, 1, 1, 0, 2}, &before);
  EXPECT_EQ(s.streams, 3);
  EXPECT_EQ(before, 6);  // b<-a1, b<-a2, c<-a1, d<-b, e<-a1, e<-b
  EXPECT_EQ(s.events, 2);
  const int32_t ea2 = s.steps[1].record_event, eb = s.steps[2].record_event;
  EXPECT_EQ(s.steps[0].record_event, -1);
  EXPECT_NE(ea2, -1);
  EXPECT_NE(eb, -1);
  EXPECT_EQ(s.steps[2].wait_events, (std::vector<int32_t>{ea2}));
  EXPECT_TRUE(s.steps[3].wait_events.empty());
  EXPECT_EQ(s.steps[4].wait_events, (std::vector<int32_t>{eb}));
  EXPECT_EQ(s.steps[5].wait_events, (std::vector<int32_t>{eb}));

  const schedule::Concurrency order(s);
  EXPECT_TRUE(order.happens_before(0, 1));  // stream order
  EXPECT_TRUE(order.happens_before(0, 3));  // through b's event
  EXPECT_TRUE(order.happens_before(0, 5));  // a1 -> a2 -> b -> e
  EXPECT_FALSE(order.happens_before(3, 4)); // c (stream 1) and d (stream 0)
  EXPECT_FALSE(order.happens_before(3, 5)); // c and e
  EXPECT_FALSE(order.happens_before(4, 5)); // d and e
  EXPECT_FALSE(order.happens_before(4, 2)); // never backwards
  EXPECT_EQ(order.last_unordered(3), 5);    // c may run with d and e
  EXPECT_EQ(order.last_unordered(0), 0);    // everything later waits for a1
  EXPECT_EQ(order.last_unordered(2), 2);    // b: c follows it on stream 1, d and e wait for it
  EXPECT_EQ(order.last_unordered(1), 1);    // a2: b waits for it, c and d follow
}

TEST(Streams, OrderRefusesPlansThatCouldDeadlockOrNameNothing) {
  auto plan = [](std::vector<int32_t> streams, int32_t count, int32_t events) {
    schedule::GraphSchedule s;
    s.streams = count;
    s.events = events;
    for (size_t i = 0; i < streams.size(); ++i) {
      schedule::Step st;
      st.node = static_cast<int32_t>(i);
      st.stream = streams[i];
      s.steps.push_back(st);
    }
    return s;
  };
  using testing::expect_error;
  schedule::GraphSchedule s = plan({0, 1, 0}, 2, 1);
  s.steps[2].record_event = 0;
  s.steps[1].wait_events = {0};  // recorded by a later step: could deadlock
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "does not come before it");
  s = plan({0, 1}, 2, 1);
  s.steps[0].record_event = 0;
  s.steps[1].record_event = 0;
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "recorded twice");
  s = plan({0, 1}, 2, 1);
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "never recorded");
  s = plan({0, 2}, 2, 0);
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "runs on stream 2 of 2");
  s = plan({0}, 0, 0);
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "0 streams");
  s = plan({0, 1}, 2, 1);
  s.steps[0].record_event = 0;
  s.steps[1].wait_events = {0, 0};
  expect_error([&] { schedule::Concurrency c(s); }, ErrorCode::kCorruptFile, "twice");
}

// Two branches, a = Relu(x) -> a2 = Transpose(a) on stream 0 and
// b = Sigmoid(x) -> b2 = Transpose(b) on stream 1, joined by y = a2 + b2.
// In plan order a dies before b is made, so one stream's plan gives b a's
// bytes; on two streams b may be written while a is still read.
struct TwoBranches {
  ir::Graph g;
  ir::Value *a, *b;
  TwoBranches() {
    ir::Value* x = add_input(g, "x", DType::kFloat32, {64, 64});
    a = add_op(g, "Relu", {x}, "a", {64, 64});
    ir::Value* a2 = add_op(g, "Transpose", {a}, "a2", {64, 64}, {ir::Attribute::Ints("perm", {1, 0})});
    b = add_op(g, "Sigmoid", {x}, "b", {64, 64});
    ir::Value* b2 = add_op(g, "Transpose", {b}, "b2", {64, 64}, {ir::Attribute::Ints("perm", {1, 0})});
    g.outputs().push_back(add_op(g, "Add", {a2, b2}, "y", {64, 64}));
  }
};

bool overlap(const memory::MemoryPlan& p, const ir::ValueIndex& ids, const ir::Value* u, const ir::Value* v) {
  const int64_t lu = p.at(ids.id(u)).offset, lv = p.at(ids.id(v)).offset;
  return lu < lv + 64 * 64 * 4 && lv < lu + 64 * 64 * 4;
}

TEST(StreamMemory, VerifierRejectsBytesSharedAcrossUnorderedStreams) {
  TwoBranches t;
  const schedule::GraphSchedule s = schedule::place_events(t.g, {0, 0, 1, 1, 0});
  const schedule::Concurrency order(s);
  const ir::ValueIndex ids(t.g);
  const memory::MemoryPlan one = memory::plan_memory(t.g, ids);
  ASSERT_TRUE(overlap(one, ids, t.a, t.b));  // fine on one stream
  memory::verify_plan(t.g, ids, one);
  testing::expect_error([&] { memory::verify_plan(t.g, ids, one, &order); }, ErrorCode::kInternal,
                        "while a use of it is not ordered before that step");
  // Planned for the two streams: separate bytes, and the verifier agrees.
  const memory::MemoryPlan two = memory::plan_memory(t.g, ids, &order);
  EXPECT_FALSE(overlap(two, ids, t.a, t.b));
  memory::verify_plan(t.g, ids, two, &order);
  EXPECT_GT(two.arena_bytes, one.arena_bytes);
}

TEST(StreamMemory, VerifierRejectsAReadThatDoesNotWaitForItsProducer) {
  TwoBranches t;
  schedule::GraphSchedule s = schedule::place_events(t.g, {0, 0, 1, 1, 0});
  ASSERT_EQ(s.steps[4].wait_events.size(), 1u);
  s.steps[4].wait_events.clear();  // y no longer waits for b2
  const schedule::Concurrency order(s);
  const ir::ValueIndex ids(t.g);
  const memory::MemoryPlan p = memory::plan_memory(t.g, ids, &order);
  testing::expect_error([&] { memory::verify_plan(t.g, ids, p, &order); }, ErrorCode::kInternal,
                        "reads 'b2' without waiting for its producer");
}

// In place on several streams: c = Neg(a) may write over a only when every
// other use of a (the Relu on the other stream) happens before it.
TEST(StreamMemory, InPlaceOnlyAfterEveryOtherUseOfTheInput) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", DType::kFloat32, {64, 64});
  ir::Value* a = add_op(g, "Sigmoid", {x}, "a", {64, 64});
  ir::Value* r = add_op(g, "Relu", {a}, "r", {64, 64});
  ir::Value* c = add_op(g, "Neg", {a}, "c", {64, 64});
  g.outputs() = {r, c};
  const ir::ValueIndex ids(g);
  {  // r on stream 1 unordered with c on stream 0: c must not take a's bytes
    const schedule::Concurrency order(schedule::place_events(g, {0, 1, 0}));
    const memory::MemoryPlan p = memory::plan_memory(g, ids, &order);
    EXPECT_NE(p.at(ids.id(c)).offset, p.at(ids.id(a)).offset);
    memory::verify_plan(g, ids, p, &order);
    memory::MemoryPlan forced = p;  // put c over a by hand: refused
    forced.at(ids.id(c)).offset = p.at(ids.id(a)).offset;
    testing::expect_error([&] { memory::verify_plan(g, ids, forced, &order); }, ErrorCode::kInternal, "overwrites 'a'");
  }
  {  // all on one stream: in place
    const schedule::Concurrency order(schedule::place_events(g, {0, 0, 0}));
    const memory::MemoryPlan p = memory::plan_memory(g, ids, &order);
    EXPECT_EQ(p.at(ids.id(c)).offset, p.at(ids.id(a)).offset);
    memory::verify_plan(g, ids, p, &order);
  }
}

// x[1,16,24,24] -> four branches (1x1 conv; 3x3 conv; maxpool -> 1x1 conv;
// 1x1 -> 3x3 conv), each + Relu, concatenated: an Inception block.
std::string inception_bytes() {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,24,24");
  ob::add_output(g, "y", ob::kFloat, "1,64,24,24");
  int seed = 0;
  auto conv = [&](const std::string& in, const std::string& out, int64_t k) {
    std::vector<float> w(16 * 16 * static_cast<size_t>(k * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>((i * 7 + seed) % 13) - 6) / 40.f;
    ++seed;
    ob::add_float_init(g, "w_" + out, {16, 16, k, k}, w);
    auto* c = ob::add_node(g, "Conv", {in, "w_" + out}, {out + "_c"}, out + "_conv");
    ob::attr_ints(c, "pads", {k / 2, k / 2, k / 2, k / 2});
    ob::add_node(g, "Relu", {out + "_c"}, {out}, out + "_relu");
  };
  conv("x", "b1", 1);
  conv("x", "b2", 3);
  auto* mp = ob::add_node(g, "MaxPool", {"x"}, {"p"}, "pool");
  ob::attr_ints(mp, "kernel_shape", {3, 3});
  ob::attr_ints(mp, "pads", {1, 1, 1, 1});
  conv("p", "b3", 1);
  conv("x", "b4a", 1);
  conv("b4a", "b4", 3);
  ob::attr_i(ob::add_node(g, "Concat", {"b1", "b2", "b3", "b4"}, {"y"}, "cat"), "axis", 1);
  return m.SerializeAsString();
}

Tensor inception_input() {
  Tensor x(DType::kFloat32, {1, 16, 24, 24});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 11) % 23) / 11.f - 1.f;
  return x;
}

std::vector<float> run_with(const CompiledModel& cm, int threads) {
  SessionOptions so;
  so.num_threads = threads;
  auto s = Session::load_from_bytes(cm.gom, so);
  const Tensor x = inception_input();
  auto out = s->run({x.view()});
  auto again = s->run({x.view()});  // a second run (events of a new generation)
  EXPECT_EQ(std::memcmp(out[0].data(), again[0].data(), out[0].bytes()), 0);
  return testing::values<float>(out[0]);
}

// Each kernel runs on one thread at every stream count (threads = streams),
// so the bits must not depend on how the steps were spread.
TEST(Streams, RunsComputeTheSameBitsAtAnyStreamCount) {
  const std::string bytes = inception_bytes();
  for (int level : {0, 2}) {
    std::vector<float> want;
    for (int streams : {1, 2, 4}) {
      CompileOptions o;
      o.opt_level = level;
      o.streams = streams;
      const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
      const model::LoadedModel m = model::read_gom_bytes(cm.gom);
      EXPECT_EQ(m.execution_plan.graphs[0].streams, streams) << "-O" << level;
      const std::vector<float> got = run_with(cm, streams);
      if (want.empty()) want = got;
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << streams << " streams, -O" << level;
      // Fewer threads than streams: fewer workers, same bits.
      const std::vector<float> one = run_with(cm, 1);
      EXPECT_EQ(std::memcmp(one.data(), want.data(), one.size() * sizeof(float)), 0) << streams << " streams, 1 thread";
    }
  }
}

TEST(Streams, ReportAndInspectNameTheStreams) {
  const std::string bytes = inception_bytes();
  CompileOptions o;
  o.streams = 2;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  EXPECT_NE(cm.report_json.find("\"streams\""), std::string::npos);
  EXPECT_NE(cm.report_json.find("\"events_before_pruning\""), std::string::npos);
  EXPECT_NE(cm.report_json.find("\"critical_path_ms_estimate\""), std::string::npos);
  EXPECT_NE(cm.report_json.find("\"one_stream_arena_bytes\""), std::string::npos);
  testing::expect_error([&] {
    CompileOptions bad;
    bad.streams = 65;
    compile_onnx_bytes(bytes.data(), bytes.size(), bad);
  }, ErrorCode::kInvalidArgument, "streams");
}

// A step failing on one stream ends the run with its error; the other
// streams do not hang, and the next run works.
TEST(Streams, AFailingStepEndsTheRunOnEveryStream) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "64,64");
  ob::add_input(g, "i", ob::kInt64, "2");
  ob::add_output(g, "y", ob::kFloat, "64,64");
  ob::add_output(g, "z", ob::kFloat, "2,64");
  ob::add_node(g, "Sigmoid", {"x"}, {"s1"}, "s1");
  ob::add_node(g, "Tanh", {"s1"}, {"s2"}, "s2");
  ob::add_node(g, "Exp", {"s2"}, {"y"}, "s3");
  ob::add_node(g, "Relu", {"x"}, {"r"}, "r");
  ob::add_node(g, "Gather", {"r", "i"}, {"z"}, "gather");
  // Reads both chains: whichever stream it lands on waits for the other's
  // event, so a failing Gather must wake it (the abort path).
  ob::add_output(g, "w", ob::kFloat, "2,64");
  ob::add_node(g, "MatMul", {"z", "s2"}, {"w"}, "join");
  const std::string bytes = m.SerializeAsString();
  CompileOptions o;
  o.opt_level = 0;
  o.streams = 2;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  ASSERT_EQ(lm.execution_plan.graphs[0].streams, 2);
  ASSERT_GT(lm.execution_plan.graphs[0].events, 0);
  SessionOptions so;
  so.num_threads = 2;
  auto s = Session::load_from_bytes(cm.gom, so);
  Tensor x(DType::kFloat32, {64, 64});
  for (int64_t k = 0; k < x.numel(); ++k) x.as<float>()[k] = static_cast<float>(k % 9) - 4.f;
  const Tensor bad = testing::make<int64_t>({2}, {0, 999}), good = testing::make<int64_t>({2}, {1, 2});
  testing::expect_error([&] { s->run({x.view(), bad.view()}); }, ErrorCode::kInvalidArgument, "gather");
  auto out = s->run({x.view(), good.view()});
  EXPECT_EQ(out[1].as<float>()[0], std::max(0.f, x.as<float>()[64]));
}

// An If whose branches read two outer values made on different streams (its
// only dependencies are outer-scope reads): it must wait for both, and its
// body runs on its own stream's worker.
TEST(Streams, SubgraphsReadingOuterValuesWaitForTheirProducers) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "cond", ob::kBool, "");
  ob::add_input(g, "x", ob::kFloat, "64,64");
  ob::add_output(g, "y", ob::kFloat, "64,64");
  ob::add_node(g, "Sigmoid", {"x"}, {"a1"}, "a1");
  ob::add_node(g, "Tanh", {"a1"}, {"a2"}, "a2");
  ob::add_node(g, "Exp", {"a2"}, {"a"}, "a3");
  ob::add_node(g, "Relu", {"x"}, {"b1"}, "b1");
  ob::add_node(g, "Neg", {"b1"}, {"b"}, "b2");
  auto* iff = ob::add_node(g, "If", {"cond"}, {"y"}, "branch");
  auto* then_g = ob::attr(iff, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  ob::add_node(then_g, "Add", {"a", "b"}, {"t"}, "then_add");
  ob::add_output(then_g, "t", ob::kFloat, "64,64");
  auto* else_g = ob::attr(iff, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  ob::add_node(else_g, "Mul", {"a", "b"}, {"e"}, "else_mul");
  ob::add_output(else_g, "e", ob::kFloat, "64,64");
  const std::string bytes = m.SerializeAsString();
  Tensor x(DType::kFloat32, {64, 64});
  for (int64_t k = 0; k < x.numel(); ++k) x.as<float>()[k] = static_cast<float>(k % 13) / 6.f - 1.f;
  std::vector<std::vector<float>> got;
  for (int streams : {1, 2, 3}) {
    CompileOptions o;
    o.opt_level = 0;
    o.streams = streams;
    const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
    const int planned = model::read_gom_bytes(cm.gom).execution_plan.graphs[0].streams;
    EXPECT_EQ(planned, std::min(streams, 2)) << streams;
    SessionOptions so;
    so.num_threads = planned;  // one thread per worker (no OpenMP team: the TSan job runs this)
    auto s = Session::load_from_bytes(cm.gom, so);
    for (bool c : {true, false}) {
      Tensor cond(DType::kBool, {});
      cond.as<uint8_t>()[0] = c;
      for (int r = 0; r < 3; ++r) got.push_back(testing::values<float>(s->run({cond.view(), x.view()})[0]));
    }
  }
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], got[k % 6]) << k;
  const float a = std::exp(std::tanh(1.f / (1.f + std::exp(-x.as<float>()[7])))), b = -std::max(0.f, x.as<float>()[7]);
  EXPECT_NEAR(got[0][7], a + b, 1e-5);
  EXPECT_NEAR(got[3][7], a * b, 1e-5);
}

}  // namespace
}  // namespace gec

namespace gec {
namespace {

// Two run contexts (executors) of one model share the packed convolution
// weights: the second run context packs nothing of its own, and both compute
// the same bits.
TEST(SharedWeights, RunContextsOfOneModelPackConvWeightsOnce) {
  const std::string bytes = inception_bytes();
  CompileOptions o;
  o.streams = 1;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  const model::LoadedModel m = model::read_gom_bytes(cm.gom);
  kernels::SharedWeights shared;
  std::vector<uint8_t> arena1(static_cast<size_t>(m.arena_bytes) + 64), arena2(arena1.size());
  auto align = [](std::vector<uint8_t>& a) {
    return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(a.data()) + 63) / 64 * 64);
  };
  runtime::Executor e1(m, align(arena1), 1, false, 0, &shared), e2(m, align(arena2), 1, false, 0, &shared);
  const Tensor x = inception_input();
  e1.bind_input(0, x.view());
  e1.run();
  const size_t after_one = shared.size();
  EXPECT_GT(after_one, 0u) << "no conv asked for a packed weight layout";
  e2.bind_input(0, x.view());
  e2.run();
  EXPECT_EQ(shared.size(), after_one);
  EXPECT_EQ(std::memcmp(e1.output(0).data, e2.output(0).data, e1.output(0).bytes()), 0);
}

std::vector<float> pattern(size_t n, int mul, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * mul) % mod) - mod / 2) * scale;
  return v;
}

// x [1,16,64,64] -> Relu -> r -> Slice [:, :, :16, :16] -> a [1,16,16,16]
// -> ConvTranspose (kernel = stride = 2, 16 -> 16) -> b [1,16,32,32]
// -> Slice [:, :, :16, :16] -> c;  y = a + c.
// The transposed convolution, the one step here that asks for scratch
// memory, runs as one MatMul whose product (as large as b) and workspace
// live there; r (256 KiB) is dead by then, so arena bytes serve that
// scratch while a, read again at the end, keeps its own: the stream's own
// scratch buffer stays empty, and y matches a loop of the same arithmetic
// in double precision (to 1e-5 of its largest value).
TEST(ArenaScratch, AStepsWorkspaceTakesArenaBytesNoLiveValueHolds) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,64,64");
  ob::add_output(g, "y", ob::kFloat, "1,16,16,16");
  const std::vector<float> wt = pattern(16 * 16 * 4, 5, 17, 1.f / 32);
  ob::add_float_init(g, "w", {16, 16, 2, 2}, wt);
  ob::add_int64_init(g, "starts", {2}, {0, 0});
  ob::add_int64_init(g, "ends", {2}, {16, 16});
  ob::add_int64_init(g, "axes", {2}, {2, 3});
  ob::add_node(g, "Relu", {"x"}, {"r"});
  ob::add_node(g, "Slice", {"r", "starts", "ends", "axes"}, {"a"});
  ob::attr_ints(ob::add_node(g, "ConvTranspose", {"a", "w"}, {"b"}), "strides", {2, 2});
  ob::add_node(g, "Slice", {"b", "starts", "ends", "axes"}, {"c"});
  ob::add_node(g, "Add", {"a", "c"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  CompileOptions o;
  o.streams = 1;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  std::vector<uint8_t> arena(static_cast<size_t>(lm.arena_bytes) + 64);
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(arena.data()) + 63) / 64 * 64);
  runtime::Executor e(lm, base, 2, false, 0, nullptr);
  EXPECT_GE(e.steps_with_arena_scratch(), 1u);
  const std::vector<float> xs = pattern(16 * 64 * 64, 7, 29, 1.f / 8);
  const Tensor x = testing::make<float>({1, 16, 64, 64}, xs);
  e.bind_input(0, x.view());
  e.run();
  EXPECT_EQ(e.scratch_bytes(), 0u) << "the product did not fit an arena gap";

  // The same arithmetic: a = relu(x)[:, :16, :16], b[o][2i+p][2j+q] =
  // sum_c a[c][i][j] w[c][o][p][q], c = b[:, :16, :16] (i, j < 8), y = a + c.
  std::vector<double> a(16 * 16 * 16), want(16 * 16 * 16);
  for (int64_t ch = 0; ch < 16; ++ch)
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 16; ++j)
        a[static_cast<size_t>((ch * 16 + i) * 16 + j)] = std::max(0.f, xs[static_cast<size_t>((ch * 64 + i) * 64 + j)]);
  double largest = 0;
  for (int64_t oc = 0; oc < 16; ++oc)
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t col = 0; col < 16; ++col) {
        const int64_t i = r / 2, p = r % 2, j = col / 2, q = col % 2;
        double v = 0;
        for (int64_t ch = 0; ch < 16; ++ch)
          v += a[static_cast<size_t>((ch * 16 + i) * 16 + j)] * wt[static_cast<size_t>(((ch * 16 + oc) * 2 + p) * 2 + q)];
        const size_t at = static_cast<size_t>((oc * 16 + r) * 16 + col);
        want[at] = a[at] + v;
        largest = std::max(largest, std::fabs(want[at]));
      }
  const float* y = static_cast<const float*>(e.output(0).data);
  float worst = 0;
  for (size_t k = 0; k < want.size(); ++k) worst = std::max(worst, static_cast<float>(std::fabs(y[k] - want[k])));
  EXPECT_LE(worst, 1e-5 * largest);
}

}  // namespace
}  // namespace gec
