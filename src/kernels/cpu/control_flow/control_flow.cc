// Control flow through the executor's SubgraphRunner (the body's outputs
// come back as copies, so loop state can be fed to the next iteration).
// If outputs and Loop-carried values may be sequences or optionals too:
//  - If (ONNX If-16): runs then_branch or else_branch; its outputs become the
//    node's outputs.
//  - Loop (ONNX Loop-16): runs `body` while i < M and cond; carries N values
//    from one iteration to the next and stacks K scan outputs along a new
//    axis 0.
//  - Scan (ONNX Scan-16): runs `body` once per slice of the scan inputs
//    (along scan_input_axes, reversed per scan_input_directions), carries N
//    states and stacks K scan outputs along scan_output_axes.
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/common/axis_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

bool read_condition(const TensorView& c, const ir::Node& node) {
  if (c.numel() != 1)
    fail(ErrorCode::kInvalidArgument, node.describe() + ": cond must have one element, has " + shape_str(c.shape));
  switch (c.dtype) {
    case DType::kBool: case DType::kUInt8: case DType::kInt8: return *c.as<uint8_t>() != 0;
    case DType::kInt32: return *c.as<int32_t>() != 0;
    case DType::kInt64: return *c.as<int64_t>() != 0;
    case DType::kFloat32: return *c.as<float>() != 0.f;
    default: fail(ErrorCode::kUnsupported, node.describe() + ": cond of dtype " + dtype_name(c.dtype));
  }
}

// Stores `v` as node output i, converted to the output's kind (a Loop may
// carry an optional in and a sequence out; a tensor output is copied).
void emit_value(KernelContext& ctx, const ir::Node& node, size_t i, const AnyValue& v) {
  if (i >= ctx.outputs.size()) return;
  const ir::Value* out = node.output(i);
  const std::string what = node.describe() + " output '" + out->name() + "'";
  if (!out->type.is_tensor()) {
    ctx.set_value_out(i, convert_value_kind(v, out->type.kind, what));
    return;
  }
  ctx.copy_to_output(i, v.kind == ValueKind::kTensor ? v.tensor.view()
                                                     : convert_value_kind(v, ValueKind::kTensor, what).tensor.view());
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const ir::Node& n) : node_(n) {
    then_ = n.get_graph("then_branch");
    else_ = n.get_graph("else_branch");
    if (!then_ || !else_) fail(ErrorCode::kInvalidModel, n.describe() + ": missing then_branch/else_branch");
    if (then_->outputs().size() != n.outputs().size() || else_->outputs().size() != n.outputs().size())
      fail(ErrorCode::kInvalidModel, n.describe() + ": branch output count differs from the node's");
  }
  void run(KernelContext& ctx) override {
    const ir::Graph* g = read_condition(ctx.in(0), node_) ? then_ : else_;
    std::vector<AnyValue> outs = ctx.subgraphs->run_values(*g, {});
    for (size_t i = 0; i < outs.size(); ++i) emit_value(ctx, node_, i, outs[i]);
  }
  std::string impl_name() const override { return "control.if"; }

 private:
  const ir::Node& node_;
  const ir::Graph* then_;
  const ir::Graph* else_;
};

GEC_REGISTER_KERNEL("", "If", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<IfKernel>(n);
});

// ---- slicing and stacking along an axis -------------------------------------------

// t[..., index, ...] along `axis`, with that axis removed.
Tensor take_slice(const TensorView& t, size_t axis, int64_t index) {
  Shape s = t.shape;
  const int64_t len = s[axis];
  s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor r(t.dtype, s);
  const TensorView rv = r.view();
  copy_along_axis(t, len, index, rv, 1, 0, 1, dims_product(t.shape, 0, axis),
                  dims_product(t.shape, axis + 1, t.shape.size()));
  return r;
}

// out[..., index, ...] = part along `axis` (part's shape is out's without axis).
void put_slice(const TensorView& part, const TensorView& out, size_t axis, int64_t index) {
  copy_along_axis(part, 1, 0, out, out.shape[axis], index, 1, dims_product(out.shape, 0, axis),
                  dims_product(out.shape, axis + 1, out.shape.size()));
}

