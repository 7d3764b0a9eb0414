// Resize (ONNX Resize-13) on CPU, native: modes nearest (all nearest_mode
// values), linear (multi-linear over every resized dim) and cubic
// (cubic_coeff_a, exclude_outside); every coordinate_transformation_mode of
// the operator text incl. tf_crop_and_resize with roi and
// extrapolation_value. Scales come from `scales`, or out/in when `sizes` is
// given. Resize-18 antialias (linear and cubic, when a dim shrinks): the
// filter is stretched by 1 / scale and its taps renormalized, as the ONNX
// reference implementation computes them (below, antialias_taps).
//
// The op is separable: for each dim and output index we precompute the input
// taps (index, weight), then each output element sums over the product of
// its per-dim taps (1 for nearest, <= 2 for linear, <= 4 for cubic per
// resized dim; untouched dims contribute a single tap).
//
// Fast path (the common CNN upsample): when every dim but the last two maps
// output o to input o alone (scale 1, no crop) and no output of the last two
// dims falls outside the input, the op is a 2-D resample of each plane. Each
// output row is then a blend of its <= 4 input rows (skipped when it is one
// row with weight 1) resampled along W by per-column taps, parallel over
// (plane, row). The taps are the same ones the general path uses, built once
// per (shapes, scales, roi); only the float rounding order differs (float
// sums, H first, instead of one double sum), and nearest is an exact copy.
//
// Layouts (ops/layout.h): a 4-D float32 Resize of H and W only may run
// nChw16c or nhwc in and out, as the execution plan says (the layout
// assignment asks resize_layout_query first). The plane loops then move
// pixels of `vec_` floats: planes [N][C/16] of H x W pixels of 16 channels,
// or planes [N] of H x W pixels of C channels; plain is planes [N][C] of
// single elements.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"
#include "ops/layout.h"

namespace gec::kernels::cpu {
namespace {

// Element k of roi or scales, which we read as float32 or float64 (Resize-13
// also allows a float16 roi: refused here rather than read past its end).
double float_input(const TensorView& v, int64_t k, const std::string& who) {
  if (v.dtype == DType::kFloat64) return v.as<double>()[k];
  if (v.dtype == DType::kFloat32) return v.as<float>()[k];
  fail(ErrorCode::kUnsupported, who + ": roi/scales of dtype " + dtype_name(v.dtype) + " (float32 and float64 are supported)");
}

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct Tap {
  int64_t index;
  float weight;
};

/// Taps of every output index along one dim; `outside` marks outputs that
/// tf_crop_and_resize maps outside the input (they get extrapolation_value).
struct DimTaps {
  std::vector<int64_t> begin;  // taps of output o are taps[begin[o] .. begin[o+1])
  std::vector<Tap> taps;
  std::vector<uint8_t> outside;
};

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const ir::Node& n, const KernelConfig& config)
      : desc_(n.describe()),
        layout_(config.input_layout(0)),
        cubic_a_(n.get_float("cubic_coeff_a", -0.75f)),
        exclude_outside_(n.get_int("exclude_outside", 0) != 0),
        antialias_(n.get_int("antialias", 0) != 0),
        extrapolation_(n.get_float("extrapolation_value", 0.f)) {
    const std::string m = n.get_string("mode", "nearest");
    if (m == "nearest") mode_ = Mode::kNearest;
    else if (m == "linear") mode_ = Mode::kLinear;
    else if (m == "cubic") mode_ = Mode::kCubic;
    else fail(ErrorCode::kUnsupported, desc_ + ": Resize mode '" + m + "' is not supported");
    const std::string c = n.get_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") coord_ = Coord::kHalfPixel;
    else if (c == "half_pixel_symmetric") coord_ = Coord::kHalfPixelSymmetric;  // Resize-19
    else if (c == "pytorch_half_pixel") coord_ = Coord::kPytorchHalfPixel;
    else if (c == "align_corners") coord_ = Coord::kAlignCorners;
    else if (c == "asymmetric") coord_ = Coord::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn") coord_ = Coord::kTfHalfPixelForNn;
    else if (c == "tf_crop_and_resize") coord_ = Coord::kTfCropAndResize;
    else fail(ErrorCode::kUnsupported, desc_ + ": coordinate_transformation_mode '" + c + "' is not supported");
    const std::string nm = n.get_string("nearest_mode", "round_prefer_floor");
    if (nm == "round_prefer_floor") nearest_ = Nearest::kRoundPreferFloor;
    else if (nm == "round_prefer_ceil") nearest_ = Nearest::kRoundPreferCeil;
    else if (nm == "floor") nearest_ = Nearest::kFloor;
    else if (nm == "ceil") nearest_ = Nearest::kCeil;
    else fail(ErrorCode::kUnsupported, desc_ + ": nearest_mode '" + nm + "' is not supported");
    if (config.output_layout(0) != layout_)
      fail(ErrorCode::kInvalidModel, desc_ + ": input and output must have the same layout");
  }

