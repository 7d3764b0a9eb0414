// gec/threading.h: the cores a process may use (affinity, cgroup quota) and
// OpenMP's wait policy in the environment.
#include "gec/threading.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/cgroup.h"
#include "runtime/cpu_monitor.h"
#include "gec/compiler.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "runtime/executor.h"
#include "runtime/step_threads.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace gec {
namespace {

TEST(Threading, AvailableCoresFollowTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
  const int all = CPU_COUNT(&saved);
  EXPECT_GE(available_cores(), 1);
  EXPECT_LE(available_cores(), all);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(available_cores(), 1);
  ASSERT_EQ(::sched_setaffinity(0, sizeof saved, &saved), 0);
}

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gec_cgroup_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text << "\n";
  }
  double limit() { return cgroup_cpu_limit((root_ / "proc_cgroup").string(), (root_ / "sys").string()); }
  fs::path root_;
};

TEST_F(CgroupTree, V2TakesTheSmallestQuotaOnThePath) {
  write("proc_cgroup", "0::/kubepods/pod1/ctr");
  write("sys/kubepods/pod1/ctr/cpu.max", "max 100000");
  write("sys/kubepods/pod1/cpu.max", "150000 100000");
  write("sys/kubepods/cpu.max", "400000 100000");
  EXPECT_DOUBLE_EQ(limit(), 1.5);
  write("sys/kubepods/pod1/cpu.max", "max 100000");
  EXPECT_DOUBLE_EQ(limit(), 4.0);
  write("sys/kubepods/cpu.max", "max 100000");
  EXPECT_LT(limit(), 0) << "no quota anywhere";
}

TEST_F(CgroupTree, V2InsideAContainerReadsTheMountRoot) {
  // The path names the host's hierarchy; only the root is mounted.
  write("proc_cgroup", "0::/system.slice/docker-abc.scope");
  write("sys/cpu.max", "200000 100000");
  EXPECT_DOUBLE_EQ(limit(), 2.0);
}

TEST_F(CgroupTree, V1ReadsTheCpuController) {
  write("proc_cgroup", "5:memory:/x\n4:cpu,cpuacct:/x\n1:name=systemd:/x");
  write("sys/cpu,cpuacct/x/cpu.cfs_quota_us", "-1");
  write("sys/cpu,cpuacct/x/cpu.cfs_period_us", "100000");
  write("sys/cpu,cpuacct/cpu.cfs_quota_us", "50000");
  write("sys/cpu,cpuacct/cpu.cfs_period_us", "100000");
  EXPECT_DOUBLE_EQ(limit(), 0.5);
}

TEST_F(CgroupTree, UnreadableOrMalformedMeansNoQuota) {
  EXPECT_LT(limit(), 0) << "no /proc/self/cgroup";
  write("proc_cgroup", "garbage\n0::/a");
  write("sys/a/cpu.max", "lots 100000");
  EXPECT_LT(limit(), 0);
  write("sys/a/cpu.max", "100000 0");
  EXPECT_LT(limit(), 0);
}

/// Sets (or, for nullopt, removes) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value->c_str(), 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Threading, SpinOffAsksForPassiveUnlessTheUserChose) {
  {
    ScopedEnv p("OMP_WAIT_POLICY", std::nullopt), c("GOMP_SPINCOUNT", std::nullopt);
    EXPECT_EQ(openmp_wait_policy(), "libgomp default (spin 300000)");
    EXPECT_FALSE(prepare_openmp_environment(SpinPolicy::kOn)) << "the default needs no variable";
    EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
    EXPECT_TRUE(prepare_openmp_environment(SpinPolicy::kOff));
    EXPECT_EQ(std::string(std::getenv("OMP_WAIT_POLICY")), "PASSIVE");
    EXPECT_EQ(openmp_wait_policy(), "passive");
  }
  {
    ScopedEnv p("OMP_WAIT_POLICY", "active"), c("GOMP_SPINCOUNT", std::nullopt);
    EXPECT_FALSE(prepare_openmp_environment(SpinPolicy::kOff));
    EXPECT_EQ(std::string(std::getenv("OMP_WAIT_POLICY")), "active");
    EXPECT_EQ(openmp_wait_policy(), "active (libgomp spins for minutes)");
  }
  {
    ScopedEnv p("OMP_WAIT_POLICY", std::nullopt), c("GOMP_SPINCOUNT", "5000");
    EXPECT_FALSE(prepare_openmp_environment(SpinPolicy::kOff));
    EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
  }
  {
    ScopedEnv p("OMP_WAIT_POLICY", "PASSIVE"), c("GOMP_SPINCOUNT", "5000");
    EXPECT_EQ(openmp_wait_policy(), "bounded spin (GOMP_SPINCOUNT=5000)") << "libgomp: the count wins";
  }
}

