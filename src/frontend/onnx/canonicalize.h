// Opset canonicalization: every ONNX node enters the IR in the canonical form
// of its op (the ai.onnx opset-17 signature, with the exceptions listed in
// notes: Reduce* take `axes` as input 1 as in opset 18; Upsample and
// Resize-10 become Resize-13). Older forms (attributes that later became
// inputs, flatten-semantics Softmax, Dropout, training-only outputs, ...) are
// rewritten here, one small function per (op, since-version) rule.
//
// Works on the IR only: the importer has already resolved input names to
// Values and converted attributes; it tells us the op's since-version.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace gec::frontend {

/// One ONNX node on its way into the IR.
struct NodeDraft {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  /// SinceVersion of the op's ONNX schema at the model's opset; 0 when
  /// unknown (custom domains).
  int since_version = 0;
  /// The model's opset for `domain` (for error messages).
  int64_t opset = 0;
  std::vector<ir::Attribute> attrs;
  /// nullptr = omitted optional input.
  std::vector<ir::Value*> inputs;
  /// Producer-less values the node must define; nullptr = omitted output.
  std::vector<ir::Value*> outputs;
  /// Whether each output is read anywhere (a node input or a graph output).
  std::vector<bool> output_used;

  const ir::Attribute* attr(const std::string& n) const;
  void drop_attr(const std::string& n);
  void set_attr(ir::Attribute a);
  ir::Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  void set_input(size_t i, ir::Value* v);
  /// "node 'n' (Op-11)" for error messages.
  std::string describe() const;
};

/// Appends the canonical IR form of `d` to `g`: one node, or a few when the
/// old form needs helper ops (e.g. Softmax-11 -> Flatten, Softmax, Reshape).
/// The draft's outputs end up defined by the emitted nodes; outputs that an
/// old form had and the canonical form lacks are left undefined and must be
/// unused. Errors: kUnsupported for forms with no inference meaning (training
/// outputs of BatchNormalization, Dropout in training mode), naming
/// the node.
void emit_canonical(ir::Graph& g, NodeDraft& d);

/// ai.onnx ops that have no IR op of their own: the importer rewrites them
/// into others (GroupNormalization, RMSNormalization, Gelu-20, Upsample,
/// Scatter), for `gec ops`.
std::vector<std::string> ops_rewritten_on_import();

}  // namespace gec::frontend
