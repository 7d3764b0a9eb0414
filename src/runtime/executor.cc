// Executor: see executor.h.
#include "runtime/executor.h"

#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <system_error>
#include <thread>

#include "gec/bench.h"
#include "gec/error.h"
#include "memory/lifetimes.h"
#include "runtime/thread_placement.h"
#include "support/omp_threads.h"

namespace gec::runtime {

Executor::Executor(const model::LoadedModel& model, uint8_t* arena, int num_threads, bool profile,
                   int64_t max_dynamic_bytes, kernels::SharedWeights* shared)
    : frame_(static_cast<size_t>(model.ids.size())),
      slots_(static_cast<size_t>(model.ids.size())),
      dynamic_(static_cast<size_t>(model.ids.size())),
      ids_(model.ids),
      plan_(model.memory_plan),
      main_(*model.graph),
      arena_(arena),
      num_threads_(num_threads),
      run_threads_(0),  // configure() on the first run
      profile_(profile),
      max_dynamic_bytes_(max_dynamic_bytes),
      shared_weights_(shared) {
  for (int32_t id = 0; id < ids_.size(); ++id) {
    const ir::Value* v = ids_.value(id);
    TensorView& tv = frame_[static_cast<size_t>(id)];
    tv.dtype = v->type.dtype;
    if (v->constant) {
      tv = v->constant->view();
    } else if (in_arena(id)) {
      tv.data = arena_ + plan_.at(id).offset;
      tv.shape = v->type.static_shape();
    }
    if (!v->type.is_tensor() && !main_.is_graph_output(v)) transient_slots_.push_back(id);
  }
  // The kernels trust value kinds (a sequence slot vs tensor bytes).
  ops::check_value_kinds(main_);
  GEC_CHECK(model.graphs.size() == model.execution_plan.graphs.size(), "execution plan does not fit the model");
  const schedule::GraphSchedule& main_schedule = model.execution_plan.graphs[0];
  streams_ = std::max<int32_t>(1, main_schedule.streams);
  for (int32_t k = 0; k < streams_; ++k) scratch_.push_back(std::make_unique<kernels::ScratchBuffer>());
  events_ = std::make_unique<EventSet>(main_schedule.events);
  // A subgraph runs on the stream of the main-graph node owning it.
  std::unordered_map<const ir::Graph*, int32_t> graph_stream;
  const std::vector<ir::Node*> main_nodes = main_.node_list();
  std::function<void(const ir::Node&, int32_t)> claim = [&](const ir::Node& n, int32_t stream) {
    for (const auto& a : n.attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) {
        graph_stream[a.g.get()] = stream;
        for (const auto& sn : a.g->nodes()) claim(*sn, stream);
      }
  };
  for (const schedule::Step& ps : main_schedule.steps)
    if (ps.node >= 0 && static_cast<size_t>(ps.node) < main_nodes.size())
      claim(*main_nodes[static_cast<size_t>(ps.node)], ps.stream);
  for (size_t gi = 0; gi < model.graphs.size(); ++gi) {
    auto it = graph_stream.find(model.graphs[gi]);
    build(*model.graphs[gi], model.execution_plan.graphs[gi], gi == 0 ? model.check_at_run : std::vector<int32_t>{},
          it == graph_stream.end() ? 0 : it->second);
  }
  find_bindable_outputs();
  if (streams_ == 1) {
    plan_dynamic_release();
    lend_arena_gaps();
  }
}

void Executor::lend_arena_gaps() {
  if (!arena_) return;
  const memory::Lifetimes lt = memory::compute_lifetimes(main_);
  std::unordered_map<const ir::Node*, int64_t> step_of;
  for (size_t k = 0; k < lt.order.size(); ++k) step_of[lt.order[k]] = static_cast<int64_t>(k);
  // Every arena value's bytes and the steps that may touch them; a value
  // the main graph's lifetimes do not know (a body's) holds its bytes for
  // the whole run.
  struct Held {
    int64_t first, last, lo, hi;
  };
  std::vector<Held> held;
  for (int32_t id = 0; id < ids_.size(); ++id) {
    const ir::Value* v = ids_.value(id);
    if (!in_arena(id) || !v->type.is_static()) continue;
    const int64_t lo = plan_.at(id).offset, hi = lo + memory::value_bytes(v);
    const auto f = lt.first.find(v), l = lt.last.find(v);
    if (f == lt.first.end() || l == lt.last.end())
      held.push_back({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), lo, hi});
    else
      held.push_back({f->second, l->second, lo, hi});
  }
  int64_t end = 0;
  for (const Held& h : held) end = std::max(end, h.hi);
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (Step& s : plans_.at(&main_).steps) {
    const auto at = step_of.find(s.node);
    if (at == step_of.end()) continue;
    busy.clear();
    for (const Held& h : held)
      if (h.first <= at->second && at->second <= h.last) busy.emplace_back(h.lo, h.hi);
    std::sort(busy.begin(), busy.end());
    int64_t best_lo = 0, best = 0, from = 0;
    const auto gap = [&](int64_t lo, int64_t hi) {
      lo = memory::align_up(lo);
      if (hi - lo > best) best = hi - lo, best_lo = lo;
    };
    for (const auto& [lo, hi] : busy) {
      gap(from, lo);
      from = std::max(from, hi);
    }
    gap(from, end);
    if (best >= kMinArenaScratch) {
      arena_scratch_.push_back(std::make_unique<kernels::ScratchBuffer>(arena_ + best_lo, static_cast<size_t>(best),
                                                                        s.ctx.scratch));
      s.ctx.scratch = arena_scratch_.back().get();
    }
  }
}

