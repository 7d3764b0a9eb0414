// CPU kernels of the quantization ops: QuantizeLinear-13, DequantizeLinear-13,
// DynamicQuantizeLinear-11, MatMulInteger-10, QLinearMatMul-10,
// ConvInteger-10 and QLinearConv-10.
//
// Integer products are exact: native loops accumulate (x - x_zp) * (w - w_zp)
// in int32. Requantization follows the ONNX reference: the real value
// acc * (s_a * s_b / s_y) is rounded half to even (np.rint), the zero point
// added and the result saturated to the output type. Padding in ConvInteger
// and QLinearConv contributes x_zero_point, i.e. nothing after subtraction.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel.h"
#include "ops/nn_shape.h"

namespace gec::kernels::cpu {
namespace {

/// Element i of an integer tensor (uint8/int8/int32) as int32.
inline int32_t int_at(const TensorView& t, int64_t i) {
  switch (t.dtype) {
    case DType::kUInt8: return t.as<uint8_t>()[i];
    case DType::kInt8: return t.as<int8_t>()[i];
    case DType::kInt32: return t.as<int32_t>()[i];
    default: return 0;
  }
}

void require_int_dtype(const std::string& what, const TensorView& t, bool allow_int32) {
  if (t.dtype == DType::kUInt8 || t.dtype == DType::kInt8 || (allow_int32 && t.dtype == DType::kInt32)) return;
  fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t.dtype) + " is not supported");
}

float float_at(const TensorView& t, int64_t i) {
  return t.dtype == DType::kFloat64 ? static_cast<float>(t.as<double>()[i]) : t.as<float>()[i];
}

/// Rounds half to even, adds zp and saturates to the range of `out` dtype;
/// NaN becomes the zero point (found by fuzzing: its cast was undefined).
inline void store_q(TensorView& out, int64_t i, double real, int32_t zp) {
  const double q = std::isnan(real) ? static_cast<double>(zp) : std::nearbyint(real) + zp;
  if (out.dtype == DType::kUInt8) out.as<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(q, 0.0, 255.0));
  else out.as<int8_t>()[i] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
}

/// Which scale / zero-point entry element i uses: 0 for per-tensor params,
/// else its index along the quantization axis. Throws kInvalidArgument
/// (naming `who`) when the params do not fit x: no element, an axis out of
/// range, a per-axis count that is not x's dim on the axis, or a zero point
/// whose count differs from the scale's (`zp_numel` < 0: none given).
/// (Found by fuzzing: a short scale was read past its end.)
struct AxisIndexer {
  int64_t dim = 1, inner = 1;
  bool per_axis = false;
  AxisIndexer(const Shape& x, int64_t axis, int64_t param_numel, int64_t zp_numel, const std::string& who) {
    auto bad = [&](const std::string& m) { fail(ErrorCode::kInvalidArgument, who + ": " + m); };
    if (param_numel < 1) bad("the scale has no element");
    if (zp_numel >= 0 && zp_numel != param_numel)
      bad("the zero point has " + std::to_string(zp_numel) + " elements, the scale " + std::to_string(param_numel));
    const int64_t r = static_cast<int64_t>(x.size());
    if (param_numel == 1) return;
    if (r == 0) bad("a per-axis scale for a scalar input");
    if (axis < -r || axis >= r) bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    per_axis = true;
    dim = x[static_cast<size_t>(axis)];
    if (dim != param_numel)
      bad("a per-axis scale of " + std::to_string(param_numel) + " elements for a dim of " + std::to_string(dim));
    for (int64_t d = axis + 1; d < r; ++d) inner *= x[static_cast<size_t>(d)];
  }
  int64_t operator()(int64_t i) const { return per_axis ? (i / inner) % dim : 0; }
};

// ---- QuantizeLinear / DequantizeLinear ------------------------------------------

/// y = saturate(rint(x / scale) + zp); x float32 (or int32), zp uint8 by default.
class QuantizeKernel final : public Kernel {
 public:
  explicit QuantizeKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", 1)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& s = ctx.in(1);
    const TensorView* zp = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    TensorView& y = ctx.out(0);
    if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt32)
      fail(ErrorCode::kUnsupported, what_ + ": x dtype " + dtype_name(x.dtype) + " is not supported");
    if (s.dtype != DType::kFloat32) fail(ErrorCode::kUnsupported, what_ + ": y_scale must be float32");
    const AxisIndexer ix(x.shape, axis_, s.numel(), zp ? zp->numel() : -1, what_);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = ix(i);
      const float v = x.dtype == DType::kFloat32 ? x.as<float>()[i] : static_cast<float>(x.as<int32_t>()[i]);
      store_q(y, i, v / s.as<float>()[k], zp ? int_at(*zp, k) : 0);
    }
  }

 private:
  std::string what_;
  int64_t axis_;
};

