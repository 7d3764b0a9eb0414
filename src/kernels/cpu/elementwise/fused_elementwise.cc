// CPU kernel of com.graphengine::FusedElementwise (ops/fused_elementwise.h):
// an interpreter over the node's instruction list.
//
// The output is walked in rows of the broadcast plan (common/broadcast.h),
// each row cut into blocks of kBlock elements. For one block every input
// register is a pointer into its tensor (contiguous, or one repeated element
// when that input broadcasts along the row); each instruction then runs one
// straight loop over the block into its own register block, which stays in
// L1; finally the result registers are copied to the outputs. So each group
// input is read once and each output written once, and the intermediates
// never reach memory. An instruction whose operands all repeat along the row
// computes one element. Every instruction uses the formula of the kernel the
// op runs on unfused (unary_formulas.h, the Highway loops of
// elementwise_simd.h and Gelu's), so fused and unfused outputs agree bit for
// bit.
//
// All of a block's inputs are read before any output of it is written, so
// an output may overwrite a same-shaped input (the op's in-place trait).
// With a non-plain output layout the broadcast runs over the shapes the
// bytes form (layout_broadcast.h).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/layout_broadcast.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/cpu/elementwise/unary_formulas.h"
#include "kernels/kernel.h"
#include "ops/domain.h"
#include "ops/fused_elementwise.h"

namespace gec::kernels::cpu {
namespace gelu_simd {
void gelu_f32(bool tanh_form, const float* x, float* y, int64_t n);
}  // namespace gelu_simd

namespace {

using ops::EwInstr;
using ops::EwOp;
using unary_formulas::U;
using unary_formulas::unary_value;
using unary_formulas::UnaryParams;

constexpr int64_t kBlock = 512;
constexpr size_t kN = ops::kMaxFusedInputs;

/// One register for one block: its elements, or one element repeated.
struct Reg {
  const void* p = nullptr;
  bool scalar = false;
  bool one_element = false;  // an input tensor of one element (Pow's x^2 case, as its kernel)
  const float* f() const { return static_cast<const float*>(p); }
  const uint8_t* b() const { return static_cast<const uint8_t*>(p); }
};

template <U op>
void unary_loop(const float* x, float* y, int64_t n, const UnaryParams& p) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = unary_value<op, float>(x[i], p);
}

void run_unary(EwOp op, const EwInstr& in, const float* x, float* y, int64_t n) {
  UnaryParams p;
  p.alpha = in.params[0];
  p.beta = in.params[1];
  p.gamma = in.params[2];
  switch (op) {
    case EwOp::kRelu: return simd::unary_f32(simd::UnOp::kRelu, x, y, n);
    case EwOp::kSigmoid: return simd::unary_f32(simd::UnOp::kSigmoid, x, y, n);
    case EwOp::kTanh: return simd::unary_f32(simd::UnOp::kTanh, x, y, n);
    case EwOp::kExp: return simd::unary_f32(simd::UnOp::kExp, x, y, n);
    case EwOp::kGelu: return gelu_simd::gelu_f32(in.params[0] != 0.f, x, y, n);
    case EwOp::kSwish: return simd::swish_f32(in.params[0], x, y, n);
    case EwOp::kLeakyRelu: return simd::piecewise_f32(simd::PiecewiseOp::kLeakyRelu, p.alpha, 0.f, x, y, n);
    case EwOp::kHardSigmoid: return simd::piecewise_f32(simd::PiecewiseOp::kHardSigmoid, p.alpha, p.beta, x, y, n);
    case EwOp::kHardSwish: return simd::piecewise_f32(simd::PiecewiseOp::kHardSwish, p.alpha, p.beta, x, y, n);
#define GEC_CASE(name) \
  case EwOp::k##name: return unary_loop<U::k##name>(x, y, n, p);
      GEC_CASE(Neg) GEC_CASE(Abs) GEC_CASE(Sign) GEC_CASE(Erf) GEC_CASE(Log) GEC_CASE(Sqrt) GEC_CASE(Reciprocal)
      GEC_CASE(Floor) GEC_CASE(Ceil) GEC_CASE(Round) GEC_CASE(Sin) GEC_CASE(Cos) GEC_CASE(Softplus) GEC_CASE(Softsign)
      GEC_CASE(Elu) GEC_CASE(Selu) GEC_CASE(Celu)
      GEC_CASE(ThresholdedRelu) GEC_CASE(Mish)
#undef GEC_CASE
    default: fail(ErrorCode::kInternal, std::string("fused elementwise: ") + ops::ew_op_name(op) + " is not unary");
  }
}

/// o[i] = f(a[i], b[i]) with either operand repeating one element.
template <typename T, typename R, typename F>
void map2(const T* a, bool as, const T* b, bool bs, R* o, int64_t n, F f) {
  if (as && bs) {
    const R v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  } else if (as) {
    const T x = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = f(x, b[i]);
  } else if (bs) {
    const T y = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], y);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  }
}

