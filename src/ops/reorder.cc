// com.graphengine::Reorder (ops/layout.h): the same tensor in another
// memory layout, inserted by the schedule stage's layout assignment
// (schedule/layout_assignment.cc). Shape and dtype
// follow the input; only 4-D float32 can be reordered, and only with
// C % 16 == 0 into or out of nChw16c.
#include "ops/layout.h"
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_reorder(InferContext& ctx) {
  const Shape& s = ctx.shape(0);
  for (const char* attr : {"from", "to"}) {
    const std::string name = ctx.node->get_string(attr, "");
    Layout l = Layout::kPlain;
    if (!layout_from_name(name, &l))
      ctx.error(std::string("attribute '") + attr + "' must be \"nchw\", \"nChw16c\" or \"nhwc\", not \"" + name +
                "\"");
    if (ctx.dtype(0) != DType::kFloat32 || s.size() != 4 || !layout_fits_channels(l, s[1]))
      ctx.error("needs a float32 [N,C,H,W] input (C % 16 == 0 for nChw16c), got " + shape_str(s));
  }
  infer_same_as_input0(ctx);
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = kReorderOp, .infer = infer_reorder,
                 .traits = traits(PatternKind::kInjective)});
}  // namespace gec::ops
