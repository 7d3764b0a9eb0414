// Which steps of a multi-stream execution plan are ordered. A stream runs its
// steps one after another in plan order; a step that waits for an event
// starts after the step recording it has finished. Step i happens before step
// j when a chain of stream order and events leads from i to j; otherwise the
// two may run at the same time in some run. Built into the runtime library:
// the .gom loader checks the event structure and verifies the memory plan in
// this order (memory/verify.cc), the planner plans in it (memory/planner.cc).
//
// Method: vector clocks (C. Fidge, "Timestamps in message-passing systems
// that preserve the partial ordering", 1988; F. Mattern, "Virtual time and
// global states of distributed systems", 1989): per step, the highest
// position on every stream known to have finished before it starts. Exact for
// this structure because a stream's order is total.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/execution_plan.h"

namespace gec::schedule {

class Concurrency {
 public:
  /// Checks the structure of `s` and computes the order. Requires: streams in
  /// [1, kMaxStreams], every step's stream in range, events in [0, steps],
  /// each event recorded by exactly one step, each wait naming an event
  /// recorded by an earlier step (so no run can deadlock: the earliest
  /// waiting step always waits for a step that can run), no event waited for
  /// twice by one step. Throws gec::Error(kCorruptFile) saying which step
  /// breaks which rule.
  explicit Concurrency(const GraphSchedule& s);

  /// One stream: the plan order is the run order.
  bool sequential() const { return streams_ == 1; }
  int32_t streams() const { return streams_; }
  int64_t steps() const { return static_cast<int64_t>(stream_.size()); }
  int32_t stream_of(int64_t step) const { return stream_[static_cast<size_t>(step)]; }

  /// True when step i finishes before step j starts in every run (i != j;
  /// false when j comes before i in plan order).
  bool happens_before(int64_t i, int64_t j) const;
  /// The last step, in plan order, that is not ordered after step u (that may
  /// still run while u runs or before it); u itself when every later step
  /// waits for u. Bytes u uses are free for reuse only after this step.
  int64_t last_unordered(int64_t u) const;

 private:
  int32_t clock(int64_t step, int32_t stream) const {
    return clock_[static_cast<size_t>(step) * static_cast<size_t>(streams_) + static_cast<size_t>(stream)];
  }

  int32_t streams_ = 1;
  std::vector<int32_t> stream_, seq_;            // per step: its stream, its index on that stream
  std::vector<int32_t> clock_;                   // steps x streams: highest seq finished before (or = the step)
  std::vector<std::vector<int64_t>> by_stream_;  // per stream, the positions of its steps
};

}  // namespace gec::schedule
