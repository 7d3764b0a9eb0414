// Several threads using gec at once: each with its own Session on one
// model's bytes, compiling side by side, and runs racing on one Session
// (refused: session_limits_test.cc). CI runs these under ThreadSanitizer
// (scripts/sanitize.sh), which reports any data race between them.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "gec/threading.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec {
namespace {

namespace ob = testing::onnx_build;

// x[1,8,12,12] -> Conv(8 -> 8, 3x3, pads 1) -> Relu -> GlobalAveragePool ->
// Flatten -> Gemm(8 -> 6) -> Softmax -> y[1,6]: oneDNN primitives and native
// kernels, each with state made at the first run.
std::string model_bytes() {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,8,12,12");
  ob::add_output(g, "y", ob::kFloat, "1,6");
  std::vector<float> w(8 * 8 * 9), gw(6 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 11) - 5) / 13.f;
  for (size_t i = 0; i < gw.size(); ++i) gw[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 5.f;
  ob::add_float_init(g, "w", {8, 8, 3, 3}, w);
  ob::add_float_init(g, "gw", {6, 8}, gw);
  auto* c = ob::add_node(g, "Conv", {"x", "w"}, {"c"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"c"}, {"r"});
  ob::add_node(g, "GlobalAveragePool", {"r"}, {"p"});
  ob::add_node(g, "Flatten", {"p"}, {"f"});
  auto* gemm = ob::add_node(g, "Gemm", {"f", "gw"}, {"z"});
  ob::attr_i(gemm, "transB", 1);
  ob::add_node(g, "Softmax", {"z"}, {"y"});
  return m.SerializeAsString();
}

Tensor input(int seed) {
  Tensor x(DType::kFloat32, {1, 8, 12, 12});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 5 + seed) % 17) / 8.f - 1.f;
  return x;
}

TEST(Concurrency, OneSessionPerThreadOnOneModel) {
  const std::string bytes = model_bytes();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  constexpr int kThreads = 4, kRuns = 8;
  // References, one thread at a time.
  std::vector<std::vector<float>> want;
  {
    auto s = Session::load_from_bytes(cm.gom);
    for (int t = 0; t < kThreads; ++t) want.push_back(testing::values<float>(s->run({input(t).view()})[0]));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto s = Session::load_from_bytes(cm.gom);  // sharing the bytes, not the Session
      const Tensor x = input(t);
      for (int r = 0; r < kRuns; ++r) {
        const std::vector<float> got = testing::values<float>(s->run({x.view()})[0]);
        for (size_t i = 0; i < got.size(); ++i)
          if (std::abs(got[i] - want[t][i]) > 1e-6f) ++mismatches[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Concurrency, CompilesSideBySide) {
  const std::string bytes = model_bytes();
  const CompiledModel one = compile_onnx_bytes(bytes.data(), bytes.size());
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> goms(3);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < goms.size(); ++t)
    threads.emplace_back([&, t] { goms[t] = compile_onnx_bytes(bytes.data(), bytes.size()).gom; });
  for (auto& th : threads) th.join();
  for (const auto& g : goms) {
    ASSERT_TRUE(g);
    // The same model and options give the same offline model, whatever ran
    // beside (sizes may differ: the metadata holds the compile times).
    auto a = Session::load_from_bytes(g), b = Session::load_from_bytes(one.gom);
    EXPECT_EQ(a->node_count(), b->node_count());
    EXPECT_EQ(a->arena_bytes(), b->arena_bytes());
    EXPECT_EQ(a->weights_bytes(), b->weights_bytes());
    EXPECT_EQ(testing::values<float>(a->run({input(1).view()})[0]),
              testing::values<float>(b->run({input(1).view()})[0]));
  }
}

}  // namespace
}  // namespace gec

