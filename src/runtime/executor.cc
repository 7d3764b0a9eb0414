// Executor: see executor.h.
#include "runtime/executor.h"

#include <omp.h>

#include <algorithm>

#include "gec/error.h"
#include "memory/plan_format.h"

namespace gec::runtime {

Executor::Executor(ir::Graph& graph, int32_t num_values, uint8_t* arena, int num_threads, bool profile)
    : frame_(static_cast<size_t>(num_values)),
      slots_(static_cast<size_t>(num_values)),
      dynamic_(static_cast<size_t>(num_values)),
      values_(static_cast<size_t>(num_values), nullptr),
      main_(graph),
      arena_(arena),
      num_threads_(num_threads),
      profile_(profile) {
  ir::for_each_graph(graph, [&](ir::Graph& g) {
    for (const auto& v : g.values()) {
      GEC_CHECK(v->id >= 0 && v->id < num_values, "value id out of range");
      values_[static_cast<size_t>(v->id)] = v.get();
      TensorView& tv = frame_[static_cast<size_t>(v->id)];
      tv.dtype = v->type.dtype;
      if (v->constant) {
        tv = v->constant->view();
      } else if (v->storage == ir::Storage::kArena) {
        tv.data = arena_ + v->offset;
        tv.shape = v->type.static_shape();
      }
    }
  });
  for (ir::Value* v : values_)
    if (v && !v->type.is_tensor() && !main_.is_graph_output(v)) transient_slots_.push_back(v->id);
  // The kernels trust value kinds (a sequence slot vs tensor bytes).
  ops::check_value_kinds(graph, /*fix_untyped=*/false);
  ir::for_each_graph(graph, [&](ir::Graph& g) { build(g); });
  find_bindable_outputs();
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
    if (y->storage != ir::Storage::kArena || std::count(outs.begin(), outs.end(), y) != 1) continue;
    const int64_t lo = y->offset, hi = lo + static_cast<int64_t>(frame_[static_cast<size_t>(y->id)].bytes());
    size_t k = 0;
    while (k < steps.size() && std::find(steps[k].out_ids.begin(), steps[k].out_ids.end(), y->id) ==
                                   steps[k].out_ids.end())
      ++k;
    if (k == steps.size()) continue;
    bool shared_later = false;
    for (size_t j = k + 1; j < steps.size() && !shared_later; ++j)
      for (int32_t id : steps[j].out_ids) {
        const ir::Value* v = values_[static_cast<size_t>(id)];
        const int64_t vlo = v->offset, vhi = vlo + static_cast<int64_t>(frame_[static_cast<size_t>(id)].bytes());
        if (v->storage == ir::Storage::kArena && vlo < hi && lo < vhi && vhi > vlo) shared_later = true;
      }
    bindable_[i] = !shared_later;
    output_producer_[i] = &steps[k];
  }
}

bool Executor::bind_output(size_t i, const TensorView& v) {
  GEC_CHECK(i < bindable_.size(), "output index out of range");
  const ir::Value* y = main_.outputs()[i];
  TensorView& tv = frame_[static_cast<size_t>(y->id)];
  if (y->storage == ir::Storage::kArena && (tv.shape != v.shape || tv.dtype != v.dtype))
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
    const ir::Value* y = main_.outputs()[i];
    frame_[static_cast<size_t>(y->id)].data = arena_ + y->offset;
    output_producer_[i]->skip = output_producer_[i]->planned_done;
  }
  bound_.clear();
}

void Executor::build(ir::Graph& g) {
  GraphPlan& plan = plans_[&g];
  plan.steps.reserve(g.nodes().size());
  for (const auto& n : g.nodes()) {
    Step s;
    s.node = n.get();
    s.schema = ops::find_schema(n->domain, n->op_type);
    if (!s.schema) fail(ErrorCode::kUnsupported, "no op schema for " + n->describe());
    s.kernel = kernels::create_kernel(*n);
    for (ir::Value* in : n->inputs()) {
      s.in_ids.push_back(in ? in->id : -1);
      s.ctx.inputs.push_back(in ? &frame_[static_cast<size_t>(in->id)] : nullptr);
      s.ctx.value_inputs.push_back(in ? &slots_[static_cast<size_t>(in->id)] : nullptr);
    }
    for (ir::Value* out : n->outputs()) {
      s.out_ids.push_back(out->id);
      s.ctx.outputs.push_back(&frame_[static_cast<size_t>(out->id)]);
      s.ctx.value_outputs.push_back(&slots_[static_cast<size_t>(out->id)]);
      // Sequence and optional outputs are made by their kernels.
      if (out->storage != ir::Storage::kArena && out->type.is_tensor()) s.needs_infer = true;
    }
    s.ctx.num_threads = num_threads_;
    s.ctx.subgraphs = this;
    s.ctx.node = n.get();
    if (s.schema->shape_from_kernel) {
      s.needs_infer = false;
      std::vector<int32_t> ids = s.out_ids;
      const ir::Node* node = n.get();
      s.ctx.allocate_output = [this, ids, node](size_t i, DType dt, const Shape& shape) {
        return allocate_output(node, ids[i], dt, shape);
      };
    }
    s.planned_done = n->has_attr(memory::kConcatInPlaceAttr);
    s.skip = s.planned_done;
    s.prof.name = n->name;
    s.prof.op_type = n->op_type;
    s.prof.kernel = s.kernel->impl_name();
    s.prof.fused_from = n->fused_from;
    plan.steps.push_back(std::move(s));
  }
}

