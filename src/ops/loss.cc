// Schema of NegativeLogLikelihoodLoss-13 (it also appears inside the
// expansion of SoftmaxCrossEntropyLoss).
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

// input [N, C, d1..dk], target [N, d1..dk], weight? [C]; reduction "none"
// keeps target's shape, "sum" / "mean" give a scalar.
void infer_nll(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const Shape& t = ctx.shape(1);
  if (x.size() < 2 || t.size() != x.size() - 1 || t[0] != x[0])
    ctx.error("input " + shape_str(x) + " and target " + shape_str(t) + " must be [N,C,d...] and [N,d...]");
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] != x[i + 1]) ctx.error("target " + shape_str(t) + " does not match input " + shape_str(x));
  if (ctx.has_input(2) && (ctx.shape(2).size() != 1 || ctx.shape(2)[0] != x[1])) ctx.error("weight must be [C]");
  const std::string red = ctx.node->get_string("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean") ctx.error("unknown reduction '" + red + "'");
  ctx.set_output(0, ctx.dtype(0), red == "none" ? t : Shape{});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "NegativeLogLikelihoodLoss", .infer = infer_nll, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