void Executor::plan_dynamic_release() {
  std::vector<Step>& steps = plans_.at(&main_).steps;
  std::vector<int> last(static_cast<size_t>(ids_.size()), -1);
  std::vector<bool> made(static_cast<size_t>(ids_.size()), false), in_body(static_cast<size_t>(ids_.size()), false);
  for (size_t k = 0; k < steps.size(); ++k) {
    for (int32_t id : steps[k].out_ids) {
      made[static_cast<size_t>(id)] = true;
      last[static_cast<size_t>(id)] = std::max(last[static_cast<size_t>(id)], static_cast<int>(k));
    }
    for (int32_t id : steps[k].in_ids)
      if (id >= 0) last[static_cast<size_t>(id)] = static_cast<int>(k);
    // Outer-scope reads of its bodies: never released (a body may keep
    // reading them in ways the main graph's order does not show).
    for (const ir::Value* v : main_.implicit_inputs(*steps[k].node)) in_body[static_cast<size_t>(ids_.id(v))] = true;
  }
  for (int32_t id = 0; id < ids_.size(); ++id) {
    const ir::Value* v = ids_.value(id);
    const size_t i = static_cast<size_t>(id);
    if (!made[i] || in_body[i] || last[i] < 0 || in_arena(id) || v->constant || !v->type.is_tensor() ||
        main_.is_graph_output(v))
      continue;
    steps[static_cast<size_t>(last[i])].release.push_back(id);
  }
}

size_t Executor::scratch_bytes() const {
  size_t n = 0;
  for (const auto& b : scratch_) n += b->own_bytes();
  return n;
}

size_t Executor::dynamic_bytes() const {
  size_t n = 0;
  for (const Tensor& t : dynamic_) n += t.defined() && t.dtype() != DType::kString ? t.bytes() : 0;
  for (const auto& [bytes, t] : free_dynamic_) n += bytes;
  return n;
}

void Executor::release_dynamic(int32_t id) {
  Tensor& store = dynamic_[static_cast<size_t>(id)];
  if (store.defined() && store.dtype() != DType::kString) free_dynamic_.emplace(store.bytes(), std::move(store));
  store = Tensor();
  frame_[static_cast<size_t>(id)].data = nullptr;
}

// An arena output can take a caller buffer when nothing produced after it
// shares its bytes: the values before it that share them (an alias source,
// an in-place input, Concat slices) are only read by its producer or stay
// in the arena, and after it only an alias of it could occupy those bytes.
void Executor::find_bindable_outputs() {
  const auto& outs = main_.outputs();
  bindable_.assign(outs.size(), false);
  output_producer_.assign(outs.size(), nullptr);
  std::vector<Step>& steps = plans_.at(&main_).steps;
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::Value* y = outs[i];
    const int32_t yid = ids_.id(y);
    if (!in_arena(yid) || std::count(outs.begin(), outs.end(), y) != 1) continue;
    const int64_t lo = plan_.at(yid).offset, hi = lo + static_cast<int64_t>(frame_[static_cast<size_t>(yid)].bytes());
    size_t k = 0;
    while (k < steps.size() && std::find(steps[k].out_ids.begin(), steps[k].out_ids.end(), yid) ==
                                   steps[k].out_ids.end())
      ++k;
    if (k == steps.size()) continue;
    bool shared_later = false;
    for (size_t j = k + 1; j < steps.size() && !shared_later; ++j)
      for (int32_t id : steps[j].out_ids) {
        const int64_t vlo = plan_.at(id).offset, vhi = vlo + static_cast<int64_t>(frame_[static_cast<size_t>(id)].bytes());
        if (in_arena(id) && vlo < hi && lo < vhi && vhi > vlo) shared_later = true;
      }
    bindable_[i] = !shared_later;
    output_producer_[i] = &steps[k];
  }
}