/// y = (x - zp) * scale, float32.
class DequantizeKernel final : public Kernel {
 public:
  explicit DequantizeKernel(const ir::Node& n) : what_(n.describe()), axis_(n.get_int("axis", 1)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& s = ctx.in(1);
    const TensorView* zp = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    require_int_dtype(what_, x, true);
    if (s.dtype != DType::kFloat32) fail(ErrorCode::kUnsupported, what_ + ": x_scale must be float32");
    const AxisIndexer ix(x.shape, axis_, s.numel(), zp ? zp->numel() : -1, what_);
    float* y = ctx.out(0).as<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = ix(i);
      y[i] = static_cast<float>(int_at(x, i) - (zp ? int_at(*zp, k) : 0)) * s.as<float>()[k];
    }
  }

 private:
  std::string what_;
  int64_t axis_;
};

/// DynamicQuantizeLinear-11: uint8 with the range [min(0, min x), max(0, max x)].
class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(const ir::Node&) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const float* px = x.as<float>();
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < x.numel(); ++i) {
      lo = std::min(lo, px[i]);
      hi = std::max(hi, px[i]);
    }
    const float scale = (hi - lo) / 255.f;
    const float zpf = scale == 0.f ? 0.f : std::nearbyint(std::clamp(0.f - lo / scale, 0.f, 255.f));
    const auto zp = static_cast<uint8_t>(zpf);
    uint8_t* y = ctx.out(0).as<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      float q = scale == 0.f ? zpf : std::nearbyint(px[i] / scale) + zpf;
      if (std::isnan(q)) q = zpf;  // a NaN input: its cast would be undefined
      y[i] = static_cast<uint8_t>(std::clamp(q, 0.f, 255.f));
    }
    if (ctx.outputs.size() > 1 && ctx.outputs[1]) ctx.out(1).as<float>()[0] = scale;
    if (ctx.outputs.size() > 2 && ctx.outputs[2]) ctx.out(2).as<uint8_t>()[0] = zp;
  }
};

// ---- integer matmul ------------------------------------------------------------

/// acc[b, i, j] = sum_k (a[b', i, k] - a_zp[i]) * (b[b'', k, j] - b_zp[j]) with
/// numpy.matmul promotion and batch broadcasting. a_zp is a scalar or one
/// per row of A, b_zp a scalar or one per column of B.
std::vector<int32_t> matmul_int(const TensorView& a, const TensorView& b, const TensorView* azp,
                                const TensorView* bzp, const Shape& out_shape) {
  Shape as = a.shape, bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const size_t r = std::max(as.size(), bs.size());
  as.insert(as.begin(), r - as.size(), 1);
  bs.insert(bs.begin(), r - bs.size(), 1);
  int64_t batches = 1;
  Shape ob(r - 2);
  for (size_t i = 0; i + 2 < r; ++i) batches *= (ob[i] = std::max(as[i], bs[i]));
  std::vector<int32_t> acc(static_cast<size_t>(batches * m * n));
  GEC_CHECK(shape_numel(out_shape) == static_cast<int64_t>(acc.size()), "matmul_int: output size");
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, aoff = 0, boff = 0, astr = m * k, bstr = k * n;
    for (int i = static_cast<int>(r) - 3; i >= 0; --i) {
      const int64_t idx = rem % ob[i];
      rem /= ob[i];
      if (as[i] != 1) aoff += idx * astr;
      if (bs[i] != 1) boff += idx * bstr;
      astr *= as[i];
      bstr *= bs[i];
    }
    for (int64_t i = 0; i < m; ++i) {
      const int32_t za = azp ? int_at(*azp, azp->numel() == 1 ? 0 : i) : 0;
      int32_t* row = &acc[(bi * m + i) * n];
      for (int64_t kk = 0; kk < k; ++kk) {
        const int32_t va = int_at(a, aoff + i * k + kk) - za;
        if (va == 0) continue;
        for (int64_t j = 0; j < n; ++j) {
          const int32_t zb = bzp ? int_at(*bzp, bzp->numel() == 1 ? 0 : j) : 0;
          row[j] += va * (int_at(b, boff + kk * n + j) - zb);
        }
      }
    }
  }
  return acc;
}

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    require_int_dtype(what_, ctx.in(0), false);
    require_int_dtype(what_, ctx.in(1), false);
    TensorView& y = ctx.out(0);
    const auto acc = matmul_int(ctx.in(0), ctx.in(1), ctx.has_input(2) ? ctx.inputs[2] : nullptr,
                                ctx.has_input(3) ? ctx.inputs[3] : nullptr, y.shape);
    std::copy(acc.begin(), acc.end(), y.as<int32_t>());
  }

 private:
  std::string what_;
};

