// The executor: runs a loaded model's execution plan (schedule/
// execution_plan.h) step by step over the read-only node tables, with one
// frame of tensor views indexed by value id (and, for sequence and optional
// values, a parallel frame of shared immutable AnyValues). It creates each
// step's kernel with the step's layouts and variant, and refuses a kernel
// whose implementation is not the one the plan names.
//
// Values planned in the arena (static shape) are bound once at load; values of
// dynamic shape get their shape from the op's infer function at run time and
// live in per-value buffers that grow and are reused across runs. Subgraphs
// (If/Loop/Scan bodies) run in the same frame: their value ids are distinct
// from the parent's, and outer-scope reads simply find the parent's binding.
//
// Kernel lifecycle (kernels/kernel.h): a kernel is reshaped before its first
// run and whenever the shape of one of its inputs differs from the last
// reshape; static steps therefore reshape once.
//
// Streams: a main graph planned on several streams runs on
// min(streams, threads) workers (runtime/stream_workers.h); worker w runs the
// steps of streams s with s % workers == w in plan order, waiting for each
// step's events before it starts and recording its event when done, and owns
// threads / workers of the run's intra-op threads (the remainder to the first
// ones). One worker runs every step in plan order, events not needed. A
// subgraph runs on the worker of the node that owns it. Every stream has its
// own oneDNN scratch buffer.
//
// Memory plan features this file implements at run time: a Concat the planner
// marked in place (MemoryPlan::concat_in_place) is skipped, its inputs having
// been produced into their slices of the output; a graph output may be bound
// to a caller's buffer so its producer writes there directly (zero copy).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gec/runtime.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "model/reader.h"
#include "ops/op_schema.h"
#include "runtime/step_threads.h"
#include "runtime/stream_workers.h"

namespace gec::runtime {

class Executor final : public kernels::SubgraphRunner {
 public:
  /// `model` must outlive the executor; `arena` holds its plan's arena_bytes.
  /// Creates one kernel per step of every graph. A value allocated at run
  /// time (dynamic shape) may take at most `max_dynamic_bytes` (0 = no
  /// limit): more is gec::Error(kUnsupported) naming it. Errors: kUnsupported
  /// when an op has no kernel in this build, kCorruptFile when this build's
  /// kernel for a step is not the implementation the plan names.
  /// `shared` (may be null; must outlive the executor): the model's
  /// prepared weights, shared with the other executors of one Session.
  Executor(const model::LoadedModel& model, uint8_t* arena, int num_threads, bool profile,
           int64_t max_dynamic_bytes = 0, kernels::SharedWeights* shared = nullptr);

  /// Binds the main graph inputs (views must stay valid during run()).
  void bind_input(size_t i, const TensorView& v);
  /// Binds main graph input i, a sequence or optional.
  void bind_input_value(size_t i, kernels::ValueSlot v);
  /// Runs the main graph on `threads` intra-op threads (at most the
  /// constructor's num_threads; 0 = that many). When the count differs from
  /// the last run's, every kernel is reshaped first (oneDNN primitives are
  /// made for one thread count). Before a run with a new count (the first
  /// run included), the oneDNN kernels whose shapes are known before the
  /// run are reshaped on `threads` threads at once (prepare_ahead).
  void run(int threads = 0);
  /// The compiler's weight packing: reshapes, on up to `threads` threads
  /// (0 = the constructor's count), the main-graph oneDNN steps whose shapes
  /// are known before a run (unbound graph inputs taken at their static
  /// shapes) and packs their constant weights into the SharedWeights given
  /// at construction (SharedWeights::packed lists them). `helpers`: how many
  /// threads make them at once, the caller's included (0 = `threads`).
  /// Returns the steps prepared. The executor may run afterwards as usual.
  size_t prepare_weights(int threads = 0, int helpers = 0);
  /// Threads the last run used.
  int run_threads() const { return run_threads_; }
  /// Step thread tuning (runtime/step_threads.h): with `on`, the runs time
  /// the main graph's small steps on one thread and on their worker's
  /// threads and keep each on the faster; off (the default) runs every step
  /// on the plan's count. Sessions turn it on with
  /// SessionOptions::adapt_threads.
  /// `max_candidate_ms`: StepThreadTuner's bound on the steps it tries
  /// (tests raise it to try every step).
  void tune_step_threads(bool on, double max_candidate_ms = StepThreadTuner::kMaxCandidateMs);
  /// Whether the last run was one of the tuning's measuring runs (some
  /// steps on counts the settled choice may not keep).
  bool last_run_measured_steps() const { return last_run_measured_steps_; }
  /// Whether the last run made primitives for a step the tuning moved (the
  /// first run after a round or a switch of arm).
  bool last_run_remade_tuned_steps() const { return last_run_remade_tuned_; }
  /// Whether the tuning is measuring (the next runs try other counts for
  /// some steps) or has yet to: for the last run's thread count, or for the
  /// executor's own count when the last run used fewer (the CPU monitor's
  /// first runs may; the runs on every thread tune when it returns). True
  /// before the first run, too, when the tuning is on.
  bool tuning_step_threads() const {
    return tuner_ && num_threads_ > 1 && (run_threads_ <= 0 || !tuner_->settled(run_threads_) ||
                      (run_threads_ < num_threads_ && !tuner_->settled(num_threads_)));
  }
  /// Steps the last prepare_ahead reshaped (0 when it did not run).
  size_t prepared_ahead() const { return prepared_ahead_; }
  /// Current view of a main graph output after run().
  const TensorView& output(size_t i) const;
  /// Main graph output i, a sequence or optional, after run(); kInternal
  /// error when its producer stored none.
  const AnyValue& output_value(size_t i) const;

