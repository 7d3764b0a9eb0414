// TensorProto decoding/encoding and test-data .pb file I/O. Field usage per
// dtype follows onnx.proto ("TensorProto": which repeated field holds which
// data_type) and the external data spec (docs/ExternalData.md: keys
// location, offset, length).
#include "frontend/onnx/tensor_proto.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gec/error.h"
#include "support/file_util.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"

namespace gec::frontend {

namespace {

[[noreturn]] void bad_tensor(const onnx::TensorProto& p, const std::string& msg) {
  fail(ErrorCode::kInvalidModel, "tensor '" + p.name() + "': " + msg);
}

// Dims of `p`, refusing negative dims and element counts that overflow or
// that the message cannot hold (data not external: each element takes at
// least one byte of the message), so a corrupted file never makes us
// allocate terabytes.
Shape dims_of(const onnx::TensorProto& p) {
  Shape s;
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) bad_tensor(p, "negative dim " + std::to_string(d));
    if (d > 0 && n > (int64_t{1} << 50) / d) bad_tensor(p, "dims " + shape_str(Shape(p.dims().begin(), p.dims().end())) + " are too large");
    n *= d;
    s.push_back(d);
  }
  if (p.data_location() != onnx::TensorProto::EXTERNAL && n > 0 &&
      static_cast<uint64_t>(n) > p.ByteSizeLong())
    bad_tensor(p, "dims " + shape_str(s) + " claim " + std::to_string(n) + " elements but the message holds " +
                      std::to_string(p.ByteSizeLong()) + " bytes");
  return s;
}

// Copies `n` values of a repeated field into `out`, converting each with a
// static_cast (int32_data -> int8/uint16/..., the 16-bit float patterns too).
template <typename Dst, typename Field>
void copy_field(const onnx::TensorProto& p, const Field& field, int64_t n, void* out) {
  if (static_cast<int64_t>(field.size()) != n)
    bad_tensor(p, "has " + std::to_string(field.size()) + " values, expected " + std::to_string(n));
  Dst* d = static_cast<Dst*>(out);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

// True when `loc` stays inside the model folder: relative, no ".." part.
bool is_safe_location(const std::string& loc) {
  if (loc.empty() || loc[0] == '/' || loc[0] == '\\') return false;
  std::stringstream ss(loc);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part == "..") return false;
  return true;
}

int64_t parse_count(const onnx::TensorProto& p, const std::string& s) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) bad_tensor(p, "bad external data offset/length '" + s + "'");
  return v;
}

// External data of `p` (dtype `dt`, dims `dims`): the location is resolved
// inside `model_dir` after following symlinks, must be a regular file, and
// its size is checked before the tensor is allocated.
Tensor read_external(const onnx::TensorProto& p, const std::string& model_dir, DType dt, Shape dims) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& e : p.external_data()) {
    if (e.key() == "location") location = e.value();
    else if (e.key() == "offset") offset = parse_count(p, e.value());
    else if (e.key() == "length") length = parse_count(p, e.value());
  }
  if (!is_safe_location(location))
    bad_tensor(p, "external data location '" + location + "' must be a relative path inside the model folder");
  if (dt == DType::kString) bad_tensor(p, "string data cannot be stored externally");
  const int64_t want = shape_numel(dims) * static_cast<int64_t>(dtype_size(dt));
  if (length >= 0 && length != want)
    bad_tensor(p, "external data length " + std::to_string(length) + " != " + std::to_string(want) + " bytes");
  const std::string path = resolve_inside(model_dir, location, "tensor '" + p.name() + "': external data");
  RegularFile f(path);
  const int64_t size = static_cast<int64_t>(f.size());
  if (offset < 0 || offset > size || want > size - offset)
    fail(ErrorCode::kIo, "tensor '" + p.name() + "': external data " + path + " has " + std::to_string(size) +
                             " bytes, need " + std::to_string(want) + " at offset " + std::to_string(offset));
  Tensor t = Tensor::uninitialized(dt, std::move(dims));
  f.read_at(t.data(), static_cast<uint64_t>(want), static_cast<uint64_t>(offset));
  return t;
}

