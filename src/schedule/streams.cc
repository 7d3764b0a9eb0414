// assign_streams: see schedule.h.
//
// List scheduling (T. L. Adam, K. M. Chandy, J. R. Dickson, "A comparison of
// list schedules for parallel processing systems", CACM 1974): nodes are
// taken in order of their bottom level (the longest cost path from the node
// to the end of the graph, the node included), highest first among the ready
// ones, so the critical path goes first; each goes to the stream where it can
// start earliest, given when each stream is free and when its inputs are
// ready (an input from another stream arrives an event's cost later). The
// order nodes are taken in becomes the plan order, a topological order.
//
// Events: a step waits for a producer on another stream unless the order
// already implies it: the producer precedes an earlier step of the waiting
// stream's past, on its own stream or through events kept before (GE prunes
// events the same way). Kept exactly with vector clocks, as
// schedule/concurrency.h computes them.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <unordered_map>

#include "gec/error.h"
#include "gec/threading.h"
#include "schedule/cost_model.h"
#include "schedule/schedule.h"

namespace gec::schedule {

namespace {

struct Dag {
  std::vector<ir::Node*> nodes;
  std::vector<std::vector<int32_t>> preds, succs;
};

Dag make_dag(const ir::Graph& g) {
  Dag d;
  d.nodes = g.node_list();
  std::unordered_map<const ir::Node*, int32_t> index;
  for (size_t i = 0; i < d.nodes.size(); ++i) index[d.nodes[i]] = static_cast<int32_t>(i);
  d.preds.resize(d.nodes.size());
  d.succs.resize(d.nodes.size());
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    std::vector<const ir::Value*> deps(d.nodes[i]->inputs().begin(), d.nodes[i]->inputs().end());
    for (const ir::Value* v : g.implicit_inputs(*d.nodes[i])) deps.push_back(v);
    for (const ir::Value* v : deps) {
      if (!v || !v->producer() || v->producer()->owner() != &g) continue;
      const int32_t p = index.at(v->producer());
      auto& pr = d.preds[i];
      if (std::find(pr.begin(), pr.end(), p) == pr.end()) {
        pr.push_back(p);
        d.succs[static_cast<size_t>(p)].push_back(static_cast<int32_t>(i));
      }
    }
  }
  return d;
}

struct Simulation {
  std::vector<int32_t> order;   // node indices in plan order
  std::vector<int32_t> stream;  // per node index
  double makespan_us = 0, critical_us = 0;
};

Simulation simulate(const Dag& d, int streams, int threads_per_stream) {
  const size_t n = d.nodes.size();
  Simulation sim;
  std::vector<double> cost(n), bottom(n, 0);
  for (size_t i = 0; i < n; ++i) cost[i] = node_cost_us(*d.nodes[i], threads_per_stream);
  for (size_t k = n; k-- > 0;) {
    double below = 0;
    for (int32_t s : d.succs[k]) below = std::max(below, bottom[static_cast<size_t>(s)]);
    bottom[k] = cost[k] + below;
    sim.critical_us = std::max(sim.critical_us, bottom[k]);
  }
  sim.stream.assign(n, 0);
  if (streams == 1) {
    sim.order.resize(n);
    std::iota(sim.order.begin(), sim.order.end(), 0);
    sim.makespan_us = std::accumulate(cost.begin(), cost.end(), 0.0);
    return sim;
  }
  std::vector<int32_t> waiting(n);
  std::set<std::pair<double, int32_t>> ready;  // (-bottom level, node index)
  for (size_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<int32_t>(d.preds[i].size());
    if (!waiting[i]) ready.insert({-bottom[i], static_cast<int32_t>(i)});
  }
  std::vector<double> free_at(static_cast<size_t>(streams), 0), finish(n, 0);
  while (!ready.empty()) {
    const int32_t i = ready.begin()->second;
    ready.erase(ready.begin());
    // The stream of the input that arrives last is preferred on a tie: no event.
    int32_t best = -1;
    double best_start = 0, latest = -1;
    int32_t home = 0;
    for (int32_t p : d.preds[static_cast<size_t>(i)])
      if (finish[static_cast<size_t>(p)] > latest) {
        latest = finish[static_cast<size_t>(p)];
        home = sim.stream[static_cast<size_t>(p)];
      }
    for (int32_t k = 0; k < streams; ++k) {
      const int32_t s = (home + k) % streams;
      double start = free_at[static_cast<size_t>(s)];
      for (int32_t p : d.preds[static_cast<size_t>(i)])
        start = std::max(start, finish[static_cast<size_t>(p)] + (sim.stream[static_cast<size_t>(p)] != s ? kEventUs : 0));
      if (best < 0 || start < best_start) {
        best = s;
        best_start = start;
      }
    }
    sim.stream[static_cast<size_t>(i)] = best;
    finish[static_cast<size_t>(i)] = best_start + cost[static_cast<size_t>(i)];
    free_at[static_cast<size_t>(best)] = finish[static_cast<size_t>(i)];
    sim.makespan_us = std::max(sim.makespan_us, finish[static_cast<size_t>(i)]);
    sim.order.push_back(i);
    for (int32_t s : d.succs[static_cast<size_t>(i)])
      if (--waiting[static_cast<size_t>(s)] == 0) ready.insert({-bottom[static_cast<size_t>(s)], s});
  }
  GEC_CHECK(sim.order.size() == n, "stream assignment: the graph is not acyclic");
  return sim;
}

}  // namespace

