// Session: the public runtime API. Loads a .gom (mmap), validates inputs,
// runs the executor and hands outputs back.
#include <omp.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>

#include "gec/runtime.h"
#include "gec/threading.h"
#include "memory/lifetimes.h"
#include "model/format.h"
#include "model/reader.h"
#include "runtime/cpu_monitor.h"
#include "runtime/executor.h"
#include "runtime/thread_placement.h"
#include "support/page_block.h"

namespace gec {

std::string IoInfo::str() const {
  std::string t = dtype_name(dtype);
  if (!has_shape) {
    t += "[*]";
  } else {
    t += "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) t += ",";
      if (dims[i] >= 0) t += std::to_string(dims[i]);
      else t += (i < dim_params.size() && !dim_params[i].empty()) ? dim_params[i] : "?";
    }
    t += "]";
  }
  return name + ": " + value_type_str(kind, t);
}

// Storage for the tensors Session::run returns: per output, two blocks a
// run context lends out in turn. A block is lent with a run's output and
// comes back when the last Tensor sharing it is gone (its handle's deleter
// clears `lent` with release order; take() reads it with acquire order).
// Two per output cover the usual loop, `y = run(x)`, where the previous
// result is still held while the next run writes. Blocks from 1 MiB are
// 2 MiB-rounded PageBlocks, whose huge pages make the first run's faults a
// few: a fresh 4 KiB page costs about 9 us on the Firecracker VM of
// bench/results.md (ppocr_v4_det's 1.6 MB map: 400 faults, 6 ms). A context
// keeps at most two blocks per output, each at most twice what it last
// gave, until the Session is destroyed; a block still lent then stays valid
// with its Tensors.
class OutputBuffers {
 public:
  /// 64-byte aligned storage for at least `bytes` bytes for output `i`,
  /// owned by the returned handle (and by this context while it keeps the
  /// block). Throws gec::Error(kInternal) when out of memory.
  std::shared_ptr<void> take(size_t i, size_t bytes) {
    if (i >= slots_.size()) slots_.resize(i + 1);
    Slot& s = slots_[i];
    const auto is_free = [](const std::shared_ptr<Block>& b) { return b && !b->lent.load(std::memory_order_acquire); };
    const auto fits = [&](const std::shared_ptr<Block>& b) {
      return b->capacity >= bytes && b->capacity / 2 <= std::max(bytes, kMinBytes);
    };
    for (size_t j = 0; j < s.blocks.size(); ++j)
      if (is_free(s.blocks[j]) && fits(s.blocks[j])) {
        // The other block is now the older; a free one that no longer fits goes.
        std::shared_ptr<Block>& other = s.blocks[1 - j];
        if (is_free(other) && !fits(other)) other.reset();
        s.next = 1 - j;
        return lend(s.blocks[j]);
      }
    // Replace a free block, else the one lent before the other.
    size_t k = s.next;
    for (size_t j = 0; j < s.blocks.size(); ++j)
      if (!s.blocks[j] || is_free(s.blocks[j])) k = j;
    s.next = 1 - k;
    s.blocks[k].reset();
    auto b = std::make_shared<Block>();
    if (bytes >= kHugeFrom) {
      const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      auto pb = std::make_shared<PageBlock>(rounded);
      b->capacity = pb->size();
      b->storage = std::shared_ptr<void>(pb, pb->data());
    } else {
      b->capacity = std::max(bytes, kMinBytes);
      b->storage = std::shared_ptr<void>(aligned_alloc64(b->capacity), aligned_free);
    }
    s.blocks[k] = b;
    return lend(b);
  }

 private:
  static constexpr size_t kMinBytes = 64;
  static constexpr size_t kHuge = size_t{2} << 20;
  static constexpr size_t kHugeFrom = size_t{1} << 20;
  struct Block {
    std::shared_ptr<void> storage;
    size_t capacity = 0;
    std::atomic<bool> lent{false};
  };
  struct Slot {
    std::array<std::shared_ptr<Block>, 2> blocks;
    size_t next = 0;  // the block to replace when both are lent
  };
  /// A handle on `b`'s storage that keeps it alive and gives it back when
  /// the last copy is gone.
  static std::shared_ptr<void> lend(const std::shared_ptr<Block>& b) {
    b->lent.store(true, std::memory_order_relaxed);
    return std::shared_ptr<void>(b->storage.get(), [b](void*) { b->lent.store(false, std::memory_order_release); });
  }
  std::vector<Slot> slots_;
};