  /// Whether the plane loops (the file comment's fast path) resample input
  /// `in` to `out` with the constant `roi` and `scales` (null: not given),
  /// the condition for a non-plain layout. Errors: as run() for bad scales.
  bool plane_path(const Shape& in, const Shape& out, const TensorView* roi, const TensorView* scales) {
    build_taps(roi, scales, in, out);
    plan_fast_path(in, out);
    return fast_;
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    if (x.numel() == 0) fail(ErrorCode::kInvalidArgument, desc_ + ": cannot resize an empty input to a non-empty output");
    if (mode_ != Mode::kNearest && x.dtype != DType::kFloat32)
      fail(ErrorCode::kUnsupported, desc_ + ": dtype " + dtype_name(x.dtype) + " is not supported for linear/cubic");
    if (taps_changed(ctx, x.shape, y.shape)) {
      build_taps(ctx.has_input(1) ? &ctx.in(1) : nullptr, ctx.has_input(2) ? &ctx.in(2) : nullptr, x.shape, y.shape);
      plan_fast_path(x.shape, y.shape);
    }
    if (layout_ != ops::Layout::kPlain && (!fast_ || x.dtype != DType::kFloat32))
      fail(ErrorCode::kInvalidModel, desc_ + ": planned in layout " + ops::layout_name(layout_) +
                                         ", which needs a float32 resample of H and W only, not " +
                                         dtype_name(x.dtype) + shape_str(x.shape) + " -> " + shape_str(y.shape));
    dispatch_arith(x.dtype, desc_, [&](auto t) {
      using T = decltype(t);
      if (!fast_) resample<T>(x.as<T>(), x.shape, y.as<T>(), y.shape, ctx.num_threads);
      else if (vec_ > 1 && mode_ == Mode::kNearest) pixels_nearest(x.as<T>(), y.as<T>(), ctx.num_threads);
      else if (mode_ == Mode::kNearest) plane_nearest<T>(x.as<T>(), y.as<T>(), ctx.num_threads);
      else if constexpr (std::is_same_v<T, float>) {
        if (vec_ > 1) pixels_weighted(x.as<float>(), y.as<float>(), ctx.num_threads);
        else plane_weighted(x.as<float>(), y.as<float>(), ctx.num_threads);
      }
    });
  }

  std::string impl_name() const override { return "native.resize"; }