GraphSchedule place_events(const ir::Graph& g, const std::vector<int32_t>& streams, int64_t* before_pruning) {
  const Dag d = make_dag(g);
  const size_t n = d.nodes.size();
  if (streams.size() != n) fail(ErrorCode::kInternal, "place_events: one stream per node expected");
  GraphSchedule gs;
  gs.steps.resize(n);
  // Streams in use, renumbered 0.. in order of first use.
  std::vector<int32_t> renumber, stream_of(n), seq(n), count;
  for (size_t k = 0; k < n; ++k) {
    auto it = std::find(renumber.begin(), renumber.end(), streams[k]);
    if (it == renumber.end()) {
      renumber.push_back(streams[k]);
      count.push_back(0);
      it = renumber.end() - 1;
    }
    const int32_t r = static_cast<int32_t>(it - renumber.begin());
    stream_of[k] = r;
    seq[k] = count[static_cast<size_t>(r)]++;
  }
  gs.streams = std::max<int32_t>(1, static_cast<int32_t>(renumber.size()));
  if (gs.streams > kMaxStreams) fail(ErrorCode::kInternal, "place_events: more than kMaxStreams streams");
  const size_t S = static_cast<size_t>(gs.streams);
  std::vector<int32_t> clock(n * S, -1), last_on(S, -1);
  int64_t edges = 0;
  for (size_t k = 0; k < n; ++k) {
    Step& st = gs.steps[k];
    st.node = static_cast<int32_t>(k);
    st.stream = stream_of[k];
    int32_t* c = &clock[k * S];
    const size_t me = static_cast<size_t>(st.stream);
    if (last_on[me] >= 0) std::copy_n(&clock[static_cast<size_t>(last_on[me]) * S], S, c);
    std::vector<int32_t> producers = d.preds[k];  // latest first: it implies the most
    std::sort(producers.rbegin(), producers.rend());
    for (int32_t p : producers) {
      const size_t ps = static_cast<size_t>(stream_of[static_cast<size_t>(p)]);
      if (ps == me) continue;
      ++edges;
      if (c[ps] >= seq[static_cast<size_t>(p)]) continue;  // implied by the order so far
      Step& rec = gs.steps[static_cast<size_t>(p)];
      if (rec.record_event < 0) rec.record_event = gs.events++;
      st.wait_events.push_back(rec.record_event);
      const int32_t* pc = &clock[static_cast<size_t>(p) * S];
      for (size_t q = 0; q < S; ++q) c[q] = std::max(c[q], pc[q]);
    }
    c[me] = seq[k];
    last_on[me] = static_cast<int32_t>(k);
  }
  if (before_pruning) *before_pruning = edges;
  return gs;
}

StreamAssignment assign_streams(ir::Graph& g, const StreamOptions& o) {
  if (o.streams < 0 || o.streams > kMaxStreams)
    fail(ErrorCode::kInvalidArgument, "streams: " + std::to_string(o.streams) + " (0 = auto, 1 to " +
                                          std::to_string(kMaxStreams) + ")");
  const int threads = o.threads > 0 ? o.threads : available_cores();
  const Dag d = make_dag(g);
  StreamAssignment a;
  const Simulation one = simulate(d, 1, threads);
  a.sequential_estimate_ms = one.makespan_us / 1000;
  Simulation chosen = one;
  if (o.streams > 1) {
    chosen = simulate(d, o.streams, std::max(1, threads / o.streams));
    a.choice = "requested";
  } else if (o.streams == 0) {
    // Auto: the count whose simulated run is shortest, when it really uses
    // several streams and beats one stream with every thread by a margin the
    // estimate can be trusted to; only when shapes are known at compile time
    // (the estimate of a node of unknown shape is a guess).
    size_t unknown = 0;
    for (const ir::Node* n : d.nodes) {
      bool known = true;
      for (const ir::Value* v : n->inputs()) known = known && (!v || !v->type.is_tensor() || v->type.is_static());
      for (const ir::Value* v : n->outputs()) known = known && (!v->type.is_tensor() || v->type.is_static());
      unknown += !known;
    }
    a.choice = "auto: no count estimated 15% faster than one stream on " + std::to_string(threads) + " threads";
    if (unknown * 10 > d.nodes.size())
      a.choice = "auto: " + std::to_string(unknown) + " of " + std::to_string(d.nodes.size()) +
                 " nodes have shapes known only at run time, no estimate to go by (compile with --input-shape)";
    for (int k = 2; unknown * 10 <= d.nodes.size() && k <= std::min(threads, 8); k *= 2) {
      Simulation s = simulate(d, k, std::max(1, threads / k));
      bool several = false;
      for (int32_t st : s.stream) several = several || st != s.stream.front();
      if (several && s.makespan_us < 0.85 * one.makespan_us && s.makespan_us < chosen.makespan_us) {
        chosen = std::move(s);
        char why[160];
        std::snprintf(why, sizeof why, "auto: %d streams of %d thread(s) estimated %.3f ms, one stream %.3f ms", k,
                      std::max(1, threads / k), chosen.makespan_us / 1000, one.makespan_us / 1000);
        a.choice = why;
      }
    }
  } else {
    a.choice = "requested";
  }
  a.estimate_ms = chosen.makespan_us / 1000;
  a.critical_path_ms = chosen.critical_us / 1000;
  std::vector<int32_t> streams(d.nodes.size(), 0);
  bool several = false;
  for (int32_t s : chosen.stream) several = several || s != chosen.stream.front();
  if (several) {
    std::vector<ir::Node*> order;
    for (size_t k = 0; k < chosen.order.size(); ++k) {
      order.push_back(d.nodes[static_cast<size_t>(chosen.order[k])]);
      streams[k] = chosen.stream[static_cast<size_t>(chosen.order[k])];
    }
    g.set_order(order);
  }
  a.schedule = place_events(g, streams, &a.events_before_pruning);
  return a;
}

}  // namespace gec::schedule
