// Drawing of a memory plan: each arena tensor is a rectangle spanning its
// lifetime (x: execution step) and its bytes (y: arena offset), with a
// tooltip naming it. Used by `gec inspect --memory-svg`.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace gec::memory {

/// SVG text (standalone document) of the plan of planned or loaded graph `g`
/// whose arena holds `arena_bytes`. The y axis is linear in bytes; tensors
/// thinner than a pixel are drawn one pixel high.
std::string plan_svg(const ir::Graph& g, int64_t arena_bytes);

}  // namespace gec::memory
