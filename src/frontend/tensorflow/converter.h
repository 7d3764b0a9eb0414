// TensorFlow GraphDef -> ir::Graph: the state one import keeps and the
// helpers every op converter (ops.cc) uses.
//
// Layout. TensorFlow's image ops default to NHWC; GraphEngine's
// convolutions, pools and resizes run NCHW. Each TensorFlow tensor is held
// either in its own (logical) layout, or, for a 4-D NHWC tensor, as its
// NCHW transpose ("nchw" entries). NHWC ops take their inputs as NCHW and
// make nchw entries; elementwise ops, BiasAdd, Concat, Pad, reductions and
// resizes keep nchw entries nchw (remapping axes and constants); every
// other op takes the logical layout, which costs one Transpose (made once
// per tensor and cached). Graph outputs are logical. So a chain of NHWC
// convolutions has one Transpose at the input and one where the chain ends
// in an op that needs the logical layout.
//
// Types. Every node the converters emit gets its output types from the op's
// own infer function (ops/) right away, and a node whose inputs are all
// constants is evaluated on the spot (kernels::evaluate_node) when its
// result is not much larger than its inputs: filter transposes, shape
// arithmetic and axis computations become constants during import, at every
// -O level, so converters can read them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tf_graph.pb.h"

namespace gec::frontend::tf {

/// One TensorFlow tensor ("node:k") as imported.
struct Entry {
  ir::Value* v = nullptr;
  /// v holds a 4-D NHWC tensor transposed to NCHW.
  bool nchw = false;
  ir::Value* converted = nullptr;  // the other layout, once made
};

class Converter {
 public:
  Converter(ir::Graph& g, const std::map<std::string, const gec::tf::NodeDef*>& nodes) : g_(g), nodes_(nodes) {}

  // ---- the node being converted ----
  const gec::tf::NodeDef* node = nullptr;
  /// "node 'name' (Op)" for messages.
  std::string describe() const;
  [[noreturn]] void error(const std::string& msg) const;        // kInvalidModel
  [[noreturn]] void unsupported(const std::string& msg) const;  // kUnsupported
  /// The data inputs of the node (control inputs "^x" left out), as tensor names.
  const std::vector<std::string>& inputs() const { return data_inputs_; }
  size_t num_inputs() const { return data_inputs_.size(); }
  void begin_node(const gec::tf::NodeDef& n);

  // ---- attributes ----
  bool has_attr(const std::string& n) const;
  int64_t attr_i(const std::string& n, int64_t def) const;
  float attr_f(const std::string& n, float def) const;
  bool attr_b(const std::string& n, bool def) const;
  std::string attr_s(const std::string& n, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& n) const;
  std::vector<std::string> attr_strings(const std::string& n) const;
  DType attr_type(const std::string& n, DType def) const;
  /// data_format attr: true for NHWC / NDHWC (the default), false for NCHW.
  bool nhwc() const;

  // ---- inputs ----
  /// Input i in TensorFlow's layout (a Transpose back from NCHW if needed).
  ir::Value* in(size_t i);
  /// Input i (4-D) as NCHW: its value for nchw entries, else for NHWC data a
  /// Transpose to NCHW.
  ir::Value* in_nchw(size_t i);
  /// Input i is held as NCHW.
  bool in_is_nchw(size_t i);
  /// Input i as a constant (its data), else kUnsupported saying which input
  /// must be constant.
  const Tensor& const_in(size_t i, const char* what);
  std::vector<int64_t> const_ints(size_t i, const char* what);
  /// Input i as one constant integer (a scalar or a 1-element tensor), else
  /// kUnsupported / kInvalidModel naming `what`.
  int64_t const_int(size_t i, const char* what);
  /// The static shape of a value, or kUnsupported naming the node (give
  /// --input-shape).
  Shape shape_of(const ir::Value* v) const;
  int rank_of(const ir::Value* v) const;  // -1 when unknown

  // ---- outputs ----
  /// Binds output k of the node.
  void set_output(size_t k, ir::Value* v, bool nchw = false);

