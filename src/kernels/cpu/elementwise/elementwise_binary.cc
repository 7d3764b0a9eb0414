// CPU kernels of the broadcasting binary ops (Add, Sub, Mul, Div, Mod, PRelu,
// comparisons, And/Or/Xor), the variadic Max/Min/Sum/Mean, Pow and Where.
// Add/Sub/Mul/Div and the variadic ones with a non-plain output layout
// (nChw16c / nhwc from the plan) broadcast over the shapes the bytes form
// (layout_broadcast.h).
// Broadcasting goes through the row plan of broadcast.h, so each row is one
// straight loop whose operands are contiguous or a repeated scalar; float32
// Add/Sub/Mul/Div rows run the Highway loops of elementwise_simd.h.
//
// Semantics (ONNX operator text): integer Div truncates toward zero as C does;
// Mod follows the divisor's sign unless fmod=1 (then the dividend's, C fmod);
// Max/Min return NaN when either operand is NaN. Integer division or modulo by
// zero is undefined in ONNX; here the divisor is scanned once per run and a
// zero raises gec::Error(kInvalidArgument) rather than trapping the process or
// giving a silent wrong answer. Float division stays IEEE (inf/NaN).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/layout_broadcast.h"
#include "kernels/cpu/elementwise/elementwise_half.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

enum class B {
  kAdd, kSub, kMul, kDiv, kMod, kFMod, kMax, kMin, kPRelu, kShl, kShr,
  kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual,
  kAnd, kOr, kXor,
};

constexpr bool is_compare(B op) { return op >= B::kEqual && op <= B::kGreaterOrEqual; }
constexpr bool is_logic(B op) { return op >= B::kAnd; }

template <typename T>
inline T int_div(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return static_cast<T>(T(0) - a);  // avoids the INT_MIN / -1 trap
  return static_cast<T>(a / b);
}

template <typename T>
inline T mod_value(T a, T b, bool c_fmod) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (!c_fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
    return r;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      if (!c_fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  }
}

/// Result element type: bool (uint8) for comparisons, else T.
template <B op, typename T>
using result_t = std::conditional_t<is_compare(op), uint8_t, T>;

template <B op, typename T>
inline result_t<op, T> binary_value(T a, T b) {
  if constexpr (op == B::kAdd) return static_cast<T>(a + b);
  else if constexpr (op == B::kSub) return static_cast<T>(a - b);
  else if constexpr (op == B::kMul) return static_cast<T>(a * b);
  else if constexpr (op == B::kDiv) {
    if constexpr (std::is_floating_point_v<T>) return a / b;
    else return int_div(a, b);
  } else if constexpr (op == B::kMod) return mod_value(a, b, false);
  else if constexpr (op == B::kFMod) return mod_value(a, b, true);
  else if constexpr (op == B::kMax) return (a > b || a != a) ? a : b;  // NaN wins
  else if constexpr (op == B::kMin) return (a < b || a != a) ? a : b;
  else if constexpr (op == B::kPRelu) return a < T(0) ? static_cast<T>(b * a) : a;
  else if constexpr (op == B::kShl || op == B::kShr) {
    // BitShift-11 (unsigned only); a shift by the bit width or more gives 0
    // (numpy's result) instead of C's undefined behaviour.
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      if (b >= T(sizeof(T) * 8)) return T(0);
      return static_cast<T>(op == B::kShl ? a << b : a >> b);
    } else {
      return a;  // never instantiated at run time: the kernel refuses other dtypes
    }
  }
  else if constexpr (op == B::kEqual) return a == b;
  else if constexpr (op == B::kLess) return a < b;
  else if constexpr (op == B::kLessOrEqual) return a <= b;
  else if constexpr (op == B::kGreater) return a > b;
  else if constexpr (op == B::kGreaterOrEqual) return a >= b;
  else if constexpr (op == B::kAnd) return static_cast<T>(a & b);
  else if constexpr (op == B::kOr) return static_cast<T>(a | b);
  else if constexpr (op == B::kXor) return static_cast<T>(a ^ b);
}

