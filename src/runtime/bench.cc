// Benchmark and profile loops (gec/bench.h): shared by `gec bench`, `gec
// profile` and the Python package.
#include "gec/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "gec/threading.h"

namespace gec {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// The number on the "NAME:" line of /proc/self/status (Linux proc(5)),
/// e.g. "VmHWM:   19780 kB" or "Threads:  3"; 0 if unknown.
long long status_field(const char* name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(name);
  while (std::getline(f, line))
    if (line.compare(0, n, name) == 0) return std::max(0LL, std::atoll(line.c_str() + n));
  return 0;
}

/// A "NAME:   N kB" line of /proc/self/status in bytes; 0 if unknown.
int64_t status_kb_bytes(const char* name) { return static_cast<int64_t>(status_field(name)) * 1024; }

/// Peak resident set of this process's address space in bytes: VmHWM of
/// /proc/self/status (Linux proc(5)). getrusage's ru_maxrss is no substitute:
/// Linux carries it across execve, so a process started by a large parent
/// (a Python benchmark script, a serving framework) reported the parent's
/// resident set. getrusage is the fallback where /proc is not mounted.
int64_t peak_rss_bytes() {
  if (const int64_t hwm = status_kb_bytes("VmHWM:")) return hwm;  // "VmHWM:   19780 kB"
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

/// Threads this process has now (/proc/self/status "Threads:"); 0 if unknown.
int os_threads() { return static_cast<int>(status_field("Threads:")); }

// Nearest-rank percentile of `v` (sorted here), p in [0, 1].
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t idx = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[idx];
}
}  // namespace

std::vector<Tensor> generate_inputs(const Session& s, const std::map<std::string, Shape>& shapes) {
  for (const auto& [name, shape] : shapes) {
    bool found = false;
    for (const auto& io : s.inputs()) found = found || io.name == name;
    if (!found) {
      std::string names;
      for (const auto& io : s.inputs()) names += (names.empty() ? "" : ", ") + io.name;
      fail(ErrorCode::kInvalidArgument, "shape given for '" + name + "', which is not an input (inputs: " + names + ")");
    }
  }
  std::vector<Tensor> r;
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uf(0.f, 1.f);
  for (const auto& io : s.inputs()) {
    if (io.kind != ValueKind::kTensor)
      fail(ErrorCode::kInvalidArgument,
           "cannot generate input '" + io.str() + "': inputs are generated for tensor inputs only (give the inputs)");
    Shape shape;
    auto given = shapes.find(io.name);
    if (given != shapes.end()) {
      shape = given->second;
      bool fits = !io.has_shape || shape.size() == io.dims.size();
      for (size_t d = 0; fits && io.has_shape && d < shape.size(); ++d)
        fits = shape[d] >= 0 && (io.dims[d] < 0 || io.dims[d] == shape[d]);
      for (int64_t d : shape) fits = fits && d >= 0;
      if (!fits)
        fail(ErrorCode::kInvalidArgument, "shape " + shape_str(shape) + " given for input '" + io.name +
                                              "' does not fit its type " + io.str());
    } else {
      for (int64_t d : io.dims) shape.push_back(d < 0 ? 1 : d);
    }
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d > 0 && n > (int64_t{1} << 31) / d)
        fail(ErrorCode::kInvalidArgument, "input '" + io.name + "' of shape " + shape_str(shape) +
                                              " would have more than 2^31 elements");
      n *= d;
    }
    Tensor t(io.dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (io.dtype) {
        case DType::kFloat32: t.as<float>()[i] = uf(rng); break;
        case DType::kFloat64: t.as<double>()[i] = uf(rng); break;
        case DType::kInt64: t.as<int64_t>()[i] = static_cast<int64_t>(rng() % 10); break;
        case DType::kInt32: t.as<int32_t>()[i] = static_cast<int32_t>(rng() % 10); break;
        case DType::kBool: case DType::kUInt8: t.as<uint8_t>()[i] = static_cast<uint8_t>(i % 2); break;
        default: break;  // zero-filled
      }
    }
    r.push_back(std::move(t));
  }
  return r;
}

