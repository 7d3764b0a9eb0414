// CPU kernel of Cast-13 and CastLike-15, between every arithmetic dtype, bool,
// float16 and bfloat16. The source and destination dtypes are taken from the
// actual tensors at run time, so one kernel serves both ops.
//
// Conversions follow C++ (as the ONNX text and its reference do): float to
// integer truncates toward zero; to bool is x != 0 (NaN is true); from bool is
// 0/1. float16/bfloat16 round to nearest even; float64 to float16 goes
// through float32. Out-of-range float to integer results are unspecified.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/elementwise/elementwise_half.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

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
    if (x.dtype == DType::kString) return from_strings(x, y);
    if (y.dtype == DType::kString) return to_strings(x, y);
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
  /// Cast-13 string -> number: parsed as a decimal or "NaN"/"INF"/"+INF"/"-INF"
  /// (any case); integers parse as integers so 64-bit values stay exact.
  void from_strings(const TensorView& x, TensorView& y) const {
    const auto* in = x.as<std::string>();
    dispatch_castable(y.dtype, what_, [&](auto d) {
      using D = decltype(d);
      auto* out = static_cast<storage_t<D>*>(y.data);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const char* s = in[i].c_str();
        char* end = nullptr;
        if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
          out[i] = static_cast<D>(std::strtoll(s, &end, 10));
        } else if constexpr (std::is_integral_v<D> && std::is_unsigned_v<D>) {
          out[i] = static_cast<D>(std::strtoull(s, &end, 10));
        } else {
          out[i] = store<D>(std::strtod(s, &end));
        }
        if (end == s) fail(ErrorCode::kInvalidArgument, what_ + ": cannot parse '" + in[i] + "' as a number");
      }
    });
  }

  /// Cast-13 number -> string as numpy prints the value (str()): the shortest
  /// digits that read back to the same float32/float64, positional unless the
  /// magnitude is below 1e-4 or at least 1e16; "nan", "inf", "-inf".
  void to_strings(const TensorView& x, TensorView& y) const {
    auto* out = y.as<std::string>();
    dispatch_castable(x.dtype, what_, [&](auto s) {
      using S = decltype(s);
      const auto* in = static_cast<const storage_t<S>*>(x.data);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto v = load<S>(in[i]);
        if constexpr (std::is_same_v<S, BoolTag>) out[i] = v ? "True" : "False";
        else if constexpr (std::is_floating_point_v<decltype(v)>) out[i] = float_to_string(v);
        else out[i] = std::to_string(v);
      }
    });
  }

  template <typename F>
  static std::string float_to_string(F v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const F a = std::fabs(v);
    const bool sci = a != 0 && (a < F(1e-4) || a >= F(1e16));
    auto r = std::to_chars(buf, buf + sizeof buf, v, sci ? std::chars_format::scientific : std::chars_format::fixed);
    std::string str(buf, r.ptr);
    if (!sci && str.find('.') == std::string::npos) str += ".0";  // numpy prints 1.0, not 1
    return str;
  }

  std::string what_;
};

const bool kCastRegistered = [] {
  auto f = [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& in = config_.input_dtypes;
    // Refuse complex targets or sources known at load, not mid-run.
    std::vector<DType> check = in;
    if (n.op_type == "Cast") check.push_back(static_cast<DType>(n.get_int("to")));
    for (DType t : check)
      if (t == DType::kComplex64 || t == DType::kComplex128)
        fail(ErrorCode::kUnsupported, n.describe() + ": cast of dtype " + dtype_name(t) +
                                          " is not supported");
    return std::make_unique<CastKernel>(n.describe());
  };
  register_kernel("", "Cast", f, __FILE__);
  register_kernel("", "CastLike", f, __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
