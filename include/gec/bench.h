// Benchmarking and profiling a loaded model: what `gec bench` and `gec
// profile` measure, as a library call (the CLI and the Python package both
// use it). Part of gec_runtime.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gec/runtime.h"
#include "gec/tensor.h"

namespace gec {

/// Deterministic inputs from the declared input types, for timing a model
/// without real data: float inputs uniform in [0, 1) (fixed seed), integers
/// 0..9, bool and uint8 alternate 0/1, other dtypes zero. An input named in
/// `shapes` gets that shape (trtexec's --shapes), which must have the
/// declared rank and agree with every static dim; other dynamic dims become
/// 1. Throws gec::Error(kInvalidArgument) naming the input when one is a
/// sequence or optional (only tensors are generated), when a `shapes` entry
/// names no input (the message lists them) or does not fit its input, or
/// when a generated input would exceed 2^31 elements.
std::vector<Tensor> generate_inputs(const Session& s, const std::map<std::string, Shape>& shapes = {});

struct BenchOptions {
  /// Untimed runs after the first run (which is timed on its own).
  int warmup = 10;
  /// Timed runs; at least 1. With duration_s, the least number of them.
  int iterations = 50;
  /// When > 0, go on with timed runs until at least this many seconds of
  /// them have passed (trtexec's --duration) as well as `iterations` runs,
  /// up to kMaxBenchRuns runs. At most 86400 (a day).
  double duration_s = 0;
  /// Requests in flight at once (1..1024): that many threads each run the
  /// warm-up-free timed loop above on `s` at the same time. The Session must
  /// allow them (SessionOptions::max_concurrent_requests, wait_when_busy).
  int concurrency = 1;
  /// Milliseconds to wait before each timed run (0..60000), outside its
  /// time: requests that arrive apart, as a service's do, find
  /// idle threads asleep (libgomp's spin lasts milliseconds), which runs back
  /// to back never show.
  double interval_ms = 0;
};

/// The most timed runs one bench() keeps (8 MB of run times).
inline constexpr int kMaxBenchRuns = 1000000;

/// What `gec bench --json` prints. Times in milliseconds (steady clock,
/// around each Session::run call).
struct BenchResult {
  double min_ms = 0, median_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  /// The first run: first writes to the scratch and output memory, and the
  /// kernel primitives the load could not make (shapes known only at run,
  /// another thread count).
  double first_run_ms = 0;
  /// Warm-up runs made after `warmup` while the step thread tuning
  /// measured (Session::tuning_step_threads), before the timed runs.
  int tuning_runs = 0;
  /// Model load (and in-memory compile) time, including the arena's pages
  /// (made present at load: support/page_block.h) and the kernels'
  /// primitives and packed weights made at load; bench() does not
  /// measure it: the caller that loaded the Session sets it (0 when
  /// unknown).
  double load_ms = 0;
  /// Session::packed_weights() after the runs: weight copies stored packed
  /// in the .gom, adopted from it, and packed in memory instead.
  int64_t weights_stored = 0, weights_adopted = 0, weights_packed = 0;
  /// Peak resident set of the whole process so far, bytes (VmHWM of
  /// /proc/self/status: this address space only, not a parent's before exec).
  int64_t peak_rss_bytes = 0;
  /// Resident set of the process just before the model was loaded (or
  /// compiled), bytes: the program and its libraries (resident_set_bytes);
  /// the caller that loaded the Session sets it, as load_ms (0 when
  /// unknown). peak_rss_bytes less it is what the model added, the measure
  /// comparable with another runtime's peak less its resident set before
  /// its session.
  int64_t rss_before_load_bytes = 0;
  /// Intra-op threads the Session runs with (Session::num_threads()).
  int threads = 0;
  /// Fewest and most threads a timed run used (Session::last_run_threads:
  /// fewer than `threads` while other processes kept the CPUs busy).
  int min_run_threads = 0, max_run_threads = 0;
  /// Threads the whole process has after the runs (/proc/self/status): the
  /// caller's, plus the OpenMP workers the runs started (threads - 1 of
  /// them; none at threads = 1).
  int os_threads = 0;
  /// How idle OpenMP threads wait (gec::openmp_wait_policy()).
  std::string openmp_wait_policy;
  /// Untimed and timed runs done (iterations is the count of run_ms, which
  /// can exceed BenchOptions::iterations under duration_s).
  int warmup = 0, iterations = 0;
  /// Seconds the timed runs took together (wall clock, steady; the waits of
  /// BenchOptions::interval_ms included).
  double timed_s = 0;
  /// BenchOptions::interval_ms.
  double interval_ms = 0;
  /// Requests in flight (BenchOptions::concurrency); run_ms and the
  /// percentiles are per request over all of them.
  int concurrency = 1;
  /// Streams of the model's plan (Session::streams).
  int streams = 1;
  /// Runs per second: 1000 / median_ms at concurrency 1, else the runs
  /// completed per second of wall clock (throughput_per_s is the same figure,
  /// under its older name).
  double runs_per_s = 0, throughput_per_s = 0;
  /// The batch: the leading dim of the inputs when every tensor input of
  /// rank >= 1 has the same one, else 1.
  int64_t batch = 1;
  /// runs_per_s x batch.
  double samples_per_s = 0;
  /// Every timed run, in order.
  std::vector<double> run_ms;
  /// One JSON object with the fields above except run_ms (the keys are the
  /// field names).
  std::string json() const;
};

/// Runs `s` on `inputs` (Session::run order and rules) once, then
/// opts.warmup times untimed, then on untimed while its step thread tuning
/// measures (Session::tuning_step_threads; at most 40 runs per request
/// loop, summed in BenchResult::tuning_runs; with concurrency, each loop
/// warms its own context and stops when no idle context tunes), then opts.iterations times timed (or longer,
/// under opts.duration_s). Throws gec::Error(kInvalidArgument) for
/// iterations < 1, warmup < 0 or duration_s outside 0..86400, and whatever
/// Session::run throws.
BenchResult bench(Session& s, const std::vector<TensorView>& inputs, const BenchOptions& opts = {});

/// This process's resident set now, bytes (VmRSS of /proc/self/status,
/// Linux proc(5)); 0 where that cannot be read.
int64_t resident_set_bytes();

struct ProfileOptions {
  /// Untimed runs first (kernel set-up, caches); at least 0. With 0 and
  /// iterations 1 the profile is the first run's: each node's time
  /// includes what its step does only once (primitive creation, packing
  /// weights the .gom does not store, growing the scratch buffer).
  int warmup = 1;
  /// Profiled runs; at least 1.
  int iterations = 20;
};

/// One node of a profile, in main-graph order.
struct ProfiledNode {
  NodeProfile node;
  /// total_ms / iterations (per run: a node in a loop body counts every call).
  double mean_ms = 0;
  /// Median and 90th percentile over the node's calls (ms).
  double median_ms = 0, p90_ms = 0;
  /// Fraction (0..1) of the summed node time.
  double share = 0;
  /// Floating-point operations of one call (a multiply-add counts 2), for
  /// the dense ops whose count follows from their shapes: Conv / FusedConv
  /// (2 x |Y| x Cin/group x kh x kw), ConvTranspose (2 x |X| x |W| / Cin),
  /// MatMul and Gemm (2 x |Y| x K); 0 for other ops.
  double flops = 0;
  /// flops / median call time, in GFLOP/s (0 when flops is).
  double gflop_per_s = 0;
};

/// The floating-point operations of one call of a node of `op_type` with
/// these input and output shapes (ProfiledNode::flops), 0 when not known.
double node_flops(const std::string& op_type, const std::vector<Shape>& inputs, const std::vector<Shape>& outputs);

/// Node times summed per op type.
struct ProfiledOpType {
  std::string op_type;
  int nodes = 0;
  double mean_ms = 0;  // per run, summed over the op's nodes
  double share = 0;    // 0..1
};

/// What `gec profile --json` prints.
struct ProfileResult {
  int iterations = 0;
  /// Untimed runs before the profiled ones (0 on a session that has not
  /// run yet: its first run is among the profiled).
  int warmup = 0;
  /// Untimed runs after `warmup` while the step thread tuning measured.
  int tuning_runs = 0;
  int threads = 0;
  /// Sum of the node means: ms per run spent in kernels.
  double total_ms = 0;
  std::vector<ProfiledNode> nodes;
  /// Sorted by time, largest first.
  std::vector<ProfiledOpType> op_types;
  /// {"iterations", "warmup", "tuning_runs", "threads", "total_ms", "nodes": [{"name", "op_type",
  /// "kernel", "fused_from", "input_shapes", "mean_ms", "median_ms",
  /// "p90_ms", "share", "bytes_accessed", "calls"}], "op_types":
  /// [{"op_type", "nodes", "mean_ms", "share"}]} (docs/reports.md).
  std::string json() const;
  /// Chrome trace-event JSON (Perfetto, chrome://tracing): one complete
  /// event per node call, in start order: "ts" its start and "dur" its
  /// duration in microseconds, "tid" the OS thread that ran it, "args" the
  /// kernel and fused-from names.
  std::string trace_json() const;
};

/// Runs `s` opts.warmup times (and, when that is not 0, on while its step
/// thread tuning measures, as bench()), resets its profile, runs opts.iterations times
/// and collects per-node times. `s` must have been loaded with
/// SessionOptions::profile, else gec::Error(kInvalidArgument); also
/// kInvalidArgument for iterations < 1 or warmup < 0, and whatever
/// Session::run throws.
ProfileResult profile(Session& s, const std::vector<TensorView>& inputs, const ProfileOptions& opts = {});

}  // namespace gec