/// Inputs a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp. b_scale/b_zp may be
/// per column of B.
class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const ir::Node& n) : what_(n.describe()) {}
  void run(KernelContext& ctx) override {
    require_int_dtype(what_, ctx.in(0), false);
    require_int_dtype(what_, ctx.in(3), false);
    TensorView& y = ctx.out(0);
    const auto acc = matmul_int(ctx.in(0), ctx.in(3), ctx.inputs[2], ctx.inputs[5], y.shape);
    const double sa = float_at(ctx.in(1), 0), sy = float_at(ctx.in(6), 0);
    const TensorView& sb = ctx.in(4);
    const int32_t yzp = int_at(ctx.in(7), 0);
    const int64_t n = y.shape.empty() ? 1 : y.shape.back();
    for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) {
      const double s = sa * float_at(sb, sb.numel() == 1 ? 0 : i % n) / sy;
      store_q(y, i, acc[i] * s, yzp);
    }
  }

 private:
  std::string what_;
};

// ---- integer convolution ----------------------------------------------------------

/// acc[n, oc, out...] of a grouped N-d convolution (1 to 3 spatial dims) of
/// (x - x_zp) with (w - w_zp[oc]), without bias.
/// Attributes of a Conv-like node, read once by the kernel's factory.
struct ConvAttrs {
  std::string what;
  ops::WindowAttrs window;
  int64_t group = 1;
  explicit ConvAttrs(const ir::Node& n)
      : what(n.describe()), window(ops::read_window_attrs(n)), group(n.get_int("group", 1)) {}
};

std::vector<int32_t> conv_int(const ConvAttrs& ca, const TensorView& x, const TensorView& w,
                              const TensorView* xzp, const TensorView* wzp, const Shape& out_shape) {
  const size_t sp = x.shape.size() - 2;
  if (sp < 1 || sp > 3) fail(ErrorCode::kUnsupported, ca.what + ": only 1-3 spatial dims are supported");
  std::vector<int64_t> wk(w.shape.begin() + 2, w.shape.end());
  const ops::WindowAttrs a = ops::resolve_window_attrs(ca.window, sp, &wk, ca.what);
  const ops::WindowGeom g = ops::window_geometry(ca.what, a, Shape(x.shape.begin() + 2, x.shape.end()));
  // Pad every per-dim list to 3 dims (leading unit dims).
  auto pad3 = [sp](std::vector<int64_t> v, int64_t fill) {
    v.insert(v.begin(), 3 - sp, fill);
    return v;
  };
  const auto in = pad3(Shape(x.shape.begin() + 2, x.shape.end()), 1), k = pad3(wk, 1), out = pad3(g.out, 1),
             st = pad3(a.strides, 1), dl = pad3(a.dilations, 1), pb = pad3(g.pad_begin, 0);
  const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], group = ca.group;
  const int64_t cg = C / group, mg = M / group;
  const int64_t in_sz = in[0] * in[1] * in[2], k_sz = k[0] * k[1] * k[2], out_sz = out[0] * out[1] * out[2];
  const int32_t zx = xzp ? int_at(*xzp, 0) : 0;
  std::vector<int32_t> acc(static_cast<size_t>(N * M * out_sz), 0);
  GEC_CHECK(shape_numel(out_shape) == static_cast<int64_t>(acc.size()), "conv_int: output size");
  for (int64_t b = 0; b < N; ++b)
    for (int64_t oc = 0; oc < M; ++oc) {
      const int64_t gi = oc / mg;
      const int32_t zw = wzp ? int_at(*wzp, wzp->numel() == 1 ? 0 : oc) : 0;
      int32_t* dst = &acc[(b * M + oc) * out_sz];
      for (int64_t ic = 0; ic < cg; ++ic) {
        const int64_t xbase = (b * C + gi * cg + ic) * in_sz, wbase = (oc * cg + ic) * k_sz;
        for (int64_t o0 = 0; o0 < out[0]; ++o0)
          for (int64_t o1 = 0; o1 < out[1]; ++o1)
            for (int64_t o2 = 0; o2 < out[2]; ++o2) {
              int32_t sum = 0;
              for (int64_t k0 = 0; k0 < k[0]; ++k0) {
                const int64_t i0 = o0 * st[0] - pb[0] + k0 * dl[0];
                if (i0 < 0 || i0 >= in[0]) continue;
                for (int64_t k1 = 0; k1 < k[1]; ++k1) {
                  const int64_t i1 = o1 * st[1] - pb[1] + k1 * dl[1];
                  if (i1 < 0 || i1 >= in[1]) continue;
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i2 = o2 * st[2] - pb[2] + k2 * dl[2];
                    if (i2 < 0 || i2 >= in[2]) continue;
                    const int32_t xv = int_at(x, xbase + (i0 * in[1] + i1) * in[2] + i2) - zx;
                    const int32_t wv = int_at(w, wbase + (k0 * k[1] + k1) * k[2] + k2) - zw;
                    sum += xv * wv;
                  }
                }
              }
              dst[(o0 * out[1] + o1) * out[2] + o2] += sum;
            }
      }
    }
  return acc;
}

