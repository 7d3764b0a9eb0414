// MaxPool (ONNX MaxPool-12) and AveragePool (AveragePool-11) on CPU: a
// 2-D pool runs a native pixel-vector loop (PixelPoolKernel, pool_simd.h)
// in the layouts the execution plan gives it (KernelConfig, ops/layout.h:
// nChw16c, nhwc, or plain NCHW as one float a pixel); 1-D and 3-D ones
// oneDNN's pooling_v2_forward on plain NC[D]HW (PoolKernel).
// GlobalMaxPool and GlobalAveragePool (-1) run a native reduction in all
// three layouts (GlobalPoolKernel; the [N,C,1,1] output has the same bytes
// in every layout).
//
// ceil_mode: the output size comes from the schema; the end padding handed to
// oneDNN is stretched so that oneDNN's floor formula reproduces it. Padded
// cells never win a max and are never counted by avg_exclude_padding. For
// count_include_pad=1, ONNX (as PyTorch and ONNX Runtime) counts only the
// cells inside [-pad_begin, in + pad_end), not the extra ceil-mode cells, so
// the few border outputs that reach past pad_end are rescaled afterwards.
// MaxPool with the Indices output, or on dtypes other than float32, runs a
// native loop (NativeMaxPoolKernel) on plain NCHW only. The pixel-vector
// loop may also read one of nChw16c / nhwc and write the other (a pool at
// the edge of two layout groups).
#include <algorithm>
#include <limits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/layout_md.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/cpu/nn/pool_simd.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

/// One oneDNN pooling primitive over src/dst in `layout` (ops/layout.h),
/// rebuilt when shapes change.
struct PoolPrimitive {
  dnnl::pooling_v2_forward prim;
  memory src, dst;
  Scratchpad scratch;
  ops::Layout layout = ops::Layout::kPlain;

  void build(const std::string& who, dnnl::algorithm alg, const Shape& xs, const Shape& ys,
             const memory::dims& kernel, const memory::dims& strides, const memory::dims& dil,
             const memory::dims& pl, const memory::dims& pr) {
    const memory::desc s = activation_md(xs, layout, who), d = activation_md(ys, layout, who);
    try {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, s, d, strides, kernel, dil, pl,
                                          pr);
      const dnnl::pooling_v2_forward::primitive_desc pd(desc, Scratchpad::attr(), cpu_engine());
      prim = dnnl::pooling_v2_forward(pd);
      scratch.set(pd.scratchpad_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(who, "create a pooling for X " + shape_str(xs), e);
    }
    src = unbound_memory(s);
    dst = unbound_memory(d);
  }
  void run(const void* x, void* y, ScratchBuffer* run_scratch) {
    bind(src, x);
    bind(dst, y);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    scratch.bind(args, run_scratch);
    prim.execute(cpu_stream(), args);
    cpu_stream().wait();
  }
};

