// CPU kernel of Cast-13 and CastLike-15, between every arithmetic dtype, bool,
// float16 and bfloat16. The source and destination dtypes are taken from the
// actual tensors at run time, so one kernel serves both ops.
//
// Conversions follow C++ (as the ONNX text and its reference do): float to
// integer truncates toward zero; to bool is x != 0 (NaN is true); from bool is
// 0/1. float16/bfloat16 round to nearest even; float64 to float16 goes
// through float32. Out-of-range float to integer results are unspecified.
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// IEEE binary16, round to nearest even; overflow gives infinity.
inline uint16_t float_to_half(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal half, counted in units of 2^-24. The product is
    // exact and nearbyint rounds half to even; 1024 encodes the smallest normal.
    const auto m = static_cast<uint32_t>(std::nearbyint(bits_float(x) * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  const uint32_t mant = x & 0x7fffffu;
  uint32_t h = ((((x >> 23) - 127 + 15)) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry bumps the exponent: right
  return static_cast<uint16_t>(sign | h);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/// bfloat16 = the top half of a float32, round to nearest even; NaN stays NaN.
inline uint16_t float_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// Tag types for the dtypes that have no C++ arithmetic type of their own.
struct F16Tag {};
struct BF16Tag {};
struct BoolTag {};

template <typename T>
using storage_t = std::conditional_t<std::is_same_v<T, F16Tag> || std::is_same_v<T, BF16Tag>, uint16_t,
                                     std::conditional_t<std::is_same_v<T, BoolTag>, uint8_t, T>>;

template <typename F>
void dispatch_castable(DType t, const std::string& what, F&& f) {
  switch (t) {
    case DType::kFloat16: return f(F16Tag{});
    case DType::kBFloat16: return f(BF16Tag{});
    case DType::kBool: return f(BoolTag{});
    default: return dispatch_arith(t, what, f);
  }
}

/// Stored element -> a C++ value (float for the half types, 0/1 for bool).
template <typename S>
inline auto load(storage_t<S> x) {
  if constexpr (std::is_same_v<S, F16Tag>) return half_to_float(x);
  else if constexpr (std::is_same_v<S, BF16Tag>) return bf16_to_float(x);
  else if constexpr (std::is_same_v<S, BoolTag>) return static_cast<uint8_t>(x != 0);
  else return x;
}

/// A C++ value -> the stored element of dtype D.
template <typename D, typename V>
inline storage_t<D> store(V v) {
  if constexpr (std::is_same_v<D, F16Tag>) return float_to_half(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, BF16Tag>) return float_to_bf16(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, BoolTag>) return static_cast<uint8_t>(v != V(0));
  else return static_cast<D>(v);
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(std::string what) : what_(std::move(what)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (x.dtype == y.dtype) {
      copy_tensor_data(x, y);
      return;
    }
    const int64_t n = x.numel();
    dispatch_castable(x.dtype, what_, [&](auto s) {
      using S = decltype(s);
      dispatch_castable(y.dtype, what_, [&](auto d) {
        using D = decltype(d);
        const auto* in = static_cast<const storage_t<S>*>(x.data);
        auto* out = static_cast<storage_t<D>*>(y.data);
        parallel_ranges(n, ctx.num_threads, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = store<D>(load<S>(in[i]));
        });
      });
    });
  }

 private:
  std::string what_;
};

const bool kCastRegistered = [] {
  auto f = [](const ir::Node& n, const std::vector<DType>& in) -> std::unique_ptr<Kernel> {
    // Refuse string/complex targets or sources known at load, not mid-run.
    std::vector<DType> check = in;
    if (n.op_type == "Cast") check.push_back(static_cast<DType>(n.get_int("to")));
    for (DType t : check)
      if (t == DType::kString || t == DType::kComplex64 || t == DType::kComplex128)
        fail(ErrorCode::kUnsupported, n.describe() + ": cast of dtype " + dtype_name(t) +
                                          " is not supported");
    return std::make_unique<CastKernel>(n.describe());
  };
  register_kernel("", "Cast", f);
  register_kernel("", "CastLike", f);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