/// o = f(a, b) with a, b broadcast per plan `p` (p built for (a, b)).
template <typename T, typename R, typename F>
void binary_rows(const BroadcastPlan<2>& p, const T* a, const T* b, R* o, int nt, F f) {
  for_each_row(p, nt, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n) {
    const T* pa = a + off[0];
    const T* pb = b + off[1];
    R* po = o + oo;
    if (!p.inner_bcast[0] && !p.inner_bcast[1]) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (!p.inner_bcast[1]) {
      const T x = *pa;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) po[i] = f(x, pb[i]);
    } else if (!p.inner_bcast[0]) {
      const T y = *pb;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], y);
    } else {
      const R v = f(*pa, *pb);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

template <B op, typename T>
void run_binary(const BroadcastPlan<2>& p, const TensorView& a, const TensorView& b, TensorView& o,
                int nt) {
  if constexpr (std::is_same_v<T, float> && op <= B::kDiv) {  // Highway rows
    constexpr simd::BinOp s = op == B::kAdd   ? simd::BinOp::kAdd
                              : op == B::kSub ? simd::BinOp::kSub
                              : op == B::kMul ? simd::BinOp::kMul
                                              : simd::BinOp::kDiv;
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    float* po = o.as<float>();
    for_each_row(p, nt, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n) {
      simd::binary_f32(s, pa + off[0], p.inner_bcast[0], pb + off[1], p.inner_bcast[1], po + oo, n);
    });
    return;
  }
  binary_rows(p, a.as<T>(), b.as<T>(), o.as<result_t<op, T>>(), nt,
              [](T x, T y) { return binary_value<op, T>(x, y); });
}

/// dispatch_arith, plus bool handled as uint8 (for Equal).
template <typename F>
void dispatch_arith_or_bool(DType t, const std::string& what, F&& f) {
  if (t == DType::kBool) f(uint8_t{});
  else dispatch_arith(t, what, f);
}

void check_same_dtype(const TensorView& a, const TensorView& b, const std::string& what) {
  if (a.dtype != b.dtype)
    fail(ErrorCode::kInvalidArgument, what + ": inputs have dtypes " + dtype_name(a.dtype) + " and " +
                                          dtype_name(b.dtype));
}

class BinaryKernel final : public Kernel {
 public:
  /// `layout`: the output's (ops/layout.h); a non-plain one broadcasts the
  /// operands over their bytes (layout_broadcast.h).
  BinaryKernel(B op, std::string what, ops::Layout layout) : op_(op), what_(std::move(what)), layout_(layout) {}

  void reshape(const KernelContext& ctx) override {
    const Shape& o = ctx.out(0).shape;
    // Over the bytes of a non-plain layout; a per-channel operand (float32:
    // the half path converts the operands as they are) read tiled.
    const bool f32 = ctx.in(0).dtype == DType::kFloat32 && ctx.in(1).dtype == DType::kFloat32;
    std::vector<Shape> in;
    const Shape po = bcast_.plan({ctx.in(0).shape, ctx.in(1).shape},
                                 {dtype_size(ctx.in(0).dtype), dtype_size(ctx.in(1).dtype)}, o, layout_, f32, what_, in);
    plan_ = make_broadcast_plan<2>(po, {&in[0], &in[1]});
  }

  void run(KernelContext& ctx) override {
    const Shape& os = ctx.out(0).shape;
    const TensorView* ab[2] = {&ctx.in(0), &ctx.in(1)};
    TensorView tiled[2];  // a per-channel operand's tiled copy (read only)
    for (size_t i = 0; i < 2; ++i) {
      const void* d = bcast_.read(i, ab[i]->data, ab[i]->numel(), os.size() > 1 ? os[1] : 1);
      if (d == ab[i]->data) continue;
      tiled[i] = *ab[i];
      tiled[i].data = const_cast<void*>(d);
      ab[i] = &tiled[i];
    }
    const TensorView& a = *ab[0];
    const TensorView& b = *ab[1];
    TensorView& o = ctx.out(0);
    check_same_dtype(a, b, what_);
    if (is_half_dtype(a.dtype)) {  // compute in float32, round the result back
      const Tensor fa = half_to_f32_tensor(a), fb = half_to_f32_tensor(b);
      if (is_compare(op_)) return compute(fa.view(), fb.view(), o, ctx.num_threads);
      Tensor fo(DType::kFloat32, o.shape);
      TensorView fov = fo.view();
      compute(fa.view(), fb.view(), fov, ctx.num_threads);
      f32_to_half_view(fov, o);
      return;
    }
    compute(a, b, o, ctx.num_threads);
  }