namespace gec {
namespace {

// One thread per entry of `want`: thread t runs input(t) `runs` times on `s`
// at once with the others; every output must be want[t] bit for bit, and no
// run may fail (`why_no_errors` explains that expectation in the message).
void expect_concurrent_runs_match(Session& s, const std::vector<std::vector<float>>& want, int runs,
                                  const std::string& why_no_errors) {
  const int n = static_cast<int>(want.size());
  std::vector<int> mismatches(static_cast<size_t>(n), 0), errors(static_cast<size_t>(n), 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      const Tensor x = input(t);
      for (int r = 0; r < runs; ++r) {
        try {
          if (testing::values<float>(s.run({x.view()})[0]) != want[static_cast<size_t>(t)]) ++mismatches[static_cast<size_t>(t)];
        } catch (const Error&) {
          ++errors[static_cast<size_t>(t)];
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < n; ++t) {
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t;
    EXPECT_EQ(errors[static_cast<size_t>(t)], 0) << "thread " << t << why_no_errors;
  }
}

// Many runs in flight on one Session (SessionOptions::max_concurrent_requests):
// every output is bit for bit the sequential one, whichever run context a
// request gets.
TEST(Concurrency, ConcurrentRequestsOnOneSessionComputeTheSameBits) {
  const std::string bytes = model_bytes();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  constexpr int kThreads = 6, kRuns = 10;
  SessionOptions one;
  one.num_threads = 1;
  one.adapt_threads = false;
  std::vector<std::vector<float>> want;
  {
    auto s = Session::load_from_bytes(cm.gom, one);
    for (int t = 0; t < kThreads; ++t) want.push_back(testing::values<float>(s->run({input(t).view()})[0]));
  }
  SessionOptions many = one;
  many.max_concurrent_requests = 3;
  many.wait_when_busy = true;
  auto s = Session::load_from_bytes(cm.gom, many);
  expect_concurrent_runs_match(*s, want, kRuns, ": wait_when_busy queues instead of failing");
}

// x[1,8,12,12] -> three branches (1x1 conv, 3x3 conv, maxpool) -> Concat:
// independent steps for a multi-stream plan.
std::string branchy_model_bytes() {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,8,12,12");
  ob::add_output(g, "y", ob::kFloat, "1,24,12,12");
  for (int b = 0; b < 2; ++b) {
    const int64_t k = b ? 3 : 1;
    std::vector<float> w(static_cast<size_t>(8 * 8 * k * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>((i + b) % 11) - 5) / 13.f;
    ob::add_float_init(g, "w" + std::to_string(b), {8, 8, k, k}, w);
    auto* c = ob::add_node(g, "Conv", {"x", "w" + std::to_string(b)}, {"c" + std::to_string(b)});
    ob::attr_ints(c, "pads", {k / 2, k / 2, k / 2, k / 2});
    ob::add_node(g, "Relu", {"c" + std::to_string(b)}, {"r" + std::to_string(b)});
  }
  auto* mp = ob::add_node(g, "MaxPool", {"x"}, {"p"});
  ob::attr_ints(mp, "kernel_shape", {3, 3});
  ob::attr_ints(mp, "pads", {1, 1, 1, 1});
  ob::attr_i(ob::add_node(g, "Concat", {"r0", "r1", "p"}, {"y"}), "axis", 1);
  return m.SerializeAsString();
}

// Four requests at once on one Session of a plan on three streams, each run
// on two workers (two threads per request): every output is the bits of the
// same Session running one request at a time.
TEST(Concurrency, ConcurrentRequestsOnAMultiStreamPlan) {
  const std::string bytes = branchy_model_bytes();
  CompileOptions o;
  o.opt_level = 0;
  o.streams = 3;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  ASSERT_GE(model::read_gom_bytes(cm.gom).execution_plan.graphs[0].streams, 2);
  constexpr int kThreads = 4, kRuns = 6;
  SessionOptions so;
  so.num_threads = 2;
  so.adapt_threads = false;
  so.max_concurrent_requests = kThreads;
  so.wait_when_busy = true;
  auto s = Session::load_from_bytes(cm.gom, so);
  std::vector<std::vector<float>> want;
  for (int t = 0; t < kThreads; ++t) want.push_back(testing::values<float>(s->run({input(t).view()})[0]));
  expect_concurrent_runs_match(*s, want, kRuns, "");
  // The reference itself matches a one-stream plan run on one thread.
  CompileOptions seq = o;
  seq.streams = 1;
  SessionOptions one;
  one.num_threads = 1;
  auto s1 = Session::load_from_bytes(compile_onnx_bytes(bytes.data(), bytes.size(), seq).gom, one);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(testing::values<float>(s1->run({input(t).view()})[0]), want[t]);
}

// Without wait_when_busy a run beyond the limit is refused with a clear
// error; the runs that get a context are still right.
TEST(Concurrency, RunsBeyondTheLimitAreRefusedNotWrong) {
  const std::string bytes = model_bytes();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  SessionOptions o;
  o.num_threads = 1;
  o.adapt_threads = false;
  const std::vector<float> want = testing::values<float>(Session::load_from_bytes(cm.gom, o)->run({input(0).view()})[0]);
  o.max_concurrent_requests = 2;
  auto s = Session::load_from_bytes(cm.gom, o);
  std::atomic<int> ok{0}, busy{0}, wrong{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      const Tensor x = input(0);
      for (int r = 0; r < 10; ++r) {
        try {
          if (testing::values<float>(s->run({x.view()})[0]) == want) ++ok;
          else ++wrong;
        } catch (const Error& e) {
          const bool expected = e.code() == ErrorCode::kInvalidArgument &&
                                std::string(e.what()).find("all 2 run contexts are busy") != std::string::npos;
          ++(expected ? busy : other);
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(ok.load() + busy.load(), 60);
}

TEST(Concurrency, PoolOptionsAreChecked) {
  const std::string bytes = model_bytes();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  SessionOptions o;
  o.max_concurrent_requests = 0;
  testing::expect_error([&] { Session::load_from_bytes(cm.gom, o); }, ErrorCode::kInvalidArgument,
                        "max_concurrent_requests 0 is out of range");
  o.max_concurrent_requests = 2;
  o.profile = true;
  testing::expect_error([&] { Session::load_from_bytes(cm.gom, o); }, ErrorCode::kInvalidArgument,
                        "profiling times one run at a time");
  o.profile = false;
  o.num_threads = 0;
  EXPECT_EQ(Session::load_from_bytes(cm.gom, o)->num_threads(), std::max(1, available_cores() / 2))
      << "the cores are shared among the concurrent requests";
}

}  // namespace
}  // namespace gec
