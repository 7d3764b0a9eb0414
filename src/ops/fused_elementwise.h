// com.graphengine::FusedElementwise: a group of elementwise and broadcasting
// ops (made by the autofusion pass, passes/autofusion.cc) run as one kernel
// that reads each group input once and writes each group output once.
//
// The node carries a small program over registers:
//   registers 0 .. I-1     the node's inputs (float32, bool, int32 or int64), each
//                          broadcast (numpy rules) to the output shape S;
//   register  I + k        the result of instruction k.
// Attributes:
//   ops     (strings, one per instruction) the ONNX op type it computes
//           (Add, Mul, Erf, Where, Cast, ...; "Gelu" is com.graphengine's);
//   args    (ints, 3 per instruction) operand registers, -1 = none (Clip's
//           omitted min or max);
//   params  (floats, 3 per instruction) the op's attributes: alpha, beta,
//           gamma of the activations (ONNX defaults filled in), Cast's
//           target dtype code, Gelu's 1 = tanh form;
//   results (ints, one per node output) the register each output holds.
// Every output has shape S (the broadcast of the inputs); its dtype is its
// register's. Arithmetic (Add, Sub, Mul, Div, Max, Min, Neg, Abs, Relu,
// Sign), comparisons and Where run on float32, int32 or int64 (integer Div
// truncates toward zero, a zero divisor is an error, overflow wraps); the
// other math is float32; logic is bool; Cast goes between float32, bool,
// int32 and int64 except float to integer.
// Semantics of each instruction are its ONNX op's (opset 17; Gelu-20).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::ops {

/// Instruction opcodes. Unary float ops first (their order is the kernel's
/// formula table), then the rest.
enum class EwOp : uint8_t {
  // unary (Relu, Neg, Abs, Sign also on int32/int64)
  kRelu, kNeg, kAbs, kSign, kSigmoid, kTanh, kErf, kExp, kLog, kSqrt, kReciprocal, kFloor, kCeil, kRound,
  kSin, kCos, kSoftplus, kSoftsign, kHardSigmoid, kHardSwish, kLeakyRelu, kElu, kSelu, kCelu,
  kThresholdedRelu, kMish, kSwish, kGelu,
  // binary (Add .. Min also on int32/int64)
  kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu,
  // comparisons -> bool
  kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual,
  // bool logic
  kAnd, kOr, kXor, kNot,
  // others
  kWhere,  // bool, T, T -> T
  kClip,   // float32 [, min] [, max] -> float32
  kCast,   // params[0] = target dtype code
};
constexpr int kNumEwOps = static_cast<int>(EwOp::kCast) + 1;

/// The ONNX op type of an opcode ("Gelu" for kGelu).
const char* ew_op_name(EwOp op);

struct EwInstr {
  EwOp op = EwOp::kAdd;
  std::array<int32_t, 3> args{-1, -1, -1};
  std::array<float, 3> params{0.f, 0.f, 0.f};
};

/// A FusedElementwise node's program, decoded and checked.
struct EwProgram {
  std::vector<DType> input_types;  // per input register
  std::vector<EwInstr> code;
  std::vector<int32_t> results;    // per node output: a register
  std::vector<DType> reg_types;    // per register (inputs, then instructions)
  int num_registers() const { return static_cast<int>(reg_types.size()); }
};

/// Most inputs and instructions one FusedElementwise may have (the kernel
/// keeps a fixed-size loop plan and a register block per instruction).
constexpr int kMaxFusedInputs = 8;
constexpr int kMaxFusedInstructions = 48;

/// Decodes and checks `n`'s program against its input dtypes: attribute
/// sizes, known op names, each operand an earlier register of the right
/// dtype, Cast targets one of float32, bool, int32, int64 (not float to
/// integer), results in range, at most
/// kMaxFusedInputs inputs and kMaxFusedInstructions instructions. Errors:
/// gec::Error(kInvalidModel) naming the node and the instruction.
EwProgram decode_program(const ir::Node& n, const std::vector<DType>& input_types);

/// The instruction computing `n` (an ONNX node or com.graphengine::Gelu)
/// when the fused kernel can run it: the op is in the table above, its
/// inputs and outputs have dtypes one of its forms takes (Pow: float32
/// exponent; Max/Min: exactly two inputs; Cast: see above),
/// and its attributes are read with the ONNX defaults. Operands are left at
/// -1 for the caller to fill. nullopt otherwise.
std::optional<EwInstr> elementwise_instruction(const ir::Node& n);

/// Writes `code`/`results` as the node attributes described above.
void set_program_attrs(ir::Node& n, const std::vector<EwInstr>& code, const std::vector<int32_t>& results);

/// Attributes alpha, beta, gamma of a unary activation with the ONNX text's
/// defaults (LeakyRelu alpha 0.01, Elu/Celu/ThresholdedRelu alpha 1, Selu
/// alpha/gamma, HardSigmoid 0.2/0.5, HardSwish 1/6 and 0.5, Shrink lambd
/// and bias as alpha and beta); zeros for other ops. Shared by the unary
/// kernels and the fused kernel.
std::array<float, 3> activation_params(const ir::Node& n);

}  // namespace gec::ops