void emit_copy(KernelContext& ctx, size_t i, const Tensor& t) {
  if (i < ctx.outputs.size()) ctx.copy_to_output(i, t.view());
}

// Stacks equally shaped `parts` along `axis` of the result (reversed when
// asked); with no parts, the shape comes from the body's declared output
// type (unknown dims -> 0).
Tensor stack(const std::vector<Tensor>& parts, int64_t axis, bool reverse, const ir::Value* declared,
             const ir::Node& node) {
  const int64_t n = static_cast<int64_t>(parts.size());
  Shape part_shape;
  DType dt = declared->type.dtype;
  if (!parts.empty()) {
    part_shape = parts[0].shape();
    dt = parts[0].dtype();
  } else if (declared->type.has_shape) {
    for (const ir::Dim& d : declared->type.dims) part_shape.push_back(d.is_static() ? d.value : 0);
  }
  const int64_t r = static_cast<int64_t>(part_shape.size()) + 1;
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    fail(ErrorCode::kInvalidModel, node.describe() + ": scan output axis " + std::to_string(axis) +
                                       " is out of range for rank " + std::to_string(r));
  Shape out_shape = part_shape;
  out_shape.insert(out_shape.begin() + a, n);
  Tensor out(dt == DType::kUndefined ? DType::kFloat32 : dt, out_shape);
  for (int64_t k = 0; k < n; ++k) {
    const Tensor& p = parts[static_cast<size_t>(k)];
    if (p.shape() != part_shape || p.dtype() != dt)
      fail(ErrorCode::kInvalidArgument, node.describe() + ": a scan output changes shape or dtype between " +
                                            "iterations (" + shape_str(part_shape) + " then " +
                                            shape_str(p.shape()) + ")");
    put_slice(p.view(), out.view(), static_cast<size_t>(a), reverse ? n - 1 - k : k);
  }
  return out;
}

// ---- Loop ----------------------------------------------------------------------------

int64_t read_trip_count(const TensorView& m, const ir::Node& node) {
  if (m.numel() != 1) fail(ErrorCode::kInvalidArgument, node.describe() + ": M must have one element");
  if (m.dtype == DType::kInt64) return *m.as<int64_t>();
  if (m.dtype == DType::kInt32) return *m.as<int32_t>();
  fail(ErrorCode::kUnsupported, node.describe() + ": M of dtype " + dtype_name(m.dtype));
}