  // ---- emitting IR ----
  /// Adds op_type(inputs) with `attrs` (nullptr input = omitted), infers its
  /// output types, folds it when every input is constant; returns its outputs.
  std::vector<ir::Value*> emit_n(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                                 std::vector<ir::Attribute> attrs, size_t num_outputs,
                                 const std::string& domain = "");
  ir::Value* emit(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                  std::vector<ir::Attribute> attrs = {});
  ir::Value* constant(const Tensor& t, const std::string& hint);
  ir::Value* const_i64(const std::vector<int64_t>& v, const std::string& hint);
  ir::Value* scalar_f32(float v, const std::string& hint);
  /// A scalar constant of `dt` holding `v`.
  ir::Value* scalar_of(DType dt, double v, const std::string& hint);
  ir::Value* transpose(ir::Value* v, const std::vector<int64_t>& perm);
  ir::Value* cast(ir::Value* v, DType to);
  /// int32 shape/index tensors become int64 (ONNX ops take int64).
  ir::Value* to_i64(ir::Value* v);

  // ---- layout helpers ----
  /// For elementwise ops over inputs `idx`: true when the result should be
  /// NCHW (some input is); fills `out` with each input in that layout
  /// (lower-rank operands aligned as NumPy broadcasting aligns them with an
  /// NHWC tensor, then permuted).
  bool broadcast_inputs(const std::vector<size_t>& idx, std::vector<ir::Value*>& out);
  /// An NHWC axis (negative counts from the end of rank 4) as an NCHW axis.
  static int64_t nhwc_axis_to_nchw(int64_t axis);

  ir::Graph& graph() { return g_; }
  std::map<std::string, Entry>& tensors() { return tensors_; }
  /// Values that a TensorFlow tensor name refers to (for outputs).
  ir::Value* logical_of(const std::string& tensor);

  /// Name of output k's value (the TensorFlow tensor name "node:k").
  std::string tensor_name(size_t k) const;

 private:
  Entry& entry(size_t i);
  ir::Value* to_nchw_value(Entry& e, const std::string& name);
  ir::Value* to_logical_value(Entry& e, const std::string& name);

  ir::Graph& g_;
  const std::map<std::string, const gec::tf::NodeDef*>& nodes_;
  std::map<std::string, Entry> tensors_;
  std::vector<std::string> data_inputs_;
};

/// Converts one TensorFlow op: reads c.node and its inputs, binds its outputs.
using OpConverter = std::function<void(Converter& c)>;
/// The converter of each supported TensorFlow op (ops.cc); null when none.
const OpConverter* find_converter(const std::string& op);
/// Every supported TensorFlow op, sorted (for `gec ops --tensorflow`).
std::vector<std::string> supported_ops();

/// gec's dtype for a TensorFlow DataType; kUndefined when there is none
/// (quantized, resource, variant types).
DType dtype_of(int tf_dtype);
/// A TensorFlow TensorProto's data as a Tensor (tensor_content, or the typed
/// *_val fields, a single value filling the shape). Errors: kInvalidModel
/// naming `what` for a bad dtype, shape or data size.
Tensor tensor_of(const gec::tf::TensorProto& t, const std::string& what);
/// Nodes emitted during import are folded when their results are at most
/// this much larger than their inputs (a Fill or Range of a few bytes stays a
/// node when it would make a large constant); large splat Consts stay
/// ConstantOfShape nodes by the same bound.
constexpr int64_t kMaxFoldGrowthBytes = 1 << 20;
/// Largest constant a TensorFlow model may declare (logical bytes, 4 GiB);
/// a larger one is kUnsupported.
constexpr int64_t kMaxConstantBytes = int64_t{1} << 32;
/// A splat constant (typed fields holding at most one value, no
/// tensor_content) larger than `min_bytes`: true, with its one value (a
/// 1-element tensor; zero when the field is empty) and its shape, so that the
/// importer emits ConstantOfShape instead of materialising it. Errors as
/// tensor_of.
bool splat_of(const gec::tf::TensorProto& t, const std::string& what, int64_t min_bytes, Tensor* value, Shape* shape);

}  // namespace gec::frontend::tf
