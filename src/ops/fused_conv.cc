// Schema of com.graphengine::FusedConv (see fused_conv.h): the output type is
// Conv's (the registered ai.onnx Conv infer function runs on the same
// attributes), and the residual Z, when present, must have that exact type.
// Also the activation table shared by the fusion pass and the kernel.
#include "ops/fused_conv.h"

#include <cmath>
#include <limits>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// A float32 constant holding one element (Clip's min / max), or nullopt.
std::optional<float> const_scalar(const ir::Value* v) {
  if (!v || !v->is_constant() || v->constant->dtype() != DType::kFloat32 || v->constant->numel() != 1)
    return std::nullopt;
  return v->constant->as<float>()[0];
}

std::optional<FusedActivation> clip_of(const ir::Node& n) {
  FusedActivation a{"Clip", -kInf, kInf};
  if (n.has_input(1)) {
    auto lo = const_scalar(n.input(1));
    if (!lo) return std::nullopt;
    a.alpha = *lo;
  }
  if (n.has_input(2)) {
    auto hi = const_scalar(n.input(2));
    if (!hi) return std::nullopt;
    a.beta = *hi;
  }
  // min > max gives max everywhere in ONNX but not in oneDNN's clip; NaN
  // bounds make every comparison false. Neither occurs in real models.
  if (std::isnan(a.alpha) || std::isnan(a.beta) || a.alpha > a.beta) return std::nullopt;
  return a;
}

void infer_fused_conv(InferContext& ctx) {
  read_fused_activation(*ctx.node);  // unknown activation: kInvalidModel
  const OpSchema* conv = find_schema("", "Conv");
  GEC_CHECK(conv != nullptr, "FusedConv: the Conv schema is not registered");
  conv->infer(ctx);
  if (ctx.has_input(3)) {
    if (ctx.dtype(3) != ctx.out_dtypes[0] || ctx.shape(3) != ctx.out_shapes[0])
      ctx.error("residual Z " + shape_str(ctx.shape(3)) + " must have the output's type " +
                shape_str(ctx.out_shapes[0]) + " (no broadcasting)");
  }
}

}  // namespace

const char* activation_domain(const std::string& op) {
  // ai.onnx first; an op only our domain registers (Swish) is ours.
  return !find_schema("", op) && find_schema(kGecDomain, op) ? kGecDomain : "";
}

bool is_fusable_activation(const std::string& op) {
  const OpSchema* s = find_schema(activation_domain(op), op);
  return s && s->traits.conv_epilogue;
}

std::optional<FusedActivation> activation_of(const ir::Node& n) {
  if (n.domain != activation_domain(n.op_type) || !is_fusable_activation(n.op_type)) return std::nullopt;
  const std::string& op = n.op_type;
  // Defaults from the ONNX operator text (the same the unary kernels use).
  if (op == "Clip") return clip_of(n);
  if (n.inputs().size() != 1) return std::nullopt;
  if (op == "LeakyRelu") return FusedActivation{op, n.get_float("alpha", 0.01f), 0.f};
  if (op == "Elu") return FusedActivation{op, n.get_float("alpha", 1.0f), 0.f};
  if (op == "HardSigmoid") return FusedActivation{op, n.get_float("alpha", 0.2f), n.get_float("beta", 0.5f)};
  if (op == "Swish") return FusedActivation{op, n.get_float("alpha", 1.0f), 0.f};
  if (op == "Selu")
    return FusedActivation{op, n.get_float("alpha", 1.67326319217681884765625f),
                           n.get_float("gamma", 1.05070102710723876953125f)};
  return FusedActivation{op, 0.f, 0.f};
}

FusedActivation read_fused_activation(const ir::Node& n) {
  FusedActivation a{n.get_string("activation", ""), n.get_float("activation_alpha", 0.f),
                    n.get_float("activation_beta", 0.f)};
  if (!a.op.empty() && !is_fusable_activation(a.op))
    fail(ErrorCode::kInvalidModel, n.describe() + ": unknown activation '" + a.op + "'");
  return a;
}

void write_fused_activation(ir::Node& n, const FusedActivation& a) {
  n.set_attr(ir::Attribute::String("activation", a.op));
  n.set_attr(ir::Attribute::Float("activation_alpha", a.alpha));
  n.set_attr(ir::Attribute::Float("activation_beta", a.beta));
}

ir::Node* add_activation_node(ir::Graph& g, const FusedActivation& a, ir::Value* x, const std::string& out) {
  GEC_CHECK(is_fusable_activation(a.op), "add_activation_node: not an activation: '" + a.op + "'");
  std::vector<ir::Value*> ins{x};
  if (a.op == "Clip") {
    for (float bound : {a.alpha, a.beta}) {
      Tensor t(DType::kFloat32, Shape{});
      t.as<float>()[0] = bound;
      ins.push_back(g.add_constant(g.unique_name(out + "_bound"), std::move(t)));
    }
  }
  ir::Node* n = g.add_node(a.op, ins, {out}, out, activation_domain(a.op));
  if (a.op == "LeakyRelu" || a.op == "Elu" || a.op == "Swish") n->set_attr(ir::Attribute::Float("alpha", a.alpha));
  if (a.op == "HardSigmoid") {
    n->set_attr(ir::Attribute::Float("alpha", a.alpha));
    n->set_attr(ir::Attribute::Float("beta", a.beta));
  }
  if (a.op == "Selu") {
    n->set_attr(ir::Attribute::Float("alpha", a.alpha));
    n->set_attr(ir::Attribute::Float("gamma", a.beta));
  }
  return n;
}

float apply_activation(const FusedActivation& a, float x) {
  const std::string& op = a.op;
  auto softplus = [](float v) { return v > 0.f ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); };
  auto clamp01 = [](float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); };
  if (op.empty()) return x;
  if (op == "Relu") return x < 0.f ? 0.f : x;
  if (op == "LeakyRelu") return x < 0.f ? a.alpha * x : x;
  if (op == "Clip") return std::min(std::max(x, a.alpha), a.beta);
  if (op == "Sigmoid") return 1.f / (1.f + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "HardSigmoid") return clamp01(a.alpha * x + a.beta);
  if (op == "HardSwish") return x * clamp01(x / 6.f + 0.5f);
  if (op == "Elu") return x < 0.f ? a.alpha * std::expm1(x) : x;
  if (op == "Selu") return a.beta * (x <= 0.f ? a.alpha * std::expm1(x) : x);
  if (op == "Softplus") return softplus(x);
  if (op == "Mish") return x * std::tanh(softplus(x));
  if (op == "Swish") return x / (1.f + std::exp(-a.alpha * x));
  fail(ErrorCode::kInvalidModel, "unknown fused activation '" + op + "'");
}

GEC_REGISTER_OP({.domain = kGecDomain,
                 .op_type = kFusedConvOp,
                 .infer = infer_fused_conv,
                 .traits = traits(PatternKind::kOutEwiseFusable)
                               .in_place_alone({3})
                               .with_layout(LayoutRule::kConv)
                               .with_precision(PrecisionPolicy::kMayLower)});

}  // namespace gec::ops
