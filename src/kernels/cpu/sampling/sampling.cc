// CPU kernels of MaxUnpool-11, GridSample-16, RoiAlign-16, AffineGrid-20 and
// Col2Im-18 (float32 and float64; native loops).
//
// GridSample follows the ONNX operator text and its reference: grid values
// in [-1, 1] are denormalized to pixel positions (align_corners picks corner
// or edge alignment); a position outside [x_min, x_max] is clamped (border)
// or reflected (reflection) first, and every pixel read outside the image is
// 0 (zeros), clamped or reflected. Bicubic uses the cubic convolution
// kernel with A = -0.75 on the 4x4 neighbourhood.
//
// RoiAlign averages (or maxes) bilinear samples on a sampling_ratio grid per
// output bin (adaptive ceil(roi/bins) when 0); half_pixel shifts the box by
// -0.5; output_half_pixel keeps the legacy box with a minimum size of 1.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

int64_t index_at(const TensorView& t, int64_t i) {
  return t.dtype == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
}

/// MaxUnpool-11: Y = zeros(output shape); Y.flat[I[j]] = X.flat[j]. The
/// indices address the default unpooled shape ((in - 1) * stride + kernel -
/// pads); a larger output_shape holds that result at its start, zero
/// elsewhere (as the ONNX reference pads it).
class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(const ir::Node& n)
      : what_(n.describe()), kernel_(n.get_ints("kernel_shape")), strides_(n.get_ints("strides")), pads_(n.get_ints("pads")) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& ind = ctx.in(1);
    TensorView& y = ctx.out(0);
    const size_t sp = x.shape.size() - 2;
    Shape def{x.shape[0], x.shape[1]};
    for (size_t i = 0; i < sp; ++i) {
      const int64_t s = i < strides_.size() ? strides_[i] : 1;
      const int64_t pb = i < pads_.size() ? pads_[i] : 0, pe = i + sp < pads_.size() ? pads_[i + sp] : 0;
      def.push_back((x.shape[i + 2] - 1) * s + kernel_.at(i) - pb - pe);
    }
    for (size_t i = 0; i < def.size(); ++i)
      if (y.shape[i] < def[i])
        fail(ErrorCode::kInvalidArgument, what_ + ": output_shape " + shape_str(y.shape) + " is smaller than " + shape_str(def));
    const int64_t def_n = shape_numel(def);
    dispatch_arith(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      T* py = y.as<T>();
      std::fill(py, py + y.numel(), T(0));
      for (int64_t j = 0; j < x.numel(); ++j) {
        int64_t i = index_at(ind, j);
        if (i < 0 || i >= def_n) fail(ErrorCode::kInvalidArgument, what_ + ": index " + std::to_string(i) + " is out of range");
        // Re-address flat index i of `def` in y's shape.
        int64_t o = 0, mul = 1;
        for (size_t d = def.size(); d-- > 0;) {
          o += (i % def[d]) * mul;
          i /= def[d];
          mul *= y.shape[d];
        }
        py[o] = x.as<T>()[j];
      }
    });
  }

 private:
  std::string what_;
  std::vector<int64_t> kernel_, strides_, pads_;
};

// ---- GridSample-16 --------------------------------------------------------------

enum class GsMode { kBilinear, kNearest, kBicubic };
enum class GsPad { kZeros, kBorder, kReflection };

