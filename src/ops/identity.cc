// Identity (ONNX Identity-16: tensors, sequences and optionals): output is
// the input. For tensors the shape follows; a sequence or optional output is
// made by the kernel (the executor never infers non-tensor values).
#include "ops/op_schema.h"

namespace gec::ops {
GEC_REGISTER_OP({.domain = "", .op_type = "Identity", .infer = infer_same_as_input0, .traits = traits(PatternKind::kElementwise).aliases_input0()});
}  // namespace gec::ops
