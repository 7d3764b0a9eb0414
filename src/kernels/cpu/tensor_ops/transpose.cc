// Transpose (ONNX Transpose-13), DepthToSpace-13 and SpaceToDepth-13. All
// three are a permutation of (possibly reshaped) input dims, done by
// strided_copy; it turns [0,2,1,3] (attention heads) into contiguous row
// copies and [0,2,3,1] / [0,3,1,2] (NCHW<->NHWC) into tiled 2-D transposes.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

/// out = transpose(in viewed as `shape`, perm); any element type.
void permute(const TensorView& in, TensorView& out, const Shape& shape, const std::vector<int64_t>& perm,
             int threads, const std::string& what) {
  const std::vector<int64_t> st = dense_strides(shape);
  std::vector<int64_t> dims(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = shape[perm[i]];
    strides[i] = st[perm[i]];
  }
  dispatch_by_size(in.dtype, what, [&](auto tag) {
    using T = decltype(tag);
    strided_copy(in.as<const T>(), out.as<T>(), dims, strides, threads);
  });
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const ir::Node& n)
      : what_(n.describe()), perm_(n.get_ints("perm")), has_perm_(n.has_attr("perm")) {}
  void run(KernelContext& ctx) override {
    const Shape& s = ctx.in(0).shape;
    const int64_t r = static_cast<int64_t>(s.size());
    std::vector<int64_t> perm(s.size());
    for (int64_t i = 0; i < r; ++i)
      perm[i] = has_perm_ ? (perm_[i] < 0 ? perm_[i] + r : perm_[i]) : r - 1 - i;
    permute(ctx.in(0), ctx.out(0), s, perm, ctx.num_threads, what_);
  }
  std::string impl_name() const override { return "native.transpose"; }

 private:
  std::string what_;
  std::vector<int64_t> perm_;
  bool has_perm_;
};

/// DepthToSpace: DCR views [N,b,b,C',H,W] and permutes [0,3,4,1,5,2]; CRD
/// views [N,C',b,b,H,W] and permutes [0,1,4,2,5,3]. SpaceToDepth views
/// [N,C,H',b,W',b] and permutes [0,3,5,1,2,4].
class SpaceDepthKernel final : public Kernel {
 public:
  SpaceDepthKernel(const ir::Node& n, bool to_space)
      : what_(n.describe()), b_(n.get_int("blocksize")), to_space_(to_space),
        crd_(n.get_string("mode", "DCR") == "CRD") {}
  void run(KernelContext& ctx) override {
    const Shape& s = ctx.in(0).shape;
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3], b = b_;
    Shape view;
    std::vector<int64_t> perm;
    if (!to_space_) {
      view = {N, C, H / b, b, W / b, b};
      perm = {0, 3, 5, 1, 2, 4};
    } else if (crd_) {
      view = {N, C / (b * b), b, b, H, W};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      view = {N, b, b, C / (b * b), H, W};
      perm = {0, 3, 4, 1, 5, 2};
    }
    permute(ctx.in(0), ctx.out(0), view, perm, ctx.num_threads, what_);
  }

 private:
  std::string what_;
  int64_t b_;
  bool to_space_, crd_;
};

GEC_REGISTER_KERNEL("", "Transpose", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<TransposeKernel>(n);
});
GEC_REGISTER_KERNEL("", "DepthToSpace", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<SpaceDepthKernel>(n, true);
});
GEC_REGISTER_KERNEL("", "SpaceToDepth", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<SpaceDepthKernel>(n, false);
});

}  // namespace
}  // namespace gec::kernels::cpu