class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const ir::Node& n) : node_(n), body_(n.get_graph("body")) {
    if (!body_) fail(ErrorCode::kInvalidModel, n.describe() + ": missing body");
    if (n.inputs().size() < 2) fail(ErrorCode::kInvalidModel, n.describe() + ": needs inputs M and cond");
    carried_ = n.inputs().size() - 2;
    if (body_->inputs().size() != carried_ + 2 || body_->outputs().size() < carried_ + 1)
      fail(ErrorCode::kInvalidModel, n.describe() + ": body signature does not match " +
                                         std::to_string(carried_) + " loop-carried values");
    scans_ = body_->outputs().size() - 1 - carried_;
  }

  void run(KernelContext& ctx) override {
    const int64_t trips = ctx.has_input(0) ? read_trip_count(ctx.in(0), node_) : std::numeric_limits<int64_t>::max();
    bool cond = ctx.has_input(1) ? read_condition(ctx.in(1), node_) : true;
    // Loop-carried values may be tensors, sequences or optionals.
    std::vector<AnyValue> state;
    for (size_t j = 0; j < carried_; ++j) {
      if (!ctx.has_input(2 + j)) fail(ErrorCode::kInvalidModel, node_.describe() + ": loop-carried input missing");
      if (node_.input(2 + j)->type.is_tensor()) state.push_back(AnyValue::of_tensor(Tensor::copy_of(ctx.in(2 + j))));
      else state.push_back(ctx.value_in(2 + j));
    }
    std::vector<std::vector<Tensor>> scans(scans_);
    AnyValue iter = AnyValue::of_tensor(Tensor(DType::kInt64, {}));
    AnyValue cond_in = AnyValue::of_tensor(Tensor(DType::kBool, {}));
    std::vector<const AnyValue*> ptrs(carried_ + 2);
    for (int64_t i = 0; i < trips && cond; ++i) {
      *iter.tensor.as<int64_t>() = i;
      *cond_in.tensor.as<uint8_t>() = 1;
      ptrs[0] = &iter;
      ptrs[1] = &cond_in;
      for (size_t j = 0; j < carried_; ++j) ptrs[2 + j] = &state[j];
      std::vector<AnyValue> outs = ctx.subgraphs->run_values(*body_, ptrs);
      cond = read_condition(convert_value_kind(outs[0], ValueKind::kTensor, node_.describe()).tensor.view(), node_);
      for (size_t j = 0; j < carried_; ++j) state[j] = std::move(outs[1 + j]);
      for (size_t k = 0; k < scans_; ++k)
        scans[k].push_back(convert_value_kind(outs[1 + carried_ + k], ValueKind::kTensor, node_.describe()).tensor);
    }
    for (size_t j = 0; j < carried_; ++j) emit_value(ctx, node_, j, state[j]);
    for (size_t k = 0; k < scans_; ++k)
      emit_copy(ctx, carried_ + k, stack(scans[k], 0, false, body_->outputs()[1 + carried_ + k], node_));
  }
  std::string impl_name() const override { return "control.loop"; }

 private:
  const ir::Node& node_;
  const ir::Graph* body_;
  size_t carried_ = 0;
  size_t scans_ = 0;
};

GEC_REGISTER_KERNEL("", "Loop", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<LoopKernel>(n);
});

// ---- Scan ----------------------------------------------------------------------------

// Scan-9+ runs one sequence. Scan-8 (canonicalize.cc gives it the Scan-16
// attributes plus batch_major = 1) has a leading batch axis on every state
// and scan input: each batch row is one Scan-9 run, and the results are
// stacked along that axis again.
class ScanKernel final : public Kernel {
 public:
  explicit ScanKernel(const ir::Node& n) : node_(n), body_(n.get_graph("body")) {
    if (!body_) fail(ErrorCode::kInvalidModel, n.describe() + ": missing body");
    batch_major_ = n.get_int("batch_major", 0) != 0;
    first_ = batch_major_ ? 1 : 0;  // Scan-8's input 0 is sequence_lens
    const int64_t m = n.get_int("num_scan_inputs");
    if (m < 1 || static_cast<size_t>(m) + first_ > n.inputs().size())
      fail(ErrorCode::kInvalidModel, n.describe() + ": bad num_scan_inputs " + std::to_string(m));
    scan_in_ = static_cast<size_t>(m);
    states_ = n.inputs().size() - first_ - scan_in_;
    if (body_->inputs().size() != states_ + scan_in_ || body_->outputs().size() < states_)
      fail(ErrorCode::kInvalidModel, n.describe() + ": body signature does not match the node");
    scan_out_ = body_->outputs().size() - states_;
    in_axes_ = n.get_ints("scan_input_axes", std::vector<int64_t>(scan_in_, 0));
    in_dirs_ = n.get_ints("scan_input_directions", std::vector<int64_t>(scan_in_, 0));
    out_axes_ = n.get_ints("scan_output_axes", std::vector<int64_t>(scan_out_, 0));
    out_dirs_ = n.get_ints("scan_output_directions", std::vector<int64_t>(scan_out_, 0));
    if (in_axes_.size() != scan_in_ || in_dirs_.size() != scan_in_ || out_axes_.size() != scan_out_ ||
        out_dirs_.size() != scan_out_)
      fail(ErrorCode::kInvalidModel, n.describe() + ": scan axes/directions attributes have the wrong length");
  }

