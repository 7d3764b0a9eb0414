// Broadcasting elementwise ops on activations held in a non-plain layout
// (ops/layout.h): the output [N,C,H,W] and its full-shaped operands are read
// as the plain row-major tensor their bytes form, and a per-channel operand
// as the matching vector, so the ordinary broadcast plan (broadcast.h) runs
// unchanged. The layout assignment (schedule/layout_assignment.cc) admits
// exactly these operands.
#pragma once

#include <cstring>
#include <string>
#include <vector>

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

/// Pixels per row for a non-plain broadcast with per-channel operands: in
/// nChw16c the bytes of a per-channel operand repeat every 16 floats, in
/// nhwc every C, so the broadcast plan's rows are that short (16 elements)
/// and the per-row overhead dominates (DenseNet's BatchNormalization as
/// Mul + Add in nChw16c ran at a tenth of the plain speed). Rows of K
/// pixels at a time, the per-channel operand tiled K times
/// (tile_channels), make rows of K*16 (K*C) elements. Returns the largest
/// K dividing H*W with K * (16 or C) <= 512, or 1 for kPlain, rows already
/// that long, or an output that is not 4-D.
inline int64_t channel_tile(const Shape& out, ops::Layout l) {
  if (l == ops::Layout::kPlain || out.size() != 4) return 1;
  const int64_t inner = l == ops::Layout::kNhwc ? out[1] : ops::kBlockedChannels;
  const int64_t pixels = out[2] * out[3];
  int64_t k = 1;
  for (int64_t d = 1; d <= pixels && d * inner <= 512; ++d)
    if (pixels % d == 0) k = d;
  return k;
}

/// layout_broadcast_shape with K = channel_tile(out, l) pixels per row:
///   nChw16c  out and full s: [N, C/16, H*W/K, K*16]; [n,C,1,1]: [n, C/16, 1, K*16]
///   nhwc     out and full s: [N, 1, H*W/K, K*C];     [n,C,1,1]: [n, 1, 1, K*C]
///   either   [n,1,1,1]: [n, 1, 1, 1]
/// A per-channel operand is then read from its tile_channels copy.
inline Shape tiled_broadcast_shape(const Shape& s, const Shape& out, ops::Layout l, int64_t k, const std::string& who) {
  const Shape bytes = layout_broadcast_shape(s, out, l, who);  // validates
  const int64_t N = out[0], C = out[1], P = out[2] * out[3];
  const int64_t g = l == ops::Layout::kNhwc ? 1 : C / ops::kBlockedChannels;
  const int64_t inner = l == ops::Layout::kNhwc ? C : ops::kBlockedChannels;
  if (s == out) return Shape{N, g, P / k, k * inner};
  if (shape_numel(bytes) == bytes[0]) return Shape{bytes[0], 1, 1, 1};  // one value per image
  return Shape{bytes[0], g, 1, k * inner};
}

/// Copies a per-channel operand ([n, C] values, `es` bytes each) into `dst`
/// as [n, G, K, L] with L = 16 (nChw16c, G = C/16) or C (nhwc, G = 1): each
/// run of L channel values repeated K times.
inline void tile_channels(const char* src, int64_t n, int64_t c, ops::Layout l, int64_t k, size_t es, char* dst) {
  const int64_t inner = l == ops::Layout::kNhwc ? c : ops::kBlockedChannels;
  const int64_t runs = n * (c / inner);
  const size_t run_bytes = static_cast<size_t>(inner) * es;
  for (int64_t r = 0; r < runs; ++r)
    for (int64_t j = 0; j < k; ++j) std::memcpy(dst + (r * k + j) * run_bytes, src + r * run_bytes, run_bytes);
}

/// The broadcast an elementwise kernel with output layout `l` runs over the
/// bytes of its operands: plan() (at reshape) gives the byte shapes, K pixels
/// per row (channel_tile) when some operand is per channel; read() (at run)
/// gives where operand i's bytes are, a per-channel operand's tiled copy
/// made on the spot. Used by the binary and FusedElementwise kernels.
class LayoutBroadcast {
 public:
  /// Byte shapes of `out` (returned) and of the operands `ins` (into
  /// `in_bytes`); `sizes` are the operands' element sizes. `may_tile` false
  /// keeps rows of one pixel. Errors: those of layout_broadcast_shape.
  Shape plan(const std::vector<Shape>& ins, const std::vector<size_t>& sizes, const Shape& out, ops::Layout l,
             bool may_tile, const std::string& who, std::vector<Shape>& in_bytes) {
    layout_ = l;
    k_ = 1;
    for (size_t i = 0; may_tile && l != ops::Layout::kPlain && i < ins.size(); ++i)
      // A per-channel operand: over its bytes (a 4- or 5-D shape), a row of channel values.
      if (ins[i] != out && layout_broadcast_shape(ins[i], out, l, who).back() > 1) k_ = channel_tile(out, l);
    auto bytes = [&](const Shape& s) {
      return k_ > 1 ? tiled_broadcast_shape(s, out, l, k_, who) : layout_broadcast_shape(s, out, l, who);
    };
    in_bytes.clear();
    tiled_.assign(ins.size(), false);
    sizes_ = sizes;
    copies_.resize(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      in_bytes.push_back(bytes(ins[i]));
      // Tiled: a per-channel operand (not full, more than one value per image) is read from a copy.
      tiled_[i] = k_ > 1 && ins[i] != out && in_bytes[i].back() > 1;
      if (tiled_[i]) copies_[i].assign(static_cast<size_t>(shape_numel(in_bytes[i])) * sizes[i], 0);
    }
    return bytes(out);
  }

  /// Operand i's bytes for the planned broadcast: `data` itself, or its
  /// tiled copy for a per-channel operand of `numel` values over `channels`.
  const void* read(size_t i, const void* data, int64_t numel, int64_t channels) {
    if (!tiled_[i]) return data;
    tile_channels(static_cast<const char*>(data), numel / channels, channels, layout_, k_, sizes_[i],
                  copies_[i].data());
    return copies_[i].data();
  }

 private:
  ops::Layout layout_ = ops::Layout::kPlain;
  int64_t k_ = 1;                         // pixels per broadcast row, 1 = not tiled
  std::vector<size_t> sizes_;             // element sizes of the operands
  std::vector<bool> tiled_;               // operand i is read from copies_[i]
  std::vector<std::vector<char>> copies_;  // per-channel operands tiled k_ times
};

}  // namespace gec::kernels::cpu
