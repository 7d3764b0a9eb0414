// com.graphengine::Reorder (ops/layout.h) on CPU: a oneDNN reorder between
// two of the layouts nchw, nChw16c (C % 16 == 0) and nhwc of a float32
// [N,C,H,W], the primitive built once per input shape.
#include "kernels/cpu/common/layout_md.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/layout.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

/// The layout named by attribute `attr` of `n`. Errors: kInvalidModel for
/// another name (shape inference rejects it first in a compiled graph).
ops::Layout layout_attr(const ir::Node& n, const char* attr) {
  ops::Layout l = ops::Layout::kPlain;
  if (!ops::layout_from_name(n.get_string(attr, ""), &l))
    fail(ErrorCode::kInvalidModel, n.describe() + ": attribute '" + attr + "' names no layout");
  return l;
}

class ReorderKernel final : public Kernel {
 public:
  explicit ReorderKernel(const ir::Node& n)
      : desc_(n.describe()), from_(layout_attr(n, "from")), to_(layout_attr(n, "to")) {}

  void reshape(const KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    require_f32(desc_, x.dtype);
    if (x.shape.size() != 4 || !ops::layout_fits_channels(from_, x.shape[1]) ||
        !ops::layout_fits_channels(to_, x.shape[1]))
      fail(ErrorCode::kInvalidArgument, desc_ + ": needs [N,C,H,W] (with C % 16 == 0 for nChw16c), got " +
                                            shape_str(x.shape));
    if (ctx.out(0).numel() > 0) build(x.shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    bind(src_, x.data);
    bind(dst_, y.data);
    std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, src_}, {DNNL_ARG_TO, dst_}};
    scratch_.bind(args, ctx.scratch);
    reorder_.execute(cpu_stream(), args);
    cpu_stream().wait();
  }

  std::string impl_name() const override { return "onednn.reorder"; }

 private:
  void build(const Shape& s) {
    const memory::desc from = activation_md(s, from_, desc_), to = activation_md(s, to_, desc_);
    try {
      src_ = unbound_memory(from);
      dst_ = unbound_memory(to);
      const dnnl::reorder::primitive_desc pd(src_, dst_, Scratchpad::attr());
      reorder_ = dnnl::reorder(pd);
      scratch_.set(pd.scratchpad_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a reorder for " + shape_str(s), e);
    }
  }

  std::string desc_;
  ops::Layout from_, to_;
  memory src_, dst_;
  dnnl::reorder reorder_;
  Scratchpad scratch_;
};

GEC_REGISTER_KERNEL(ops::kGecDomain, ops::kReorderOp,
                    [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
                      for (DType d : dts) require_f32(n, d);
                      return std::make_unique<ReorderKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