/// Integer forms (int32, int64) of the arithmetic, comparison and Where
/// instructions, with the unfused kernels' semantics: wrap-around on
/// overflow (computed unsigned), Div truncating toward zero, x / -1 = -x, a
/// zero divisor an error. Returns whether the result repeats one element.
template <typename T>
bool execute_int(const EwInstr& in, const Reg* regs, void* dst, int64_t n, const std::string& desc) {
  using UT = std::make_unsigned_t<T>;
  const Reg none;
  const Reg& a = regs[in.args[0]];
  const Reg& b = in.args[1] >= 0 ? regs[in.args[1]] : none;
  const Reg& c = in.args[2] >= 0 ? regs[in.args[2]] : none;
  bool scalar = a.scalar;
  if (in.args[1] >= 0) scalar = scalar && b.scalar;
  if (in.args[2] >= 0) scalar = scalar && c.scalar;
  const int64_t m = scalar ? 1 : n;
  const T* x = static_cast<const T*>(a.p);
  const T* y = static_cast<const T*>(b.p);
  T* o = static_cast<T*>(dst);
  uint8_t* ob = static_cast<uint8_t*>(dst);
  auto neg = [](T v) { return static_cast<T>(UT(0) - static_cast<UT>(v)); };
  switch (in.op) {
    case EwOp::kAdd: map2(x, a.scalar, y, b.scalar, o, m, [](T p, T q) { return static_cast<T>(static_cast<UT>(p) + static_cast<UT>(q)); }); break;
    case EwOp::kSub: map2(x, a.scalar, y, b.scalar, o, m, [](T p, T q) { return static_cast<T>(static_cast<UT>(p) - static_cast<UT>(q)); }); break;
    case EwOp::kMul: map2(x, a.scalar, y, b.scalar, o, m, [](T p, T q) { return static_cast<T>(static_cast<UT>(p) * static_cast<UT>(q)); }); break;
    case EwOp::kDiv:
      for (int64_t i = 0; i < (b.scalar ? 1 : m); ++i)
        if (y[i] == T(0)) fail(ErrorCode::kInvalidArgument, desc + ": integer division by zero");
      map2(x, a.scalar, y, b.scalar, o, m, [neg](T p, T q) { return q == T(-1) ? neg(p) : static_cast<T>(p / q); });
      break;
    case EwOp::kMax: map2(x, a.scalar, y, b.scalar, o, m, [](T p, T q) { return p > q ? p : q; }); break;
    case EwOp::kMin: map2(x, a.scalar, y, b.scalar, o, m, [](T p, T q) { return p < q ? p : q; }); break;
    case EwOp::kEqual: map2(x, a.scalar, y, b.scalar, ob, m, [](T p, T q) -> uint8_t { return p == q; }); break;
    case EwOp::kLess: map2(x, a.scalar, y, b.scalar, ob, m, [](T p, T q) -> uint8_t { return p < q; }); break;
    case EwOp::kLessOrEqual: map2(x, a.scalar, y, b.scalar, ob, m, [](T p, T q) -> uint8_t { return p <= q; }); break;
    case EwOp::kGreater: map2(x, a.scalar, y, b.scalar, ob, m, [](T p, T q) -> uint8_t { return p > q; }); break;
    case EwOp::kGreaterOrEqual: map2(x, a.scalar, y, b.scalar, ob, m, [](T p, T q) -> uint8_t { return p >= q; }); break;
    case EwOp::kNeg: for (int64_t i = 0; i < m; ++i) o[i] = neg(x[i]); break;
    case EwOp::kAbs: for (int64_t i = 0; i < m; ++i) o[i] = x[i] < T(0) ? neg(x[i]) : x[i]; break;
    case EwOp::kRelu: for (int64_t i = 0; i < m; ++i) o[i] = x[i] < T(0) ? T(0) : x[i]; break;
    case EwOp::kSign: for (int64_t i = 0; i < m; ++i) o[i] = x[i] > T(0) ? T(1) : x[i] == T(0) ? T(0) : T(-1); break;
    case EwOp::kWhere: {
      const uint8_t* cond = static_cast<const uint8_t*>(a.p);
      const T* p = static_cast<const T*>(b.p);
      const T* q = static_cast<const T*>(c.p);
      const int64_t sc = a.scalar ? 0 : 1, sp = b.scalar ? 0 : 1, sq = c.scalar ? 0 : 1;
      for (int64_t i = 0; i < m; ++i) o[i] = cond[i * sc] ? p[i * sp] : q[i * sq];
      break;
    }
    default:
      fail(ErrorCode::kInternal, std::string("fused elementwise: ") + ops::ew_op_name(in.op) + " has no integer form");
  }
  return scalar;
}

