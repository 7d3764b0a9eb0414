// Tensors as the runtime and kernels see them: a dtype, a dense row-major
// shape and a pointer. TensorView never owns; Tensor owns a 64-byte-aligned
// buffer (or shares someone else's, e.g. a memory-mapped .gom).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gec/dtype.h"

namespace gec {

/// Dense row-major dims; a rank-0 shape ({}) is a scalar with one element.
using Shape = std::vector<int64_t>;

/// Product of dims (1 for a scalar, 0 if any dim is 0).
int64_t shape_numel(const Shape& s);

/// "[1,3,224,224]".
std::string shape_str(const Shape& s);

/// Non-owning view of a dense row-major tensor.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kUndefined;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

/// A tensor that keeps its storage alive. Storage is 64-byte aligned when
/// allocated here; string tensors hold constructed std::string elements.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates zero-filled storage for numel(shape) elements.
  Tensor(DType dtype, Shape shape);
  /// Shares external storage kept alive by `owner` (e.g. an mmapped file).
  Tensor(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_numel(shape_); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  TensorView view() const { return TensorView{data_, dtype_, shape_}; }
  bool defined() const { return dtype_ != DType::kUndefined; }

  /// Allocates storage for numel(shape) elements without zeroing it (string
  /// tensors still get empty strings): for callers that overwrite every
  /// element at once, where zero-filling would be a wasted pass.
  static Tensor uninitialized(DType dtype, Shape shape);
  /// Deep copy of a view into new storage.
  static Tensor copy_of(const TensorView& v);
  /// Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

/// What kind of value a model input, output or intermediate is: a tensor or
/// one of the ONNX IR's non-tensor types (ONNX IR spec, "Types": sequence(T),
/// optional(T) with T a tensor or a sequence of tensors).
enum class ValueKind : int32_t {
  kTensor = 0,
  kSequence = 1,          // sequence(tensor(T))
  kOptionalTensor = 2,    // optional(tensor(T))
  kOptionalSequence = 3,  // optional(sequence(tensor(T)))
};

/// "tensor", "sequence", "optional(tensor)", "optional(sequence)".
const char* value_kind_name(ValueKind k);
/// True for kOptionalTensor and kOptionalSequence.
inline bool is_optional(ValueKind k) { return k == ValueKind::kOptionalTensor || k == ValueKind::kOptionalSequence; }
/// The text of a value type from its tensor (element) type text T: T,
/// "seq(T)", "optional(T)" or "optional(seq(T))".
std::string value_type_str(ValueKind k, const std::string& tensor_type);

/// A value of any ONNX type, as the runtime holds sequences and optionals
/// (and as the Session API passes them):
///  - kTensor: `tensor`.
///  - kSequence: `elements`, in order; every element has dtype `elem_dtype`,
///    their shapes may differ (ONNX SequenceProto). Possibly empty.
///  - kOptionalTensor / kOptionalSequence: `has_value` false is ONNX's None;
///    otherwise the held value is `tensor` / `elements` as above.
/// Sequence and optional values are immutable once made: kernels share
/// elements between values (Tensor copies share storage) and never write them.
struct AnyValue {
  ValueKind kind = ValueKind::kTensor;
  DType elem_dtype = DType::kUndefined;
  bool has_value = true;
  Tensor tensor;
  std::vector<Tensor> elements;

  static AnyValue of_tensor(Tensor t);
  static AnyValue sequence(DType elem_dtype, std::vector<Tensor> elements);
  /// An optional holding `v` (a tensor or a sequence value).
  static AnyValue optional_of(const AnyValue& v);
  /// ONNX None of the given optional kind.
  static AnyValue none(ValueKind optional_kind, DType elem_dtype);
  bool is_sequence_like() const { return kind == ValueKind::kSequence || kind == ValueKind::kOptionalSequence; }
  /// "seq(float32)[3]", "optional(float32[2,3])", "optional(none of float32)", "float32[2,3]".
  std::string str() const;
};

/// Copies element data between views of equal dtype and numel (strings too).
void copy_tensor_data(const TensorView& src, const TensorView& dst);

/// 64-byte aligned allocation freed with aligned_free; never returns null
/// (throws gec::Error on exhaustion). Size 0 returns a valid pointer.
void* aligned_alloc64(size_t bytes);
void aligned_free(void* p);

}  // namespace gec
