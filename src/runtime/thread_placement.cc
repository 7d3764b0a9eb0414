// The caller held on its CPU and its helpers kept off it (thread_placement.h).
#include "runtime/thread_placement.h"

#include <omp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gec::runtime {
namespace {

pid_t this_thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

/// True when the environment asks OpenMP to place threads (OMP_PROC_BIND,
/// even "false", OMP_PLACES, GOMP_CPU_AFFINITY): then gec leaves every mask
/// as it is. Read once.
bool user_places_threads() {
  static const bool set = [] {
    for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) {
      const char* v = std::getenv(name);
      if (v && *v) return true;
    }
    return false;
  }();
  return set;
}

/// The OpenMP workers of the calling thread's team, as CpuPlacement found
/// them.
struct Team {
  std::vector<pid_t> workers;
  int threads = 0;  // the team size they were collected for (0: not yet)
};
thread_local Team team;

/// The placement that holds the calling thread, if any.
thread_local const CpuPlacement* holding = nullptr;

/// When the calling thread's last scope with a team ended.
thread_local std::chrono::steady_clock::time_point team_last_used{};

/// True when the environment makes idle OpenMP threads sleep at once or
/// after a spin of its choosing (OMP_WAIT_POLICY=passive, GOMP_SPINCOUNT):
/// then every run may wake them.
bool workers_may_sleep_at_once() {
  static const bool sleep = [] {
    if (const char* c = std::getenv("GOMP_SPINCOUNT"); c && *c) return true;
    const char* p = std::getenv("OMP_WAIT_POLICY");
    if (!p) return false;
    std::string v(p);
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v == "passive";
  }();
  return sleep;
}

/// Collects the calling thread's team of `threads` in one parallel region:
/// each worker restricts itself to `others` (which moves it off this CPU at
/// once) and reports its id; this thread sleeps until all have, so that a
/// worker the scheduler queued here runs now, not at the next tick
/// (sched_yield did not do it: on Linux 6.18's EEVDF scheduler the new
/// worker waited the 4 ms tick behind a yielding caller).
void collect_team(int threads, const cpu_set_t& others) {
  auto ids = std::make_unique<std::atomic<pid_t>[]>(static_cast<size_t>(threads));
  std::atomic<int> arrived{0}, size{0};
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t > 0 && t < threads) {
      ids[static_cast<size_t>(t)].store(this_thread_id());
      ::sched_setaffinity(0, sizeof others, &others);
    }
    arrived.fetch_add(1);
    if (t == 0) {
      const int n = omp_get_num_threads();
      size.store(n);
      while (arrived.load() < n) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  team.workers.clear();
  for (int t = 1; t < size.load() && t < threads; ++t)
    if (pid_t id = ids[static_cast<size_t>(t)].load()) team.workers.push_back(id);
  team.threads = threads;
}

/// Gives every worker of the team `set`; false (and the team to be
/// collected again) when one is gone: libgomp replaced it.
bool set_team(const cpu_set_t& set) {
  for (pid_t id : team.workers)
    if (::sched_setaffinity(id, sizeof set, &set) != 0) {
      team.threads = 0;
      return false;
    }
  return true;
}

}  // namespace

CpuPlacement::CpuPlacement(bool hold, int threads) noexcept {
  if (!hold || user_places_threads()) return;
  if (threads >= 2) {
    // Runs back to back find their team spinning: no syscalls for them.
    const auto now = std::chrono::steady_clock::now();
    const bool awake = team.threads >= threads && now - team_last_used < CpuPlacement::kTeamAwake && !workers_may_sleep_at_once();
    team_scope_ = true;
    if (awake) return;
  }
  const int cpu = ::sched_getcpu();
  if (cpu < 0 || ::sched_getaffinity(0, sizeof mask_, &mask_) != 0 || !CPU_ISSET(cpu, &mask_) ||
      CPU_COUNT(&mask_) < 2)
    return;
  others_ = mask_;
  CPU_CLR(cpu, &others_);
  // The team first: workers it starts take the caller's whole mask.
  if (threads >= 2 && threads <= CPU_COUNT(&mask_)) {
    if (team.threads < threads) {
      collect_team(threads, others_);
      team_kept_off_ = true;
    } else {
      team_kept_off_ = set_team(others_);
    }
  }
  cpu_set_t here;
  CPU_ZERO(&here);
  CPU_SET(cpu, &here);
  held_ = ::sched_setaffinity(0, sizeof here, &here) == 0;
  if (!held_) return;
  outer_ = holding;
  holding = this;
}

CpuPlacement::~CpuPlacement() {
  if (team_scope_) team_last_used = std::chrono::steady_clock::now();
  if (team_kept_off_) set_team(mask_);
  if (!held_) return;
  holding = outer_;
  ::sched_setaffinity(0, sizeof mask_, &mask_);
}

std::thread CpuPlacement::start_helper(std::function<void()> work) {
  auto restricted = std::make_shared<std::atomic<bool>>(false);
  std::thread t([restricted, work = std::move(work)]() {
    while (!restricted->load(std::memory_order_acquire)) ::sched_yield();
    work();
  });
  cpu_set_t others;
  const int cpu = ::sched_getcpu();
  if (holding) {
    others = holding->others_;
  } else if (cpu < 0 || ::sched_getaffinity(0, sizeof others, &others) != 0 || !CPU_ISSET(cpu, &others)) {
    CPU_ZERO(&others);
  } else {
    CPU_CLR(cpu, &others);
  }
  if (CPU_COUNT(&others) > 0 && !user_places_threads())
    ::pthread_setaffinity_np(t.native_handle(), sizeof others, &others);
  restricted->store(true, std::memory_order_release);
  return t;
}

}  // namespace gec::runtime
