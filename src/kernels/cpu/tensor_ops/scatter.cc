// ScatterElements-16/18 and ScatterND-16/18: the output is a copy of data
// with the updates written (reduction "none") or combined (add, mul, max,
// min) at the indexed places. Updates are applied serially in index order,
// so with reduction "none" the last duplicate wins, as in the ONNX
// reference implementation. Indices out of range raise kInvalidArgument.
#include <algorithm>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const ir::Node& n) {
  const std::string r = n.get_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  fail(ErrorCode::kUnsupported, n.describe() + ": reduction '" + r + "' is not supported");
}

template <typename T>
inline void combine(T& dst, const T& v, Reduction r) {
  if constexpr (std::is_arithmetic_v<T>) {
    switch (r) {
      case Reduction::kNone: dst = v; return;
      case Reduction::kAdd: dst = static_cast<T>(dst + v); return;
      case Reduction::kMul: dst = static_cast<T>(dst * v); return;
      case Reduction::kMax: dst = std::max(dst, v); return;
      case Reduction::kMin: dst = std::min(dst, v); return;
    }
  } else {
    dst = v;
  }
}

/// Calls f(T{}) with a by-size type for reduction none, an arithmetic type
/// otherwise (reductions need real arithmetic; bool/float16 unsupported).
template <typename F>
void dispatch_scatter(DType t, Reduction r, const std::string& what, F&& f) {
  if (r == Reduction::kNone) dispatch_by_size(t, what, f);
  else dispatch_arith(t, what, f);
}

inline int64_t index_at(const TensorView& t, int64_t i) {
  return t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
}

[[noreturn]] void bad_index(const std::string& what, int64_t v, int64_t dim) {
  fail(ErrorCode::kInvalidArgument, what + ": index " + std::to_string(v) +
                                        " is out of range for an axis of size " + std::to_string(dim));
}

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const ir::Node& n)
      : what_(n.describe()), axis_(n.get_int("axis", 0)), red_(parse_reduction(n)) {}
  void run(KernelContext& ctx) override {
    const TensorView& data = ctx.in(0);
    const TensorView& idx = ctx.in(1);
    const TensorView& upd = ctx.in(2);
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(data.shape.size()) : axis_;
    const int64_t dim = data.shape[axis];
    std::vector<int64_t> st = dense_strides(data.shape);
    const int64_t axis_stride = st[axis];
    st[axis] = 0;
    copy_tensor_data(data, ctx.out(0));
    dispatch_scatter(data.dtype, red_, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* u = upd.as<const T>();
      T* out = ctx.out(0).as<T>();
      if (idx.numel() == 0) return;
      detail::Odometer it(idx.shape, st, 0);
      for (int64_t i = 0; i < idx.numel(); ++i, it.next()) {
        int64_t k = index_at(idx, i);
        if (k < -dim || k >= dim) bad_index(what_, k, dim);
        if (k < 0) k += dim;
        combine(out[it.off + k * axis_stride], u[i], red_);
      }
    });
  }

 private:
  std::string what_;
  int64_t axis_;
  Reduction red_;
};

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const ir::Node& n) : what_(n.describe()), red_(parse_reduction(n)) {}
  void run(KernelContext& ctx) override {
    const TensorView& data = ctx.in(0);
    const TensorView& idx = ctx.in(1);
    const TensorView& upd = ctx.in(2);
    const int64_t k = idx.shape.back();
    const std::vector<int64_t> st = dense_strides(data.shape);
    int64_t slice = 1;
    for (size_t i = k; i < data.shape.size(); ++i) slice *= data.shape[i];
    const int64_t n = idx.numel() / k;
    copy_tensor_data(data, ctx.out(0));
    dispatch_scatter(data.dtype, red_, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* u = upd.as<const T>();
      T* out = ctx.out(0).as<T>();
      for (int64_t t = 0; t < n; ++t) {
        int64_t off = 0;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t dim = data.shape[j];
          const int64_t v = idx.as<int64_t>()[t * k + j];
          if (v < -dim || v >= dim) bad_index(what_, v, dim);
          off += (v < 0 ? v + dim : v) * st[j];
        }
        for (int64_t e = 0; e < slice; ++e) combine(out[off + e], u[t * slice + e], red_);
      }
    });
  }

 private:
  std::string what_;
  Reduction red_;
};

GEC_REGISTER_KERNEL("", "ScatterElements", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<ScatterElementsKernel>(n);
});
GEC_REGISTER_KERNEL("", "ScatterND", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<ScatterNDKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