  void run(KernelContext& ctx) override {
    std::vector<TensorView> states, xs;
    for (size_t j = 0; j < states_; ++j) states.push_back(ctx.in(first_ + j));
    for (size_t m = 0; m < scan_in_; ++m) xs.push_back(ctx.in(first_ + states_ + m));
    if (!batch_major_) {
      std::vector<Tensor> outs = run_sequence(ctx, states, xs);
      for (size_t i = 0; i < outs.size(); ++i) emit_copy(ctx, i, outs[i]);
      return;
    }
    if (ctx.has_input(0))
      fail(ErrorCode::kUnsupported, node_.describe() + ": Scan-8 sequence_lens is not supported");
    const int64_t batch = xs[0].shape.empty() ? 0 : xs[0].shape[0];
    std::vector<std::vector<Tensor>> per_output(states_ + scan_out_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> keep;
      std::vector<TensorView> sb, xb;
      for (const TensorView& t : states) sb.push_back(keep.emplace_back(take_slice(t, 0, b)).view());
      for (const TensorView& t : xs) xb.push_back(keep.emplace_back(take_slice(t, 0, b)).view());
      std::vector<Tensor> outs = run_sequence(ctx, sb, xb);
      for (size_t i = 0; i < outs.size(); ++i) per_output[i].push_back(std::move(outs[i]));
    }
    for (size_t i = 0; i < per_output.size(); ++i)
      emit_copy(ctx, i, stack(per_output[i], 0, false, body_->outputs()[i], node_));
  }
  std::string impl_name() const override { return "control.scan"; }

 private:
  // One Scan-9 run: final states, then the stacked scan outputs.
  std::vector<Tensor> run_sequence(KernelContext& ctx, const std::vector<TensorView>& init,
                                   const std::vector<TensorView>& xs) {
    std::vector<size_t> axes(scan_in_);
    int64_t len = -1;
    for (size_t m = 0; m < scan_in_; ++m) {
      const TensorView& t = xs[m];
      const int64_t r = static_cast<int64_t>(t.shape.size());
      const int64_t a = in_axes_[m] < 0 ? in_axes_[m] + r : in_axes_[m];
      if (a < 0 || a >= r)
        fail(ErrorCode::kInvalidModel, node_.describe() + ": scan_input_axes[" + std::to_string(m) +
                                           "] is out of range for " + shape_str(t.shape));
      axes[m] = static_cast<size_t>(a);
      if (len >= 0 && t.shape[axes[m]] != len)
        fail(ErrorCode::kInvalidArgument, node_.describe() + ": scan inputs have different sequence lengths");
      len = t.shape[axes[m]];
    }
    std::vector<Tensor> state;
    for (const TensorView& t : init) state.push_back(Tensor::copy_of(t));
    std::vector<std::vector<Tensor>> scans(scan_out_);
    std::vector<Tensor> slices(scan_in_);
    std::vector<TensorView> views(states_ + scan_in_);
    std::vector<const TensorView*> ptrs(views.size());
    for (int64_t i = 0; i < len; ++i) {
      for (size_t m = 0; m < scan_in_; ++m) slices[m] = take_slice(xs[m], axes[m], in_dirs_[m] ? len - 1 - i : i);
      for (size_t j = 0; j < states_; ++j) views[j] = state[j].view();
      for (size_t m = 0; m < scan_in_; ++m) views[states_ + m] = slices[m].view();
      for (size_t j = 0; j < views.size(); ++j) ptrs[j] = &views[j];
      std::vector<Tensor> outs = ctx.subgraphs->run(*body_, ptrs);
      for (size_t j = 0; j < states_; ++j) state[j] = std::move(outs[j]);
      for (size_t k = 0; k < scan_out_; ++k) scans[k].push_back(std::move(outs[states_ + k]));
    }
    for (size_t k = 0; k < scan_out_; ++k)
      state.push_back(stack(scans[k], out_axes_[k], out_dirs_[k] != 0, body_->outputs()[states_ + k], node_));
    return state;
  }

  const ir::Node& node_;
  const ir::Graph* body_;
  bool batch_major_ = false;
  size_t first_ = 0;
  size_t scan_in_ = 0, states_ = 0, scan_out_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

GEC_REGISTER_KERNEL("", "Scan", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<ScanKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
