// runtime/thread_placement.h: a run's thread held on its CPU, its OpenMP
// workers and helper threads kept off it, every mask given back afterwards.
// On a machine (or under a mask) of one CPU nothing may change, and that is
// what these tests check there.
#include "runtime/thread_placement.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gec/compiler.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "runtime/executor.h"
#include "test_util.h"

namespace gec {
namespace {

using runtime::CpuPlacement;

cpu_set_t own_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

// Long enough since the last scope with a team that the next one places it.
void let_the_team_sleep() { std::this_thread::sleep_for(2 * CpuPlacement::kTeamAwake); }

bool placing() {
  // The environment's OpenMP placement wins (thread_placement.h).
  for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (const char* v = std::getenv(name); v && *v) return false;
  const cpu_set_t mask = own_mask();
  return CPU_COUNT(&mask) >= 2;
}

// The masks of the team's workers (thread 1..n-1), read in a region of n.
std::vector<cpu_set_t> worker_masks(int n) {
  std::vector<cpu_set_t> masks(static_cast<size_t>(n));
#pragma omp parallel num_threads(n)
  {
    const int t = omp_get_thread_num();
    if (t < n) ::sched_getaffinity(0, sizeof(cpu_set_t), &masks[static_cast<size_t>(t)]);
  }
  masks.erase(masks.begin());
  return masks;
}

TEST(CpuPlacement, HoldsTheCallerAndKeepsTheTeamOffItsCpuForTheScope) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  {
    let_the_team_sleep();
    const CpuPlacement placement(true, 2);
    const cpu_set_t held = own_mask();
    const int cpu = ::sched_getcpu();
    if (placed) {
      ASSERT_EQ(CPU_COUNT(&held), 1);
      EXPECT_TRUE(CPU_ISSET(cpu, &held)) << "held on the CPU it was on";
      for (const cpu_set_t& w : worker_masks(2)) {
        EXPECT_FALSE(CPU_ISSET(cpu, &w)) << "a worker may run on the caller's CPU";
        EXPECT_EQ(CPU_COUNT(&w), CPU_COUNT(&before) - 1);
      }
    } else {
      EXPECT_TRUE(CPU_EQUAL(&held, &before)) << "one CPU (or the user's placement): nothing changes";
    }
  }
  const cpu_set_t after = own_mask();
  EXPECT_TRUE(CPU_EQUAL(&after, &before)) << "the caller's mask is given back";
  for (const cpu_set_t& w : worker_masks(2)) EXPECT_TRUE(CPU_EQUAL(&w, &before)) << "the workers' masks are given back";
}

TEST(CpuPlacement, ASecondScopeFindsTheSameTeamAndNestedScopesGiveBackTheOuterMask) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  for (int round = 0; round < 3; ++round) {
    let_the_team_sleep();
    const CpuPlacement outer(true, 2);
    const cpu_set_t held = own_mask();
    {
      const CpuPlacement inner(true, 2);  // held already: one CPU, nothing to do
      const cpu_set_t now = own_mask();
      EXPECT_TRUE(CPU_EQUAL(&now, &held));
    }
    const cpu_set_t after_inner = own_mask();
    EXPECT_TRUE(CPU_EQUAL(&after_inner, &held)) << "round " << round;
    if (placed)
      for (const cpu_set_t& w : worker_masks(2)) EXPECT_FALSE(CPU_ISSET(::sched_getcpu(), &w)) << "round " << round;
  }
  const cpu_set_t after = own_mask();
  EXPECT_TRUE(CPU_EQUAL(&after, &before));
}

