// The public API pieces the CLI and the Python package share:
// compile_onnx_bytes(), looks_like_gom(), generate_inputs(), bench(),
// profile() and their JSON (include/gec/bench.h, compiler.h, runtime.h).
#include <gtest/gtest.h>

#include <cmath>

#include <functional>

#include <nlohmann/json.hpp>

#include "gec/bench.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec {
namespace {

using namespace testing::onnx_build;

// y = Relu(x + b), x float32 [1,4] (dims given), b a constant.
std::string add_relu_model(const std::string& x_dims = "1,4") {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, x_dims);
  add_output(g, "y", kFloat, x_dims);
  add_float_init(g, "b", {4}, {1, -1, 2, -2});
  add_node(g, "Add", {"x", "b"}, {"s"}, "add0");
  add_node(g, "Relu", {"s"}, {"y"}, "act0");
  return m.SerializeAsString();
}

TEST(PublicApi, CompileOnnxBytesRunsLikeTheFile) {
  const std::string bytes = add_relu_model();
  CompiledModel c = compile_onnx_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(looks_like_gom(c.gom->data(), c.gom->size()));
  EXPECT_FALSE(looks_like_gom(bytes.data(), bytes.size()));
  EXPECT_FALSE(looks_like_gom(c.gom->data(), 4));
  auto report = nlohmann::json::parse(c.report_json);
  EXPECT_EQ(report["nodes"]["onnx"], 2);
  auto s = Session::load_from_bytes(c.gom);
  Tensor x = testing::make<float>({1, 4}, {0.5f, 0.5f, -3.f, 3.f});
  auto out = s->run({x.view()});
  EXPECT_EQ(testing::values<float>(out[0]), (std::vector<float>{1.5f, 0.f, 0.f, 1.f}));

  const std::string junk = "not an onnx model";
  try {
    compile_onnx_bytes(junk.data(), junk.size(), {}, ".", "junk.bin");
    FAIL() << "junk compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("junk.bin"), std::string::npos) << e.what();
  }
  CompileOptions bad;
  bad.opt_level = 4;
  EXPECT_THROW(compile_onnx_bytes(bytes.data(), bytes.size(), bad), Error);
}

