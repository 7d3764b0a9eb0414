// Folding a per-output-channel affine map y = x * a[c] + b[c] into the
// weights of the node that produced x (Conv, Gemm). Shared by the fusion
// passes conv_bn_folding, conv_scale_folding and gemm_bn_folding; each pass
// checks its own guards before calling these.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace gec::passes {

/// Conv whose weights (and bias, if any) are float32 constants, whose output
/// is float32 and read by exactly one node of `g` and not a graph output: the
/// guard every Conv folding shares. Returns the output channel count M.
std::optional<int64_t> foldable_conv(const ir::Graph& g, const ir::Node* conv);

/// Rewrites `conv` (foldable_conv) so that it computes conv(x)*a[m] + b[m]:
/// W'[m,...] = W[m,...]*a[m], B'[m] = B[m]*a[m] + b[m] (B = 0 when absent).
/// Each output channel m is scaled alone, so grouped and depthwise convs stay
/// correct: a group only ever reads its own weights. New constants are made
/// (the old weights may be shared).
void fold_affine_into_conv(ir::Graph& g, ir::Node* conv, const std::vector<float>& a,
                           const std::vector<float>& b);

/// BatchNormalization (inference form, ONNX BatchNormalization-15) with
/// float32 constant scale, B, mean, var of `channels` elements, as the affine
/// map a = scale / sqrt(var + epsilon), b = B - mean * a. nullopt otherwise.
std::optional<std::pair<std::vector<float>, std::vector<float>>> bn_as_affine(const ir::Node* bn,
                                                                             int64_t channels);

/// Constant `c`, an operand of a binary op whose other operand has rank
/// `out_rank` and M = `m` channels on axis 1 (NCHW...), as one float per
/// channel: a one-element constant is repeated, a [.., M, 1, ..] one read
/// along M. nullopt when c is not a float32 constant, broadcasts along any
/// other axis, or would grow the output's rank.
std::optional<std::vector<float>> per_channel(const ir::Value* c, int64_t m, size_t out_rank);

}  // namespace gec::passes