/// Element i of a float32, bool, int32 or int64 block as D (Cast-13:
/// numbers to bool are x != 0, bool to numbers 0/1, integers convert as C++
/// does, which for int64 -> int32 keeps the low 32 bits).
template <typename D>
D cast_element(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::kFloat32: {
      const float v = static_cast<const float*>(p)[i];
      if constexpr (std::is_same_v<D, uint8_t>) return v != 0.f;  // NaN is true, as the Cast kernel
      else return static_cast<D>(v);  // to float32 only: float to integer is refused at decode
    }
    case DType::kBool: return static_cast<D>(static_cast<const uint8_t*>(p)[i] != 0);
    case DType::kInt32: {
      const int32_t v = static_cast<const int32_t*>(p)[i];
      if constexpr (std::is_same_v<D, uint8_t>) return v != 0;
      else return static_cast<D>(v);
    }
    default: {
      const int64_t v = static_cast<const int64_t*>(p)[i];
      if constexpr (std::is_same_v<D, uint8_t>) return v != 0;
      else return static_cast<D>(v);
    }
  }
}

/// Runs instruction `in` over a block of `n` elements into `dst`; returns
/// whether the result repeats one element.
bool execute(const EwInstr& in, const Reg* regs, void* dst, int64_t n) {
  const Reg none;
  const Reg& a = regs[in.args[0]];
  const Reg& b = in.args[1] >= 0 ? regs[in.args[1]] : none;
  const Reg& c = in.args[2] >= 0 ? regs[in.args[2]] : none;
  bool scalar = a.scalar;
  if (in.op != EwOp::kClip) {  // Clip's min/max are one element (checked by infer): x decides
    if (in.args[1] >= 0) scalar = scalar && b.scalar;
    if (in.args[2] >= 0) scalar = scalar && c.scalar;
  }
  const int64_t m = scalar ? 1 : n;
  float* of = static_cast<float*>(dst);
  uint8_t* ob = static_cast<uint8_t*>(dst);
  switch (in.op) {
    case EwOp::kAdd: simd::binary_f32(simd::BinOp::kAdd, a.f(), a.scalar, b.f(), b.scalar, of, m); break;
    case EwOp::kSub: simd::binary_f32(simd::BinOp::kSub, a.f(), a.scalar, b.f(), b.scalar, of, m); break;
    case EwOp::kMul: simd::binary_f32(simd::BinOp::kMul, a.f(), a.scalar, b.f(), b.scalar, of, m); break;
    case EwOp::kDiv: simd::binary_f32(simd::BinOp::kDiv, a.f(), a.scalar, b.f(), b.scalar, of, m); break;
    case EwOp::kMax: map2(a.f(), a.scalar, b.f(), b.scalar, of, m, [](float x, float y) { return (x > y || x != x) ? x : y; }); break;
    case EwOp::kMin: map2(a.f(), a.scalar, b.f(), b.scalar, of, m, [](float x, float y) { return (x < y || x != x) ? x : y; }); break;
    case EwOp::kPRelu: map2(a.f(), a.scalar, b.f(), b.scalar, of, m, [](float x, float s) { return x < 0.f ? s * x : x; }); break;
    case EwOp::kPow:
      if (b.one_element && b.f()[0] == 2.f)  // as the Pow kernel: x^2 of a one-element 2 is a multiply
        map2(a.f(), a.scalar, a.f(), a.scalar, of, m, [](float x, float) { return x * x; });
      else
        map2(a.f(), a.scalar, b.f(), b.scalar, of, m, [](float x, float e) { return std::pow(x, e); });
      break;
    case EwOp::kEqual: map2(a.f(), a.scalar, b.f(), b.scalar, ob, m, [](float x, float y) -> uint8_t { return x == y; }); break;
    case EwOp::kLess: map2(a.f(), a.scalar, b.f(), b.scalar, ob, m, [](float x, float y) -> uint8_t { return x < y; }); break;
    case EwOp::kLessOrEqual: map2(a.f(), a.scalar, b.f(), b.scalar, ob, m, [](float x, float y) -> uint8_t { return x <= y; }); break;
    case EwOp::kGreater: map2(a.f(), a.scalar, b.f(), b.scalar, ob, m, [](float x, float y) -> uint8_t { return x > y; }); break;
    case EwOp::kGreaterOrEqual: map2(a.f(), a.scalar, b.f(), b.scalar, ob, m, [](float x, float y) -> uint8_t { return x >= y; }); break;
    case EwOp::kAnd: map2(a.b(), a.scalar, b.b(), b.scalar, ob, m, [](uint8_t x, uint8_t y) -> uint8_t { return x & y; }); break;
    case EwOp::kOr: map2(a.b(), a.scalar, b.b(), b.scalar, ob, m, [](uint8_t x, uint8_t y) -> uint8_t { return x | y; }); break;
    case EwOp::kXor: map2(a.b(), a.scalar, b.b(), b.scalar, ob, m, [](uint8_t x, uint8_t y) -> uint8_t { return x ^ y; }); break;
    case EwOp::kNot: {
      const uint8_t* x = a.b();
      for (int64_t i = 0; i < m; ++i) ob[i] = x[i] == 0;
      break;
    }
    case EwOp::kWhere: {
      const uint8_t* cond = a.b();
      const float* x = b.f();
      const float* y = c.f();
      if (a.scalar) {  // one branch for the whole block
        const Reg& pick = cond[0] ? b : c;
        if (pick.scalar) std::fill(of, of + m, pick.f()[0]);
        else std::memcpy(of, pick.p, static_cast<size_t>(m) * sizeof(float));
      } else if (b.scalar && c.scalar) {
        const float xv = x[0], yv = y[0];
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) of[i] = cond[i] ? xv : yv;
      } else if (b.scalar) {  // masked_fill: Where(mask, fill, scores)
        const float xv = x[0];
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) of[i] = cond[i] ? xv : y[i];
      } else if (c.scalar) {
        const float yv = y[0];
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) of[i] = cond[i] ? x[i] : yv;
      } else {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) of[i] = cond[i] ? x[i] : y[i];
      }
      break;
    }
    case EwOp::kClip: {
      const float* x = a.f();
      const float lo = in.args[1] >= 0 ? b.f()[0] : -std::numeric_limits<float>::infinity();
      const float hi = in.args[2] >= 0 ? c.f()[0] : std::numeric_limits<float>::infinity();
      simd::piecewise_f32(simd::PiecewiseOp::kClip, lo, hi, x, of, m);
      break;
    }
    case EwOp::kCast:  // needs the operand's dtype: run_block does it
      fail(ErrorCode::kInternal, "fused elementwise: Cast reached execute()");
    default:
      run_unary(in.op, in, a.f(), of, m);
      break;
  }
  return scalar;
}

