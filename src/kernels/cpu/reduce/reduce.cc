// CPU kernels of the Reduce* ops (opset-18 form: axes as optional input 1)
// and ArgMax/ArgMin.
//
// The input is viewed as groups of adjacent dims that are all reduced or all
// kept (size-1 dims dropped), e.g. [N,C,H,W] reducing H,W is [N*C | H*W].
// Then one of two loop shapes runs, both with a contiguous innermost loop:
//  A. the last group is reduced (length L): each output element reduces its
//     contiguous runs of L inputs (vectorized reduction); outputs are split
//     across threads.
//  B. the last group is kept (length K): each output row of K accumulates
//     whole input rows of K elementwise (vectorized); rows, or blocks of a
//     long row, are split across threads.
// ReduceLogSumExp runs ReduceMax first and then sums exp(x - max), so large
// inputs do not overflow. Reductions over an empty set give the ONNX-18
// values: 0 (sums), 1 (prod), -inf/lowest (max), +inf/max (min), -inf
// (LogSum), NaN (float Mean).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

enum class R { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

constexpr bool additive(R op) { return op != R::kMax && op != R::kMin && op != R::kProd; }

template <R op, typename T>
inline T init_value() {
  if constexpr (op == R::kProd) return T(1);
  else if constexpr (op == R::kMax)
    return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  else if constexpr (op == R::kMin)
    return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  else return T(0);
}

/// The type integer sums and products are computed in: unsigned, at least
/// as wide as unsigned int, so that they wrap around (two's complement, as
/// numpy and ONNX Runtime give) instead of overflowing, which is undefined
/// for signed types (found by fuzzing: a ReduceSumSquare of large int64s).
template <typename T, bool = std::is_integral_v<T>>
struct AccOf {
  using type = T;
};
template <typename T>
struct AccOf<T, true> {
  using type = std::make_unsigned_t<std::common_type_t<T, unsigned>>;
};
template <typename T>
using Acc = typename AccOf<T>::type;

/// `v` as T: for integer T, NaN becomes 0 and out-of-range values saturate
/// (a log or square root of an integer reduction can be either; the plain
/// conversion would be undefined, found by fuzzing).
template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
inline T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<Acc<T>>(a) * static_cast<Acc<T>>(b));
}

/// What each input contributes (`shift` is the row max for LogSumExp).
template <R op, typename T>
inline T map_value(T x, T shift) {
  if constexpr (op == R::kSumSquare || op == R::kL2) return wrap_mul(x, x);
  else if constexpr (op == R::kL1) {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < T(0) ? static_cast<T>(Acc<T>(0) - static_cast<Acc<T>>(x)) : x;
  } else if constexpr (op == R::kLogSumExp) {
    if constexpr (std::is_integral_v<T>) return from_double<T>(std::exp(static_cast<double>(x) - static_cast<double>(shift)));
    else return std::exp(x - shift);
  } else return x;
}

template <R op, typename T>
inline T combine(T acc, T v) {
  if constexpr (op == R::kMax) return (v > acc || v != v) ? v : acc;  // NaN is sticky
  else if constexpr (op == R::kMin) return (v < acc || v != v) ? v : acc;
  else if constexpr (op == R::kProd) return wrap_mul(acc, v);
  else return static_cast<T>(static_cast<Acc<T>>(acc) + static_cast<Acc<T>>(v));
}

template <R op, typename T>
inline T finish(T acc, int64_t count, T shift) {
  if constexpr (op == R::kMean) {
    if constexpr (std::is_floating_point_v<T>) return acc / static_cast<T>(count);
    else return count == 0 ? T(0) : static_cast<T>(acc / static_cast<T>(count));
  } else if constexpr (op == R::kL2) {
    return from_double<T>(std::sqrt(static_cast<double>(static_cast<Acc<T>>(acc))));
  } else if constexpr (op == R::kLogSum) {
    if constexpr (std::is_integral_v<T>) return from_double<T>(std::log(static_cast<double>(acc)));
    else return std::log(acc);
  } else if constexpr (op == R::kLogSumExp) {
    if constexpr (std::is_integral_v<T>)
      return from_double<T>(static_cast<double>(shift) + std::log(static_cast<double>(acc)));
    else return std::isfinite(shift) ? shift + std::log(acc) : shift;  // all -inf, +inf or NaN
  } else {
    return acc;
  }
}