  /// Makes main graph output i be produced straight into `v` (zero copy) for
  /// the following runs, until unbind_outputs(). Returns false, binding
  /// nothing, when the output cannot be redirected: it is not planned in the
  /// arena (graph input, constant, dynamic shape), it is listed twice, or a
  /// value produced after it shares its bytes (an alias of it read later).
  /// Throws kInvalidArgument when the output is static and `v` has another
  /// dtype or shape. `v` must not overlap any input buffer.
  bool bind_output(size_t i, const TensorView& v);
  /// Restores every output to its planned arena bytes.
  void unbind_outputs();
  /// Whether output i could be bound (see bind_output).
  bool output_bindable(size_t i) const { return bindable_[i]; }

  std::vector<AnyValue> run_values(const ir::Graph& g, const std::vector<const AnyValue*>& inputs) override;

  /// Bytes held for values of shapes known only at run: their buffers and
  /// the released ones waiting to be taken again.
  size_t dynamic_bytes() const;
  /// Bytes of scratch memory held outside the arena: the streams' own
  /// buffers, grown by the requests no arena gap served (lend_arena_gaps).
  size_t scratch_bytes() const;
  /// Main-graph steps whose scratch requests an arena gap serves first.
  size_t steps_with_arena_scratch() const { return arena_scratch_.size(); }

  std::vector<NodeProfile> profile() const;
  void reset_profile();

 private:
  struct Step {
    const ir::Node* node = nullptr;
    const ops::OpSchema* schema = nullptr;
    std::unique_ptr<kernels::Kernel> kernel;
    std::vector<int32_t> in_ids, out_ids;
    bool needs_infer = false;  // some output has a run-time shape
    bool planned_done = false; // a Concat whose inputs were produced in place
    bool skip = false;         // planned_done, unless its output is bound to a caller buffer
    bool reshaped = false;     // kernel->reshape ran for `shapes`
    bool single_thread = false;  // the plan runs it on one thread (schedule::Step::threads)
    bool decide_at_run = false;  // shapes not static at compile: decided again at each reshape
    bool small_now = false;      // decide_at_run: the current shapes make it a one-thread step
    int32_t stream = 0;          // the stream of its main-graph node (subgraphs: of the owner)
    int32_t index = -1;          // its index among the main graph's steps (-1 in a subgraph)
    bool fixed_shapes = false;   // static shapes, no body, outputs not shaped by the kernel
    bool tunable = false;        // the step thread tuning may run it on one thread (configure)
    int budget = 1;              // intra-op threads of its worker in this run
    std::vector<int32_t> waits;  // events to wait for (main graph)
    int32_t record = -1;         // event to record (main graph)
    std::vector<Shape> shapes; // input shapes of the last reshape
    std::vector<int32_t> release;  // dynamic values last read here (release_dynamic after it)
    kernels::KernelContext ctx;
    NodeProfile prof;
    /// Whether its run may open a parallel region (TeamPlacement): its
    /// count now, or the count its shapes decide at run.
    bool may_open_region() const { return budget > 1 && !single_thread && (ctx.num_threads > 1 || decide_at_run); }
  };
  struct GraphPlan {
    std::vector<Step> steps;
  };

