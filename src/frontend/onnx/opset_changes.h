// The ai.onnx operator versions of opsets 18..23, which Debian's libonnx 1.12
// (opsets <= 17) does not know: what changed in each (ONNX's
// docs/Changelog.md, "Version N of the default ONNX operator set"), so that
// the importer can tell a node's since-version and decide whether libonnx's
// checker and shape inference may look at it.
#pragma once

#include <cstdint>
#include <string>

#include "onnx/onnx_pb.h"

namespace gec::frontend {

/// The newest ai.onnx opset the importer accepts.
inline constexpr int64_t kMaxOpset = 23;
/// The newest opset libonnx 1.12 knows.
inline constexpr int64_t kLibonnxMaxOpset = 17;

/// The since-version of ai.onnx `op` at `opset` when that version is newer
/// than 17 (e.g. ReduceMax at opset 21 -> 20), else 0 (the op's version is
/// libonnx's to tell).
int post17_since_version(const std::string& op, int64_t opset);

/// True when ai.onnx op `op` first appeared after opset 17 (Mish,
/// GroupNormalization, Gelu, ...): libonnx has no schema for it.
bool new_after_17(const std::string& op);

/// Whether libonnx 1.12's checker and shape inference may look at `n`
/// (ai.onnx, in a model of `opset` > 17) under the schema of the op's
/// newest version <= 17: yes when the op did not change after 17, or its
/// changes only widened the types it accepts or the attribute values it
/// knows, or the node uses none of the newer inputs and attributes (a
/// Reduce* without the axes input, a Split without num_outputs, a Pad
/// without axes, a Cast without saturate, ...). No for ops new after 17 and
/// for DFT-20 (axis became an input with another default).
bool libonnx_can_check(const onnx::NodeProto& n, int64_t opset);

/// For ops new after 17 that GraphEngine imports (Bitwise*, Mish, Gelu,
/// GroupNormalization, RMSNormalization), the checker's arity check that
/// libonnx cannot make: "" when `n` has as many inputs and outputs as the
/// op's ONNX text allows, else what is wrong.
std::string check_new_op_arity(const onnx::NodeProto& n);

}  // namespace gec::frontend
