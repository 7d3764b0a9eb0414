// Expand-13 (numpy multidirectional broadcast of the input to a shape) and
// Tile-13. Both read the input through stride-0 dims: Expand broadcasts
// size-1 input dims; Tile views output dim k (size r_k * d_k) as the pair
// (r_k, d_k) with stride 0 on r_k.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

void copy_view(const TensorView& in, TensorView& out, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& strides, int threads, const std::string& what) {
  dispatch_by_size(in.dtype, what, [&](auto tag) {
    using T = decltype(tag);
    strided_copy(in.as<const T>(), out.as<T>(), dims, strides, threads);
  });
}

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const Shape& in = ctx.in(0).shape;
    const Shape& out = ctx.out(0).shape;
    const std::vector<int64_t> st = dense_strides(in);
    const size_t lead = out.size() - in.size();
    std::vector<int64_t> strides(out.size(), 0);
    for (size_t i = 0; i < in.size(); ++i) strides[lead + i] = in[i] == 1 ? 0 : st[i];
    copy_view(ctx.in(0), ctx.out(0), out, strides, ctx.num_threads, what_);
  }
  std::string impl_name() const override { return "native.broadcast"; }

 private:
  std::string what_;
};

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const Shape& in = ctx.in(0).shape;
    const std::vector<int64_t> st = dense_strides(in);
    std::vector<int64_t> dims, strides;
    for (size_t i = 0; i < in.size(); ++i) {
      dims.push_back(in[i] == 0 ? 0 : ctx.out(0).shape[i] / in[i]);
      strides.push_back(0);
      dims.push_back(in[i]);
      strides.push_back(st[i]);
    }
    copy_view(ctx.in(0), ctx.out(0), dims, strides, ctx.num_threads, what_);
  }
  std::string impl_name() const override { return "native.broadcast"; }

 private:
  std::string what_;
};

GEC_REGISTER_KERNEL("", "Expand", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<ExpandKernel>(n);
});
GEC_REGISTER_KERNEL("", "Tile", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<TileKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
