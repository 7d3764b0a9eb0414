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

/// A constant's packed copy to store with it (gom.proto PackedWeight): the
/// value id, the target's layout description and the bytes (read during
/// write_gom only).
struct PackedWeightBytes {
  int32_t value = -1;
  std::string layout;
  const void* data = nullptr;
  size_t bytes = 0;
};

/// Serializes `main_graph` (its node tables), its memory plan and its
/// execution plan into .gom bytes. `ids` numbers the graph's values (the ids
/// both plans use). Constant data goes to the WEIGHTS partition, each
/// constant at a 64-byte aligned offset (values sharing one Tensor share
/// bytes). `opset`: ai.onnx opset of the source model; `metadata_json`:
/// METADATA partition text. Throws gec::Error(kInternal) if the graph fails
/// ir::Graph::verify(), the plans do not fit the graph (value or graph
/// counts), or a value's plan says kWeight without constant data, or a
/// packed copy names a value that is not a numeric constant. `packed`:
/// packed copies of constants, stored after every constant's plain bytes.
std::vector<uint8_t> write_gom(const ir::Graph& main_graph, const ir::ValueIndex& ids,
                               const memory::MemoryPlan& memory_plan, const schedule::ExecutionPlan& execution_plan,
                               int32_t opset, const std::string& metadata_json,
                               const std::vector<PackedWeightBytes>& packed = {});

/// Writes bytes to `path`; throws gec::Error(kIo) naming the file on failure.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace gec::model
