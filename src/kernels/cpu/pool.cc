// MaxPool (ONNX MaxPool-12), AveragePool (AveragePool-11), GlobalMaxPool and
// GlobalAveragePool (-1) on CPU through oneDNN pooling_v2_forward, plain
// NC[D]HW layout in and out.
//
// ceil_mode: the output size comes from the schema; the end padding handed to
// oneDNN is stretched so that oneDNN's floor formula reproduces it. Padded
// cells never win a max and are never counted by avg_exclude_padding. For
// count_include_pad=1, ONNX (as PyTorch and ONNX Runtime) counts only the
// cells inside [-pad_begin, in + pad_end), not the extra ceil-mode cells, so
// the few border outputs that reach past pad_end are rescaled afterwards.
// Global pools flatten the spatial dims into one and pool over all of it.
// The optional MaxPool Indices output is not supported.
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

/// One oneDNN pooling primitive over plain src/dst, rebuilt when shapes change.
struct PoolPrimitive {
  dnnl::pooling_v2_forward prim;
  memory src, dst;

  void build(const std::string& who, dnnl::algorithm alg, const Shape& xs, const Shape& ys,
             const memory::dims& kernel, const memory::dims& strides, const memory::dims& dil,
             const memory::dims& pl, const memory::dims& pr) {
    const memory::desc s = plain_md(xs), d = plain_md(ys);
    try {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, s, d, strides, kernel, dil, pl,
                                          pr);
      prim = dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, cpu_engine()));
    } catch (const dnnl::error& e) {
      rethrow_dnnl(who, "create a pooling for X " + shape_str(xs), e);
    }
    src = unbound_memory(s);
    dst = unbound_memory(d);
  }
  void run(const void* x, void* y) {
    bind(src, x);
    bind(dst, y);
    prim.execute(cpu_stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    cpu_stream().wait();
  }
};

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const ir::Node& n, bool is_max)
      : desc_(n.describe()),
        raw_(ops::read_window_attrs(n)),
        is_max_(is_max),
        include_pad_(n.get_int("count_include_pad", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    require_f32(desc_, x.dtype);
    if (y.numel() == 0) return;
    if (key_.update({x.shape})) build(x.shape, y.shape);
    pool_.run(x.data, y.data);
    if (!fixups_.empty()) rescale_border(y);
  }

  std::string impl_name() const override { return "onednn.pool"; }

 private:
  void build(const Shape& xs, const Shape& ys) {
    const size_t sp = xs.size() - 2;
    a_ = ops::resolve_window_attrs(raw_, sp, nullptr, desc_);
    ops::WindowGeom g = ops::window_geometry(desc_, a_, Shape(xs.begin() + 2, xs.end()));
    memory::dims k(sp), s(sp), d(sp), pl(sp), pr(sp);
    fixups_.clear();
    for (size_t i = 0; i < sp; ++i) {
      k[i] = a_.kernel[i];
      s[i] = a_.strides[i];
      d[i] = a_.dilations[i] - 1;
      pl[i] = g.pad_begin[i];
      const int64_t eff = ops::effective_pad_end(xs[i + 2], ys[i + 2], k[i], s[i], a_.dilations[i], pl[i]);
      pr[i] = std::max<int64_t>(g.pad_end[i], eff);
      if (!is_max_ && include_pad_ && eff > g.pad_end[i]) fixups_.push_back(i);
    }
    pad_begin_ = g.pad_begin;
    pad_end_ = g.pad_end;
    in_ = Shape(xs.begin() + 2, xs.end());
    const auto alg = is_max_ ? dnnl::algorithm::pooling_max
                             : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
    pool_.build(desc_, alg, xs, ys, k, s, d, pl, pr);
  }

  /// Cells of window `o` along dim i inside [-pad_begin, in + pad_end).
  int64_t counted(size_t i, int64_t o) const {
    const int64_t start = o * a_.strides[i] - pad_begin_[i];
    const int64_t end = std::min(start + a_.kernel[i], in_[i] + pad_end_[i]);
    return end - start;
  }

  /// oneDNN divided every window by prod(kernel); ONNX divides the windows
  /// that reach past pad_end (ceil_mode) by the cells they really cover.
  void rescale_border(TensorView& y) const {
    const size_t sp = in_.size();
    const Shape& ys = y.shape;
    const int64_t planes = ys[0] * ys[1];
    int64_t spatial = 1, full = 1;
    for (size_t i = 0; i < sp; ++i) {
      spatial *= ys[i + 2];
      full *= a_.kernel[i];
    }
    std::vector<int64_t> idx(sp);
    for (int64_t p = 0; p < spatial; ++p) {
      int64_t rem = p, cells = 1;
      for (int i = static_cast<int>(sp) - 1; i >= 0; --i) {
        idx[i] = rem % ys[i + 2];
        rem /= ys[i + 2];
        cells *= counted(i, idx[i]);
      }
      if (cells == full || cells <= 0) continue;
      const float f = static_cast<float>(full) / static_cast<float>(cells);
      float* out = y.as<float>();
      for (int64_t c = 0; c < planes; ++c) out[c * spatial + p] *= f;
    }
  }

  std::string desc_;
  ops::WindowAttrs raw_, a_;
  bool is_max_, include_pad_;
  ShapeKey key_;
  PoolPrimitive pool_;
  std::vector<size_t> fixups_;
  std::vector<int64_t> pad_begin_, pad_end_, in_;
};

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(const ir::Node& n, bool is_max) : desc_(n.describe()), is_max_(is_max) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    require_f32(desc_, x.dtype);
    if (y.numel() == 0) return;
    const int64_t spatial = x.numel() / (x.shape[0] * x.shape[1]);
    if (spatial == 0) fail(ErrorCode::kInvalidArgument, desc_ + ": global pooling over an empty input");
    if (key_.update({x.shape})) {
      const Shape xs{x.shape[0], x.shape[1], spatial}, ys{x.shape[0], x.shape[1], 1};
      pool_.build(desc_, is_max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding, xs,
                  ys, {spatial}, {1}, {0}, {0}, {0});
    }
    pool_.run(x.data, y.data);
  }

  std::string impl_name() const override { return "onednn.pool"; }

 private:
  std::string desc_;
  bool is_max_;
  ShapeKey key_;
  PoolPrimitive pool_;
};

std::unique_ptr<Kernel> make_pool(const ir::Node& n, const std::vector<DType>& dts, bool is_max, bool global) {
  for (DType d : dts) require_f32(n, d);
  if (is_max && !global && n.outputs().size() > 1 && n.output(1) && !n.output(1)->name().empty())
    fail(ErrorCode::kUnsupported, n.describe() + ": the MaxPool Indices output is not supported");
  if (global) return std::make_unique<GlobalPoolKernel>(n, is_max);
  return std::make_unique<PoolKernel>(n, is_max);
}

GEC_REGISTER_KERNEL("", "MaxPool", [](const ir::Node& n, const std::vector<DType>& d) { return make_pool(n, d, true, false); });
GEC_REGISTER_KERNEL("", "AveragePool",
                    [](const ir::Node& n, const std::vector<DType>& d) { return make_pool(n, d, false, false); });
GEC_REGISTER_KERNEL("", "GlobalMaxPool",
                    [](const ir::Node& n, const std::vector<DType>& d) { return make_pool(n, d, true, true); });
GEC_REGISTER_KERNEL("", "GlobalAveragePool",
                    [](const ir::Node& n, const std::vector<DType>& d) { return make_pool(n, d, false, true); });

}  // namespace
}  // namespace gec::kernels::cpu
