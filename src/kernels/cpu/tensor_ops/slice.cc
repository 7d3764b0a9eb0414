// Slice-13: a strided view of the input (start offset, stride * step per
// axis, negative steps included) copied by strided_copy; whole trailing
// axes merge into contiguous runs. Parameters are normalized by
// ops::compute_slice, the same code the infer function uses.
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
  explicit SliceKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    auto err = [this](const std::string& m) { fail(ErrorCode::kInvalidArgument, what_ + ": " + m); };
    const auto sl = ops::compute_slice(in.shape, read_ints(ctx.in(1)), read_ints(ctx.in(2)),
                                       ctx.has_input(3) ? read_ints(ctx.in(3)) : std::vector<int64_t>{},
                                       ctx.has_input(4) ? read_ints(ctx.in(4)) : std::vector<int64_t>{}, err);
    const std::vector<int64_t> st = dense_strides(in.shape);
    std::vector<int64_t> dims(sl.size()), strides(sl.size());
    int64_t offset = 0;
    for (size_t a = 0; a < sl.size(); ++a) {
      dims[a] = sl[a].count;
      strides[a] = sl[a].count > 1 ? sl[a].step * st[a] : 0;  // no overflow for huge steps
      offset += sl[a].start * st[a];
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
};

GEC_REGISTER_KERNEL("", "Slice", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<SliceKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
