// Einsum-12 CPU kernel: a direct evaluation of the equation (ops/einsum.h).
// Every output element is the sum, over all values of the summed labels, of
// the product of the inputs' elements at those label values. Each input gets
// a stride per label (a repeated label adds its dims' strides: the
// diagonal; a broadcast dim of size 1 has stride 0), so any equation is one
// odometer loop. General and exact; not fast for large contractions, which
// models express with MatMul anyway.
#include <type_traits>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"
#include "ops/einsum.h"

namespace gec::kernels::cpu {
namespace {

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const ir::Node& n) : node_(n), equation_(n.get_string("equation", "")) {}

  void run(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) shapes.push_back(ctx.in(i).shape);
    const ops::EinsumPlan p = ops::plan_einsum(equation_, shapes, [this](const std::string& m) {
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": " + m);
    });
    dispatch_arith(ctx.in(0).dtype, node_.describe(), [&](auto tag) { run_typed<decltype(tag)>(ctx, p); });
  }
  std::string impl_name() const override { return "native.einsum"; }

 private:
  template <typename T>
  void run_typed(KernelContext& ctx, const ops::EinsumPlan& p) {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    const size_t n_in = ctx.inputs.size();
    // Loop labels: output labels first, then the summed ones.
    std::vector<int> loop = p.output_labels;
    loop.insert(loop.end(), p.sum_labels.begin(), p.sum_labels.end());
    std::vector<int64_t> size(loop.size());
    for (size_t j = 0; j < loop.size(); ++j) size[j] = p.label_size[static_cast<size_t>(loop[j])];
    // stride[i][j]: how far input i moves when loop label j steps by one.
    std::vector<std::vector<int64_t>> stride(n_in, std::vector<int64_t>(loop.size(), 0));
    for (size_t i = 0; i < n_in; ++i) {
      const Shape& s = ctx.in(i).shape;
      int64_t st = 1;
      for (size_t d = s.size(); d-- > 0;) {
        if (s[d] != 1) {
          const int l = p.input_labels[i][d];
          for (size_t j = 0; j < loop.size(); ++j)
            if (loop[j] == l) stride[i][j] += st;
        }
        st *= s[d];
      }
    }
    const size_t n_out_dims = p.output_labels.size();
    int64_t sum_count = 1;
    for (size_t j = n_out_dims; j < loop.size(); ++j) sum_count *= size[j];
    T* out = ctx.out(0).as<T>();
    const int64_t out_count = ctx.out(0).numel();
    std::vector<int64_t> idx(loop.size(), 0);
    std::vector<int64_t> off(n_in, 0);
    for (int64_t o = 0; o < out_count; ++o) {
      Acc acc = Acc(0);
      for (int64_t s = 0; s < sum_count; ++s) {
        Acc prod = Acc(1);
        for (size_t i = 0; i < n_in; ++i) prod *= static_cast<Acc>(ctx.in(i).as<T>()[off[i]]);
        acc += prod;
        step(idx, off, size, stride, n_out_dims, loop.size());
      }
      out[o] = static_cast<T>(acc);
      // The summed labels wrapped around to 0; advance the output odometer.
      step(idx, off, size, stride, 0, n_out_dims);
    }
  }

  // Advances the odometer over loop dims [lo, hi) (last fastest), keeping
  // each input's offset in step.
  static void step(std::vector<int64_t>& idx, std::vector<int64_t>& off, const std::vector<int64_t>& size,
                   const std::vector<std::vector<int64_t>>& stride, size_t lo, size_t hi) {
    for (size_t j = hi; j-- > lo;) {
      ++idx[j];
      for (size_t i = 0; i < off.size(); ++i) off[i] += stride[i][j];
      if (idx[j] < size[j]) return;
      for (size_t i = 0; i < off.size(); ++i) off[i] -= stride[i][j] * idx[j];
      idx[j] = 0;
    }
  }

  const ir::Node& node_;
  std::string equation_;
};

GEC_REGISTER_KERNEL("", "Einsum", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<EinsumKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
