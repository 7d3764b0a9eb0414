// Transpose (ONNX Transpose-13), DepthToSpace-13 and SpaceToDepth-13. All
// three are a permutation of (possibly reshaped) input dims, done by
// strided_copy; it turns [0,2,1,3] (attention heads) into contiguous row
// copies and [0,2,3,1] / [0,3,1,2] (NCHW<->NHWC) into tiled 2-D transposes.
// A Transpose whose input arrives in nhwc or nChw16c (ops/layout.h) permutes
// the held dims instead: [0,2,3,1] of an nhwc input is one contiguous copy.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/tensor_ops.h"

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

/// Transpose; input 0 plain or a [N,C,H,W] held in nhwc or nChw16c, output
/// plain or (4-D) nhwc (LayoutRule::kTranspose). An nhwc output [N,C,H,W]
/// holds the plain transpose by perm o (0,2,3,1), so that permutation of
/// the input is what gets copied.
class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()), perm_(n.get_ints("perm")), has_perm_(n.has_attr("perm")),
        in_layout_(config.input_layout(0)), out_layout_(config.output_layout(0)) {
    if (out_layout_ == ops::Layout::kNChw16c)
      fail(ErrorCode::kUnsupported, what_ + ": Transpose writes plain or nhwc data, not nChw16c");
  }
  void run(KernelContext& ctx) override {
    const Shape& s = ctx.in(0).shape;
    const int64_t r = static_cast<int64_t>(s.size());
    const std::vector<int64_t> perm = ops::transpose_perm(perm_, has_perm_, r);
    if (in_layout_ == ops::Layout::kPlain && out_layout_ == ops::Layout::kPlain)
      return permute(ctx.in(0), ctx.out(0), s, perm, ctx.num_threads, what_);
    if (r != 4)
      fail(ErrorCode::kUnsupported, what_ + ": a Transpose in a non-plain layout needs a 4-D input, got " +
                                        shape_str(s));
    if (!ops::layout_fits_channels(in_layout_, s[1]))
      fail(ErrorCode::kUnsupported, what_ + ": an nChw16c input needs C % 16 == 0, got C = " + std::to_string(s[1]));
    Shape view;
    const std::vector<int64_t> held = ops::held_transpose(in_layout_, out_layout_, s, perm, &view);
    permute(ctx.in(0), ctx.out(0), view, held, ctx.num_threads, what_);
  }
  std::string impl_name() const override {
    std::string name = "native.transpose";
    if (in_layout_ != ops::Layout::kPlain) name += std::string(".from_") + ops::layout_name(in_layout_);
    if (out_layout_ != ops::Layout::kPlain) name += std::string(".to_") + ops::layout_name(out_layout_);
    return name;
  }

 private:
  std::string what_;
  std::vector<int64_t> perm_;
  bool has_perm_;
  ops::Layout in_layout_, out_layout_;
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

GEC_REGISTER_KERNEL("", "Transpose", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<TransposeKernel>(n, config);
});
GEC_REGISTER_KERNEL("", "DepthToSpace", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<SpaceDepthKernel>(n, true);
});
GEC_REGISTER_KERNEL("", "SpaceToDepth", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<SpaceDepthKernel>(n, false);
});

}  // namespace
}  // namespace gec::kernels::cpu