bool Executor::bind_output(size_t i, const TensorView& v) {
  GEC_CHECK(i < bindable_.size(), "output index out of range");
  const ir::Value* y = main_.outputs()[i];
  TensorView& tv = frame_[static_cast<size_t>(ids_.id(y))];
  if (in_arena(ids_.id(y)) && (tv.shape != v.shape || tv.dtype != v.dtype))
    fail(ErrorCode::kInvalidArgument, "output '" + y->name() + "' is " + dtype_name(tv.dtype) + shape_str(tv.shape) +
                                          ", the buffer given is " + dtype_name(v.dtype) + shape_str(v.shape));
  if (!bindable_[i] || (!v.data && v.numel() > 0)) return false;
  tv.data = v.data;
  output_producer_[i]->skip = false;  // a Concat must now copy its slices out
  bound_.push_back(i);
  return true;
}

void Executor::unbind_outputs() {
  for (size_t i : bound_) {
    const int32_t yid = ids_.id(main_.outputs()[i]);
    frame_[static_cast<size_t>(yid)].data = arena_ + plan_.at(yid).offset;
    output_producer_[i]->skip = output_producer_[i]->planned_done;
  }
  bound_.clear();
}

void Executor::build(const ir::Graph& g, const schedule::GraphSchedule& schedule,
                     const std::vector<int32_t>& check_at_run, int32_t stream) {
  GraphPlan& plan = plans_[&g];
  const std::vector<ir::Node*> table = g.node_list();
  plan.steps.reserve(schedule.steps.size());
  for (const schedule::Step& ps : schedule.steps) {
    GEC_CHECK(ps.node >= 0 && static_cast<size_t>(ps.node) < table.size(), "step names no node");
    const ir::Node* n = table[static_cast<size_t>(ps.node)];
    Step s;
    s.node = n;
    s.schema = ops::find_schema(n->domain, n->op_type);
    if (!s.schema) fail(ErrorCode::kUnsupported, "no op schema for " + n->describe());
    s.kernel = kernels::create_kernel(*n, schedule::kernel_config(*n, ps));
    if (s.kernel->impl_name() != ps.kernel)
      fail(ErrorCode::kCorruptFile, n->describe() + ": the model was compiled for kernel '" + ps.kernel +
                                        "', this build runs '" + s.kernel->impl_name() + "'; recompile the model");
    for (const ir::Value* in : n->inputs()) {
      const int32_t id = ids_.id_or_none(in);
      s.in_ids.push_back(id);
      s.ctx.inputs.push_back(in ? &frame_[static_cast<size_t>(id)] : nullptr);
      s.ctx.value_inputs.push_back(in ? &slots_[static_cast<size_t>(id)] : nullptr);
    }
    for (const ir::Value* out : n->outputs()) {
      const int32_t id = ids_.id(out);
      s.out_ids.push_back(id);
      s.ctx.outputs.push_back(&frame_[static_cast<size_t>(id)]);
      s.ctx.value_outputs.push_back(&slots_[static_cast<size_t>(id)]);
      // Sequence and optional outputs are made by their kernels.
      if (!in_arena(id) && out->type.is_tensor()) s.needs_infer = true;
    }
    s.single_thread = ps.threads == 1;
    bool all_static = true;
    for (const ir::Value* v : n->inputs()) all_static = all_static && (!v || v->type.is_static());
    for (const ir::Value* v : n->outputs()) all_static = all_static && v->type.is_static();
    bool control_flow = false;
    for (const auto& a : n->attrs) control_flow = control_flow || a.kind == ir::Attribute::Kind::kGraph;
    s.decide_at_run = !s.single_thread && !s.schema->shape_from_kernel && !all_static && !control_flow;
    s.fixed_shapes = all_static && !control_flow && !s.schema->shape_from_kernel;
    s.ctx.num_threads = s.single_thread ? 1 : num_threads_;
    s.stream = &g == &main_ ? ps.stream : stream;
    GEC_CHECK(s.stream >= 0 && s.stream < streams_, "step on a stream the plan does not have");
    if (&g == &main_) {
      s.waits = ps.wait_events;
      s.record = ps.record_event;
    }
    s.ctx.subgraphs = this;
    s.ctx.scratch = scratch_[static_cast<size_t>(s.stream)].get();
    s.ctx.shared_weights = shared_weights_;
    s.ctx.node = n;
    if (s.schema->shape_from_kernel) {
      s.needs_infer = false;
      std::vector<int32_t> ids = s.out_ids;
      s.ctx.allocate_output = [this, ids, n](size_t i, DType dt, const Shape& shape) {
        return allocate_output(n, ids[i], dt, shape);
      };
    }
    // Steps whose arena outputs the loader could not check statically.
    if (&g == &main_ && std::binary_search(check_at_run.begin(), check_at_run.end(), ps.node) &&
        !s.schema->shape_from_kernel)
      s.needs_infer = true;
    s.planned_done = !s.out_ids.empty() && &g == &main_ && plan_.concat_done(s.out_ids[0]);
    if (s.planned_done && !ps.output_layouts.empty() && ps.output_layouts[0] == ops::Layout::kNhwc)
      fail(ErrorCode::kCorruptFile, n->describe() + ": a Concat in layout nhwc cannot run in place (its inputs' "
                                                    "channels are not byte ranges of the output)");
    s.skip = s.planned_done;
    s.prof.name = n->name;
    s.prof.op_type = n->op_type;
    s.prof.kernel = ps.kernel;
    s.prof.fused_from = n->fused_from;
    if (&g == &main_) s.index = static_cast<int32_t>(plan.steps.size());
    plan.steps.push_back(std::move(s));
  }
}

