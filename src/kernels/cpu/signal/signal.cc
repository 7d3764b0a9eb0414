// CPU kernels of DFT-17, STFT-17, the window generators (HannWindow-17,
// HammingWindow-17, BlackmanWindow-17) and MelWeightMatrix-17.
//
// The DFT is the direct O(n^2) sum with a precomputed twiddle table indexed
// by (f * k) mod n, accumulated in double: correctness first (these ops are
// rare in the models we target; an FFT can replace dft_line() later).
#include <cmath>
#include <vector>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/elementwise/elementwise_half.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Reads element i of a float32/float64 tensor as double.
inline double real_at(const TensorView& t, int64_t i) {
  return t.dtype == DType::kFloat64 ? t.as<double>()[i] : t.as<float>()[i];
}
inline void real_store(TensorView& t, int64_t i, double v) {
  if (t.dtype == DType::kFloat64) t.as<double>()[i] = v;
  else t.as<float>()[i] = static_cast<float>(v);
}

int64_t scalar_int_input(const TensorView& t) {
  return t.dtype == DType::kInt32 ? t.as<int32_t>()[0] : t.as<int64_t>()[0];
}

/// Twiddles cos/sin(2 pi j / n), j < n.
struct Twiddles {
  std::vector<double> c, s;
  void build(int64_t n) {
    if (static_cast<int64_t>(c.size()) == n) return;
    c.resize(static_cast<size_t>(n));
    s.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      c[j] = std::cos(2 * kPi * static_cast<double>(j) / static_cast<double>(n));
      s[j] = std::sin(2 * kPi * static_cast<double>(j) / static_cast<double>(n));
    }
  }
};

/// out[f] = sum_{k<n} in[k] e^{-+2 pi i f k / n} for f < n_out; `in` holds n
/// complex values (re, im interleaved, zero-padded by the caller).
void dft_line(const std::vector<double>& in, int64_t n, int64_t n_out, bool inverse, const Twiddles& tw,
              std::vector<double>& out) {
  const double sign = inverse ? 1.0 : -1.0;
  out.assign(static_cast<size_t>(2 * n_out), 0.0);
  for (int64_t f = 0; f < n_out; ++f) {
    double re = 0, im = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t j = (f * k) % n;
      const double c = tw.c[j], s = sign * tw.s[j];
      re += in[2 * k] * c - in[2 * k + 1] * s;
      im += in[2 * k] * s + in[2 * k + 1] * c;
    }
    out[2 * f] = inverse ? re / static_cast<double>(n) : re;
    out[2 * f + 1] = inverse ? im / static_cast<double>(n) : im;
  }
}

void require_real(const std::string& what, DType t) {
  if (t != DType::kFloat32 && t != DType::kFloat64)
    fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not supported");
}

/// DFT-17 along attr axis; the input line is truncated or zero-padded to
/// dft_length.
class DftKernel final : public Kernel {
 public:
  explicit DftKernel(const ir::Node& n)
      : what_(n.describe()), axis_(n.get_int("axis", 1)), inverse_(n.get_int("inverse", 0) != 0) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    require_real(what_, x.dtype);
    const int64_t r = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    const int64_t comps = x.shape.back(), n_in = x.shape[axis];
    const int64_t n = ctx.has_input(1) && ctx.in(1).numel() > 0 ? scalar_int_input(ctx.in(1)) : n_in;
    const int64_t n_out = y.shape[axis];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (int64_t d = axis + 1; d < r - 1; ++d) inner *= x.shape[d];
    tw_.build(n);
    std::vector<double> line, out;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        line.assign(static_cast<size_t>(2 * n), 0.0);
        for (int64_t k = 0; k < std::min(n, n_in); ++k) {
          const int64_t src = ((o * n_in + k) * inner + i) * comps;
          line[2 * k] = real_at(x, src);
          if (comps == 2) line[2 * k + 1] = real_at(x, src + 1);
        }
        dft_line(line, n, n_out, inverse_, tw_, out);
        for (int64_t f = 0; f < n_out; ++f) {
          const int64_t dst = ((o * n_out + f) * inner + i) * 2;
          real_store(y, dst, out[2 * f]);
          real_store(y, dst + 1, out[2 * f + 1]);
        }
      }
  }

 private:
  std::string what_;
  int64_t axis_;
  bool inverse_;
  Twiddles tw_;
};

