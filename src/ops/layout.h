// Blocked activation layouts chosen by the pass layout_propagation
// (src/passes/) and honoured by the CPU kernels that read or write them
// (Conv/FusedConv, pooling, com.graphengine::Reorder).
//
// Only one blocked layout exists: "nChw16c", a float32 4-D tensor [N,C,H,W]
// with C % 16 == 0 held as [N][C/16][H][W][16]. It has exactly the bytes of
// plain "nchw", so shapes, the memory plan and the arena do not change; only
// which byte means which element does.
//
// A node that reads or writes blocked values carries two string-list
// attributes, one entry per input / output ("" or "nchw" = plain):
//   __gec_layout_in    e.g. ["nChw16c", "", "", "nChw16c"] for a FusedConv
//   __gec_layout_out   e.g. ["nChw16c"]
// Nodes without them are plain everywhere (-O0/-O1, and any graph the pass
// leaves alone).
//
// com.graphengine::Reorder(X) -> Y, attrs from/to ∈ {"nchw", "nChw16c"}:
// Y holds X's elements in layout `to` (X is in layout `from`); same shape.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ops/domain.h"

namespace gec::ops {

inline constexpr const char* kLayoutInAttr = "__gec_layout_in";
inline constexpr const char* kLayoutOutAttr = "__gec_layout_out";
inline constexpr const char* kPlainLayout = "nchw";
inline constexpr const char* kBlockedLayout = "nChw16c";
inline constexpr int64_t kBlockedChannels = 16;
inline constexpr const char* kReorderOp = "Reorder";

/// True when entry `i` of the string-list attribute `attr` of `n` names
/// kBlockedLayout (false when the attribute or the entry is absent).
inline bool layout_blocked(const ir::Node& n, const char* attr, size_t i) {
  const ir::Attribute* a = n.find_attr(attr);
  return a && a->kind == ir::Attribute::Kind::kStrings && i < a->strings.size() && a->strings[i] == kBlockedLayout;
}
inline bool input_blocked(const ir::Node& n, size_t i) { return layout_blocked(n, kLayoutInAttr, i); }
inline bool output_blocked(const ir::Node& n, size_t i) { return layout_blocked(n, kLayoutOutAttr, i); }

}  // namespace gec::ops