/// Refuses a MaxPool or count_include_pad = 0 AveragePool window with no
/// cell inside X (pads or dilations past X): it has no max, and no cells to
/// average (ONNX's later texts, MaxPool-22 and AveragePool-22, drop such
/// ceil_mode windows). A count_include_pad = 1 average of padding is 0 and
/// runs. Checked by both pooling kernels, so a model is refused whatever
/// layout its plan gives the pool: kInvalidModel naming the node.
void check_windows_reach_x(const std::string& who, bool needs_cells, const ops::WindowAttrs& a,
                           const ops::WindowGeom& g, const Shape& xs, const Shape& ys) {
  if (!needs_cells) return;
  for (size_t dim = 0; dim + 2 < xs.size() && dim + 2 < ys.size(); ++dim)
    for (int64_t o = 0; o < ys[2 + dim]; ++o) {
      int64_t lo, hi;
      pool_simd::taps_inside(o * a.strides[dim] - g.pad_begin[dim], a.kernel[dim], a.dilations[dim], 0,
                             xs[2 + dim], lo, hi);
      if (lo == hi)
        fail(ErrorCode::kInvalidModel, who + ": output " + std::to_string(o) + " along spatial dim " +
                                           std::to_string(dim) + " of Y " + shape_str(ys) +
                                           " pools a window with no cell inside X " + shape_str(xs) +
                                           " (it lies in the padding)");
    }
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const ir::Node& n, bool is_max, const KernelConfig& config)
      : desc_(n.describe()),
        raw_(ops::read_window_attrs(n)),
        is_max_(is_max),
        include_pad_(n.get_int("count_include_pad", 0) != 0) {
    if (config.input_layout(0) != ops::Layout::kPlain || config.output_layout(0) != ops::Layout::kPlain)
      fail(ErrorCode::kInvalidModel, desc_ + ": oneDNN's pooling here reads and writes the plain layout only");
  }

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    if (ctx.out(0).numel() > 0) build(x.shape, ctx.out(0).shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    pool_.run(x.data, y.data, ctx.scratch);
    if (!fixups_.empty()) rescale_border(y);
  }

  std::string impl_name() const override { return "onednn.pool"; }

 private:
  void build(const Shape& xs, const Shape& ys) {
    const size_t sp = xs.size() - 2;
    a_ = ops::resolve_window_attrs(raw_, sp, nullptr, desc_);
    ops::WindowGeom g = ops::window_geometry(desc_, a_, Shape(xs.begin() + 2, xs.end()));
    check_windows_reach_x(desc_, is_max_ || !include_pad_, a_, g, xs, ys);
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

  /// Taps of window `o` along dim i (dilations apart) inside [-pad_begin,
  /// in + pad_end).
  int64_t counted(size_t i, int64_t o) const {
    int64_t lo, hi;
    pool_simd::taps_inside(o * a_.strides[i] - pad_begin_[i], a_.kernel[i], a_.dilations[i], -pad_begin_[i],
                           in_[i] + pad_end_[i], lo, hi);
    return hi - lo;
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
  PoolPrimitive pool_;
  std::vector<size_t> fixups_;
  std::vector<int64_t> pad_begin_, pad_end_, in_;
};

/// 2-D MaxPool-12 / AveragePool-11 (-19's dilations too) on float32 X in
/// plain NCHW, nChw16c or nhwc, Y in the same layout or, with C % 16 == 0
/// and a blocked X, the other
/// one (a pool at the edge of two layout groups, schedule/
/// layout_assignment.cc: the Reorder rides on the pool's stores, or its
/// loads, for free): each output pixel's channels are a few vectors
/// (pool_simd.h), planes of [H][W][16] per channel block or [H][W][C] per
/// image (a 16-channel slice of each pixel when the layouts differ), or,
/// plain, [H][W] per channel with one float a pixel; output rows shared
/// among the threads. Errors: kInvalidModel (when made) for plain on one
/// side only; (reshape) require_f32's for another
/// dtype; kInvalidArgument when X or Y is not 4-D or Y does not fit X's
/// windows; kInvalidModel for an nChw16c side with C % 16 != 0 (nChw16c
/// holds whole blocks only, ops/layout.h), for window attributes
/// resolve_window_attrs /
/// window_geometry refuse, a window wholly in the padding
/// (check_windows_reach_x) or a window value of 2^31 or more.
/// Chosen over oneDNN's pooling for the blocked layouts, which took
/// 1.1-1.2x longer on GoogLeNet's and SqueezeNet's 3x3 pools, and for plain
/// ones, where oneDNN 2.6 without AVX-512 has only its scalar simple_nchw
/// kernel (AlexNet's first MaxPool, 64 x 55 x 55: 1.57 -> 0.33-0.52 ms;
/// ONNX Runtime's 0.04 ms vectorizes along the rows instead).
class PixelPoolKernel final : public Kernel {
 public:
  PixelPoolKernel(const ir::Node& n, bool is_max, const KernelConfig& config)
      : desc_(n.describe()),
        raw_(ops::read_window_attrs(n)),
        layout_(config.input_layout(0)),
        out_layout_(config.output_layout(0)) {
    const bool plain = layout_ == ops::Layout::kPlain && out_layout_ == ops::Layout::kPlain;
    for (ops::Layout l : {layout_, out_layout_})
      if (!plain && l != ops::Layout::kNChw16c && l != ops::Layout::kNhwc)
        fail(ErrorCode::kInvalidModel, desc_ + ": a pool on pixel vectors reads and writes nChw16c or nhwc (or plain "
                                               "on both sides), not " + ops::layout_name(l));
    w_.is_max = is_max;
    w_.count_include_pad = n.get_int("count_include_pad", 0) != 0;
  }

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const Shape& ys = ctx.out(0).shape;
    require_f32(desc_, x.dtype);
    if (x.shape.size() != 4 || ys.size() != 4)
      fail(ErrorCode::kInvalidArgument, desc_ + ": X " + shape_str(x.shape) + " and Y " + shape_str(ys) +
                                            " in layout " + ops::layout_name(layout_) + " must be 4-D");
    const ops::WindowAttrs a = ops::resolve_window_attrs(raw_, 2, nullptr, desc_);
    const ops::WindowGeom g = ops::window_geometry(desc_, a, Shape(x.shape.begin() + 2, x.shape.end()));
    if (ys[0] != x.shape[0] || ys[1] != x.shape[1] || ys[2] != g.out[0] || ys[3] != g.out[1])
      fail(ErrorCode::kInvalidArgument, desc_ + ": Y " + shape_str(ys) + " does not fit X " + shape_str(x.shape));
    // Window values the loop's int64 offsets can take: each below 2^31, and
    // a window step (rows, columns, pixels) below 2^62 floats.
    constexpr int64_t kMaxWindow = int64_t{1} << 31;
    for (int64_t v : {a.kernel[0], a.kernel[1], a.strides[0], a.strides[1], a.dilations[0], a.dilations[1],
                      g.pad_begin[0], g.pad_begin[1], g.pad_end[0], g.pad_end[1]})
      if (v >= kMaxWindow)
        fail(ErrorCode::kInvalidModel, desc_ + ": a kernel, stride, dilation or pad of " + std::to_string(v) +
                                           " (below 2^31 in layout " + ops::layout_name(layout_) + ")");
    const double pixel = layout_ == ops::Layout::kNChw16c ? ops::kBlockedChannels
                         : layout_ == ops::Layout::kPlain ? 1.0
                                                          : static_cast<double>(x.shape[1]);
    const double stride_floats = pixel * static_cast<double>(x.shape[3]) *
                                 static_cast<double>(std::max({a.dilations[0], a.dilations[1], a.strides[1]}));
    if (stride_floats >= 0x1p62)
      fail(ErrorCode::kInvalidModel, desc_ + ": X " + shape_str(x.shape) + " with this window steps past 2^62 floats");
    check_windows_reach_x(desc_, w_.is_max || !w_.count_include_pad, a, g, x.shape, ys);
    w_.H = x.shape[2], w_.W = x.shape[3], w_.OH = ys[2], w_.OW = ys[3];
    w_.kh = a.kernel[0], w_.kw = a.kernel[1], w_.sh = a.strides[0], w_.sw = a.strides[1];
    w_.dh = a.dilations[0], w_.dw = a.dilations[1];
    w_.ph = g.pad_begin[0], w_.pw = g.pad_begin[1], w_.eh = g.pad_end[0], w_.ew = g.pad_end[1];
    const int64_t N = x.shape[0], C = x.shape[1];
    constexpr int64_t B = ops::kBlockedChannels;
    if ((layout_ == ops::Layout::kNChw16c || out_layout_ == ops::Layout::kNChw16c) && C % B != 0)
      fail(ErrorCode::kInvalidModel, desc_ + ": X " + shape_str(x.shape) + " from " + ops::layout_name(layout_) +
                                         " to " + ops::layout_name(out_layout_) + ": nChw16c needs C % 16 == 0");
    // Planes of P floats per pixel: whole nhwc images when both sides are
    // nhwc, else 16-channel blocks (a block of an nhwc image is a slice of
    // each pixel, C floats apart).
    const bool images = layout_ == ops::Layout::kNhwc && out_layout_ == ops::Layout::kNhwc;
    if (layout_ == ops::Layout::kPlain) {  // and Y: every channel a plane of one float a pixel
      w_.P = w_.x_pix = w_.y_pix = 1;
      planes_ = N * C;
      blocks_ = C;
      return;
    }
    w_.P = images ? C : B;
    planes_ = images ? N : N * ((C + B - 1) / B);
    blocks_ = images ? 1 : (C + B - 1) / B;
    w_.x_pix = layout_ == ops::Layout::kNhwc ? C : B;
    w_.y_pix = out_layout_ == ops::Layout::kNhwc ? C : B;
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    const float* in = x.as<float>();
    float* out = y.as<float>();
    const int64_t rows = planes_ * w_.OH;
    // Plane p's first float: image p / blocks_, channel block p % blocks_.
    const int64_t in_image = w_.H * w_.W * w_.x_pix * (layout_ == ops::Layout::kNhwc ? 1 : blocks_),
                  out_image = w_.OH * w_.OW * w_.y_pix * (out_layout_ == ops::Layout::kNhwc ? 1 : blocks_);
    const int64_t in_block = layout_ == ops::Layout::kNhwc ? w_.P : w_.H * w_.W * w_.P,
                  out_block = out_layout_ == ops::Layout::kNhwc ? w_.P : w_.OH * w_.OW * w_.P;
    const int64_t out_plane = w_.OH * w_.OW * w_.P;
    const double taps = static_cast<double>(out_plane) * static_cast<double>(planes_) * static_cast<double>(w_.kh) *
                        static_cast<double>(w_.kw);
    const int threads = ctx.num_threads > 1 && rows > 1 && taps >= 64 * 1024 ? ctx.num_threads : 1;
    // Each thread a contiguous range of the rows, one call per plane it
    // touches (a call per row cost GoogLeNet's 14x14 pools ~15% more).
    const auto range = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end;) {
        const int64_t p = r / w_.OH, oh = r % w_.OH, stop = std::min(end, (p + 1) * w_.OH);
        pool_simd::pool_rows(in + (p / blocks_) * in_image + (p % blocks_) * in_block,
                             out + (p / blocks_) * out_image + (p % blocks_) * out_block, w_, oh, oh + (stop - r));
        r = stop;
      }
    };
    if (threads <= 1) {
      range(0, rows);
      return;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) range(rows * t / threads, rows * (t + 1) / threads);
  }

  std::string impl_name() const override { return "native.pool"; }

 private:
  std::string desc_;
  ops::WindowAttrs raw_;
  ops::Layout layout_, out_layout_;
  pool_simd::Window w_;
  int64_t planes_ = 0, blocks_ = 1;
};

