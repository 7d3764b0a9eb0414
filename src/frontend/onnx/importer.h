// ONNX ModelProto -> ir::Graph. The only entry into the compiler from ONNX:
// parses the model, runs the ONNX checker and ONNX shape inference, converts
// initializers and Constant nodes into constant values, imports If/Loop/Scan
// bodies as subgraphs, rewrites older opset forms into canonical ones
// (canonicalize.h), and refuses ops GraphEngine cannot run, with one line
// naming the node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::frontend {

struct ImportOptions {
  /// Fixes the dims of graph inputs by name (e.g. {"input", {1,3,224,224}}),
  /// applied before ONNX shape inference. Rank and static dims must agree
  /// with the model's declaration.
  std::map<std::string, Shape> input_shapes;
  /// When false, ops without a GraphEngine schema or kernel are imported
  /// anyway (for inspecting a model, and tests of the frontend alone).
  bool check_support = true;
  /// Names the model in error messages ("<source_name>: not a valid ONNX
  /// model (...)"). Default: the path for import_onnx_file, "model in memory
  /// (folder D)" for import_onnx_bytes.
  std::string source_name;
  /// TensorFlow models: the tensors ("node" or "node:k") to make the graph
  /// outputs; empty = every node output nobody consumes (as TensorFlow's
  /// tools choose). ONNX models name their outputs: kInvalidArgument.
  std::vector<std::string> outputs;
};

struct ImportResult {
  /// Main graph: nodes topologically sorted, verify() passes.
  std::unique_ptr<ir::Graph> graph;
  /// ai.onnx opset the model imports.
  int64_t opset = 0;
  /// producer_name, a space and producer_version ("pytorch 1.13.0").
  std::string producer;
  /// Nodes in the ONNX file, including those in subgraphs (Constant nodes too);
  /// for a TensorFlow model, the GraphDef's nodes.
  size_t onnx_nodes = 0;
  /// What the import decided for the user that they may want to know (e.g.
  /// "input 'x': unknown dims set to 1"); the compile report lists them.
  std::vector<std::string> warnings;
  /// "onnx", "tensorflow" (GraphDef) or "tfjs" (TensorFlow.js graph model).
  std::string format = "onnx";
};

/// Imports a model file; external data resolves relative to its folder.
/// Errors (gec::Error):
///  - kIo: the file cannot be read;
///  - kInvalidModel: "<path>: not a valid ONNX model (...)" when it does not
///    parse, or the ONNX checker's message when the checker rejects it;
///  - kUnsupported: ai.onnx opset outside 1..23, a node of an opset-1..6 model
///    whose op changed at opset 7 (other than by consumed_inputs), ops
///    without a GraphEngine schema or kernel (all of them in one message,
///    each once: "unsupported op: node 'n' op Foo (domain ai.onnx, opset
///    13), inputs float32[1,3], int64[2] (and 2 more nodes); ..."), or an
///    old or new form with no inference meaning or not implemented (e.g.
///    Resize-18 antialias);
///  - kInvalidArgument: ImportOptions::input_shapes names an unknown input or
///    conflicts with the declared shape.
ImportResult import_onnx_file(const std::string& path, const ImportOptions& options = {});

/// Same, from serialized ModelProto bytes; `model_dir` is where external data
/// files are looked up.
ImportResult import_onnx_bytes(const std::string& bytes, const std::string& model_dir,
                               const ImportOptions& options = {});
/// Same, from serialized bytes the caller keeps alive during the call (e.g.
/// a memory-mapped file).
ImportResult import_onnx_bytes(const void* data, size_t size, const std::string& model_dir,
                               const ImportOptions& options = {});

/// The ai.onnx opsets in which op `op_type` imports: from its first ONNX
/// version (libonnx's schemas, and opset_changes.cc for ops new after 17)
/// to the newest opset accepted (23), or to the last before ONNX deprecated
/// it; {0, 0} when ONNX has no such op.
std::pair<int64_t, int64_t> onnx_opset_range(const std::string& op_type);

}  // namespace gec::frontend
