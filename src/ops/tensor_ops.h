// Shape arithmetic shared by the tensor-manipulation ops' infer functions
// (ops/tensor_ops*.cc) and their CPU kernels (kernels/cpu/*/): one place
// decides what Reshape's 0 and -1 mean, how Slice clamps, how Split divides,
// so compile-time shapes and run-time kernels cannot disagree.
//
// Every helper reports a bad input by calling `err(message)`, which must
// throw (infer functions pass ctx.error, kernels a gec::fail wrapper).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gec/tensor.h"

namespace gec::ops {

/// Throws with the given message; must not return.
using ErrFn = std::function<void(const std::string&)>;

/// Output shape of ONNX Reshape-14: `spec` entries are dims, 0 copies the
/// input dim at the same index (unless allowzero), one -1 is inferred.
/// Errors: two -1s, -1 with allowzero and a 0, dims < -1, 0 past the input
/// rank, element count mismatch, -1 that cannot be inferred.
Shape reshape_output_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero,
                           const ErrFn& err);

/// One axis of a Slice after normalization: first input index, step, and
/// number of output elements.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

/// ONNX Slice-13 for every axis of `in` (axes not named keep start 0, step 1,
/// the whole dim). Negative starts/ends add the dim; then starts clamp to
/// [0, dim] (step > 0) or [0, dim-1] (step < 0) and ends to [0, dim] or
/// [-1, dim-1]. `axes` empty means 0..n-1, `steps` empty means all 1.
/// Errors: length mismatch, axis out of range or repeated, step 0.
std::vector<SliceAxis> compute_slice(const Shape& in, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                     std::vector<int64_t> steps, const ErrFn& err);

/// Sizes of the outputs of ONNX Split-13 along a dim of size `dim`: `split`
/// when given (must have n entries summing to dim), else n equal parts; when
/// dim is not divisible by n the last part is smaller (the Split-18 rule).
std::vector<int64_t> split_sizes(int64_t dim, const std::vector<int64_t>* split, size_t n,
                                 const ErrFn& err);

/// ONNX Pad-18 pads for every axis as [begin_0..begin_r-1, end_0..end_r-1]
/// from `pads` given for `axes` (empty = all axes). Errors: wrong length,
/// bad or repeated axis.
std::vector<int64_t> full_pads(int64_t rank, const std::vector<int64_t>& pads,
                               const std::vector<int64_t>& axes, const ErrFn& err);

/// Normalizes `axis` against `rank` into [0, rank); error when out of range.
int64_t normalize_axis_or(int64_t axis, int64_t rank, const ErrFn& err);

/// Transpose-13's permutation of a rank-`rank` input: `perm` with negative
/// entries counted from the end (perm[i] + rank), or the reversed dims when
/// the node has no perm attribute (`has_perm` false). Validating it (a
/// permutation of 0..rank-1 of length rank) is infer_transpose's.
std::vector<int64_t> transpose_perm(const std::vector<int64_t>& perm, bool has_perm, int64_t rank);

/// Numpy multidirectional broadcast of two shapes (Expand's rule).
Shape broadcast_two(const Shape& a, const Shape& b, const ErrFn& err);

/// Converts a numeric tensor's element `i` to int64 (any integer or float
/// dtype, bool); used for OneHot depth and similar scalar inputs.
int64_t element_as_int64(const TensorView& t, int64_t i, const ErrFn& err);

}  // namespace gec::ops
