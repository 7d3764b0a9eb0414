// The GraphEngine runtime: loads an offline model (.gom) and runs it.
//
// This library does no graph work: it memory-maps the file, checks it, creates
// one kernel per node (once), and executes the stored node order over one
// pre-planned arena. It does not link libonnx.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"

namespace gec {

/// A model input or output as the caller sees it. dims[i] == -1 where the
/// size is only known at run time (dim_params[i] then names it, if the model did).
///
/// For a sequence or optional (kind != kTensor), dtype and dims describe its
/// tensor elements.
struct IoInfo {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;
  bool has_shape = true;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
  std::string str() const;  // "input: float32[1,3,224,224]", "xs: seq(float32[?])"
};

struct SessionOptions {
  /// Intra-op threads (OpenMP, oneDNN); 0 = the cores this process may use
  /// (gec::available_cores(): its CPU affinity and cgroup CPU quota). How
  /// idle ones wait is process-wide (gec/threading.h). At most 4 x the
  /// cores the machine has (kMaxThreadsPerCore): more only oversubscribes,
  /// and very large counts make the OpenMP runtime fail to create threads.
  int num_threads = 0;
  /// Refuse a model whose activation arena is larger (bytes), and any value
  /// allocated at run time (dynamic shapes) that would be larger; 0 = this
  /// machine's physical memory.
  int64_t max_arena_bytes = 0;
  /// Refuse a model whose weights are larger (bytes); 0 = no limit (weights
  /// are memory-mapped, not allocated).
  int64_t max_weights_bytes = 0;
  /// Collect per-node timings (gec profile); off costs nothing.
  bool profile = false;
  /// Run on fewer threads while other processes keep this process's CPUs
  /// busy: every 200 ms at most, a run compares the busy time of its CPUs
  /// (/proc/stat, steal time included) with this process's own, and
  /// suggests the CPUs left (rounded, at least 1, at most num_threads);
  /// before the first 200 ms, the time this process's threads waited for a
  /// core (/proc/self/task/*/schedstat) suggests it. A thread that shares
  /// its core with a CPU-bound process can stall every parallel region, or
  /// not (the scheduler may let it preempt the other process), so while
  /// fewer threads are suggested the runs time both counts and keep the
  /// faster (runtime/cpu_monitor.h). And the runs measure which small
  /// steps are faster on one thread than on all (this machine's caches and
  /// the cores' placement decide it) and run those on one: up to 26 runs
  /// after the first with a thread count, and again every 1000 runs and
  /// 30 s or when the runs drift 20% slower than chosen
  /// (runtime/step_threads.h; tuning_step_threads()). Off = always
  /// num_threads, every step on the plan's count.
  bool adapt_threads = true;
  /// Runs that may be in flight on this Session at once (1..1024). Each
  /// takes a run context of its own (an arena and a set of kernels; made on
  /// first need, then kept; the weights are shared); num_threads 0 then
  /// means the available cores divided among them (at least 1 each).
  /// Profiling needs 1.
  int max_concurrent_requests = 1;
  /// When every run context is busy: true = the run waits for one; false =
  /// gec::Error(kInvalidArgument) at once.
  bool wait_when_busy = false;
};

/// Per-node timing collected when SessionOptions::profile is set.
struct NodeProfile {
  std::string name, op_type, kernel;
  /// Where a node of a body lies: "<node>.<attribute>" of the If / Loop /
  /// Scan holding it, joined by "/" when nested ("If_0.then_branch");
  /// empty for a main-graph node. A body's time is inside its holder's.
  std::string inside;
  std::vector<std::string> fused_from;
  std::vector<Shape> input_shapes;
  std::vector<Shape> output_shapes;  // of the last call
  double total_ms = 0;
  int64_t calls = 0;
  int64_t bytes_accessed = 0;  // input + output bytes of the last call
  /// Each call since the last reset (the first kMaxProfiledCalls of them:
  /// total_ms and calls count every call): its start (ms on the steady
  /// clock, from the Session's creation) and duration (ms), and the OS
  /// thread id of the thread that ran it.
  std::vector<double> call_start_ms, call_ms;
  std::vector<int> call_tid;
  /// The stream that ran it (0 on a one-stream plan), and per call the ms it
  /// waited for other streams' events before it started (0 without waits).
  int stream = 0;
  std::vector<double> call_wait_ms;
  /// The intra-op threads of its last call: its worker's, or 1 where the
  /// plan or the step thread tuning (SessionOptions::adapt_threads) put it
  /// on one thread.
  int threads = 0;
};

inline constexpr int kMaxThreadsPerCore = 4;
/// Calls per node whose start and duration a profile keeps (NodeProfile).
inline constexpr size_t kMaxProfiledCalls = 100000;

/// One loaded model. run() may be called from several threads at once up to
/// SessionOptions::max_concurrent_requests (default 1): each run in flight
/// works in a run context of its own (arena, kernels), taken from a pool; a
/// run beyond that waits (wait_when_busy) or throws
/// gec::Error(kInvalidArgument), never computing with another run's
/// buffers. For a fixed thread count, every run computes the same bits,
/// whichever context it gets. Different Sessions are independent. The
/// metadata accessors are safe from any thread; profile() and
/// reset_profile() not during runs.
class Session {
 public:
  /// Memory-maps and validates a .gom file. Throws gec::Error: kIo if the file
  /// cannot be opened, kCorruptFile if it is truncated, fails its checksum or
  /// has a newer format version (the message says which).
  static std::unique_ptr<Session> load(const std::string& path, const SessionOptions& opts = {});
  /// Same, from bytes already in memory (e.g. a model compiled in-process).
  static std::unique_ptr<Session> load_from_bytes(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                                  const SessionOptions& opts = {});
  virtual ~Session();

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;

