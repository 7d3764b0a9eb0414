// Einsum equation parsing (ONNX Einsum-12, numpy einsum conventions), shared
// by the schema's infer function (ops/einsum.cc) and the CPU kernel
// (kernels/cpu/math/einsum.cc) so that both read an equation the same way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gec/tensor.h"

namespace gec::ops {

/// An equation bound to input shapes. Labels are small ints: letters a-z,
/// A-Z are 0..51; the dims an ellipsis stands for are 52.. (aligned from the
/// right over all inputs, numpy broadcasting).
struct EinsumPlan {
  /// Per input: the label of each of its dims (repeated labels = diagonal).
  std::vector<std::vector<int>> input_labels;
  /// Labels of the output dims, in order.
  std::vector<int> output_labels;
  /// Labels summed over (in no output dim).
  std::vector<int> sum_labels;
  /// Size of every label (index = label); -1 for unused labels.
  std::vector<int64_t> label_size;
  Shape output_shape;
};

/// Parses `equation` for inputs of the given shapes. Implicit form (no
/// "->"): the output holds the ellipsis dims, then the letters that occur
/// once, in alphabetical (ASCII) order. Spaces are ignored. Errors (through
/// `err`, which must throw): bad characters, a term's letter count not
/// matching its input's rank, a label with two sizes other than 1 and n, an
/// output letter not in any input or repeated.
EinsumPlan plan_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                       const std::function<void(const std::string&)>& err);

}  // namespace gec::ops