namespace {
// Runs on while the session's step thread tuning measures (its runs try
// steps on other thread counts): at most kMaxTuningRuns. Returns the runs.
int warm_past_tuning(Session& s, const std::vector<TensorView>& inputs) {
  constexpr int kMaxTuningRuns = 40;
  int n = 0;
  while (n < kMaxTuningRuns && s.tuning_step_threads()) {
    s.run(inputs);
    ++n;
  }
  return n;
}
}  // namespace

int64_t resident_set_bytes() { return status_kb_bytes("VmRSS:"); }

BenchResult bench(Session& s, const std::vector<TensorView>& inputs, const BenchOptions& opts) {
  if (opts.iterations < 1)
    fail(ErrorCode::kInvalidArgument, "bench: iterations must be at least 1, got " + std::to_string(opts.iterations));
  if (opts.warmup < 0)
    fail(ErrorCode::kInvalidArgument, "bench: warmup must be at least 0, got " + std::to_string(opts.warmup));
  if (opts.concurrency < 1 || opts.concurrency > 1024)
    fail(ErrorCode::kInvalidArgument, "bench: concurrency must be 1..1024, got " + std::to_string(opts.concurrency));
  if (!(opts.duration_s >= 0 && opts.duration_s <= 86400))
    fail(ErrorCode::kInvalidArgument, "bench: duration must be 0..86400 seconds, got " + std::to_string(opts.duration_s));
  if (!(opts.interval_ms >= 0 && opts.interval_ms <= 60000))
    fail(ErrorCode::kInvalidArgument, "bench: interval must be 0..60000 ms, got " + std::to_string(opts.interval_ms));
  BenchResult r;
  auto t0 = Clock::now();
  s.run(inputs);
  r.first_run_ms = ms_since(t0);
  for (int i = 0; i < opts.warmup; ++i) s.run(inputs);
  r.tuning_runs = warm_past_tuning(s, inputs);
  const int k = opts.concurrency;
  // Each of the k request loops does `iterations` timed runs (and, under
  // duration_s, goes on until the time has passed).
  const int max_runs = std::max(opts.iterations, kMaxBenchRuns / k);
  std::vector<std::vector<double>> lat(static_cast<size_t>(k));
  std::vector<std::vector<int>> used_by(static_cast<size_t>(k));
  const double duration_ms = opts.duration_s * 1000.0;
  auto loop = [&](int t, Clock::time_point start) {
    std::vector<double>& ms = lat[static_cast<size_t>(t)];
    ms.reserve(static_cast<size_t>(opts.iterations));
    for (int i = 0; i < max_runs && (i < opts.iterations || ms_since(start) < duration_ms); ++i) {
      if (opts.interval_ms > 0)
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(opts.interval_ms));
      const auto ti = Clock::now();
      s.run(inputs);
      ms.push_back(ms_since(ti));
      used_by[static_cast<size_t>(t)].push_back(s.last_run_threads());
    }
  };
  const auto start = Clock::now();
  if (k == 1) {
    loop(0, start);
  } else {
    // Warm every context first (its kernels are made at its first run), and
    // on while one still tunes its step threads.
    std::exception_ptr failure;
    std::mutex failure_mu;
    std::atomic<int> tuning_runs{0};
    std::vector<std::thread> warm;
    for (int t = 0; t < k; ++t)
      warm.emplace_back([&] {
        try {
          s.run(inputs);
          tuning_runs += warm_past_tuning(s, inputs);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mu);
          if (!failure) failure = std::current_exception();
        }
      });
    for (auto& th : warm) th.join();
    if (failure) std::rethrow_exception(failure);
    r.tuning_runs += tuning_runs.load();
    std::vector<std::thread> threads;
    const auto timed = Clock::now();
    for (int t = 0; t < k; ++t)
      threads.emplace_back([&, t] {
        try {
          loop(t, timed);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mu);
          if (!failure) failure = std::current_exception();
        }
      });
    for (auto& th : threads) th.join();
    if (failure) std::rethrow_exception(failure);
    r.timed_s = ms_since(timed) / 1000.0;
  }
  if (k == 1) r.timed_s = ms_since(start) / 1000.0;
  std::vector<int> used;
  for (int t = 0; t < k; ++t) {
    r.run_ms.insert(r.run_ms.end(), lat[static_cast<size_t>(t)].begin(), lat[static_cast<size_t>(t)].end());
    used.insert(used.end(), used_by[static_cast<size_t>(t)].begin(), used_by[static_cast<size_t>(t)].end());
  }
  r.concurrency = k;
  r.interval_ms = opts.interval_ms;
  r.median_ms = percentile(r.run_ms, 0.5);
  r.p90_ms = percentile(r.run_ms, 0.9);
  r.p99_ms = percentile(r.run_ms, 0.99);
  r.min_ms = *std::min_element(r.run_ms.begin(), r.run_ms.end());
  r.max_ms = *std::max_element(r.run_ms.begin(), r.run_ms.end());
  r.peak_rss_bytes = peak_rss_bytes();
  r.threads = s.num_threads();
  r.streams = s.streams();
  r.os_threads = os_threads();
  r.min_run_threads = *std::min_element(used.begin(), used.end());
  r.max_run_threads = *std::max_element(used.begin(), used.end());
  r.openmp_wait_policy = openmp_wait_policy();
  r.warmup = opts.warmup;
  r.iterations = static_cast<int>(r.run_ms.size());
  // One request at a time: runs/s from the median latency; several in
  // flight: the runs completed per second of wall clock.
  if (r.concurrency == 1) r.runs_per_s = r.median_ms > 0 ? 1000.0 / r.median_ms : 0;
  else r.runs_per_s = r.timed_s > 0 ? static_cast<double>(r.run_ms.size()) / r.timed_s : 0;
  r.throughput_per_s = r.runs_per_s;
  int64_t lead = -1;
  for (const TensorView& v : inputs) {
    if (v.shape.empty()) continue;
    if (lead == -1) lead = v.shape[0];
    else if (lead != v.shape[0]) lead = -2;
  }
  r.batch = lead > 0 ? lead : 1;
  r.samples_per_s = r.runs_per_s * static_cast<double>(r.batch);
  const Session::PackedWeightCounts pw = s.packed_weights();
  r.weights_stored = pw.stored;
  r.weights_adopted = pw.adopted;
  r.weights_packed = pw.packed;
  return r;
}

