// Broadcasting elementwise ops on activations held in a non-plain layout
// (ops/layout.h): the output [N,C,H,W] and its full-shaped operands are read
// as the plain row-major tensor their bytes form, and a per-channel operand
// as the matching vector, so the ordinary broadcast plan (broadcast.h) runs
// unchanged. The layout assignment (schedule/layout_assignment.cc) admits
// exactly these operands.
#pragma once

#include <string>

#include "gec/error.h"
#include "gec/tensor.h"
#include "ops/layout.h"

namespace gec::kernels::cpu {

/// The shape `s` (an operand of a broadcast whose output `out` is 4-D
/// [N,C,H,W] in layout `l`) over its bytes, as a plain row-major shape:
///   nhwc     out and s == out: [N,H,W,C]; s = [n,c,1,1] (n in {1,N}, c in
///            {1,C}; shorter shapes count as leading 1s): [n,1,1,c];
///   nChw16c  out and s == out: [N,C/16,H,W,16]; [n,C,1,1]: [n,C/16,1,1,16];
///            [n,1,1,1]: [n,1,1,1,1].
/// For kPlain `s` itself. Errors: kInvalidModel naming `who` for an output
/// that is not 4-D, for nChw16c an output with C % 16 != 0, or an operand
/// that is neither full-shaped nor per channel (a spatial broadcast has no
/// such view).
inline Shape layout_broadcast_shape(const Shape& s, const Shape& out, ops::Layout l, const std::string& who) {
  if (l == ops::Layout::kPlain) return s;
  if (out.size() != 4 || s.size() > 4)
    fail(ErrorCode::kInvalidModel, who + ": a " + ops::layout_name(l) + " broadcast needs a 4-D output, got " +
                                       shape_str(out));
  const int64_t N = out[0], C = out[1], H = out[2], W = out[3];
  Shape p;
  const bool full = s == out;
  if (full) p = s;
  else if (!ops::per_channel_operand(s, out, &p))
    fail(ErrorCode::kInvalidModel, who + ": operand " + shape_str(s) + " of a " + ops::layout_name(l) +
                                       " output " + shape_str(out) + " is neither full-shaped nor per channel");
  if (l == ops::Layout::kNhwc) return full ? Shape{N, H, W, C} : Shape{p[0], 1, 1, p[1]};
  if (C % ops::kBlockedChannels != 0)
    fail(ErrorCode::kInvalidModel, who + ": nChw16c output " + shape_str(out) + " (channels not divisible by 16)");
  const int64_t g = C / ops::kBlockedChannels;
  if (full) return Shape{N, g, H, W, ops::kBlockedChannels};
  return p[1] == 1 ? Shape{p[0], 1, 1, 1, 1} : Shape{p[0], g, 1, 1, ops::kBlockedChannels};
}

}  // namespace gec::kernels::cpu
