// Sequence and optional ops (ONNX SequenceEmpty-11, SequenceConstruct-11,
// SequenceInsert-11, SequenceAt-11, SequenceErase-11, SequenceLength-11,
// SplitToSequence-11, ConcatFromSequence-11, SequenceMap-17, Optional-15,
// OptionalHasElement-15, OptionalGetElement-15).
//
// Their results depend on the contents of sequences, which shape inference
// never sees, so every one is shape_from_kernel: the kernel makes its
// sequence/optional outputs and allocates its tensor outputs. Never constant
// folded for the same reason; CSE may merge them (values are immutable).
#include <unordered_map>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void from_kernel(InferContext&) { throw NeedsValue{}; }

}  // namespace

#define GEC_SEQUENCE_OP(name)                                                                        \
  GEC_REGISTER_OP({.domain = "", .op_type = name, .infer = from_kernel, .deterministic = true, \
                   .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)})

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

// ---- value kinds ----------------------------------------------------------------------------

namespace gec::ops {
namespace {

bool is_untyped(const ir::Value* v) { return v->type.is_tensor() && v->type.dtype == DType::kUndefined; }

// Tensors and optional tensors interconvert (If/Loop may wrap or unwrap an
// optional); so do sequences and optional sequences.
bool sequence_like(ValueKind k) { return k == ValueKind::kSequence || k == ValueKind::kOptionalSequence; }
bool compatible(ValueKind a, ValueKind b) { return sequence_like(a) == sequence_like(b); }

class KindChecker {
 public:
  explicit KindChecker(bool fix) : fix_(fix) {}

  void graph(ir::Graph& g) {
    for (const auto& n : g.nodes()) node(*n);
  }

 private:
  [[noreturn]] void bad(const ir::Node& n, const std::string& msg) const {
    fail(ErrorCode::kInvalidModel, n.describe() + ": " + msg);
  }

  // Value v (input or output `what` of n) must have kind `k`; an untyped
  // value takes it when fixing.
  void require(const ir::Node& n, ir::Value* v, ValueKind k, const std::string& what) {
    if (!v || v->type.kind == k) return;
    if (fix_ && is_untyped(v)) {
      v->type.kind = k;
      return;
    }
    bad(n, what + " '" + v->name() + "' is " + v->type.str() + ", the op needs a " + value_kind_name(k));
  }

  void require_compatible(const ir::Node& n, ir::Value* v, ValueKind k, const std::string& what) {
    if (!v || compatible(v->type.kind, k)) return;
    require(n, v, k, what);
  }

  void all_tensors(const ir::Node& n) {
    for (size_t i = 0; i < n.inputs().size(); ++i) require(n, n.input(i), ValueKind::kTensor, "input " + std::to_string(i));
    for (size_t i = 0; i < n.outputs().size(); ++i)
      require(n, n.output(i), ValueKind::kTensor, "output " + std::to_string(i));
  }

  // Every ONNX op has an output; the ops below read inputs 0..k-1 without
  // checking (a malformed .gom may lack them).
  void check_arity(const ir::Node& n) {
    if (n.outputs().empty()) bad(n, "has no outputs");
    static const std::unordered_map<std::string, size_t> required = {
        {"Identity", 1}, {"SequenceInsert", 2}, {"SequenceErase", 1}, {"SequenceAt", 2}, {"SequenceLength", 1},
        {"ConcatFromSequence", 1}, {"SequenceMap", 1}, {"SplitToSequence", 1}, {"SequenceConstruct", 1},
        {"OptionalGetElement", 1}, {"If", 1}, {"Loop", 2}};
    auto it = n.domain.empty() ? required.find(n.op_type) : required.end();
    if (it == required.end()) return;
    for (size_t i = 0; i < it->second; ++i) {
      const bool optional_ok = n.op_type == "Loop";  // M and cond may be omitted
      if (i >= n.inputs().size() || (!n.input(i) && !optional_ok))
        bad(n, "input " + std::to_string(i) + " is missing");
    }
  }

  // Loop and Scan bodies: the condition and every scan output are tensors.
  void check_body_outputs(const ir::Node& n, const ir::Graph& body) {
    size_t first_scan = body.outputs().size();
    if (n.op_type == "Loop") first_scan = 1 + (n.inputs().size() >= 2 ? n.inputs().size() - 2 : 0);
    if (n.op_type == "Scan") first_scan = 0;
    if (n.op_type == "Loop" && !body.outputs().empty() && !body.outputs()[0]->type.is_tensor())
      bad(n, "the body's condition output '" + body.outputs()[0]->name() + "' is " + body.outputs()[0]->type.str());
    for (size_t k = first_scan; k < body.outputs().size(); ++k)
      if (!body.outputs()[k]->type.is_tensor())
        bad(n, "body output '" + body.outputs()[k]->name() + "' is " + body.outputs()[k]->type.str() +
                   "; scan outputs and Scan state must be tensors");
  }

