// Element types of tensors. The numeric codes are ONNX's TensorProto.DataType
// codes (onnx.proto, IR version 8), so a value read from a model or a .gom file
// converts with a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gec {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  // stored in memory as an array of std::string
  kBool = 9,    // one byte per element, 0 or 1
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

/// Bytes per element in memory (sizeof(std::string) for kString, 0 for kUndefined).
size_t dtype_size(DType t);

/// Lower-case name as numpy spells it ("float32", "int64", "bool", ...).
const char* dtype_name(DType t);

/// Parses a name from dtype_name(); returns kUndefined when unknown.
DType dtype_from_name(const std::string& name);

/// True for kFloat16, kBFloat16, kFloat32, kFloat64.
bool dtype_is_float(DType t);

/// True when the code is one of the enumerators above.
bool dtype_is_valid(int32_t code);

}  // namespace gec
