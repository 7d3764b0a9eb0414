// EventSet and StreamWorkers: see stream_workers.h.
#include "runtime/stream_workers.h"

#include <immintrin.h>

namespace gec::runtime {

namespace {
// 600 _mm_pause: roughly 1-30 us on current x86-64 cores (a pause is 5-140 cycles).
constexpr int kSpins = 600;

template <typename Ready>
bool spin_until(Ready ready) {
  for (int i = 0; i < kSpins; ++i) {
    if (ready()) return true;
    _mm_pause();
  }
  return ready();
}
}  // namespace

EventSet::EventSet(int32_t events) : done_(new std::atomic<uint64_t>[static_cast<size_t>(events)]), count_(events) {
  for (int32_t e = 0; e < count_; ++e) done_[static_cast<size_t>(e)].store(0, std::memory_order_relaxed);
}

void EventSet::begin_run() {
  ++generation_;
  aborted_.store(false, std::memory_order_release);
}

void EventSet::wake_sleepers() {
  // A sleeper counts itself before its last check under the mutex: either
  // it sees the new state then, or it is asleep when this notifies.
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  { std::lock_guard<std::mutex> lock(mutex_); }
  cv_.notify_all();
}

void EventSet::record(int32_t e) {
  done_[static_cast<size_t>(e)].store(generation_, std::memory_order_seq_cst);
  wake_sleepers();
}

void EventSet::abort() {
  aborted_.store(true, std::memory_order_seq_cst);
  wake_sleepers();
}

bool EventSet::wait(int32_t e) {
  std::atomic<uint64_t>& d = done_[static_cast<size_t>(e)];
  const uint64_t gen = generation_;
  auto ready = [&] { return d.load(std::memory_order_acquire) >= gen || aborted_.load(std::memory_order_acquire); };
  if (!spin_until(ready)) {
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    cv_.wait(lock, ready);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }
  return !aborted_.load(std::memory_order_acquire) || d.load(std::memory_order_acquire) >= gen;
}

StreamWorkers::StreamWorkers(int count, std::function<void(int)> body)
    : count_(count), body_(std::move(body)), errors_(static_cast<size_t>(count)) {
  for (int w = 1; w < count_; ++w) threads_.emplace_back([this, w] { loop(w); });
}

StreamWorkers::~StreamWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void StreamWorkers::loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] { return started_.load(std::memory_order_acquire) != seen || stop_.load(); };
    if (!spin_until(ready)) {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, ready);
    }
    if (stop_.load()) return;
    seen = started_.load(std::memory_order_acquire);
    try {
      body_(worker);
    } catch (...) {
      errors_[static_cast<size_t>(worker)] = std::current_exception();
    }
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      done_cv_.notify_all();
    }
  }
}

void StreamWorkers::run() {
  for (auto& e : errors_) e = nullptr;
  running_.store(count_ - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    started_.fetch_add(1, std::memory_order_acq_rel);
  }
  start_cv_.notify_all();
  try {
    body_(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  auto done = [&] { return running_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, done);
  }
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace gec::runtime