  void node(ir::Node& n) {
    check_arity(n);
    for (auto& a : n.attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) {
        bind_body_inputs(n, *a.g);
        graph(*a.g);
        if (n.op_type == "Loop" || n.op_type == "Scan") check_body_outputs(n, *a.g);
      }
    const std::string& op = n.op_type;
    const ValueKind kSeq = ValueKind::kSequence, kTen = ValueKind::kTensor;
    if (!n.domain.empty()) return all_tensors(n);
    if (op == "SequenceEmpty" || op == "SequenceConstruct" || op == "SplitToSequence") {
      for (ir::Value* in : n.inputs()) require(n, in, kTen, "input");
      return require(n, n.output(0), kSeq, "output");
    }
    if (op == "SequenceInsert" || op == "SequenceErase") {
      require(n, n.input(0), kSeq, "input 0");
      for (size_t i = 1; i < n.inputs().size(); ++i) require(n, n.input(i), kTen, "input " + std::to_string(i));
      return require(n, n.output(0), kSeq, "output");
    }
    if (op == "SequenceAt" || op == "SequenceLength" || op == "ConcatFromSequence") {
      require(n, n.input(0), kSeq, "input 0");
      for (size_t i = 1; i < n.inputs().size(); ++i) require(n, n.input(i), kTen, "input " + std::to_string(i));
      return require(n, n.output(0), kTen, "output");
    }
    if (op == "SequenceMap") {
      require(n, n.input(0), kSeq, "input 0");
      for (ir::Value* out : n.outputs()) require(n, out, kSeq, "output");
      return;
    }
    if (op == "Optional") {
      if (!n.has_input(0)) {
        if (n.output(0)->type.kind != ValueKind::kOptionalTensor && n.output(0)->type.kind != ValueKind::kOptionalSequence)
          bad(n, "output '" + n.output(0)->name() + "' is " + n.output(0)->type.str() + ", not an optional");
        return;
      }
      const ValueKind in = n.input(0)->type.kind;
      if (in != kTen && in != kSeq) bad(n, "input must be a tensor or a sequence, is " + n.input(0)->type.str());
      return require(n, n.output(0), in == kTen ? ValueKind::kOptionalTensor : ValueKind::kOptionalSequence, "output");
    }
    if (op == "OptionalHasElement") return require(n, n.output(0), kTen, "output");
    if (op == "OptionalGetElement") {
      const ValueKind in = n.input(0)->type.kind;
      return require(n, n.output(0), sequence_like(in) ? kSeq : kTen, "output");
    }
    if (op == "Identity") return require(n, n.output(0), n.input(0)->type.kind, "output");
    if (op == "If") {
      const ir::Graph* then_g = n.get_graph("then_branch");
      require(n, n.input(0), kTen, "input 0");
      for (size_t i = 0; then_g && i < n.outputs().size() && i < then_g->outputs().size(); ++i)
        require_compatible(n, n.output(i), then_g->outputs()[i]->type.kind, "output " + std::to_string(i));
      return;
    }
    if (op == "Loop") {
      const ir::Graph* body = n.get_graph("body");
      for (size_t i = 0; i < 2 && i < n.inputs().size(); ++i) require(n, n.input(i), kTen, "input " + std::to_string(i));
      const size_t carried = n.inputs().size() < 2 ? 0 : n.inputs().size() - 2;
      for (size_t j = 0; j < n.outputs().size(); ++j) {
        ValueKind k = kTen;  // scan outputs
        if (j < carried && n.input(2 + j)) k = n.input(2 + j)->type.kind;
        if (body && 1 + j < body->outputs().size() && j < carried) k = body->outputs()[1 + j]->type.kind;
        require_compatible(n, n.output(j), k, "output " + std::to_string(j));
      }
      return;
    }
    all_tensors(n);
  }

  // Loop-carried body inputs follow the node's inputs; SequenceMap's body
  // sees elements (tensors) of its sequence inputs.
  void bind_body_inputs(const ir::Node& n, ir::Graph& body) {
    if (n.op_type == "Loop") {
      for (size_t j = 2; j < n.inputs().size() && j < body.inputs().size(); ++j)
        if (n.input(j)) require_compatible(n, body.inputs()[j], n.input(j)->type.kind, "body input " + std::to_string(j));
    } else if (n.op_type == "SequenceMap") {
      for (size_t j = 0; j < body.inputs().size(); ++j) require(n, body.inputs()[j], ValueKind::kTensor, "body input");
    }
  }

  bool fix_;
};

}  // namespace

void check_value_kinds(ir::Graph& g, bool fix_untyped) { KindChecker(fix_untyped).graph(g); }

}  // namespace gec::ops
