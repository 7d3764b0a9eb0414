// Gather-13, GatherElements-13, GatherND-13 (with batch_dims). Indices may be
// negative (counted from the end of the axis); an index out of range is a
// gec::Error(kInvalidArgument) naming the node, raised before any copying.
// Gather copies whole inner blocks (embedding rows, token picks) per index.
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

/// Index i of an int32/int64 tensor.
inline int64_t index_at(const TensorView& t, int64_t i) {
  return t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
}

/// Checks every index lies in [-dim, dim).
void check_indices(const TensorView& idx, int64_t dim, const std::string& what) {
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64)
    fail(ErrorCode::kInvalidArgument, what + ": indices must be int32 or int64");
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int64_t v = index_at(idx, i);
    if (v < -dim || v >= dim)
      fail(ErrorCode::kInvalidArgument, what + ": index " + std::to_string(v) +
                                            " is out of range for an axis of size " + std::to_string(dim));
  }
}

int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", 0)) {}
  void run(KernelContext& ctx) override {
    const TensorView& data = ctx.in(0);
    const TensorView& idx = ctx.in(1);
    const int64_t axis = norm_axis(axis_, data.shape.size());
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(data.shape.size()); ++i) {
      if (i < axis) outer *= data.shape[i];
      if (i > axis) inner *= data.shape[i];
    }
    const int64_t dim = data.shape[axis], n = idx.numel();
    check_indices(idx, dim, what_);
    dispatch_by_size(data.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.as<const T>();
      T* dst = ctx.out(0).as<T>();
      parallel_chunks(outer * n, outer * n * inner, ctx.num_threads, [&](int64_t b, int64_t e) {
        for (int64_t w = b; w < e; ++w) {
          const int64_t o = w / n;
          int64_t k = index_at(idx, w % n);
          if (k < 0) k += dim;
          std::copy_n(src + (o * dim + k) * inner, inner, dst + w * inner);
        }
      });
    });
  }
  std::string impl_name() const override { return "native.gather"; }

 private:
  std::string what_;
  int64_t axis_;
};

/// out[i] = data[i with i[axis] replaced by indices[i]].
class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", 0)) {}
  void run(KernelContext& ctx) override {
    const TensorView& data = ctx.in(0);
    const TensorView& idx = ctx.in(1);
    const int64_t axis = norm_axis(axis_, data.shape.size());
    const int64_t dim = data.shape[axis];
    check_indices(idx, dim, what_);
    std::vector<int64_t> st = dense_strides(data.shape);
    const int64_t axis_stride = st[axis];
    st[axis] = 0;
    dispatch_by_size(data.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.as<const T>();
      T* dst = ctx.out(0).as<T>();
      parallel_chunks(idx.numel(), idx.numel(), ctx.num_threads, [&](int64_t b, int64_t e) {
        detail::Odometer it(idx.shape, st, b);
        for (int64_t i = b; i < e; ++i, it.next()) {
          int64_t k = index_at(idx, i);
          if (k < 0) k += dim;
          dst[i] = src[it.off + k * axis_stride];
        }
      });
    });
  }

 private:
  std::string what_;
  int64_t axis_;
};

/// out[b, n, ...] = data[b, idx[b, n, 0], ..., idx[b, n, k-1], ...] with b over
/// the batch_dims leading dims.
class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const ir::Node& n) : what_(n.describe()), batch_dims_(n.get_int("batch_dims", 0)) {}
  void run(KernelContext& ctx) override {
    const TensorView& data = ctx.in(0);
    const TensorView& idx = ctx.in(1);
    const int64_t bd = batch_dims_, k = idx.shape.back();
    const std::vector<int64_t> st = dense_strides(data.shape);
    int64_t batches = 1, slice = 1;
    for (int64_t i = 0; i < bd; ++i) batches *= data.shape[i];
    for (size_t i = bd + k; i < data.shape.size(); ++i) slice *= data.shape[i];
    const int64_t per_batch = batches > 0 ? idx.numel() / k / batches : 0;
    const int64_t batch_stride = bd > 0 ? st[bd - 1] : 0;
    // Resolve every index tuple to an element offset first (validating it).
    std::vector<int64_t> offs(static_cast<size_t>(batches * per_batch));
    for (int64_t t = 0; t < static_cast<int64_t>(offs.size()); ++t) {
      int64_t off = (t / std::max<int64_t>(per_batch, 1)) * batch_stride;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = data.shape[bd + j];
        int64_t v = idx.as<int64_t>()[t * k + j];
        if (v < -dim || v >= dim)
          fail(ErrorCode::kInvalidArgument, what_ + ": index " + std::to_string(v) +
                                                " is out of range for an axis of size " + std::to_string(dim));
        off += (v < 0 ? v + dim : v) * st[bd + j];
      }
      offs[t] = off;
    }
    dispatch_by_size(data.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.as<const T>();
      T* dst = ctx.out(0).as<T>();
      const int64_t n = static_cast<int64_t>(offs.size());
      parallel_chunks(n, n * slice, ctx.num_threads, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) std::copy_n(src + offs[t], slice, dst + t * slice);
      });
    });
  }

 private:
  std::string what_;
  int64_t batch_dims_;
};

GEC_REGISTER_KERNEL("", "Gather", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<GatherKernel>(n);
});
GEC_REGISTER_KERNEL("", "GatherElements", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<GatherElementsKernel>(n);
});
GEC_REGISTER_KERNEL("", "GatherND", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<GatherNDKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