// An output the planner gave arena bytes (its shape was proven at compile
// time) keeps them, so a caller buffer bound to it receives the result; a
// kernel producing another shape there is refused rather than overflowing.
TensorView* Executor::allocate_output(const ir::Node* node, int32_t id, DType dt, const Shape& shape) {
  const ir::Value* v = ids_.value(id);
  if (!in_arena(id)) return allocate_dynamic(id, dt, shape);
  TensorView& tv = frame_[static_cast<size_t>(id)];
  if (tv.shape != shape || tv.dtype != dt)
    fail(ErrorCode::kInvalidArgument, node->describe() + ": output '" + v->name() + "' is " + dtype_name(dt) +
                                          shape_str(shape) + " at run time, the model declares " + v->type.str());
  return &tv;
}

TensorView* Executor::allocate_dynamic(int32_t id, DType dt, const Shape& shape) {
  TensorView& tv = frame_[static_cast<size_t>(id)];
  Tensor& store = dynamic_[static_cast<size_t>(id)];
  const int64_t n = shape_numel(shape);
  const int64_t want = dt == DType::kString ? n * static_cast<int64_t>(sizeof(std::string))
                                            : n * static_cast<int64_t>(dtype_size(dt));
  if (n < 0 || (max_dynamic_bytes_ > 0 && want > max_dynamic_bytes_))
    fail(ErrorCode::kUnsupported, "value '" + ids_.value(id)->name() + "' is " + dtype_name(dt) + shape_str(shape) +
                                      " at run time: " + std::to_string(want) + " bytes, more than the " +
                                      std::to_string(max_dynamic_bytes_) +
                                      " allowed (SessionOptions::max_arena_bytes)");
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dt);
  const bool fits = store.defined() && dt != DType::kString && store.dtype() != DType::kString && store.bytes() >= bytes;
  if (!fits) {
    store = Tensor();  // too small for this value: freed, not kept
    auto it = dt == DType::kString ? free_dynamic_.end() : free_dynamic_.lower_bound(bytes);
    if (it != free_dynamic_.end()) {
      store = std::move(it->second);
      free_dynamic_.erase(it);
    } else {
      store = Tensor(dt == DType::kString ? dt : DType::kUInt8,
                     {dt == DType::kString ? n : static_cast<int64_t>(bytes)});
    }
  }
  tv.data = store.data();
  tv.dtype = dt;
  tv.shape = shape;
  return &tv;
}