 private:
  /// True when the shapes or the scales / roi values differ from the last
  /// run's (the taps depend on the scale values, not only on the shapes).
  bool taps_changed(const KernelContext& ctx, const Shape& in, const Shape& out) {
    std::vector<double> key(in.begin(), in.end());
    key.insert(key.end(), out.begin(), out.end());
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (!ctx.has_input(i)) continue;
      const TensorView& v = ctx.in(i);
      key.push_back(-1.0);  // separates the inputs
      for (int64_t k = 0; k < v.numel(); ++k)
        key.push_back(float_input(v, k, desc_));
    }
    if (have_key_ && key == key_) return false;
    key_ = std::move(key);
    have_key_ = true;
    return true;
  }

  /// Decides the fast path from the built taps (see the file comment) and
  /// flattens the taps of the last two dims into per-row / per-column tables.
  void plan_fast_path(const Shape& in, const Shape& out) {
    const size_t r = in.size();
    fast_ = r >= 2;
    // Leading dims must be copied as they are: the same size (found by
    // fuzzing: sizes that shrank C 2 -> 1 passed the tap test and the plane
    // loop wrote two planes into one) and each output reading its input.
    for (size_t d = 0; fast_ && d + 2 < r; ++d) fast_ = in[d] == out[d] && is_identity(dims_[d], out[d]);
    for (size_t d = r - 2; fast_ && d < r; ++d)
      for (uint8_t o : dims_[d].outside) fast_ = fast_ && !o;
    if (fast_ && layout_ != ops::Layout::kPlain)  // N and C kept, the planes of ops/layout.h
      fast_ = r == 4 && in[0] == out[0] && in[1] == out[1] && ops::layout_fits_channels(layout_, in[1]);
    if (!fast_) return;
    vec_ = layout_ == ops::Layout::kNhwc ? in[1] : layout_ == ops::Layout::kNChw16c ? ops::kBlockedChannels : 1;
    planes_ = shape_numel(in) / (in[r - 2] * in[r - 1] * vec_);
    in_h_ = in[r - 2], in_w_ = in[r - 1], out_h_ = out[r - 2], out_w_ = out[r - 1];
    const DimTaps& w = dims_[r - 1];
    col_single_ = true;
    col_pair_ = true;
    col_index_.assign(out_w_, 0);
    col_index2_.assign(out_w_, 0);
    col_w_.assign(2 * out_w_, 0.f);
    for (int64_t o = 0; o < out_w_; ++o) {
      const int64_t b = w.begin[o], e = w.begin[o + 1];
      col_single_ = col_single_ && e - b == 1 && w.taps[b].weight == 1.f;
      col_pair_ = col_pair_ && (e - b == 1 || e - b == 2);
      col_index_[o] = w.taps[b].index;
      col_w_[2 * o] = w.taps[b].weight;
      col_index2_[o] = e - b == 2 ? w.taps[b + 1].index : -1;  // -1: one tap (no 0 * x, which is NaN for an inf x)
      col_w_[2 * o + 1] = e - b == 2 ? w.taps[b + 1].weight : 0.f;
    }
  }

  /// Output o of this dim reads input o alone with weight 1.
  static bool is_identity(const DimTaps& dt, int64_t out) {
    for (int64_t o = 0; o < out; ++o) {
      const int64_t b = dt.begin[o];
      if (dt.outside[o] || dt.begin[o + 1] - b != 1 || dt.taps[b].index != o || dt.taps[b].weight != 1.f)
        return false;
    }
    return true;
  }

  /// Nearest: every output row is a column gather of one input row (a plain
  /// copy, so any dtype).
  template <typename T>
  void plane_nearest(const T* x, T* y, int threads) const {
    const DimTaps& h = dims_[dims_.size() - 2];
    const int64_t rows = planes_ * out_h_, ow = out_w_;
    const int64_t* cols = col_index_.data();
    parallel_for(rows, rows * ow > 32768 ? threads : 1, [&](int64_t row) {
      const int64_t p = row / out_h_, oh = row % out_h_;
      const T* src = x + (p * in_h_ + h.taps[h.begin[oh]].index) * in_w_;
      T* dst = y + row * ow;
      for (int64_t o = 0; o < ow; ++o) dst[o] = src[cols[o]];
    });
  }

  /// Linear / cubic (float32): blend the output row's input rows (contiguous,
  /// vectorizes), then apply each column's taps to the blended row.
  void plane_weighted(const float* x, float* y, int threads) const {
    const DimTaps& h = dims_[dims_.size() - 2];
    const DimTaps& w = dims_.back();
    const int64_t rows = planes_ * out_h_;
    parallel_ranges(rows, threads, [&](int64_t begin, int64_t end) {
      std::vector<float> blend(static_cast<size_t>(in_w_));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t p = row / out_h_, oh = row % out_h_;
        const float* src = blend_rows(x + p * in_h_ * in_w_, h, oh, blend.data());
        float* dst = y + row * out_w_;
        if (col_single_) {
          for (int64_t o = 0; o < out_w_; ++o) dst[o] = src[col_index_[o]];
          continue;
        }
        if (col_pair_) {  // linear: 1 or 2 taps per column, summed in the same order as below
          const int64_t* i0 = col_index_.data();
          const int64_t* i1 = col_index2_.data();
          const float* cw = col_w_.data();
          for (int64_t o = 0; o < out_w_; ++o) {
            float acc = 0.f;
            acc += cw[2 * o] * src[i0[o]];
            if (i1[o] >= 0) acc += cw[2 * o + 1] * src[i1[o]];
            dst[o] = acc;
          }
          continue;
        }
        for (int64_t o = 0; o < out_w_; ++o) {
          float acc = 0.f;
          for (int64_t k = w.begin[o]; k < w.begin[o + 1]; ++k) acc += w.taps[k].weight * src[w.taps[k].index];
          dst[o] = acc;
        }
      }
    }, rows * out_w_);
  }

  /// plane_nearest over pixels of vec_ elements (nhwc, nChw16c): each
  /// output pixel is a copy of one input pixel.
  template <typename T>
  void pixels_nearest(const T* x, T* y, int threads) const {
    const DimTaps& h = dims_[dims_.size() - 2];
    const int64_t rows = planes_ * out_h_, ow = out_w_, v = vec_;
    const int64_t* cols = col_index_.data();
    const size_t pixel = static_cast<size_t>(v) * sizeof(T);
    parallel_for(rows, rows * ow * v > 32768 ? threads : 1, [&](int64_t row) {
      const int64_t p = row / out_h_, oh = row % out_h_;
      const T* src = x + (p * in_h_ + h.taps[h.begin[oh]].index) * in_w_ * v;
      T* dst = y + row * ow * v;
      for (int64_t o = 0; o < ow; ++o) std::memcpy(dst + o * v, src + cols[o] * v, pixel);
    });
  }

  /// plane_weighted over pixels of vec_ floats: the blended input row, then
  /// each output pixel as its columns' taps over whole pixels.
  void pixels_weighted(const float* x, float* y, int threads) const {
    const DimTaps& h = dims_[dims_.size() - 2];
    const DimTaps& w = dims_.back();
    const int64_t rows = planes_ * out_h_, v = vec_;
    parallel_ranges(rows, threads, [&](int64_t begin, int64_t end) {
      std::vector<float> blend(static_cast<size_t>(in_w_ * v));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t p = row / out_h_, oh = row % out_h_;
        const float* src = blend_rows(x + p * in_h_ * in_w_ * v, h, oh, blend.data(), v);
        float* dst = y + row * out_w_ * v;
        for (int64_t o = 0; o < out_w_; ++o) weighted_sum(w, o, src, v, dst + o * v);
      }
    }, rows * out_w_ * v);
  }

  /// sum_k weight_k * plane[row_k] over output row `oh`'s taps, into `buf`
  /// (rows of in_w_ pixels of `vec` elements); returns the input row itself
  /// when that is one row with weight 1.
  const float* blend_rows(const float* plane, const DimTaps& h, int64_t oh, float* buf, int64_t vec = 1) const {
    const int64_t b = h.begin[oh], e = h.begin[oh + 1];
    if (e - b == 1 && h.taps[b].weight == 1.f) return plane + h.taps[b].index * in_w_ * vec;
    weighted_sum(h, oh, plane, in_w_ * vec, buf);
    return buf;
  }

  /// out[i] = sum_k weight_k * src[index_k * n + i] for i < n over output
  /// `o`'s taps of `t`, summed in tap order: blocks of n floats (input rows
  /// for blend_rows, pixels for pixels_weighted) blended into `out`.
  static void weighted_sum(const DimTaps& t, int64_t o, const float* src, int64_t n, float* out) {
    const int64_t b = t.begin[o], e = t.begin[o + 1];
    {
      const float wt = t.taps[b].weight;
      const float* s = src + t.taps[b].index * n;
      for (int64_t i = 0; i < n; ++i) out[i] = wt * s[i];
    }
    for (int64_t k = b + 1; k < e; ++k) {
      const float wt = t.taps[k].weight;
      const float* s = src + t.taps[k].index * n;
      for (int64_t i = 0; i < n; ++i) out[i] += wt * s[i];
    }
  }

  void build_taps(const TensorView* roi_in, const TensorView* scales, const Shape& in, const Shape& out) {
    const size_t r = in.size();
    const bool has_scales = scales && scales->numel() > 0;
    std::vector<float> roi(2 * r, 0.f);
    for (size_t i = 0; i < r; ++i) roi[r + i] = 1.f;
    if (coord_ == Coord::kTfCropAndResize && roi_in && roi_in->numel() == static_cast<int64_t>(2 * r)) {
      const TensorView& rv = *roi_in;
      for (size_t i = 0; i < 2 * r; ++i)
        roi[i] = static_cast<float>(float_input(rv, static_cast<int64_t>(i), desc_));
    }
    dims_.resize(r);
    for (size_t d = 0; d < r; ++d) {
      float scale = has_scales && static_cast<int64_t>(d) < scales->numel()
                        ? static_cast<float>(float_input(*scales, static_cast<int64_t>(d), desc_))
                        : static_cast<float>(out[d]) / static_cast<float>(in[d]);
      // With sizes and scales both given (the importer's Resize-18
      // keep_aspect_ratio_policy form) nothing upstream checked the scale.
      if (!(scale > 0) || !std::isfinite(scale)) scale = static_cast<float>(out[d]) / static_cast<float>(in[d]);
      dim_taps(dims_[d], in[d], out[d], scale, roi[d], roi[r + d]);
    }
  }

  /// ONNX Resize-13/19 coordinate_transformation_mode: output index -> input coordinate.
  float source_coord(int64_t o, int64_t in, int64_t out, float scale, float start, float end) const {
    const float x = static_cast<float>(o);
    switch (coord_) {
      case Coord::kHalfPixel: return (x + 0.5f) / scale - 0.5f;
      case Coord::kHalfPixelSymmetric: {
        // Resize-19: shift by what rounding the resized length took off,
        // split evenly between both ends.
        const double width = static_cast<double>(in) * static_cast<double>(scale);
        const double adjustment = static_cast<double>(out) / width;
        const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
        return static_cast<float>(offset + (static_cast<double>(x) + 0.5) / static_cast<double>(scale) - 0.5);
      }
      case Coord::kPytorchHalfPixel: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.f;
      case Coord::kAlignCorners: {
        // The reference divides by (in * scale - 1), the unrounded resized
        // length, not by (out - 1): they differ when in * scale is fractional.
        if (out == 1) return 0.f;
        const double len = static_cast<double>(in) * static_cast<double>(scale);
        return static_cast<float>(static_cast<double>(x) * static_cast<double>(in - 1) / (len - 1.0));
      }
      case Coord::kAsymmetric: return x / scale;
      case Coord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
      case Coord::kTfCropAndResize:
        return out > 1 ? start * (in - 1) + x * (end - start) * (in - 1) / static_cast<float>(out - 1)
                       : 0.5f * (start + end) * (in - 1);
    }
    return x;
  }

  int64_t nearest_index(float c) const {
    switch (nearest_) {
      case Nearest::kRoundPreferFloor: return c == std::floor(c) + 0.5f ? static_cast<int64_t>(std::floor(c)) : std::llround(c);
      case Nearest::kRoundPreferCeil: return c == std::floor(c) + 0.5f ? static_cast<int64_t>(std::ceil(c)) : std::llround(c);
      case Nearest::kFloor: return static_cast<int64_t>(std::floor(c));
      case Nearest::kCeil: return static_cast<int64_t>(std::ceil(c));
    }
    return 0;
  }

  void dim_taps(DimTaps& dt, int64_t in, int64_t out, float scale, float start, float end) const {
    dt.begin.assign(1, 0);
    dt.taps.clear();
    dt.outside.assign(out, 0);
    auto clampi = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
    for (int64_t o = 0; o < out; ++o) {
      float c = source_coord(o, in, out, scale, start, end);
      // Found by fuzzing: a NaN or huge coordinate overflowed the index cast.
      // Two pixels past either edge every mode clamps to the edge anyway.
      if (!std::isfinite(c)) c = 0.f;
      c = std::clamp(c, -2.f, static_cast<float>(in + 1));
      if (coord_ == Coord::kTfCropAndResize && (c < 0 || c > static_cast<float>(in - 1))) dt.outside[o] = 1;
      if (antialias_ && mode_ != Mode::kNearest && scale < 1.f) {
        antialias_taps(dt, c, in, scale);
      } else if (mode_ == Mode::kNearest) {
        dt.taps.push_back({clampi(nearest_index(c)), 1.f});
      } else if (mode_ == Mode::kLinear) {
        c = std::min(std::max(c, 0.f), static_cast<float>(in - 1));
        const int64_t i0 = static_cast<int64_t>(std::floor(c)), i1 = std::min(i0 + 1, in - 1);
        const float t = c - static_cast<float>(i0);
        push_nonzero(dt, i0, 1.f - t);
        if (i1 != i0) push_nonzero(dt, i1, t);
      } else {
        cubic_taps(dt, c, in);
      }
      dt.begin.push_back(static_cast<int64_t>(dt.taps.size()));
    }
  }

  /// Resize-18 antialias for a shrinking dim (scale < 1), per the ONNX
  /// reference: with x0 = ceil(c) - 1 and r = c - x0 in (0, 1], tap x0 + i
  /// for i in [start, 2 - start) weighs filter((i - r) * scale), the filter
  /// being the triangle (linear: start = floor(-1 / scale) + 1) or the
  /// cubic kernel with A (start = floor(-2 / scale) + 1); weights are
  /// normalized to sum 1. Taps past an edge read the edge pixel, or
  /// (exclude_outside) are dropped and the rest renormalized.
  void antialias_taps(DimTaps& dt, float c, int64_t in, float scale) const {
    const double s = scale, cd = c;
    const double x0 = std::ceil(cd) - 1, r = cd - x0;
    const double support = mode_ == Mode::kLinear ? 1.0 : 2.0;
    const int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
    // The output has at least one element, so scale >= 1 / in and the
    // window is at most 2 * in + 4 wide; a wider one means a bad scale.
    if (2 - 2 * start > 4 * in + 8)
      fail(ErrorCode::kInvalidArgument, desc_ + ": antialias scale " + std::to_string(scale) + " is too small for " +
                                            "an input dim of " + std::to_string(in));
    const double A = cubic_a_;
    auto filter = [&](double x) {
      x = std::fabs(x);
      if (mode_ == Mode::kLinear) return std::max(0.0, 1.0 - x);
      if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
      if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
      return 0.0;
    };
    const size_t first = dt.taps.size();
    std::vector<double> w;
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      const double v = filter((static_cast<double>(i) - r) * s);
      w.push_back(v);
      sum += v;
    }
    double kept = 0;
    for (int64_t i = start, k = 0; i < 2 - start; ++i, ++k) {
      const int64_t idx = static_cast<int64_t>(x0) + i;
      const bool out = idx < 0 || idx >= in;
      if (exclude_outside_ && out) continue;
      const double v = sum != 0 ? w[k] / sum : 0;
      kept += v;
      dt.taps.push_back({std::min(std::max<int64_t>(idx, 0), in - 1), static_cast<float>(v)});
    }
    if (exclude_outside_ && kept != 0)
      for (size_t k = first; k < dt.taps.size(); ++k) dt.taps[k].weight = static_cast<float>(dt.taps[k].weight / kept);
  }

  static void push_nonzero(DimTaps& dt, int64_t i, float w) {
    if (w != 0.f) dt.taps.push_back({i, w});
  }

  /// Keys cubic convolution with coefficient A over taps floor(c)-1..+2;
  /// outside taps clamp to the edge, or (exclude_outside) drop and renormalize.
  void cubic_taps(DimTaps& dt, float c, int64_t in) const {
    const float A = cubic_a_;
    const float fl = std::floor(c), t = c - fl;
    const float w[4] = {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
                        ((A + 2) * t - (A + 3)) * t * t + 1,
                        ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
                        ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A};
    float sum = 0;
    const size_t first = dt.taps.size();
    for (int k = 0; k < 4; ++k) {
      const int64_t i = static_cast<int64_t>(fl) - 1 + k;
      const bool out = i < 0 || i >= in;
      if (exclude_outside_ && out) continue;
      sum += w[k];
      dt.taps.push_back({std::min(std::max<int64_t>(i, 0), in - 1), w[k]});
    }
    if (exclude_outside_ && sum != 0.f)
      for (size_t k = first; k < dt.taps.size(); ++k) dt.taps[k].weight /= sum;
  }

  template <typename T>
  void resample(const T* x, const Shape& in, T* y, const Shape& out, int threads) const {
    const int64_t r = static_cast<int64_t>(in.size()), n = shape_numel(out);
    std::vector<int64_t> in_strides(r, 1);
    for (int64_t d = r - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in[d + 1];
    parallel_for(n, n > 32768 ? threads : 1, [&](int64_t e) { y[e] = element<T>(x, in_strides, out, e); });
  }

  /// One output element: sum over the product of its per-dim taps.
  template <typename T>
  T element(const T* x, const std::vector<int64_t>& in_strides, const Shape& out, int64_t e) const {
    const int64_t r = static_cast<int64_t>(out.size());
    int64_t idx[12], cur[12];
    if (r > 12) fail(ErrorCode::kUnsupported, desc_ + ": Resize of rank > 12");
    for (int64_t d = r - 1, rem = e; d >= 0; --d) {
      idx[d] = rem % out[d];
      rem /= out[d];
      if (dims_[d].outside[idx[d]]) return static_cast<T>(extrapolation_);
      cur[d] = dims_[d].begin[idx[d]];
    }
    double acc = 0;
    while (true) {
      double w = 1;
      int64_t off = 0;
      for (int64_t d = 0; d < r; ++d) {
        const Tap& t = dims_[d].taps[cur[d]];
        w *= t.weight;
        off += t.index * in_strides[d];
      }
      acc += w * static_cast<double>(x[off]);
      int64_t d = r - 1;  // odometer over tap combinations
      for (; d >= 0; --d) {
        if (++cur[d] < dims_[d].begin[idx[d] + 1]) break;
        cur[d] = dims_[d].begin[idx[d]];
      }
      if (d < 0) break;
    }
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(acc);
    else return static_cast<T>(std::llround(acc));
  }

  std::string desc_;
  ops::Layout layout_;  // of input 0 and output 0 (ops/layout.h)
  Mode mode_ = Mode::kNearest;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  float cubic_a_;
  bool exclude_outside_, antialias_;
  float extrapolation_;
  std::vector<DimTaps> dims_;
  // Cache key of dims_ (shapes, scales, roi) and the fast-path plan.
  std::vector<double> key_;
  bool have_key_ = false;
  bool fast_ = false, col_single_ = false, col_pair_ = false;
  int64_t planes_ = 0, in_h_ = 0, in_w_ = 0, out_h_ = 0, out_w_ = 0;
  int64_t vec_ = 1;  // elements per pixel in the plane loops: 1 plain, 16 nChw16c, C nhwc
  std::vector<int64_t> col_index_;  // input column of each output column (first tap)
  std::vector<int64_t> col_index2_;  // second tap's column, -1 for none (col_pair_)
  std::vector<float> col_w_;         // the two taps' weights per output column (col_pair_)
};