class FusedElementwiseKernel final : public Kernel {
 public:
  FusedElementwiseKernel(const ir::Node& n, const KernelConfig& config)
      : desc_(n.describe()), prog_(ops::decode_program(n, config.input_dtypes)), layout_(config.output_layout(0)) {
    for (size_t i = 0; i < n.inputs().size(); ++i)
      if (!n.has_input(i)) fail(ErrorCode::kInvalidModel, desc_ + ": input " + std::to_string(i) + " is missing");
  }

  void reshape(const KernelContext& ctx) override {
    const Shape& out = ctx.out(0).shape;
    for (size_t j = 1; j < prog_.results.size(); ++j)
      if (ctx.out(j).shape != out) fail(ErrorCode::kInvalidModel, desc_ + ": outputs differ in shape");
    // A non-plain output layout: broadcast over the bytes (layout_broadcast.h),
    // K pixels per row when per-channel operands would make rows short.
    std::vector<Shape> ins, in_shapes;
    std::vector<size_t> sizes;
    for (size_t i = 0; i < prog_.input_types.size(); ++i) {
      ins.push_back(ctx.in(i).shape);
      sizes.push_back(dtype_size(prog_.input_types[i]));
    }
    const Shape po = bcast_.plan(ins, sizes, out, layout_, true, desc_, in_shapes);
    std::array<const Shape*, kN> shapes;
    shapes.fill(&po);
    for (size_t i = 0; i < in_shapes.size(); ++i) shapes[i] = &in_shapes[i];
    plan_ = make_broadcast_plan<kN>(po, shapes);
    for (size_t i = 0; i < prog_.input_types.size(); ++i) one_element_[i] = shape_numel(ctx.in(i).shape) == 1;
  }