// An output the planner gave arena bytes (its shape was proven at compile
// time) keeps them, so a caller buffer bound to it receives the result; a
// kernel producing another shape there is refused rather than overflowing.
TensorView* Executor::allocate_output(const ir::Node* node, int32_t id, DType dt, const Shape& shape) {
  const ir::Value* v = values_[static_cast<size_t>(id)];
  if (v->storage != ir::Storage::kArena) return allocate_dynamic(id, dt, shape);
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
  const bool fits = store.defined() && dt != DType::kString && store.dtype() != DType::kString &&
                    store.bytes() >= static_cast<size_t>(n) * dtype_size(dt);
  if (!fits) store = Tensor(dt == DType::kString ? dt : DType::kUInt8,
                            {dt == DType::kString ? n : static_cast<int64_t>(n * dtype_size(dt))});
  tv.data = store.data();
  tv.dtype = dt;
  tv.shape = shape;
  return &tv;
}

void Executor::bind_input(size_t i, const TensorView& v) {
  ir::Value* in = main_.inputs()[i];
  frame_[static_cast<size_t>(in->id)] = v;
}

void Executor::bind_input_value(size_t i, kernels::ValueSlot v) {
  slots_[static_cast<size_t>(main_.inputs()[i]->id)] = std::move(v);
}

const TensorView& Executor::output(size_t i) const {
  return frame_[static_cast<size_t>(main_.outputs()[i]->id)];
}

const AnyValue& Executor::output_value(size_t i) const {
  const ir::Value* y = main_.outputs()[i];
  const kernels::ValueSlot& slot = slots_[static_cast<size_t>(y->id)];
  if (!slot) fail(ErrorCode::kInternal, "output '" + y->name() + "' (" + y->type.str() + ") was not produced");
  return *slot;
}

void Executor::run() {
  omp_set_num_threads(num_threads_);
  run_graph(plans_.at(&main_));
  // Sequences and optionals live outside the memory plan: drop every one
  // but the outputs now, rather than hold them until the next run.
  for (int32_t id : transient_slots_) slots_[static_cast<size_t>(id)].reset();
}

void Executor::run_graph(GraphPlan& plan) {
  for (Step& s : plan.steps) {
    if (!profile_) {
      run_step(s);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    run_step(s);
    auto t1 = std::chrono::steady_clock::now();
    s.prof.total_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    s.prof.calls += 1;
    s.prof.input_shapes.clear();
    int64_t bytes = 0;
    for (const TensorView* in : s.ctx.inputs) {
      s.prof.input_shapes.push_back(in ? in->shape : Shape{});
      if (in) bytes += static_cast<int64_t>(in->bytes());
    }
    for (const TensorView* out : s.ctx.outputs) bytes += static_cast<int64_t>(out->bytes());
    s.prof.bytes_accessed = bytes;
  }
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
      ir::Value* v = values_[static_cast<size_t>(s.out_ids[i])];
      if (!v->type.is_tensor()) continue;
      if (v->storage == ir::Storage::kArena) {
        GEC_CHECK(frame_[static_cast<size_t>(v->id)].shape == ic.out_shapes[i],
                  s.node->describe() + ": planned shape differs from the run-time shape");
        continue;
      }
      allocate_dynamic(s.out_ids[i], ic.out_dtypes[i], ic.out_shapes[i]);
    }
  }
  s.kernel->run(s.ctx);
}

std::vector<AnyValue> Executor::run_values(const ir::Graph& g, const std::vector<const AnyValue*>& inputs) {
  auto it = plans_.find(&g);
  GEC_CHECK(it != plans_.end(), "subgraph was not prepared");
  GEC_CHECK(inputs.size() <= g.inputs().size(), "too many subgraph inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    const ir::Value* in = g.inputs()[i];
    const size_t id = static_cast<size_t>(in->id);
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
    const size_t id = static_cast<size_t>(o->id);
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
  for (const Step& s : plans_.at(&main_).steps) r.push_back(s.prof);
  return r;
}

void Executor::reset_profile() {
  for (auto& [g, plan] : plans_)
    for (Step& s : plan.steps) {
      s.prof.total_ms = 0;
      s.prof.calls = 0;
    }
}

}  // namespace gec::runtime
