// TypeProto conversions: see type_proto.h.
#include "frontend/onnx/type_proto.h"

#include <onnx/onnx_pb.h>

namespace gec::frontend {
namespace {

ir::TensorType tensor_type(const onnx::TypeProto_Tensor& tt) {
  ir::TensorType r;
  if (dtype_is_valid(tt.elem_type())) r.dtype = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape()) return r;
  r.has_shape = true;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) r.dims.push_back(ir::Dim{d.dim_value(), ""});
    else r.dims.push_back(ir::Dim{-1, d.has_dim_param() ? d.dim_param() : ""});
  }
  return r;
}

const char* case_name(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: return "tensor";
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "unknown";
  }
}

[[noreturn]] void unsupported(const std::string& what, const std::string& type) {
  fail(ErrorCode::kUnsupported, what + " has type " + type +
                                    ", which is not supported (tensors, sequences of tensors and optionals are)");
}

// sequence(tensor) -> element type; an element type left unset (ONNX shape
// inference could not tell) is an unknown tensor.
ir::TensorType sequence_type(const onnx::TypeProto_Sequence& s, const std::string& what) {
  if (!s.has_elem_type() || s.elem_type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return {};
  if (!s.elem_type().has_tensor_type()) unsupported(what, std::string("sequence(") + case_name(s.elem_type()) + ")");
  return tensor_type(s.elem_type().tensor_type());
}

}  // namespace

ir::TensorType type_from_proto(const onnx::TypeProto& t, const std::string& what) {
  switch (t.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET: return {};
    case onnx::TypeProto::kTensorType: return tensor_type(t.tensor_type());
    case onnx::TypeProto::kSequenceType: {
      ir::TensorType r = sequence_type(t.sequence_type(), what);
      r.kind = ValueKind::kSequence;
      return r;
    }
    case onnx::TypeProto::kOptionalType: {
      const onnx::TypeProto& e = t.optional_type().elem_type();
      ir::TensorType r;
      if (e.has_tensor_type()) {
        r = tensor_type(e.tensor_type());
        r.kind = ValueKind::kOptionalTensor;
      } else if (e.has_sequence_type()) {
        r = sequence_type(e.sequence_type(), what);
        r.kind = ValueKind::kOptionalSequence;
      } else {
        unsupported(what, std::string("optional(") + case_name(e) + ")");
      }
      return r;
    }
    default: unsupported(what, case_name(t));
  }
}

void type_to_proto(const ir::TensorType& t, onnx::TypeProto* out) {
  out->Clear();
  if (t.dtype == DType::kUndefined && t.kind == ValueKind::kTensor) return;
  onnx::TypeProto_Tensor* tt = nullptr;
  switch (t.kind) {
    case ValueKind::kTensor: tt = out->mutable_tensor_type(); break;
    case ValueKind::kSequence: tt = out->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type(); break;
    case ValueKind::kOptionalTensor:
      tt = out->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
      break;
    case ValueKind::kOptionalSequence:
      tt = out->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()->mutable_elem_type()
               ->mutable_tensor_type();
      break;
  }
  if (t.dtype == DType::kUndefined) return;
  tt->set_elem_type(static_cast<int32_t>(t.dtype));
  if (!t.has_shape) return;
  auto* s = tt->mutable_shape();
  for (const ir::Dim& dim : t.dims) {
    auto* sd = s->add_dim();
    if (dim.is_static()) sd->set_dim_value(dim.value);
    else if (!dim.param.empty()) sd->set_dim_param(dim.param);
  }
}

}  // namespace gec::frontend