void read_typed_fields(const onnx::TensorProto& p, Tensor& t) {
  const int64_t n = t.numel();
  void* d = t.data();
  switch (t.dtype()) {
    case DType::kFloat32: return copy_field<float>(p, p.float_data(), n, d);
    case DType::kComplex64: return copy_field<float>(p, p.float_data(), 2 * n, d);
    case DType::kFloat64: return copy_field<double>(p, p.double_data(), n, d);
    case DType::kComplex128: return copy_field<double>(p, p.double_data(), 2 * n, d);
    case DType::kInt32: return copy_field<int32_t>(p, p.int32_data(), n, d);
    case DType::kInt16: return copy_field<int16_t>(p, p.int32_data(), n, d);
    case DType::kInt8: return copy_field<int8_t>(p, p.int32_data(), n, d);
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return copy_field<uint16_t>(p, p.int32_data(), n, d);
    case DType::kUInt8: return copy_field<uint8_t>(p, p.int32_data(), n, d);
    case DType::kBool: {
      copy_field<uint8_t>(p, p.int32_data(), n, d);
      for (int64_t i = 0; i < n; ++i) t.as<uint8_t>()[i] = t.as<uint8_t>()[i] != 0;
      return;
    }
    case DType::kInt64: return copy_field<int64_t>(p, p.int64_data(), n, d);
    case DType::kUInt32: return copy_field<uint32_t>(p, p.uint64_data(), n, d);
    case DType::kUInt64: return copy_field<uint64_t>(p, p.uint64_data(), n, d);
    case DType::kString: {
      if (p.string_data_size() != n)
        bad_tensor(p, "has " + std::to_string(p.string_data_size()) + " strings, expected " + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) t.as<std::string>()[i] = p.string_data(static_cast<int>(i));
      return;
    }
    case DType::kUndefined: break;
  }
  bad_tensor(p, "undefined data_type");
}

}  // namespace

Tensor take_tensor_from_proto(onnx::TensorProto* p, const std::string& model_dir) {
  const bool raw = dtype_is_valid(p->data_type()) && p->data_location() != onnx::TensorProto::EXTERNAL &&
                   p->has_raw_data() && p->data_type() != static_cast<int32_t>(DType::kString);
  if (!raw) return tensor_from_proto(*p, model_dir);
  const DType dt = static_cast<DType>(p->data_type());
  Shape dims = dims_of(*p);
  if (static_cast<size_t>(shape_numel(dims)) * dtype_size(dt) != p->raw_data().size())
    return tensor_from_proto(*p, model_dir);  // reports the size mismatch
  std::shared_ptr<std::string> bytes(p->release_raw_data());
  void* data = bytes->data();
  return Tensor(dt, std::move(dims), data, std::shared_ptr<void>(bytes, bytes.get()));
}

Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& model_dir) {
  if (!dtype_is_valid(p.data_type())) bad_tensor(p, "unsupported data_type " + std::to_string(p.data_type()));
  const DType dt = static_cast<DType>(p.data_type());
  // raw_data of the right size overwrites every byte (checked below): no zero-fill first.
  if (p.data_location() == onnx::TensorProto::EXTERNAL) return read_external(p, model_dir, dt, dims_of(p));
  const bool raw = p.has_raw_data() && dt != DType::kString;
  Tensor t = raw ? Tensor::uninitialized(dt, dims_of(p)) : Tensor(dt, dims_of(p));
  if (p.has_raw_data()) {
    if (t.dtype() == DType::kString) bad_tensor(p, "string data cannot be in raw_data");
    if (p.raw_data().size() != t.bytes())
      bad_tensor(p, "raw_data has " + std::to_string(p.raw_data().size()) + " bytes, expected " +
                        std::to_string(t.bytes()) + " for " + dtype_name(t.dtype()) + shape_str(t.shape()));
    if (t.bytes()) std::memcpy(t.data(), p.raw_data().data(), t.bytes());
  } else {
    read_typed_fields(p, t);
  }
  return t;
}

void tensor_to_proto(const TensorView& t, const std::string& name, onnx::TensorProto* p) {
  p->Clear();
  p->set_name(name);
  p->set_data_type(static_cast<int32_t>(t.dtype));
  for (int64_t d : t.shape) p->add_dims(d);
  if (t.dtype == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) p->add_string_data(t.as<std::string>()[i]);
  } else {
    p->set_raw_data(static_cast<const char*>(t.data), t.bytes());
  }
}

std::string read_file_bytes(const std::string& path, uint64_t max_bytes) {
  return read_regular_file(path, max_bytes, "this file");
}

static std::string dir_of(const std::string& path) {
  const size_t pos = path.find_last_of('/');
  return pos == std::string::npos ? "." : path.substr(0, pos);
}

Tensor read_tensor_proto_file(const std::string& path, std::string* name, uint64_t max_bytes) {
  const std::string bytes = read_file_bytes(path, max_bytes);
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes) || !p.has_data_type())
    fail(ErrorCode::kInvalidModel, path + ": not a valid ONNX TensorProto");
  if (name) *name = p.name();
  return tensor_from_proto(p, dir_of(path));
}

