// Tensor storage: 64-byte aligned, zero-filled; strings constructed in place.
#include "gec/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "gec/error.h"

namespace gec {

// Far beyond any real tensor, far below int64 overflow: a count above it can
// only come from a corrupt or hostile model, and multiplying it by an element
// size must stay exact.
constexpr int64_t kMaxElements = int64_t{1} << 48;

int64_t shape_numel(const Shape& s) {
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) fail(ErrorCode::kInternal, "shape " + shape_str(s) + " has a negative dim");
    empty |= d == 0;
  }
  if (empty) return 0;  // the other dims may be anything non-negative
  int64_t n = 1;
  for (int64_t d : s) {
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements)
      fail(ErrorCode::kInternal, "shape " + shape_str(s) + " has more than 2^48 elements");
  }
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

void* aligned_alloc64(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) fail(ErrorCode::kInternal, "out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void aligned_free(void* p) { std::free(p); }

Tensor::Tensor(DType dtype, Shape shape) : Tensor(uninitialized(dtype, std::move(shape))) {
  if (dtype_ != DType::kString) std::memset(data_, 0, bytes());
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  for (int64_t d : shape)
    if (d < 0) fail(ErrorCode::kInternal, "tensor with negative dim " + shape_str(shape));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const int64_t n = t.numel();
  if (dtype == DType::kString) {
    auto* arr = new std::string[static_cast<size_t>(n > 0 ? n : 1)];
    t.data_ = arr;
    t.owner_ = std::shared_ptr<void>(arr, [](void* p) { delete[] static_cast<std::string*>(p); });
  } else {
    void* p = aligned_alloc64(t.bytes());
    t.data_ = p;
    t.owner_ = std::shared_ptr<void>(p, aligned_free);
  }
  return t;
}

Tensor::Tensor(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner)
    : dtype_(dtype), shape_(std::move(shape)), data_(data), owner_(std::move(owner)) {}

Tensor Tensor::copy_of(const TensorView& v) {
  Tensor t = uninitialized(v.dtype, v.shape);
  copy_tensor_data(v, t.view());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  GEC_CHECK(shape_numel(shape) == numel(), "reshape changes element count");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

void copy_tensor_data(const TensorView& src, const TensorView& dst) {
  GEC_CHECK(src.dtype == dst.dtype && src.numel() == dst.numel(),
            "copy between mismatched tensors");
  if (src.data == dst.data) return;
  if (src.dtype == DType::kString) {
    const auto* s = src.as<std::string>();
    auto* d = dst.as<std::string>();
    for (int64_t i = 0; i < src.numel(); ++i) d[i] = s[i];
  } else if (src.bytes() > 0) {
    std::memmove(dst.data, src.data, src.bytes());
  }
}

}  // namespace gec

// ---- non-tensor values ------------------------------------------------------------

namespace gec {

const char* value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kOptionalTensor: return "optional(tensor)";
    case ValueKind::kOptionalSequence: return "optional(sequence)";
  }
  return "?";
}

std::string value_type_str(ValueKind k, const std::string& t) {
  switch (k) {
    case ValueKind::kTensor: return t;
    case ValueKind::kSequence: return "seq(" + t + ")";
    case ValueKind::kOptionalTensor: return "optional(" + t + ")";
    case ValueKind::kOptionalSequence: return "optional(seq(" + t + "))";
  }
  return t;
}

AnyValue AnyValue::of_tensor(Tensor t) {
  AnyValue v;
  v.kind = ValueKind::kTensor;
  v.elem_dtype = t.dtype();
  v.tensor = std::move(t);
  return v;
}

AnyValue AnyValue::sequence(DType elem_dtype, std::vector<Tensor> elements) {
  AnyValue v;
  v.kind = ValueKind::kSequence;
  v.elem_dtype = elem_dtype;
  v.elements = std::move(elements);
  return v;
}

AnyValue AnyValue::optional_of(const AnyValue& in) {
  GEC_CHECK(in.kind == ValueKind::kTensor || in.kind == ValueKind::kSequence,
            std::string("optional of a ") + value_kind_name(in.kind));
  AnyValue v = in;
  v.kind = in.kind == ValueKind::kTensor ? ValueKind::kOptionalTensor : ValueKind::kOptionalSequence;
  v.has_value = true;
  return v;
}

AnyValue AnyValue::none(ValueKind optional_kind, DType elem_dtype) {
  GEC_CHECK(optional_kind == ValueKind::kOptionalTensor || optional_kind == ValueKind::kOptionalSequence,
            std::string("none of kind ") + value_kind_name(optional_kind));
  AnyValue v;
  v.kind = optional_kind;
  v.elem_dtype = elem_dtype;
  v.has_value = false;
  return v;
}

std::string AnyValue::str() const {
  const bool optional = is_optional(kind);
  if (optional && !has_value) return std::string("optional(none of ") + dtype_name(elem_dtype) + ")";
  std::string inner;
  if (is_sequence_like()) {
    inner = std::string("seq(") + dtype_name(elem_dtype) + ")[" + std::to_string(elements.size()) + "]";
  } else {
    inner = std::string(dtype_name(tensor.dtype())) + shape_str(tensor.shape());
  }
  return optional ? "optional(" + inner + ")" : inner;
}

}  // namespace gec
