// What the memory plan records in the IR besides Value::storage/offset, shared
// by the planner (which writes it) and the runtime (which reads it from the
// .gom). Header only: the runtime library does not link the planner.
#pragma once

namespace gec::memory {

/// Int attribute (value 1) on a Concat node whose inputs the planner placed
/// directly in their slices of the output: every byte of the output is
/// already in place when the node's turn comes, so the executor skips it.
/// Removed and re-set each time the planner runs; kernels ignore it.
inline constexpr const char* kConcatInPlaceAttr = "__gec_concat_in_place";

}  // namespace gec::memory
