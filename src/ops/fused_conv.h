// Our fused convolution op, com.graphengine::FusedConv, written by the pass
// conv_activation_fusion (src/passes/) and run by the oneDNN Conv kernel with
// post-ops (src/kernels/cpu/nn/conv.cc):
//
//   Y = act(Conv(X, W, B) + Z)        inputs X, W, B?, Z?
//
// Attributes: every ONNX Conv-11 attribute (same meaning), plus
//   activation        string, the ONNX op name of the activation ("" = none)
//   activation_alpha  float, first parameter (see FusedActivation)
//   activation_beta   float, second parameter
// How the CPU kernel applies the activation is part of its variant
// (kernels::KernelConfig::variant): "" (default: the faster way for the
// oneDNN implementation chosen), "post_op" (oneDNN eltwise post-op),
// "kernel" (the ai.onnx kernel, in place after); "winograd", "direct" and
// "nhwc" (chosen at compile time) run oneDNN's Winograd convolution, our own
// loops, or oneDNN's nhwc convolution between reorders; tokens join with '+'.
// Z (optional input 3) has Y's exact shape and dtype: no broadcasting.
// Float32 only. This header names the activations all three places accept.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "ops/domain.h"

namespace gec::ops {

inline constexpr const char* kFusedConvOp = "FusedConv";

/// True for a com.graphengine::FusedConv node.
inline bool is_fused_conv(const ir::Node* n) {
  return n && n->domain == kGecDomain && n->op_type == kFusedConvOp;
}

/// One activation with its parameters resolved (ONNX defaults applied):
///   Relu                      max(x, 0)
///   LeakyRelu   alpha         x < 0 ? alpha*x : x                   (LeakyRelu-16)
///   Clip        alpha, beta   min(max(x, alpha), beta), alpha <= beta (Clip-13; +-inf when absent)
///   Sigmoid                   1 / (1 + e^-x)
///   Tanh                      tanh(x)
///   HardSigmoid alpha, beta   max(0, min(1, alpha*x + beta))        (HardSigmoid-6)
///   HardSwish                 x * max(0, min(1, x/6 + 1/2))         (HardSwish-14)
///   Elu         alpha         x < 0 ? alpha*(e^x - 1) : x           (Elu-6)
///   Selu        alpha, beta   beta * (x <= 0 ? alpha*(e^x - 1) : x) (Selu-6; beta = gamma)
///   Softplus                  ln(1 + e^x)
///   Mish                      x * tanh(ln(1 + e^x))                 (Mish-18)
///   Swish       alpha         x * sigmoid(alpha*x)                  (com.graphengine::Swish, ONNX Swish-24)
struct FusedActivation {
  std::string op;  // "" = none
  float alpha = 0.f, beta = 0.f;
};

/// True for the ops whose registration declares the conv_epilogue trait:
/// ai.onnx ones (ops/elementwise.cc) and com.graphengine::Swish (ops/swish.cc);
/// activation_of() reads their parameters.
bool is_fusable_activation(const std::string& op);

/// The domain of an activation's op: "" (ai.onnx) when ai.onnx registers
/// it, else kGecDomain when ours does (Swish).
const char* activation_domain(const std::string& op);

/// The activation an ai.onnx (or com.graphengine::Swish) node computes, when it is one of the list above
/// and its parameters are attributes or constant inputs (Clip's min/max);
/// nullopt otherwise (also for Clip with min > max or a NaN bound, where the
/// oneDNN clip would differ from ONNX).
std::optional<FusedActivation> activation_of(const ir::Node& n);

/// The activation attributes of a FusedConv node; throws
/// gec::Error(kInvalidModel) naming the node for an unknown activation.
FusedActivation read_fused_activation(const ir::Node& n);

/// Writes `a` as the activation attributes of `n`.
void write_fused_activation(ir::Node& n, const FusedActivation& a);

/// Adds to `g` the node (of activation_domain) that computes `a` on `x` (the inverse of
/// activation_of; Clip gets float32 constant min/max inputs), output `out`.
ir::Node* add_activation_node(ir::Graph& g, const FusedActivation& a, ir::Value* x, const std::string& out);

/// The activation of one value, in float (the semantics above; for kernels'
/// degenerate paths and tests).
float apply_activation(const FusedActivation& a, float x);

}  // namespace gec::ops
