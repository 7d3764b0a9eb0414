// Pad-18/19 modes constant, reflect, edge and wrap (pads may be negative:
// cropping), and CenterCropPad-18 on the same loop.
// The output is produced row by row (a row = the last axis): each output
// row maps to one input row (or, in constant mode, to none: all padding);
// within a row the middle part is one contiguous copy and only the pad
// ends are computed element by element.
#include <algorithm>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/tensor_ops.h"

namespace gec::kernels::cpu {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

/// Input index for output position i - pad_begin = `i` on an axis of size d
/// (d > 0); -1 when constant mode has no source.
inline int64_t source_index(int64_t i, int64_t d, PadMode m) {
  if (i >= 0 && i < d) return i;
  if (m == PadMode::kConstant) return -1;
  if (m == PadMode::kWrap) return ((i % d) + d) % d;  // Pad-19: the axis repeats
  if (m == PadMode::kEdge || d == 1) return std::clamp<int64_t>(i, 0, d - 1);
  const int64_t period = 2 * (d - 1);  // numpy 'reflect': mirror without repeating the edge
  int64_t j = i % period;
  if (j < 0) j += period;
  return j < d ? j : period - j;
}

std::vector<int64_t> read_ints(const TensorView& t) {
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
  return r;
}

/// Writes `out` = `in` padded by `pads` (ONNX order: all begins, then all
/// ends; negative = crop) in `mode`, filling with `value` in constant mode.
template <typename T>
void pad_typed(const TensorView& in, TensorView& out, const std::vector<int64_t>& pads, const T& value, PadMode mode,
             int threads) {
  const int64_t r = static_cast<int64_t>(in.shape.size());
  const int64_t total = out.numel();
  if (total == 0) return;
  const T* src = in.as<const T>();
  T* dst = out.as<T>();
  if (r == 0) {
    dst[0] = src[0];
    return;
  }
  const std::vector<int64_t> st = dense_strides(in.shape);
  const std::vector<int64_t> od(out.shape.begin(), out.shape.end() - 1);
  const int64_t len = out.shape[r - 1], d = in.shape[r - 1], b = pads[r - 1];
  const int64_t j0 = std::clamp<int64_t>(b, 0, len), j1 = std::clamp<int64_t>(b + d, 0, len);
  parallel_chunks(shape_numel(od), total, threads, [&](int64_t rb, int64_t re) {
    for (int64_t row = rb; row < re; ++row) {
      // Input row of this output row, or none.
      int64_t t = row, off = 0;
      bool inside = true;
      for (size_t k = od.size(); k-- > 0;) {
        const int64_t o = t % od[k];
        t /= od[k];
        const int64_t s = in.shape[k] > 0 ? source_index(o - pads[k], in.shape[k], mode) : -1;
        if (s < 0) inside = false;
        else off += s * st[k];
      }
      T* drow = dst + row * len;
      if (!inside) {
        std::fill_n(drow, len, value);
        continue;
      }
      const T* srow = src + off;
      if (j1 > j0) std::copy_n(srow + (j0 - b), j1 - j0, drow + j0);
      for (int64_t j = 0; j < len; ++j) {
        if (j == j0 && j1 > j0) j = j1;
        if (j >= len) break;
        const int64_t s = d > 0 ? source_index(j - b, d, mode) : -1;
        drow[j] = s < 0 ? value : srow[s];
      }
    }
  });
}

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const ir::Node& n) : what_(n.describe()) {
    const std::string m = n.get_string("mode", "constant");
    if (m == "constant") mode_ = PadMode::kConstant;
    else if (m == "reflect") mode_ = PadMode::kReflect;
    else if (m == "edge") mode_ = PadMode::kEdge;
    else if (m == "wrap") mode_ = PadMode::kWrap;
    else fail(ErrorCode::kUnsupported, what_ + ": mode '" + m + "' is not supported");
  }

  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    const int64_t r = static_cast<int64_t>(in.shape.size());
    auto err = [this](const std::string& m) { fail(ErrorCode::kInvalidArgument, what_ + ": " + m); };
    const auto pads = ops::full_pads(r, read_ints(ctx.in(1)),
                                     ctx.has_input(3) ? read_ints(ctx.in(3)) : std::vector<int64_t>{}, err);
    const bool has_value = ctx.has_input(2) && ctx.in(2).numel() > 0;
    dispatch_by_size(in.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T value = has_value ? ctx.in(2).as<const T>()[0] : T{};
      pad_typed<T>(in, ctx.out(0), pads, value, mode_, ctx.num_threads);
    });
  }
  std::string impl_name() const override { return "native.pad"; }

 private:
  std::string what_;
  PadMode mode_ = PadMode::kConstant;
};

/// CenterCropPad-18: per axis, a dim larger than the target is cropped to a
/// centred window (floor((in - out) / 2) elements off the start), a smaller
/// one padded with zeros (floor((out - in) / 2) before): Pad with negative
/// or positive pads, as the ONNX reference implementation slices.
class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(0);
    TensorView& out = ctx.out(0);
    const size_t r = in.shape.size();
    std::vector<int64_t> pads(2 * r, 0);
    for (size_t i = 0; i < r; ++i) {
      const int64_t diff = out.shape[i] - in.shape[i];  // < 0: crop
      const int64_t before = diff >= 0 ? diff / 2 : -((-diff) / 2);
      pads[i] = before;
      pads[i + r] = diff - before;
    }
    dispatch_by_size(in.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      pad_typed<T>(in, out, pads, T{}, PadMode::kConstant, ctx.num_threads);
    });
  }
  std::string impl_name() const override { return "native.pad"; }

 private:
  std::string what_;
};

GEC_REGISTER_KERNEL("", "Pad", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<PadKernel>(n);
});
GEC_REGISTER_KERNEL("", "CenterCropPad", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<CenterCropPadKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