std::string BenchResult::json() const {
  nlohmann::json j = {{"median_ms", median_ms},
                      {"p90_ms", p90_ms},
                      {"p99_ms", p99_ms},
                      {"min_ms", min_ms},
                      {"max_ms", max_ms},
                      {"load_ms", load_ms},
                      {"first_run_ms", first_run_ms},
                      {"peak_rss_bytes", peak_rss_bytes},
                      {"rss_before_load_bytes", rss_before_load_bytes},
                      {"weights_stored", weights_stored},
                      {"weights_adopted", weights_adopted},
                      {"weights_packed", weights_packed},
                      {"threads", threads},
                      {"min_run_threads", min_run_threads},
                      {"max_run_threads", max_run_threads},
                      {"os_threads", os_threads},
                      {"streams", streams},
                      {"openmp_wait_policy", openmp_wait_policy},
                      {"warmup", warmup},
                      {"tuning_runs", tuning_runs},
                      {"timed_s", timed_s},
                      {"concurrency", concurrency},
                      {"interval_ms", interval_ms},
                      {"iterations", iterations},
                      {"throughput_per_s", throughput_per_s},
                      {"runs_per_s", runs_per_s},
                      {"batch", batch},
                      {"samples_per_s", samples_per_s}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ProfileResult profile(Session& s, const std::vector<TensorView>& inputs, const ProfileOptions& opts) {
  if (!s.profiling())
    fail(ErrorCode::kInvalidArgument,
         "profile: the session was not loaded with profiling on (SessionOptions::profile)");
  if (opts.iterations < 1)
    fail(ErrorCode::kInvalidArgument, "profile: iterations must be at least 1, got " + std::to_string(opts.iterations));
  if (opts.warmup < 0)
    fail(ErrorCode::kInvalidArgument, "profile: warmup must be at least 0, got " + std::to_string(opts.warmup));
  // Warm-up: primitive creation and first touches are not per-run cost
  // (warmup 0 profiles them: the first run's own table).
  for (int i = 0; i < opts.warmup; ++i) s.run(inputs);
  const int tuning_runs = opts.warmup > 0 ? warm_past_tuning(s, inputs) : 0;
  s.reset_profile();
  for (int i = 0; i < opts.iterations; ++i) s.run(inputs);
  ProfileResult r;
  r.iterations = opts.iterations;
  r.warmup = opts.warmup;
  r.tuning_runs = tuning_runs;
  r.threads = s.num_threads();
  const double n = opts.iterations;
  double sum = 0;
  for (NodeProfile& p : s.profile()) {
    if (p.inside.empty()) sum += p.total_ms;  // a body's time is inside its holder's
    ProfiledNode pn;
    pn.mean_ms = p.total_ms / n;
    pn.median_ms = percentile(p.call_ms, 0.5);
    pn.p90_ms = percentile(p.call_ms, 0.9);
    pn.flops = node_flops(p.op_type, p.input_shapes, p.output_shapes);
    pn.gflop_per_s = pn.flops > 0 && pn.median_ms > 0 ? pn.flops / (pn.median_ms * 1e6) : 0;
    pn.node = std::move(p);
    r.nodes.push_back(std::move(pn));
  }
  r.total_ms = sum / n;
  std::map<std::string, ProfiledOpType> by_op;
  for (ProfiledNode& pn : r.nodes) {
    pn.share = sum > 0 ? pn.node.total_ms / sum : 0;
    if (!pn.node.inside.empty()) continue;  // op types sum the main graph, as the total
    ProfiledOpType& o = by_op[pn.node.op_type];
    o.op_type = pn.node.op_type;
    o.nodes += 1;
    o.mean_ms += pn.mean_ms;
    o.share += pn.share;
  }
  for (auto& [name, o] : by_op) r.op_types.push_back(o);
  std::stable_sort(r.op_types.begin(), r.op_types.end(),
                   [](const ProfiledOpType& x, const ProfiledOpType& y) { return x.mean_ms > y.mean_ms; });
  return r;
}

double node_flops(const std::string& op, const std::vector<Shape>& in, const std::vector<Shape>& out) {
  if (in.size() < 2 || out.empty()) return 0;
  const double y = static_cast<double>(shape_numel(out[0]));
  const Shape& x = in[0];
  const Shape& w = in[1];
  if ((op == "Conv" || op == "FusedConv") && w.size() >= 3) {
    double per = 1;
    for (size_t d = 1; d < w.size(); ++d) per *= static_cast<double>(w[d]);  // Cin/group x kernel
    return 2 * y * per;
  }
  if (op == "ConvTranspose" && w.size() >= 3 && w[0] > 0)
    return 2 * static_cast<double>(shape_numel(x)) * static_cast<double>(shape_numel(w)) / static_cast<double>(w[0]);
  if ((op == "MatMul" || op == "FusedMatMul") && !x.empty()) return 2 * y * static_cast<double>(x.back());
  // Q K^T, then P V: 2 * S * T * (D + Dv) per batch entry.
  if (op == "ScaledDotProductAttention" && in.size() >= 3 && x.size() >= 2 && w.size() == x.size() && !out[0].empty())
    return 2 * static_cast<double>(shape_numel(x)) / static_cast<double>(x.back() ? x.back() : 1) *
           static_cast<double>(w.back()) * static_cast<double>(x.back() + out[0].back());
  if (op == "Gemm" && x.size() == 2 && !out[0].empty() && out[0][0] > 0)
    return 2 * y * static_cast<double>(shape_numel(x)) / static_cast<double>(out[0][0]);
  return 0;
}

std::string ProfileResult::json() const {
  nlohmann::json ns = nlohmann::json::array();
  for (const ProfiledNode& pn : nodes) {
    const NodeProfile& p = pn.node;
    ns.push_back({{"name", p.name},
                  {"inside", p.inside},
                  {"op_type", p.op_type},
                  {"kernel", p.kernel},
                  {"fused_from", p.fused_from},
                  {"input_shapes", p.input_shapes},
                  {"mean_ms", pn.mean_ms},
                  {"median_ms", pn.median_ms},
                  {"p90_ms", pn.p90_ms},
                  {"share", pn.share},
                  {"output_shapes", p.output_shapes},
                  {"flops", pn.flops},
                  {"gflop_per_s", pn.gflop_per_s},
                  {"bytes_accessed", p.bytes_accessed},
                  {"calls", p.calls},
                  {"threads", p.threads}});
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const ProfiledOpType& o : op_types)
    ops.push_back({{"op_type", o.op_type}, {"nodes", o.nodes}, {"mean_ms", o.mean_ms}, {"share", o.share}});
  return nlohmann::json{{"iterations", iterations}, {"warmup", warmup},     {"tuning_runs", tuning_runs},
                        {"threads", threads},       {"total_ms", total_ms},
                        {"nodes", ns},            {"op_types", ops}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ProfileResult::trace_json() const {
  // One complete ("X") event per node call, at its real start, on the row of
  // the stream that ran it (Chrome trace-event format, microseconds); the
  // OS thread is in its args. A call that waited for another stream's event
  // has a "wait" slice just before it.
  nlohmann::json events = nlohmann::json::array();
  double t0 = -1;
  int streams = 1;
  for (const ProfiledNode& pn : nodes) {
    for (double st : pn.node.call_start_ms) t0 = t0 < 0 ? st : std::min(t0, st);
    streams = std::max(streams, pn.node.stream + 1);
  }
  for (const ProfiledNode& pn : nodes) {
    const NodeProfile& p = pn.node;
    for (size_t k = 0; k < p.call_ms.size(); ++k) {
      nlohmann::json args = {{"kernel", p.kernel}, {"os_thread", k < p.call_tid.size() ? p.call_tid[k] : 0}};
      if (!p.fused_from.empty()) args["fused_from"] = p.fused_from;
      const double ts = (p.call_start_ms[k] - t0) * 1000.0;
      const double wait = k < p.call_wait_ms.size() ? p.call_wait_ms[k] * 1000.0 : 0.0;
      if (wait > 0)
        events.push_back({{"name", "wait"}, {"cat", "event"}, {"ph", "X"}, {"ts", ts - wait}, {"dur", wait},
                          {"pid", 1}, {"tid", p.stream}, {"args", {{"before", p.name}}}});
      events.push_back({{"name", p.name}, {"cat", p.op_type}, {"ph", "X"}, {"ts", ts},
                        {"dur", p.call_ms[k] * 1000.0}, {"pid", 1}, {"tid", p.stream}, {"args", args}});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["ts"].get<double>() < b["ts"].get<double>();
  });
  // Rows named after their streams, after the calls (metadata events).
  for (int sidx = 0; streams > 1 && sidx < streams; ++sidx)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", sidx},
                      {"args", {{"name", "stream " + std::to_string(sidx)}}}});
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gec
