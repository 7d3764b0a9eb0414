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

/// The "procs_running" field of a /proc/stat text: how many threads are
/// runnable (running or waiting on a run queue) on the whole machine at the
/// moment it was read, the reader included (Linux
/// Documentation/filesystems/proc.rst, "Miscellaneous kernel statistics in
/// /proc/stat"). Negative when the text has no such field.
int procs_running(const std::string& proc_stat);

/// The run delay, in seconds, of one /proc/<pid>/task/<tid>/schedstat text:
/// its second field, the nanoseconds the task spent runnable on a run queue
/// without running (Linux Documentation/scheduler/sched-stats.rst, "schedstat
/// in /proc/<pid>"). Negative when the text does not hold three numbers.
double schedstat_run_delay(const std::string& schedstat);

/// Threads to run with, of `threads`, when this process's threads spent
/// `waiting` threads' worth of the wall time runnable but not running (run
/// delay per second): a thread that shares its core with one CPU-bound
/// process waits half the time, so `waiting` w means about 2w of our
/// threads without a core of their own. threads - 2w rounded to nearest,
/// between 1 and `threads`.
int threads_left_from_waiting(double waiting, int threads);

/// Chooses each run's thread count on a machine other processes use.
///
/// Contention: samples the busy CPU time of the CPUs in this process's
/// affinity mask (/proc/stat) and this process's own
/// (CLOCK_PROCESS_CPUTIME_ID) at most every `interval`; between two
/// samples, the difference is the other processes' use. /proc/stat counts
/// 10 ms ticks, so an interval must be long (200 ms) to be read to a
/// fraction of a core. Until the first one has passed, the run delay of
/// this process's threads (schedstat, in ns) gives a first answer every
/// `first_signal` (2 ms): a short benchmark or the first requests after a
/// start on a busy machine would otherwise all run on every thread. And
/// before the first run, when this process may use every CPU: the threads
/// runnable on the machine now (/proc/stat procs_running, the fewest of
/// kRunnableReads reads 0.1 ms apart, so that a moment's wake-up does not
/// count; less the reader), so that the first run does not start a
/// parallel region on a core a CPU-bound process holds (bert_like_encoder's
/// first run beside a `yes` pinned to one of two cores: 14-116 ms on both
/// threads, 9-10 ms on one; a run on fewer threads than the session has
/// makes its kernels' primitives again for that count).
///
/// Check: fewer threads is not always faster on a shared core. A thread
/// that shares its core with a CPU-bound process holds every barrier while
/// it waits for the core (silero_vad_v5: 0.63 ms on 2 threads, 0.18 on 1),
/// but a scheduler that lets a thread woken from sleep preempt the hog can
/// make all threads the faster choice (oww_embedding: 0.58 on 2, 1.04 on 1).
/// So while contention suggests fewer than `max_threads`, the runs measure
/// both counts (record_run: the latest kSamples runs of each, the run after
/// a change of count not counted, as it reshapes every kernel) and use the
/// faster by median; the slower is timed again (kSamples runs) once
/// kRunsBetweenChecks runs and kSecondsBetweenChecks have passed since it
/// last ran, so that trying it takes at most about 4% of the runs.
///
/// Not thread-safe (one per Session, used under its lock).
class CpuMonitor {
 public:
  /// Runs timed per thread count before the two are compared (median).
  static constexpr size_t kSamples = 3;
  /// The slower count is timed again after this many runs of the faster
  /// one and at least this many seconds.
  static constexpr int kRunsBetweenChecks = 100, kSecondsBetweenChecks = 1;
  /// Reads of procs_running before the first run (the fewest counts).
  static constexpr int kRunnableReads = 3;
  /// `runnable_signal`: read the run queues before the first run (off in
  /// tests that need the first answer to be `max_threads`).
  explicit CpuMonitor(std::chrono::milliseconds interval = std::chrono::milliseconds(200),
                      std::chrono::microseconds first_signal = std::chrono::microseconds(2000),
                      bool runnable_signal = true);
  /// The threads the next run should use, at most `max_threads`: all of
  /// them while contention() leaves all, else the faster of contention()'s
  /// count and `max_threads` as the check above measures them.
  int threads_for_next_run(int max_threads);
  /// Reports the wall time of a run made with `threads` threads (the count
  /// threads_for_next_run returned for it); `reshaped`: the run context
  /// made its kernels for that count first (its time is not a sample).
  void record_run(int threads, std::chrono::steady_clock::duration wall, bool reshaped);
  /// The count contention alone suggests: threads_left of the first
  /// measured interval, then a new count once two intervals in a row agree
  /// on it; before that, the fewest threads_left_from_waiting has given
  /// over the `first_signal` spans so far (it only lowers the count: with
  /// fewer threads the waiting stops, and going up again is the intervals'
  /// decision), starting from runnable_threads' answer of the first call,
  /// or `max_threads` when none has been measured or schedstat cannot be
  /// read; `max_threads` when /proc/stat cannot be read; never more than
  /// `max_threads`.
  int contention(int max_threads);

 private:
  using Clock = std::chrono::steady_clock;
  /// Latest run times (seconds) of one thread count, oldest first.
  struct Arm {
    std::vector<double> runs;
    Clock::time_point last_run{};
    int runs_since = 0;  // runs of the other count since this one's last
    double median() const;
  };
  bool sample(double* machine_busy, double* self_cpu) const;
  /// The run delay of every thread of this process, in seconds; negative
  /// when /proc/self/task cannot be read.
  static double own_run_delay();
  /// threads_left of the machine's runnable threads less this one, or
  /// `max_threads` when this process may not use every CPU or /proc/stat
  /// has no procs_running.
  int runnable_threads(int max_threads) const;
  /// threads_ while no /proc/stat interval has been measured (0: none yet).
  int first_signal_threads(Clock::time_point now, int max_threads);
  /// Returns `threads` as the next run's count, noting a change.
  int use(int threads);
  std::chrono::milliseconds interval_;
  std::chrono::microseconds first_signal_;
  bool runnable_signal_;
  Clock::time_point last_{}, last_delay_at_{};
  double last_machine_ = -1, last_self_ = 0, last_delay_ = -1;
  int threads_ = 0;        // 0: no interval measured yet
  int pending_ = 0;        // the last interval's count; threads_ follows when two agree
  int early_threads_ = 0;  // the run-delay answer before the first interval (0: none)
  double ticks_per_second_;
  std::vector<int> cpus_;  // the affinity mask when constructed
  // The check: arms for `fewer_` (contention's count) and `all_`.
  int fewer_ = 0, all_ = 0;  // 0: no contention, nothing measured
  Arm fewer_arm_, all_arm_;
  int chosen_ = 0;  // the count the last call returned
};

}  // namespace gec::runtime
