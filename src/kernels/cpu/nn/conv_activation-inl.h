// The activations our convolution loops apply as they store (direct_conv_simd.h's
// Activation: Relu and the piecewise-linear ones, ONNX's formulas, NaN passed
// through as elementwise_simd.cc's loops do), as Highway vector code shared
// by the direct loops (direct_conv_simd.cc) and the Winograd output
// transform (winograd_simd.cc). A Highway "-inl" header: included once per
// SIMD target from inside those files' foreach_target passes.
#if defined(GEC_KERNELS_CPU_NN_CONV_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GEC_KERNELS_CPU_NN_CONV_ACTIVATION_INL_H_
#undef GEC_KERNELS_CPU_NN_CONV_ACTIVATION_INL_H_
#else
#define GEC_KERNELS_CPU_NN_CONV_ACTIVATION_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/cpu/nn/direct_conv_simd.h"

HWY_BEFORE_NAMESPACE();
namespace gec::kernels::cpu::direct_conv_simd {
namespace HWY_NAMESPACE {

/// `act` with parameters alpha / beta (Clip: min / max; LeakyRelu: alpha;
/// HardSigmoid, HardSwish: alpha x + beta), its constants set once.
template <class D>
class VecActivation {
 public:
  using V = hwy::HWY_NAMESPACE::Vec<D>;
  VecActivation(D d, Activation act, float alpha, float beta)
      : act_(act),
        zero_(hwy::HWY_NAMESPACE::Zero(d)),
        one_(hwy::HWY_NAMESPACE::Set(d, 1.f)),
        alpha_(hwy::HWY_NAMESPACE::Set(d, alpha)),
        beta_(hwy::HWY_NAMESPACE::Set(d, beta)) {}

  HWY_INLINE V operator()(V v) const {
    namespace hn = hwy::HWY_NAMESPACE;
    switch (act_) {
      case Activation::kNone: return v;
      case Activation::kRelu: return hn::IfThenElse(hn::Lt(v, zero_), zero_, v);
      case Activation::kClip: {
        const V c = hn::IfThenElse(hn::Lt(v, alpha_), alpha_, v);
        return hn::IfThenElse(hn::Gt(c, beta_), beta_, c);
      }
      case Activation::kLeakyRelu: return hn::IfThenElse(hn::Lt(v, zero_), hn::Mul(alpha_, v), v);
      case Activation::kHardSigmoid: return Clamp01(hn::Add(hn::Mul(alpha_, v), beta_));
      case Activation::kHardSwish: return hn::Mul(v, Clamp01(hn::Add(hn::Mul(alpha_, v), beta_)));
    }
    return v;
  }

 private:
  HWY_INLINE V Clamp01(V u) const {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElse(hn::Gt(u, one_), one_, hn::IfThenElse(hn::Lt(u, zero_), zero_, u));
  }

  Activation act_;
  V zero_, one_, alpha_, beta_;
};

}  // namespace HWY_NAMESPACE
}  // namespace gec::kernels::cpu::direct_conv_simd
HWY_AFTER_NAMESPACE();

#endif  // GEC_KERNELS_CPU_NN_CONV_ACTIVATION_INL_H_ per target
