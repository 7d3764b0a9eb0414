// ONNX TensorProto <-> gec::Tensor: the one place that knows how ONNX stores
// tensor data (raw_data, the typed repeated fields, external data files), and
// the reader/writer of the input_K.pb / output_K.pb files of ONNX test data
// sets. Callers need no ONNX headers: TensorProto is only declared here.
#pragma once

#include <string>

#include "gec/tensor.h"

namespace onnx {
class TensorProto;
}

namespace gec::frontend {

/// Converts a TensorProto (onnx.proto, IR version 8) into an owning Tensor of
/// the same dtype and dims.
///
/// Data may come from raw_data (little-endian bytes), from the typed field the
/// ONNX spec assigns to the dtype (float_data, int32_data for 8/16-bit ints,
/// bool, float16 and bfloat16 bit patterns, int64_data, uint64_data for
/// uint32/uint64, double_data, string_data), or from an external data file
/// (`location` relative to `model_dir`, optional `offset` and `length`).
/// float16/bfloat16 stay raw 16-bit values; strings become std::string
/// elements. Errors: kInvalidModel for a bad dtype, dims, data size or
/// location (absolute, or leaving `model_dir`, also through a symlink); kIo
/// when an external file cannot be read, is not a regular file or is too
/// short (checked before the tensor is allocated).
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& model_dir);

/// Same, but a raw_data payload moves into the tensor instead of being
/// copied (the proto loses it): for importing large initializers. Such
/// storage is a std::string's, so 16-byte rather than 64-byte aligned.
Tensor take_tensor_from_proto(onnx::TensorProto* proto, const std::string& model_dir);

/// Fills `proto` (cleared first) with name, dtype, dims and data: raw_data for
/// numeric dtypes, string_data for strings.
void tensor_to_proto(const TensorView& t, const std::string& name, onnx::TensorProto* proto);

/// Reads one serialized TensorProto file (an ONNX test data set's
/// input_K.pb / output_K.pb); external data resolves next to the file.
/// `name`, when given, receives the proto's name (the graph input/output it
/// belongs to). Errors: kIo when unreadable, not a regular file or larger
/// than `max_bytes`, kInvalidModel when not a TensorProto.
/// kMaxProtoFileBytes is protobuf's own limit for one message (2 GiB).
inline constexpr uint64_t kMaxProtoFileBytes = (uint64_t{1} << 31) - 1;
Tensor read_tensor_proto_file(const std::string& path, std::string* name = nullptr,
                              uint64_t max_bytes = kMaxProtoFileBytes);

/// Reads one serialized value of kind `kind` (a test data set file): a
/// TensorProto for tensors, a SequenceProto of tensors for sequences, an
/// OptionalProto for optionals (ONNX IR "sequence"/"optional" types).
/// elem_dtype comes from the elements; an empty sequence or a None leaves it
/// kUndefined. Errors: kIo when unreadable, kInvalidModel when the file is
/// not that kind of proto or holds a map or nested sequence; kIo also when
/// the file is larger than `max_bytes`.
AnyValue read_value_proto_file(const std::string& path, ValueKind kind, std::string* name = nullptr,
                               uint64_t max_bytes = kMaxProtoFileBytes);

/// The whole content of a regular file of at most `max_bytes`. Errors: kIo
/// naming the path and the reason (not a regular file, too large, ...).
std::string read_file_bytes(const std::string& path, uint64_t max_bytes = kMaxProtoFileBytes);

/// Writes `v` as one serialized TensorProto, SequenceProto or OptionalProto
/// (by its kind) named `name`. Errors: kIo.
void write_value_proto_file(const std::string& path, const AnyValue& v, const std::string& name);

/// Writes `t` as one serialized TensorProto named `name`. Errors: kIo.
void write_tensor_proto_file(const std::string& path, const TensorView& t, const std::string& name);

}  // namespace gec::frontend
