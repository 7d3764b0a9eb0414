// Malformed nodes must raise gec::Error (from the op schema's infer function
// or the kernel), never crash or compute a silent wrong answer: recurrent
// weights and states (LSTM/GRU/RNN-14), normalization parameters
// (InstanceNormalization-6, LRN-13, BatchNormalization-15,
// LayerNormalization-17), Conv/ConvTranspose-11 group/bias/kernel shapes,
// pooling windows, and integer Div/Mod by zero.
#include <cmath>
#include <limits>

#include "kernels_tensor_util.h"
#include "test_util.h"

namespace gec {
namespace {
using namespace gec::testing;

Tensor zeros_f(const Shape& s) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 0.f;
  return t;
}

// ---- LSTM / GRU / RNN ------------------------------------------------------
// Valid LSTM: X [T=2, N=1, I=3], W [1, 4*2, 3], R [1, 8, 2] (hidden 2).

TEST(BadModelRecurrent, ValidLstmRuns) {
  auto out = run_op("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2})},
                    {Attribute::Int("hidden_size", 2)}, 3);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 2}));
  // Zero weights: gates are sigmoid(0) = 0.5, c = 0.5 * tanh(0) = 0, h = 0.
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{0.f, 0.f}));
}

TEST(BadModelRecurrent, RHiddenDisagreesWithW) {
  // R says hidden 3 but W's 8 rows say 4 gates * 2.
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 3})}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, HiddenSizeAttrDisagreesWithR) {
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 12, 3}), zeros_f({1, 12, 3})},
                          {Attribute::Int("hidden_size", 2)}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, InputSizeDisagreesWithW) {
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 4}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2})}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, XNot3D) {
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2})}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, WrongBias) {
  // B must be [1, 2*4*2] = [1, 16].
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2}), zeros_f({1, 8})}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, WrongSequenceLens) {
  Tensor lens = make<int32_t>({2}, {2, 2});  // batch is 1
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2}), Tensor(), lens}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, WrongInitialStates) {
  const Tensor x = zeros_f({2, 1, 3}), w = zeros_f({1, 8, 3}), r = zeros_f({1, 8, 2});
  EXPECT_EQ(error_code_of("LSTM", {x, w, r, Tensor(), Tensor(), zeros_f({1, 1, 3})}, {}, 3), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LSTM", {x, w, r, Tensor(), Tensor(), zeros_f({1, 1, 2}), zeros_f({1, 2, 2})}, {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, WrongPeepholes) {
  // P must be [1, 3*2].
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2}), Tensor(), Tensor(),
                                   Tensor(), Tensor(), zeros_f({1, 3})},
                          {}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, DirectionCountDisagreesWithW) {
  EXPECT_EQ(error_code_of("LSTM", {zeros_f({2, 1, 3}), zeros_f({1, 8, 3}), zeros_f({1, 8, 2})},
                          {Attribute::String("direction", "bidirectional")}, 3),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, LayoutMustBe0Or1) {
  EXPECT_EQ(error_code_of("RNN", {zeros_f({2, 1, 3}), zeros_f({1, 2, 3}), zeros_f({1, 2, 2})},
                          {Attribute::Int("layout", 2)}, 2),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, Layout1InitialHIsBatchMajor) {
  // layout 1: X [N=2, T=1, I=3], initial_h [N, D, H] = [2, 1, 2].
  const Tensor x = zeros_f({2, 1, 3}), w = zeros_f({1, 2, 3}), r = zeros_f({1, 2, 2});
  auto out = run_op("RNN", {x, w, r, Tensor(), Tensor(), make<float>({2, 1, 2}, {0.5f, -0.5f, 0.25f, 0.f})},
                    {Attribute::Int("layout", 1)}, 2);
  // Zero weights: H = tanh(0) = 0 whatever initial_h was.
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{0.f, 0.f, 0.f, 0.f}));
  // The layout-0 form [D, N, H] = [1, 2, 2] is wrong under layout 1.
  EXPECT_EQ(error_code_of("RNN", {x, w, r, Tensor(), Tensor(), zeros_f({1, 2, 2})}, {Attribute::Int("layout", 1)}, 2),
            ErrorCode::kInvalidModel);
}

TEST(BadModelRecurrent, GruAndRnnCheckR) {
  // GRU hidden 2: W [1, 6, 3], R must be [1, 6, 2].
  EXPECT_EQ(error_code_of("GRU", {zeros_f({2, 1, 3}), zeros_f({1, 6, 3}), zeros_f({1, 6, 3})}, {}, 2),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("RNN", {zeros_f({2, 1, 3}), zeros_f({1, 2, 3}), zeros_f({1, 3, 3})}, {}, 2),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("RNN", {zeros_f({2, 1, 3}), zeros_f({1, 2, 3}), zeros_f({1, 2, 2}), zeros_f({1, 2})}, {}, 2),
            ErrorCode::kInvalidModel);
}