// One run in flight: its arena, the executor (kernels, value slots) that
// works in it, and the storage of the outputs it hands out.
struct RunContext {
  PageBlock arena;  // pages present before the first run writes them
  std::unique_ptr<runtime::Executor> exec;
  OutputBuffers outputs;
};

struct Session::Impl {
  model::LoadedModel model;
  SessionOptions opts;
  int64_t max_arena = 0;
  // Where the memory plan's last arena slot ends: the bytes a run writes
  // (the reader checked every slot lies inside the arena).
  size_t arena_in_use = 0;
  std::vector<IoInfo> inputs, outputs;
  // Weights the kernels pack once for every run context (oneDNN layouts).
  kernels::SharedWeights shared_weights;
  // The context pool: contexts are made on demand, up to
  // opts.max_concurrent_requests; a run takes an idle one for its duration.
  std::mutex pool_mu;
  std::condition_variable pool_cv;
  std::vector<std::unique_ptr<RunContext>> contexts;
  std::vector<RunContext*> idle;
  std::atomic<int> last_run_threads{0};
  std::mutex cpu_mu;
  runtime::CpuMonitor cpu;

  /// A new run context. `arena_present`: its arena's pages in use made
  /// present now; otherwise the caller makes them present
  /// (PageBlock::make_present(arena_in_use)) before the first run.
  RunContext* make_context(bool arena_present = true) {
    auto c = std::make_unique<RunContext>();
    c->arena = PageBlock(static_cast<size_t>(model.arena_bytes), arena_present ? arena_in_use : 0);
    c->exec = std::make_unique<runtime::Executor>(model, c->arena.data(), opts.num_threads, opts.profile, max_arena,
                                                   &shared_weights);
    c->exec->tune_step_threads(opts.adapt_threads);
    contexts.push_back(std::move(c));
    return contexts.back().get();
  }
  /// Runs the executor on the threads the CPU monitor leaves (or all).
  void run(RunContext& c) {
    int threads = opts.num_threads;
    if (opts.adapt_threads) {
      std::lock_guard<std::mutex> lock(cpu_mu);
      threads = cpu.threads_for_next_run(opts.num_threads);
    }
    const bool reshapes = c.exec->run_threads() != threads;  // this context's kernels are made for another count
    const auto start = std::chrono::steady_clock::now();
    c.exec->run(threads);
    if (opts.adapt_threads) {
      const auto wall = std::chrono::steady_clock::now() - start;
      std::lock_guard<std::mutex> lock(cpu_mu);
      // A run of the step thread tuning's measuring arms is no sample of
      // its count either.
      cpu.record_run(threads, wall,
                     reshapes || c.exec->last_run_measured_steps() || c.exec->last_run_remade_tuned_steps());
    }
    last_run_threads.store(c.exec->run_threads(), std::memory_order_relaxed);
  }
};

// Holds one RunContext of the pool for a run's scope. When every context is
// busy and the pool is full, waits (wait_when_busy) or refuses the run.
class RunLease {
 public:
  explicit RunLease(Session::Impl& impl) : impl_(impl) {
    std::unique_lock<std::mutex> lock(impl_.pool_mu);
    const size_t max = static_cast<size_t>(impl_.opts.max_concurrent_requests);
    while (impl_.idle.empty() && impl_.contexts.size() >= max) {
      if (!impl_.opts.wait_when_busy)
        fail(ErrorCode::kInvalidArgument,
             max == 1 ? "Session::run called while another run on the same Session is in progress; use one Session "
                        "per thread, or raise SessionOptions::max_concurrent_requests"
                      : "Session::run: all " + std::to_string(max) +
                            " run contexts are busy (SessionOptions::max_concurrent_requests); set wait_when_busy to "
                            "queue instead");
      impl_.pool_cv.wait(lock);
    }
    if (!impl_.idle.empty()) {
      ctx_ = impl_.idle.back();
      impl_.idle.pop_back();
    } else {
      ctx_ = impl_.make_context();  // kernels made once per context; throws leave the pool as it was
    }
  }
  ~RunLease() {
    {
      std::lock_guard<std::mutex> lock(impl_.pool_mu);
      impl_.idle.push_back(ctx_);
    }
    impl_.pool_cv.notify_one();
  }
  RunLease(const RunLease&) = delete;
  RunLease& operator=(const RunLease&) = delete;
  RunContext& ctx() { return *ctx_; }
  runtime::Executor& exec() { return *ctx_->exec; }

