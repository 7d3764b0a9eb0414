// Reshape, Flatten, Squeeze, Unsqueeze (ONNX opset 17): the output has the
// input's elements in the same order, so the kernel is a copy (a no-op when
// the memory planner aliased output and input). Output shapes come from the
// infer functions in ops/tensor_ops.cc.
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class CopyKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) override { copy_tensor_data(ctx.in(0), ctx.out(0)); }
  std::string impl_name() const override { return "native.copy"; }
};

std::unique_ptr<Kernel> make_copy(const ir::Node&, const KernelConfig&) {
  return std::make_unique<CopyKernel>();
}

GEC_REGISTER_KERNEL("", "Reshape", make_copy);
GEC_REGISTER_KERNEL("", "Flatten", make_copy);
GEC_REGISTER_KERNEL("", "Squeeze", make_copy);
GEC_REGISTER_KERNEL("", "Unsqueeze", make_copy);

}  // namespace
}  // namespace gec::kernels::cpu
