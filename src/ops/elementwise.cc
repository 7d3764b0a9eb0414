// Schemas of the elementwise op family (ai.onnx, opset-17 forms): unary math
// and activations, Clip, binary arithmetic with numpy multidirectional
// broadcasting, comparisons and logic (bool outputs), Where, the variadic
// Max/Min/Sum/Mean, and Cast/CastLike. Every one of them keeps or broadcasts
// its input shapes; only the output dtype differs between the groups.
#include <string>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void register_all(std::initializer_list<const char*> names, InferFn fn, const OpTraits& t) {
  for (const char* n : names) register_schema({.domain = "", .op_type = n, .infer = fn, .traits = t});
}

/// Inputs [first, last] (those present) must share input first's dtype.
void require_same_dtype(const InferContext& ctx, size_t first, size_t last) {
  const DType t = ctx.dtype(first);
  for (size_t i = first + 1; i <= last && i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && ctx.dtype(i) != t)
      ctx.error(std::string("input ") + std::to_string(i) + " has dtype " + dtype_name(ctx.dtype(i)) +
                ", expected " + dtype_name(t) + " like input " + std::to_string(first));
}

/// Broadcast shape of every present input in [first, num_inputs).
Shape broadcast_from(const InferContext& ctx, size_t first) {
  Shape s = ctx.shape(first);
  for (size_t i = first + 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) s = broadcast_shapes(ctx, s, ctx.shape(i));
  return s;
}

void infer_unary_to_bool(InferContext& ctx) { ctx.set_output(0, DType::kBool, ctx.shape(0)); }

void infer_same_dtype_broadcast(InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.error("needs at least one input");
  require_same_dtype(ctx, 0, ctx.num_inputs() - 1);
  ctx.set_output(0, ctx.dtype(0), broadcast_from(ctx, 0));
}

void infer_compare(InferContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  ctx.set_output(0, DType::kBool, broadcast_from(ctx, 0));
}

// Clip-13: min and max are optional scalar inputs of the data's dtype.
void infer_clip(InferContext& ctx) {
  require_same_dtype(ctx, 0, 2);
  for (size_t i = 1; i <= 2; ++i)
    if (ctx.has_input(i) && shape_numel(ctx.shape(i)) != 1)
      ctx.error("min/max must be scalars, got shape " + shape_str(ctx.shape(i)));
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

// Pow-15: base and exponent may have different dtypes; output is the base's.
void infer_pow(InferContext& ctx) { ctx.set_output(0, ctx.dtype(0), broadcast_from(ctx, 0)); }

// PRelu-16: slope broadcasts unidirectionally to X.
void infer_prelu(InferContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  const Shape s = broadcast_shapes(ctx, ctx.shape(0), ctx.shape(1));
  if (s != ctx.shape(0))
    ctx.error("slope shape " + shape_str(ctx.shape(1)) + " does not broadcast to X shape " +
              shape_str(ctx.shape(0)));
  ctx.set_output(0, ctx.dtype(0), s);
}

// Where-16: condition (bool), X, Y broadcast together; output has X's dtype.
void infer_where(InferContext& ctx) {
  if (ctx.dtype(0) != DType::kBool) ctx.error("condition must be bool");
  require_same_dtype(ctx, 1, 2);
  ctx.set_output(0, ctx.dtype(1), broadcast_from(ctx, 0));
}

// Cast-13: attribute `to` is a TensorProto dtype code.
void infer_cast(InferContext& ctx) {
  const int64_t to = ctx.node->get_int("to");
  if (!dtype_is_valid(static_cast<int32_t>(to)) || to == 0)
    ctx.error("attribute 'to' = " + std::to_string(to) + " is not a dtype");
  ctx.set_output(0, static_cast<DType>(to), ctx.shape(0));
}

// CastLike-15: output takes input 1's dtype and input 0's shape.
void infer_cast_like(InferContext& ctx) { ctx.set_output(0, ctx.dtype(1), ctx.shape(0)); }

// Traits. The in-place lists are what the kernels in kernels/cpu/elementwise/
// do in one pass (tests/memory_inplace_test.cc runs each in place); the
// layout pass-through and conv-epilogue sets are the ops whose blocked and
// post-op forms are tested (tests/layout_test.cc, tests/fusion_test.cc).
const bool kRegistered = [] {
  using P = PatternKind;
  using L = LayoutRule;
  const OpTraits unary = traits(P::kElementwise).in_place({0});
  const OpTraits unary_blocked = OpTraits(unary).with_layout(L::kUnaryPassThrough);
  const OpTraits activation = OpTraits(unary_blocked).epilogue();
  const OpTraits exp_log = OpTraits(unary).with_precision(PrecisionPolicy::kAlwaysFp32);
  // Activations a convolution can take as its epilogue; all run blocked.
  register_all({"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus",
                "Mish"},
               infer_same_as_input0, activation);
  register_all({"Clip"}, infer_clip, activation);
  register_all({"Celu", "Softsign", "Neg", "Abs", "Sqrt", "Erf", "Reciprocal"}, infer_same_as_input0,
               unary_blocked);
  register_all({"Exp"}, infer_same_as_input0, OpTraits(exp_log).with_layout(L::kUnaryPassThrough));
  register_all({"Log"}, infer_same_as_input0, exp_log);
  register_all({"Floor", "Ceil", "Round", "Sin", "Cos", "ThresholdedRelu", "Sign", "Not"}, infer_same_as_input0,
               unary);
  register_all({"Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Shrink"},
               infer_same_as_input0, traits(P::kElementwise));
  register_all({"IsNaN", "IsInf"}, infer_unary_to_bool, traits(P::kElementwise));
  // Binary and variadic: the kernels fold out = in0 op in1, then out = out op
  // in_k, so only inputs 0 and 1 are read before the output is first written.
  const OpTraits binary = traits(P::kBroadcast).in_place({0, 1});
  register_all({"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"}, infer_same_dtype_broadcast,
               OpTraits(binary).with_layout(L::kBinaryPassThrough));
  register_all({"Mod"}, infer_same_dtype_broadcast, binary);
  register_all({"BitShift"}, infer_same_dtype_broadcast, traits(P::kBroadcast));
  register_all({"Pow"}, infer_pow, traits(P::kBroadcast).in_place({0}));  // the exponent may have another dtype
  register_all({"PRelu"}, infer_prelu, binary);
  register_all({"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}, infer_compare, traits(P::kBroadcast));
  register_all({"And", "Or", "Xor"}, infer_compare, binary);
  // ai.onnx 18. Models reach them once the importer accepts opset 18 (it
  // stops at 17 today: frontend/onnx/importer.cc kMaxOpset).
  register_all({"BitwiseAnd", "BitwiseOr", "BitwiseXor"}, infer_same_dtype_broadcast, binary);
  register_all({"BitwiseNot"}, infer_same_as_input0, unary);
  register_all({"Where"}, infer_where, traits(P::kBroadcast).in_place({1, 2}));
  register_all({"Cast"}, infer_cast, traits(P::kElementwise));
  register_all({"CastLike"}, infer_cast_like, traits(P::kElementwise));
  return true;
}();

}  // namespace
}  // namespace gec::ops