TEST(PublicApi, BenchAndProfile) {
  const std::string bytes = add_relu_model("N,4");
  SessionOptions so;
  so.num_threads = 1;
  auto s = Session::load_from_bytes(compile_onnx_bytes(bytes.data(), bytes.size()).gom, so);
  EXPECT_EQ(s->num_threads(), 1);
  EXPECT_FALSE(s->profiling());
  std::vector<Tensor> in = generate_inputs(*s);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].shape(), (Shape{1, 4}));  // the dynamic dim is 1
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(in[0].as<float>()[i] >= 0.f && in[0].as<float>()[i] < 1.f);

  BenchOptions bo;
  bo.warmup = 1;
  bo.iterations = 4;
  BenchResult r = bench(*s, {in[0].view()}, bo);
  EXPECT_EQ(r.run_ms.size(), 4u);
  EXPECT_LE(r.min_ms, r.median_ms);
  EXPECT_LE(r.median_ms, r.max_ms);
  EXPECT_EQ(r.threads, 1);
  auto j = nlohmann::json::parse(r.json());
  for (const char* k : {"median_ms", "p90_ms", "p99_ms", "min_ms", "max_ms", "load_ms", "first_run_ms",
                        "peak_rss_bytes", "threads", "warmup", "iterations", "throughput_per_s"})
    EXPECT_TRUE(j[k].is_number()) << k;
  EXPECT_EQ(j["interval_ms"], 0);
  // Runs apart: a wait before each timed run, inside timed_s and outside
  // the runs' times.
  bo.iterations = 3;
  bo.interval_ms = 20;
  r = bench(*s, {in[0].view()}, bo);
  EXPECT_EQ(r.run_ms.size(), 3u);
  EXPECT_EQ(r.interval_ms, 20);
  EXPECT_EQ(nlohmann::json::parse(r.json())["interval_ms"], 20);
  EXPECT_GE(r.timed_s, 3 * 0.020) << "three waits of 20 ms";
  for (double bad : {-1.0, 60001.0, std::nan("")}) {
    bo.interval_ms = bad;
    EXPECT_THROW(bench(*s, {in[0].view()}, bo), Error) << bad;
  }
  bo.interval_ms = 0;
  bo.iterations = 0;
  EXPECT_THROW(bench(*s, {in[0].view()}, bo), Error);

  // profile() needs a profiling session
  EXPECT_THROW(profile(*s, {in[0].view()}), Error);
  so.profile = true;
  // -O1 keeps Add and Relu two nodes (-O2 fuses them: N is one symbol).
  CompileOptions o1;
  o1.opt_level = 1;
  auto ps = Session::load_from_bytes(compile_onnx_bytes(bytes.data(), bytes.size(), o1).gom, so);
  ProfileOptions po;
  po.iterations = 3;
  ProfileResult p = profile(*ps, {in[0].view()}, po);
  ASSERT_EQ(p.nodes.size(), 2u);
  double sum = 0, share = 0;
  for (const auto& n : p.nodes) {
    EXPECT_EQ(n.node.calls, 3);
    sum += n.mean_ms;
    share += n.share;
  }
  EXPECT_NEAR(p.total_ms, sum, 1e-9);
  EXPECT_NEAR(share, 1.0, 1e-9);
  auto pj = nlohmann::json::parse(p.json());
  EXPECT_EQ(pj["nodes"].size(), 2u);
  EXPECT_EQ(pj["nodes"][0]["name"], "add0");
  EXPECT_EQ(pj["op_types"].size(), 2u);
  auto tj = nlohmann::json::parse(p.trace_json());
  EXPECT_EQ(tj["traceEvents"].size(), 2u * static_cast<size_t>(p.iterations)) << "one event per node call";

  // warmup 0: the table of the first run (kernels made, pages first touched)
  auto fresh = Session::load_from_bytes(compile_onnx_bytes(bytes.data(), bytes.size(), o1).gom, so);
  po.warmup = 0;
  po.iterations = 1;
  ProfileResult first = profile(*fresh, {in[0].view()}, po);
  ASSERT_EQ(first.nodes.size(), 2u);
  for (const auto& n : first.nodes) EXPECT_EQ(n.node.calls, 1);
  EXPECT_EQ(first.warmup, 0);
  EXPECT_EQ(nlohmann::json::parse(first.json())["warmup"], 0);
  po.warmup = -1;
  EXPECT_THROW(profile(*fresh, {in[0].view()}, po), Error);
}

/// y = If(c) then <then branch> else <else branch>, x float32 [1,4], c a
/// bool scalar: `fill(branch, out, then)` adds each branch's nodes, which
/// write `out` (float32 [1,4]) and may read x and the outer initializers.
onnx::ModelProto if_model(const std::function<void(onnx::GraphProto*, const std::string&, bool)>& fill) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, "1,4");
  add_input(g, "c", kBool, "");
  add_output(g, "y", kFloat, "1,4");
  auto* n = add_node(g, "If", {"c"}, {"y"}, "if0");
  for (const bool then : {true, false}) {
    const std::string name = then ? "then_branch" : "else_branch";
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sg = a->mutable_g();
    sg->set_name(name);
    const std::string out = "z_" + name;
    fill(sg, out, then);
    add_output(sg, out, kFloat, "1,4");
  }
  return m;
}

