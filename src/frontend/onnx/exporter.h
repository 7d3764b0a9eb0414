// IR -> ONNX ModelProto, for looking at a graph between passes (--dump-graph,
// Netron) and for tests. Not a model-saving path: the offline model is the
// .gom. Our own ops keep their domain ("com.graphengine", imported at version
// 1); constants become initializers; If/Loop/Scan bodies become graph
// attributes; every value's type (dtype and static or symbolic dims) is kept
// as graph input/output/value_info. Canonical IR ops are ai.onnx opset-17
// signatures, so the model imports ai.onnx 17; the one exception, Reduce*
// axes as an input (opset 18), goes back into the attribute when constant.
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace gec::frontend {

/// Fills `model` (cleared first) from `g` and its subgraphs.
void export_onnx(const ir::Graph& g, onnx::ModelProto* model);

/// The serialized ModelProto.
std::string export_onnx_bytes(const ir::Graph& g);

/// Writes the serialized ModelProto to `path`. Errors: kIo naming the path.
void export_onnx_file(const ir::Graph& g, const std::string& path);

}  // namespace gec::frontend