/// GlobalAveragePool-1 / GlobalMaxPool-1: Y[n,c] = mean / max of X[n,c,...]
/// over every spatial cell, as a native loop over the bytes of X in its
/// layout: plain [N][C][S], nChw16c [N][C/16][S][16] (C % 16 == 0), nhwc
/// [N][S][C]; the output [N,C,1,...] has the same bytes in every layout.
/// Sums of 256 cells in float accumulate in double. Errors (reshape):
/// require_f32's for another dtype; kInvalidArgument for X without spatial
/// dims or with no cells, or an nChw16c X not 3-D or 4-D; kInvalidModel for
/// an nChw16c X with C % 16 != 0 (nChw16c holds whole blocks only).
/// Not oneDNN's pooling: its JIT kernel for a window of S cells is generated
/// per window size at first use, and grows with it (ppocr_v4_det's
/// squeeze-and-excitation pools over 160x160 took 22 ms to create).
class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(const ir::Node& n, bool is_max, const KernelConfig& config)
      : desc_(n.describe()), is_max_(is_max), layout_(config.input_layout(0)) {}

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    if (ctx.out(0).numel() == 0) return;
    if (x.shape.size() < 3) fail(ErrorCode::kInvalidArgument, desc_ + ": X " + shape_str(x.shape) + " has no spatial dims");
    if (x.numel() / (x.shape[0] * x.shape[1]) == 0)
      fail(ErrorCode::kInvalidArgument, desc_ + ": global pooling over an empty input");
    if (layout_ == ops::Layout::kNChw16c && x.shape.size() != 4 && x.shape.size() != 3)
      fail(ErrorCode::kInvalidArgument, desc_ + ": nChw16c input " + shape_str(x.shape) + " is not 3-D or 4-D");
    if (layout_ == ops::Layout::kNChw16c && x.shape[1] % ops::kBlockedChannels != 0)
      fail(ErrorCode::kInvalidModel, desc_ + ": nChw16c input " + shape_str(x.shape) + " needs C % 16 == 0");
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    const int64_t N = x.shape[0], C = x.shape[1], S = x.numel() / (N * C);
    const float* in = x.as<float>();
    float* out = y.as<float>();
    const int threads = ctx.num_threads;
    const double scale = 1.0 / static_cast<double>(S);
    if (layout_ == ops::Layout::kPlain) {
      parallel_for(N * C, N * C * S > (1 << 16) ? threads : 1,
                   [&](int64_t nc) { out[nc] = reduce(in + nc * S, S, scale); });
    } else if (layout_ == ops::Layout::kNChw16c) {
      constexpr int64_t B = ops::kBlockedChannels;
      const int64_t CB = (C + B - 1) / B;
      parallel_for(N * CB, N * CB * S * B > (1 << 16) ? threads : 1, [&](int64_t nb) {
        const int64_t n = nb / CB, cb = nb % CB;
        reduce_lanes(in + nb * S * B, S, B, std::min(B, C - cb * B), scale, out + n * C + cb * B);
      });
    } else if (is_max_) {  // nhwc
      for (int64_t n = 0; n < N; ++n) {
        // Channel chunks of 64 lanes, one per thread at a time.
        const int64_t chunks = (C + 63) / 64;
        parallel_for(chunks, C * S > (1 << 16) && chunks > 1 ? threads : 1, [&](int64_t k) {
          const int64_t c0 = k * 64;
          reduce_lanes(in + n * S * C + c0, S, C, std::min<int64_t>(64, C - c0), scale, out + n * C + c0);
        });
      }
    } else {
      mean_nhwc(in, N, S, C, scale, threads, out);
    }
  }

  std::string impl_name() const override { return "native.global_pool"; }

 private:
  /// Cells summed in float before the sum moves to the double total: a
  /// float sum of 256 cells loses at most about 256 ulp of their size, and
  /// the float adds vectorize at full width.
  static constexpr int64_t kChunk = 256;
  /// max(m, v) where a NaN, once met, stays (the result of a window holding
  /// a NaN is NaN wherever it lies).
  static float take_max(float m, float v) { return v > m || v != v ? v : m; }
  /// Mean or max of `count` contiguous floats.
  float reduce(const float* p, int64_t count, double scale) const {
    if (is_max_) {
      float m = p[0];
      for (int64_t i = 1; i < count; ++i) m = take_max(m, p[i]);
      return m;
    }
    double acc = 0;
    for (int64_t c0 = 0; c0 < count; c0 += kChunk) {
      const int64_t c1 = std::min(count, c0 + kChunk);
      acc += pool_simd::sum(p + c0, c1 - c0);
    }
    return static_cast<float>(acc * scale);
  }
  /// For lanes j < `lanes` (at most 64): out[j] = mean / max of
  /// p[s * row + j], s < count.
  void reduce_lanes(const float* p, int64_t count, int64_t row, int64_t lanes, double scale, float* out) const {
    constexpr int64_t kMax = 64;
    if (is_max_) {
      float m[kMax];
      for (int64_t j = 0; j < lanes; ++j) m[j] = p[j];
      for (int64_t s = 1; s < count; ++s)
#pragma omp simd
        for (int64_t j = 0; j < lanes; ++j) m[j] = take_max(m[j], p[s * row + j]);
      for (int64_t j = 0; j < lanes; ++j) out[j] = m[j];
      return;
    }
    double acc[kMax] = {};
    float part[kMax];
    for (int64_t s0 = 0; s0 < count; s0 += kChunk) {
      pool_simd::sum_rows(p + s0 * row, std::min(count, s0 + kChunk) - s0, row, lanes, part);
      for (int64_t j = 0; j < lanes; ++j) acc[j] += part[j];
    }
    for (int64_t j = 0; j < lanes; ++j) out[j] = static_cast<float>(acc[j] * scale);
  }

  /// The mean over S of nhwc [N][S][C], with the sums of reduce_lanes (each
  /// kChunk rows in float, those partial sums in double, in row order) but
  /// read row by row: the rows of a chunk are one contiguous stretch of
  /// memory, and chunks (or, with fewer chunks than threads, 64-channel
  /// pieces of them) go to the threads. The partial sums wait in partial_
  /// [chunk][C] and are added in chunk order, so every thread count gives
  /// the same bits.
  void mean_nhwc(const float* in, int64_t N, int64_t S, int64_t C, double scale, int threads, float* out) {
    const int64_t chunks = (S + kChunk - 1) / kChunk;
    // Whole rows per task when there are chunks enough for the threads.
    const int64_t width = chunks >= 2 * threads ? C : std::min<int64_t>(C, 64);
    const int64_t pieces = (C + width - 1) / width;
    partial_.resize(static_cast<size_t>(chunks * C));
    float* part = partial_.data();
    for (int64_t n = 0; n < N; ++n) {
      const float* x = in + n * S * C;
      parallel_for(chunks * pieces, C * S > (1 << 16) && chunks * pieces > 1 ? threads : 1, [&](int64_t t) {
        const int64_t k = t / pieces, c0 = (t % pieces) * width, lanes = std::min(width, C - c0);
        const int64_t s0 = k * kChunk;
        pool_simd::sum_rows(x + s0 * C + c0, std::min(S, s0 + kChunk) - s0, C, lanes, part + k * C + c0);
      });
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0;
        for (int64_t k = 0; k < chunks; ++k) sum += part[k * C + c];
        out[n * C + c] = static_cast<float>(sum * scale);
      }
    }
  }

  std::string desc_;
  bool is_max_;
  ops::Layout layout_;
  std::vector<float> partial_;  // mean_nhwc's [chunk][C] float sums
};