// y = If(c) then Relu(x) else Neg(x): the profile lists the branches'
// nodes after the If, marked with where they lie; the total, the shares
// that add up to 1 and the op types count the main graph only (a body's
// time is inside its holder's).
TEST(PublicApi, ProfileListsTheNodesOfBodies) {
  const onnx::ModelProto m = if_model([](onnx::GraphProto* branch, const std::string& out, bool then) {
    add_node(branch, then ? "Relu" : "Neg", {"x"}, {out}, then ? "op_then_branch" : "op_else_branch");
  });
  const std::string bytes = m.SerializeAsString();
  SessionOptions so;
  so.num_threads = 1;
  so.profile = true;
  auto s = Session::load_from_bytes(compile_onnx_bytes(bytes.data(), bytes.size()).gom, so);
  const Tensor x = testing::make<float>({1, 4}, {1, -2, 3, -4});
  Tensor c(DType::kBool, {});
  *c.as<bool>() = true;
  ProfileOptions po;
  po.iterations = 3;
  const ProfileResult p = profile(*s, {x.view(), c.view()}, po);
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.nodes[0].node.name, "if0");
  EXPECT_TRUE(p.nodes[0].node.inside.empty());
  EXPECT_EQ(p.nodes[1].node.name, "op_then_branch");
  EXPECT_EQ(p.nodes[1].node.inside, "if0.then_branch");
  EXPECT_EQ(p.nodes[1].node.calls, 3);
  EXPECT_EQ(p.nodes[2].node.inside, "if0.else_branch");
  EXPECT_EQ(p.nodes[2].node.calls, 0);
  EXPECT_NEAR(p.nodes[0].share, 1.0, 1e-9);
  EXPECT_NEAR(p.total_ms, p.nodes[0].mean_ms, 1e-9);
  ASSERT_EQ(p.op_types.size(), 1u);
  EXPECT_EQ(p.op_types[0].op_type, "If");
  const auto j = nlohmann::json::parse(p.json());
  EXPECT_EQ(j["nodes"][1]["inside"], "if0.then_branch");
}

// A body's node fed only constants (here of the outer graph: an Add of two
// initializers, as exported LSTMs slice and concatenate their weights in a
// branch) is folded at compile time: then y = x * (a + b), else -x; 4 nodes
// before (If, Add, Mul, Neg), 3 after, and both branches give their values.
TEST(PublicApi, ConstantsFoldInsideBodies) {
  onnx::ModelProto m = if_model([](onnx::GraphProto* branch, const std::string& out, bool then) {
    if (then) {
      add_node(branch, "Add", {"a", "b"}, {"ab"}, "add_weights");
      add_node(branch, "Mul", {"x", "ab"}, {out}, "scale");
    } else {
      add_node(branch, "Neg", {"x"}, {out}, "negate");
    }
  });
  add_float_init(m.mutable_graph(), "a", {4}, {1, 2, 3, 4});
  add_float_init(m.mutable_graph(), "b", {4}, {1, 1, 1, 1});
  const std::string bytes = m.SerializeAsString();
  CompileOptions o;
  o.opt_level = 1;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  const auto report = nlohmann::json::parse(cm.report_json);
  EXPECT_EQ(report["nodes"]["final"], 3) << report["nodes"].dump();
  auto s = Session::load_from_bytes(cm.gom);
  const Tensor x = testing::make<float>({1, 4}, {1, -2, 3, -4});
  for (const bool cond : {true, false}) {
    Tensor c(DType::kBool, {});
    *c.as<bool>() = cond;
    const std::vector<float> y = testing::values<float>(s->run({x.view(), c.view()})[0]);
    EXPECT_EQ(y, cond ? (std::vector<float>{2, -6, 12, -20}) : (std::vector<float>{-1, 2, -3, 4}));
  }
}

}  // namespace
}  // namespace gec

namespace gec {
namespace {

// FLOP counts of the profile's GFLOP/s column, worked out by hand.
TEST(PublicApiProfile, NodeFlopsFollowTheShapes) {
  EXPECT_DOUBLE_EQ(node_flops("Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, {{1, 4, 6, 6}}), 2.0 * 144 * 27);
  EXPECT_DOUBLE_EQ(node_flops("FusedConv", {{1, 4, 5, 5}, {4, 1, 3, 3}}, {{1, 4, 5, 5}}), 2.0 * 100 * 9);  // depthwise
  EXPECT_DOUBLE_EQ(node_flops("MatMul", {{2, 3}, {3, 5}}, {{2, 5}}), 2.0 * 10 * 3);
  EXPECT_DOUBLE_EQ(node_flops("Gemm", {{2, 3}, {5, 3}}, {{2, 5}}), 2.0 * 10 * 3);
  EXPECT_DOUBLE_EQ(node_flops("ConvTranspose", {{1, 2, 3, 3}, {2, 4, 2, 2}}, {{1, 4, 6, 6}}), 2.0 * 18 * 16);
  EXPECT_EQ(node_flops("Relu", {{4}}, {{4}}), 0);
  EXPECT_EQ(node_flops("Conv", {{1, 3, 8, 8}}, {{1, 4, 6, 6}}), 0) << "no weight shape";
}

}  // namespace
}  // namespace gec
