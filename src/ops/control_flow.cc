// Control-flow ops (ONNX If-16). Their output shapes depend on which branch
// runs, so the kernel allocates them (shape_from_kernel).
#include "ops/op_schema.h"

namespace gec::ops {

GEC_REGISTER_OP({.domain = "",
                 .op_type = "If",
                 .infer = [](InferContext& ctx) { throw NeedsValue{}; },
                 .deterministic = true,
                 .shape_from_kernel = true});

}  // namespace gec::ops
