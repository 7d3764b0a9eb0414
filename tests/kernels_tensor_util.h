// Small helpers for the tensor-manipulation kernel tests: string tensors,
// int64 shorthands and a checker for error codes.
#pragma once

#include <string>
#include <vector>

#include "test_util.h"

namespace gec::testing {

inline Tensor make_str(const Shape& shape, const std::vector<std::string>& v) {
  Tensor t(DType::kString, shape);
  EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel());
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.as<std::string>()[i] = v[i];
  return t;
}

inline std::vector<std::string> strs(const Tensor& t) {
  return std::vector<std::string>(t.as<std::string>(), t.as<std::string>() + t.numel());
}

/// 1-D int64 tensor.
inline Tensor i64s(const std::vector<int64_t>& v) { return make<int64_t>({static_cast<int64_t>(v.size())}, v); }
/// int64 scalar.
inline Tensor i64(int64_t v) { return make<int64_t>({}, {v}); }

/// Float tensor 0, 1, 2, ... of the given shape.
inline Tensor iota_f(const Shape& s) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = static_cast<float>(i);
  return t;
}

/// Runs the op and returns the gec::Error code it throws (fails if none).
inline ErrorCode error_code_of(const std::string& op, const std::vector<Tensor>& in,
                               std::vector<ir::Attribute> attrs = {}, size_t nout = 1) {
  try {
    run_op(op, in, std::move(attrs), nout);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << op << ": expected an error";
  return ErrorCode::kInternal;
}

using ir::Attribute;

}  // namespace gec::testing
