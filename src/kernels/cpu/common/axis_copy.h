// Copying runs of elements between dense row-major tensors along one axis:
// the slicing and stacking that control flow (Loop/Scan outputs) and the
// sequence ops (SplitToSequence, ConcatFromSequence) share. String tensors
// are copied by value.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "gec/tensor.h"

namespace gec::kernels::cpu {

/// Copies n elements from src[src_at..] to dst[dst_at..] (flat indices).
inline void copy_elems(const TensorView& src, int64_t src_at, const TensorView& dst, int64_t dst_at, int64_t n) {
  if (n <= 0) return;
  if (src.dtype == DType::kString) {
    std::copy_n(src.as<std::string>() + src_at, n, dst.as<std::string>() + dst_at);
    return;
  }
  const size_t es = dtype_size(src.dtype);
  std::memcpy(static_cast<char*>(dst.data) + static_cast<size_t>(dst_at) * es,
              static_cast<const char*>(src.data) + static_cast<size_t>(src_at) * es, static_cast<size_t>(n) * es);
}

/// Product of s[begin..end).
inline int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

/// Both tensors seen as [outer, len, inner] around one axis (src_len and
/// dst_len their lengths along it): copies `count` positions starting at
/// src_start to dst_start, for every outer index.
inline void copy_along_axis(const TensorView& src, int64_t src_len, int64_t src_start, const TensorView& dst,
                            int64_t dst_len, int64_t dst_start, int64_t count, int64_t outer, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    copy_elems(src, (o * src_len + src_start) * inner, dst, (o * dst_len + dst_start) * inner, count * inner);
}

}  // namespace gec::kernels::cpu