void Executor::bind_input(size_t i, const TensorView& v) {
  frame_[static_cast<size_t>(ids_.id(main_.inputs()[i]))] = v;
}

void Executor::bind_input_value(size_t i, kernels::ValueSlot v) {
  slots_[static_cast<size_t>(ids_.id(main_.inputs()[i]))] = std::move(v);
}

const TensorView& Executor::output(size_t i) const {
  return frame_[static_cast<size_t>(ids_.id(main_.outputs()[i]))];
}

const AnyValue& Executor::output_value(size_t i) const {
  const ir::Value* y = main_.outputs()[i];
  const kernels::ValueSlot& slot = slots_[static_cast<size_t>(ids_.id(y))];
  if (!slot) fail(ErrorCode::kInternal, "output '" + y->name() + "' (" + y->type.str() + ") was not produced");
  return *slot;
}

void Executor::configure(int threads) {
  // oneDNN fixes a primitive's thread count when it is created: a kernel
  // whose count changes is reshaped (its primitives made again); oneDNN's
  // primitive cache keeps both sets, so switching back is cheap.
  run_threads_ = threads;
  const int workers = std::max(1, std::min(streams_, threads));
  std::vector<int> budget(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) budget[static_cast<size_t>(w)] = threads / workers + (w < threads % workers ? 1 : 0);
  parallel_steps_ = false;
  for (auto& [graph, plan] : plans_)
    for (Step& s : plan.steps) {
      s.budget = budget[static_cast<size_t>(s.stream % workers)];
      const int n = s.single_thread || s.small_now ? 1 : s.budget;
      if (n != s.ctx.num_threads) {
        s.ctx.num_threads = n;
        s.reshaped = false;
      }
      parallel_steps_ = parallel_steps_ || s.may_open_region();
    }
  // Steps the tuning may move to one thread: the main graph's, of more than
  // one thread of budget, not fixed by the plan, shapes static.
  std::vector<Step>& main_steps = plans_.at(&main_).steps;
  tunable_.assign(main_steps.size(), 0);
  for (Step& s : main_steps) {
    s.tunable = s.budget > 1 && !s.single_thread && s.fixed_shapes && !s.skip;
    tunable_[static_cast<size_t>(s.index)] = s.tunable;
  }
  worker_steps_.assign(static_cast<size_t>(workers), {});
  for (Step& s : plans_.at(&main_).steps) worker_steps_[static_cast<size_t>(s.stream % workers)].push_back(&s);
  if (!workers_ || workers_->count() != workers)
    workers_ = workers == 1 ? nullptr : std::make_unique<StreamWorkers>(workers, [this](int w) { run_worker(w); });
}

void Executor::tune_step_threads(bool on, double max_candidate_ms) {
  if (on && !tuner_) {
    // Run times say something of the machine only when the work is the
    // same every run: every main-graph step of static shapes, no bodies.
    bool fixed = true;
    for (const Step& s : plans_.at(&main_).steps) fixed = fixed && s.fixed_shapes;
    tuner_ = std::make_unique<StepThreadTuner>(plans_.at(&main_).steps.size(), max_candidate_ms, fixed);
  }
  if (!on && tuner_) {
    tuner_.reset();
    last_run_measured_steps_ = false;
    run_threads_ = 0;  // configure() again at the next run: every step back on its planned count
  }
}

void Executor::begin_tuned_run(int threads) {
  last_run_measured_steps_ = tuner_->begin_run(threads, tunable_) != StepThreadTuner::Arm::kSettled;
  // Whether a step opens a parallel region (TeamPlacement): not when the
  // tuning put every one on one thread.
  bool parallel = false;
  for (auto& [graph, plan] : plans_)
    for (Step& s : plan.steps) {
      if (s.tunable) {
        const int n = tuner_->one_thread(static_cast<size_t>(s.index)) ? 1 : s.budget;
        if (n != s.ctx.num_threads) {
          s.ctx.num_threads = n;
          s.reshaped = false;  // its primitives are made for the other count (oneDNN's cache keeps both)
        }
      }
      parallel = parallel || s.may_open_region();
    }
  parallel_steps_ = parallel;
}

void Executor::remember_input_shapes(Step& s) {
  s.shapes.resize(s.ctx.inputs.size());
  for (size_t i = 0; i < s.ctx.inputs.size(); ++i) s.shapes[i] = s.ctx.inputs[i] ? s.ctx.inputs[i]->shape : Shape{};
}

