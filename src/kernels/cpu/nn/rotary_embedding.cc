// RotaryEmbedding-23 (rotary position embedding, RoFormer: Su et al. 2021,
// arXiv:2104.09864), per the ONNX operator text and its reference
// implementation. For each head vector of X, the first rot =
// rotary_embedding_dim entries (all when 0) are rotated pairwise by the
// angles whose cosines and sines the caches hold for the token's position:
//   non-interleaved: pairs (x[i], x[i + rot/2]), interleaved: (x[2i], x[2i+1]);
//   (x1, x2) -> (cos * x1 - sin * x2, sin * x1 + cos * x2).
// The rest of the vector is copied. float32 and float64.
#include <algorithm>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const ir::Node& n)
      : what_(n.describe()),
        interleaved_(n.get_int("interleaved", 0) != 0),
        num_heads_(n.get_int("num_heads", 0)),
        rot_attr_(n.get_int("rotary_embedding_dim", 0)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& cos_cache = ctx.in(1);
    const TensorView& sin_cache = ctx.in(2);
    const TensorView* pos = ctx.has_input(3) ? &ctx.in(3) : nullptr;
    TensorView& y = ctx.out(0);
    // Strides of (b, h, s) in elements, for both layouts.
    int64_t B = x.shape[0], H, S, D, sb, sh, ss;
    if (x.shape.size() == 4) {  // [B, H, S, D]
      H = x.shape[1], S = x.shape[2], D = x.shape[3];
      ss = D, sh = S * D, sb = H * S * D;
    } else {  // [B, S, H * D]
      H = num_heads_, S = x.shape[1], D = x.shape[2] / num_heads_;
      sh = D, ss = H * D, sb = S * H * D;
    }
    const int64_t rot = rot_attr_ == 0 ? D : rot_attr_, half = rot / 2;
    const int64_t max_pos = pos ? cos_cache.shape[0] : 0;
    if (pos)  // checked before the parallel loop, which must not throw
      for (int64_t i = 0; i < B * S; ++i)
        if (const int64_t p = position(*pos, i); p < 0 || p >= max_pos)
          fail(ErrorCode::kInvalidArgument, what_ + ": position_ids[" + std::to_string(i / S) + "," +
                                                std::to_string(i % S) + "] = " + std::to_string(p) +
                                                " is outside the caches' 0.." + std::to_string(max_pos - 1));
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* xs = x.as<const T>();
      const T* cs = cos_cache.as<const T>();
      const T* sn = sin_cache.as<const T>();
      T* ys = y.as<T>();
      parallel_chunks(B * S, x.numel(), ctx.num_threads, [&](int64_t begin, int64_t end) {
        for (int64_t bs = begin; bs < end; ++bs) {
          const int64_t b = bs / S, s = bs % S;
          const int64_t row = pos ? position(*pos, bs) : bs;  // the cache row: the token's position, or (b, s)
          const T* c = cs + row * half;
          const T* sv = sn + row * half;
          for (int64_t h = 0; h < H; ++h) {
            const T* in = xs + b * sb + h * sh + s * ss;
            T* out = ys + b * sb + h * sh + s * ss;
            for (int64_t i = 0; i < half; ++i) {
              const int64_t i1 = interleaved_ ? 2 * i : i, i2 = interleaved_ ? 2 * i + 1 : i + half;
              const T x1 = in[i1], x2 = in[i2];
              out[i1] = c[i] * x1 - sv[i] * x2;
              out[i2] = sv[i] * x1 + c[i] * x2;
            }
            std::copy(in + rot, in + D, out + rot);
          }
        }
      });
    });
  }
  std::string impl_name() const override { return "native"; }

 private:
  static int64_t position(const TensorView& p, int64_t i) {
    return p.dtype == DType::kInt32 ? p.as<int32_t>()[i] : p.as<int64_t>()[i];
  }
  std::string what_;
  bool interleaved_;
  int64_t num_heads_, rot_attr_;
};

GEC_REGISTER_KERNEL("", "RotaryEmbedding", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<RotaryEmbeddingKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
