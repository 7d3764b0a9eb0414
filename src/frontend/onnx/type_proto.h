// ONNX TypeProto <-> ir::TensorType: tensors, sequences of tensors and
// optionals of either (ONNX IR spec, "Types"). Maps, sparse tensors and other
// nestings (a sequence of sequences, a sequence of optionals) have no IR form.
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class TypeProto;
}

namespace gec::frontend {

/// The IR type of an ONNX type. An empty TypeProto (no type known) gives a
/// tensor of undefined dtype. Errors: kUnsupported naming `what` (e.g.
/// "graph input 'x'") for maps, sparse tensors and other nestings.
ir::TensorType type_from_proto(const onnx::TypeProto& t, const std::string& what);

/// The ONNX type of an IR type; an undefined dtype gives an empty TypeProto.
void type_to_proto(const ir::TensorType& t, onnx::TypeProto* out);

}  // namespace gec::frontend