/// MaxPool-12 as a direct loop over 1 to 3 spatial dims, any arithmetic
/// dtype, with the optional Indices output: the flat index of the chosen
/// element in X, row-major (storage_order 0) or with the spatial dims in
/// column-major order (storage_order 1). Padded cells never win; the first
/// maximum in window order wins ties. Plain NCHW in and out: make_pool
/// refuses another layout (kInvalidModel). Errors (run): kUnsupported for
/// other than 1-3 spatial dims; dispatch_arith's for a non-arithmetic dtype.
class NativeMaxPoolKernel final : public Kernel {
 public:
  explicit NativeMaxPoolKernel(const ir::Node& n)
      : desc_(n.describe()), raw_(ops::read_window_attrs(n)), col_major_(n.get_int("storage_order", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    int64_t* ind = ctx.outputs.size() > 1 && ctx.outputs[1] && ctx.outputs[1]->data ? ctx.out(1).as<int64_t>() : nullptr;
    const size_t sp = x.shape.size() - 2;
    if (sp < 1 || sp > 3) fail(ErrorCode::kUnsupported, desc_ + ": only 1-3 spatial dims are supported");
    const ops::WindowAttrs a = ops::resolve_window_attrs(raw_, sp, nullptr, desc_);
    const ops::WindowGeom g = ops::window_geometry(desc_, a, Shape(x.shape.begin() + 2, x.shape.end()));
    auto pad3 = [sp](std::vector<int64_t> v, int64_t fill) {
      v.insert(v.begin(), 3 - sp, fill);
      return v;
    };
    const auto in = pad3(Shape(x.shape.begin() + 2, x.shape.end()), 1), k = pad3(a.kernel, 1),
               out = pad3(Shape(y.shape.begin() + 2, y.shape.end()), 1), st = pad3(a.strides, 1),
               dl = pad3(a.dilations, 1), pb = pad3(g.pad_begin, 0);
    const int64_t planes = x.shape[0] * x.shape[1], in_sz = in[0] * in[1] * in[2], out_sz = out[0] * out[1] * out[2];
    dispatch_arith(x.dtype, desc_, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.as<T>();
      T* py = y.as<T>();
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t o0 = 0; o0 < out[0]; ++o0)
          for (int64_t o1 = 0; o1 < out[1]; ++o1)
            for (int64_t o2 = 0; o2 < out[2]; ++o2) {
              T best = std::numeric_limits<T>::lowest();
              if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
              int64_t bi[3] = {-1, -1, -1};
              for (int64_t k0 = 0; k0 < k[0]; ++k0) {
                const int64_t i0 = o0 * st[0] - pb[0] + k0 * dl[0];
                if (i0 < 0 || i0 >= in[0]) continue;
                for (int64_t k1 = 0; k1 < k[1]; ++k1) {
                  const int64_t i1 = o1 * st[1] - pb[1] + k1 * dl[1];
                  if (i1 < 0 || i1 >= in[1]) continue;
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i2 = o2 * st[2] - pb[2] + k2 * dl[2];
                    if (i2 < 0 || i2 >= in[2]) continue;
                    const T v = px[p * in_sz + (i0 * in[1] + i1) * in[2] + i2];
                    if (bi[0] < 0 || v > best || (v != v && best == best)) {
                      best = v;
                      bi[0] = i0, bi[1] = i1, bi[2] = i2;
                    }
                  }
                }
              }
              const int64_t oi = p * out_sz + (o0 * out[1] + o1) * out[2] + o2;
              py[oi] = best;
              if (ind) ind[oi] = p * in_sz + flat_index(bi, in, sp);
            }
    });
  }

 private:
  /// Index of spatial position bi in a plane of `in` (dims padded to 3).
  int64_t flat_index(const int64_t* bi, const std::vector<int64_t>& in, size_t sp) const {
    if (bi[0] < 0) return 0;
    if (!col_major_) return (bi[0] * in[1] + bi[1]) * in[2] + bi[2];
    int64_t idx = 0;  // the first real spatial dim varies fastest
    for (size_t d = 3; d-- > 3 - sp;) idx = idx * in[d] + bi[d];
    return idx;
  }

  std::string desc_;
  ops::WindowAttrs raw_;
  bool col_major_;
};

