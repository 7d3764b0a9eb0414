// Where a run's helper threads run: never queued behind the thread that
// waits for them.
//
// Why: when a thread wakes another (an OpenMP worker at a parallel region,
// a helper std::thread it starts), Linux may queue the woken thread on the
// waker's own CPU while another CPU idles. Measured on the development VM
// (2 vCPUs, a PVM guest, Linux 6.18; `perf sched timehist` shows the worker
// queued on CPU 0 behind the caller, which spins at the region's barrier,
// the two taking turns in 4 ms scheduler ticks while CPU 1 stays idle):
// squeezenet1_1 on 2 threads ran in 2.7 ms back to back but 10-12.7 ms
// (medians of 40) when each run came 100 ms after the last, against 4.4 ms
// on one thread; oww_melspectrogram 0.33 -> 10.4 ms; and a load's first run
// stalled 10-20 ms (some 100-370 ms) in about one load in five.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>

namespace gec::runtime {

/// For its scope: keeps the OpenMP workers of the calling thread's team of
/// `threads` (libgomp keeps one pool of threads per thread that opens
/// parallel regions) off the CPU the calling thread is on when the scope
/// starts: each worker may run on every CPU of the caller's affinity mask
/// but that one. When the scope ends the workers get the caller's mask
/// (as read when the scope started) back. The caller itself is never
/// restricted, so threads it starts meanwhile (libgomp's included) take its
/// whole mask.
///
/// A scope that starts less than kTeamAwake after the thread's last
/// parallel step (TeamPlacement::team_used) does nothing: libgomp's workers
/// spin a few milliseconds after a region by default, so none is woken, and
/// runs back to back make no system call. That is a heuristic: libgomp
/// spins only 1,000 rounds when it manages more threads than CPUs (several
/// sessions or requests running at once), newer GCCs spin once on hybrid
/// Intel CPUs, and OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT (then every
/// scope places) change it; LLVM's libomp (the sanitizer builds) spins
/// otherwise. The first scope on a thread (and one with a team of another
/// size, after a worker was found gone, or in a child after fork) opens one
/// parallel region in which the workers restrict themselves and report their
/// thread ids (the caller sleeps until all have, so that a worker queued
/// behind it runs at once; sched_yield left a new worker queued behind it
/// under Linux 6.18's EEVDF scheduler). Otherwise a scope costs a
/// sched_getcpu(), a sched_getaffinity() and, per worker, a tgkill(0) probe
/// and two sched_setaffinity() calls. On 2 CPUs the workers are pinned for
/// the run: a caller that the scheduler moves onto their CPU during the run
/// shares it with them until the run ends. Does nothing when the
/// environment asks OpenMP to place threads (OMP_PROC_BIND, even "false",
/// OMP_PLACES or GOMP_CPU_AFFINITY set: the user's choice wins), for fewer
/// than 2 threads, for a mask of one CPU or fewer CPUs than threads, or
/// where the kernel refuses (threads then go where the scheduler puts them).
/// Never throws.
class TeamPlacement {
 public:
  /// How long after the thread's last parallel step its workers are taken to
  /// be still spinning (libgomp's default spins 300,000 rounds: milliseconds
  /// here).
  static constexpr std::chrono::microseconds kTeamAwake{1000};

  explicit TeamPlacement(int threads) noexcept;
  ~TeamPlacement();
  TeamPlacement(const TeamPlacement&) = delete;
  TeamPlacement& operator=(const TeamPlacement&) = delete;

  /// The rule above: a scope places its team unless the team is already
  /// known (`known`), ran its last parallel step `since_last_use` ago, less
  /// than kTeamAwake, and idle workers spin (`!sleep_at_once`).
  static bool places(bool known, std::chrono::steady_clock::duration since_last_use, bool sleep_at_once);

  /// Notes that the calling thread's team ran a parallel step now (the
  /// executor calls it after each step on several threads).
  static void team_used();

  /// The workers of the calling thread's team as the last scope found them
  /// (0 before any scope placed one).
  static size_t known_workers();

  /// Starts `work` on a new thread restricted, before `work` begins, to the
  /// calling thread's CPUs but the one it is on now, so that the two run at
  /// once; unrestricted where that leaves no CPU, the kernel refuses or the
  /// environment asks OpenMP to place threads (as above). The new thread
  /// waits for its restriction: its kernel id is still its own when it is
  /// set (a thread that has exited leaves pthread_setaffinity_np its id 0,
  /// which glibc passes on as "the calling thread"). Throws what
  /// std::thread's constructor throws.
  static std::thread start_helper(std::function<void()> work);

 private:
  bool kept_off_ = false;  // the team was restricted: give it mask_ back
  cpu_set_t mask_;         // the caller's mask when the scope started
};

}  // namespace gec::runtime