/// Reflects x into [lo, hi] as the ONNX reference does.
double gs_reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const auto n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const auto n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double x, double c[4]) {
  constexpr double A = -0.75;
  x = std::fabs(x);
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const ir::Node& n)
      : what_(n.describe()), align_corners_(n.get_int("align_corners", 0) != 0) {
    const std::string mode = n.get_string("mode", "bilinear");
    if (mode == "bilinear") mode_ = GsMode::kBilinear;
    else if (mode == "nearest") mode_ = GsMode::kNearest;
    else if (mode == "bicubic") mode_ = GsMode::kBicubic;
    else fail(ErrorCode::kUnsupported, what_ + ": mode '" + mode + "' is not supported");
    const std::string pad = n.get_string("padding_mode", "zeros");
    if (pad == "zeros") pad_ = GsPad::kZeros;
    else if (pad == "border") pad_ = GsPad::kBorder;
    else if (pad == "reflection") pad_ = GsPad::kReflection;
    else fail(ErrorCode::kUnsupported, what_ + ": padding_mode '" + pad + "' is not supported");
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& grid = ctx.in(1);
    TensorView& y = ctx.out(0);
    if (grid.dtype != x.dtype) fail(ErrorCode::kUnsupported, what_ + ": grid dtype differs from X");
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
      const int64_t Ho = y.shape[2], Wo = y.shape[3];
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) {
            const T* g = grid.as<T>() + ((n * Ho + i) * Wo + j) * 2;
            for (int64_t c = 0; c < C; ++c) {
              const T* img = x.as<T>() + (n * C + c) * H * W;
              y.as<T>()[((n * C + c) * Ho + i) * Wo + j] = static_cast<T>(sample(img, H, W, g[0], g[1]));
            }
          }
    });
  }

 private:
  double denorm(double v, int64_t size) const {
    return align_corners_ ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
  }

  /// Pixel (r, c) with the padding mode applied to out-of-image indices.
  template <typename T>
  double pixel(const T* img, int64_t H, int64_t W, int64_t r, int64_t c) const {
    if (pad_ == GsPad::kZeros) return (r >= 0 && r < H && c >= 0 && c < W) ? static_cast<double>(img[r * W + c]) : 0.0;
    if (pad_ == GsPad::kBorder) {
      r = std::clamp<int64_t>(r, 0, H - 1);
      c = std::clamp<int64_t>(c, 0, W - 1);
    } else {
      c = static_cast<int64_t>(gs_reflect(static_cast<double>(c), xmin(W), xmax(W)));
      r = static_cast<int64_t>(gs_reflect(static_cast<double>(r), xmin(H), xmax(H)));
      r = std::clamp<int64_t>(r, 0, H - 1);  // a reflected -0.5 truncates to 0; guards rounding
      c = std::clamp<int64_t>(c, 0, W - 1);
    }
    return static_cast<double>(img[r * W + c]);
  }
  double xmin(int64_t) const { return align_corners_ ? 0.0 : -0.5; }
  double xmax(int64_t size) const { return align_corners_ ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5; }

  template <typename T>
  double sample(const T* img, int64_t H, int64_t W, double gx, double gy) const {
    double x = denorm(gx, W), yy = denorm(gy, H);
    if (mode_ == GsMode::kNearest) {
      x = std::nearbyint(x);
      yy = std::nearbyint(yy);
    }
    // A NaN or infinite grid point samples nothing (zero), whatever the
    // padding mode: it has no pixel to clamp or reflect to.
    if (!std::isfinite(x) || !std::isfinite(yy)) return 0.0;
    if (x < xmin(W) || x > xmax(W) || yy < xmin(H) || yy > xmax(H)) {
      if (pad_ == GsPad::kBorder) {
        x = std::clamp(x, 0.0, static_cast<double>(W - 1));
        yy = std::clamp(yy, 0.0, static_cast<double>(H - 1));
      } else if (pad_ == GsPad::kReflection) {
        x = gs_reflect(x, xmin(W), xmax(W));
        yy = gs_reflect(yy, xmin(H), xmax(H));
      }
    }
    if (mode_ == GsMode::kNearest)
      return pixel(img, H, W, static_cast<int64_t>(std::nearbyint(yy)), static_cast<int64_t>(std::nearbyint(x)));
    if (mode_ == GsMode::kBilinear) {
      const double x1 = std::floor(x), y1 = std::floor(yy);
      const auto c1 = static_cast<int64_t>(x1), r1 = static_cast<int64_t>(y1);
      const double dx1 = x - x1, dx2 = x1 + 1 - x, dy1 = yy - y1, dy2 = y1 + 1 - yy;
      return dy2 * (dx2 * pixel(img, H, W, r1, c1) + dx1 * pixel(img, H, W, r1, c1 + 1)) +
             dy1 * (dx2 * pixel(img, H, W, r1 + 1, c1) + dx1 * pixel(img, H, W, r1 + 1, c1 + 1));
    }
    const double x0 = std::floor(x) - 1, y0 = std::floor(yy) - 1;
    double cx[4], cy[4];
    cubic_coeffs(x - x0 - 1, cx);
    cubic_coeffs(yy - y0 - 1, cy);
    double out = 0;
    for (int64_t a = 0; a < 4; ++a) {
      double row = 0;
      for (int64_t b = 0; b < 4; ++b)
        row += cx[b] * pixel(img, H, W, static_cast<int64_t>(y0) + a, static_cast<int64_t>(x0) + b);
      out += cy[a] * row;
    }
    return out;
  }

  std::string what_;
  bool align_corners_;
  GsMode mode_ = GsMode::kBilinear;
  GsPad pad_ = GsPad::kZeros;
};