 private:
  Session::Impl& impl_;
  RunContext* ctx_ = nullptr;
};

static IoInfo io_info(const ir::Value* v) {
  IoInfo io;
  io.name = v->name();
  io.kind = v->type.kind;
  io.dtype = v->type.dtype;
  io.has_shape = v->type.has_shape;
  for (const ir::Dim& d : v->type.dims) {
    io.dims.push_back(d.value);
    io.dim_params.push_back(ir::is_invented_dim_param(d.param) ? std::string() : d.param);
  }
  return io;
}

// `first_arena_present`: as Session::Impl::make_context's `arena_present`,
// for the first context.
static std::unique_ptr<Session::Impl> make_impl(model::LoadedModel m, const SessionOptions& opts,
                                                bool first_arena_present = true) {
  auto impl = std::make_unique<Session::Impl>();
  impl->model = std::move(m);
  impl->opts = opts;
  if (opts.num_threads < 0 || opts.num_threads > max_num_threads())
    fail(ErrorCode::kInvalidArgument, "num_threads " + std::to_string(opts.num_threads) + " is out of range: 0 (the " +
                                          std::to_string(available_cores()) + " cores this process may use) to " +
                                          std::to_string(max_num_threads()) + " (4 x cores)");
  if (impl->opts.num_threads == 0) impl->opts.num_threads = available_cores();
  const int64_t max_arena = opts.max_arena_bytes > 0
                                ? opts.max_arena_bytes
                                : static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  if (impl->model.arena_bytes > max_arena)
    fail(ErrorCode::kUnsupported, "the model needs an activation arena of " + std::to_string(impl->model.arena_bytes) +
                                      " bytes, more than the " + std::to_string(max_arena) + " allowed (" +
                                      (opts.max_arena_bytes > 0 ? "max_arena_bytes" : "this machine's memory") + ")");
  if (opts.max_weights_bytes > 0 && impl->model.weights_bytes > opts.max_weights_bytes)
    fail(ErrorCode::kUnsupported, "the model has " + std::to_string(impl->model.weights_bytes) +
                                      " bytes of weights, more than the " + std::to_string(opts.max_weights_bytes) +
                                      " allowed (max_weights_bytes)");
  if (opts.max_concurrent_requests < 1 || opts.max_concurrent_requests > 1024)
    fail(ErrorCode::kInvalidArgument, "max_concurrent_requests " + std::to_string(opts.max_concurrent_requests) +
                                          " is out of range 1..1024");
  if (opts.profile && opts.max_concurrent_requests > 1)
    fail(ErrorCode::kInvalidArgument, "profiling times one run at a time: use max_concurrent_requests = 1 with "
                                      "SessionOptions::profile");
  // Concurrent runs share the cores: by default each takes its share.
  if (opts.num_threads == 0 && opts.max_concurrent_requests > 1)
    impl->opts.num_threads = std::max(1, available_cores() / opts.max_concurrent_requests);
  impl->max_arena = max_arena;
  for (int32_t id = 0; id < impl->model.ids.size(); ++id) {
    const ir::Value* v = impl->model.ids.value(id);
    if (!impl->model.memory_plan.in_arena(id) || !v->type.is_static()) continue;
    const size_t end = static_cast<size_t>(impl->model.memory_plan.at(id).offset + memory::value_bytes(v));
    impl->arena_in_use = std::max(impl->arena_in_use, end);
  }
  const ir::Graph& g = *impl->model.graph;
  for (const ir::Value* v : g.inputs()) impl->inputs.push_back(io_info(v));
  for (const ir::Value* v : g.outputs()) impl->outputs.push_back(io_info(v));
  if (std::shared_ptr<const MappedFile> f = impl->model.mapped) {
    // A constant packed for every reader needs no resident plain copy.
    impl->shared_weights.set_release([f](const void* p, size_t n) {
      if (f->contains(p, n)) f->drop_resident(p, n);
    });
  }
  // Weights the compiler packed: kernels that want that layout adopt them.
  for (const model::LoadedModel::PackedWeight& p : impl->model.packed_weights)
    impl->shared_weights.add_stored(impl->model.ids.value(p.value)->constant->data(), {p.layout, p.data, p.bytes});
  omp_set_num_threads(impl->opts.num_threads);
  // The first context now: the kernels are made (and checked) at load.
  impl->idle.push_back(impl->make_context(first_arena_present));
  impl->last_run_threads = impl->opts.num_threads;
  return impl;
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {
// The threads that verify WEIGHTS' checksums at load: the session's own
// (make_impl checks the count itself).
int load_threads(const SessionOptions& opts) {
  return opts.num_threads > 0 ? std::min(opts.num_threads, available_cores()) : available_cores();
}

// Makes the session of a model read with its WEIGHTS' checksums deferred:
// on a session of several threads, the session's threads but one verify
// them while this thread alone makes the kernels and, for the session's
// thread count, the oneDNN primitives its first run would make, packing
// their weights (Executor::prepare_weights). Making primitives is mostly
// code generation and mprotect under the process's memory-map lock, so a
// second thread hardly speeds it up (googlenet's 58 steps: 19 ms on one
// thread, 17-18 on two) while hashing never takes that lock. A one-thread
// session verifies first, on its one thread. Beside them, when the first
// context's arena uses 2 MiB or more, another thread makes it present
// (PageBlock::make_present) while this one makes the oneDNN primitives,
// which the first run would otherwise pay page by page: squeezenet1_1's
// first run 6.6 -> 4.6 ms, mobilenet_v2's 7.1 -> 5.1 (medians of 15
// alternating loads; the loads took 1.5-2.3 ms longer, so load + first
// run moved -1.6 and +0.8 ms: the fresh pages cost the VM's hypervisor
// time wherever they are taken). Otherwise the loading thread makes it
// present. A corrupt file is reported as such even when making a
// kernel failed on its damaged bytes first.
std::unique_ptr<Session::Impl> make_impl_verifying(model::LoadedModel m, const SessionOptions& opts) {
  std::function<void(int)> verify = std::move(m.verify_weights);
  const int threads = load_threads(opts);
  std::exception_ptr verify_error;
  std::thread checker;
  if (verify && threads > 1) {
    try {
      checker = runtime::TeamPlacement::start_helper([&verify, &verify_error, n = threads - 1]() noexcept {
        try {
          verify(n);
        } catch (...) {
          verify_error = std::current_exception();
        }
      });
    } catch (...) {
      // No thread to spare (a pids limit): check first, below.
    }
  }
  if (verify && !checker.joinable()) verify(threads);
  std::unique_ptr<Session::Impl> impl;
  std::exception_ptr make_error, populate_error;
  std::thread populator;
  try {
    impl = make_impl(std::move(m), opts, /*first_arena_present=*/threads == 1);
    if (threads > 1) {
      RunContext* first = impl->idle.front();
      const size_t in_use = impl->arena_in_use;
      // Below 2 MiB populating takes a few tenths of a millisecond here,
      // about what a helper's start and the TLB shootdowns it brings cost
      // the loading thread (bert_like_encoder's 0.9 MB arena: load + first
      // run no faster).
      if (in_use >= (size_t{2} << 20)) {
        try {
          populator = runtime::TeamPlacement::start_helper([first, in_use, &populate_error]() noexcept {
            try {
              first->arena.make_present(in_use);
            } catch (...) {
              populate_error = std::current_exception();
            }
          });
        } catch (...) {
          // No thread to spare: here, below.
        }
      }
      if (!populator.joinable()) first->arena.make_present(in_use);
    }
    // One helper beside the checker; every thread when no checker runs
    // (the populator's few milliseconds share them).
    impl->idle.front()->exec->prepare_weights(0, checker.joinable() ? 1 : 0);
  } catch (...) {
    make_error = std::current_exception();
  }
  if (populator.joinable()) populator.join();
  if (populate_error && !make_error) make_error = populate_error;
  if (checker.joinable()) checker.join();
  // Damage explains a failure to make the kernels; a check that could not
  // run (no memory, a file that shrank) does not outrank that failure.
  if (verify_error) {
    try {
      std::rethrow_exception(verify_error);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kCorruptFile || !make_error) throw;
    } catch (...) {
      if (!make_error) throw;
    }
  }
  if (make_error) std::rethrow_exception(make_error);
  return impl;
}
}  // namespace

