// Sequence and optional kernels (ONNX opset 11..17 texts, see
// ops/sequence.cc). Sequences are immutable AnyValues shared between
// producer and consumers: an op that "modifies" a sequence builds a new
// element list that shares the unchanged elements' storage, and a tensor
// entering a sequence is copied out of the arena first (its bytes there are
// reused after its last tensor use).
#include "kernels/cpu/common/axis_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

// A scalar (or one-element) int32/int64 tensor: a position or a split size.
int64_t read_scalar_int(const TensorView& t, const ir::Node& node, const char* what) {
  if (t.numel() != 1)
    fail(ErrorCode::kInvalidArgument, node.describe() + ": " + what + " must have one element, has shape " +
                                          shape_str(t.shape));
  if (t.dtype == DType::kInt64) return *t.as<int64_t>();
  if (t.dtype == DType::kInt32) return *t.as<int32_t>();
  fail(ErrorCode::kInvalidArgument, node.describe() + ": " + what + " must be int32 or int64, is " +
                                        dtype_name(t.dtype));
}

// ONNX sequence positions: [-n, n-1] for reading and erasing, [-n, n] for
// inserting; negative counts from the back.
size_t resolve_position(int64_t pos, size_t n, bool inserting, const ir::Node& node) {
  const int64_t len = static_cast<int64_t>(n);
  const int64_t hi = inserting ? len : len - 1;
  if (pos < -len || pos > hi)
    fail(ErrorCode::kInvalidArgument, node.describe() + ": position " + std::to_string(pos) +
                                          " is out of range for a sequence of " + std::to_string(n) + " tensors");
  return static_cast<size_t>(pos < 0 ? pos + len : pos);
}

void check_elem_dtype(const AnyValue& seq, DType got, const ir::Node& node) {
  if (seq.elem_dtype != DType::kUndefined && got != seq.elem_dtype)
    fail(ErrorCode::kInvalidArgument, node.describe() + ": a " + dtype_name(got) + " tensor cannot join a sequence of " +
                                          dtype_name(seq.elem_dtype));
}

// ---- construction ---------------------------------------------------------------------

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(const ir::Node& n)
      : dtype_(static_cast<DType>(n.get_int("dtype", static_cast<int64_t>(DType::kFloat32)))) {
    if (!dtype_is_valid(static_cast<int32_t>(dtype_)))
      fail(ErrorCode::kInvalidModel, n.describe() + ": invalid dtype " + std::to_string(static_cast<int>(dtype_)));
  }
  void run(KernelContext& ctx) override { ctx.set_value_out(0, AnyValue::sequence(dtype_, {})); }

 private:
  DType dtype_;
};

class SequenceConstructKernel final : public Kernel {
 public:
  explicit SequenceConstructKernel(const ir::Node& n) : node_(n) {
    if (n.inputs().empty()) fail(ErrorCode::kInvalidModel, n.describe() + ": needs at least one input");
  }
  void run(KernelContext& ctx) override {
    std::vector<Tensor> elems;
    const DType dt = ctx.in(0).dtype;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      if (ctx.in(i).dtype != dt)
        fail(ErrorCode::kInvalidArgument, node_.describe() + ": inputs have different dtypes (" + dtype_name(dt) +
                                              ", " + dtype_name(ctx.in(i).dtype) + ")");
      elems.push_back(Tensor::copy_of(ctx.in(i)));
    }
    ctx.set_value_out(0, AnyValue::sequence(dt, std::move(elems)));
  }

 private:
  const ir::Node& node_;
};

class SequenceInsertKernel final : public Kernel {
 public:
  explicit SequenceInsertKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    const AnyValue& seq = ctx.value_in(0);
    check_elem_dtype(seq, ctx.in(1).dtype, node_);
    std::vector<Tensor> elems = seq.elements;
    const size_t at = ctx.has_input(2)
                          ? resolve_position(read_scalar_int(ctx.in(2), node_, "position"), elems.size(), true, node_)
                          : elems.size();
    elems.insert(elems.begin() + static_cast<std::ptrdiff_t>(at), Tensor::copy_of(ctx.in(1)));
    ctx.set_value_out(0, AnyValue::sequence(ctx.in(1).dtype, std::move(elems)));
  }

 private:
  const ir::Node& node_;
};