// ---- RoiAlign-16 -------------------------------------------------------------------

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const ir::Node& n)
      : what_(n.describe()),
        half_pixel_(n.get_string("coordinate_transformation_mode", "half_pixel") == "half_pixel"),
        max_(n.get_string("mode", "avg") == "max"),
        sampling_ratio_(n.get_int("sampling_ratio", 0)),
        scale_(n.get_float("spatial_scale", 1.0f)) {
    const std::string ctm = n.get_string("coordinate_transformation_mode", "half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      fail(ErrorCode::kUnsupported, what_ + ": coordinate_transformation_mode '" + ctm + "' is not supported");
    const std::string mode = n.get_string("mode", "avg");
    if (mode != "avg" && mode != "max") fail(ErrorCode::kUnsupported, what_ + ": mode '" + mode + "' is not supported");
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& rois = ctx.in(1);
    const TensorView& bi = ctx.in(2);
    TensorView& y = ctx.out(0);
    if (rois.dtype != x.dtype) fail(ErrorCode::kUnsupported, what_ + ": rois dtype differs from X");
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
      const int64_t R = y.shape[0], ph_n = y.shape[2], pw_n = y.shape[3];
      const double off = half_pixel_ ? 0.5 : 0.0;
      for (int64_t r = 0; r < R; ++r) {
        const T* box = rois.as<T>() + r * 4;
        const int64_t b = index_at(bi, r);
        if (b < 0 || b >= N) fail(ErrorCode::kInvalidArgument, what_ + ": batch index out of range");
        const double sw = box[0] * scale_ - off, sh = box[1] * scale_ - off;
        double rw = box[2] * scale_ - off - sw, rh = box[3] * scale_ - off - sh;
        if (!half_pixel_) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bh = rh / static_cast<double>(ph_n), bw = rw / static_cast<double>(pw_n);
        const int64_t gh = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rh / static_cast<double>(ph_n)));
        const int64_t gw = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rw / static_cast<double>(pw_n)));
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        for (int64_t c = 0; c < C; ++c) {
          const T* img = x.as<T>() + (b * C + c) * H * W;
          for (int64_t ph = 0; ph < ph_n; ++ph)
            for (int64_t pw = 0; pw < pw_n; ++pw) {
              double acc = 0;
              bool first = true;
              for (int64_t iy = 0; iy < gh; ++iy) {
                const double yy = sh + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh);
                for (int64_t ix = 0; ix < gw; ++ix) {
                  const double xx = sw + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw);
                  const double v = bilinear(img, H, W, yy, xx);
                  if (max_) acc = first ? v : std::max(acc, v);
                  else acc += v;
                  first = false;
                }
              }
              y.as<T>()[((r * C + c) * ph_n + ph) * pw_n + pw] = static_cast<T>(max_ ? acc : acc / count);
            }
        }
      }
    });
  }

 private:
  /// Bilinear sample at (y, x); 0 outside [-1, H] x [-1, W], edges clamped.
  template <typename T>
  static double bilinear(const T* img, int64_t H, int64_t W, double y, double x) {
    if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return 0.0;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    auto y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
    int64_t y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= H - 1) {
      y0 = y1 = H - 1;
      y = static_cast<double>(y0);
    }
    if (x0 >= W - 1) {
      x0 = x1 = W - 1;
      x = static_cast<double>(x0);
    }
    const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
    return hy * hx * img[y0 * W + x0] + hy * lx * img[y0 * W + x1] + ly * hx * img[y1 * W + x0] +
           ly * lx * img[y1 * W + x1];
  }

  std::string what_;
  bool half_pixel_, max_;
  int64_t sampling_ratio_;
  double scale_;
};

/// AffineGrid-20 (the ONNX operator text and reference): the base grid holds
/// normalized coordinates in [-1, 1] per spatial dim, at pixel centres
/// ((2i + 1) / size - 1) or, with align_corners, at the corners
/// (-1 + 2i / (size - 1); 0 for a size of 1); each output point is
/// theta[n] x (x, y[, z], 1), x running along the last (width) dim.
class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(const ir::Node& n)
      : what_(n.describe()), align_corners_(n.get_int("align_corners", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const TensorView& theta = ctx.in(0);
    TensorView& grid = ctx.out(0);
    dispatch_float(theta.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const int64_t N = grid.shape[0];
      const int64_t sp = static_cast<int64_t>(grid.shape.size()) - 2;  // 2 or 3
      const int64_t D = sp == 3 ? grid.shape[1] : 1, H = grid.shape[sp - 1], W = grid.shape[sp];
      const T* th = theta.as<const T>();
      T* out = grid.as<T>();
      const int64_t cols = sp + 1;
      for (int64_t n = 0; n < N; ++n) {
        const T* t = th + n * sp * cols;
        for (int64_t d = 0; d < D; ++d)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w) {
              const double base[4] = {coord(w, W), coord(h, H), sp == 3 ? coord(d, D) : 1.0, 1.0};
              T* o = out + (((n * D + d) * H + h) * W + w) * sp;
              for (int64_t r = 0; r < sp; ++r) {
                double acc = 0;
                for (int64_t c = 0; c < cols; ++c) acc += static_cast<double>(t[r * cols + c]) * base[c];
                o[r] = static_cast<T>(acc);
              }
            }
      }
    });
  }
  std::string impl_name() const override { return "native"; }

 private:
  double coord(int64_t i, int64_t size) const {
    if (align_corners_) return size > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1) : 0.0;
    return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size) - 1.0;
  }
  std::string what_;
  bool align_corners_;
};