std::unique_ptr<Session> Session::load(const std::string& path, const SessionOptions& opts) {
  return std::unique_ptr<Session>(new Session(
      make_impl_verifying(model::read_gom_file(path, load_threads(opts), /*defer_weights_check=*/true), opts)));
}

std::unique_ptr<Session> Session::load_from_bytes(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                                  const SessionOptions& opts) {
  return std::unique_ptr<Session>(new Session(make_impl_verifying(
      model::read_gom_bytes(std::move(bytes), load_threads(opts), /*defer_weights_check=*/true), opts)));
}

const std::vector<IoInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Session::outputs() const { return impl_->outputs; }
int64_t Session::arena_bytes() const { return impl_->model.arena_bytes; }
int64_t Session::weights_bytes() const { return impl_->model.weights_bytes; }
Session::PackedWeightCounts Session::packed_weights() const {
  PackedWeightCounts c;
  c.stored = static_cast<int64_t>(impl_->model.packed_weights.size());
  c.stored_bytes = impl_->model.packed_weights_bytes;
  c.adopted = static_cast<int64_t>(impl_->shared_weights.adopted());
  c.packed = static_cast<int64_t>(impl_->shared_weights.size()) - c.adopted;
  return c;
}
size_t Session::node_count() const { return impl_->model.graph->nodes().size(); }
int Session::num_threads() const { return impl_->opts.num_threads; }
int Session::streams() const { return std::max(1, impl_->model.execution_plan.graphs.at(0).streams); }
bool Session::tuning_step_threads() const {
  std::lock_guard<std::mutex> lock(impl_->pool_mu);
  for (const RunContext* c : impl_->idle)  // (a context in a run is not read while it changes)
    if (c->exec->tuning_step_threads()) return true;
  return false;
}

