// TensorFlow models -> ir::Graph: a frozen GraphDef (.pb) or a
// TensorFlow.js graph model (model.json + weight shards), into the same IR
// the ONNX frontend produces (canonical ONNX ops), so every later stage is
// shared.
#pragma once

#include <string>

#include "frontend/onnx/importer.h"

namespace gec::frontend {

/// Imports a serialized frozen GraphDef (`size` bytes at `data`).
///  - Inputs: the Placeholder nodes the outputs depend on, by node name, of
///    their `dtype` and `shape` attributes; ImportOptions::input_shapes fixes
///    dims, and dims still unknown become 1 (a warning in the result).
///  - Outputs: ImportOptions::outputs ("node" or "node:k"), else output 0 of
///    every node nobody consumes (Const, NoOp and Placeholder aside), in
///    GraphDef order. Output values are named "node:k", TensorFlow's tensor
///    names.
///  - Only the nodes the outputs depend on are converted (control inputs
///    "^x" are ignored: a frozen graph for inference has no side effects).
/// Errors: kInvalidModel "<source>: not a valid TensorFlow GraphDef" when
/// it does not parse, a cycle through a named node, an input naming no
/// node; kUnsupported listing every op without a converter (each once, with
/// its first node and how many more), v1 control flow (Switch/Merge/Enter/
/// Exit/NextIteration), functions, or an op form not handled (named by
/// node); kInvalidArgument for input_shapes/outputs naming unknown nodes.
ImportResult import_tf_graphdef(const void* data, size_t size, const ImportOptions& options);

/// Imports a TensorFlow.js graph model: `model_json` is the model.json text
/// (modelTopology: a GraphDef in protobuf's JSON mapping; weightsManifest:
/// the shard files, relative to `model_dir`, and the weights they hold in
/// order). Quantized weights (uint8 / uint16 with scale and min, or
/// float16) are dequantized to float32 at import, as tfjs does. Errors as
/// import_tf_graphdef, plus kIo for a missing or short shard and
/// kInvalidModel for a manifest that does not describe the shards.
ImportResult import_tfjs_model(const std::string& model_json, const std::string& model_dir,
                               const ImportOptions& options);

/// Supported TensorFlow ops, sorted (`gec ops --tensorflow`).
std::vector<std::string> tensorflow_ops();

}  // namespace gec::frontend
