// The threads that run a multi-stream plan (schedule/execution_plan.h):
// min(streams, threads) workers (the caller's thread is worker 0), and the
// events between them. Waiting spins for a short, bounded time (600 pauses,
// roughly 1-30 us by CPU), then
// blocks on a condition variable, so a waiting worker never holds a core for
// long; a run ends with every worker idle (blocked) until the next.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gec::runtime {

/// Events of one plan. A run is one generation: record(e) marks event e done
/// for it; wait(e) returns once it is (true), or once the run is aborted
/// (false). Safe to use from every worker at once.
class EventSet {
 public:
  explicit EventSet(int32_t events);
  /// Starts a new generation; every event counts as not recorded. Call only
  /// while no worker is inside wait() or record().
  void begin_run();
  void record(int32_t e);
  bool wait(int32_t e);
  /// Makes every wait() of this run return false (a step failed).
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

 private:
  void wake_sleepers();
  std::unique_ptr<std::atomic<uint64_t>[]> done_;
  int32_t count_;
  uint64_t generation_ = 0;
  std::atomic<bool> aborted_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
};

/// `count` workers running `body(worker)` once per run(): worker 0 on the
/// calling thread, the others on threads of their own kept between runs.
class StreamWorkers {
 public:
  StreamWorkers(int count, std::function<void(int)> body);
  ~StreamWorkers();
  StreamWorkers(const StreamWorkers&) = delete;
  StreamWorkers& operator=(const StreamWorkers&) = delete;
  int count() const { return count_; }
  /// Runs every worker's body once and returns when all have finished;
  /// rethrows the exception of the lowest-numbered worker that threw.
  void run();

 private:
  void loop(int worker);
  int count_;
  std::function<void(int)> body_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  std::atomic<uint64_t> started_{0};  // generation handed to the workers
  std::atomic<int> running_{0};       // workers of this generation not yet done
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
};

}  // namespace gec::runtime
