// Schema and program table of com.graphengine::FusedElementwise (see
// fused_elementwise.h for the attribute layout).
#include "ops/fused_elementwise.h"

#include <cmath>
#include <map>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

/// What an opcode reads and makes.
enum class Sig : uint8_t {
  kUnaryF,    // f32 -> f32
  kUnaryN,    // T -> T (T: float32, int32 or int64)
  kBinaryF,   // f32, f32 -> f32
  kBinaryN,   // T, T -> T
  kCompareN,  // T, T -> bool
  kLogic,     // bool, bool -> bool
  kNot,       // bool -> bool
  kWhere,     // bool, T, T -> T
  kClip,      // f32 [, f32] [, f32] -> f32
  kCast,      // any of f32, bool, i32, i64 -> params[0] (not float to integer)
};

struct OpInfo {
  EwOp op;
  const char* name;
  Sig sig;
};

constexpr OpInfo kOps[] = {
    {EwOp::kRelu, "Relu", Sig::kUnaryN},
    {EwOp::kNeg, "Neg", Sig::kUnaryN},
    {EwOp::kAbs, "Abs", Sig::kUnaryN},
    {EwOp::kSign, "Sign", Sig::kUnaryN},
    {EwOp::kSigmoid, "Sigmoid", Sig::kUnaryF},
    {EwOp::kTanh, "Tanh", Sig::kUnaryF},
    {EwOp::kErf, "Erf", Sig::kUnaryF},
    {EwOp::kExp, "Exp", Sig::kUnaryF},
    {EwOp::kLog, "Log", Sig::kUnaryF},
    {EwOp::kSqrt, "Sqrt", Sig::kUnaryF},
    {EwOp::kReciprocal, "Reciprocal", Sig::kUnaryF},
    {EwOp::kFloor, "Floor", Sig::kUnaryF},
    {EwOp::kCeil, "Ceil", Sig::kUnaryF},
    {EwOp::kRound, "Round", Sig::kUnaryF},
    {EwOp::kSin, "Sin", Sig::kUnaryF},
    {EwOp::kCos, "Cos", Sig::kUnaryF},
    {EwOp::kSoftplus, "Softplus", Sig::kUnaryF},
    {EwOp::kSoftsign, "Softsign", Sig::kUnaryF},
    {EwOp::kHardSigmoid, "HardSigmoid", Sig::kUnaryF},
    {EwOp::kHardSwish, "HardSwish", Sig::kUnaryF},
    {EwOp::kLeakyRelu, "LeakyRelu", Sig::kUnaryF},
    {EwOp::kElu, "Elu", Sig::kUnaryF},
    {EwOp::kSelu, "Selu", Sig::kUnaryF},
    {EwOp::kCelu, "Celu", Sig::kUnaryF},
    {EwOp::kThresholdedRelu, "ThresholdedRelu", Sig::kUnaryF},
    {EwOp::kMish, "Mish", Sig::kUnaryF},
    {EwOp::kSwish, "Swish", Sig::kUnaryF},  // com.graphengine::Swish
    {EwOp::kGelu, "Gelu", Sig::kUnaryF},
    {EwOp::kAdd, "Add", Sig::kBinaryN},
    {EwOp::kSub, "Sub", Sig::kBinaryN},
    {EwOp::kMul, "Mul", Sig::kBinaryN},
    {EwOp::kDiv, "Div", Sig::kBinaryN},
    {EwOp::kMax, "Max", Sig::kBinaryN},
    {EwOp::kMin, "Min", Sig::kBinaryN},
    {EwOp::kPow, "Pow", Sig::kBinaryF},
    {EwOp::kPRelu, "PRelu", Sig::kBinaryF},
    {EwOp::kEqual, "Equal", Sig::kCompareN},
    {EwOp::kLess, "Less", Sig::kCompareN},
    {EwOp::kLessOrEqual, "LessOrEqual", Sig::kCompareN},
    {EwOp::kGreater, "Greater", Sig::kCompareN},
    {EwOp::kGreaterOrEqual, "GreaterOrEqual", Sig::kCompareN},
    {EwOp::kAnd, "And", Sig::kLogic},
    {EwOp::kOr, "Or", Sig::kLogic},
    {EwOp::kXor, "Xor", Sig::kLogic},
    {EwOp::kNot, "Not", Sig::kNot},
    {EwOp::kWhere, "Where", Sig::kWhere},
    {EwOp::kClip, "Clip", Sig::kClip},
    {EwOp::kCast, "Cast", Sig::kCast},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumEwOps, "one kOps row per opcode");

