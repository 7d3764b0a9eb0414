// oneDNN memory descriptors for activations that the layout assignment
// (schedule/layout_assignment.cc) may hold blocked (ops/layout.h): plain
// row-major, or nChw16c / nCw16c.
#pragma once

#include "kernels/cpu/common/onednn_common.h"

namespace gec::kernels::cpu {

/// f32 descriptor of `s`: plain row-major, or when `blocked` the 16-channel
/// blocked layout of its rank (3-D nCw16c, 4-D nChw16c). Errors:
/// kInvalidModel naming `who` when a blocked layout is asked for a shape
/// where it would not have the plain bytes (rank not 3/4, or s[1] % 16 != 0:
/// oneDNN would write a channel-padded buffer past the value's bytes).
inline dnnl::memory::desc activation_md(const Shape& s, bool blocked, const std::string& who) {
  using tag = dnnl::memory::format_tag;
  if (!blocked) return plain_md(s);
  if ((s.size() != 3 && s.size() != 4) || s[1] % 16 != 0)
    fail(ErrorCode::kInvalidModel, who + ": a 16-channel blocked layout for " + shape_str(s) +
                                       " (needs rank 3 or 4 and channels divisible by 16)");
  return dnnl::memory::desc(to_dims(s), dnnl::memory::data_type::f32, s.size() == 3 ? tag::nCw16c : tag::nChw16c);
}

}  // namespace gec::kernels::cpu
