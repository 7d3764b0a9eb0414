// Where a run's helper threads run: never queued behind the thread that
// waits for them.
//
// Why: when a thread wakes another (an OpenMP worker at a parallel region,
// a helper std::thread it starts), Linux may queue the woken thread on the
// waker's own CPU while another CPU idles. Measured on the development VM
// (2 vCPUs, a PVM guest; `perf sched timehist` shows the worker queued on
// CPU 0 behind the caller, which spins at the region's barrier, the two
// taking turns in 4 ms scheduler ticks while CPU 1 stays idle):
// squeezenet1_1 on 2 threads ran in 2.7 ms back to back but 10-12.7 ms
// (medians of 40) when each run came 100 ms after the last, against 4.4 ms
// on one thread; and a load's first run stalled 10-20 ms in about one load
// in five. Keeping the workers off the caller's CPU is not enough on its
// own: a caller that later moves onto a worker's CPU meets the same queue
// there (measured: 370 ms of 4 ms turns while the other CPU idled). So the
// caller is held on its CPU and the workers are kept off it for a run's
// scope only; outside runs every thread has its own mask back.
#pragma once

#include <sched.h>

#include <chrono>
#include <functional>
#include <thread>

namespace gec::runtime {

/// For its scope: holds the calling thread on the CPU it is on now, and
/// keeps the OpenMP threads of its team of `team` threads (libgomp keeps one
/// team per thread that opens parallel regions) off that CPU: each worker may
/// run on every CPU of the caller's affinity mask but that one. When the
/// scope ends, the caller and the workers get the caller's mask back.
///
/// A scope with a team that starts less than kTeamAwake after the end of
/// the thread's last one does nothing: the workers are still spinning, so
/// none is woken, and runs back to back cost no system call (unless
/// OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT is set: then every scope may
/// wake them). The first scope on a thread with a team (and one with a
/// larger team than before) opens one parallel region, in which the workers
/// restrict themselves and report their thread ids (the caller sleeps until
/// all have, so that a worker queued behind it runs at once). Otherwise a
/// scope costs a sched_getcpu() and two sched_setaffinity calls for the
/// caller and two per worker (about 11 us in all for a team of 2 here; 20-40
/// us more per run for oww_melspectrogram's 0.33 ms runs back to back,
/// hence the exception). Does nothing when the environment asks OpenMP to
/// place threads (OMP_PROC_BIND, even "false", OMP_PLACES or
/// GOMP_CPU_AFFINITY set: the user's choice wins), for a mask of one CPU or
/// a team larger than the mask, or where the kernel refuses (threads then
/// go where the scheduler puts them). Never throws.
class CpuPlacement {
 public:
  /// How long after a scope with a team its workers are taken to be still
  /// spinning (libgomp's default spins 300,000 rounds: milliseconds here).
  static constexpr std::chrono::microseconds kTeamAwake{1000};

  /// `hold`: hold the caller on its CPU; `team`: the size of the caller's
  /// OpenMP team to keep off it (below 2: none; only with `hold`).
  CpuPlacement(bool hold, int team) noexcept;
  ~CpuPlacement();
  CpuPlacement(const CpuPlacement&) = delete;
  CpuPlacement& operator=(const CpuPlacement&) = delete;

  /// Starts `work` on a new thread restricted, before `work` begins, to the
  /// calling thread's CPUs but the one it is on (the one a CpuPlacement in
  /// scope holds it on, if any), so that the two run at once; unrestricted
  /// where that leaves no CPU or the kernel refuses. The new thread waits
  /// for its restriction: its kernel id is still its own when it is set (a
  /// thread that has exited leaves pthread_setaffinity_np its id 0, which
  /// glibc passes on as "the calling thread"). Unrestricted where the
  /// environment asks OpenMP to place threads, as above. Throws what
  /// std::thread's constructor throws.
  static std::thread start_helper(std::function<void()> work);

 private:
  bool held_ = false, team_kept_off_ = false;
  bool team_scope_ = false;  // a scope with a team: its end is when the team was last used
  const CpuPlacement* outer_ = nullptr;  // the placement in scope before this one
  cpu_set_t mask_;    // the caller's mask before the scope
  cpu_set_t others_;  // mask_ but the caller's CPU
};

}  // namespace gec::runtime