int Session::last_run_threads() const { return impl_->last_run_threads.load(std::memory_order_relaxed); }
bool Session::profiling() const { return impl_->opts.profile; }
// Profiling Sessions have one context (make_impl refuses more).
std::vector<NodeProfile> Session::profile() const { return impl_->contexts.front()->exec->profile(); }
void Session::reset_profile() { impl_->contexts.front()->exec->reset_profile(); }

bool looks_like_gom(const void* data, size_t size) {
  return data && size >= sizeof(model::kMagic) && std::memcmp(data, model::kMagic, sizeof(model::kMagic)) == 0;
}

static void check_input(const IoInfo& want, const TensorView& got) {
  bool ok = got.dtype == want.dtype;
  if (ok && want.has_shape && (want.kind == ValueKind::kTensor || want.kind == ValueKind::kOptionalTensor)) {
    ok = got.shape.size() == want.dims.size();
    for (size_t i = 0; ok && i < want.dims.size(); ++i) ok = want.dims[i] < 0 || want.dims[i] == got.shape[i];
  }
  for (int64_t d : got.shape)
    if (d < 0) ok = false;
  if (!ok)
    fail(ErrorCode::kInvalidArgument, "input '" + want.name + "': expected " + want.str().substr(want.name.size() + 2) +
                                          ", got " + dtype_name(got.dtype) + shape_str(got.shape));
  if (!got.data && got.numel() > 0)
    fail(ErrorCode::kInvalidArgument, "input '" + want.name + "': no data");
}

static void check_input_count(const Session::Impl& impl, size_t got) {
  if (got == impl.inputs.size()) return;
  std::string names;
  for (const auto& io : impl.inputs) names += (names.empty() ? "" : ", ") + io.str();
  fail(ErrorCode::kInvalidArgument, "the model takes " + std::to_string(impl.inputs.size()) + " input(s) (" + names +
                                        "), got " + std::to_string(got));
}

// The tensor-only run() overloads cannot pass sequences or optionals.
static void require_tensor_io(const Session::Impl& impl) {
  for (const auto* list : {&impl.inputs, &impl.outputs})
    for (const IoInfo& io : *list)
      if (io.kind != ValueKind::kTensor)
        fail(ErrorCode::kInvalidArgument, "'" + io.str() + "' is not a tensor; run this model with Session::run_values");
}

static void bind_inputs(Session::Impl& impl, runtime::Executor& ex, const std::vector<TensorView>& inputs) {
  require_tensor_io(impl);
  check_input_count(impl, inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(impl.inputs[i], inputs[i]);
    ex.bind_input(i, inputs[i]);
  }
}

// Checks a sequence/optional input against its declaration: the kind, and
// every element's dtype.
static void check_value_input(const IoInfo& want, const AnyValue& got) {
  const auto bad = [&](const std::string& why) {
    fail(ErrorCode::kInvalidArgument, "input '" + want.name + "': expected " + want.str().substr(want.name.size() + 2) +
                                          ", got " + why);
  };
  if (got.kind != want.kind) bad(got.str());
  if (got.kind == ValueKind::kOptionalTensor && got.has_value) {
    check_input(want, got.tensor.view());
    return;
  }
  // An empty sequence or a None read from a file may not know its dtype.
  if (want.dtype != DType::kUndefined && got.elem_dtype != DType::kUndefined && got.elem_dtype != want.dtype)
    bad(got.str());
  for (const Tensor& e : got.elements)
    if (e.dtype() != got.elem_dtype) bad("an element " + std::string(dtype_name(e.dtype())) + shape_str(e.shape()));
}