/// acc combined with map(x[i]) for i < n.
template <R op, typename T>
inline T reduce_run(const T* x, int64_t n, T acc, T shift) {
  if constexpr (additive(op)) {
    Acc<T> s = Acc<T>(0);
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += static_cast<Acc<T>>(map_value<op, T>(x[i], shift));
    return static_cast<T>(static_cast<Acc<T>>(acc) + s);
  } else if constexpr (op == R::kProd) {
    Acc<T> p = Acc<T>(1);
#pragma omp simd reduction(* : p)
    for (int64_t i = 0; i < n; ++i) p *= static_cast<Acc<T>>(x[i]);
    return static_cast<T>(static_cast<Acc<T>>(acc) * p);
  } else if constexpr (std::is_floating_point_v<T>) {
    // max/min reductions in SIMD lose NaN, so NaN is tracked on the side.
    if (acc != acc) return acc;
    T m = acc;
    int nan = 0;
    if constexpr (op == R::kMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
      for (int64_t i = 0; i < n; ++i) {
        m = x[i] > m ? x[i] : m;
        nan |= x[i] != x[i];
      }
    } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
      for (int64_t i = 0; i < n; ++i) {
        m = x[i] < m ? x[i] : m;
        nan |= x[i] != x[i];
      }
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : m;
  } else {
    for (int64_t i = 0; i < n; ++i) acc = combine<op, T>(acc, x[i]);
    return acc;
  }
}

/// The grouped view of the input described in the file comment.
struct Geometry {
  int64_t out_numel = 1;
  int64_t count = 1;          // inputs per output
  bool inner_reduced = true;  // loop shape A (else B)
  int64_t inner = 1;          // length of the last group (stride 1)
  std::vector<int64_t> kdims, kstrides;  // kept groups except an inner kept one
  std::vector<int64_t> rdims, rstrides;  // reduced groups except an inner reduced one
};

Geometry make_geometry(const Shape& in, const std::vector<bool>& reduced) {
  struct Group { int64_t size, stride; bool red; };
  std::vector<Group> g;
  Geometry geo;
  int64_t stride = 1;
  for (size_t k = in.size(); k-- > 0;) {  // innermost first
    const int64_t d = in[k];
    if (reduced[k]) geo.count *= d;
    else geo.out_numel *= d;
    if (d != 1) {
      if (!g.empty() && g.back().red == reduced[k]) g.back().size *= d;
      else g.push_back({d, stride, reduced[k]});
    }
    stride *= d;
  }
  if (g.empty()) return geo;  // one element
  geo.inner_reduced = g[0].red;
  geo.inner = g[0].size;
  for (size_t i = g.size(); i-- > 1;) {  // outermost first
    auto& dims = g[i].red ? geo.rdims : geo.kdims;
    auto& strides = g[i].red ? geo.rstrides : geo.kstrides;
    dims.push_back(g[i].size);
    strides.push_back(g[i].stride);
  }
  return geo;
}

/// Input offset of the q-th combination of `dims` (row-major).
inline int64_t offset_of(int64_t q, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    off += (q % dims[d]) * strides[d];
    q /= dims[d];
  }
  return off;
}

