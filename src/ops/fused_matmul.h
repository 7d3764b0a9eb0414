// com.graphengine::FusedMatMul(A, B [, bias]) {activation}: act(MatMul(A, B)
// + bias), B [K, N], bias [N], float32 (schema in ops/nn.cc; made by the
// pass matmul_epilogue_fusion and matmul_merge; run by oneDNN's matmul with a
// bias argument and an eltwise post-op, kernels/cpu/nn/matmul.cc). The
// activations it takes, in one table for the schema, the pass and the kernel.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace gec::ops {

/// The `activation` attribute's values: "" (none), Relu, Tanh, Sigmoid
/// (ONNX opset 17), Gelu and GeluTanh (ONNX Gelu-20, approximate "none" /
/// "tanh"), Swish (x * sigmoid(x): com.graphengine::Swish with alpha 1,
/// ONNX Swish-24).
enum class MatMulActivation { kNone, kRelu, kTanh, kSigmoid, kGelu, kGeluTanh, kSwish };

/// The activation an attribute value names; nullopt for an unknown one.
std::optional<MatMulActivation> matmul_activation(const std::string& name);
const char* matmul_activation_name(MatMulActivation a);
/// The activation a node computes when FusedMatMul can take it as its
/// epilogue (Relu, Tanh, Sigmoid, com.graphengine::Gelu, com.graphengine::Swish
/// with alpha 1); nullopt otherwise.
std::optional<MatMulActivation> matmul_activation_of(const ir::Node& n);

}  // namespace gec::ops