// ---- normalization ---------------------------------------------------------

TEST(BadModelNorm, InstanceNormScaleAndBiasMustBeC) {
  const Tensor x = zeros_f({1, 2, 3});
  EXPECT_EQ(error_code_of("InstanceNormalization", {x, zeros_f({3}), zeros_f({2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("InstanceNormalization", {x, zeros_f({2}), zeros_f({1})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("InstanceNormalization", {zeros_f({2}), zeros_f({2}), zeros_f({2})}),
            ErrorCode::kInvalidModel);
}

TEST(BadModelNorm, LrnSizeAndParameters) {
  const Tensor x = zeros_f({1, 2, 2});
  EXPECT_EQ(error_code_of("LRN", {x}, {Attribute::Int("size", 0)}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LRN", {x}, {Attribute::Int("size", -3)}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LRN", {x}), ErrorCode::kInvalidModel);  // size is required
  EXPECT_EQ(error_code_of("LRN", {x}, {Attribute::Int("size", 3),
                                      Attribute::Float("beta", std::numeric_limits<float>::infinity())}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LRN", {zeros_f({4})}, {Attribute::Int("size", 1)}), ErrorCode::kInvalidModel);
  // Valid: x / (1 + 1e-4 / 1 * x^2)^0.75 with size 1; x = 0 -> 0.
  auto y = run_op("LRN", {x}, {Attribute::Int("size", 1)});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{0.f, 0.f, 0.f, 0.f}));
}

TEST(BadModelNorm, BatchNormParametersMustBeC) {
  const Tensor x = zeros_f({1, 2, 2}), c = zeros_f({2});
  EXPECT_EQ(error_code_of("BatchNormalization", {x, c, c, zeros_f({3}), c}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("BatchNormalization", {x, zeros_f({1, 2}), c, c, c}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("BatchNormalization", {x, c, c, c, zeros_f({1})}), ErrorCode::kInvalidModel);
}

TEST(BadModelNorm, LayerNormAxisAndScaleShape) {
  const Tensor x = zeros_f({2, 3});
  EXPECT_EQ(error_code_of("LayerNormalization", {x, zeros_f({3})}, {Attribute::Int("axis", 2)}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LayerNormalization", {x, zeros_f({4})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("LayerNormalization", {x, zeros_f({3}), zeros_f({2})}), ErrorCode::kInvalidModel);
  // Same element count as the normalized shape [3] but not broadcastable.
  EXPECT_EQ(error_code_of("LayerNormalization", {zeros_f({1, 3}), zeros_f({3, 1})}, {Attribute::Int("axis", 1)}),
            ErrorCode::kInvalidModel);
}

TEST(BadModelNorm, LayerNormBroadcastScaleAndBias) {
  // Normalized shape [2, 3] (axis 1), Scale [3] and B [2, 1] broadcast to it.
  // Rows [1,2,3],[1,2,3]: mean 2, var 2/3, 1/std = sqrt(1.5); epsilon 0.
  Tensor x = make<float>({1, 2, 3}, {1, 2, 3, 1, 2, 3});
  auto y = run_op("LayerNormalization",
                  {x, make<float>({3}, {1.f, 2.f, 3.f}), make<float>({2, 1}, {0.f, 10.f})},
                  {Attribute::Int("axis", 1), Attribute::Float("epsilon", 0.f)});
  const float s = std::sqrt(1.5f);
  expect_close(values<float>(y[0]), {-s, 0.f, 3.f * s, 10.f - s, 10.f, 10.f + 3.f * s});
}

// ---- Conv / ConvTranspose / pool / MatMul / Gemm ----------------------------

TEST(BadModelConv, GroupMustDivideChannels) {
  // C = 6 = W[1] * group 3, but M = 4 is not a multiple of 3.
  EXPECT_EQ(error_code_of("Conv", {zeros_f({1, 6, 3, 3}), zeros_f({4, 2, 1, 1})}, {Attribute::Int("group", 3)}),
            ErrorCode::kInvalidModel);
  // W[1] * group != C.
  EXPECT_EQ(error_code_of("Conv", {zeros_f({1, 4, 3, 3}), zeros_f({2, 1, 1, 1})}, {Attribute::Int("group", 2)}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Conv", {zeros_f({1, 4, 3, 3}), zeros_f({2, 4, 1, 1})}, {Attribute::Int("group", 0)}),
            ErrorCode::kInvalidModel);
}

TEST(BadModelConv, BiasAndKernelShape) {
  const Tensor x = zeros_f({1, 2, 3, 3});
  EXPECT_EQ(error_code_of("Conv", {x, zeros_f({3, 2, 1, 1}), zeros_f({2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Conv", {x, zeros_f({3, 2, 0, 1})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Conv", {x, zeros_f({3, 2, 1, 1})}, {Attribute::Ints("kernel_shape", {2, 2})}),
            ErrorCode::kInvalidModel);
  // Valid with bias [M]: 1x1 zero kernel -> output = bias.
  auto y = run_op("Conv", {zeros_f({1, 2, 1, 1}), zeros_f({3, 2, 1, 1}), make<float>({3}, {1.f, 2.f, 3.f})});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(BadModelConv, ConvTransposeChecks) {
  const Tensor x = zeros_f({1, 4, 2, 2});
  // W [C=4, M/group=1, 1, 1], group 2 -> M = 2; bias must be [2].
  EXPECT_EQ(error_code_of("ConvTranspose", {x, zeros_f({4, 1, 1, 1}), zeros_f({1})}, {Attribute::Int("group", 2)}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("ConvTranspose", {x, zeros_f({4, 1, 1, 1})}, {Attribute::Int("group", 3)}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("ConvTranspose", {x, zeros_f({3, 1, 1, 1})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("ConvTranspose", {x, zeros_f({4, 1, 1, 0})}), ErrorCode::kInvalidModel);
}

TEST(BadModelConv, PoolWindow) {
  const Tensor x = zeros_f({1, 1, 3, 3});
  EXPECT_EQ(error_code_of("MaxPool", {x}, {Attribute::Ints("kernel_shape", {0, 2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("AveragePool", {x}), ErrorCode::kInvalidModel);  // kernel_shape required
  EXPECT_EQ(error_code_of("MaxPool", {x}, {Attribute::Ints("kernel_shape", {4, 4})}), ErrorCode::kInvalidModel);
}

TEST(BadModelConv, MatMulAndGemmInnerDims) {
  EXPECT_EQ(error_code_of("MatMul", {zeros_f({2, 3}), zeros_f({4, 2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Gemm", {zeros_f({2, 3}), zeros_f({4, 2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Gemm", {zeros_f({2, 3}), zeros_f({3, 2}), zeros_f({3})}), ErrorCode::kInvalidModel);
}

// ---- integer Div / Mod by zero ---------------------------------------------

TEST(BadModelDivision, IntegerDivByZeroIsAnError) {
  EXPECT_EQ(error_code_of("Div", {make<int32_t>({3}, {1, 2, 3}), make<int32_t>({3}, {1, 0, 1})}),
            ErrorCode::kInvalidArgument);
  // A broadcast scalar zero divisor.
  EXPECT_EQ(error_code_of("Div", {make<int64_t>({2}, {4, 5}), make<int64_t>({}, {0})}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of("Div", {make<uint8_t>({1}, {4}), make<uint8_t>({1}, {0})}), ErrorCode::kInvalidArgument);
  try {
    run_op("Div", {make<int32_t>({1}, {1}), make<int32_t>({1}, {0})});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
}

TEST(BadModelDivision, IntegerModByZeroIsAnError) {
  EXPECT_EQ(error_code_of("Mod", {make<int64_t>({2}, {7, -7}), make<int64_t>({2}, {3, 0})}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of("Mod", {make<int32_t>({2}, {7, -7}), make<int32_t>({1}, {0})}, {Attribute::Int("fmod", 1)}),
            ErrorCode::kInvalidArgument);
}

TEST(BadModelDivision, NonZeroIntegerDivisorsAndFloatZeroStillWork) {
  EXPECT_EQ(values<int32_t>(run_op("Div", {make<int32_t>({2}, {7, -7}), make<int32_t>({2}, {2, 2})})[0]),
            (std::vector<int32_t>{3, -3}));
  // Empty divisor: nothing to divide, no error.
  EXPECT_EQ(run_op("Div", {make<int32_t>({0}, {}), make<int32_t>({0}, {})})[0].numel(), 0);
  // Float division by zero stays IEEE: +inf, -inf, NaN.
  auto f = values<float>(run_op("Div", {make<float>({3}, {1.f, -1.f, 0.f}), make<float>({}, {0.f})})[0]);
  EXPECT_EQ(f[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f[2]));
  auto m = values<double>(run_op("Mod", {make<double>({1}, {5.0}), make<double>({1}, {0.0})},
                                 {Attribute::Int("fmod", 1)})[0]);
  EXPECT_TRUE(std::isnan(m[0]));
}

}  // namespace
}  // namespace gec
