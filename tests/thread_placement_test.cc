// runtime/thread_placement.h: a run's OpenMP workers and the load's helper
// threads kept off the calling thread's CPU, every worker's mask given back
// afterwards, the caller's never touched. On a machine (or under a mask) of
// one CPU, or with OpenMP placement asked for in the environment, nothing
// may change, and that is what these tests check there.
#include "runtime/thread_placement.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gec/compiler.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "runtime/executor.h"
#include "test_util.h"

namespace gec {
namespace {

using runtime::TeamPlacement;
using std::chrono::microseconds;

cpu_set_t own_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

// Whether placement can happen here: two CPUs or more, no OpenMP placement
// in the environment (thread_placement.h).
bool placing() {
  for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (const char* v = std::getenv(name); v && *v) return false;
  const cpu_set_t mask = own_mask();
  return CPU_COUNT(&mask) >= 2;
}

// Long enough since the thread's last placement that the next one places.
void let_the_team_sleep() { std::this_thread::sleep_for(2 * TeamPlacement::kTeamAwake); }

// The masks of the team's workers (threads 1..n-1), read in a region of n
// (fewer if OpenMP gives fewer threads).
std::vector<cpu_set_t> worker_masks(int n) {
  std::vector<cpu_set_t> masks(static_cast<size_t>(n));
  for (cpu_set_t& m : masks) CPU_ZERO(&m);
  std::atomic<int> got{0};
#pragma omp parallel num_threads(n)
  {
    const int t = omp_get_thread_num();
    if (t == 0) got = omp_get_num_threads();
    if (t < n) ::sched_getaffinity(0, sizeof(cpu_set_t), &masks[static_cast<size_t>(t)]);
  }
  masks.resize(static_cast<size_t>(std::min(got.load(), n)));
  masks.erase(masks.begin());
  return masks;
}

TEST(TeamPlacement, KeepsTheWorkersOffOneCpuOfTheCallersForTheScope) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  for (int round = 0; round < 3; ++round) {  // the first collects the team, the others find it
    let_the_team_sleep();
    {
      const TeamPlacement placement(2);
      const cpu_set_t caller = own_mask();
      EXPECT_TRUE(CPU_EQUAL(&caller, &before)) << "the caller is never restricted";
      for (const cpu_set_t& w : worker_masks(2)) {
        if (!placed) {
          EXPECT_TRUE(CPU_EQUAL(&w, &before)) << "nothing to place here: nothing changes";
          continue;
        }
        cpu_set_t left_out;
        CPU_XOR(&left_out, &before, &w);
        EXPECT_EQ(CPU_COUNT(&left_out), 1) << "round " << round << ": the worker may use all but one CPU";
        cpu_set_t extra;
        CPU_AND(&extra, &left_out, &w);
        EXPECT_EQ(CPU_COUNT(&extra), 0) << "no CPU outside the caller's mask";
      }
    }
    for (const cpu_set_t& w : worker_masks(2)) EXPECT_TRUE(CPU_EQUAL(&w, &before)) << "the workers' masks are given back";
    if (placed) {
      EXPECT_GE(TeamPlacement::known_workers(), 1u);
    }
  }
  const cpu_set_t after = own_mask();
  EXPECT_TRUE(CPU_EQUAL(&after, &before));
}

TEST(TeamPlacement, PlacesUnlessAKnownTeamWasUsedWithinTheLastMillisecondAndSpins) {
  const auto awake = TeamPlacement::kTeamAwake;
  EXPECT_TRUE(TeamPlacement::places(false, microseconds(0), false)) << "a team not collected yet";
  EXPECT_FALSE(TeamPlacement::places(true, microseconds(0), false)) << "back to back: still spinning";
  EXPECT_FALSE(TeamPlacement::places(true, awake - microseconds(1), false));
  EXPECT_TRUE(TeamPlacement::places(true, awake, false)) << "asleep by now";
  EXPECT_TRUE(TeamPlacement::places(true, std::chrono::seconds(10), false));
  EXPECT_TRUE(TeamPlacement::places(true, microseconds(0), true)) << "OMP_WAIT_POLICY=passive: asleep at once";
}

// A run on one thread leaves a team that an earlier run placed alone.
TEST(TeamPlacement, OneThreadLeavesAKnownTeamAlone) {
  const cpu_set_t before = own_mask();
  let_the_team_sleep();
  { const TeamPlacement two(2); }  // the team known
  let_the_team_sleep();
  {
    const TeamPlacement one(1);
    for (const cpu_set_t& w : worker_masks(2)) EXPECT_TRUE(CPU_EQUAL(&w, &before));
  }
}

TEST(TeamPlacement, HelpersRunOffTheCallersCpuAndOnesThatEndAtOnceLeaveTheCallerAlone) {
  const cpu_set_t before = own_mask();
  const bool placed = placing();
  // Helpers that end before the caller could restrict them: glibc's
  // pthread_setaffinity_np on an exited thread sets the caller's mask.
  for (int i = 0; i < 50; ++i) {
    std::thread t = TeamPlacement::start_helper([] {});
    t.join();
    const cpu_set_t now = own_mask();
    ASSERT_TRUE(CPU_EQUAL(&now, &before)) << "helper " << i << " changed the caller's mask";
  }
  cpu_set_t helper_mask;
  CPU_ZERO(&helper_mask);
  std::thread t = TeamPlacement::start_helper([&] { ::sched_getaffinity(0, sizeof helper_mask, &helper_mask); });
  t.join();
  if (placed) {
    cpu_set_t left_out;
    CPU_XOR(&left_out, &before, &helper_mask);
    EXPECT_EQ(CPU_COUNT(&left_out), 1) << "the helper may use all of the caller's CPUs but one";
  } else {
    EXPECT_TRUE(CPU_EQUAL(&helper_mask, &before));
  }
}

// Executor::run places its team after an idle spell; its outputs are those
// of a run on one thread, and every mask is the caller's again after it.
TEST(TeamPlacement, ARunPlacesItsTeamAndGivesTheOutputsOfOneThread) {
  const std::string bytes = testing::onnx_build::conv_relu_model(28).SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  std::vector<uint8_t> arena(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64);
  // On a thread of its own: a team no other test has collected.
  std::thread([&] {
    runtime::Executor ex(lm, arena.data(), 2, false);
    Tensor x(DType::kFloat32, {1, 16, 28, 28});
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
    EXPECT_EQ(TeamPlacement::known_workers(), 0u) << "a run on one thread has no team to place";
    for (int threads : {2, 2, 1, 2}) {
      let_the_team_sleep();
      const std::vector<float> got = run(threads);
      ASSERT_EQ(got.size(), one.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], one[i], 1e-5f) << "element " << i;
    }
    if (placing()) {
      EXPECT_EQ(TeamPlacement::known_workers(), 1u) << "the run placed its team of 2";
    }
    for (const cpu_set_t& wm : worker_masks(2)) EXPECT_TRUE(CPU_EQUAL(&wm, &before)) << "the workers' masks are given back";
  }).join();
}

}  // namespace
}  // namespace gec