namespace {

AnyValue sequence_from_proto(const onnx::SequenceProto& p, const std::string& path) {
  const bool others = p.sparse_tensor_values_size() || p.sequence_values_size() || p.map_values_size() ||
                      p.optional_values_size();
  if ((p.elem_type() != onnx::SequenceProto::TENSOR && p.elem_type() != onnx::SequenceProto::UNDEFINED) || others)
    fail(ErrorCode::kInvalidModel, path + ": a sequence of " + onnx::SequenceProto::DataType_Name(p.elem_type()) +
                                       " values is not supported (sequences of tensors are)");
  if (p.elem_type() == onnx::SequenceProto::UNDEFINED && p.tensor_values_size())
    fail(ErrorCode::kInvalidModel, path + ": a SequenceProto holding tensors must say elem_type TENSOR");
  std::vector<Tensor> elems;
  for (const auto& t : p.tensor_values()) elems.push_back(tensor_from_proto(t, dir_of(path)));
  const DType dt = elems.empty() ? DType::kUndefined : elems[0].dtype();
  return AnyValue::sequence(dt, std::move(elems));
}

}  // namespace

AnyValue read_value_proto_file(const std::string& path, ValueKind kind, std::string* name, uint64_t max_bytes) {
  if (kind == ValueKind::kTensor) {
    std::string n;
    Tensor t = read_tensor_proto_file(path, &n, max_bytes);
    if (name) *name = n;
    return AnyValue::of_tensor(std::move(t));
  }
  const std::string bytes = read_file_bytes(path, max_bytes);
  // Fields this message does not have mean the file is another kind of proto.
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto p;
    if (!p.ParseFromString(bytes) || !p.unknown_fields().empty())
      fail(ErrorCode::kInvalidModel, path + ": not a valid ONNX SequenceProto (the input is a sequence)");
    if (name) *name = p.name();
    return sequence_from_proto(p, path);
  }
  onnx::OptionalProto p;
  if (!p.ParseFromString(bytes) || !p.unknown_fields().empty())
    fail(ErrorCode::kInvalidModel, path + ": not a valid ONNX OptionalProto (the input is an optional)");
  if (name) *name = p.name();
  const bool want_seq = kind == ValueKind::kOptionalSequence;
  const auto want_type = want_seq ? onnx::OptionalProto::SEQUENCE : onnx::OptionalProto::TENSOR;
  const bool has_other = want_seq ? p.has_tensor_value() : p.has_sequence_value();
  if (has_other || p.has_sparse_tensor_value() || p.has_map_value() || p.has_optional_value() ||
      (p.elem_type() != want_type && !(p.elem_type() == onnx::OptionalProto::UNDEFINED && !p.has_tensor_value() &&
                                       !p.has_sequence_value())))
    fail(ErrorCode::kInvalidModel, path + ": an OptionalProto of " + onnx::OptionalProto::DataType_Name(p.elem_type()) +
                                       " where an " + value_kind_name(kind) + " is expected");
  if (kind == ValueKind::kOptionalTensor) {
    if (!p.has_tensor_value()) return AnyValue::none(kind, DType::kUndefined);
    return AnyValue::optional_of(AnyValue::of_tensor(tensor_from_proto(p.tensor_value(), dir_of(path))));
  }
  if (!p.has_sequence_value()) return AnyValue::none(kind, DType::kUndefined);
  return AnyValue::optional_of(sequence_from_proto(p.sequence_value(), path));
}

void write_tensor_proto_file(const std::string& path, const TensorView& t, const std::string& name) {
  onnx::TensorProto p;
  tensor_to_proto(t, name, &p);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(ErrorCode::kIo, "cannot create " + path + ": " + std::strerror(errno));
  if (!p.SerializeToOstream(&f) || !f.flush())
    fail(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
}

namespace {

void fill_sequence(const AnyValue& v, onnx::SequenceProto* p) {
  p->set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& e : v.elements) tensor_to_proto(e.view(), "", p->add_tensor_values());
}

template <typename Proto>
void write_proto(const std::string& path, const Proto& p) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(ErrorCode::kIo, "cannot create " + path + ": " + std::strerror(errno));
  if (!p.SerializeToOstream(&f) || !f.flush()) fail(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_value_proto_file(const std::string& path, const AnyValue& v, const std::string& name) {
  switch (v.kind) {
    case ValueKind::kTensor: return write_tensor_proto_file(path, v.tensor.view(), name);
    case ValueKind::kSequence: {
      onnx::SequenceProto p;
      p.set_name(name);
      fill_sequence(v, &p);
      return write_proto(path, p);
    }
    case ValueKind::kOptionalTensor:
    case ValueKind::kOptionalSequence: {
      onnx::OptionalProto p;
      p.set_name(name);
      const bool seq = v.kind == ValueKind::kOptionalSequence;
      p.set_elem_type(seq ? onnx::OptionalProto::SEQUENCE : onnx::OptionalProto::TENSOR);
      if (v.has_value && seq) fill_sequence(v, p.mutable_sequence_value());
      if (v.has_value && !seq) tensor_to_proto(v.tensor.view(), "", p.mutable_tensor_value());
      return write_proto(path, p);
    }
  }
}

}  // namespace gec::frontend
