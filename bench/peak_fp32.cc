// peak_fp32: the float32 multiply-add rate this CPU reaches, per thread
// count, in GFLOP/s (10^9 floating-point operations per second; one fused
// multiply-add is 2). It is the denominator of "percent of peak" in
// bench/results.md (divide `gec profile`'s GFLOP/s by it): a figure quoted
// from a data sheet is no use on a shared virtual machine whose cores
// change with the host. Run it on a quiet machine.
//
// Each thread runs 12 independent chains of vector FMAs on registers (no
// memory traffic), enough to cover the FMA latency times the number of FMA
// ports of current x86-64 cores (4 cycles x 2 ports needs 8). Highway picks
// the widest vectors the running CPU has (AVX-512 where present), so one
// binary measures any x86-64 machine; the target is printed.
//
// Usage: peak_fp32 [max_threads] [seconds_per_count]; prints one line per
// thread count 1..max_threads (default: the CPUs this process may run on,
// 1 s each).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peak_fp32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace gec_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Runs `rounds` x 12 vector FMAs per chain; returns the flops done and a
/// value that depends on every chain (so the compiler keeps them).
double FmaChains(int64_t rounds, float* sink) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.99999f), c = hn::Set(d, 1e-6f);
  auto a0 = hn::Set(d, 1.0f), a1 = hn::Set(d, 1.1f), a2 = hn::Set(d, 1.2f), a3 = hn::Set(d, 1.3f);
  auto a4 = hn::Set(d, 1.4f), a5 = hn::Set(d, 1.5f), a6 = hn::Set(d, 1.6f), a7 = hn::Set(d, 1.7f);
  auto a8 = hn::Set(d, 1.8f), a9 = hn::Set(d, 1.9f), a10 = hn::Set(d, 2.0f), a11 = hn::Set(d, 2.1f);
  for (int64_t r = 0; r < rounds; ++r) {
    a0 = hn::MulAdd(a0, m, c), a1 = hn::MulAdd(a1, m, c), a2 = hn::MulAdd(a2, m, c), a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c), a5 = hn::MulAdd(a5, m, c), a6 = hn::MulAdd(a6, m, c), a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c), a9 = hn::MulAdd(a9, m, c), a10 = hn::MulAdd(a10, m, c), a11 = hn::MulAdd(a11, m, c);
  }
  const auto s = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)),
                         hn::Add(hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)), hn::Add(hn::Add(a8, a9), hn::Add(a10, a11))));
  *sink = hn::GetLane(hn::SumOfLanes(d, s));
  return 2.0 * 12.0 * static_cast<double>(hn::Lanes(d)) * static_cast<double>(rounds);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace gec_bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gec_bench {
HWY_EXPORT(FmaChains);
HWY_EXPORT(TargetName);

/// GFLOP/s of `threads` threads each running FMA chains for about `seconds`.
double measure(int threads, double seconds) {
  // Calibrate one thread's round count to the time asked for.
  float sink = 0;
  int64_t rounds = 1 << 20;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    HWY_DYNAMIC_DISPATCH(FmaChains)(rounds, &sink);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0.05) {
      rounds = static_cast<int64_t>(static_cast<double>(rounds) * seconds / s);
      break;
    }
    rounds *= 4;
  }
  std::vector<double> flops(threads);
  std::vector<float> sinks(threads);
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      flops[t] = HWY_DYNAMIC_DISPATCH(FmaChains)(rounds, &sinks[t]);
    });
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double total = 0;
  for (double f : flops) total += f;
  if (sinks[0] == 12345.f) std::printf(" ");  // keeps the chains' results alive
  return total / s / 1e9;
}

}  // namespace gec_bench

int main(int argc, char** argv) {
  cpu_set_t allowed;
  const int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : std::max(cpus, 1);
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (max_threads < 1 || max_threads > 1024 || !(seconds > 0 && seconds <= 60)) {
    std::fprintf(stderr, "usage: peak_fp32 [max_threads 1..1024] [seconds_per_count 0..60]\n");
    return 2;
  }
  std::printf("fp32 FMA peak, %s vectors (Highway target):\n", HWY_DYNAMIC_DISPATCH(gec_bench::TargetName)());
  for (int t = 1; t <= max_threads; ++t) std::printf("  %d thread%s: %.0f GFLOP/s\n", t, t == 1 ? "" : "s",
                                                     gec_bench::measure(t, seconds));
  return 0;
}
#endif  // HWY_ONCE
