// Concat-13 and Split-13/18. Both see the tensors as [outer, axis * inner]:
// each input (output) owns one contiguous block per outer index, so the
// kernels are block copies, spread over threads by (outer, tensor) pairs.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/tensor_ops.h"

namespace gec::kernels::cpu {
namespace {

/// Product of dims before and from `axis + 1` on.
void outer_inner(const Shape& s, int64_t axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i < axis) outer *= s[i];
    if (i > axis) inner *= s[i];
  }
}

/// The parts of a concatenation: part p has block `blocks[p]` elements per
/// outer index at `offsets[p]` within each row of `row` elements.
struct Parts {
  int64_t outer = 1, row = 0;
  std::vector<int64_t> blocks, offsets;
};

Parts make_parts(const std::vector<const Shape*>& shapes, int64_t axis) {
  Parts p;
  for (const Shape* s : shapes) {
    int64_t inner;
    outer_inner(*s, axis, p.outer, inner);
    p.offsets.push_back(p.row);
    p.blocks.push_back((*s)[axis] * inner);
    p.row += p.blocks.back();
  }
  return p;
}

/// Copies every (outer, part) block; `to_row` true gathers parts into rows
/// (Concat), false scatters rows into parts (Split).
template <typename T>
void move_blocks(const Parts& p, std::vector<T*> parts, T* rows, bool to_row, int threads) {
  const int64_t n = static_cast<int64_t>(parts.size());
  parallel_chunks(p.outer * n, p.outer * p.row, threads, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / n, k = w % n, len = p.blocks[k];
      T* part = parts[k] + o * len;
      T* row = rows + o * p.row + p.offsets[k];
      if (to_row) std::copy_n(part, len, row);
      else std::copy_n(row, len, part);
    }
  });
}

/// Points `shapes` ([N,C,H,W] each) at the dims the bytes of `layout` hold
/// them in (ops::held_dims, stored in `held`) and returns `axis` mapped to
/// those dims; plain leaves both as they are. Errors (kInvalidModel, naming
/// `what`): a non-plain layout with a rank other than 4, nChw16c with a C
/// that is not whole 16-channel blocks.
int64_t hold_parts(ops::Layout layout, std::vector<const Shape*>& shapes, std::vector<Shape>& held, int64_t axis,
                   const std::string& what) {
  if (layout == ops::Layout::kPlain) return axis;
  const std::string in_layout = std::string(": planned in layout ") + ops::layout_name(layout);
  for (const Shape* s : shapes) {
    if (s->size() != 4 || axis < 0 || axis > 3) fail(ErrorCode::kInvalidModel, what + in_layout + ", which needs 4-D tensors");
    if (!ops::layout_fits_channels(layout, (*s)[1]))
      fail(ErrorCode::kInvalidModel, what + in_layout + ", which needs whole 16-channel blocks");
  }
  held.clear();
  held.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    held.push_back(ops::held_dims(layout, *shapes[i]));
    shapes[i] = &held[i];
  }
  return ops::held_axis(layout, axis);
}

/// Concat; in nChw16c (C % 16 == 0, seen as [N,C/16,H,W,16]: each input's
/// channel blocks are one range per batch index, as in plain) and in nhwc
/// (ops/layout.h), where the tensors are seen as [N,H,W,C] and joined on
/// their last axis (hold_parts).
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()), axis_(n.get_int("axis")), layout_(config.output_layout(0)) {
    for (size_t i = 0; i < n.inputs().size(); ++i)
      if (config.input_layout(i) != layout_)
        fail(ErrorCode::kInvalidModel, what_ + ": every input must have the output's layout " +
                                           ops::layout_name(layout_));
  }
  void run(KernelContext& ctx) override {
    const int64_t r = static_cast<int64_t>(ctx.in(0).shape.size());
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (layout_ == ops::Layout::kNhwc && (r != 4 || axis != 1))
      fail(ErrorCode::kInvalidModel, what_ + ": planned in layout nhwc, which needs 4-D inputs joined on axis 1");
    std::vector<Shape> held;
    std::vector<const Shape*> shapes;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) shapes.push_back(&ctx.in(i).shape);
    axis = hold_parts(layout_, shapes, held, axis, what_);
    const Parts p = make_parts(shapes, axis);
    dispatch_by_size(ctx.in(0).dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> parts;
      for (size_t i = 0; i < ctx.inputs.size(); ++i) parts.push_back(const_cast<T*>(ctx.in(i).as<const T>()));
      move_blocks<T>(p, parts, ctx.out(0).as<T>(), true, ctx.num_threads);
    });
  }
  std::string impl_name() const override { return "native.concat"; }

 private:
  std::string what_;
  int64_t axis_;
  ops::Layout layout_;
};

/// Split; in nhwc (LayoutRule::kChannelMove: input and outputs [N][H][W][C]
/// in memory) the tensors are seen as [N,H,W,C] and split on the axis the
/// node's axis names there (a channel Split copies each pixel's ranges); in
/// nChw16c as [N,C/16,H,W,16], a channel Split into whole 16-channel blocks
/// (split_layout_query).
class SplitKernel final : public Kernel {
 public:
  SplitKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()), axis_(n.get_int("axis", 0)), layout_(config.input_layout(0)) {
    for (size_t i = 0; i < n.outputs().size(); ++i)
      if (config.output_layout(i) != layout_)
        fail(ErrorCode::kInvalidModel, what_ + ": every output must have the input's layout " +
                                           ops::layout_name(layout_));
  }
  void run(KernelContext& ctx) override {
    const int64_t r = static_cast<int64_t>(ctx.in(0).shape.size());
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    std::vector<Shape> held;
    std::vector<const Shape*> shapes;
    for (TensorView* o : ctx.outputs) shapes.push_back(&o->shape);
    axis = hold_parts(layout_, shapes, held, axis, what_);
    const Parts p = make_parts(shapes, axis);
    dispatch_by_size(ctx.in(0).dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> parts;
      for (TensorView* o : ctx.outputs) parts.push_back(o->as<T>());
      move_blocks<T>(p, parts, const_cast<T*>(ctx.in(0).as<const T>()), false, ctx.num_threads);
    });
  }
  std::string impl_name() const override { return "native.split"; }

 private:
  std::string what_;
  int64_t axis_;
  ops::Layout layout_;
};

/// LayoutQuery for Split (kernels::implementation_for_layout): "native.split"
/// for a static 4-D float32 input with `src` = `dst` nhwc, or nChw16c when the
/// input and every output have whole 16-channel blocks (any axis); ""
/// otherwise.
std::string split_layout_query(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src != dst || src == ops::Layout::kPlain || n.outputs().empty() || !n.has_input(0)) return "";
  const ir::Value* x = n.input(0);
  if (!x->type.is_static() || x->type.dtype != DType::kFloat32 || x->type.static_shape().size() != 4) return "";
  if (src == ops::Layout::kNhwc) return "native.split";
  if (x->type.static_shape()[1] % ops::kBlockedChannels != 0) return "";
  for (const ir::Value* o : n.outputs())
    if (!o || !o->type.is_static() || o->type.static_shape().size() != 4 ||
        o->type.static_shape()[1] % ops::kBlockedChannels != 0)
      return "";
  return "native.split";
}

const bool kSplitLayoutQuery = [] {
  register_layout_query("", "Split", split_layout_query);
  return true;
}();

GEC_REGISTER_KERNEL("", "Concat", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<ConcatKernel>(n, config);
});
GEC_REGISTER_KERNEL("", "Split", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<SplitKernel>(n, config);
});

}  // namespace
}  // namespace gec::kernels::cpu
