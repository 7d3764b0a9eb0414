// OpenMP workers and helper threads kept off their waker's CPU
// (thread_placement.h).
#include "runtime/thread_placement.h"

#include <omp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gec/threading.h"

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

/// True when the environment makes idle OpenMP threads sleep at once or
/// after a spin of its choosing (OMP_WAIT_POLICY=passive, GOMP_SPINCOUNT),
/// as openmp_wait_policy() reads it. Read once.
bool workers_sleep_at_once() {
  static const bool sleep = [] {
    const std::string policy = openmp_wait_policy();
    return policy == "passive" || policy.rfind("bounded spin", 0) == 0;
  }();
  return sleep;
}

/// The OpenMP workers of the calling thread's team, as a placement found
/// them, and when the team was last used.
struct Team {
  pid_t process = 0;  // the process they were found in (a fork's child has none of them)
  int threads = 0;    // the team size they were collected for (0: not yet, or to collect again)
  std::vector<pid_t> workers;
  std::chrono::steady_clock::time_point last_use{};  // the end of the last parallel step (team_used)
};
thread_local Team team;

/// The calling thread's CPUs but `cpu`, and all of them, into `others` and
/// `all`; false where that leaves fewer than `threads` - 1 CPUs for the
/// workers or `cpu` is not one of them.
bool split_mask(int cpu, int threads, cpu_set_t& all, cpu_set_t& others) {
  if (cpu < 0 || ::sched_getaffinity(0, sizeof all, &all) != 0 || !CPU_ISSET(cpu, &all) || CPU_COUNT(&all) < 2 ||
      CPU_COUNT(&all) < threads)
    return false;
  others = all;
  CPU_CLR(cpu, &others);
  return true;
}

/// Collects the calling thread's team of `threads` in one parallel region:
/// each worker restricts itself to `others` (which moves it off this CPU at
/// once) and reports its id; this thread sleeps until all have.
void collect_team(int threads, const cpu_set_t& others) {
  // Allocations first: once the workers have restricted themselves, nothing
  // may throw before their ids are kept (the scope's end gives them back).
  auto ids = std::make_unique<std::atomic<pid_t>[]>(static_cast<size_t>(threads));
  team.workers.clear();
  team.workers.reserve(static_cast<size_t>(threads));
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
  for (int t = 1; t < size.load() && t < threads; ++t)
    if (pid_t id = ids[static_cast<size_t>(t)].load()) team.workers.push_back(id);
  team.threads = threads;
  team.process = ::getpid();
}

/// Gives every known worker `set`; false when one is gone (libgomp ends
/// pool threads when a region has fewer threads than the pool): the team is
/// then collected again by the next placement. An id is first checked to
/// be a thread of this process (tgkill with signal 0), so that an id the
/// kernel has handed to another process's thread since is never touched.
bool set_team(const cpu_set_t& set) {
  const pid_t process = ::getpid();
  bool all = true;
  for (pid_t id : team.workers)
    all = ::syscall(SYS_tgkill, process, id, 0) == 0 && ::sched_setaffinity(id, sizeof set, &set) == 0 && all;
  if (!all) team.threads = 0;
  return all;
}

}  // namespace

bool TeamPlacement::places(bool known, std::chrono::steady_clock::duration since_last_use, bool sleep_at_once) {
  return !known || sleep_at_once || since_last_use >= kTeamAwake ||
         since_last_use < std::chrono::steady_clock::duration::zero();
}

size_t TeamPlacement::known_workers() { return team.process == ::getpid() ? team.workers.size() : 0; }

void TeamPlacement::team_used() { team.last_use = std::chrono::steady_clock::now(); }

TeamPlacement::TeamPlacement(int threads) noexcept {
  if (threads < 2 || user_places_threads()) return;
  // A team of another size is collected again: libgomp ends the pool
  // threads a smaller region does not use and starts new ones for a larger.
  if (team.threads != threads) team.threads = 0;
  // The time first: runs back to back make no system call.
  if (!places(team.threads != 0, std::chrono::steady_clock::now() - team.last_use, workers_sleep_at_once())) return;
  try {
    cpu_set_t others;
    if (!split_mask(::sched_getcpu(), threads, mask_, others)) return;
    const bool known = team.threads != 0 && team.process == ::getpid();  // a fork's child has none of them
    if (known && set_team(others)) {
      kept_off_ = true;
      return;
    }
    // Not collected yet, or a worker was gone: the workers of the region
    // restrict themselves and the scope's end gives them back.
    kept_off_ = true;
    collect_team(threads, others);
  } catch (...) {
    // No memory for the ids: the workers go where the scheduler puts them.
    team.threads = 0;
  }
}

TeamPlacement::~TeamPlacement() {
  if (kept_off_) set_team(mask_);
}

std::thread TeamPlacement::start_helper(std::function<void()> work) {
  // The creator restricts the new thread (which moves it at once even while
  // it is queued behind the creator; a thread restricting itself would
  // first have to run). The helper waits for that before its work, so that
  // it cannot have exited when pthread_setaffinity_np reads its id; it only
  // spins if it runs before the creator gets there, i.e. on another CPU.
  auto restricted = std::make_shared<std::atomic<bool>>(false);
  std::thread t([restricted, work = std::move(work)]() {
    while (!restricted->load(std::memory_order_acquire)) ::sched_yield();
    work();
  });
  cpu_set_t all, others;
  if (!user_places_threads() && split_mask(::sched_getcpu(), 2, all, others))
    ::pthread_setaffinity_np(t.native_handle(), sizeof others, &others);
  restricted->store(true, std::memory_order_release);
  return t;
}

}  // namespace gec::runtime
