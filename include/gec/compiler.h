// The GraphEngine compiler: ONNX model in, offline model (.gom) out.
//
// Pipeline (DESIGN.md): parse (libonnx: checker, shape inference, external
// data) -> IR -> passes -> schedule -> memory plan -> lower (kernel selection)
// -> serialize.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"

namespace gec {

struct CompileOptions {
  /// 0: no optimization; 1: cleanup; 2: + fusion; 3: everything.
  int opt_level = 2;
  /// Pass names to skip.
  std::vector<std::string> disabled_passes;
  /// Fix the shapes of inputs with dynamic dims (name -> dims).
  std::map<std::string, Shape> input_shapes;
  /// Run the IR verifier after every pass (tests, debug builds).
  bool verify_each_pass = false;
  /// Refuse models with more bytes of weights (constant data after
  /// optimization) or of planned activation arena; 0 = no limit. Errors:
  /// kUnsupported naming the figure and the limit.
  int64_t max_weights_bytes = 0;
  int64_t max_arena_bytes = 0;
  /// Values of the main graph to make model outputs too, after the model's
  /// own (accuracy debugging: their tensors come out of every run). Names
  /// are marked before the passes, which then keep them (that can keep a
  /// fusion from happening); a name no main-graph node computes is
  /// kInvalidArgument naming it. "*" = every tensor the optimized main graph
  /// computes, marked after the passes (values fused away are not there: -O0
  /// has them all).
  std::vector<std::string> extra_outputs;
  /// TensorFlow models: the tensors to make outputs ("node" or "node:k");
  /// empty = every node output nobody consumes. kInvalidArgument for ONNX.
  std::vector<std::string> outputs;
  /// Streams the main graph is spread over (schedule/streams.cc): 0 = auto
  /// (from the graph's width and the cores: the count whose estimated run is
  /// clearly shortest; 1 below -O2), 1 = one sequential step list, up to 64.
  /// A run uses at most as many workers as it has threads, and splits its
  /// threads between them. Outside 0..64: kInvalidArgument.
  int streams = 0;
  /// Directory to dump the graph before/after each pass (empty = off).
  std::string dump_graph_dir;
  /// Called as each stage starts (parse, optimize, schedule, memory, lower,
  /// serialize, pack weights; index 0..6 of 7; pack weights runs at -O2 and
  /// up), e.g. to draw a progress bar. May be empty.
  std::function<void(const char* stage, int index, int count)> on_stage;
};

/// A compiled model in memory: the serialized .gom bytes plus the compile
/// report (JSON text: "stages", "passes", "nodes", "memory").
struct CompiledModel {
  std::shared_ptr<const std::vector<uint8_t>> gom;
  std::string report_json;
};

/// Compiles an ONNX file (ai.onnx opsets 1..23, operator semantics as the
/// ONNX operator text of the model's opset). Throws gec::Error: kIo
/// (unreadable file), kInvalidModel (malformed, truncated or rejected by the
/// ONNX checker), kUnsupported (ops, an opset or a dtype we do not implement;
/// the message names, for every unsupported op, its first node, op type,
/// domain, opset and input dtypes),
/// kInvalidArgument (bad options: an input_shapes entry naming no input or
/// contradicting its static dims, an unknown pass name, a level outside 0..3).
/// A GraphEngine offline model (.gom) given here is kInvalidModel, saying it
/// is compiled already.
CompiledModel compile_onnx_file(const std::string& path, const CompileOptions& opts = {});

/// Compiles a model file of any supported format, chosen from its bytes
/// (src/frontend/model_format.h): ONNX, a frozen TensorFlow GraphDef (.pb),
/// or a TensorFlow.js graph model (model.json, weight shards beside it).
/// TensorFlow models: NHWC image ops run on the NCHW kernels, with
/// transposes only where the graph needs TensorFlow's layout; unknown input
/// dims become 1 unless opts.input_shapes fixes them (the report's
/// "warnings" says so). Errors as compile_onnx_file, and for TensorFlow:
/// kInvalidModel (a GraphDef that does not parse, a cycle, an input naming
/// no node), kUnsupported (every op without a converter, in one message),
/// kIo (a missing weight shard). A GraphEngine offline model (.gom) given
/// here is kInvalidModel, saying it is compiled already.
CompiledModel compile_file(const std::string& path, const CompileOptions& opts = {});

/// Same, from `size` bytes in memory of any supported format (a
/// TensorFlow.js model.json's shards are looked up in `model_dir`).
CompiledModel compile_any_bytes(const void* data, size_t size, const CompileOptions& opts = {},
                                const std::string& model_dir = ".",
                                const std::string& source_name = "model in memory");

/// Same, from a serialized ONNX ModelProto in memory (`size` bytes at `data`,
/// read in place: the caller keeps them alive during the call), e.g. a model
/// exported into a buffer. External data files are looked up in
/// `external_data_dir`. Errors as compile_onnx_file(); messages name the
/// model as `source_name` (the .gom metadata records it as the source model).
CompiledModel compile_onnx_bytes(const void* data, size_t size, const CompileOptions& opts = {},
                                 const std::string& external_data_dir = ".",
                                 const std::string& source_name = "model in memory");

/// Writes the .gom bytes to `path` (atomically: a temporary file `path`.tmp
/// renamed). Throws gec::Error(kIo) naming the file it could not open,
/// write or move and the system's reason (a missing folder, no permission,
/// a full disk, `path` an existing folder); no temporary file is left
/// behind.
void save_gom(const CompiledModel& m, const std::string& path);

}  // namespace gec
