// BitwiseAnd / BitwiseOr / BitwiseXor (ai.onnx 18: integer inputs of one
// dtype, multidirectional broadcasting) and BitwiseNot (ai.onnx 18: ~x) on
// CPU. Operator texts: onnx/docs/Operators.md, opset 18. Bool and float
// inputs are refused (the operator texts list the integer types only).
#include <type_traits>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

enum class Bitwise { kAnd, kOr, kXor };

class BitwiseKernel final : public Kernel {
 public:
  BitwiseKernel(Bitwise op, std::string what) : op_(op), what_(std::move(what)) {}

  void reshape(const KernelContext& ctx) override {
    if (ctx.in(0).dtype != ctx.in(1).dtype)
      fail(ErrorCode::kInvalidArgument, what_ + ": inputs are " + dtype_name(ctx.in(0).dtype) + " and " +
                                            dtype_name(ctx.in(1).dtype));
    plan_ = make_broadcast_plan<2>(ctx.out(0).shape, {&ctx.in(0).shape, &ctx.in(1).shape});
  }

  void run(KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView& b = ctx.in(1);
    TensorView& o = ctx.out(0);
    dispatch_integer(a.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {  // dispatch_integer calls only these
        const T* pa = a.as<T>();
        const T* pb = b.as<T>();
        T* po = o.as<T>();
        const Bitwise op = op_;
        for_each_row(plan_, ctx.num_threads, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n) {
          const int64_t sa = plan_.inner_bcast[0] ? 0 : 1, sb = plan_.inner_bcast[1] ? 0 : 1;
          const T* ra = pa + off[0];
          const T* rb = pb + off[1];
          T* ro = po + oo;
          for (int64_t i = 0; i < n; ++i) {
            const T x = ra[i * sa], y = rb[i * sb];
            ro[i] = static_cast<T>(op == Bitwise::kAnd ? (x & y) : op == Bitwise::kOr ? (x | y) : (x ^ y));
          }
        });
      }
    });
  }

 private:
  Bitwise op_;
  std::string what_;
  BroadcastPlan<2> plan_;  // set by reshape
};

class BitwiseNotKernel final : public Kernel {
 public:
  explicit BitwiseNotKernel(std::string what) : what_(std::move(what)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    dispatch_integer(x.dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {  // dispatch_integer calls only these
        const T* in = x.as<T>();
        T* out = y.as<T>();
        parallel_ranges(x.numel(), ctx.num_threads, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(~in[i]);  // reads i before writing it: in place
        });
      }
    });
  }

 private:
  std::string what_;
};

const bool kRegistered = [] {
  for (auto [name, op] : {std::pair{"BitwiseAnd", Bitwise::kAnd}, std::pair{"BitwiseOr", Bitwise::kOr},
                          std::pair{"BitwiseXor", Bitwise::kXor}})
    register_kernel("", name, [op = op](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
      return std::make_unique<BitwiseKernel>(op, n.describe());
    }, __FILE__);
  register_kernel("", "BitwiseNot", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<BitwiseNotKernel>(n.describe());
  }, __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