/// Calls f(offset) for every combination of `dims`, row-major.
template <typename F>
inline void for_each_offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, F&& f) {
  const size_t nd = dims.size();
  if (nd == 0) return f(int64_t{0});
  if (nd == 1) {
    for (int64_t i = 0; i < dims[0]; ++i) f(i * strides[0]);
    return;
  }
  int64_t idx[64] = {};
  GEC_CHECK(nd <= 64, "reduction rank too large");
  int64_t off = 0;
  while (true) {
    f(off);
    size_t d = nd;
    while (d-- > 0) {
      off += strides[d];
      if (++idx[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
      if (d == 0) return;
    }
  }
}

/// One reduction of x into out per `geo`; `shift` (per output, may be null)
/// is LogSumExp's max.
template <R op, typename T>
void reduce(const Geometry& geo, const T* x, T* out, const T* shift, int nt) {
  if (geo.out_numel == 0) return;
  const int64_t work = geo.out_numel * geo.count;
  if (geo.inner_reduced) {  // shape A
    parallel_ranges(geo.out_numel, nt, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* base = x + offset_of(o, geo.kdims, geo.kstrides);
        const T sh = shift ? shift[o] : T(0);
        T acc = init_value<op, T>();
        for_each_offset(geo.rdims, geo.rstrides,
                        [&](int64_t off) { acc = reduce_run<op, T>(base + off, geo.inner, acc, sh); });
        out[o] = finish<op, T>(acc, geo.count, sh);
      }
    }, work);
    return;
  }
  // Shape B: rows of `inner` outputs; a long row is cut into blocks so that
  // all threads have work even when there are few rows.
  const int64_t rows = geo.out_numel / geo.inner;
  const int64_t want = 4 * static_cast<int64_t>(threads_for(work, nt));
  const int64_t blocks = rows >= want ? 1 : std::max<int64_t>(1, std::min(geo.inner / 256, want / rows));
  parallel_ranges(rows * blocks, nt, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t q = it / blocks, blk = it % blocks;
      const int64_t k0 = geo.inner * blk / blocks, k1 = geo.inner * (blk + 1) / blocks;
      const T* base = x + offset_of(q, geo.kdims, geo.kstrides);
      T* o = out + q * geo.inner;
      const T* sh = shift ? shift + q * geo.inner : nullptr;
      for (int64_t k = k0; k < k1; ++k) o[k] = init_value<op, T>();
      for_each_offset(geo.rdims, geo.rstrides, [&](int64_t off) {
        const T* xr = base + off;
#pragma omp simd
        for (int64_t k = k0; k < k1; ++k) o[k] = combine<op, T>(o[k], map_value<op, T>(xr[k], sh ? sh[k] : T(0)));
      });
      for (int64_t k = k0; k < k1; ++k) o[k] = finish<op, T>(o[k], geo.count, sh ? sh[k] : T(0));
    }
  }, work);
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(R op, bool noop, std::string what) : op_(op), noop_(noop), what_(std::move(what)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    const std::vector<bool>& red = reduced_axes(ctx);
    if (red.empty()) {  // noop_with_empty_axes and no axes: output = input
      copy_tensor_data(x, y);
      return;
    }
    if (!(geo_valid_ && x.shape == geo_shape_ && red == geo_red_)) {
      geo_ = make_geometry(x.shape, red);
      geo_shape_ = x.shape;
      geo_red_ = red;
      geo_valid_ = true;
    }
    const bool float_only = op_ == R::kLogSum || op_ == R::kLogSumExp;
    auto body = [&](auto tag) { run_typed<decltype(tag)>(x, y, ctx.num_threads); };
    if (float_only) dispatch_float(x.dtype, what_, body);
    else dispatch_arith(x.dtype, what_, body);
  }

 private:
  /// Per-dim "reduced" flags from input 1; empty for a no-op. A scalar input
  /// gets one flag (its single element is reduced with count 1).
  const std::vector<bool>& reduced_axes(const KernelContext& ctx) {
    const int64_t rank = static_cast<int64_t>(ctx.in(0).shape.size());
    const int64_t slots = std::max<int64_t>(rank, 1);
    red_.assign(static_cast<size_t>(slots), false);
    int64_t n = 0;
    if (ctx.has_input(1)) {
      const TensorView& a = ctx.in(1);
      n = a.numel();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t given = a.dtype == DType::kInt32 ? a.as<int32_t>()[i] : a.as<int64_t>()[i];
        const int64_t ax = given < 0 ? given + rank : given;
        if (ax < 0 || ax >= slots)
          fail(ErrorCode::kInvalidArgument, what_ + ": axis " + std::to_string(given) + " out of range");
        red_[ax] = true;
      }
    }
    if (n == 0) {
      if (noop_) red_.clear();
      else red_.assign(static_cast<size_t>(slots), true);
    }
    return red_;
  }

  template <typename T>
  void run_typed(const TensorView& x, TensorView& y, int nt) {
    const T* in = x.as<T>();
    T* out = y.as<T>();
    switch (op_) {
      case R::kSum: return reduce<R::kSum, T>(geo_, in, out, nullptr, nt);
      case R::kMean: return reduce<R::kMean, T>(geo_, in, out, nullptr, nt);
      case R::kMax: return reduce<R::kMax, T>(geo_, in, out, nullptr, nt);
      case R::kMin: return reduce<R::kMin, T>(geo_, in, out, nullptr, nt);
      case R::kProd: return reduce<R::kProd, T>(geo_, in, out, nullptr, nt);
      case R::kSumSquare: return reduce<R::kSumSquare, T>(geo_, in, out, nullptr, nt);
      case R::kL1: return reduce<R::kL1, T>(geo_, in, out, nullptr, nt);
      case R::kL2: return reduce<R::kL2, T>(geo_, in, out, nullptr, nt);
      case R::kLogSum:
        if constexpr (std::is_floating_point_v<T>) reduce<R::kLogSum, T>(geo_, in, out, nullptr, nt);
        return;
      case R::kLogSumExp:
        if constexpr (std::is_floating_point_v<T>) {
          std::vector<T> mx(static_cast<size_t>(geo_.out_numel));
          reduce<R::kMax, T>(geo_, in, mx.data(), nullptr, nt);
          reduce<R::kLogSumExp, T>(geo_, in, out, mx.data(), nt);
        }
        return;
    }
  }

  R op_;
  bool noop_;
  std::string what_;
  std::vector<bool> red_;
  bool geo_valid_ = false;
  Shape geo_shape_;
  std::vector<bool> geo_red_;
  Geometry geo_;
};