  void run(KernelContext& ctx) override {
    const size_t ni = prog_.input_types.size();
    const size_t nc = prog_.code.size();
    std::array<const char*, kN> in_base{};
    const Shape& out = ctx.out(0).shape;
    for (size_t i = 0; i < ni; ++i)
      in_base[i] = static_cast<const char*>(
          bcast_.read(i, ctx.in(i).data, ctx.in(i).numel(), out.size() > 1 ? out[1] : 1));
    std::vector<char*> out_base;
    for (size_t j = 0; j < prog_.results.size(); ++j) out_base.push_back(static_cast<char*>(ctx.out(j).data));
    const int slots = std::max(ctx.num_threads, 1);
    const size_t per_thread = nc * kBlock * 2;  // floats: a block of 8-byte elements per instruction
    if (scratch_.size() < per_thread * static_cast<size_t>(slots)) scratch_.assign(per_thread * slots, 0.f);
    for_each_row(plan_, ctx.num_threads, [&](int64_t oo, const std::array<int64_t, kN>& off, int64_t n) {
      const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
      float* scratch;
      thread_local std::vector<float> spare;
      if (t < slots) {
        scratch = scratch_.data() + per_thread * static_cast<size_t>(t);
      } else {
        if (spare.size() < per_thread) spare.assign(per_thread, 0.f);
        scratch = spare.data();
      }
      for (int64_t c = 0; c < n; c += kBlock) {
        const int64_t len = std::min(kBlock, n - c);
        run_block(in_base, off, c, len, scratch, out_base, oo + c);
      }
    });
  }