size_t Executor::prepare_ahead(int threads, bool even_alone, int max_helpers) {
  std::vector<Step*> todo;
  for (Step& s : plans_.at(&main_).steps) {
    // Kernels whose reshape makes primitives or packs weights
    // (Kernel::costly_reshape); the other kernels' reshape is cheap.
    if (s.reshaped || s.skip || s.needs_infer || s.decide_at_run || !s.kernel->costly_reshape())
      continue;
    bool known = true;
    for (int32_t id : s.in_ids)
      // A graph input is known once bound (or, for prepare_weights, given
      // its static shape); an unbound one of dynamic shape is not.
      known = known && (id < 0 || ids_.value(id)->constant || in_arena(id) ||
                        (!ids_.value(id)->producer() && (frame_[static_cast<size_t>(id)].data ||
                                                          !frame_[static_cast<size_t>(id)].shape.empty())));
    for (int32_t id : s.out_ids) known = known && in_arena(id);
    if (known) todo.push_back(&s);
  }
  const int most = max_helpers > 0 ? std::min(threads, max_helpers) : threads;
  const size_t helpers = std::min<size_t>(static_cast<size_t>(std::max(most, 1)), todo.size());
  if (todo.empty() || (helpers < 2 && !even_alone)) return 0;
  std::atomic<size_t> next{0}, done{0};
  const auto work = [&]() noexcept {
    for (size_t k; (k = next.fetch_add(1)) < todo.size();) {
      Step& s = *todo[k];
      try {
        // oneDNN sizes a primitive by the creating thread's OpenMP count.
        omp_set_num_threads(s.ctx.num_threads);
        s.kernel->reshape(s.ctx);
        remember_input_shapes(s);
        s.reshaped = true;
        done.fetch_add(1);
      } catch (...) {
        // Left unreshaped: run_step reshapes it again in order and raises the error there.
        continue;
      }
      try {
        // One thread per packing: the helpers pack different weights at once.
        omp_set_num_threads(1);
        s.kernel->pack_constants(s.ctx);
      } catch (...) {
        // The run packs it again (PackedWeights::get) and raises the error there.
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(helpers - 1);
    for (size_t t = 1; t < helpers; ++t) pool.push_back(TeamPlacement::start_helper(work));
  } catch (...) {
    // No more threads (a pids limit) or memory for them: this thread does the rest.
  }
  work();
  for (auto& t : pool) t.join();
  return done.load();
}

size_t Executor::prepare_weights(int threads, int helpers) {
  threads = threads <= 0 ? num_threads_ : std::min(threads, num_threads_);
  // Kernel::reshape reads shapes only: unbound inputs at their static shapes.
  for (const ir::Value* v : main_.inputs()) {
    TensorView& tv = frame_[static_cast<size_t>(ids_.id(v))];
    if (!tv.data && tv.shape.empty() && v->type.is_static() && v->type.is_tensor()) tv.shape = v->type.static_shape();
  }
  if (threads != run_threads_) configure(threads);
  const ScopedOmpThreads restore(omp_get_max_threads());
  return prepare_ahead(threads, /*even_alone=*/true, helpers);
}

void Executor::run(int threads) {
  threads = threads <= 0 ? num_threads_ : std::min(threads, num_threads_);
  const bool new_count = threads != run_threads_;
  if (new_count) configure(threads);
  // Steps set the calling thread's OpenMP count; the caller gets its own back.
  const ScopedOmpThreads restore(omp_get_max_threads());
  // A run measures the steps' costs when it completes without making a
  // tunable step's primitives (a switch of arm, a new count).
  struct EndTunedRun {
    StepThreadTuner* tuner;
    const std::atomic<bool>& reshaped;
    bool new_count, completed = false;  // new_count: also the first run with a count
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~EndTunedRun() {
      if (!tuner) return;
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      tuner->end_run(ms, completed && !new_count && !reshaped.load(std::memory_order_relaxed));
    }
  } end_tuned{tuner_.get(), tuned_reshaped_, new_count || (tuner_ && !tuner_->started(threads))};
  tuned_reshaped_.store(false, std::memory_order_relaxed);
  if (tuner_) begin_tuned_run(threads);
  // A one-stream run with a parallel step keeps the OpenMP workers off the
  // CPU this thread is on (stream workers are masters of teams of their own).
  const TeamPlacement placement(!workers_ && parallel_steps_ ? threads : 0);
  if (new_count) prepared_ahead_ = prepare_ahead(threads);
  if (!workers_) {
    run_graph(plans_.at(&main_));
  } else {
    events_->begin_run();
    workers_->run();
  }
  end_tuned.completed = true;
  last_run_remade_tuned_ = tuned_reshaped_.load(std::memory_order_relaxed);
  // Sequences and optionals live outside the memory plan: drop every one
  // but the outputs now, rather than hold them until the next run.
  for (int32_t id : transient_slots_) slots_[static_cast<size_t>(id)].reset();
}

// One worker's share of a multi-stream run: its steps in plan order, each
// after the events it waits for. A failing step aborts the run: the other
// workers stop at their next wait.
void Executor::run_worker(int worker) {
  try {
    for (Step* s : worker_steps_[static_cast<size_t>(worker)]) {
      const auto t0 = profile_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      for (int32_t e : s->waits)
        if (!events_->wait(e)) return;
      if (events_->aborted()) return;
      const double wait_ms =
          profile_ && !s->waits.empty()
              ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()
              : 0.0;
      run_timed(*s, wait_ms);
      if (s->record >= 0) events_->record(s->record);
    }
  } catch (...) {
    events_->abort();
    throw;
  }
}

void Executor::run_graph(GraphPlan& plan) {
  for (Step& s : plan.steps) {
    run_timed(s, 0.0);
    for (int32_t id : s.release) release_dynamic(id);
  }
}

void Executor::run_timed(Step& s, double wait_ms) {
  if (!profile_) {
    run_step(s);
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  run_step(s);
  auto t1 = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  s.prof.total_ms += ms;
  s.prof.calls += 1;
  s.prof.stream = s.stream;
  s.prof.threads = s.ctx.num_threads;
  if (s.prof.call_ms.size() < kMaxProfiledCalls) {  // bounded; total_ms and calls stay exact
    s.prof.call_start_ms.push_back(std::chrono::duration<double, std::milli>(t0 - epoch_).count());
    s.prof.call_ms.push_back(ms);
    s.prof.call_tid.push_back(static_cast<int>(::gettid()));
    s.prof.call_wait_ms.push_back(wait_ms);
  }
  s.prof.input_shapes.clear();
  int64_t bytes = 0;
  for (const TensorView* in : s.ctx.inputs) {
    s.prof.input_shapes.push_back(in ? in->shape : Shape{});
    if (in) bytes += static_cast<int64_t>(in->bytes());
  }
  s.prof.output_shapes.clear();
  for (const TensorView* out : s.ctx.outputs) {
    bytes += static_cast<int64_t>(out->bytes());
    s.prof.output_shapes.push_back(out->shape);
  }
  s.prof.bytes_accessed = bytes;
}

void Executor::run_step(Step& s) {
  if (s.skip) return;  // the planner put every input in its slice already
  if (s.needs_infer) {
    ops::InferContext ic;
    ic.node = s.node;
    ic.inputs = s.ctx.inputs;
    s.schema->infer(ic);
    GEC_CHECK(ic.out_shapes.size() >= s.out_ids.size(), s.node->describe() + ": infer set too few outputs");
    for (size_t i = 0; i < s.out_ids.size(); ++i) {
      const int32_t id = s.out_ids[i];
      if (!ids_.value(id)->type.is_tensor()) continue;
      if (in_arena(id)) {
        const TensorView& planned = frame_[static_cast<size_t>(id)];
        if (planned.shape != ic.out_shapes[i] || planned.dtype != ic.out_dtypes[i])
          fail(ErrorCode::kInvalidArgument, s.node->describe() + ": output '" + ids_.value(id)->name() + "' is " +
                                                dtype_name(ic.out_dtypes[i]) + shape_str(ic.out_shapes[i]) +
                                                " at run time, the model planned " + ids_.value(id)->type.str());
        continue;
      }
      allocate_dynamic(id, ic.out_dtypes[i], ic.out_shapes[i]);
    }
  }
  // Reshape before the first run and when an input shape changed.
  bool same = s.reshaped && s.shapes.size() == s.ctx.inputs.size();
  for (size_t i = 0; same && i < s.ctx.inputs.size(); ++i)
    same = s.ctx.inputs[i] ? s.ctx.inputs[i]->shape == s.shapes[i] : s.shapes[i].empty();
  if (!same) {
    remember_input_shapes(s);
    if (s.decide_at_run) {  // the compile-time rule, on the shapes of this run
      int64_t bytes = 0;
      std::vector<Shape> outs;
      for (const TensorView* in : s.ctx.inputs) bytes += in ? static_cast<int64_t>(in->bytes()) : 0;
      for (const TensorView* out : s.ctx.outputs) {
        bytes += static_cast<int64_t>(out->bytes());
        outs.push_back(out->shape);
      }
      s.small_now = bytes < schedule::kSingleThreadBytes &&
                    node_flops(s.node->op_type, s.shapes, outs) < schedule::kSingleThreadFlops;
      s.ctx.num_threads = s.small_now ? 1 : s.budget;
    }
    // oneDNN sizes a primitive by the threads at its creation.
    if (omp_get_max_threads() != s.ctx.num_threads) omp_set_num_threads(s.ctx.num_threads);
    if (s.tunable) tuned_reshaped_.store(true, std::memory_order_relaxed);  // the run's times are not the steps' cost
    s.kernel->reshape(s.ctx);
    s.reshaped = true;
  }
  if (omp_get_max_threads() != s.ctx.num_threads) omp_set_num_threads(s.ctx.num_threads);
  if (tuner_ && s.index >= 0 && tuner_->timed(static_cast<size_t>(s.index))) {
    const auto t0 = std::chrono::steady_clock::now();
    s.kernel->run(s.ctx);
    tuner_->record(static_cast<size_t>(s.index),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  } else {
    s.kernel->run(s.ctx);
  }
  if (s.ctx.num_threads > 1) TeamPlacement::team_used();
}

std::vector<AnyValue> Executor::run_values(const ir::Graph& g, const std::vector<const AnyValue*>& inputs) {
  auto it = plans_.find(&g);
  GEC_CHECK(it != plans_.end(), "subgraph was not prepared");
  GEC_CHECK(inputs.size() <= g.inputs().size(), "too many subgraph inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    const ir::Value* in = g.inputs()[i];
    const size_t id = static_cast<size_t>(ids_.id(in));
    if (!in->type.is_tensor()) {
      slots_[id] = std::make_shared<const AnyValue>(
          kernels::convert_value_kind(*inputs[i], in->type.kind, "subgraph input '" + in->name() + "'"));
    } else if (inputs[i]->kind == ValueKind::kTensor) {
      frame_[id] = inputs[i]->tensor.view();
    } else {  // an optional tensor: its value, which lives as long as *inputs[i]
      if (inputs[i]->kind != ValueKind::kOptionalTensor || !inputs[i]->has_value)
        kernels::convert_value_kind(*inputs[i], ValueKind::kTensor, "subgraph input '" + in->name() + "'");
      frame_[id] = inputs[i]->tensor.view();
    }
  }
  run_graph(it->second);
  std::vector<AnyValue> outs;
  for (const ir::Value* o : g.outputs()) {
    const size_t id = static_cast<size_t>(ids_.id(o));
    if (o->type.is_tensor()) {
      outs.push_back(AnyValue::of_tensor(Tensor::copy_of(frame_[id])));
    } else {
      if (!slots_[id]) fail(ErrorCode::kInternal, "subgraph output '" + o->name() + "' was not produced");
      outs.push_back(*slots_[id]);
    }
  }
  return outs;
}

std::vector<NodeProfile> Executor::profile() const {
  std::vector<NodeProfile> r;
  // Each step, then the steps of its bodies (If branches, Loop and Scan
  // bodies), depth first, marked with the node and attribute holding them.
  std::function<void(const ir::Graph&, const std::string&)> add = [&](const ir::Graph& g, const std::string& inside) {
    const auto it = plans_.find(&g);
    if (it == plans_.end()) return;
    for (const Step& s : it->second.steps) {
      r.push_back(s.prof);
      r.back().inside = inside;
      for (const auto& a : s.node->attrs)
        if (a.kind == ir::Attribute::Kind::kGraph && a.g)
          add(*a.g, (inside.empty() ? "" : inside + "/") + s.node->name + "." + a.name);
    }
  };
  add(main_, "");
  return r;
}

void Executor::reset_profile() {
  for (auto& [g, plan] : plans_)
    for (Step& s : plan.steps) {
      s.prof.total_ms = 0;
      s.prof.calls = 0;
      s.prof.call_start_ms.clear();
      s.prof.call_ms.clear();
      s.prof.call_tid.clear();
      s.prof.call_wait_ms.clear();
    }
}

}  // namespace gec::runtime