class SequenceEraseKernel final : public Kernel {
 public:
  explicit SequenceEraseKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    const AnyValue& seq = ctx.value_in(0);
    if (seq.elements.empty()) fail(ErrorCode::kInvalidArgument, node_.describe() + ": the sequence is empty");
    std::vector<Tensor> elems = seq.elements;
    const size_t at =
        ctx.has_input(1) ? resolve_position(read_scalar_int(ctx.in(1), node_, "position"), elems.size(), false, node_)
                         : elems.size() - 1;
    elems.erase(elems.begin() + static_cast<std::ptrdiff_t>(at));
    ctx.set_value_out(0, AnyValue::sequence(seq.elem_dtype, std::move(elems)));
  }

 private:
  const ir::Node& node_;
};

// ---- reading ------------------------------------------------------------------------------

class SequenceAtKernel final : public Kernel {
 public:
  explicit SequenceAtKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    const AnyValue& seq = ctx.value_in(0);
    const size_t at = resolve_position(read_scalar_int(ctx.in(1), node_, "position"), seq.elements.size(), false, node_);
    ctx.copy_to_output(0, seq.elements[at].view());
  }

 private:
  const ir::Node& node_;
};

class SequenceLengthKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) override {
    const AnyValue& seq = ctx.value_in(0);
    TensorView* o = ctx.allocate_output(0, DType::kInt64, {});
    *o->as<int64_t>() = static_cast<int64_t>(seq.elements.size());
  }
};

// ---- splitting and concatenating -----------------------------------------------------

// SplitToSequence-11: `split` absent -> pieces of length 1 along `axis`
// (squeezed unless keepdims = 1); a scalar -> pieces of that length, the
// last one shorter if needed; a 1-D tensor -> those lengths, summing to the
// axis length (keepdims is ignored whenever `split` is given).
class SplitToSequenceKernel final : public Kernel {
 public:
  explicit SplitToSequenceKernel(const ir::Node& n)
      : node_(n), axis_(n.get_int("axis", 0)), keepdims_(n.get_int("keepdims", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    if (axis_ < -r || axis_ >= r)
      fail(ErrorCode::kInvalidModel, node_.describe() + ": axis " + std::to_string(axis_) + " is out of range for " +
                                         shape_str(x.shape));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    const int64_t len = x.shape[axis];
    const std::vector<int64_t> lengths = piece_lengths(ctx, len);
    const bool squeeze = !ctx.has_input(1) && !keepdims_;
    const int64_t outer = dims_product(x.shape, 0, axis), inner = dims_product(x.shape, axis + 1, x.shape.size());
    std::vector<Tensor> elems;
    int64_t start = 0;
    for (int64_t n : lengths) {
      Shape s = x.shape;
      s[axis] = n;
      Tensor piece(x.dtype, s);
      copy_along_axis(x, len, start, piece.view(), n, 0, n, outer, inner);
      if (squeeze) {
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
        piece = piece.reshaped(s);
      }
      elems.push_back(std::move(piece));
      start += n;
    }
    ctx.set_value_out(0, AnyValue::sequence(x.dtype, std::move(elems)));
  }

 private:
  std::vector<int64_t> piece_lengths(const KernelContext& ctx, int64_t len) const {
    if (!ctx.has_input(1)) return std::vector<int64_t>(static_cast<size_t>(len), 1);
    const TensorView& split = ctx.in(1);
    if (split.shape.empty()) {
      const int64_t n = read_scalar_int(split, node_, "split");
      if (n <= 0) fail(ErrorCode::kInvalidArgument, node_.describe() + ": split must be positive, is " + std::to_string(n));
      std::vector<int64_t> r;
      for (int64_t at = 0; at < len; at += n) r.push_back(std::min(n, len - at));
      return r;
    }
    if (split.shape.size() != 1 || (split.dtype != DType::kInt64 && split.dtype != DType::kInt32))
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": split must be an int32/int64 scalar or 1-D tensor");
    std::vector<int64_t> r;
    for (int64_t i = 0; i < split.numel(); ++i)
      r.push_back(split.dtype == DType::kInt64 ? split.as<int64_t>()[i] : split.as<int32_t>()[i]);
    int64_t sum = 0;
    for (int64_t n : r) {
      if (n < 0) fail(ErrorCode::kInvalidArgument, node_.describe() + ": split lengths must be >= 0");
      if (n > len - sum) {  // checked before adding: no overflow
        sum = len + 1;
        break;
      }
      sum += n;
    }
    if (sum != len)
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": split lengths " + shape_str(r) +
                                            " do not sum to the axis length " + std::to_string(len));
    return r;
  }

  const ir::Node& node_;
  int64_t axis_;
  bool keepdims_;
};

