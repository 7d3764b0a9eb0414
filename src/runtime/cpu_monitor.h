// How busy other processes keep this machine's cores, sampled between runs,
// so that a Session uses fewer threads while cores are taken (a thread that
// shares its core with a CPU-bound process holds every barrier of every
// parallel region: latency collapses).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace gec::runtime {

/// Threads to run with when `others` cores' worth of CPU time is used by
/// other processes (and the hypervisor: steal time) on the `cpus` CPUs this
/// process may run on: the CPUs left, rounded to nearest, between 1 and
/// `max_threads` (which the caller caps by the cgroup quota).
int threads_left(double others, int cpus, int max_threads);

/// Busy CPU time, in seconds, of the CPUs whose ids are in `cpus`, from a
/// /proc/stat text (its "cpuN" lines): user + nice + system + irq + softirq
/// + steal (guest time is counted in user), in USER_HZ ticks /
/// `ticks_per_second`. Negative when a CPU of `cpus` has no line.
double busy_seconds(const std::string& proc_stat, const std::vector<int>& cpus, double ticks_per_second);

/// Samples the busy CPU time of the CPUs in this process's affinity mask
/// (/proc/stat) and this process's own (CLOCK_PROCESS_CPUTIME_ID) at most
/// every `interval`; between two samples, the difference is the other
/// processes' use. Not thread-safe (one per
/// Session, used under its run guard).
class CpuMonitor {
 public:
  explicit CpuMonitor(std::chrono::milliseconds interval = std::chrono::milliseconds(200));
  /// The threads the next run should use: threads_left of the first
  /// measured interval, then a new count once two intervals in a row agree
  /// on it; `max_threads` until one interval has been measured or when
  /// /proc/stat cannot be read; never more than `max_threads`.
  int threads_for_next_run(int max_threads);

 private:
  using Clock = std::chrono::steady_clock;
  bool sample(double* machine_busy, double* self_cpu) const;
  std::chrono::milliseconds interval_;
  Clock::time_point last_{};
  double last_machine_ = -1, last_self_ = 0;
  int threads_ = 0;   // 0: no interval measured yet
  int pending_ = 0;   // the last interval's count; threads_ follows when two agree
  double ticks_per_second_;
  std::vector<int> cpus_;  // the affinity mask when constructed
};

}  // namespace gec::runtime