/// Col2Im-18: the inverse of im2col. Input [N, C * prod(block), L] holds, for
/// each of the L block positions (row-major over the spatial dims), the
/// block's C * prod(block) values (channel-major, then the block's own
/// row-major order); each is added into the image [N, C, *image_shape] at
/// position * stride + offset * dilation - pad_begin (values that land in
/// the padding are dropped). Geometry as in ops/sampling.cc.
class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(const ir::Node& n)
      : what_(n.describe()), dil_(n.get_ints("dilations")), st_(n.get_ints("strides")), pads_(n.get_ints("pads")) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    const std::vector<int64_t> image(y.shape.begin() + 2, y.shape.end());
    std::vector<int64_t> block;
    const TensorView& bs = ctx.in(2);
    for (int64_t i = 0; i < bs.numel(); ++i) block.push_back(index_at(bs, i));
    const size_t sp = image.size();
    const std::vector<int64_t> dil = sized(dil_, "dilations", sp, 1), st = sized(st_, "strides", sp, 1),
                               pads = sized(pads_, "pads", 2 * sp, 0);
    std::vector<int64_t> npos(sp);
    int64_t block_size = 1, positions = 1, image_size = 1;
    for (size_t i = 0; i < sp; ++i) {
      npos[i] = (image[i] + pads[i] + pads[i + sp] - dil[i] * (block[i] - 1) - 1) / st[i] + 1;
      block_size *= block[i];
      positions *= npos[i];
      image_size *= image[i];
    }
    const int64_t N = y.shape[0], C = y.shape[1];
    dispatch_float(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = x.as<const T>();
      T* dst = y.as<T>();
      std::fill_n(dst, y.numel(), T{0});
      std::vector<int64_t> bi(sp), pi(sp);
      for (int64_t nc = 0; nc < N * C; ++nc) {
        T* img = dst + nc * image_size;
        for (int64_t b = 0; b < block_size; ++b) {
          unravel(b, block, bi);
          const T* row = src + (nc * block_size + b) * positions;
          for (int64_t p = 0; p < positions; ++p) {
            unravel(p, npos, pi);
            int64_t off = 0;
            bool inside = true;
            for (size_t i = 0; i < sp && inside; ++i) {
              const int64_t at = pi[i] * st[i] + bi[i] * dil[i] - pads[i];
              inside = at >= 0 && at < image[i];
              off = off * image[i] + at;
            }
            if (inside) img[off] += row[p];
          }
        }
      }
    });
  }
  std::string impl_name() const override { return "native"; }

 private:
  static void unravel(int64_t i, const std::vector<int64_t>& dims, std::vector<int64_t>& out) {
    for (size_t k = dims.size(); k-- > 0;) {
      out[k] = i % dims[k];
      i /= dims[k];
    }
  }
  /// The attribute, or n copies of `def` when it is absent.
  std::vector<int64_t> sized(const std::vector<int64_t>& v, const char* name, size_t n, int64_t def) const {
    if (v.empty()) return std::vector<int64_t>(n, def);
    if (v.size() != n) fail(ErrorCode::kInvalidModel, what_ + ": " + name + " has the wrong number of entries");
    return v;
  }
  std::string what_;
  std::vector<int64_t> dil_, st_, pads_;
};

const bool kSamplingRegistered = [] {
  register_kernel("", "MaxUnpool", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<MaxUnpoolKernel>(n);
  }, __FILE__);
  register_kernel("", "GridSample", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<GridSampleKernel>(n);
  }, __FILE__);
  register_kernel("", "RoiAlign", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<RoiAlignKernel>(n);
  }, __FILE__);
  register_kernel("", "AffineGrid", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<AffineGridKernel>(n);
  }, __FILE__);
  register_kernel("", "Col2Im", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<Col2ImKernel>(n);
  }, __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
