// Per-op knowledge that does not depend on the target: how an op's output
// types follow from its inputs (shape inference), and whether it may be
// constant folded or merged by CSE. One registration per canonical op; the
// frontend has already rewritten older opset forms into the canonical one
// (see frontend/onnx/canonicalize.cc), so infer functions follow the newest
// ONNX operator text up to opset 17.
//
// The same infer function serves the compiler (static shapes, with constant
// input values where known) and the runtime's dynamic-shape path (actual
// input tensors).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::ops {

/// Thrown by InferContext::value() when an input's data is needed to know the
/// output shape but is not known (compile time, non-constant input). The
/// caller then treats the outputs as dynamic.
struct NeedsValue {};

/// Inputs and outputs of one shape inference call.
///
/// inputs[i] is null for an omitted optional input; otherwise its dtype and
/// shape are known and `data` is the element data, or null when the value is
/// not known yet (compile time).
struct InferContext {
  const ir::Node* node = nullptr;
  std::vector<const TensorView*> inputs;
  /// Filled by the infer function: one per node output.
  std::vector<DType> out_dtypes;
  std::vector<Shape> out_shapes;

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const Shape& shape(size_t i) const;
  DType dtype(size_t i) const;
  /// Input i with its data; throws NeedsValue if the data is unknown.
  const TensorView& value(size_t i) const;
  /// Reads an integer tensor input (int32/int64) as int64 values.
  std::vector<int64_t> ints_value(size_t i) const;
  void set_output(size_t i, DType dt, Shape s);
  /// Throws gec::Error(kInvalidModel) "node 'x' (Op): <msg>".
  [[noreturn]] void error(const std::string& msg) const;
};

using InferFn = std::function<void(InferContext&)>;

struct OpSchema {
  std::string domain;   // "" = ai.onnx
  std::string op_type;
  InferFn infer;
  /// False for ops whose outputs change between runs (RandomNormal, ...):
  /// never constant folded or merged by CSE.
  bool deterministic = true;
  /// True when the output shape is only known by running the kernel (If,
  /// Loop, NonZero, ...): `infer` is not called at run time and the kernel
  /// allocates its outputs through KernelContext::allocate_output.
  bool shape_from_kernel = false;
};

/// Looks up a registered op; null when unknown.
const OpSchema* find_schema(const std::string& domain, const std::string& op_type);
void register_schema(OpSchema s);
/// All registered (domain, op_type) pairs, sorted.
std::vector<std::pair<std::string, std::string>> registered_ops();

/// Static registration: GEC_REGISTER_OP(Relu, { .domain = "", ... }) at file
/// scope in src/ops/*.cc.
struct OpRegistrar {
  explicit OpRegistrar(OpSchema s) { register_schema(std::move(s)); }
};
#define GEC_OP_CONCAT2(a, b) a##b
#define GEC_OP_CONCAT(a, b) GEC_OP_CONCAT2(a, b)
#define GEC_REGISTER_OP(...) \
  static ::gec::ops::OpRegistrar GEC_OP_CONCAT(gec_op_reg_, __LINE__)(__VA_ARGS__)

/// Checks that every value is of the kind its ops make and take (ONNX IR
/// types: sequence ops take and make sequences, Optional makes optionals,
/// Identity/If/Loop pass kinds through, every other op works on tensors),
/// in `g` and its subgraphs. With `fix_untyped`, a value ONNX gave no type
/// takes the kind its producer makes. Errors: kInvalidModel naming the node
/// and the value (e.g. a sequence declared as a tensor graph output).
void check_value_kinds(ir::Graph& g, bool fix_untyped);

// ---- helpers shared by infer functions --------------------------------------

/// Numpy-style multidirectional broadcast (ONNX "Broadcasting in ONNX");
/// throws via ctx.error when incompatible.
Shape broadcast_shapes(const InferContext& ctx, const Shape& a, const Shape& b);
/// Normalizes a possibly negative axis into [0, rank); error when out of range.
int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank);
/// Output = input 0's dtype and shape (unary elementwise ops).
void infer_same_as_input0(InferContext& ctx);
/// Output dtype = input 0's, shape = broadcast of all inputs.
void infer_broadcast(InferContext& ctx);

}  // namespace gec::ops
