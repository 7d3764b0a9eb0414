// Sequence and optional ops (ONNX SequenceEmpty-11, SequenceConstruct-11,
// SequenceInsert-11, SequenceAt-11, SequenceErase-11, SequenceLength-11,
// SplitToSequence-11, ConcatFromSequence-11, SequenceMap-17, Optional-15,
// OptionalHasElement-15, OptionalGetElement-15).
//
// Their results depend on the contents of sequences, which shape inference
// never sees, so every one is shape_from_kernel: the kernel makes its
// sequence/optional outputs and allocates its tensor outputs. Never constant
// folded for the same reason; CSE may merge them (values are immutable).
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void from_kernel(InferContext&) { throw NeedsValue{}; }

}  // namespace

#define GEC_SEQUENCE_OP(name)                                                                        \
  GEC_REGISTER_OP({.domain = "", .op_type = name, .infer = from_kernel, .deterministic = true, \
                   .shape_from_kernel = true})

GEC_SEQUENCE_OP("SequenceEmpty");
GEC_SEQUENCE_OP("SequenceConstruct");
GEC_SEQUENCE_OP("SequenceInsert");
GEC_SEQUENCE_OP("SequenceAt");
GEC_SEQUENCE_OP("SequenceErase");
GEC_SEQUENCE_OP("SequenceLength");
GEC_SEQUENCE_OP("SplitToSequence");
GEC_SEQUENCE_OP("ConcatFromSequence");
GEC_SEQUENCE_OP("SequenceMap");
GEC_SEQUENCE_OP("Optional");
GEC_SEQUENCE_OP("OptionalHasElement");
GEC_SEQUENCE_OP("OptionalGetElement");

#undef GEC_SEQUENCE_OP

}  // namespace gec::ops
