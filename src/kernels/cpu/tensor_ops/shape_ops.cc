// Shape-15, Size-13, ConstantOfShape-9, Range-11, EyeLike-9, OneHot-11,
// Trilu-14 and NonZero-13: small ops that read shapes or generate tensors.
// NonZero's output size depends on the data, so it allocates its output.
#include <cstring>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/tensor_ops.h"

namespace gec::kernels::cpu {
namespace {

template <typename K>
KernelFactory factory() {
  return [](const ir::Node& n, const KernelConfig&) { return std::make_unique<K>(n); };
}

class ShapeKernel final : public Kernel {
 public:
  // The output length (end - start, clamped) was fixed by the infer function.
  explicit ShapeKernel(const ir::Node& n) : start_(n.get_int("start", 0)) {}
  void run(KernelContext& ctx) override {
    const Shape& s = ctx.in(0).shape;
    const int64_t r = static_cast<int64_t>(s.size());
    auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t b = clampi(start_);
    int64_t* out = ctx.out(0).as<int64_t>();
    for (int64_t i = 0; i < ctx.out(0).numel(); ++i) out[i] = s[b + i];
  }

 private:
  int64_t start_;
};

class SizeKernel final : public Kernel {
 public:
  explicit SizeKernel(const ir::Node&) {}
  void run(KernelContext& ctx) override { ctx.out(0).as<int64_t>()[0] = ctx.in(0).numel(); }
};

/// Fills the output with the one element of the `value` attribute (float 0
/// when absent).
class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const ir::Node& n) : what_(n.describe()) {
    if (const Tensor* v = n.get_tensor("value")) value_ = Tensor::copy_of(v->view());
    else value_ = Tensor(DType::kFloat32, {1});
  }
  void run(KernelContext& ctx) override {
    dispatch_by_size(value_.dtype(), what_, [&](auto tag) {
      using T = decltype(tag);
      std::fill_n(ctx.out(0).as<T>(), ctx.out(0).numel(), value_.as<T>()[0]);
    });
  }

 private:
  std::string what_;
  Tensor value_;
};

/// out[i] = start + i * delta (computed per element, not accumulated).
class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    dispatch_arith(ctx.in(0).dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T start = ctx.in(0).as<const T>()[0], delta = ctx.in(2).as<const T>()[0];
      T* out = ctx.out(0).as<T>();
      for (int64_t i = 0; i < ctx.out(0).numel(); ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    });
  }

 private:
  std::string what_;
};

/// The bit pattern of 1 in a dtype, as a value of the same-size unsigned type.
uint64_t one_bits(DType t, const std::string& what) {
  switch (t) {
    case DType::kFloat32: { float f = 1.f; uint32_t u; std::memcpy(&u, &f, 4); return u; }
    case DType::kFloat64: { double f = 1.0; uint64_t u; std::memcpy(&u, &f, 8); return u; }
    case DType::kFloat16: return 0x3C00;
    case DType::kBFloat16: return 0x3F80;
    case DType::kString: case DType::kUndefined: case DType::kComplex64: case DType::kComplex128:
      fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not supported");
    default: return 1;  // integers and bool
  }
}

class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const ir::Node& n) : what_(n.describe()), k_(n.get_int("k", 0)) {}
  void run(KernelContext& ctx) override {
    TensorView& out = ctx.out(0);
    const int64_t rows = out.shape[0], cols = out.shape[1];
    const uint64_t one = one_bits(out.dtype, what_);
    dispatch_by_size(out.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        T* p = out.as<T>();
        std::fill_n(p, rows * cols, T{0});
        for (int64_t i = 0; i < rows; ++i)
          if (i + k_ >= 0 && i + k_ < cols) p[i * cols + i + k_] = static_cast<T>(one);
      }
    });
  }

 private:
  std::string what_;
  int64_t k_;
};

