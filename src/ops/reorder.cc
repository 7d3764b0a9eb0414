// com.graphengine::Reorder (ops/layout.h): the same tensor in another
// memory layout, inserted by the schedule stage's layout assignment
// (schedule/layout_assignment.cc). Shape and dtype
// follow the input; only 4-D float32 with C % 16 == 0 can be blocked.
#include "ops/layout.h"
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_reorder(InferContext& ctx) {
  for (const char* attr : {"from", "to"}) {
    const std::string l = ctx.node->get_string(attr, "");
    if (l != kPlainLayout && l != kBlockedLayout)
      ctx.error(std::string("attribute '") + attr + "' must be \"nchw\" or \"nChw16c\", not \"" + l + "\"");
  }
  const Shape& s = ctx.shape(0);
  if (ctx.dtype(0) != DType::kFloat32 || s.size() != 4 || s[1] % kBlockedChannels != 0)
    ctx.error("needs a float32 [N,C,H,W] input with C % 16 == 0, got " + shape_str(s));
  infer_same_as_input0(ctx);
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain, .op_type = kReorderOp, .infer = infer_reorder,
                 .traits = traits(PatternKind::kInjective)});
}  // namespace gec::ops
