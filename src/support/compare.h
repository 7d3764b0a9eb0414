// Tensor comparison as ONNX's backend test runner does it: shapes and dtypes
// exactly, integers/bools/strings exactly, floats with
// |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN.
#pragma once

#include <string>

#include "gec/tensor.h"

namespace gec {

struct CompareResult {
  bool ok = true;
  double max_abs_error = 0;   // over all elements (floats), 0 for exact types
  int64_t mismatches = 0;
  std::string message;        // first problem, for people
};

/// min / max / mean over the elements of a numeric or bool tensor (NaNs
/// counted apart); all zero for an empty or string tensor.
struct TensorStats {
  double min = 0, max = 0, mean = 0;
  int64_t nan_count = 0;
};
TensorStats summarize(const TensorView& t);

/// Element i of any numeric dtype (incl. float16/bfloat16, bool) as double.
double element_as_double(const TensorView& t, int64_t i);

CompareResult compare_tensors(const TensorView& actual, const TensorView& expected, double rtol, double atol);

}  // namespace gec
