// Helpers of com.graphengine::ScaledDotProductAttention's operand views
// (ops/attention.cc), shared by its schema and its CPU kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::ops {

/// Attribute `name` (q_perm, v_perm or out_perm) of `n`: the identity of
/// `rank` axes when absent; else it must be a permutation of 0 .. rank-1
/// whose last entry is rank-1 (the operand's rows stay contiguous). On a
/// bad attribute returns {} and sets *why.
std::vector<int64_t> attention_view_perm(const ir::Node& n, const char* name, size_t rank, std::string* why);
/// The same check on the attribute's value (`attr` null: absent).
std::vector<int64_t> attention_view_perm(const std::vector<int64_t>* attr, const char* name, size_t rank,
                                         std::string* why);

/// s permuted: r[i] = s[perm[i]] (ONNX Transpose's output shape).
Shape permute_shape(const Shape& s, const std::vector<int64_t>& perm);

}  // namespace gec::ops
