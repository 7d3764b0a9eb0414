// BatchNormalization, inference form (ONNX BatchNormalization-15 with
// training_mode=0): Y = (X - mean) / sqrt(var + epsilon) * scale + B, per
// channel (dim 1). Runs oneDNN batch_normalization_forward with global stats;
// X is viewed as [N, C, prod(spatial)] so every rank >= 2 works.
#include <unordered_map>

#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const ir::Node& n) : desc_(n.describe()), epsilon_(n.get_float("epsilon", 1e-5f)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    for (size_t i = 0; i < 5; ++i) require_f32(desc_, ctx.in(i).dtype);
    if (y.numel() == 0) return;
    if (key_.update({x.shape})) build(x.shape);
    bind(src_, x.data);
    bind(dst_, y.data);
    bind(scale_, ctx.in(1).data);
    bind(shift_, ctx.in(2).data);
    bind(mean_, ctx.in(3).data);
    bind(var_, ctx.in(4).data);
    bn_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  std::string impl_name() const override { return "onednn.batchnorm"; }

 private:
  void build(const Shape& xs) {
    const int64_t n = xs[0], c = xs[1];
    const Shape v{n, c, shape_numel(xs) / (n * c)};
    const memory::desc data = plain_md(v), chan = plain_md({c});
    using bnf = dnnl::batch_normalization_forward;
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                       dnnl::normalization_flags::use_shift;
    try {
      bn_ = bnf(bnf::primitive_desc(bnf::desc(dnnl::prop_kind::forward_inference, data, epsilon_, flags), cpu_engine()));
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a batch normalization for X " + shape_str(xs), e);
    }
    src_ = unbound_memory(data);
    dst_ = unbound_memory(data);
    scale_ = unbound_memory(chan);
    shift_ = unbound_memory(chan);
    mean_ = unbound_memory(chan);
    var_ = unbound_memory(chan);
    // The map shares the memory handles that bind() points at each run's data.
    args_ = {{DNNL_ARG_SRC, src_},     {DNNL_ARG_DST, dst_},   {DNNL_ARG_SCALE, scale_},
             {DNNL_ARG_SHIFT, shift_}, {DNNL_ARG_MEAN, mean_}, {DNNL_ARG_VARIANCE, var_}};
  }

  std::string desc_;
  float epsilon_;
  ShapeKey key_;
  dnnl::batch_normalization_forward bn_;
  memory src_, dst_, scale_, shift_, mean_, var_;
  std::unordered_map<int, memory> args_;
};

GEC_REGISTER_KERNEL("", "BatchNormalization",
                    [](const ir::Node& n, const std::vector<DType>& dts) -> std::unique_ptr<Kernel> {
                      for (DType d : dts) require_f32(n, d);
                      if (n.get_int("training_mode", 0) != 0)
                        fail(ErrorCode::kUnsupported, n.describe() + ": training_mode=1 is not supported");
                      return std::make_unique<BatchNormKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
