// The .gom writer (compiler side): serializes a final, planned IR graph into
// the offline model file laid out as in src/model/format.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "memory/memory_plan.h"
#include "schedule/execution_plan.h"

namespace gec::model {

/// Serializes `main_graph` (its node tables), its memory plan and its
/// execution plan into .gom bytes. `ids` numbers the graph's values (the ids
/// both plans use). Constant data goes to the WEIGHTS partition, each
/// constant at a 64-byte aligned offset (values sharing one Tensor share
/// bytes). `opset`: ai.onnx opset of the source model; `metadata_json`:
/// METADATA partition text. Throws gec::Error(kInternal) if the graph fails
/// ir::Graph::verify(), the plans do not fit the graph (value or graph
/// counts), or a value's plan says kWeight without constant data.
std::vector<uint8_t> write_gom(const ir::Graph& main_graph, const ir::ValueIndex& ids,
                               const memory::MemoryPlan& memory_plan, const schedule::ExecutionPlan& execution_plan,
                               int32_t opset, const std::string& metadata_json);

/// Writes bytes to `path`; throws gec::Error(kIo) naming the file on failure.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace gec::model