class ConvIntegerKernel final : public Kernel {
 public:
  explicit ConvIntegerKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    require_int_dtype(node_.what, ctx.in(0), false);
    require_int_dtype(node_.what, ctx.in(1), false);
    TensorView& y = ctx.out(0);
    const auto acc = conv_int(node_, ctx.in(0), ctx.in(1), ctx.has_input(2) ? ctx.inputs[2] : nullptr,
                              ctx.has_input(3) ? ctx.inputs[3] : nullptr, y.shape);
    std::copy(acc.begin(), acc.end(), y.as<int32_t>());
  }

 private:
  ConvAttrs node_;
};

/// Inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B? (int32 bias
/// in units of x_scale * w_scale); w_scale/w_zp may be per output channel.
class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(const ir::Node& n) : node_(n) {}
  void run(KernelContext& ctx) override {
    require_int_dtype(node_.what, ctx.in(0), false);
    require_int_dtype(node_.what, ctx.in(3), false);
    TensorView& y = ctx.out(0);
    const auto acc = conv_int(node_, ctx.in(0), ctx.in(3), ctx.inputs[2], ctx.inputs[5], y.shape);
    const double sx = float_at(ctx.in(1), 0), sy = float_at(ctx.in(6), 0);
    const TensorView& sw = ctx.in(4);
    const int32_t yzp = int_at(ctx.in(7), 0);
    const int64_t m = y.shape[1];
    int64_t spatial = 1;
    for (size_t d = 2; d < y.shape.size(); ++d) spatial *= y.shape[d];
    for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) {
      const int64_t oc = (i / std::max<int64_t>(spatial, 1)) % m;
      const int32_t bias = ctx.has_input(8) ? ctx.in(8).as<int32_t>()[oc] : 0;
      const double s = sx * float_at(sw, sw.numel() == 1 ? 0 : oc) / sy;
      store_q(y, i, (acc[i] + bias) * s, yzp);
    }
  }

 private:
  ConvAttrs node_;
};

template <typename K>
KernelFactory factory() {
  return [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> { return std::make_unique<K>(n); };
}

const bool kQuantRegistered = [] {
  register_kernel("", "QuantizeLinear", factory<QuantizeKernel>(), __FILE__);
  register_kernel("", "DequantizeLinear", factory<DequantizeKernel>(), __FILE__);
  register_kernel("", "DynamicQuantizeLinear", factory<DynamicQuantizeKernel>(), __FILE__);
  register_kernel("", "MatMulInteger", factory<MatMulIntegerKernel>(), __FILE__);
  register_kernel("", "QLinearMatMul", factory<QLinearMatMulKernel>(), __FILE__);
  register_kernel("", "ConvInteger", factory<ConvIntegerKernel>(), __FILE__);
  register_kernel("", "QLinearConv", factory<QLinearConvKernel>(), __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