 private:
  void compute(const TensorView& a, const TensorView& b, TensorView& o, int nt) {
    if (op_ == B::kDiv || op_ == B::kMod || op_ == B::kFMod) check_int_divisor(b);
    const BroadcastPlan<2>& p = plan_;
    if (is_logic(op_)) {
      if (a.dtype != DType::kBool)
        fail(ErrorCode::kUnsupported, what_ + ": dtype " + dtype_name(a.dtype) + " is not supported");
    }
    switch (op_) {
#define GEC_ARITH(name)                                                                   \
  case B::k##name:                                                                         \
    return dispatch_arith(a.dtype, what_, [&](auto tag) {                                  \
      run_binary<B::k##name, decltype(tag)>(p, a, b, o, nt);                               \
    });
      GEC_ARITH(Add) GEC_ARITH(Sub) GEC_ARITH(Mul) GEC_ARITH(Div) GEC_ARITH(Mod)
      GEC_ARITH(FMod) GEC_ARITH(Max) GEC_ARITH(Min) GEC_ARITH(PRelu) GEC_ARITH(Less)
      GEC_ARITH(LessOrEqual) GEC_ARITH(Greater) GEC_ARITH(GreaterOrEqual)
#undef GEC_ARITH
      case B::kEqual:
        return dispatch_arith_or_bool(a.dtype, what_, [&](auto tag) {
          run_binary<B::kEqual, decltype(tag)>(p, a, b, o, nt);
        });
      case B::kShl:
      case B::kShr:
        switch (a.dtype) {
          case DType::kUInt8: return run_shift<uint8_t>(p, a, b, o, nt);
          case DType::kUInt16: return run_shift<uint16_t>(p, a, b, o, nt);
          case DType::kUInt32: return run_shift<uint32_t>(p, a, b, o, nt);
          case DType::kUInt64: return run_shift<uint64_t>(p, a, b, o, nt);
          default:
            fail(ErrorCode::kUnsupported, what_ + ": dtype " + dtype_name(a.dtype) + " is not supported");
        }
      case B::kAnd: return run_binary<B::kAnd, uint8_t>(p, a, b, o, nt);
      case B::kOr: return run_binary<B::kOr, uint8_t>(p, a, b, o, nt);
      case B::kXor: return run_binary<B::kXor, uint8_t>(p, a, b, o, nt);
    }
  }

  /// Integer Div/Mod: any zero in the divisor is an error (ONNX leaves it
  /// undefined). Float dtypes are not checked.
  void check_int_divisor(const TensorView& b) const {
    if (b.dtype == DType::kFloat32 || b.dtype == DType::kFloat64) return;
    dispatch_arith(b.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        const T* p = b.as<T>();
        const int64_t n = b.numel();
        for (int64_t i = 0; i < n; ++i)
          if (p[i] == T(0)) fail(ErrorCode::kInvalidArgument, what_ + ": integer division by zero");
      }
    });
  }

  template <typename T>
  void run_shift(const BroadcastPlan<2>& p, const TensorView& a, const TensorView& b, TensorView& o, int nt) {
    if (op_ == B::kShl) run_binary<B::kShl, T>(p, a, b, o, nt);
    else run_binary<B::kShr, T>(p, a, b, o, nt);
  }

  B op_;
  std::string what_;
  ops::Layout layout_;
  BroadcastPlan<2> plan_;  // set by reshape
  LayoutBroadcast bcast_;  // the layout's byte shapes and tiled operands, set by reshape
};

KernelFactory binary_factory(B op) {
  return [op](const ir::Node& n, const KernelConfig& config) -> std::unique_ptr<Kernel> {
    B o = op;
    if (op == B::kMod && n.get_int("fmod", 0) != 0) o = B::kFMod;
    if (op == B::kShl) {
      const std::string dir = n.get_string("direction", "");
      if (dir == "RIGHT") o = B::kShr;
      else if (dir != "LEFT")
        fail(ErrorCode::kInvalidModel, n.describe() + ": direction must be LEFT or RIGHT, got '" + dir + "'");
    }
    return std::make_unique<BinaryKernel>(o, n.describe(), config.output_layout(0));
  };
}

// ---- Max / Min / Sum / Mean (variadic, opset 13) --------------------------------

/// Folds the inputs left to right into the output: out = in0 op in1, then
/// out = out op in_k. Mean divides the sum by the input count at the end
/// (integer division for integer dtypes).
class VariadicKernel final : public Kernel {
 public:
  /// `layout`: the output's, as for BinaryKernel.
  VariadicKernel(B op, bool mean, std::string what, ops::Layout layout)
      : op_(op), mean_(mean), what_(std::move(what)), layout_(layout) {}