// ConcatFromSequence-11: Concat of the elements along `axis`, or, with
// new_axis = 1, a stack along a new axis (then axis may be in [-r-1, r]).
class ConcatFromSequenceKernel final : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const ir::Node& n)
      : node_(n), axis_(n.get_int("axis")), new_axis_(n.get_int("new_axis", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const AnyValue& seq = ctx.value_in(0);
    if (seq.elements.empty())
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": cannot concatenate an empty sequence");
    const Shape& first = seq.elements[0].shape();
    const int64_t r = static_cast<int64_t>(first.size()) + (new_axis_ ? 1 : 0);
    if (axis_ < -r || axis_ >= r)
      fail(ErrorCode::kInvalidModel, node_.describe() + ": axis " + std::to_string(axis_) + " is out of range for rank " +
                                         std::to_string(r));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    // Each element as seen with the concatenation axis present.
    std::vector<Shape> shapes;
    for (const Tensor& e : seq.elements) {
      Shape s = e.shape();
      if (new_axis_) s.insert(s.begin() + static_cast<std::ptrdiff_t>(axis), 1);
      shapes.push_back(std::move(s));
    }
    Shape out_shape = shapes[0];
    out_shape[axis] = 0;
    for (const Shape& s : shapes) {
      bool ok = s.size() == out_shape.size();
      for (size_t d = 0; ok && d < s.size(); ++d) ok = d == axis || s[d] == shapes[0][d];
      if (!ok)
        fail(ErrorCode::kInvalidArgument, node_.describe() + ": elements " + shape_str(first) + " and " +
                                              shape_str(s) + " cannot be concatenated along axis " +
                                              std::to_string(axis_));
      out_shape[axis] += s[axis];
    }
    TensorView* o = ctx.allocate_output(0, seq.elem_dtype == DType::kUndefined ? seq.elements[0].dtype() : seq.elem_dtype,
                                        out_shape);
    const int64_t outer = dims_product(out_shape, 0, axis), inner = dims_product(out_shape, axis + 1, out_shape.size());
    int64_t at = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t n = shapes[i][axis];
      copy_along_axis(seq.elements[i].view(), n, 0, *o, out_shape[axis], at, n, outer, inner);
      at += n;
    }
  }

 private:
  const ir::Node& node_;
  int64_t axis_;
  bool new_axis_;
};

// ---- SequenceMap ---------------------------------------------------------------------------

// SequenceMap-17: runs `body` once per element of input 0; additional
// inputs that are sequences give their i-th element (same length required),
// tensors are passed whole. Output k is the sequence of body output k.
class SequenceMapKernel final : public Kernel {
 public:
  explicit SequenceMapKernel(const ir::Node& n) : node_(n), body_(n.get_graph("body")) {
    if (!body_) fail(ErrorCode::kInvalidModel, n.describe() + ": missing body");
    if (body_->inputs().size() != n.inputs().size() || body_->outputs().size() != n.outputs().size())
      fail(ErrorCode::kInvalidModel, n.describe() + ": body takes " + std::to_string(body_->inputs().size()) +
                                         " inputs and gives " + std::to_string(body_->outputs().size()) +
                                         " outputs; the node has " + std::to_string(n.inputs().size()) + " and " +
                                         std::to_string(n.outputs().size()));
    for (const ir::Value* in : n.inputs()) {
      if (!in) fail(ErrorCode::kInvalidModel, n.describe() + ": inputs may not be omitted");
      is_seq_.push_back(!in->type.is_tensor());
    }
    if (!is_seq_[0]) fail(ErrorCode::kInvalidModel, n.describe() + ": input 0 must be a sequence");
  }

  void run(KernelContext& ctx) override {
    const size_t len = ctx.value_in(0).elements.size();
    std::vector<AnyValue> whole(ctx.inputs.size());
    for (size_t j = 0; j < ctx.inputs.size(); ++j) {
      if (is_seq_[j]) {
        whole[j] = ctx.value_in(j);
        if (whole[j].elements.size() != len)
          fail(ErrorCode::kInvalidArgument, node_.describe() + ": input sequences have different lengths (" +
                                                std::to_string(len) + ", " + std::to_string(whole[j].elements.size()) + ")");
      } else {
        whole[j] = AnyValue::of_tensor(Tensor::copy_of(ctx.in(j)));
      }
    }
    std::vector<std::vector<Tensor>> results(node_.outputs().size());
    std::vector<AnyValue> args(ctx.inputs.size());
    std::vector<const AnyValue*> ptrs(args.size());
    for (size_t i = 0; i < len; ++i) {
      for (size_t j = 0; j < args.size(); ++j) {
        args[j] = is_seq_[j] ? AnyValue::of_tensor(whole[j].elements[i]) : whole[j];
        ptrs[j] = &args[j];
      }
      std::vector<AnyValue> outs = ctx.subgraphs->run_values(*body_, ptrs);
      for (size_t k = 0; k < outs.size(); ++k)
        results[k].push_back(convert_value_kind(outs[k], ValueKind::kTensor, node_.describe()).tensor);
    }
    for (size_t k = 0; k < results.size(); ++k) {
      DType dt = results[k].empty() ? node_.output(k)->type.dtype : results[k][0].dtype();
      ctx.set_value_out(k, AnyValue::sequence(dt, std::move(results[k])));
    }
  }
  std::string impl_name() const override { return "control.sequence_map"; }