  std::string impl_name() const override { return "native.interpreter"; }

 private:
  void run_block(const std::array<const char*, kN>& in_base, const std::array<int64_t, kN>& off, int64_t c,
                 int64_t len, float* scratch, const std::vector<char*>& out_base, int64_t out_at) const {
    Reg regs[kN + ops::kMaxFusedInstructions];
    const size_t ni = prog_.input_types.size();
    for (size_t i = 0; i < ni; ++i) {
      const size_t es = dtype_size(prog_.input_types[i]);
      regs[i].scalar = plan_.inner_bcast[i];
      regs[i].one_element = one_element_[i];
      regs[i].p = in_base[i] + (off[i] + (regs[i].scalar ? 0 : c)) * static_cast<int64_t>(es);
    }
    for (size_t k = 0; k < prog_.code.size(); ++k) {
      const EwInstr& in = prog_.code[k];
      float* dst = scratch + k * kBlock * 2;
      Reg& r = regs[ni + k];
      r.p = dst;
      if (in.op == EwOp::kCast) {
        const Reg& a = regs[in.args[0]];
        const DType from = prog_.reg_types[in.args[0]], to = prog_.reg_types[ni + k];
        const int64_t m = a.scalar ? 1 : len;
        if (from == to) {
          std::memcpy(dst, a.p, static_cast<size_t>(m) * dtype_size(from));
        } else {
          for (int64_t i = 0; i < m; ++i) {
            switch (to) {
              case DType::kFloat32: dst[i] = cast_element<float>(a.p, from, i); break;
              case DType::kBool: reinterpret_cast<uint8_t*>(dst)[i] = cast_element<uint8_t>(a.p, from, i); break;
              case DType::kInt32: reinterpret_cast<int32_t*>(dst)[i] = cast_element<int32_t>(a.p, from, i); break;
              default: reinterpret_cast<int64_t*>(dst)[i] = cast_element<int64_t>(a.p, from, i); break;
            }
          }
        }
        r.scalar = a.scalar;
        continue;
      }
      // The numeric dtype the instruction runs in: its operand's (Where: X's).
      const DType t = prog_.reg_types[in.op == EwOp::kWhere ? in.args[1] : in.args[0]];
      if (t == DType::kInt32) {
        r.scalar = execute_int<int32_t>(in, regs, dst, len, desc_);
        continue;
      }
      if (t == DType::kInt64) {
        r.scalar = execute_int<int64_t>(in, regs, dst, len, desc_);
        continue;
      }
      r.scalar = execute(in, regs, dst, len);
    }
    for (size_t j = 0; j < prog_.results.size(); ++j) {
      const Reg& r = regs[prog_.results[j]];
      const size_t es = dtype_size(prog_.reg_types[prog_.results[j]]);
      char* o = out_base[j] + out_at * static_cast<int64_t>(es);
      if (!r.scalar) {
        std::memcpy(o, r.p, static_cast<size_t>(len) * es);
      } else {
        for (int64_t i = 0; i < len; ++i) std::memcpy(o + i * static_cast<int64_t>(es), r.p, es);
      }
    }
  }

  std::string desc_;
  ops::EwProgram prog_;
  ops::Layout layout_;  // the outputs' (ops/layout.h)
  LayoutBroadcast bcast_;  // the layout's byte shapes and tiled operands, set by reshape
  BroadcastPlan<kN> plan_;
  std::array<bool, kN> one_element_{};
  std::vector<float> scratch_;
};

GEC_REGISTER_KERNEL(ops::kGecDomain, "FusedElementwise",
                    [](const ir::Node& n, const KernelConfig& config) -> std::unique_ptr<Kernel> {
                      return std::make_unique<FusedElementwiseKernel>(n, config);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