std::vector<AnyValue> Session::run_values(const std::vector<AnyValue>& inputs) {
  RunLease lease(*impl_);
  check_input_count(*impl_, inputs.size());
  runtime::Executor& ex = lease.exec();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (impl_->inputs[i].kind == ValueKind::kTensor) {
      if (inputs[i].kind != ValueKind::kTensor)
        fail(ErrorCode::kInvalidArgument, "input '" + impl_->inputs[i].name + "': expected a tensor, got " +
                                              inputs[i].str());
      check_input(impl_->inputs[i], inputs[i].tensor.view());
      ex.bind_input(i, inputs[i].tensor.view());
    } else {
      check_value_input(impl_->inputs[i], inputs[i]);
      ex.bind_input_value(i, std::make_shared<const AnyValue>(inputs[i]));
    }
  }
  impl_->run(lease.ctx());
  std::vector<AnyValue> outs;
  for (size_t i = 0; i < impl_->outputs.size(); ++i) {
    if (impl_->outputs[i].kind == ValueKind::kTensor) outs.push_back(AnyValue::of_tensor(Tensor::copy_of(ex.output(i))));
    else outs.push_back(ex.output_value(i));
  }
  return outs;
}

std::vector<Tensor> Session::run(const std::vector<TensorView>& inputs) {
  RunLease lease(*impl_);
  runtime::Executor& ex = lease.exec();
  OutputBuffers& buffers = lease.ctx().outputs;
  bind_inputs(*impl_, ex, inputs);
  const size_t n = impl_->outputs.size();
  std::vector<Tensor> outs(n);
  // Outputs of a static shape are produced straight into their storage
  // (Executor::bind_output); the rest are copied out after the run.
  try {
    for (size_t i = 0; i < n; ++i) {
      const IoInfo& io = impl_->outputs[i];
      if (!io.has_shape || io.dtype == DType::kString || !ex.output_bindable(i)) continue;
      Shape shape = io.dims;
      if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) continue;
      std::shared_ptr<void> b = buffers.take(i, static_cast<size_t>(shape_numel(shape)) * dtype_size(io.dtype));
      Tensor t(io.dtype, std::move(shape), b.get(), b);
      if (ex.bind_output(i, t.view())) outs[i] = std::move(t);
    }
    impl_->run(lease.ctx());
    for (size_t i = 0; i < n; ++i) {
      if (outs[i].defined()) continue;
      const TensorView& got = ex.output(i);
      if (got.dtype == DType::kString) {
        outs[i] = Tensor::copy_of(got);
        continue;
      }
      std::shared_ptr<void> b = buffers.take(i, got.bytes());
      outs[i] = Tensor(got.dtype, got.shape, b.get(), b);
      copy_tensor_data(got, outs[i].view());
    }
  } catch (...) {
    ex.unbind_outputs();
    throw;
  }
  ex.unbind_outputs();
  return outs;
}

// Outputs that can be redirected (Executor::bind_output) are produced straight
// into the caller's buffers; the rest are copied out after the run.
void Session::run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs) {
  RunLease lease(*impl_);
  if (outputs.size() != impl_->outputs.size())
    fail(ErrorCode::kInvalidArgument, "expected " + std::to_string(impl_->outputs.size()) + " output buffers");
  runtime::Executor& ex = lease.exec();
  bind_inputs(*impl_, ex, inputs);
  std::vector<bool> direct(outputs.size(), false);
  try {
    for (size_t i = 0; i < outputs.size(); ++i) direct[i] = ex.bind_output(i, outputs[i]);
    impl_->run(lease.ctx());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (direct[i]) continue;
      const TensorView& got = ex.output(i);
      if (got.shape != outputs[i].shape || got.dtype != outputs[i].dtype)
        fail(ErrorCode::kInvalidArgument, "output '" + impl_->outputs[i].name + "' is " + dtype_name(got.dtype) +
                                              shape_str(got.shape) + ", the buffer given is " +
                                              dtype_name(outputs[i].dtype) + shape_str(outputs[i].shape));
      copy_tensor_data(got, outputs[i]);
    }
  } catch (...) {
    ex.unbind_outputs();
    throw;
  }
  ex.unbind_outputs();
}

}  // namespace gec
