// Concurrency: see concurrency.h.
#include "schedule/concurrency.h"

#include <algorithm>
#include <string>

#include "gec/error.h"

namespace gec::schedule {

namespace {
[[noreturn]] void bad(const std::string& why) { fail(ErrorCode::kCorruptFile, "execution plan: " + why); }
}  // namespace

Concurrency::Concurrency(const GraphSchedule& s) : streams_(s.streams) {
  const int64_t n = static_cast<int64_t>(s.steps.size());
  if (s.streams < 1 || s.streams > kMaxStreams)
    bad(std::to_string(s.streams) + " streams (1 to " + std::to_string(kMaxStreams) + ")");
  if (s.events < 0 || s.events > n) bad(std::to_string(s.events) + " events for " + std::to_string(n) + " steps");
  std::vector<int64_t> recorder(static_cast<size_t>(s.events), -1);
  for (int64_t i = 0; i < n; ++i) {
    const Step& st = s.steps[static_cast<size_t>(i)];
    const std::string what = "step " + std::to_string(i);
    if (st.stream < 0 || st.stream >= s.streams)
      bad(what + " runs on stream " + std::to_string(st.stream) + " of " + std::to_string(s.streams));
    if (st.record_event < -1 || st.record_event >= s.events)
      bad(what + " records event " + std::to_string(st.record_event) + " of " + std::to_string(s.events));
    if (st.record_event >= 0) {
      if (recorder[static_cast<size_t>(st.record_event)] >= 0)
        bad("event " + std::to_string(st.record_event) + " is recorded twice");
      recorder[static_cast<size_t>(st.record_event)] = i;
    }
  }
  for (int64_t e = 0; e < s.events; ++e)
    if (recorder[static_cast<size_t>(e)] < 0) bad("event " + std::to_string(e) + " is never recorded");

  const size_t S = static_cast<size_t>(streams_);
  stream_.resize(static_cast<size_t>(n));
  seq_.resize(static_cast<size_t>(n));
  by_stream_.assign(S, {});
  clock_.assign(static_cast<size_t>(n) * S, -1);
  std::vector<int64_t> last_on(S, -1);  // the latest step seen on each stream
  for (int64_t i = 0; i < n; ++i) {
    const Step& st = s.steps[static_cast<size_t>(i)];
    const size_t me = static_cast<size_t>(st.stream);
    int32_t* c = &clock_[static_cast<size_t>(i) * S];
    if (last_on[me] >= 0) std::copy_n(&clock_[static_cast<size_t>(last_on[me]) * S], S, c);
    std::vector<int32_t> seen;
    for (int32_t e : st.wait_events) {
      const std::string what = "step " + std::to_string(i) + " waits for event " + std::to_string(e);
      if (e < 0 || e >= s.events) bad(what + " of " + std::to_string(s.events));
      if (std::find(seen.begin(), seen.end(), e) != seen.end()) bad(what + " twice");
      seen.push_back(e);
      const int64_t r = recorder[static_cast<size_t>(e)];
      if (r >= i) bad(what + ", recorded by step " + std::to_string(r) + ", which does not come before it");
      const int32_t* rc = &clock_[static_cast<size_t>(r) * S];
      for (size_t k = 0; k < S; ++k) c[k] = std::max(c[k], rc[k]);
    }
    stream_[static_cast<size_t>(i)] = st.stream;
    seq_[static_cast<size_t>(i)] = static_cast<int32_t>(by_stream_[me].size());
    c[me] = seq_[static_cast<size_t>(i)];
    by_stream_[me].push_back(i);
    last_on[me] = i;
  }
}

bool Concurrency::happens_before(int64_t i, int64_t j) const {
  if (i >= j) return false;
  if (streams_ == 1) return true;
  return clock(j, stream_of(i)) >= seq_[static_cast<size_t>(i)];
}

int64_t Concurrency::last_unordered(int64_t u) const {
  if (streams_ == 1) return u;
  const int32_t t = stream_of(u), k = seq_[static_cast<size_t>(u)];
  int64_t last = u;
  for (int32_t s = 0; s < streams_; ++s) {
    if (s == t) continue;  // later steps of u's own stream follow it
    const std::vector<int64_t>& pos = by_stream_[static_cast<size_t>(s)];
    // clock(., t) never decreases along a stream: the steps not ordered
    // after u are a prefix of it.
    auto it = std::partition_point(pos.begin(), pos.end(), [&](int64_t w) { return clock(w, t) < k; });
    if (it != pos.begin()) last = std::max(last, *(it - 1));
  }
  return last;
}

}  // namespace gec::schedule