/// STFT-17: frames of frame_length samples every frame_step, multiplied by
/// the window (when given), each transformed by a forward DFT.
class StftKernel final : public Kernel {
 public:
  explicit StftKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    require_real(what_, x.dtype);
    const int64_t step = scalar_int_input(ctx.in(1));
    const TensorView* win = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    const int64_t len = ctx.has_input(3) ? scalar_int_input(ctx.in(3)) : win->shape[0];
    const int64_t batch = x.shape[0], length = x.shape[1], comps = x.shape[2];
    const int64_t frames = y.shape[1], bins = y.shape[2];
    tw_.build(len);
    std::vector<double> line, out;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        line.assign(static_cast<size_t>(2 * len), 0.0);
        for (int64_t k = 0; k < len; ++k) {
          const double w = win ? real_at(*win, k) : 1.0;
          const int64_t src = (b * length + f * step + k) * comps;
          line[2 * k] = real_at(x, src) * w;
          if (comps == 2) line[2 * k + 1] = real_at(x, src + 1) * w;
        }
        dft_line(line, len, bins, false, tw_, out);
        for (int64_t j = 0; j < 2 * bins; ++j) real_store(y, (b * frames + f) * bins * 2 + j, out[j]);
      }
  }

 private:
  std::string what_;
  Twiddles tw_;
};

/// Writes double values into a tensor of any numeric output_datatype.
void store_any(TensorView& t, const std::vector<double>& v, const std::string& what) {
  if (is_half_dtype(t.dtype)) {
    for (size_t i = 0; i < v.size(); ++i)
      t.as<uint16_t>()[i] = t.dtype == DType::kBFloat16 ? float_to_bf16(static_cast<float>(v[i]))
                                                        : float_to_half(static_cast<float>(v[i]));
    return;
  }
  dispatch_arith(t.dtype, what, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < v.size(); ++i) t.as<T>()[i] = static_cast<T>(v[i]);
  });
}

enum class Window { kHann, kHamming, kBlackman };

/// w[n] = sum_m (-1)^m a_m cos(2 pi m n / N), N = size (periodic) or size - 1
/// (symmetric): Hann a = (0.5, 0.5), Hamming (25/46, 21/46), Blackman
/// (0.42, 0.5, 0.08).
class WindowKernel final : public Kernel {
 public:
  WindowKernel(const ir::Node& n, Window w) : what_(n.describe()), w_(w), periodic_(n.get_int("periodic", 1) != 0) {}
  void run(KernelContext& ctx) override {
    const int64_t size = scalar_int_input(ctx.in(0));
    const double big_n = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> v(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      const double t = 2 * kPi * static_cast<double>(i) / big_n;
      switch (w_) {
        case Window::kHann: v[i] = 0.5 - 0.5 * std::cos(t); break;
        case Window::kHamming: v[i] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(t); break;
        case Window::kBlackman: v[i] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t); break;
      }
    }
    store_any(ctx.out(0), v, what_);
  }

 private:
  std::string what_;
  Window w_;
  bool periodic_;
};

/// MelWeightMatrix-17 as the ONNX reference computes it: num_mel_bins + 2
/// edges spaced evenly on the mel scale (step = range / (num_mel_bins + 2)),
/// mapped to DFT bins floor((dft_length + 1) * hz / sample_rate), triangles
/// with peak 1 between consecutive edges. The mel edges are float32 (the
/// reference's dtype), the rest double.
class MelKernel final : public Kernel {
 public:
  explicit MelKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    const int64_t bins = scalar_int_input(ctx.in(0)), dft = scalar_int_input(ctx.in(1)),
                  rate = scalar_int_input(ctx.in(2));
    const float lo_hz = static_cast<float>(real_at(ctx.in(3), 0)), hi_hz = static_cast<float>(real_at(ctx.in(4), 0));
    const float lo_mel = 2595.f * std::log10(1.f + lo_hz / 700.f), hi_mel = 2595.f * std::log10(1.f + hi_hz / 700.f);
    const float step = (hi_mel - lo_mel) / static_cast<float>(bins + 2);
    std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
    for (int64_t i = 0; i < bins + 2; ++i) {
      const double mel = static_cast<double>(i) * step + lo_mel;
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    }
    const int64_t spec = dft / 2 + 1;
    std::vector<double> out(static_cast<size_t>(spec * bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& {
      if (j < 0 || j >= spec) fail(ErrorCode::kInvalidArgument, what_ + ": mel edge outside the spectrum");
      return out[j * bins + i];
    };
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
      if (c == l) at(c, i) = 1.0;
      else
        for (int64_t j = l; j <= c; ++j) at(j, i) = static_cast<double>(j - l) / static_cast<double>(c - l);
      for (int64_t j = c; j < h; ++j) at(j, i) = static_cast<double>(h - j) / static_cast<double>(h - c);
    }
    store_any(ctx.out(0), out, what_);
  }

 private:
  std::string what_;
};

const bool kSignalRegistered = [] {
  register_kernel("", "DFT", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<DftKernel>(n);
  }, __FILE__);
  register_kernel("", "STFT", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<StftKernel>(n);
  }, __FILE__);
  const std::pair<const char*, Window> windows[] = {
      {"HannWindow", Window::kHann}, {"HammingWindow", Window::kHamming}, {"BlackmanWindow", Window::kBlackman}};
  for (auto& [name, w] : windows)
    register_kernel("", name, [w = w](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
      return std::make_unique<WindowKernel>(n, w);
    }, __FILE__);
  register_kernel("", "MelWeightMatrix", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<MelKernel>(n);
  }, __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
