// Slice-13: a strided view of the input (start offset, stride * step per
// axis, negative steps included) copied by strided_copy; whole trailing
// axes merge into contiguous runs. Parameters are normalized by
// ops::compute_slice, the same code the infer function uses. Non-plain
// layouts (LayoutRule::kChannelMove) take the same view over the strides
// the bytes have: in nhwc ([N][H][W][C]) a channel slice copies each
// pixel's channel range; in nChw16c ([N][C/16][H][W][16]) the channel range
// must be whole 16-channel blocks (slice_layout_query says which slices
// are), and those blocks are copied with any N, H, W slice.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/tensor_ops.h"

namespace gec::kernels::cpu {
namespace {

std::vector<int64_t> read_ints(const TensorView& t) {
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
  return r;
}

/// The slice `sl` (one entry per axis of the plain shape `in`) as a view
/// over the bytes of `layout`: the held shape and, per held axis, its
/// slice. Errors (kInvalidModel, `what`): a non-plain layout with a rank
/// other than 4, an nChw16c slice that does not keep whole 16-channel blocks.
void held_view(const Shape& in, const std::vector<ops::SliceAxis>& sl, ops::Layout layout, const std::string& what,
               Shape& held, std::vector<ops::SliceAxis>& axes) {
  held = in;
  axes = sl;
  if (layout == ops::Layout::kPlain) return;
  if (sl.size() != 4)
    fail(ErrorCode::kInvalidModel, what + ": planned in layout " + ops::layout_name(layout) + ", which needs a 4-D input");
  const int64_t b = ops::kBlockedChannels;
  const ops::SliceAxis& c = sl[1];
  if (layout == ops::Layout::kNChw16c &&
      (in[1] % b != 0 || c.start % b != 0 || c.count % b != 0 || (c.count > 1 && c.step != 1)))
    fail(ErrorCode::kInvalidModel, what + ": planned in layout nChw16c, which needs whole 16-channel blocks, got " +
                                       std::to_string(c.count) + " channels from " + std::to_string(c.start));
  held = ops::held_dims(layout, in);
  axes.assign(held.size(), ops::SliceAxis{0, 1, 1});
  for (int64_t a = 0; a < 4; ++a) axes[static_cast<size_t>(ops::held_axis(layout, a))] = sl[static_cast<size_t>(a)];
  if (layout == ops::Layout::kNChw16c) {  // C's blocks, then the 16 lanes of each
    axes[1] = ops::SliceAxis{c.start / b, 1, c.count / b};
    axes[4] = ops::SliceAxis{0, 1, b};
  }
}

class SliceKernel final : public Kernel {
 public:
  SliceKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()), layout_(config.output_layout(0)) {
    if (config.input_layout(0) != layout_)
      fail(ErrorCode::kInvalidModel, what_ + ": input 0 and output 0 must have one layout");
  }
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    auto err = [this](const std::string& m) { fail(ErrorCode::kInvalidArgument, what_ + ": " + m); };
    const auto sl = ops::compute_slice(in.shape, read_ints(ctx.in(1)), read_ints(ctx.in(2)),
                                       ctx.has_input(3) ? read_ints(ctx.in(3)) : std::vector<int64_t>{},
                                       ctx.has_input(4) ? read_ints(ctx.in(4)) : std::vector<int64_t>{}, err);
    Shape held;
    std::vector<ops::SliceAxis> axes;
    held_view(in.shape, sl, layout_, what_, held, axes);
    const std::vector<int64_t> st = dense_strides(held);
    std::vector<int64_t> dims(axes.size()), strides(axes.size());
    int64_t offset = 0;
    for (size_t a = 0; a < axes.size(); ++a) {
      dims[a] = axes[a].count;
      strides[a] = axes[a].count > 1 ? axes[a].step * st[a] : 0;  // no overflow for huge steps
      offset += axes[a].start * st[a];
    }
    if (shape_numel(dims) == 0) return;
    dispatch_by_size(in.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      strided_copy(in.as<const T>() + offset, ctx.out(0).as<T>(), dims, strides, ctx.num_threads);
    });
  }
  std::string impl_name() const override { return "native.slice"; }

 private:
  std::string what_;
  ops::Layout layout_;
};

/// LayoutQuery for Slice (kernels::implementation_for_layout): "native.slice"
/// for a static 4-D float32 input with `src` = `dst` nhwc, or nChw16c when
/// the slice (constant starts, ends, axes, steps) keeps whole 16-channel
/// blocks; "" otherwise (and for plain, which needs no asking).
std::string slice_layout_query(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src != dst || src == ops::Layout::kPlain || n.outputs().empty() || !n.has_input(0)) return "";
  const ir::Value* x = n.input(0);
  if (!x->type.is_static() || x->type.dtype != DType::kFloat32 || x->type.static_shape().size() != 4) return "";
  if (src == ops::Layout::kNhwc) return "native.slice";
  std::vector<std::vector<int64_t>> p(5);
  for (size_t i = 1; i < 5; ++i) {
    if (!n.has_input(i)) continue;
    if (!n.input(i)->is_constant()) return "";
    p[i] = read_ints(n.input(i)->constant->view());
  }
  try {
    const auto err = [](const std::string& m) { fail(ErrorCode::kInvalidModel, m); };
    const Shape xs = x->type.static_shape();
    const auto sl = ops::compute_slice(xs, p[1], p[2], p[3], p[4], err);
    Shape held;
    std::vector<ops::SliceAxis> axes;
    held_view(xs, sl, src, "", held, axes);
    return "native.slice";
  } catch (const Error&) {
    return "";
  }
}

const bool kSliceLayoutQuery = [] {
  register_layout_query("", "Slice", slice_layout_query);
  return true;
}();

GEC_REGISTER_KERNEL("", "Slice", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<SliceKernel>(n, config);
});

}  // namespace
}  // namespace gec::kernels::cpu
