// Which element dtypes each CPU kernel takes for its main data input
// (input 0: ONNX's type constraint "T" of the op), for `gec ops`. Kept next
// to the kernels; tests/op_dtypes_test.cc checks it against the ONNX
// conformance models that pass.
//
// Read from the kernels under src/kernels/cpu/ (their dtype dispatch, see
// common/dtype_dispatch.h, and their explicit dtype checks) together with
// the op schemas' infer functions (src/ops/), which refuse some dtypes
// before a kernel is made. An entry lists a dtype when a model whose input 0
// has that dtype runs with the op's usual attributes; where only some
// attribute values accept a dtype, the comment on the entry says which.
// Sequence and optional ops list the element dtypes of the sequence or
// optional they take. When input 0 is not a data tensor the comment says
// what it is (a shape, a size, a condition, a trip count).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gec/dtype.h"
#include "kernels/kernel.h"

namespace gec::kernels {
namespace {

using D = DType;

// ---- named sets ---------------------------------------------------------------------

// float32 only: the oneDNN kernels (require_f32) and the native float32 loops.
const std::vector<DType> kF32 = {D::kFloat32};
// FusedElementwise's registers.
const std::vector<DType> kFusedElementwise = {D::kFloat32, D::kBool, D::kInt32, D::kInt64};
// dispatch_float.
const std::vector<DType> kFloat = {D::kFloat32, D::kFloat64};
// Native loops over every float dtype (float16/bfloat16 through float32).
const std::vector<DType> kFloatHalf = {D::kFloat32, D::kFloat64, D::kFloat16, D::kBFloat16};
// dispatch_arith.
const std::vector<DType> kArith = {D::kFloat32, D::kFloat64, D::kInt8,   D::kInt16,  D::kInt32,
                                   D::kInt64,   D::kUInt8,   D::kUInt16, D::kUInt32, D::kUInt64};
// dispatch_arith on signed types (Neg refuses unsigned ones).
const std::vector<DType> kSignedArith = {D::kFloat32, D::kFloat64, D::kInt8, D::kInt16, D::kInt32, D::kInt64};
// dispatch_arith plus float16/bfloat16 computed in float32 (elementwise_half.h).
const std::vector<DType> kArithHalf = {D::kFloat32, D::kFloat64, D::kInt8,    D::kInt16,  D::kInt32,
                                       D::kInt64,   D::kUInt8,   D::kUInt16,  D::kUInt32, D::kUInt64,
                                       D::kFloat16, D::kBFloat16};
// kArithHalf and bool.
const std::vector<DType> kArithHalfBool = {D::kFloat32, D::kFloat64, D::kInt8,    D::kInt16,    D::kInt32,
                                           D::kInt64,   D::kUInt8,   D::kUInt16,  D::kUInt32,   D::kUInt64,
                                           D::kFloat16, D::kBFloat16, D::kBool};
// dispatch_arith and bool.
const std::vector<DType> kArithBool = {D::kFloat32, D::kFloat64, D::kInt8,   D::kInt16,  D::kInt32, D::kInt64,
                                       D::kUInt8,   D::kUInt16,  D::kUInt32, D::kUInt64, D::kBool};
// dispatch_arith, bool and string (Unique).
const std::vector<DType> kArithBoolString = {D::kFloat32, D::kFloat64, D::kInt8,   D::kInt16,  D::kInt32,
                                             D::kInt64,   D::kUInt8,   D::kUInt16, D::kUInt32, D::kUInt64,
                                             D::kBool,    D::kString};
// dispatch_integer.
const std::vector<DType> kInteger = {D::kInt8,  D::kInt16,  D::kInt32,  D::kInt64,
                                     D::kUInt8, D::kUInt16, D::kUInt32, D::kUInt64};
const std::vector<DType> kUnsigned = {D::kUInt8, D::kUInt16, D::kUInt32, D::kUInt64};
const std::vector<DType> kBool = {D::kBool};
const std::vector<DType> kString = {D::kString};
// Shapes, sizes, counts and trip counts: int32 or int64.
const std::vector<DType> kIndex = {D::kInt32, D::kInt64};
// 8-bit quantized data.
const std::vector<DType> kQuant8 = {D::kUInt8, D::kInt8};
// Cast / CastLike sources: every dtype but complex (refused by the factory).
const std::vector<DType> kCastable = {D::kFloat32, D::kFloat64, D::kInt8,    D::kInt16,    D::kInt32,
                                      D::kInt64,   D::kUInt8,   D::kUInt16,  D::kUInt32,   D::kUInt64,
                                      D::kFloat16, D::kBFloat16, D::kBool,   D::kString};
// dispatch_by_size: elements of 1, 2, 4 or 8 bytes and strings (not complex128).
const std::vector<DType> kBySize = {D::kFloat32, D::kFloat64, D::kInt8,     D::kInt16,  D::kInt32,
                                    D::kInt64,   D::kUInt8,   D::kUInt16,   D::kUInt32, D::kUInt64,
                                    D::kFloat16, D::kBFloat16, D::kBool,    D::kString, D::kComplex64};
// Every dtype: kernels that copy whole tensors (copy_tensor_data, strings by
// value) or read only the shape.
const std::vector<DType> kAny = {D::kFloat32, D::kFloat64,  D::kInt8,    D::kInt16,     D::kInt32,    D::kInt64,
                                 D::kUInt8,   D::kUInt16,   D::kUInt32,  D::kUInt64,    D::kFloat16,  D::kBFloat16,
                                 D::kBool,    D::kString,   D::kComplex64, D::kComplex128};
// NonZero: 1..8-byte elements, no strings.
const std::vector<DType> kNonZero = {D::kFloat32, D::kFloat64, D::kInt8,    D::kInt16,    D::kInt32,
                                     D::kInt64,   D::kUInt8,   D::kUInt16,  D::kUInt32,   D::kUInt64,
                                     D::kFloat16, D::kBFloat16, D::kBool,   D::kComplex64};
// Range (its schema): float32, float64, int16, int32, int64.
const std::vector<DType> kRange = {D::kFloat32, D::kFloat64, D::kInt16, D::kInt32, D::kInt64};
// If's condition (read_condition in control_flow.cc).
const std::vector<DType> kCondition = {D::kBool, D::kUInt8, D::kInt8, D::kInt32, D::kInt64, D::kFloat32};

}  // namespace

const std::vector<DType>* input0_dtypes(const std::string& domain, const std::string& op_type) {
  static const std::map<std::pair<std::string, std::string>, std::vector<DType>> table = {
      // ---- elementwise unary (elementwise_unary.cc) ----
      {{"", "Abs"}, kArith},
      {{"", "Acos"}, kFloat},
      {{"", "Acosh"}, kFloat},
      {{"", "Asin"}, kFloat},
      {{"", "Asinh"}, kFloat},
      {{"", "Atan"}, kFloat},
      {{"", "Atanh"}, kFloat},
      {{"", "Ceil"}, kFloat},
      {{"", "Celu"}, kFloat},
      {{"", "Clip"}, kArith},
      {{"", "Cos"}, kFloat},
      {{"", "Cosh"}, kFloat},
      {{"", "Elu"}, kFloat},
      {{"", "Erf"}, kFloat},
      {{"", "Exp"}, kFloat},
      {{"", "Floor"}, kFloat},
      {{"", "HardSigmoid"}, kFloat},
      {{"", "HardSwish"}, kFloat},
      {{"", "IsInf"}, kFloat},
      {{"", "IsNaN"}, kFloat},
      {{"", "LeakyRelu"}, kFloat},
      {{"", "Log"}, kFloat},
      {{"", "Mish"}, kFloat},
      {{"", "Neg"}, kSignedArith},
      {{"", "Not"}, kBool},
      {{"", "Reciprocal"}, kFloat},
      {{"", "Relu"}, kArith},
      {{"", "Round"}, kFloat},
      {{"", "Selu"}, kFloat},
      {{"", "Shrink"}, kArith},
      {{"", "Sigmoid"}, kFloat},
      {{"", "Sign"}, kArith},
      {{"", "Sin"}, kFloat},
      {{"", "Sinh"}, kFloat},
      {{"", "Softplus"}, kFloat},
      {{"", "Softsign"}, kFloat},
      {{"", "Sqrt"}, kFloat},
      {{"", "Tan"}, kFloat},
      {{"", "Tanh"}, kFloat},
      {{"", "ThresholdedRelu"}, kFloat},

      // ---- elementwise binary and variadic (elementwise_binary.cc, bitwise.cc) ----
      {{"", "Add"}, kArithHalf},
      {{"", "And"}, kBool},
      {{"", "BitShift"}, kUnsigned},
      {{"", "BitwiseAnd"}, kInteger},
      {{"", "BitwiseNot"}, kInteger},
      {{"", "BitwiseOr"}, kInteger},
      {{"", "BitwiseXor"}, kInteger},
      {{"", "Div"}, kArithHalf},
      {{"", "Equal"}, kArithHalfBool},
      {{"", "Greater"}, kArithHalf},
      {{"", "GreaterOrEqual"}, kArithHalf},
      {{"", "Less"}, kArithHalf},
      {{"", "LessOrEqual"}, kArithHalf},
      {{"", "Max"}, kArithHalf},
      {{"", "Mean"}, kArithHalf},
      {{"", "Min"}, kArithHalf},
      {{"", "Mod"}, kArithHalf},
      {{"", "Mul"}, kArithHalf},
      {{"", "Or"}, kBool},
      {{"", "Pow"}, kArith},  // no float16/bfloat16 path
      {{"", "PRelu"}, kArithHalf},
      {{"", "Sub"}, kArithHalf},
      {{"", "Sum"}, kArithHalf},
      {{"", "Where"}, kBool},  // input 0 is the condition; X and Y may be any kBySize dtype
      {{"", "Xor"}, kBool},

      // ---- casts (elementwise_cast.cc) ----
      {{"", "Cast"}, kCastable},
      {{"", "CastLike"}, kCastable},

      // ---- reductions (reduce.cc) ----
      {{"", "ArgMax"}, kArith},
      {{"", "ArgMin"}, kArith},
      {{"", "ReduceL1"}, kArith},
      {{"", "ReduceL2"}, kArith},
      {{"", "ReduceLogSum"}, kFloat},
      {{"", "ReduceLogSumExp"}, kFloat},
      {{"", "ReduceMax"}, kArith},
      {{"", "ReduceMean"}, kArith},
      {{"", "ReduceMin"}, kArith},
      {{"", "ReduceProd"}, kArith},
      {{"", "ReduceSum"}, kArith},
      {{"", "ReduceSumSquare"}, kArith},

      // ---- neural-network ops (nn/) ----
      {{"", "AveragePool"}, kF32},
      {{"", "BatchNormalization"}, kF32},
      {{"", "Conv"}, kF32},
      {{"", "ConvTranspose"}, kF32},
      {{"", "Dropout"}, kFloatHalf},
      {{"", "Gemm"}, kF32},
      {{"", "GlobalAveragePool"}, kF32},
      {{"", "GlobalMaxPool"}, kF32},
      {{"", "GRU"}, kF32},
      {{"", "Hardmax"}, kFloat},
      {{"", "InstanceNormalization"}, kF32},
      {{"", "LayerNormalization"}, kF32},
      {{"", "LogSoftmax"}, kF32},
      {{"", "LRN"}, kF32},
      {{"", "LSTM"}, kF32},
      {{"", "MatMul"}, kArith},   // float32 through oneDNN, the others a native loop
      {{"", "MaxPool"}, kArith},  // float32 through oneDNN, the others (and Indices) a native loop
      {{"", "NegativeLogLikelihoodLoss"}, kFloat},
      {{"", "Resize"}, kArith},  // mode "nearest" (the default); "linear" / "cubic" take float32 only
      {{"", "RNN"}, kF32},
      {{"", "RotaryEmbedding"}, kFloat},
      {{"", "Softmax"}, kF32},

      // ---- math (math/) ----
      {{"", "Det"}, kFloat},
      {{"", "Einsum"}, kArith},
      {{"", "LpNormalization"}, kFloat},
      {{"", "MeanVarianceNormalization"}, kFloat},

      // ---- sampling (sampling/) ----
      {{"", "AffineGrid"}, kFloat},  // input 0 is theta
      {{"", "Col2Im"}, kFloat},
      {{"", "GridSample"}, kFloat},
      {{"", "MaxUnpool"}, kArith},
      {{"", "RoiAlign"}, kFloat},

      // ---- selection and scans (index_ops/) ----
      {{"", "Compress"}, kAny},
      {{"", "CumSum"}, kArith},
      {{"", "NonMaxSuppression"}, kF32},
      {{"", "ReverseSequence"}, kAny},
      {{"", "TopK"}, kArith},
      {{"", "Unique"}, kArithBoolString},

      // ---- data movement (tensor_ops/) ----
      {{"", "CenterCropPad"}, kBySize},
      {{"", "Concat"}, kBySize},
      {{"", "DepthToSpace"}, kBySize},
      {{"", "Expand"}, kBySize},
      {{"", "Flatten"}, kAny},
      {{"", "Gather"}, kBySize},
      {{"", "GatherElements"}, kBySize},
      {{"", "GatherND"}, kBySize},
      {{"", "Identity"}, kAny},  // tensors, and the elements of sequences / optionals
      {{"", "Pad"}, kBySize},
      {{"", "Reshape"}, kAny},
      {{"", "ScatterElements"}, kBySize},  // reduction "none"; add/mul/max/min take kArith
      {{"", "ScatterND"}, kBySize},        // reduction "none"; add/mul/max/min take kArith
      {{"", "Slice"}, kBySize},
      {{"", "SpaceToDepth"}, kBySize},
      {{"", "Split"}, kBySize},
      {{"", "Squeeze"}, kAny},
      {{"", "Tile"}, kBySize},
      {{"", "Transpose"}, kBySize},
      {{"", "Trilu"}, kBySize},
      {{"", "Unsqueeze"}, kAny},

      // ---- shapes and generators (tensor_ops/shape_ops.cc) ----
      {{"", "ConstantOfShape"}, kIndex},  // input 0 is the shape; the `value` attribute may be any kBySize dtype
      // EyeLike reads only input 0's shape; with no dtype attribute the
      // output takes input 0's dtype, which must then be one of these.
      {{"", "EyeLike"}, kArithHalfBool},
      {{"", "NonZero"}, kNonZero},
      {{"", "OneHot"}, kArithBool},  // input 0 is the indices; `values` may be any kBySize dtype
      {{"", "Range"}, kRange},       // input 0 is start
      {{"", "Shape"}, kAny},
      {{"", "Size"}, kAny},

      // ---- random generators (random/) ----
      {{"", "Bernoulli"}, kFloat},
      {{"", "Multinomial"}, kFloat},
      // RandomNormal / RandomUniform have no input: the dtypes their `dtype`
      // attribute may give. The *Like ops read only input 0's shape; their
      // output (the dtype attribute, else input 0's dtype) must be
      // float32/float64, so without the attribute input 0 must be too.
      {{"", "RandomNormal"}, kFloat},
      {{"", "RandomNormalLike"}, kAny},
      {{"", "RandomUniform"}, kFloat},
      {{"", "RandomUniformLike"}, kAny},

      // ---- signal processing (signal/) ----
      {{"", "BlackmanWindow"}, kIndex},   // input 0 is the window size
      {{"", "DFT"}, kFloat},
      {{"", "HammingWindow"}, kIndex},    // input 0 is the window size
      {{"", "HannWindow"}, kIndex},       // input 0 is the window size
      {{"", "MelWeightMatrix"}, kIndex},  // input 0 is num_mel_bins
      {{"", "STFT"}, kFloat},

      // ---- quantization (quantize/) ----
      {{"", "ConvInteger"}, kQuant8},
      {{"", "DequantizeLinear"}, {D::kUInt8, D::kInt8, D::kInt32}},
      {{"", "DynamicQuantizeLinear"}, kF32},
      {{"", "MatMulInteger"}, kQuant8},
      {{"", "QLinearConv"}, kQuant8},
      {{"", "QLinearMatMul"}, kQuant8},
      {{"", "QuantizeLinear"}, {D::kFloat32, D::kInt32}},

      // ---- text (text/) ----
      {{"", "StringNormalizer"}, kString},
      {{"", "TfIdfVectorizer"}, kIndex},  // string input is refused

      // ---- control flow (control_flow/) ----
      {{"", "If"}, kCondition},  // input 0 is the condition
      {{"", "Loop"}, kIndex},    // input 0 is the trip count M (may be omitted)
      {{"", "Scan"}, kAny},      // states and scan inputs are copied

      // ---- sequences and optionals (sequence/): element dtypes ----
      {{"", "ConcatFromSequence"}, kAny},
      {{"", "Optional"}, kAny},
      {{"", "OptionalGetElement"}, kAny},
      {{"", "OptionalHasElement"}, kAny},
      {{"", "SequenceAt"}, kAny},
      {{"", "SequenceConstruct"}, kAny},
      {{"", "SequenceEmpty"}, kAny},  // no input: the dtypes the `dtype` attribute may give
      {{"", "SequenceErase"}, kAny},
      {{"", "SequenceInsert"}, kAny},
      {{"", "SequenceLength"}, kAny},
      {{"", "SequenceMap"}, kAny},  // the body decides what it takes
      {{"", "SplitToSequence"}, kAny},

      // ---- com.graphengine (ops::kGecDomain) ----
      {{"com.graphengine", "BatchNormalizationTraining"}, kFloatHalf},
      {{"com.graphengine", "ChannelShuffle"}, kBySize},
      {{"com.graphengine", "FusedConv"}, kF32},
      {{"com.graphengine", "FusedElementwise"}, kFusedElementwise},
      {{"com.graphengine", "FusedMatMul"}, kF32},
      {{"com.graphengine", "Gelu"}, kF32},
      {{"com.graphengine", "Swish"}, kF32},
      {{"com.graphengine", "Reorder"}, kF32},
      {{"com.graphengine", "ScaledDotProductAttention"}, kF32},
      {{"com.graphengine", "SkipLayerNormalization"}, kF32},
  };
  auto it = table.find({domain == "ai.onnx" ? "" : domain, op_type});
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace gec::kernels
