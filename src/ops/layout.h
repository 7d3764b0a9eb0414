// Activation layouts. The layout each node reads and writes is chosen by the
// schedule stage (schedule/layout_assignment.cc) with the kernel that runs
// the node, recorded per step in the execution plan (schedule/
// execution_plan.h), and handed to the kernel when it is created
// (kernels::KernelConfig). The IR itself holds no layout: without a plan
// every value is plain.
//
// Only one blocked layout exists: nChw16c, a float32 4-D tensor [N,C,H,W]
// with C % 16 == 0 held as [N][C/16][H][W][16]. It has exactly the bytes of
// plain NCHW, so shapes, the memory plan and the arena do not change; only
// which byte means which element does.
//
// com.graphengine::Reorder(X) -> Y, attrs from/to ∈ {"nchw", "nChw16c"}:
// Y holds X's elements in layout `to` (X is in layout `from`); same shape.
#pragma once

#include <cstdint>
#include <string>

#include "ops/domain.h"

namespace gec::ops {

/// A value's layout as one node reads or writes it. The codes are stored in
/// the .gom (ExecutionPlan steps).
enum class Layout : int32_t {
  kPlain = 0,     // the ONNX layout of the value (NCHW for images)
  kNChw16c = 1,   // float32 [N,C,H,W], C % 16 == 0, as [N][C/16][H][W][16]
};
inline constexpr int32_t kMaxLayoutCode = 1;

inline constexpr const char* kPlainLayout = "nchw";
inline constexpr const char* kBlockedLayout = "nChw16c";
inline constexpr int64_t kBlockedChannels = 16;
inline constexpr const char* kReorderOp = "Reorder";

/// "nchw" / "nChw16c": the names Reorder's attributes and the reports use.
inline const char* layout_name(Layout l) { return l == Layout::kNChw16c ? kBlockedLayout : kPlainLayout; }

}  // namespace gec::ops
