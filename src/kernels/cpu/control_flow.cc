// If (ONNX If-16): evaluates `cond` (a one-element tensor) and runs
// then_branch or else_branch through the executor's SubgraphRunner; the
// branch's outputs become the node's outputs.
#include <cstring>

#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

bool read_condition(const TensorView& c, const ir::Node& node) {
  if (c.numel() != 1)
    fail(ErrorCode::kInvalidArgument, node.describe() + ": cond must have one element, has " + shape_str(c.shape));
  switch (c.dtype) {
    case DType::kBool: case DType::kUInt8: case DType::kInt8: return *c.as<uint8_t>() != 0;
    case DType::kInt32: return *c.as<int32_t>() != 0;
    case DType::kInt64: return *c.as<int64_t>() != 0;
    case DType::kFloat32: return *c.as<float>() != 0.f;
    default: fail(ErrorCode::kUnsupported, node.describe() + ": cond of dtype " + dtype_name(c.dtype));
  }
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const ir::Node& n) : node_(n) {
    then_ = n.get_graph("then_branch");
    else_ = n.get_graph("else_branch");
    if (!then_ || !else_) fail(ErrorCode::kInvalidModel, n.describe() + ": missing then_branch/else_branch");
    if (then_->outputs().size() != n.outputs().size() || else_->outputs().size() != n.outputs().size())
      fail(ErrorCode::kInvalidModel, n.describe() + ": branch output count differs from the node's");
  }
  void run(KernelContext& ctx) override {
    const ir::Graph* g = read_condition(ctx.in(0), node_) ? then_ : else_;
    std::vector<Tensor> outs = ctx.subgraphs->run(*g, {});
    for (size_t i = 0; i < outs.size(); ++i) {
      TensorView* o = ctx.allocate_output(i, outs[i].dtype(), outs[i].shape());
      copy_tensor_data(outs[i].view(), *o);
    }
  }
  std::string impl_name() const override { return "control.if"; }

 private:
  const ir::Node& node_;
  const ir::Graph* then_;
  const ir::Graph* else_;
};

GEC_REGISTER_KERNEL("", "If", [](const ir::Node& n, const std::vector<DType>&) {
  return std::make_unique<IfKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
