// compare_tensors(): see compare.h.
#include "support/compare.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

namespace gec {
namespace {

uint16_t load16(const void* p, int64_t i) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + 2 * i, 2);
  return v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {  // subnormal
      float f = std::ldexp(static_cast<float>(man), -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

double element_as_double(const TensorView& t, int64_t i) {
  switch (t.dtype) {
    case DType::kInt8: return t.as<int8_t>()[i];
    case DType::kInt16: return t.as<int16_t>()[i];
    case DType::kInt32: return t.as<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.as<int64_t>()[i]);
    case DType::kUInt8: case DType::kBool: return t.as<uint8_t>()[i];
    case DType::kUInt16: return t.as<uint16_t>()[i];
    case DType::kUInt32: return t.as<uint32_t>()[i];
    case DType::kUInt64: return static_cast<double>(t.as<uint64_t>()[i]);
    case DType::kFloat32: return t.as<float>()[i];
    case DType::kFloat64: return t.as<double>()[i];
    case DType::kFloat16: return half_to_float(load16(t.data, i));
    case DType::kBFloat16: {
      uint32_t bits = static_cast<uint32_t>(load16(t.data, i)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return 0;
  }
}

TensorStats summarize(const TensorView& t) {
  TensorStats s;
  if (t.dtype == DType::kString || t.numel() == 0) return s;
  bool first = true;
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = element_as_double(t, i);
    if (std::isnan(v)) { ++s.nan_count; continue; }
    if (first || v < s.min) s.min = v;
    if (first || v > s.max) s.max = v;
    first = false;
    sum += v;
    ++n;
  }
  s.mean = n ? sum / n : 0;
  return s;
}

CompareResult compare_tensors(const TensorView& actual, const TensorView& expected, double rtol, double atol) {
  CompareResult r;
  std::ostringstream m;
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    r.ok = false;
    m << "expected " << dtype_name(expected.dtype) << shape_str(expected.shape) << ", got "
      << dtype_name(actual.dtype) << shape_str(actual.shape);
    r.message = m.str();
    return r;
  }
  const int64_t n = expected.numel();
  if (dtype_is_float(expected.dtype)) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = element_as_double(actual, i), e = element_as_double(expected, i);
      if (std::isnan(e) && std::isnan(a)) continue;
      const double err = std::fabs(a - e);
      const bool bad = std::isnan(a) != std::isnan(e) || std::isinf(a) != std::isinf(e) ||
                       (std::isinf(e) ? a != e : err > atol + rtol * std::fabs(e));
      if (!std::isnan(err) && !std::isinf(err)) r.max_abs_error = std::max(r.max_abs_error, err);
      if (bad) {
        if (r.mismatches++ == 0) m << "first mismatch at flat index " << i << ": got " << a << ", expected " << e;
      }
    }
  } else if (expected.dtype == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (actual.as<std::string>()[i] != expected.as<std::string>()[i] && r.mismatches++ == 0)
        m << "first mismatch at flat index " << i << ": got \"" << actual.as<std::string>()[i] << "\", expected \""
          << expected.as<std::string>()[i] << "\"";
  } else {
    const size_t es = dtype_size(expected.dtype);
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(static_cast<const uint8_t*>(actual.data) + i * es,
                      static_cast<const uint8_t*>(expected.data) + i * es, es) != 0 &&
          r.mismatches++ == 0)
        m << "first mismatch at flat index " << i;
  }
  if (r.mismatches) {
    r.ok = false;
    m << " (" << r.mismatches << " of " << n << " elements differ, max abs error " << r.max_abs_error << ")";
    r.message = m.str();
  }
  return r;
}

}  // namespace gec
