// Identity: copies its input (the memory planner aliases it away when it
// can). A sequence or optional input is shared, not copied: such values are
// immutable.
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class IdentityKernel final : public Kernel {
 public:
  explicit IdentityKernel(bool is_tensor) : is_tensor_(is_tensor) {}
  void run(KernelContext& ctx) override {
    if (is_tensor_) {
      copy_tensor_data(ctx.in(0), ctx.out(0));
      return;
    }
    ctx.value_in(0);  // fails clearly when the input holds no value
    *ctx.value_outputs[0] = *ctx.value_inputs[0];
  }
  std::string impl_name() const override { return is_tensor_ ? "native.copy" : "native.share"; }

 private:
  bool is_tensor_;
};

GEC_REGISTER_KERNEL("", "Identity", [](const ir::Node& n, const KernelConfig&) {
  return std::make_unique<IdentityKernel>(n.output(0)->type.is_tensor());
});

}  // namespace
}  // namespace gec::kernels::cpu
