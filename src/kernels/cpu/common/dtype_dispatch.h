// Calls a generic lambda with a value of the C++ type matching a DType, so a
// kernel body is written once as a template. Unsupported dtypes throw
// gec::Error(kUnsupported) with `what` (e.g. the node description).
#pragma once

#include <cstdint>
#include <string>

#include "gec/error.h"
#include "gec/tensor.h"

namespace gec::kernels::cpu {

/// Every arithmetic dtype: float32/64, int8..int64, uint8..uint64.
template <typename F>
decltype(auto) dispatch_arith(DType t, const std::string& what, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kUInt64: return f(uint64_t{});
    default:
      fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not supported");
  }
}

/// The integer dtypes int8..int64, uint8..uint64 (bitwise ops); other
/// dtypes: kUnsupported "<what>: dtype X is not an integer type".
template <typename F>
decltype(auto) dispatch_integer(DType t, const std::string& what, F&& f) {
  switch (t) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return dispatch_arith(t, what, std::forward<F>(f));
    default:
      fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not an integer type");
  }
}

/// float32 / float64 only.
template <typename F>
decltype(auto) dispatch_float(DType t, const std::string& what, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    default:
      fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not supported");
  }
}

/// Any dtype by element size, for ops that only move bytes (Transpose,
/// Gather, Concat, ...): calls f(uintN_t{}) with N = 8/16/32/64 bits, or
/// f(std::string{}) for strings. 16-byte types are not supported.
template <typename F>
decltype(auto) dispatch_by_size(DType t, const std::string& what, F&& f) {
  if (t == DType::kString) return f(std::string{});
  switch (dtype_size(t)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default:
      fail(ErrorCode::kUnsupported, what + ": dtype " + dtype_name(t) + " is not supported");
  }
}

}  // namespace gec::kernels::cpu
