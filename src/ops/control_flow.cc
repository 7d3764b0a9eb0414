// Control-flow ops (ONNX If-16, Loop-16, Scan-16). Their output shapes depend
// on which branch runs or how many iterations happen, so the kernel allocates
// them (shape_from_kernel).
#include "ops/op_schema.h"

namespace gec::ops {

GEC_REGISTER_OP({.domain = "",
                 .op_type = "If",
                 .infer = [](InferContext& ctx) { throw NeedsValue{}; },
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

GEC_REGISTER_OP({.domain = "",
                 .op_type = "Loop",
                 .infer = [](InferContext& ctx) { throw NeedsValue{}; },
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

GEC_REGISTER_OP({.domain = "",
                 .op_type = "Scan",
                 .infer = [](InferContext& ctx) { throw NeedsValue{}; },
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