/// LayoutQuery for Resize (kernels::implementation_for_layout): "native.resize"
/// when `n` resamples a static 4-D float32 input's H and W only, with
/// constant scales / sizes, so that the plane loops run it in layout `src`
/// = `dst`; "" otherwise (and for plain, which needs no asking).
std::string resize_layout_query(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src != dst || src == ops::Layout::kPlain || n.outputs().empty() || !n.has_input(0)) return "";
  const ir::Value *x = n.input(0), *y = n.output(0);
  if (!x->type.is_static() || !y->type.is_static() || x->type.dtype != DType::kFloat32) return "";
  const Shape xs = x->type.static_shape(), ys = y->type.static_shape();
  if (xs.size() != 4 || ys.size() != 4 || shape_numel(xs) == 0 || shape_numel(ys) == 0) return "";
  std::optional<TensorView> roi, scales;
  for (size_t i : {size_t{1}, size_t{2}, size_t{3}}) {
    if (!n.has_input(i)) continue;
    if (!n.input(i)->is_constant()) return "";  // taps decided at run time
    if (i == 1) roi = n.input(i)->constant->view();
    if (i == 2) scales = n.input(i)->constant->view();
  }
  try {
    KernelConfig c = KernelConfig::for_node(n);
    c.input_layouts = {src};
    c.output_layouts = {dst};
    ResizeKernel k(n, c);
    return k.plane_path(xs, ys, roi ? &*roi : nullptr, scales ? &*scales : nullptr) ? k.impl_name() : "";
  } catch (const Error&) {
    return "";
  }
}

const bool kResizeLayoutQuery = [] {
  register_layout_query("", "Resize", resize_layout_query);
  return true;
}();

GEC_REGISTER_KERNEL("", "Resize", [](const ir::Node& n, const KernelConfig& config) -> std::unique_ptr<Kernel> {
  return std::make_unique<ResizeKernel>(n, config);
});

}  // namespace
}  // namespace gec::kernels::cpu
