// CPU kernel of Dropout-13 (schema in ops/dropout.cc), following the ONNX
// operator text and its reference implementation:
//   training_mode false (or absent), or ratio == 0:  output = data, mask = true
//   otherwise: mask[i] = (u[i] >= ratio) with u ~ U[0, 1), i.e. a kept
//              element has probability 1 - ratio, and
//              output = data * mask / (1 - ratio).
// ratio (default 0.5) must lie in [0, 1). training_mode is read at run time,
// since ONNX lets it be a graph input. The random stream is one
// std::mt19937_64 per kernel, seeded from the `seed` attribute when given,
// else from std::random_device: masks can never match another engine's.
#include <cmath>
#include <cstring>
#include <random>

#include "kernels/cpu/elementwise/elementwise_half.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

// One element of a float tensor of any float dtype, as a double.
double read_float(const TensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::kFloat32: return v.as<float>()[i];
    case DType::kFloat64: return v.as<double>()[i];
    case DType::kFloat16: return half_to_float(v.as<uint16_t>()[i]);
    case DType::kBFloat16: return bf16_to_float(v.as<uint16_t>()[i]);
    default: fail(ErrorCode::kUnsupported, std::string("Dropout: dtype ") + dtype_name(v.dtype) + " is not supported");
  }
}

// out[i] = mask[i] ? in[i] * scale : 0 for the float dtypes.
void apply_mask(const TensorView& in, const TensorView& out, const uint8_t* mask, double scale) {
  const int64_t n = in.numel();
  switch (in.dtype) {
    case DType::kFloat32: {
      const float s = static_cast<float>(scale);
      for (int64_t i = 0; i < n; ++i) out.as<float>()[i] = mask[i] ? in.as<float>()[i] * s : 0.f;
      return;
    }
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out.as<double>()[i] = mask[i] ? in.as<double>()[i] * scale : 0.0;
      return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const bool bf = in.dtype == DType::kBFloat16;
      for (int64_t i = 0; i < n; ++i) {
        const float x = mask[i] ? static_cast<float>(read_float(in, i) * scale) : 0.f;
        out.as<uint16_t>()[i] = bf ? float_to_bf16(x) : float_to_half(x);
      }
      return;
    }
    default: fail(ErrorCode::kUnsupported, std::string("Dropout: dtype ") + dtype_name(in.dtype) + " is not supported");
  }
}

std::mt19937_64 make_engine(const ir::Node& n) {
  const ir::Attribute* s = n.find_attr("seed");
  if (!s) return std::mt19937_64(std::random_device{}());
  // Dropout's seed is an int; accept a float too, as the Random* ops use.
  const int64_t seed = s->kind == ir::Attribute::Kind::kFloat ? std::llround(s->f) : s->i;
  return std::mt19937_64(static_cast<uint64_t>(seed));
}

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const ir::Node& n) : node_(n), engine_(make_engine(n)) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& y = ctx.out(0);
    TensorView* mask_out = ctx.outputs.size() > 1 ? ctx.outputs[1] : nullptr;
    const bool training = ctx.has_input(2) && ctx.in(2).numel() > 0 && ctx.in(2).as<uint8_t>()[0] != 0;
    const double ratio = ctx.has_input(1) ? read_float(ctx.in(1), 0) : 0.5;
    if (training && !(ratio >= 0.0 && ratio < 1.0))
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": ratio " + std::to_string(ratio) + " is not in [0, 1)");
    if (!training || ratio == 0.0) {
      if (y.data != x.data) std::memcpy(y.data, x.data, x.bytes());
      if (mask_out) std::memset(mask_out->data, 1, static_cast<size_t>(mask_out->numel()));
      return;
    }
    // The mask goes to the mask output when there is one, else to scratch.
    uint8_t* mask = mask_out ? mask_out->as<uint8_t>() : scratch(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) mask[i] = unit_(engine_) >= ratio ? 1 : 0;
    apply_mask(x, y, mask, 1.0 / (1.0 - ratio));
  }

 private:
  uint8_t* scratch(int64_t n) {
    if (static_cast<int64_t>(scratch_.size()) < n) scratch_.resize(static_cast<size_t>(n));
    return scratch_.data();
  }

  const ir::Node& node_;
  std::mt19937_64 engine_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::vector<uint8_t> scratch_;
};

GEC_REGISTER_KERNEL("", "Dropout", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<DropoutKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