/// Output [outer, depth, inner] view: out[o, d, i] = on if index[o, i] == d.
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", -1)) {}
  void run(KernelContext& ctx) override {
    const TensorView& idx = ctx.in(0);
    auto err = [this](const std::string& m) { fail(ErrorCode::kInvalidArgument, what_ + ": " + m); };
    const int64_t r = static_cast<int64_t>(idx.shape.size()) + 1;
    const int64_t axis = ops::normalize_axis_or(axis_, r, err);
    const int64_t depth = ops::element_as_int64(ctx.in(1), 0, err);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r - 1; ++i) (i < axis ? outer : inner) *= idx.shape[i];
    dispatch_by_size(ctx.in(2).dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T off = ctx.in(2).as<const T>()[0], on = ctx.in(2).as<const T>()[1];
      T* out = ctx.out(0).as<T>();
      std::fill_n(out, ctx.out(0).numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = ops::element_as_int64(idx, o * inner + i, err);
          if (v < 0) v += depth;
          if (v >= 0 && v < depth) out[(o * depth + v) * inner + i] = on;
        }
    });
  }

 private:
  std::string what_;
  int64_t axis_;
};

/// Keeps elements with j - i >= k (upper) or j - i <= k (lower) of each
/// trailing [N, M] matrix, zeroes the rest.
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const ir::Node& n) : what_(n.describe()), upper_(n.get_int("upper", 1) != 0) {}
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    const int64_t k = ctx.has_input(1) ? ctx.in(1).as<const int64_t>()[0] : 0;
    const size_t r = in.shape.size();
    const int64_t rows = in.shape[r - 2], cols = in.shape[r - 1];
    const int64_t mats = rows * cols > 0 ? in.numel() / (rows * cols) : 0;
    dispatch_by_size(in.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = in.as<const T>();
      T* dst = ctx.out(0).as<T>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t e = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            dst[e] = keep ? src[e] : T{};
          }
    });
  }

 private:
  std::string what_;
  bool upper_;
};

/// True when element i is not zero (-0.0 counts as zero, NaN as non-zero).
bool nonzero_at(const TensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::kFloat32: return v.as<float>()[i] != 0.f;
    case DType::kFloat64: return v.as<double>()[i] != 0.0;
    case DType::kFloat16: case DType::kBFloat16: return (v.as<uint16_t>()[i] & 0x7fff) != 0;
    default: {
      const size_t es = dtype_size(v.dtype);
      const auto* p = static_cast<const unsigned char*>(v.data) + i * es;
      for (size_t b = 0; b < es; ++b)
        if (p[b]) return true;
      return false;
    }
  }
}

/// Output [rank, count]: the coordinates of non-zero elements in row-major order.
class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    if (in.dtype == DType::kString || dtype_size(in.dtype) == 0 || dtype_size(in.dtype) > 8)
      fail(ErrorCode::kUnsupported, what_ + ": dtype " + dtype_name(in.dtype) + " is not supported");
    int64_t count = 0;
    for (int64_t i = 0; i < in.numel(); ++i) count += nonzero_at(in, i);
    const int64_t r = static_cast<int64_t>(in.shape.size());
    TensorView* out = ctx.allocate_output(0, DType::kInt64, {r, count});
    int64_t* o = out->as<int64_t>();
    int64_t c = 0;
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (!nonzero_at(in, i)) continue;
      int64_t t = i;
      for (int64_t k = r; k-- > 0;) {
        o[k * count + c] = t % in.shape[k];
        t /= in.shape[k];
      }
      ++c;
    }
  }

 private:
  std::string what_;
};

GEC_REGISTER_KERNEL("", "Shape", factory<ShapeKernel>());
GEC_REGISTER_KERNEL("", "Size", factory<SizeKernel>());
GEC_REGISTER_KERNEL("", "ConstantOfShape", factory<ConstantOfShapeKernel>());
GEC_REGISTER_KERNEL("", "Range", factory<RangeKernel>());
GEC_REGISTER_KERNEL("", "EyeLike", factory<EyeLikeKernel>());
GEC_REGISTER_KERNEL("", "OneHot", factory<OneHotKernel>());
GEC_REGISTER_KERNEL("", "Trilu", factory<TriluKernel>());
GEC_REGISTER_KERNEL("", "NonZero", factory<NonZeroKernel>());

}  // namespace
}  // namespace gec::kernels::cpu
