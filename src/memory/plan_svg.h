// Drawing of a memory plan: each arena tensor is a rectangle spanning its
// lifetime (x: execution step) and its bytes (y: arena offset), with a
// tooltip naming it. Used by `gec inspect --memory-svg`.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "memory/memory_plan.h"

namespace gec::memory {

/// SVG text (standalone document) of memory plan `plan` of graph `g` (value
/// ids from `ids`). The y axis is linear in bytes; tensors
/// thinner than a pixel are drawn one pixel high.
std::string plan_svg(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan);

}  // namespace gec::memory