const OpInfo& info(EwOp op) { return kOps[static_cast<int>(op)]; }

const OpInfo* find_op(const std::string& name) {
  static const std::map<std::string, const OpInfo*> by_name = [] {
    std::map<std::string, const OpInfo*> m;
    for (const OpInfo& o : kOps) m[o.name] = &o;
    return m;
  }();
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

/// Operand dtypes (kUndefined = unused slot; Clip's min/max are optional) and
/// result dtype of `in`, given the dtypes of its operands (`ops`, kUndefined
/// where absent); `ok` false when the operands' dtypes fit no form of it.
struct Types {
  std::array<DType, 3> in{DType::kUndefined, DType::kUndefined, DType::kUndefined};
  DType out = DType::kFloat32;
  int required = 1;
  bool ok = true;
};

bool numeric(DType t) { return t == DType::kFloat32 || t == DType::kInt32 || t == DType::kInt64; }
bool castable(DType t) { return numeric(t) || t == DType::kBool; }

Types types_of(const EwInstr& in, const std::array<DType, 3>& ops) {
  constexpr DType F = DType::kFloat32, B = DType::kBool, U = DType::kUndefined;
  Types t;
  const DType n0 = numeric(ops[0]) ? ops[0] : F;  // the T of a numeric form
  switch (info(in.op).sig) {
    case Sig::kUnaryF: t.in = {F, U, U}; t.out = F; break;
    case Sig::kUnaryN: t.in = {n0, U, U}; t.out = n0; break;
    case Sig::kBinaryF: t.in = {F, F, U}; t.out = F; t.required = 2; break;
    case Sig::kBinaryN: t.in = {n0, n0, U}; t.out = n0; t.required = 2; break;
    case Sig::kCompareN: t.in = {n0, n0, U}; t.out = B; t.required = 2; break;
    case Sig::kLogic: t.in = {B, B, U}; t.out = B; t.required = 2; break;
    case Sig::kNot: t.in = {B, U, U}; t.out = B; break;
    case Sig::kWhere: {
      const DType v = numeric(ops[1]) ? ops[1] : F;
      t.in = {B, v, v};
      t.out = v;
      t.required = 3;
      break;
    }
    case Sig::kClip: t.in = {F, F, F}; t.out = F; break;
    case Sig::kCast: {
      t.in = {castable(ops[0]) ? ops[0] : F, U, U};
      const float to = in.params[0];  // a dtype code: checked before it is converted
      if (!(to >= 0.f && to <= 32.f) || to != std::floor(to)) {
        t.ok = false;
        break;
      }
      t.out = static_cast<DType>(static_cast<int32_t>(to));
      const bool to_int = t.out == DType::kInt32 || t.out == DType::kInt64;
      t.ok = castable(t.out) && !(to_int && t.in[0] == F);  // float -> integer stays the Cast kernel's
      break;
    }
  }
  return t;
}

void infer_fused_elementwise(InferContext& ctx) {
  std::vector<DType> types;
  Shape s;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) ctx.error("input " + std::to_string(i) + " is missing");
    types.push_back(ctx.dtype(i));
    s = i == 0 ? ctx.shape(0) : broadcast_shapes(ctx, s, ctx.shape(i));
  }
  const EwProgram p = decode_program(*ctx.node, types);
  if (p.results.size() != ctx.node->outputs().size())
    ctx.error("has " + std::to_string(ctx.node->outputs().size()) + " outputs but " +
              std::to_string(p.results.size()) + " results");
  // Each register's shape as its ops define it (numpy broadcasting of its
  // operands). The kernel writes every output over S, the broadcast of all
  // inputs: a result of another shape (inputs that contradict the dims the
  // grouping relied on, e.g. one symbol bound to two sizes) is refused.
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.shape(i));
  for (const EwInstr& in : p.code) {
    Shape r = shapes[in.args[0]];
    for (int j = 1; j < 3; ++j) {
      if (in.args[j] < 0) continue;
      if (in.op == EwOp::kClip) {  // min and max are scalars (Clip-13); the kernel reads one element
        if (shape_numel(shapes[in.args[j]]) != 1) ctx.error("Clip's min/max must hold one element");
        continue;
      }
      r = broadcast_shapes(ctx, r, shapes[in.args[j]]);
    }
    shapes.push_back(r);
  }
  for (size_t k = 0; k < p.results.size(); ++k) {
    const Shape& r = shapes[p.results[k]];
    if (r != s)
      fail(ErrorCode::kInvalidArgument, ctx.node->describe() + ": output " + std::to_string(k) + " would have shape " +
                                            shape_str(r) + " but the fused group computes " + shape_str(s) +
                                            ": the inputs' shapes contradict the model's declared dims");
    ctx.set_output(k, p.reg_types[p.results[k]], s);
  }
}

}  // namespace

