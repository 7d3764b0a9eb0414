// ONNX function expansion: an op that GraphEngine has no schema or kernel for,
// but whose ONNX schema defines it as a function (FunctionProto body, or a
// context-dependent body built from the node's attributes and input types),
// is replaced by the nodes of that body before it enters the IR. This is how
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Celu, Range, ... run:
// their bodies use ops that have kernels (see onnx/docs/Functions or the op's
// FunctionBody in onnx/defs).
//
// Works on protobuf only; the importer imports the returned nodes as if the
// model had contained them (they may themselves be functions, expanded again).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace gec::frontend {

/// The body of one call, ready to import.
struct ExpandedFunction {
  /// Body nodes in order. Their inputs read the caller's input names (or ""
  /// for an omitted optional input); the values the body returns are written
  /// under the caller's output names; every other value has a fresh name.
  /// Attributes given by reference (ref_attr_name) carry the caller's value,
  /// or the schema default, or are dropped when neither exists.
  std::vector<onnx::NodeProto> nodes;
  /// Fresh names of the values computed inside the body (not the outputs).
  std::vector<std::string> internal_names;
  /// Opsets the body imports (domain "" = ai.onnx); the body's nodes are
  /// read at these versions.
  std::unordered_map<std::string, int64_t> opsets;
};

/// Expands `call` (a node of `schema`'s op) when the schema has a function
/// body at this version. `input_types` has one entry per input of `call` (a
/// default TypeProto when unknown); `fresh_name(base)` returns a name unused
/// anywhere in the model. Returns false when the op has no function body or
/// the context-dependent builder declines. Errors: gec::Error(kInvalidModel)
/// when the body does not define one of the outputs the call uses.
bool expand_function(const onnx::OpSchema& schema, const onnx::NodeProto& call,
                     const std::vector<onnx::TypeProto>& input_types,
                     const std::function<std::string(const std::string&)>& fresh_name, ExpandedFunction& out);

}  // namespace gec::frontend
