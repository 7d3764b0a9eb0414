// oneDNN memory descriptors for activations that the layout assignment
// (schedule/layout_assignment.cc) may hold in a non-plain layout
// (ops/layout.h): plain row-major, nChw16c / nCw16c, or nhwc / nwc.
#pragma once

#include "kernels/cpu/common/onednn_common.h"
#include "ops/layout.h"

namespace gec::kernels::cpu {

/// f32 descriptor of `s` in layout `l`: plain row-major; nChw16c (3-D
/// nCw16c); nhwc (3-D nwc). Errors: kInvalidModel naming `who` when a
/// non-plain layout is asked for a shape where it would not have the plain
/// bytes (rank not 3/4, or for nChw16c s[1] % 16 != 0: oneDNN would write a
/// channel-padded buffer past the value's bytes).
inline dnnl::memory::desc activation_md(const Shape& s, ops::Layout l, const std::string& who) {
  using tag = dnnl::memory::format_tag;
  if (l == ops::Layout::kPlain) return plain_md(s);
  if ((s.size() != 3 && s.size() != 4) || !ops::layout_fits_channels(l, s[1]))
    fail(ErrorCode::kInvalidModel, who + ": layout " + ops::layout_name(l) + " for " + shape_str(s) +
                                       " (needs rank 3 or 4" +
                                       (l == ops::Layout::kNChw16c ? " and channels divisible by 16)" : ")"));
  const bool r3 = s.size() == 3;
  const tag t = l == ops::Layout::kNChw16c ? (r3 ? tag::nCw16c : tag::nChw16c) : (r3 ? tag::nwc : tag::nhwc);
  return dnnl::memory::desc(to_dims(s), dnnl::memory::data_type::f32, t);
}

}  // namespace gec::kernels::cpu