  /// Runs the model. `inputs` follow inputs() order and are read in place
  /// (zero copy); each must match the declared dtype and static dims, else
  /// gec::Error(kInvalidArgument) naming the input and the expected type.
  /// Returns one tensor per output, in storage the Session recycles (per
  /// run context and output, two blocks lent in turn; 64-byte aligned, from
  /// 1 MiB on 2 MiB-rounded blocks advised for huge pages): a later run
  /// reuses a block only once every Tensor sharing it is gone, so a tensor
  /// the caller holds keeps its values, but a raw pointer or TensorView
  /// kept past its last Tensor may see a later run's values. The Session
  /// keeps up to two such blocks per output (each at most twice its last
  /// use) until it is destroyed. Outputs the plan lets be redirected (a
  /// static shape, in the arena, no later value sharing its bytes) are
  /// written there by their kernel; the others are copied. Kernels raise
  /// kInvalidArgument for bad input values (e.g. a Gather index out of
  /// range, integer division by zero), naming the node.
  std::vector<Tensor> run(const std::vector<TensorView>& inputs);
  /// Runs a model whose inputs or outputs may be sequences or optionals
  /// (ONNX IR non-tensor types); works for tensor-only models too. inputs[i]
  /// must have inputs()[i].kind; tensors (and sequence elements) must match
  /// the declared element dtype and, for tensors, the static dims, else
  /// gec::Error(kInvalidArgument). Returns one value per output. The two
  /// run() overloads above refuse models with non-tensor inputs or outputs
  /// (kInvalidArgument, pointing here). Output sequences and optionals may
  /// share element storage with input ones (e.g. through Identity); none
  /// of them is ever written after it is made.
  std::vector<AnyValue> run_values(const std::vector<AnyValue>& inputs);

  /// Runs with caller-owned output buffers: outputs[i].data must hold
  /// outputs[i].shape elements, and that shape must be the one the model
  /// produces (known up front for static models), else kInvalidArgument.
  /// Static-shape outputs are computed directly in these buffers (zero
  /// copy), so they must not overlap each other or any input buffer.
  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs);

  /// Arena bytes planned at compile time (activations of static shape).
  int64_t arena_bytes() const;
  /// Bytes of the model's constants (memory-mapped, not copied); the packed
  /// copies the .gom may also hold are not counted (packed_weights()), nor
  /// by SessionOptions::max_weights_bytes.
  int64_t weights_bytes() const;
  /// Weights in the layouts the kernels' primitives read: `stored`, copies
  /// the .gom holds (packed at compile time, -O2 and up); `adopted`, those
  /// the kernels read in place (the same CPU kind, oneDNN build and
  /// per-step thread count as the compiler's default session); `packed`,
  /// weights the kernels packed themselves (in memory, once per model)
  /// because no stored copy fit. Counts so far: a session's kernels adopt or
  /// pack when it loads (those whose shapes are known before a run), the
  /// rest at their first run.
  struct PackedWeightCounts {
    int64_t stored = 0, adopted = 0, packed = 0;
    /// Bytes of WEIGHTS after the model's constants: the stored copies and
    /// their 64-byte alignment padding.
    int64_t stored_bytes = 0;
  };
  PackedWeightCounts packed_weights() const;
  /// Number of nodes in the main graph.
  size_t node_count() const;
  /// Intra-op threads runs use (SessionOptions::num_threads; 0 resolved to
  /// gec::available_cores()).
  int num_threads() const;
  /// Threads the last run used (num_threads, or fewer under
  /// SessionOptions::adapt_threads); num_threads before the first run.
  int last_run_threads() const;
  /// True while an idle run context's step thread tuning (SessionOptions::
  /// adapt_threads) is timing its steps on one thread and on more (each
  /// context tunes on its own): before the first run, up to 26 runs after
  /// it with a thread count (also while the CPU monitor runs on fewer
  /// threads before that count is tuned), and again every 1000 runs and
  /// 30 s or on a drift; those runs vary in speed. A benchmark warms up
  /// past it.
  bool tuning_step_threads() const;
  /// Streams the model's plan spreads its main graph over (1: sequential);
  /// a run uses min(streams, its threads) workers.
  int streams() const;
  /// True when loaded with SessionOptions::profile.
  bool profiling() const;
  /// Timings per node (main graph order) if profiling was enabled.
  std::vector<NodeProfile> profile() const;
  void reset_profile();

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// True when the `size` bytes at `data` begin with the .gom file magic (to
/// tell a .gom from an ONNX model, in memory or from a file's first 8 bytes);
/// says nothing about the rest of the file (Session::load checks that).
bool looks_like_gom(const void* data, size_t size);

/// Compiler version string, e.g. "0.1.0".
const char* version();

}  // namespace gec