  /// plans_[1]: in0 op in1; plans_[i], i >= 2: out op in_i.
  void reshape(const KernelContext& ctx) override {
    const size_t k = ctx.inputs.size();
    const Shape o = layout_broadcast_shape(ctx.out(0).shape, ctx.out(0).shape, layout_, what_);
    auto in = [&](size_t i) { return layout_broadcast_shape(ctx.in(i).shape, ctx.out(0).shape, layout_, what_); };
    plans_.assign(k, BroadcastPlan<2>{});
    if (k > 1) {
      const Shape a = in(0), b = in(1);
      plans_[1] = make_broadcast_plan<2>(o, {&a, &b});
    }
    for (size_t i = 2; i < k; ++i) {
      const Shape b = in(i);
      plans_[i] = make_broadcast_plan<2>(o, {&o, &b});
    }
  }

  void run(KernelContext& ctx) override {
    TensorView& o = ctx.out(0);
    const size_t k = ctx.inputs.size();
    for (size_t i = 1; i < k; ++i) check_same_dtype(ctx.in(0), ctx.in(i), what_);
    if (is_half_dtype(o.dtype)) return run_half(ctx);
    dispatch_arith(o.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      if (k == 1) {
        copy_tensor_data(ctx.in(0), o);
      } else {
        fold<T>(ctx.in(0), ctx.in(1), plans_[1], ctx, o);
        for (size_t i = 2; i < k; ++i) fold<T>(o, ctx.in(i), plans_[i], ctx, o);
      }
      if (mean_ && k > 1) divide<T>(o, static_cast<T>(k), ctx.num_threads);
    });
  }

 private:
  template <typename T>
  void fold(const TensorView& a, const TensorView& b, const BroadcastPlan<2>& p,
            const KernelContext& ctx, TensorView& o) {
    switch (op_) {
      case B::kMax: return run_binary<B::kMax, T>(p, a, b, o, ctx.num_threads);
      case B::kMin: return run_binary<B::kMin, T>(p, a, b, o, ctx.num_threads);
      default: return run_binary<B::kAdd, T>(p, a, b, o, ctx.num_threads);
    }
  }
  /// float16/bfloat16: fold in float32 and round once at the end.
  void run_half(KernelContext& ctx) {
    TensorView& o = ctx.out(0);
    const size_t k = ctx.inputs.size();
    Tensor acc(DType::kFloat32, o.shape);
    TensorView av = acc.view();
    const Tensor first = half_to_f32_tensor(ctx.in(0));
    if (k == 1) {
      copy_tensor_data(first.view(), av);
    } else {
      fold<float>(first.view(), half_to_f32_tensor(ctx.in(1)).view(), plans_[1], ctx, av);
      for (size_t i = 2; i < k; ++i) fold<float>(av, half_to_f32_tensor(ctx.in(i)).view(), plans_[i], ctx, av);
    }
    if (mean_ && k > 1) divide<float>(av, static_cast<float>(k), ctx.num_threads);
    f32_to_half_view(av, o);
  }

  template <typename T>
  static void divide(TensorView& o, T k, int nt) {
    T* d = o.as<T>();
    parallel_ranges(o.numel(), nt, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) d[i] = static_cast<T>(d[i] / k);
    });
  }

  B op_;
  bool mean_;
  std::string what_;
  ops::Layout layout_;
  std::vector<BroadcastPlan<2>> plans_;  // set by reshape
};

KernelFactory variadic_factory(B op, bool mean) {
  return [op, mean](const ir::Node& n, const KernelConfig& config) -> std::unique_ptr<Kernel> {
    return std::make_unique<VariadicKernel>(op, mean, n.describe(), config.output_layout(0));
  };
}

// ---- Pow-15 -----------------------------------------------------------------------

/// Integer power by squaring; a negative exponent truncates 1/a^-e toward 0.
template <typename T, typename E>
inline T int_pow(T a, E e) {
  if (e < E(0)) {
    if (a == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>)
      if (a == T(-1)) return (e % 2 == 0) ? T(1) : T(-1);
    return T(0);
  }
  T r = 1, base = a;
  for (auto u = static_cast<uint64_t>(e); u; u >>= 1) {
    if (u & 1) r = static_cast<T>(r * base);
    base = static_cast<T>(base * base);
  }
  return r;
}

template <typename T, typename E>
inline T pow_value(T a, E e) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::pow(a, static_cast<T>(e)));
  } else if constexpr (std::is_floating_point_v<E>) {
    return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(e)));
  } else {
    return int_pow(a, e);
  }
}

