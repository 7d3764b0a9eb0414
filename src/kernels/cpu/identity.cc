// Identity: copies its input (the memory planner aliases it away when it can).
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class IdentityKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) override { copy_tensor_data(ctx.in(0), ctx.out(0)); }
  std::string impl_name() const override { return "native.copy"; }
};

GEC_REGISTER_KERNEL("", "Identity", [](const ir::Node&, const std::vector<DType>&) {
  return std::make_unique<IdentityKernel>();
});

}  // namespace
}  // namespace gec::kernels::cpu
