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
#include "ops/domain.h"

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

// ---- op traits: what every consumer of op knowledge reads ---------------------
//
// The planner, the layout pass, the fusion rules and the tests read these from
// the op's one registration; no other file keeps a list of op names for them.

/// How an op may fuse with its neighbours: TVM's OpPatternKind
/// (include/tvm/relay/op_attr_types.h), the ranks automatic fusion groups by.
enum class PatternKind : uint8_t {
  kUnset,            ///< not declared: tests/op_traits_test.cc fails
  kElementwise,      ///< out[i] from in[i] of same-shaped inputs
  kBroadcast,        ///< out[i] from broadcast elements of the inputs
  kInjective,        ///< each output element is one input element (Transpose, Slice, Gather, ...)
  kReduction,        ///< reduces along axes (ReduceSum, GlobalAveragePool, ArgMax, ...)
  kOutEwiseFusable,  ///< heavy op whose output can take an elementwise epilogue (Conv, MatMul)
  kOpaque,           ///< anything else: never fused automatically
};
const char* pattern_kind_name(PatternKind k);

/// How an op treats float tensors held in a non-plain layout, nChw16c or nhwc
/// (ops/layout.h, schedule/layout_assignment.cc).
enum class LayoutRule : uint8_t {
  kPlainOnly,      ///< reads and writes plain (NCHW) tensors only
  kConv,           ///< oneDNN convolution: may read and write nChw16c or nhwc
  kUnaryPassThrough,   ///< input 0's layout to output 0; other inputs one-element constants
  kBinaryPassThrough,  ///< same-shaped inputs of one layout (or per-channel / one-element ones) to output 0; the kernel honours output_layout(0) (kernels/cpu/common/layout_broadcast.h)
  kPool,           ///< MaxPool / AveragePool (native.pool in nChw16c / nhwc): blocked in, blocked out (either layout from either when C % 16 == 0)
  kGlobalPool,     ///< reads blocked, writes [N,C,1,1] (the same bytes either way)
  kConvTranspose,  ///< reads input 0 nhwc where the target's layout query has a kernel for it, writes plain
  kConcat,         ///< Concat on axis 1: nChw16c inputs with C % 16 == 0 (in place), or nhwc ones (copied)
  kResize,         ///< Resize of H and W only: input 0 blocked in, output 0 blocked out, where the target's layout query has a kernel
  kElementwiseGroup,  ///< as kBinaryPassThrough, to every output (FusedElementwise)
  kChannelMove,    ///< Slice, Split, ChannelShuffle: data inputs and outputs in one layout: plain, nhwc, or nChw16c where the target's layout query says the channel ranges are whole 16-channel blocks; index inputs plain
  kTranspose,      ///< Transpose of a [N,C,H,W]: reads input 0 in the layout it arrives in (nChw16c or nhwc: its kernel permutes the held dims, ops::held_transpose), writes plain or nhwc
};

/// Where mixed precision may run an op in a lower precision (bf16).
enum class PrecisionPolicy : uint8_t {
  kFollowInputs,  ///< computes in its inputs' dtype (data movement, integer and bool ops)
  kAlwaysFp32,    ///< keeps fp32 (Softmax, LayerNormalization and the other normalizations, Exp/Log)
  kMayLower,      ///< may run in bf16 (Conv, MatMul, Gemm and other dense compute)
};

/// Output `output` and input `input` of one node.
struct IoPair {
  int input = 0;
  int output = 0;
  /// may_inplace only: the node reads its other inputs throughout while it
  /// writes the output (a convolution's residual), so the output may take
  /// this input's storage only when no other input shares it.
  bool alone = false;
  bool operator==(const IoPair& o) const { return input == o.input && output == o.output && alone == o.alone; }
};

struct OpTraits {
  PatternKind pattern = PatternKind::kUnset;
  /// Outputs that are views of an input's bytes (same size, no computation:
  /// Reshape, Flatten, Squeeze, Unsqueeze, Identity), as ONNX Runtime's
  /// kernel `Alias`; the planner places them on the input.
  std::vector<IoPair> alias;
  /// Inputs the output may overwrite when the input dies at this node (ONNX
  /// Runtime's `MayInplace`): the kernel reads element i of the input before
  /// it writes element i of the output, in one pass (IoPair::alone: and no
  /// other input of the node shares the storage).
  /// tests/memory_inplace_test.cc runs every op that declares one in place.
  std::vector<IoPair> may_inplace;
  LayoutRule layout = LayoutRule::kPlainOnly;
  PrecisionPolicy precision = PrecisionPolicy::kFollowInputs;
  /// May run as an eltwise post-op of a convolution (FusedConv's activation).
  bool conv_epilogue = false;

  // Chainable setters for registrations: traits(kBroadcast).in_place({0, 1}).
  OpTraits& in_place(std::initializer_list<int> inputs) {
    for (int i : inputs) may_inplace.push_back({i, 0});
    return *this;
  }
  /// In place over inputs that no other input of the node may share
  /// (IoPair::alone): FusedConv's residual Z, read element by element into
  /// the sum while X is read throughout.
  OpTraits& in_place_alone(std::initializer_list<int> inputs) {
    for (int i : inputs) may_inplace.push_back({i, 0, true});
    return *this;
  }
  OpTraits& aliases_input0() { alias.push_back({0, 0}); return *this; }
  OpTraits& with_layout(LayoutRule r) { layout = r; return *this; }
  OpTraits& with_precision(PrecisionPolicy p) { precision = p; return *this; }
  OpTraits& epilogue() { conv_epilogue = true; return *this; }
};

/// Traits of the given pattern kind, everything else at its default.
inline OpTraits traits(PatternKind k) {
  OpTraits t;
  t.pattern = k;
  return t;
}

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
  OpTraits traits;
};

/// Looks up a registered op ("ai.onnx" and "" are the same domain); null when unknown.
const OpSchema* find_schema(const std::string& domain, const std::string& op_type);
/// The traits of `n`'s op; default traits (kUnset, nothing in place) for an
/// op with no schema.
const OpTraits& traits_of(const ir::Node& n);
/// Registers an op. A second registration of the same (domain, op_type) is a
/// programming error: gec::Error(kInternal) naming the op.
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

/// Runs `n`'s infer function on its inputs' static types (and constant
/// data), as shape inference and the TensorFlow importer do. `views` holds
/// the inputs' views for the call (and for a following evaluate_node: its
/// ctx.inputs point into them). Returns false, leaving `ctx` unusable, when
/// the op has no schema or takes its shape from its kernel, an input's
/// shape is not static, or infer needs an input value that is not known; a
/// gec::Error from infer (an inconsistent model) propagates.
bool infer_static_types(const ir::Node& n, InferContext& ctx, std::vector<TensorView>& views);

/// Checks that every value is of the kind its ops make and take (ONNX IR
/// types: sequence ops take and make sequences, Optional makes optionals,
/// Identity/If/Loop pass kinds through, every other op works on tensors),
/// in `g` and its subgraphs. With `fix_untyped`, a value ONNX gave no type
/// takes the kind its producer makes. Errors: kInvalidModel naming the node
/// and the value (e.g. a sequence declared as a tensor graph output).
void check_value_kinds(ir::Graph& g, bool fix_untyped);
/// check_value_kinds(g, false) on a graph that must not change (the runtime's).
inline void check_value_kinds(const ir::Graph& g) { check_value_kinds(const_cast<ir::Graph&>(g), false); }

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