/// Base and exponent may differ in dtype, so this walks rows itself rather
/// than through binary_rows. x^2 with a scalar exponent (common in
/// normalization subgraphs) is a plain multiply.
class PowKernel final : public Kernel {
 public:
  explicit PowKernel(std::string what) : what_(std::move(what)) {}
  void reshape(const KernelContext& ctx) override {
    plan_ = make_broadcast_plan<2>(ctx.out(0).shape, {&ctx.in(0).shape, &ctx.in(1).shape});
  }
  void run(KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView& b = ctx.in(1);
    TensorView& o = ctx.out(0);
    const BroadcastPlan<2>& p = plan_;
    dispatch_arith(a.dtype, what_, [&](auto ta) {
      using T = decltype(ta);
      dispatch_arith(b.dtype, what_, [&](auto tb) {
        using E = decltype(tb);
        const T* pa = a.as<T>();
        const E* pb = b.as<E>();
        T* po = o.as<T>();
        if (b.numel() == 1 && pb[0] == E(2)) {
          return binary_rows(p, pa, pa, po, ctx.num_threads, [](T x, T) { return static_cast<T>(x * x); });
        }
        for_each_row(p, ctx.num_threads, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n) {
          const int64_t sa = p.inner_bcast[0] ? 0 : 1, sb = p.inner_bcast[1] ? 0 : 1;
          for (int64_t i = 0; i < n; ++i) po[oo + i] = pow_value(pa[off[0] + i * sa], pb[off[1] + i * sb]);
        });
      });
    });
  }

 private:
  std::string what_;
  BroadcastPlan<2> plan_;  // set by reshape
};

// ---- Where-16 -----------------------------------------------------------------------

/// out = cond ? x : y with three-way broadcasting; any element dtype (copied
/// by size).
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(std::string what) : what_(std::move(what)) {}
  void reshape(const KernelContext& ctx) override {
    plan_ = make_broadcast_plan<3>(ctx.out(0).shape, {&ctx.in(0).shape, &ctx.in(1).shape, &ctx.in(2).shape});
  }
  void run(KernelContext& ctx) override {
    const TensorView& c = ctx.in(0);
    const TensorView& x = ctx.in(1);
    const TensorView& y = ctx.in(2);
    TensorView& o = ctx.out(0);
    check_same_dtype(x, y, what_);
    const BroadcastPlan<3>& p = plan_;
    dispatch_by_size(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const uint8_t* pc = c.as<uint8_t>();
      const T* px = x.as<T>();
      const T* py = y.as<T>();
      T* po = o.as<T>();
      const int64_t sc = p.inner_bcast[0] ? 0 : 1, sx = p.inner_bcast[1] ? 0 : 1,
                    sy = p.inner_bcast[2] ? 0 : 1;
      for_each_row(p, ctx.num_threads, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t n) {
        const uint8_t* rc = pc + off[0];
        const T* rx = px + off[1];
        const T* ry = py + off[2];
        T* ro = po + oo;
        for (int64_t i = 0; i < n; ++i) ro[i] = rc[i * sc] ? rx[i * sx] : ry[i * sy];
      });
    });
  }

 private:
  std::string what_;
  BroadcastPlan<3> plan_;  // set by reshape
};

template <typename K>
KernelFactory simple_factory() {
  return [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<K>(n.describe());
  };
}

const bool kBinaryRegistered = [] {
  const std::pair<const char*, B> binary[] = {
      {"Add", B::kAdd},       {"Sub", B::kSub},     {"Mul", B::kMul},
      {"Div", B::kDiv},       {"Mod", B::kMod},     {"PRelu", B::kPRelu},
      {"Equal", B::kEqual},   {"Less", B::kLess},   {"LessOrEqual", B::kLessOrEqual},
      {"Greater", B::kGreater}, {"GreaterOrEqual", B::kGreaterOrEqual},
      {"And", B::kAnd},       {"Or", B::kOr},       {"Xor", B::kXor},
      {"BitShift", B::kShl},
  };
  for (auto& [name, op] : binary) register_kernel("", name, binary_factory(op), __FILE__);
  register_kernel("", "Max", variadic_factory(B::kMax, false), __FILE__);
  register_kernel("", "Min", variadic_factory(B::kMin, false), __FILE__);
  register_kernel("", "Sum", variadic_factory(B::kAdd, false), __FILE__);
  register_kernel("", "Mean", variadic_factory(B::kAdd, true), __FILE__);
  register_kernel("", "Pow", simple_factory<PowKernel>(), __FILE__);
  register_kernel("", "Where", simple_factory<WhereKernel>(), __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