  void build(const ir::Graph& g, const schedule::GraphSchedule& schedule, const std::vector<int32_t>& check_at_run,
             int32_t stream);
  bool in_arena(int32_t id) const { return plan_.in_arena(id); }
  /// Workers and thread budgets for a run on `threads` threads.
  void configure(int threads);
  /// Starts a run of the step thread tuning: the tunable steps' counts.
  void begin_tuned_run(int threads);
  /// Reshapes, on up to `threads` threads at once, the main-graph steps
  /// with a oneDNN kernel that the next run would reshape first and whose
  /// input and output shapes are set before it runs (constants, bound graph
  /// inputs, arena values): oneDNN generates a primitive's code when it is
  /// made, one primitive at a time per thread (resnet50: about 35 ms of a
  /// 112 ms first run). Kernel::reshape reads shapes, never data, so the
  /// order does not matter. A reshape that fails leaves its step for
  /// run_step, which reshapes it again in order and raises the error there.
  /// Returns the steps it reshaped.
  /// With `even_alone`, also on one thread (prepare_weights); otherwise a
  /// single helper leaves the steps to run_step. At most `max_helpers`
  /// threads when positive. After each reshape the
  /// step's constant weights are packed (Kernel::pack_constants), one OpenMP
  /// thread per helper.
  size_t prepare_ahead(int threads, bool even_alone = false, int max_helpers = 0);
  /// Records the input shapes `s` is reshaped for (Step::shapes).
  static void remember_input_shapes(Step& s);
  void run_graph(GraphPlan& plan);
  void run_worker(int worker);
  void run_timed(Step& s, double wait_ms);
  void run_step(Step& s);
  TensorView* allocate_dynamic(int32_t id, DType dt, const Shape& shape);
  /// Fills Step::release of the main graph's steps when it runs as one
  /// stream: each dynamic value (a tensor of a shape known only at run,
  /// made by a main-graph node, not a graph output and read by no
  /// subgraph) is released after the last step that reads it.
  void plan_dynamic_release();
  /// Gives each main-graph step of a one-stream plan the largest run of
  /// arena bytes that no value holds while it runs (no value live at that
  /// step in the plan's lifetimes, memory/lifetimes.h: what the plan
  /// verifier proves no step writes over), when it is at least
  /// kMinArenaScratch, as its scratch memory: a kernel's workspace (a
  /// deconvolution's product, a Winograd transform) then takes pages the
  /// arena already has instead of growing the stream's buffer (ppocr_v4_det:
  /// 10 MB less, and the time to map them at the first run).
  void lend_arena_gaps();
  static constexpr int64_t kMinArenaScratch = 64 * 1024;
  /// Gives a dynamic value's buffer to free_dynamic_, for a value made
  /// later (in this run or the next) to take.
  void release_dynamic(int32_t id);
  TensorView* allocate_output(const ir::Node* node, int32_t id, DType dt, const Shape& shape);
  void find_bindable_outputs();

  std::vector<TensorView> frame_;
  /// oneDNN scratch memory per stream (a stream runs one kernel at a time).
  std::vector<std::unique_ptr<kernels::ScratchBuffer>> scratch_;
  /// Main-graph steps' scratch over arena gaps (lend_arena_gaps).
  std::vector<std::unique_ptr<kernels::ScratchBuffer>> arena_scratch_;
  int32_t streams_ = 1;
  std::unique_ptr<EventSet> events_;
  std::unique_ptr<StreamWorkers> workers_;
  std::vector<std::vector<Step*>> worker_steps_;  // per worker, its main-graph steps in plan order
  std::vector<kernels::ValueSlot> slots_;  // sequence/optional values, by value id
  std::vector<int32_t> transient_slots_;   // non-tensor values that are not main graph outputs
  std::vector<Tensor> dynamic_;  // storage per dynamic value id (grown as needed, or released)
  /// Released buffers by size in bytes: allocate_dynamic takes the smallest
  /// that holds a value, so that a run's dynamic values reuse each other's
  /// bytes as the arena's do (their peak: what is live at once).
  std::multimap<size_t, Tensor> free_dynamic_;
  const ir::ValueIndex& ids_;
  const memory::MemoryPlan& plan_;
  std::unordered_map<const ir::Graph*, GraphPlan> plans_;
  std::vector<bool> bindable_;          // per main graph output
  std::vector<Step*> output_producer_;  // per main graph output (null if none)
  std::vector<size_t> bound_;           // outputs currently bound to caller memory
  const ir::Graph& main_;
  uint8_t* arena_;
  int num_threads_;
  int run_threads_;  // the threads of the current / last run (steps' ctx.num_threads)
  size_t prepared_ahead_ = 0;
  bool parallel_steps_ = false;  // a step may open a parallel region of run_threads_ (TeamPlacement)
  bool profile_;
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();  // profile timestamps
  int64_t max_dynamic_bytes_;
  kernels::SharedWeights* shared_weights_;
  std::unique_ptr<StepThreadTuner> tuner_;  // null: off
  std::vector<uint8_t> tunable_;            // per main-graph step (Step::tunable)
  std::atomic<bool> tuned_reshaped_{false};  // a tunable step made its primitives in the current run
  bool last_run_measured_steps_ = false;     // the last run was in a measuring arm
  bool last_run_remade_tuned_ = false;       // tuned_reshaped_ of the last completed run
};

}  // namespace gec::runtime
