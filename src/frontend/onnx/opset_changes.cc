// ai.onnx operator versions 18..23 (opset_changes.h). Source: ONNX
// docs/Changelog.md; "types" = the version only widened the accepted types
// (bfloat16, float8, int4, ...) or the values an attribute may take.
#include "frontend/onnx/opset_changes.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace gec::frontend {
namespace {

enum class Change { kTypes, kSignature, kNew };

struct Version {
  int version;
  Change change;
};

const std::map<std::string, std::vector<Version>>& table() {
  static const std::map<std::string, std::vector<Version>> t = [] {
    std::map<std::string, std::vector<Version>> m;
    auto add = [&](int v, Change c, std::initializer_list<const char*> ops) {
      for (const char* op : ops) m[op].push_back({v, c});
    };
    using C = Change;
    // 18
    add(18, C::kNew, {"BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im",
                      "GroupNormalization", "Mish"});
    add(18, C::kSignature, {"LpPool", "Pad", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                            "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize", "Split"});
    add(18, C::kTypes, {"OptionalGetElement", "OptionalHasElement", "ScatterElements", "ScatterND"});
    // 19
    add(19, C::kNew, {"DeformConv"});
    add(19, C::kSignature, {"AveragePool", "Cast", "CastLike", "DequantizeLinear", "QuantizeLinear", "Resize"});
    add(19, C::kTypes, {"Constant", "Equal", "Identity", "If", "Loop", "Pad", "Reshape", "Scan", "Shape", "Size"});
    // 20
    add(20, C::kNew, {"AffineGrid", "Gelu", "ImageDecoder", "RegexFullMatch", "StringConcat", "StringSplit"});
    add(20, C::kSignature, {"DFT"});
    add(20, C::kTypes, {"ConstantOfShape", "GridSample", "IsInf", "IsNaN", "ReduceMax", "ReduceMin"});
    // 21
    add(21, C::kSignature, {"DequantizeLinear", "GroupNormalization", "QuantizeLinear"});
    add(21, C::kTypes, {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad",
                        "QLinearMatMul", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"});
    // 22: bfloat16 everywhere, nothing else
    add(22, C::kTypes, {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv",
                        "ConvTranspose", "Cos", "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU",
                        "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "HardSigmoid",
                        "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization", "LpPool", "MaxPool",
                        "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN",
                        "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round",
                        "Selu", "Sin", "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu"});
    // 23
    add(23, C::kNew, {"Attention", "RMSNormalization", "RotaryEmbedding"});
    add(23, C::kTypes, {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity",
                        "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                        "Transpose", "Unsqueeze"});
    return m;
  }();
  return t;
}

bool has_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return true;
  return false;
}

std::string string_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return "";
}

/// Whether `n` uses an input or attribute its op gained after opset 17.
bool uses_post17_signature(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op.rfind("Reduce", 0) == 0) return n.input_size() >= 2 || has_attr(n, "noop_with_empty_axes");
  if (op == "Split") return has_attr(n, "num_outputs");
  if (op == "Pad") return n.input_size() >= 4;
  if (op == "Resize")
    return has_attr(n, "antialias") || has_attr(n, "axes") || has_attr(n, "keep_aspect_ratio_policy") ||
           string_attr(n, "coordinate_transformation_mode") == "half_pixel_symmetric";
  if (op == "LpPool") return has_attr(n, "ceil_mode") || has_attr(n, "dilations");
  if (op == "AveragePool") return has_attr(n, "dilations");
  if (op == "Cast" || op == "CastLike") return has_attr(n, "saturate");
  if (op == "QuantizeLinear" || op == "DequantizeLinear")
    return has_attr(n, "saturate") || has_attr(n, "block_size") || has_attr(n, "output_dtype");
  return true;  // DFT-20, GroupNormalization-21: always the new form
}

}  // namespace

int post17_since_version(const std::string& op, int64_t opset) {
  auto it = table().find(op);
  if (it == table().end()) return 0;
  int since = 0;
  for (const Version& v : it->second)
    if (v.version <= opset && v.version > since) since = v.version;
  return since;
}

bool new_after_17(const std::string& op) {
  auto it = table().find(op);
  if (it == table().end()) return false;
  for (const Version& v : it->second)
    if (v.change == Change::kNew) return true;
  return false;
}

bool libonnx_can_check(const onnx::NodeProto& n, int64_t opset) {
  auto it = table().find(n.op_type());
  if (it == table().end()) return true;
  for (const Version& v : it->second) {
    if (v.version > opset) continue;
    if (v.change == Change::kNew) return false;
    if (v.change == Change::kSignature && uses_post17_signature(n)) return false;
  }
  return true;
}

std::string check_new_op_arity(const onnx::NodeProto& n) {
  struct Arity {
    int min_in, max_in, outs;
  };
  static const std::map<std::string, Arity> kArity = {
      {"BitwiseAnd", {2, 2, 1}}, {"BitwiseOr", {2, 2, 1}},         {"BitwiseXor", {2, 2, 1}},
      {"BitwiseNot", {1, 1, 1}}, {"Mish", {1, 1, 1}},              {"Gelu", {1, 1, 1}},
      {"GroupNormalization", {3, 3, 1}}, {"RMSNormalization", {2, 2, 1}}, {"CenterCropPad", {2, 2, 1}},
      {"Col2Im", {3, 3, 1}},     {"AffineGrid", {2, 2, 1}},      {"RotaryEmbedding", {3, 4, 1}}};
  auto it = kArity.find(n.op_type());
  if (it == kArity.end()) return "";
  const Arity& a = it->second;
  if (n.input_size() < a.min_in || n.input_size() > a.max_in)
    return "takes " + (a.min_in == a.max_in ? std::to_string(a.min_in) : std::to_string(a.min_in) + " to " +
                                                                              std::to_string(a.max_in)) +
           " inputs, not " + std::to_string(n.input_size());
  if (n.output_size() != a.outs)
    return "has " + std::to_string(a.outs) + " output(s), not " + std::to_string(n.output_size());
  return "";
}

}  // namespace gec::frontend
