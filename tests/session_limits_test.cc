// Session-level guards against hostile or mistaken use: thread counts out of
// range, arena and weight limits, and run() called concurrently on one
// Session (refused, not silently wrong).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "gec/compiler.h"
#include "memory_test_util.h"
#include "model/reader.h"
#include "runtime/executor.h"
#include "test_util.h"

namespace gec {
namespace {

using testing::add_input;
using testing::add_op;

constexpr DType F = DType::kFloat32;

// y = x @ W @ W ... (`depth` MatMuls of [n,n]), W constant.
std::shared_ptr<const std::vector<uint8_t>> matmul_chain(int64_t n, int depth) {
  ir::Graph g;
  ir::Value* cur = add_input(g, "x", F, {n, n});
  Tensor w(F, {n, n});
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = (i % (n + 1) == 0) ? 1.f : 0.f;  // identity
  ir::Value* wv = g.add_constant("W", w);
  for (int k = 0; k < depth; ++k) cur = add_op(g, "MatMul", {cur, wv}, "m" + std::to_string(k), {n, n});
  g.outputs().push_back(cur);
  testing::Planned p(g);
  return std::make_shared<const std::vector<uint8_t>>(testing::gom_of(g, p));
}

TEST(SessionLimits, ThreadCountsOutOfRangeAreRefused) {
  const auto gom = matmul_chain(4, 1);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int bad : {-1, kMaxThreadsPerCore * cores + 1, 100000}) {
    SessionOptions so;
    so.num_threads = bad;
    testing::expect_error([&] { Session::load_from_bytes(gom, so); }, ErrorCode::kInvalidArgument, "num_threads");
  }
  SessionOptions ok;
  ok.num_threads = kMaxThreadsPerCore * cores;
  EXPECT_EQ(Session::load_from_bytes(gom, ok)->num_threads(), kMaxThreadsPerCore * cores);
}

TEST(SessionLimits, ArenaAndWeightLimits) {
  const auto gom = matmul_chain(16, 2);  // arena: two 1 KiB values; weights 1 KiB
  SessionOptions so;
  so.max_arena_bytes = 1024;
  testing::expect_error([&] { Session::load_from_bytes(gom, so); }, ErrorCode::kUnsupported, "activation arena");
  so.max_arena_bytes = 0;
  so.max_weights_bytes = 100;
  testing::expect_error([&] { Session::load_from_bytes(gom, so); }, ErrorCode::kUnsupported, "bytes of weights");
  so.max_weights_bytes = 1024;
  EXPECT_NO_THROW(Session::load_from_bytes(gom, so));
}

// A value allocated at run time (dynamic shape) is held to the same limit
// as the arena: x[N] -> Relu with N = 1000 needs 4000 bytes.
TEST(SessionLimits, RunTimeAllocationsRespectTheArenaLimit) {
  ir::Graph g;
  ir::TensorType dyn{F, true, {ir::Dim{-1, "N"}}};
  ir::Value* x = g.add_value("x", dyn);
  g.inputs().push_back(x);
  ir::Node* n = g.add_node("Relu", {x}, {"y"}, "relu");
  n->output(0)->type = dyn;
  g.outputs().push_back(n->output(0));
  testing::Planned p(g);
  auto gom = std::make_shared<const std::vector<uint8_t>>(testing::gom_of(g, p));
  SessionOptions so;
  so.max_arena_bytes = 1024;
  auto s = Session::load_from_bytes(gom, so);
  Tensor small(F, {100}), big(F, {1000});
  EXPECT_EQ(s->run({small.view()})[0].shape(), (Shape{100}));
  testing::expect_error([&] { s->run({big.view()}); }, ErrorCode::kUnsupported,
                        "float32[1000] at run time: 4000 bytes, more than the 1024 allowed");
}

// Values of shapes known only at run give their buffers back after their
// last reader: a chain x[N,256] -> Abs -> Neg -> ... (8 nodes) holds two
// intermediate values and the output at once, whatever N, and the outputs
// are right on every run (N = 4, 16, 4, 9: buffers taken again, and grown).
TEST(SessionLimits, RunTimeValuesReuseEachOthersBuffers) {
  ir::Graph g;
  ir::TensorType dyn{F, true, {ir::Dim{-1, "N"}, ir::Dim{256, ""}}};
  ir::Value* x = g.add_value("x", dyn);
  g.inputs().push_back(x);
  ir::Value* v = x;
  for (int i = 0; i < 8; ++i) {
    ir::Node* n = g.add_node(i % 2 ? "Neg" : "Abs", {v}, {"v" + std::to_string(i)}, "n" + std::to_string(i));
    n->output(0)->type = dyn;
    v = n->output(0);
  }
  g.outputs().push_back(v);
  testing::Planned p(g);
  const model::LoadedModel m = model::read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(testing::gom_of(g, p)));
  runtime::Executor e(m, nullptr, 1, false, 0, nullptr);
  for (int64_t rows : {4, 16, 4, 9}) {
    Tensor in(F, {rows, 256});
    for (int64_t i = 0; i < in.numel(); ++i) in.as<float>()[i] = static_cast<float>(i % 11) - 5.f;
    e.bind_input(0, in.view());
    e.run(1);
    // Four Abs/Neg pairs: -|x| (a value read from a buffer taken again too early: |x|).
    ASSERT_EQ(e.output(0).shape, (Shape{rows, 256}));
    for (int64_t i = 0; i < in.numel(); ++i)
      ASSERT_EQ(e.output(0).as<float>()[i], -std::fabs(in.as<float>()[i])) << rows << " rows, at " << i;
    const size_t value = static_cast<size_t>(rows) * 256 * sizeof(float);
    // Without reuse: 8 values. Grown buffers (16 rows) stay in the pool.
    EXPECT_LE(e.dynamic_bytes(), 3 * std::max<size_t>(value, 16 * 256 * sizeof(float))) << rows << " rows";
  }
}

// Two threads on one Session: a run that starts while the other is in
// progress is refused with an error, and every run that is not refused is
// right. (Which of the two gets in first is up to the scheduler.)
TEST(SessionLimits, ConcurrentRunsOnOneSessionAreRefused) {
  const int64_t n = 512;
  const auto gom = matmul_chain(n, 24);
  SessionOptions so;
  so.num_threads = 1;
  auto s = Session::load_from_bytes(gom, so);
  Tensor x(F, {n, n});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>(i % 7);
  const std::vector<float> want = testing::values<float>(x);  // W is the identity
  std::atomic<int> refused{0}, right{0}, wrong{0};
  auto one_run = [&] {
    try {
      std::vector<Tensor> out = s->run({x.view()});
      (out.size() == 1 && testing::values<float>(out[0]) == want ? right : wrong)++;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("another run on the same Session"), std::string::npos) << e.what();
      refused++;
    }
  };
  for (int attempt = 0; attempt < 10 && refused == 0; ++attempt) {
    std::atomic<bool> go{false};
    std::thread a([&] {
      while (!go) std::this_thread::yield();
      one_run();
    });
    std::thread b([&] {
      while (!go) std::this_thread::yield();
      one_run();
    });
    go = true;
    a.join();
    b.join();
  }
  EXPECT_GT(refused.load(), 0) << "no overlapping run was ever refused";
  EXPECT_GT(right.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace gec