TEST(CpuMonitor, ThreadsLeftRoundToTheCpusOthersLeave) {
  using runtime::threads_left;
  EXPECT_EQ(threads_left(0.0, 2, 2), 2);
  EXPECT_EQ(threads_left(0.3, 2, 2), 2) << "background noise keeps every thread";
  EXPECT_EQ(threads_left(0.6, 2, 2), 1);
  EXPECT_EQ(threads_left(1.0, 2, 2), 1) << "a CPU-bound competitor takes one core";
  EXPECT_EQ(threads_left(5.0, 2, 2), 1) << "never fewer than one";
  EXPECT_EQ(threads_left(-0.2, 2, 2), 2) << "tick rounding can make others negative";
  EXPECT_EQ(threads_left(1.0, 64, 4), 4) << "a quota-capped max on a big host";
  EXPECT_EQ(threads_left(0.0, 8, 0), 1);
}

TEST(CpuMonitor, BusySecondsSumTheGivenCpus) {
  const std::string stat =
      "cpu  300 0 60 1000 5 0 1 9 0 0\n"
      "cpu0 100 0 20 500 1 0 1 3 0 0\n"
      "cpu1 200 0 40 500 4 0 0 6 0 0\n"
      "intr 12345\n";
  using runtime::busy_seconds;
  // cpu0: user 100 + system 20 + softirq 1 + steal 3 = 124 ticks; idle and iowait do not count.
  EXPECT_DOUBLE_EQ(busy_seconds(stat, {0}, 100), 1.24);
  EXPECT_DOUBLE_EQ(busy_seconds(stat, {0, 1}, 100), 1.24 + 2.46);
  EXPECT_LT(busy_seconds(stat, {2}, 100), 0) << "a CPU without a line";
  EXPECT_LT(busy_seconds("cpu0 1 2\n", {0}, 100), 0) << "a short line";
  EXPECT_LT(busy_seconds(stat, {0}, 0), 0);
}

TEST(CpuMonitor, UsesEveryThreadUntilItHasMeasured) {
  // No interval and no first-signal span measured yet: the maximum,
  // whatever the machine is doing.
  runtime::CpuMonitor m(std::chrono::milliseconds(200), std::chrono::seconds(10), /*runnable_signal=*/false);
  EXPECT_EQ(m.threads_for_next_run(3), 3);
  EXPECT_EQ(m.threads_for_next_run(5), 5);
}

TEST(CpuMonitor, ProcsRunningIsTheRunnableCount) {
  using runtime::procs_running;
  EXPECT_EQ(procs_running("cpu  1 2 3 4\nctxt 99\nprocs_running 3\nprocs_blocked 1\n"), 3);
  EXPECT_EQ(procs_running("procs_running 0\n"), 0);
  EXPECT_LT(procs_running("cpu  1 2 3 4\nprocs_blocked 1\n"), 0) << "no field";
  EXPECT_LT(procs_running("procs_running x\n"), 0);
  EXPECT_LT(procs_running("procs_running -2\n"), 0);
  EXPECT_LT(procs_running("procs_runningx 2\n"), 0) << "another field's prefix";
}