// A scope right after another finds the team spinning and changes nothing,
// unless the environment makes idle threads sleep at once.
TEST(CpuPlacement, BackToBackScopesLeaveASpinningTeamAlone) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* count = std::getenv("GOMP_SPINCOUNT");
  const bool sleeps = (count && *count) || (policy && (std::string(policy) == "passive" || std::string(policy) == "PASSIVE"));
  // The window is time: an attempt preempted between the scopes proves
  // nothing, so up to 20 attempts, of which one must start in time.
  bool in_time = false;
  for (int attempt = 0; attempt < 20 && !in_time; ++attempt) {
    std::chrono::steady_clock::time_point first_end;
    {
      const CpuPlacement first(true, 2);
      first_end = std::chrono::steady_clock::now();
    }
    const CpuPlacement second(true, 2);
    in_time = std::chrono::steady_clock::now() - first_end < CpuPlacement::kTeamAwake / 2;
    if (!in_time) continue;
    const cpu_set_t now = own_mask();
    if (placed && sleeps)
      EXPECT_EQ(CPU_COUNT(&now), 1) << "idle threads sleep at once: every scope places";
    else
      EXPECT_TRUE(CPU_EQUAL(&now, &before)) << "a spinning team: nothing changes";
  }
  EXPECT_TRUE(in_time) << "no attempt started within half of kTeamAwake of the last";
}

TEST(CpuPlacement, HelpersRunOffTheCallersCpuAndOnesThatEndAtOnceLeaveTheCallerAlone) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  // Helpers that end before the caller could restrict them: glibc's
  // pthread_setaffinity_np on an exited thread sets the caller's mask.
  for (int i = 0; i < 50; ++i) {
    std::thread t = CpuPlacement::start_helper([] {});
    t.join();
    const cpu_set_t now = own_mask();
    ASSERT_TRUE(CPU_EQUAL(&now, &before)) << "helper " << i << " changed the caller's mask";
  }
  const CpuPlacement placement(true, 0);
  const int held_on = ::sched_getcpu();
  std::atomic<int> ran_on{-1};
  cpu_set_t helper_mask;
  CPU_ZERO(&helper_mask);
  std::thread t = CpuPlacement::start_helper([&] {
    ::sched_getaffinity(0, sizeof helper_mask, &helper_mask);
    ran_on = ::sched_getcpu();
  });
  t.join();
  if (placed) {
    EXPECT_FALSE(CPU_ISSET(held_on, &helper_mask));
    EXPECT_NE(ran_on.load(), held_on);
    EXPECT_EQ(CPU_COUNT(&helper_mask), CPU_COUNT(&before) - 1);
  } else {
    EXPECT_TRUE(CPU_EQUAL(&helper_mask, &before));
  }
}

// Executor::run holds its thread for the run only; its outputs are those of
// a run without placement (OpenMP's own, through a 1-thread run here).
TEST(CpuPlacement, ARunGivesBackEveryMaskAndTheOutputsOfOneThread) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,32,28,28");
  ob::add_output(g, "y", ob::kFloat, "1,32,28,28");
  std::vector<float> w(32 * 32 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 11) - 5) / 29.f;
  ob::add_float_init(g, "w", {32, 32, 3, 3}, w);
  auto* c = ob::add_node(g, "Conv", {"x", "w"}, {"c"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"c"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  std::vector<uint8_t> arena(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64);
  runtime::Executor ex(lm, arena.data(), 2, false);
  Tensor x(DType::kFloat32, {1, 32, 28, 28});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 5) % 19) / 9.f - 1.f;
  ex.bind_input(0, x.view());
  const cpu_set_t before = own_mask();
  auto run = [&](int threads) {
    ex.run(threads);
    const cpu_set_t after = own_mask();
    EXPECT_TRUE(CPU_EQUAL(&after, &before)) << threads << " threads";
    const TensorView& y = ex.output(0);
    return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
  };
  const std::vector<float> one = run(1);
  for (int threads : {2, 2, 1, 2}) {
    if (threads == 2) let_the_team_sleep();
    const std::vector<float> got = run(threads);
    ASSERT_EQ(got.size(), one.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], one[i], 1e-5f) << "element " << i;
  }
  for (const cpu_set_t& wm : worker_masks(2)) EXPECT_TRUE(CPU_EQUAL(&wm, &before)) << "the workers' masks are given back";
}

}  // namespace
}  // namespace gec
