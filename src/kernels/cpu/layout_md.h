// oneDNN memory descriptors for activations that the pass layout_propagation
// may hold blocked (ops/layout.h): plain row-major, or nChw16c / nCw16c.
#pragma once

#include "kernels/cpu/onednn_common.h"

namespace gec::kernels::cpu {

/// f32 descriptor of `s`: plain row-major, or when `blocked` the 16-channel
/// blocked layout of its rank (3-D nCw16c, 4-D nChw16c; s[1] % 16 == 0).
inline dnnl::memory::desc activation_md(const Shape& s, bool blocked) {
  using tag = dnnl::memory::format_tag;
  if (!blocked) return plain_md(s);
  return dnnl::memory::desc(to_dims(s), dnnl::memory::data_type::f32, s.size() == 3 ? tag::nCw16c : tag::nChw16c);
}

}  // namespace gec::kernels::cpu