// Before the first run the monitor reads the run queues: three threads
// spinning on one CPU are runnable whatever the others do, so the first
// answer leaves them their cores (at most the CPUs less three). A process
// that may not use every CPU cannot read its share there: every thread.
TEST(CpuMonitor, TheFirstRunSeesTheRunQueues) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const bool every_cpu = CPU_COUNT(&saved) == online;
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
    if (CPU_ISSET(c, &saved)) cpu = c;
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 3; ++i)
    spinners.emplace_back([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      started.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  while (started.load() < 3) std::this_thread::yield();
  runtime::CpuMonitor m(std::chrono::seconds(60), std::chrono::seconds(60));
  const int first = m.threads_for_next_run(4);
  stop = true;
  for (auto& t : spinners) t.join();
  if (every_cpu) {
    EXPECT_LE(first, std::max<long>(1, std::min<long>(4, online - 3)));
    EXPECT_GE(first, 1);
  } else {
    EXPECT_EQ(first, 4);
  }
}

TEST(CpuMonitor, RunDelayIsTheSecondSchedstatField) {
  using runtime::schedstat_run_delay;
  EXPECT_DOUBLE_EQ(schedstat_run_delay("360657025 622227 34\n"), 622227e-9);
  EXPECT_DOUBLE_EQ(schedstat_run_delay("0 0 1"), 0.0);
  EXPECT_LT(schedstat_run_delay("12 34"), 0) << "two fields";
  EXPECT_LT(schedstat_run_delay(""), 0);
  EXPECT_LT(schedstat_run_delay("a b c"), 0);
}

TEST(CpuMonitor, WaitingThreadsGiveUpTheirShareOfACore) {
  using runtime::threads_left_from_waiting;
  EXPECT_EQ(threads_left_from_waiting(0.0, 2), 2);
  EXPECT_EQ(threads_left_from_waiting(0.1, 2), 2) << "wake-up latencies keep every thread";
  EXPECT_EQ(threads_left_from_waiting(0.5, 2), 1) << "one thread shares its core with a CPU-bound process";
  EXPECT_EQ(threads_left_from_waiting(1.0, 2), 1) << "never fewer than one";
  EXPECT_EQ(threads_left_from_waiting(0.5, 8), 7);
  EXPECT_EQ(threads_left_from_waiting(-1.0, 4), 4);
  EXPECT_EQ(threads_left_from_waiting(0.0, 0), 1);
}

// Under contention the monitor measures both thread counts and keeps the
// faster. Contention here: three threads spinning on the one CPU this test
// pins them to wait two thirds of the time, so the first signal (20 ms
// spans) suggests one thread of four. The run times are given, not timed:
// `fast` is the count whose runs take 1 ms, the other's 5 ms.
TEST(CpuMonitor, UnderContentionTheFasterThreadCountIsKept) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
    if (CPU_ISSET(c, &saved)) cpu = c;
  ASSERT_GE(cpu, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 3; ++i)
    spinners.emplace_back([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  runtime::CpuMonitor fewer_wins(std::chrono::seconds(60), std::chrono::milliseconds(20), false);
  runtime::CpuMonitor all_win(std::chrono::seconds(60), std::chrono::milliseconds(20), false);
  EXPECT_EQ(fewer_wins.threads_for_next_run(4), 4) << "nothing measured yet";
  EXPECT_EQ(all_win.threads_for_next_run(4), 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(fewer_wins.contention(4), 1);
  EXPECT_EQ(all_win.contention(4), 1);
  for (auto [m, fast] : {std::pair{&fewer_wins, 1}, std::pair{&all_win, 4}}) {
    std::vector<int> counts;
    int previous = 4;  // the count of the run before contention was seen
    for (int run = 0; run < 12; ++run) {
      const int t = m->threads_for_next_run(4);
      counts.push_back(t);
      m->record_run(t, std::chrono::milliseconds(t == fast ? 1 : 5), t != previous);
      previous = t;
    }
    // Contention's count first (the first run after each change is not
    // counted: it reshapes), then all four, then the faster.
    const std::vector<int> want = {1, 1, 1, 1, 4, 4, 4, 4, fast, fast, fast, fast};
    EXPECT_EQ(counts, want) << "fast " << fast;
  }
  stop = true;
  for (auto& t : spinners) t.join();
}

// A run on fewer threads than the last reshapes every kernel first (oneDNN
// fixes a primitive's thread count); the outputs stay those of a run on all.
TEST(Threading, RunsOnFewerThreadsGiveTheSameOutputs) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,20,20");
  ob::add_output(g, "y", ob::kFloat, "1,8,10,10");
  std::vector<float> w(8 * 16 * 9), b(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 17.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) / 8.f;
  ob::add_float_init(g, "w", {8, 16, 3, 3}, w);
  ob::add_float_init(g, "b", {8}, b);
  auto* c = ob::add_node(g, "Conv", {"x", "w", "b"}, {"c"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  ob::attr_ints(c, "strides", {2, 2});
  ob::add_node(g, "Relu", {"c"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  std::vector<uint8_t> arena(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64);
  runtime::Executor ex(lm, arena.data(), 2, false);
  Tensor x(DType::kFloat32, {1, 16, 20, 20});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  ex.bind_input(0, x.view());
  auto run = [&](int threads) {
    ex.run(threads);
    EXPECT_EQ(ex.run_threads(), threads);
    const TensorView& y = ex.output(0);
    return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
  };
  const std::vector<float> all = run(2);
  for (int threads : {1, 2, 1}) {
    const std::vector<float> got = run(threads);
    ASSERT_EQ(got.size(), all.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], all[i], 1e-5f) << "element " << i << ", " << threads;
  }
  ex.run(5);
  EXPECT_EQ(ex.run_threads(), 2) << "never more than the executor's threads";
}

// The first run on 2 threads reshapes the oneDNN kernels (convolutions, a
// pooling, a Gemm with packed weights, Reorders between layouts) two at a
// time before it runs them (Executor::prepare_ahead); a run on 1 thread
// reshapes each in order. Both give the same outputs.
TEST(Threading, KernelsPreparedAheadGiveTheOutputsOfKernelsReshapedInOrder) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,12,12");
  ob::add_output(g, "y", ob::kFloat, "1,10");
  const auto weights = [](size_t n, int mod) {
    std::vector<float> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = static_cast<float>(static_cast<int>(i % mod) - mod / 2) / (4.f * mod);
    return w;
  };
  ob::add_float_init(g, "wa", {32, 16, 3, 3}, weights(32 * 16 * 9, 13));
  ob::add_float_init(g, "wb", {16, 32, 1, 1}, weights(16 * 32, 7));
  ob::add_float_init(g, "wc", {32, 16, 3, 3}, weights(32 * 16 * 9, 11));
  ob::add_float_init(g, "wg", {10, 32 * 3 * 3}, weights(10 * 288, 17));
  ob::attr_ints(ob::add_node(g, "Conv", {"x", "wa"}, {"a"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"a"}, {"ar"});
  ob::add_node(g, "Conv", {"ar", "wb"}, {"b"});
  auto* pool = ob::add_node(g, "MaxPool", {"b"}, {"p"});
  ob::attr_ints(pool, "kernel_shape", {2, 2});
  ob::attr_ints(pool, "strides", {2, 2});
  auto* c = ob::add_node(g, "Conv", {"p", "wc"}, {"c"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  ob::attr_ints(c, "strides", {2, 2});
  ob::add_node(g, "Flatten", {"c"}, {"f"});
  ob::attr_i(ob::add_node(g, "Gemm", {"f", "wg"}, {"y"}), "transB", 1);
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  Tensor x(DType::kFloat32, {1, 16, 12, 12});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  auto first_run = [&](int threads) {
    std::vector<uint8_t> arena(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64);
    runtime::Executor ex(lm, arena.data(), threads, false);
    ex.bind_input(0, x.view());
    ex.run(threads);
    if (threads == 1) EXPECT_EQ(ex.prepared_ahead(), 0u);
    else EXPECT_GE(ex.prepared_ahead(), 4u) << "three convolutions and the Gemm at least";
    const TensorView& y = ex.output(0);
    return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
  };
  const std::vector<float> in_order = first_run(1), prepared = first_run(2);
  ASSERT_EQ(prepared.size(), 10u);
  testing::expect_close(prepared, in_order, 1e-5f, 1e-5f);
  float largest = 0;
  for (float v : in_order) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 1e-3f) << "the outputs should not all be zero";
}

// Step thread tuning (runtime/step_threads.h) on made-up kernel times.
namespace step_tuning {
using Tuner = runtime::StepThreadTuner;
using Arm = Tuner::Arm;
constexpr int kRuns = Tuner::kRunsPerArm;

// One run: its arm, then each timed step's time (one_ms when on one thread,
// else all_ms) and the run's wall time (the sum, plus `extra` ms).
struct Steps {
  std::vector<double> one_ms, all_ms;
  double extra = 0;
};
Arm run(Tuner& t, const Steps& s, const std::vector<uint8_t>& eligible, int threads = 2,
        Tuner::Clock::time_point now = Tuner::Clock::now(), bool measured = true) {
  const Arm arm = t.begin_run(threads, eligible, now);
  double wall = s.extra;
  for (size_t i = 0; i < s.one_ms.size(); ++i) {
    const double ms = t.one_thread(i) ? s.one_ms[i] : s.all_ms[i];
    wall += ms;
    if (t.timed(i)) t.record(i, ms);
  }
  t.end_run(wall, measured);
  return arm;
}
// The runs of a round up to its decision, `s` in every one.
void round(Tuner& t, const Steps& s, const std::vector<uint8_t>& eligible, int threads = 2,
           Tuner::Clock::time_point now = Tuner::Clock::now()) {
  for (int k = 0; k < 64 && !t.settled(threads); ++k) run(t, s, eligible, threads, now);
  ASSERT_TRUE(t.settled(threads));
}
}  // namespace step_tuning

TEST(StepThreadTuning, MedianRule) {
  EXPECT_TRUE(runtime::StepThreadTuner::one_thread_faster({1, 9, 2}, {3, 3, 1}));  // 2 < 3
  EXPECT_FALSE(runtime::StepThreadTuner::one_thread_faster({3, 3, 1}, {1, 9, 3}));  // 3 == 3: stays
  EXPECT_FALSE(runtime::StepThreadTuner::one_thread_faster({}, {1}));
}

// Step 0 is faster alone, step 1 slower alone, step 2 too slow to be tried,
// step 3 not eligible (the plan fixed its count): after the round only step 0
// runs on one thread, and the runs of the round come in the documented order.
TEST(StepThreadTuning, ARoundPutsTheStepsFasterAloneOnOneThread) {
  using namespace step_tuning;
  Tuner t(4);
  const std::vector<uint8_t> eligible = {1, 1, 1, 0};
  const Steps s{{0.01, 0.08, 2.0, 0.01}, {0.03, 0.04, 1.0, 0.01}};
  const auto now = Tuner::Clock::now();
  EXPECT_EQ(run(t, s, eligible, 2, now, /*measured=*/false), Arm::kSurvey) << "a first run is made again";
  EXPECT_FALSE(t.settled(2));
  EXPECT_EQ(run(t, s, eligible), Arm::kSurvey);
  for (int k = 0; k < kRuns; ++k) {
    const Arm a = t.begin_run(2, eligible);
    EXPECT_EQ(a, Arm::kOne);
    EXPECT_TRUE(t.one_thread(0) && t.one_thread(1)) << "both candidates alone";
    EXPECT_FALSE(t.one_thread(2)) << "slower than kMaxCandidateMs: not tried";
    EXPECT_FALSE(t.timed(2) || t.timed(3) || t.one_thread(3));
    t.record(0, 0.01);
    t.record(1, 0.08);
    t.end_run(2.1, true);
  }
  for (int k = 0; k < kRuns; ++k) EXPECT_EQ(run(t, s, eligible), Arm::kAll);
  for (int k = 0; k < kRuns; ++k) {
    EXPECT_EQ(t.begin_run(2, eligible), Arm::kTrial);
    EXPECT_TRUE(t.one_thread(0));
    EXPECT_FALSE(t.one_thread(1)) << "slower alone: not in the trial";
    t.record(0, 0.01);
    t.record(1, 0.04);
    t.end_run(1.0, true);  // kAll's runs: 1.08 ms
  }
  ASSERT_TRUE(t.settled(2));
  EXPECT_EQ(t.one_thread_steps(2), 1u);
  EXPECT_EQ(t.begin_run(2, eligible), Arm::kSettled);
  EXPECT_TRUE(t.one_thread(0));
  EXPECT_FALSE(t.one_thread(1) || t.one_thread(2) || t.one_thread(3));
  EXPECT_FALSE(t.timed(0)) << "settled runs time nothing";
  t.end_run(1.0, true);
}

// A run that failed or made primitives says nothing: its arm runs again
// and its times are not taken (here a failed kOne run far faster than the
// others would have made kOne's median the lower).
TEST(StepThreadTuning, UnmeasuredRunsAreMadeAgain) {
  using namespace step_tuning;
  Tuner t(1);
  const std::vector<uint8_t> eligible = {1};
  const Steps s{{0.05}, {0.02}};
  run(t, s, eligible);  // survey
  int one_runs = 0;
  for (int k = 0; k < 3 * kRuns; ++k) {
    const Arm a = t.begin_run(2, eligible);
    if (a != Arm::kOne) {
      t.end_run(1.0, true);
      break;
    }
    ++one_runs;
    t.record(0, k % 2 ? 0.05 : 0.001);
    t.end_run(k % 2 ? 1.05 : 0.001, /*measured=*/k % 2 == 1);  // the fast ones "failed"
  }
  EXPECT_EQ(one_runs, 2 * kRuns) << "every other kOne run did not count";
  round(t, s, eligible);
  EXPECT_EQ(t.one_thread_steps(2), 0u);
}

// Alone, a step reads what its neighbours wrote on the other thread: a trial
// whose runs are slower than every step on its threads is not kept.
TEST(StepThreadTuning, ATrialSlowerThanTheWholeRunOnAllThreadsIsDropped) {
  using namespace step_tuning;
  Tuner t(3);
  const std::vector<uint8_t> eligible = {1, 1, 1};
  Steps s{{0.01, 0.01, 0.05}, {0.02, 0.02, 0.02}};
  run(t, s, eligible);  // survey
  s.extra = 0.5;        // kOne's runs: slower as a whole
  for (int k = 0; k < kRuns; ++k) EXPECT_EQ(run(t, s, eligible), Arm::kOne);
  s.extra = 0;
  for (int k = 0; k < kRuns; ++k) EXPECT_EQ(run(t, s, eligible), Arm::kAll);
  // Trial 1 (steps 0 and 1): slower as a whole, and step 1 lost its time
  // among its neighbours: trial 2 keeps step 0 only; also slower.
  for (int trial = 1; trial <= Tuner::kMaxTrials; ++trial)
    for (int k = 0; k < kRuns; ++k) {
      ASSERT_EQ(t.begin_run(2, eligible), Arm::kTrial) << "trial " << trial;
      EXPECT_TRUE(t.one_thread(0));
      EXPECT_EQ(t.one_thread(1), trial == 1);
      t.record(0, 0.015);
      if (t.timed(1)) t.record(1, t.one_thread(1) ? 0.03 : 0.02);
      if (t.timed(2)) t.record(2, 0.02);
      t.end_run(1.0, true);
    }
  ASSERT_TRUE(t.settled(2));
  EXPECT_EQ(t.one_thread_steps(2), 0u);
}

// Every candidate faster alone: the trial would be kOne again; kOne is kept
// when its runs beat kAll's by kMinGain (0.02 against 0.04 ms), not when
// they are slower (1.02) or faster by less (0.039).
TEST(StepThreadTuning, EveryCandidateFasterAloneSettlesOnTheFasterWholeRun) {
  using namespace step_tuning;
  for (const double one_extra : {0.0, 1.0, 0.019}) {
    Tuner t(2);
    const std::vector<uint8_t> eligible = {1, 1};
    Steps s{{0.01, 0.01}, {0.02, 0.02}};
    run(t, s, eligible);
    s.extra = one_extra;
    for (int k = 0; k < kRuns; ++k) run(t, s, eligible);
    s.extra = 0;
    for (int k = 0; k < kRuns; ++k) run(t, s, eligible);
    ASSERT_TRUE(t.settled(2)) << "no trial run";
    EXPECT_EQ(t.one_thread_steps(2), one_extra == 0 ? 2u : 0u);
  }
}

// Decisions and samples are kept per thread count: a round of another count
// in the middle of one (the CPU monitor trying fewer threads) changes
// neither; a round runs again only once kRetuneRuns runs and kRetuneAfter
// have both passed.
TEST(StepThreadTuning, CountsKeepTheirOwnRoundsAndRetuneLater) {
  using namespace step_tuning;
  Tuner t(1);
  const std::vector<uint8_t> eligible = {1};
  const Steps fast_alone{{0.01}, {0.02}}, slow_alone{{0.04}, {0.02}};
  const auto t0 = Tuner::Clock::now();
  run(t, fast_alone, eligible, 2, t0);  // count 2: survey
  run(t, fast_alone, eligible, 2, t0);  // kOne, 1 of kRuns
  round(t, slow_alone, eligible, 3, t0);
  EXPECT_EQ(t.one_thread_steps(3), 0u);
  EXPECT_FALSE(t.settled(2));
  round(t, fast_alone, eligible, 2, t0);
  EXPECT_EQ(t.one_thread_steps(2), 1u) << "count 3's samples did not enter count 2's round";
  EXPECT_TRUE(t.settled(3));
  for (int64_t k = 0; k < Tuner::kRetuneRuns + 5; ++k)
    ASSERT_EQ(run(t, fast_alone, eligible, 2, t0 + std::chrono::seconds(1)), Arm::kSettled) << "too soon";
  Tuner u(1);
  round(u, fast_alone, eligible, 2, t0);
  for (int k = 0; k < 10; ++k)
    ASSERT_EQ(run(u, fast_alone, eligible, 2, t0 + Tuner::kRetuneAfter * 2), Arm::kSettled) << "too few runs";
  EXPECT_EQ(run(t, fast_alone, eligible, 2, t0 + Tuner::kRetuneAfter + std::chrono::seconds(2)), Arm::kSurvey);
}

// The settled runs are watched: when they run kDrift slower than the chosen
// set did in its round (the vCPUs moved), a round starts before kRetuneRuns.
TEST(StepThreadTuning, SettledRunsThatDriftStartARound) {
  using namespace step_tuning;
  Tuner t(1);
  const std::vector<uint8_t> eligible = {1};
  const auto t0 = Tuner::Clock::now();
  round(t, Steps{{0.01}, {0.02}}, eligible, 2, t0);  // settles on one thread: runs of 0.01 ms
  ASSERT_EQ(t.one_thread_steps(2), 1u);
  const Steps a_bit_slower{{0.0115}, {0.02}}, much_slower{{0.015}, {0.02}};
  for (int64_t k = 0; k < 4 * Tuner::kMinRunsBeforeWatch; ++k)
    ASSERT_EQ(run(t, a_bit_slower, eligible, 2, t0), Arm::kSettled) << "15% is within kDrift, run " << k;
  int settled_runs = 0;
  while (run(t, much_slower, eligible, 2, t0) == Arm::kSettled && settled_runs < 100) ++settled_runs;
  // The watch that holds a majority of the slower runs.
  EXPECT_GE(settled_runs, Tuner::kWatchRuns / 2);
  EXPECT_LE(settled_runs, 2 * Tuner::kWatchRuns);
  EXPECT_FALSE(t.settled(2));
  // Not within kMinRunsBeforeWatch of a round, and not at all without the
  // watch (a model whose work follows its inputs).
  for (const bool watch : {true, false}) {
    Tuner u(1, Tuner::kMaxCandidateMs, watch);
    round(u, Steps{{0.01}, {0.02}}, eligible, 2, t0);
    const int64_t runs = watch ? Tuner::kMinRunsBeforeWatch - Tuner::kWatchRuns : 4 * Tuner::kMinRunsBeforeWatch;
    for (int64_t k = 0; k < runs; ++k) ASSERT_EQ(run(u, much_slower, eligible, 2, t0), Arm::kSettled) << watch << k;
  }
}

namespace step_tuning {
// A convolution, an elementwise chain and a pooling (x [1,32,24,24]).
model::LoadedModel conv_chain_model(CompiledModel* keep) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,32,24,24");
  ob::add_output(g, "y", ob::kFloat, "1,32,12,12");
  std::vector<float> w(32 * 32 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 40.f;
  ob::add_float_init(g, "w", {32, 32, 3, 3}, w);
  auto* c = ob::add_node(g, "Conv", {"x", "w"}, {"c"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  ob::add_node(g, "Sigmoid", {"c"}, {"s"});
  ob::add_node(g, "Mul", {"c", "s"}, {"m"});
  auto* pool = ob::add_node(g, "MaxPool", {"m"}, {"y"});
  ob::attr_ints(pool, "kernel_shape", {2, 2});
  ob::attr_ints(pool, "strides", {2, 2});
  const std::string bytes = m.SerializeAsString();
  *keep = compile_onnx_bytes(bytes.data(), bytes.size());
  return model::read_gom_bytes(keep->gom);
}
}  // namespace step_tuning

// An executor that tunes its steps (every step a candidate here) runs some
// on one thread while it measures, gives the outputs of one that does not,
// and settles within a round's runs.
TEST(StepThreadTuning, TunedRunsGiveTheSameOutputsAndSettle) {
  CompiledModel cm;
  const model::LoadedModel lm = step_tuning::conv_chain_model(&cm);
  Tensor x(DType::kFloat32, {1, 32, 24, 24});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>((i * 7) % 23) / 11.f - 1.f;
  std::vector<uint8_t> arena_a(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64), arena_b(arena_a.size());
  runtime::Executor plain(lm, arena_a.data(), 2, false), tuned(lm, arena_b.data(), 2, /*profile=*/true);
  tuned.tune_step_threads(true, /*max_candidate_ms=*/1e9);
  EXPECT_TRUE(tuned.tuning_step_threads()) << "before the first run";
  plain.bind_input(0, x.view());
  tuned.bind_input(0, x.view());
  plain.run();
  const TensorView& want = plain.output(0);
  const std::vector<float> expected(want.as<float>(), want.as<float>() + want.numel());
  int runs = 0, measuring = 0;
  bool alone = false;
  std::vector<int> planned;  // each node's threads in the first run (every step on its planned count)
  do {
    tuned.run();
    ++runs;
    measuring += tuned.last_run_measured_steps();
    for (const NodeProfile& p : tuned.profile()) {
      alone = alone || p.threads == 1;
      if (runs == 1) planned.push_back(p.threads);
    }
    const TensorView& y = tuned.output(0);
    testing::expect_close(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), expected, 1e-5f, 1e-5f);
  } while (tuned.tuning_step_threads() && runs < 60);
  EXPECT_FALSE(tuned.tuning_step_threads());
  EXPECT_TRUE(alone) << "kOne ran the steps on one thread";
  // The first run (a new count) and the first of kOne and kAll make
  // primitives: made again. Then kRunsPerArm each, and trials at most.
  constexpr int k = runtime::StepThreadTuner::kRunsPerArm, trials = runtime::StepThreadTuner::kMaxTrials;
  EXPECT_GE(runs, 2 + 2 * (k + 1));
  EXPECT_LE(runs, 2 + (2 + trials) * (k + 1));
  EXPECT_EQ(measuring, runs) << "every run until settled measured";
  tuned.run();
  EXPECT_FALSE(tuned.last_run_measured_steps());
  EXPECT_FALSE(plain.tuning_step_threads()) << "off unless asked";
  tuned.tune_step_threads(false);
  tuned.run();
  std::vector<int> after;
  for (const NodeProfile& p : tuned.profile()) after.push_back(p.threads);
  EXPECT_EQ(after, planned) << "off: every step back on its planned count";
  EXPECT_NE(std::count(planned.begin(), planned.end(), 2), 0);
  const TensorView& y = tuned.output(0);
  testing::expect_close(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), expected, 1e-5f, 1e-5f);
}

// An If's count does not set its body's: it is never tried on one thread.
TEST(StepThreadTuning, ControlFlowStepsAreNotTuned) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "cond", ob::kBool, "");
  ob::add_input(g, "x", ob::kFloat, "64,64");
  ob::add_output(g, "y", ob::kFloat, "64,64");
  ob::add_node(g, "Sigmoid", {"x"}, {"a"}, "a");
  auto* iff = ob::add_node(g, "If", {"cond"}, {"y"}, "branch");
  auto* then_g = ob::attr(iff, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  ob::add_node(then_g, "Relu", {"a"}, {"t"}, "then_relu");
  ob::add_output(then_g, "t", ob::kFloat, "64,64");
  auto* else_g = ob::attr(iff, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  ob::add_node(else_g, "Neg", {"a"}, {"e"}, "else_neg");
  ob::add_output(else_g, "e", ob::kFloat, "64,64");
  const std::string bytes = m.SerializeAsString();
  CompileOptions o;
  o.opt_level = 0;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size(), o);
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  std::vector<uint8_t> arena(static_cast<size_t>(lm.memory_plan.arena_bytes) + 64);
  runtime::Executor ex(lm, arena.data(), 2, /*profile=*/true);
  ex.tune_step_threads(true, 1e9);
  Tensor x(DType::kFloat32, {64, 64});
  for (int64_t k = 0; k < x.numel(); ++k) x.as<float>()[k] = static_cast<float>(k % 13) / 6.f - 1.f;
  Tensor cond(DType::kBool, {});
  cond.as<uint8_t>()[0] = 1;
  ex.bind_input(0, cond.view());
  ex.bind_input(1, x.view());
  bool sigmoid_alone = false;
  for (int r = 0; r < 60 && ex.tuning_step_threads(); ++r) {
    ex.run();
    for (const NodeProfile& p : ex.profile()) {
      if (p.name == "branch") {
        EXPECT_EQ(p.threads, 2) << "run " << r;
      }
      if (p.name == "a") sigmoid_alone = sigmoid_alone || p.threads == 1;
    }
  }
  EXPECT_FALSE(ex.tuning_step_threads());
  EXPECT_TRUE(sigmoid_alone) << "the step beside it was tried";
  EXPECT_NEAR(ex.output(0).as<float>()[5], std::max(0.f, 1.f / (1.f + std::exp(-x.as<float>()[5]))), 1e-6);
}

TEST(Threading, OpenmpIsRunningInThisTestProcess) {
  // gec_runtime links libgomp: by the time a test runs, its policy is fixed.
  EXPECT_TRUE(openmp_started());
}

}  // namespace
}  // namespace gec
