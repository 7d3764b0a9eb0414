// The .gom writer (compiler side): serializes a final, planned IR graph into
// the offline model file laid out as in src/model/format.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gec::model {

/// Serializes `main_graph` (nodes already in execution order; non-constant
/// values planned: Value::storage/offset set by memory/) into .gom bytes.
/// Side effects on the graph: renumbers values with ir::number_values and
/// assigns every constant value storage = kWeight and its byte offset in the
/// WEIGHTS partition (64-byte aligned; values sharing one Tensor share bytes).
/// `arena_bytes`: activation arena size of the plan; `opset`: ai.onnx opset of
/// the source model; `metadata_json`: METADATA partition text.
/// Throws gec::Error(kInternal) if the graph fails ir::Graph::verify() or a
/// non-constant value claims kWeight storage.
std::vector<uint8_t> write_gom(ir::Graph& main_graph, int64_t arena_bytes, int32_t opset,
                               const std::string& metadata_json);

/// Writes bytes to `path`; throws gec::Error(kIo) naming the file on failure.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace gec::model