std::unique_ptr<Kernel> make_pool(const ir::Node& n, const KernelConfig& config, bool is_max, bool global) {
  const std::vector<DType>& dts = config.input_dtypes;
  const bool wants_indices = n.outputs().size() > 1 && n.output(1) && !n.output(1)->name().empty();
  if (is_max && !global && (wants_indices || (!dts.empty() && dts[0] != DType::kFloat32))) {
    // Its loops read and write plain NCHW: a plan (a forged .gom) that gives
    // it another layout would make them read blocked bytes as plain ones.
    bool plain = config.input_layout(0) == ops::Layout::kPlain;
    for (ops::Layout l : config.output_layouts) plain = plain && l == ops::Layout::kPlain;
    if (!plain)
      fail(ErrorCode::kInvalidModel, n.describe() + ": a MaxPool with Indices or of another dtype than float32 "
                                                    "reads and writes plain NCHW only");
    return std::make_unique<NativeMaxPoolKernel>(n);
  }
  for (DType d : dts) require_f32(n, d);
  if (global) return std::make_unique<GlobalPoolKernel>(n, is_max, config);
  if (config.input_layout(0) != ops::Layout::kPlain)
    return std::make_unique<PixelPoolKernel>(n, is_max, config);
  // 2-D plain pools too (one float a pixel): oneDNN 2.6 has only its
  // scalar simple_nchw kernel for plain pooling without AVX-512.
  bool plain_out = true;
  for (ops::Layout l : config.output_layouts) plain_out = plain_out && l == ops::Layout::kPlain;
  const ir::Value* x = n.input(0);
  if (plain_out && x && x->type.has_shape && x->type.dims.size() == 4)
    return std::make_unique<PixelPoolKernel>(n, is_max, config);
  return std::make_unique<PoolKernel>(n, is_max, config);
}

GEC_REGISTER_KERNEL("", "MaxPool", [](const ir::Node& n, const KernelConfig& c) { return make_pool(n, c, true, false); });
GEC_REGISTER_KERNEL("", "AveragePool",
                    [](const ir::Node& n, const KernelConfig& c) { return make_pool(n, c, false, false); });
GEC_REGISTER_KERNEL("", "GlobalMaxPool",
                    [](const ir::Node& n, const KernelConfig& c) { return make_pool(n, c, true, true); });
GEC_REGISTER_KERNEL("", "GlobalAveragePool",
                    [](const ir::Node& n, const KernelConfig& c) { return make_pool(n, c, false, true); });

}  // namespace
}  // namespace gec::kernels::cpu