const char* ew_op_name(EwOp op) { return info(op).name; }

EwProgram decode_program(const ir::Node& n, const std::vector<DType>& input_types) {
  auto bad = [&](const std::string& msg) { fail(ErrorCode::kInvalidModel, n.describe() + ": " + msg); };
  const ir::Attribute* ops_attr = n.find_attr("ops");
  if (!ops_attr || ops_attr->kind != ir::Attribute::Kind::kStrings) bad("attribute 'ops' (strings) is missing");
  const std::vector<std::string>& names = ops_attr->strings;
  const std::vector<int64_t> args = n.get_ints("args");
  const std::vector<float> params = n.get_floats("params");
  const std::vector<int64_t> results = n.get_ints("results");
  if (names.empty() || names.size() > static_cast<size_t>(kMaxFusedInstructions))
    bad("a program of " + std::to_string(names.size()) + " instructions (1 to " +
        std::to_string(kMaxFusedInstructions) + ")");
  if (input_types.empty() || input_types.size() > static_cast<size_t>(kMaxFusedInputs))
    bad(std::to_string(input_types.size()) + " inputs (1 to " + std::to_string(kMaxFusedInputs) + ")");
  if (args.size() != 3 * names.size() || params.size() != 3 * names.size())
    bad("'args' and 'params' must hold 3 entries per instruction");
  EwProgram p;
  p.input_types = input_types;
  p.reg_types = input_types;
  for (DType t : input_types)
    if (!castable(t)) bad(std::string("an input of dtype ") + dtype_name(t) + " (float32, bool, int32 or int64)");
  for (size_t k = 0; k < names.size(); ++k) {
    const OpInfo* o = find_op(names[k]);
    const std::string where = "instruction " + std::to_string(k) + " (" + names[k] + ")";
    if (!o) bad(where + ": not an op the fused kernel runs");
    EwInstr in;
    in.op = o->op;
    for (int j = 0; j < 3; ++j) {
      in.params[j] = params[3 * k + j];
      const int64_t a = args[3 * k + j];
      if (a < -1 || a >= p.num_registers()) bad(where + ": operand " + std::to_string(a) + " is not an earlier register");
      in.args[j] = static_cast<int32_t>(a);
    }
    if (in.args[0] < 0) bad(where + ": operand 0 is missing");
    std::array<DType, 3> opd{DType::kUndefined, DType::kUndefined, DType::kUndefined};
    for (int j = 0; j < 3; ++j)
      if (in.args[j] >= 0) opd[j] = p.reg_types[in.args[j]];
    const Types t = types_of(in, opd);
    if (!t.ok) bad(where + ": a Cast the fused kernel does not run (between float32, bool, int32 and int64; not float to integer)");
    for (int j = 0; j < 3; ++j) {
      if (t.in[j] == DType::kUndefined) {
        if (in.args[j] >= 0) bad(where + ": takes no operand " + std::to_string(j));
        continue;
      }
      if (in.args[j] < 0) {
        if (j < t.required) bad(where + ": operand " + std::to_string(j) + " is missing");
        continue;
      }
      if (p.reg_types[in.args[j]] != t.in[j])
        bad(where + ": operand " + std::to_string(j) + " is " + dtype_name(p.reg_types[in.args[j]]) + ", expected " +
            dtype_name(t.in[j]));
    }
    p.code.push_back(in);
    p.reg_types.push_back(t.out);
  }
  if (results.empty()) bad("'results' is empty");
  for (int64_t r : results) {
    if (r < 0 || r >= p.num_registers()) bad("result register " + std::to_string(r) + " is out of range");
    p.results.push_back(static_cast<int32_t>(r));
  }
  return p;
}

