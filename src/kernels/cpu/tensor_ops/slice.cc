// Slice-13: a strided view of the input (start offset, stride * step per
// axis, negative steps included) copied by strided_copy; whole trailing
// axes merge into contiguous runs. Parameters are normalized by
// ops::compute_slice, the same code the infer function uses. In nhwc
// (LayoutRule::kChannelsLast: input and output both [N][H][W][C] in memory)
// the same view is taken over the NHWC strides, so a channel slice copies
// each pixel's channel range.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/tensor_ops.h"

namespace gec::kernels::cpu {
namespace {

std::vector<int64_t> read_ints(const TensorView& t) {
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
  return r;
}

class SliceKernel final : public Kernel {
 public:
  SliceKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()), nhwc_(config.output_layout(0) == ops::Layout::kNhwc) {
    if (config.input_layout(0) != config.output_layout(0))
      fail(ErrorCode::kInvalidModel, what_ + ": input 0 and output 0 must have one layout");
  }
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    auto err = [this](const std::string& m) { fail(ErrorCode::kInvalidArgument, what_ + ": " + m); };
    const auto sl = ops::compute_slice(in.shape, read_ints(ctx.in(1)), read_ints(ctx.in(2)),
                                       ctx.has_input(3) ? read_ints(ctx.in(3)) : std::vector<int64_t>{},
                                       ctx.has_input(4) ? read_ints(ctx.in(4)) : std::vector<int64_t>{}, err);
    // The axes in memory order: N,C,H,W's slices taken as N,H,W,C in nhwc.
    std::vector<size_t> order(sl.size());
    for (size_t a = 0; a < order.size(); ++a) order[a] = a;
    if (nhwc_) {
      if (sl.size() != 4) fail(ErrorCode::kInvalidModel, what_ + ": planned in layout nhwc, which needs a 4-D input");
      order = {0, 2, 3, 1};
    }
    Shape held(sl.size());
    for (size_t a = 0; a < sl.size(); ++a) held[a] = in.shape[order[a]];
    const std::vector<int64_t> st = dense_strides(held);
    std::vector<int64_t> dims(sl.size()), strides(sl.size());
    int64_t offset = 0;
    for (size_t a = 0; a < sl.size(); ++a) {
      const ops::SliceAxis& s = sl[order[a]];
      dims[a] = s.count;
      strides[a] = s.count > 1 ? s.step * st[a] : 0;  // no overflow for huge steps
      offset += s.start * st[a];
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
  bool nhwc_;
};

GEC_REGISTER_KERNEL("", "Slice", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<SliceKernel>(n, config);
});

}  // namespace
}  // namespace gec::kernels::cpu