// ---- ArgMax / ArgMin (opset 13) ----------------------------------------------------

/// Index of the max (min) along `axis`. NaN counts as the extreme, as in
/// numpy: the first NaN wins (the last with select_last_index). Ties go to
/// the first index unless select_last_index.
class ArgKernel final : public Kernel {
 public:
  ArgKernel(bool is_max, int64_t axis, bool last, std::string what)
      : is_max_(is_max), axis_(axis), last_(last), what_(std::move(what)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= x.shape[i];
    const int64_t d = x.shape[axis];
    int64_t* out = ctx.out(0).as<int64_t>();
    dispatch_arith(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.as<T>();
      parallel_ranges(outer * inner, ctx.num_threads, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const T* p = in + (o / inner) * d * inner + (o % inner);
          out[o] = d == 0 ? 0 : best_index(p, d, inner);
        }
      }, outer * inner * d);
    });
  }

 private:
  template <typename T>
  int64_t best_index(const T* p, int64_t d, int64_t stride) const {
    int64_t bi = 0;
    T best = p[0];
    for (int64_t i = 1; i < d; ++i) {
      const T v = p[i * stride];
      const bool v_nan = v != v, b_nan = best != best;
      bool take;
      if (last_) take = v_nan || (!b_nan && (is_max_ ? v >= best : v <= best));
      else take = (v_nan && !b_nan) || (is_max_ ? v > best : v < best);
      if (take) {
        best = v;
        bi = i;
      }
    }
    return bi;
  }

  bool is_max_;
  int64_t axis_;
  bool last_;
  std::string what_;
};

const bool kReduceRegistered = [] {
  const std::pair<const char*, R> ops[] = {
      {"ReduceSum", R::kSum},     {"ReduceMean", R::kMean},           {"ReduceMax", R::kMax},
      {"ReduceMin", R::kMin},     {"ReduceProd", R::kProd},           {"ReduceSumSquare", R::kSumSquare},
      {"ReduceL1", R::kL1},       {"ReduceL2", R::kL2},               {"ReduceLogSum", R::kLogSum},
      {"ReduceLogSumExp", R::kLogSumExp},
  };
  for (auto& [name, op] : ops) {
    const R r = op;
    register_kernel("", name, [r](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
      return std::make_unique<ReduceKernel>(r, n.get_int("noop_with_empty_axes", 0) != 0, n.describe());
    }, __FILE__);
  }
  for (bool is_max : {true, false}) {
    register_kernel("", is_max ? "ArgMax" : "ArgMin",
                    [is_max](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
                      return std::make_unique<ArgKernel>(is_max, n.get_int("axis", 0),
                                                         n.get_int("select_last_index", 0) != 0,
                                                         n.describe());
                    }, __FILE__);
  }
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