std::array<float, 3> activation_params(const ir::Node& n) {
  const std::string& op = n.op_type;
  if (op == "LeakyRelu") return {n.get_float("alpha", 0.01f), 0.f, 0.f};
  if (op == "Elu" || op == "Celu" || op == "ThresholdedRelu") return {n.get_float("alpha", 1.0f), 0.f, 0.f};
  if (op == "Selu")
    return {n.get_float("alpha", 1.67326319217681884765625f), 0.f, n.get_float("gamma", 1.05070102710723876953125f)};
  if (op == "HardSigmoid") return {n.get_float("alpha", 0.2f), n.get_float("beta", 0.5f), 0.f};
  if (op == "HardSwish") return {1.0f / 6.0f, 0.5f, 0.f};  // HardSwish-14: x * HardSigmoid(x; 1/6, 0.5)
  if (op == "Swish") return {n.get_float("alpha", 1.0f), 0.f, 0.f};
  if (op == "Shrink") return {n.get_float("lambd", 0.5f), n.get_float("bias", 0.0f), 0.f};
  return {0.f, 0.f, 0.f};
}

std::optional<EwInstr> elementwise_instruction(const ir::Node& n) {
  // Gelu and Swish are ours (ai.onnx Gelu-20 is rewritten on import); the rest ai.onnx.
  const bool ours = n.op_type == "Gelu" || n.op_type == "Swish";
  if (n.domain != (ours ? kGecDomain : "")) return std::nullopt;
  const OpInfo* o = find_op(n.op_type);
  if (!o || n.outputs().size() != 1) return std::nullopt;
  EwInstr in;
  in.op = o->op;
  in.params = activation_params(n);
  const size_t ni = n.inputs().size();
  auto dtype = [&](size_t i) { return n.has_input(i) ? n.input(i)->type.dtype : DType::kUndefined; };
  switch (o->sig) {
    case Sig::kUnaryF:
    case Sig::kUnaryN:
    case Sig::kNot:
      if (ni != 1) return std::nullopt;
      break;
    case Sig::kBinaryF:
    case Sig::kBinaryN:
    case Sig::kCompareN:
    case Sig::kLogic:
      if (ni != 2 || !n.has_input(1)) return std::nullopt;
      break;
    case Sig::kWhere:
      if (ni != 3 || !n.has_input(1) || !n.has_input(2)) return std::nullopt;
      break;
    case Sig::kClip:
      if (ni < 1 || ni > 3) return std::nullopt;
      for (size_t i = 1; i < ni; ++i)
        if (n.has_input(i) && (!n.input(i)->type.is_static() || shape_numel(n.input(i)->type.static_shape()) != 1))
          return std::nullopt;
      break;
    case Sig::kCast:
      if (ni != 1) return std::nullopt;
      in.params = {static_cast<float>(n.get_int("to", 0)), 0.f, 0.f};
      break;
  }
  if (!n.has_input(0)) return std::nullopt;
  if (n.op_type == "Gelu") {
    const std::string a = n.get_string("approximate", "none");
    if (a != "none" && a != "tanh") return std::nullopt;
    in.params = {a == "tanh" ? 1.f : 0.f, 0.f, 0.f};
  }
  std::array<DType, 3> opd{DType::kUndefined, DType::kUndefined, DType::kUndefined};
  for (size_t i = 0; i < ni && i < 3; ++i) opd[i] = dtype(i);
  const Types t = types_of(in, opd);
  if (!t.ok) return std::nullopt;
  for (size_t i = 0; i < ni; ++i)
    if (n.has_input(i) && dtype(i) != t.in[i]) return std::nullopt;
  if (n.output(0)->type.dtype != t.out) return std::nullopt;
  return in;
}

void set_program_attrs(ir::Node& n, const std::vector<EwInstr>& code, const std::vector<int32_t>& results) {
  std::vector<std::string> names;
  std::vector<int64_t> args, res(results.begin(), results.end());
  std::vector<float> params;
  for (const EwInstr& in : code) {
    names.push_back(ew_op_name(in.op));
    for (int j = 0; j < 3; ++j) args.push_back(in.args[j]), params.push_back(in.params[j]);
  }
  n.set_attr(ir::Attribute::Strings("ops", names));
  n.set_attr(ir::Attribute::Ints("args", args));
  n.set_attr(ir::Attribute::Floats("params", params));
  n.set_attr(ir::Attribute::Ints("results", res));
}

// Broadcast, not elementwise: inputs may broadcast. Every full-shaped input
// may be overwritten by the output (the kernel reads a block of every input
// before it writes that block of any output); the planner in-places single-
// output nodes only. Blocked layouts pass through when no input broadcasts.
GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "FusedElementwise", .infer = infer_fused_elementwise,
                 .traits = traits(PatternKind::kBroadcast).in_place({0, 1, 2, 3}).with_layout(LayoutRule::kElementwiseGroup)});

}  // namespace gec::ops
