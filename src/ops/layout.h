// Activation layouts. The layout each node reads and writes is chosen by the
// schedule stage (schedule/layout_assignment.cc) with the kernel that runs
// the node, recorded per step in the execution plan (schedule/
// execution_plan.h), and handed to the kernel when it is created
// (kernels::KernelConfig). The IR itself holds no layout: without a plan
// every value is plain.
//
// Two non-plain layouts exist, both for float32 4-D tensors [N,C,H,W] and
// both with exactly the bytes of plain NCHW, so shapes, the memory plan and
// the arena do not change; only which byte means which element does:
//   nChw16c  C % 16 == 0, held as [N][C/16][H][W][16] (oneDNN's blocked
//            layout for AVX-512 direct convolutions);
//   nhwc     any C, held as [N][H][W][C] ("channels last"; oneDNN runs its
//            brgemm convolutions on it). Used where channel counts are not
//            multiples of 16 (24, 58, 72 ...), which nChw16c would pad.
// A value is never in both: the layout assignment gives each group of values
// connected through layout-following ops one of the two.
//
// com.graphengine::Reorder(X) -> Y, attrs from/to ∈ {"nchw", "nChw16c",
// "nhwc"}: Y holds X's elements in layout `to` (X is in layout `from`); same
// shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/domain.h"

namespace gec::ops {

/// A value's layout as one node reads or writes it. The codes are stored in
/// the .gom (ExecutionPlan steps).
enum class Layout : int32_t {
  kPlain = 0,    // the ONNX layout of the value (NCHW for images)
  kNChw16c = 1,  // float32 [N,C,H,W], C % 16 == 0, as [N][C/16][H][W][16]
  kNhwc = 2,     // float32 [N,C,H,W], as [N][H][W][C]
};
inline constexpr int32_t kMaxLayoutCode = 2;

inline constexpr const char* kPlainLayout = "nchw";
inline constexpr const char* kBlockedLayout = "nChw16c";
inline constexpr const char* kChannelsLastLayout = "nhwc";
inline constexpr int64_t kBlockedChannels = 16;
inline constexpr const char* kReorderOp = "Reorder";

/// "nchw" / "nChw16c" / "nhwc": the names Reorder's attributes and the
/// reports use.
inline const char* layout_name(Layout l) {
  return l == Layout::kNChw16c ? kBlockedLayout : l == Layout::kNhwc ? kChannelsLastLayout : kPlainLayout;
}

/// The layout named `name` (layout_name's inverse); false for another name.
inline bool layout_from_name(const std::string& name, Layout* out) {
  for (Layout l : {Layout::kPlain, Layout::kNChw16c, Layout::kNhwc})
    if (name == layout_name(l)) {
      *out = l;
      return true;
    }
  return false;
}

/// True when a float32 tensor of [N,C,...] with `channels` C can be held in
/// `l` with plain's bytes (nChw16c needs C % 16 == 0).
inline bool layout_fits_channels(Layout l, int64_t channels) {
  return l != Layout::kNChw16c || channels % kBlockedChannels == 0;
}

/// The dims, in memory order, of a [N,C,H,W] tensor `s` held in `l`: plain
/// as they are, nhwc [N,H,W,C], nChw16c [N,C/16,H,W,16] (C % 16 == 0 is
/// the caller's to check: layout_fits_channels). `s` must be 4-D for a
/// non-plain `l`.
inline std::vector<int64_t> held_dims(Layout l, const std::vector<int64_t>& s) {
  if (l == Layout::kNhwc) return {s[0], s[2], s[3], s[1]};
  if (l == Layout::kNChw16c) return {s[0], s[1] / kBlockedChannels, s[2], s[3], kBlockedChannels};
  return s;
}

/// Where dim `axis` (0..3) of [N,C,H,W] is in held_dims(l, ...): nhwc moves
/// C last; in nChw16c dim 1 is C's 16-channel blocks.
inline int64_t held_axis(Layout l, int64_t axis) {
  static constexpr int64_t kNhwcAxis[4] = {0, 3, 1, 2};
  return l == Layout::kNhwc ? kNhwcAxis[axis] : axis;
}

/// A Transpose by `perm` of a [N,C,H,W] `s` read in layout `in` (plain,
/// nhwc or nChw16c) and written in `out` (plain or nhwc) as one copy of a
/// permuted view of the held input: `view` receives the held input dims
/// (held_dims; nChw16c's C as its blocks and lanes), the result is the
/// permutation of `view` whose row-major order is the output's bytes. An
/// nhwc output holds the plain output permuted by (0,2,3,1). `s` must be
/// 4-D (and C % 16 == 0 for nChw16c: layout_fits_channels), `perm` a
/// permutation of 0..3 (resolved: ops::transpose_perm).
inline std::vector<int64_t> held_transpose(Layout in, Layout out, const std::vector<int64_t>& s,
                                           std::vector<int64_t> perm, std::vector<int64_t>* view) {
  if (out == Layout::kNhwc) perm = {perm[0], perm[2], perm[3], perm[1]};
  *view = held_dims(in, s);
  std::vector<int64_t> held;
  for (int64_t a : perm) {
    if (in == Layout::kNChw16c && a == 1) {
      held.push_back(1);
      held.push_back(4);
    } else {
      held.push_back(held_axis(in, a));
    }
  }
  return held;
}

/// Whether held_transpose's copy moves rows: the input's innermost held
/// dim (stride 1) is the output's last or next-to-last dim, so the copy
/// runs contiguous rows or tiled 2-D transposes rather than an element
/// gather (kernels/cpu/common/strided_copy.h).
inline bool held_transpose_moves_rows(Layout in, Layout out, const std::vector<int64_t>& s,
                                      const std::vector<int64_t>& perm) {
  std::vector<int64_t> view;
  const std::vector<int64_t> held = held_transpose(in, out, s, perm, &view);
  const int64_t inner = static_cast<int64_t>(view.size()) - 1;
  const size_t n = held.size();
  return held[n - 1] == inner || (n >= 2 && held[n - 2] == inner);
}

/// A [N,C,H,W] shape with H = W = 1: every layout here holds it with
/// plain's bytes, so it is read in any without a Reorder.
inline bool same_bytes_in_every_layout(const std::vector<int64_t>& s) { return s.size() == 4 && s[2] * s[3] == 1; }

/// A per-channel operand of a broadcast to the 4-D `out` [N,C,H,W]: `s`
/// padded to rank 4 with leading 1s is [n,c,1,1], n in {1,N}, c in {1,C}.
/// Such an operand has the same bytes in every layout, so a kernel with a
/// non-plain output reads it as a vector (kernels/cpu/common/
/// layout_broadcast.h). On true, `padded` (when given) receives [n,c,1,1].
inline bool per_channel_operand(const std::vector<int64_t>& s, const std::vector<int64_t>& out,
                                std::vector<int64_t>* padded = nullptr) {
  if (out.size() != 4 || s.size() > 4) return false;
  std::vector<int64_t> p(4 - s.size(), 1);
  p.insert(p.end(), s.begin(), s.end());
  if (p[2] != 1 || p[3] != 1 || (p[0] != 1 && p[0] != out[0]) || (p[1] != 1 && p[1] != out[1])) return false;
  if (padded) *padded = p;
  return true;
}

}  // namespace gec::ops
