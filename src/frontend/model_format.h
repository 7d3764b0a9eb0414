// Which frontend reads a model file: chosen from its bytes, never from its
// name (a .pb may be an ONNX model, a .onnx a GraphDef).
//  - TensorFlow.js graph model: text whose first non-blank byte is '{' (its
//    model.json); the weight shards are next to it.
//  - TensorFlow GraphDef: a protobuf whose first field is field 1 with wire
//    type 2 (byte 0x0a: GraphDef.node, a NodeDef).
//  - ONNX ModelProto otherwise (its first field is normally ir_version,
//    field 1 as a varint: byte 0x08).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/importer.h"

namespace gec::frontend {

enum class ModelFormat { kOnnx, kTfGraphDef, kTfjs };

/// The frontends' one-error list of unsupported ops: each entry is an op's
/// first node, described, and how many nodes use it; gives "A (and 2 more
/// nodes); B", in the entries' order.
std::string join_unsupported(const std::vector<std::pair<std::string, int>>& ops);

ModelFormat detect_format(const void* data, size_t size);
/// "ONNX", "TensorFlow GraphDef", "TensorFlow.js graph model".
const char* format_name(ModelFormat f);

/// Imports with the frontend detect_format() picks; `model_dir` is where
/// external data (ONNX) or weight shards (tfjs) are looked up.
ImportResult import_any(const void* data, size_t size, const std::string& model_dir, const ImportOptions& options);
/// Same, from a file (kIo when it cannot be read); files next to it are
/// external data or weight shards.
ImportResult import_any_file(const std::string& path, ImportOptions options = {});

}  // namespace gec::frontend