 private:
  const ir::Node& node_;
  const ir::Graph* body_;
  std::vector<bool> is_seq_;
};

// ---- optionals -----------------------------------------------------------------------------

// Optional-15: wraps its input, or with none makes ONNX None of the type the
// `type` attribute gave (the output value's IR type).
class OptionalKernel final : public Kernel {
 public:
  explicit OptionalKernel(const ir::Node& n) : node_(n) {
    const ir::TensorType& t = n.output(0)->type;
    if (t.kind != ValueKind::kOptionalTensor && t.kind != ValueKind::kOptionalSequence)
      fail(ErrorCode::kInvalidModel, n.describe() + ": output type " + t.str() + " is not an optional");
  }
  void run(KernelContext& ctx) override {
    const ir::TensorType& t = node_.output(0)->type;
    if (!ctx.has_input(0)) {
      ctx.set_value_out(0, AnyValue::none(t.kind, t.dtype));
      return;
    }
    const AnyValue in = node_.input(0)->type.is_tensor() ? AnyValue::of_tensor(Tensor::copy_of(ctx.in(0)))
                                                          : ctx.value_in(0);
    ctx.set_value_out(0, convert_value_kind(in, t.kind, node_.describe()));
  }

 private:
  const ir::Node& node_;
};

// OptionalHasElement-15. A tensor or sequence input counts as present (the
// kind checker lets Identity-like plumbing reach here; ONNX opset 18 says the
// same), an omitted input as absent.
class OptionalHasElementKernel final : public Kernel {
 public:
  explicit OptionalHasElementKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    bool has = false;
    if (ctx.has_input(0)) has = node_.input(0)->type.is_tensor() || ctx.value_in(0).has_value;
    TensorView* o = ctx.allocate_output(0, DType::kBool, {});
    *o->as<uint8_t>() = has ? 1 : 0;
  }

 private:
  const ir::Node& node_;
};

// OptionalGetElement-15: the held value; None is an error (ONNX leaves it
// undefined; we refuse rather than invent a value).
class OptionalGetElementKernel final : public Kernel {
 public:
  explicit OptionalGetElementKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    const ir::Value* out = node_.output(0);
    if (node_.input(0)->type.is_tensor()) {
      ctx.copy_to_output(0, ctx.in(0));
      return;
    }
    const AnyValue v = convert_value_kind(ctx.value_in(0), out->type.kind, node_.describe());
    if (out->type.is_tensor()) ctx.copy_to_output(0, v.tensor.view());
    else ctx.set_value_out(0, v);
  }

 private:
  const ir::Node& node_;
};

template <typename K>
KernelFactory with_node() {
  return [](const ir::Node& n, const KernelConfig&) { return std::make_unique<K>(n); };
}

GEC_REGISTER_KERNEL("", "SequenceEmpty", with_node<SequenceEmptyKernel>());
GEC_REGISTER_KERNEL("", "SequenceConstruct", with_node<SequenceConstructKernel>());
GEC_REGISTER_KERNEL("", "SequenceInsert", with_node<SequenceInsertKernel>());
GEC_REGISTER_KERNEL("", "SequenceErase", with_node<SequenceEraseKernel>());
GEC_REGISTER_KERNEL("", "SequenceAt", with_node<SequenceAtKernel>());
GEC_REGISTER_KERNEL("", "SequenceLength", [](const ir::Node&, const KernelConfig&) {
  return std::make_unique<SequenceLengthKernel>();
});
GEC_REGISTER_KERNEL("", "SplitToSequence", with_node<SplitToSequenceKernel>());
GEC_REGISTER_KERNEL("", "ConcatFromSequence", with_node<ConcatFromSequenceKernel>());
GEC_REGISTER_KERNEL("", "SequenceMap", with_node<SequenceMapKernel>());
GEC_REGISTER_KERNEL("", "Optional", with_node<OptionalKernel>());
GEC_REGISTER_KERNEL("", "OptionalHasElement", with_node<OptionalHasElementKernel>());
GEC_REGISTER_KERNEL("", "OptionalGetElement", with_node<OptionalGetElementKernel>());

}  // namespace
}  // namespace gec::kernels::cpu
