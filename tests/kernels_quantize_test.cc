// Tests of the quantization kernels (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv). Expected values are hand-computed from the ONNX operator text.
#include <limits>

#include "kernels_nn_util.h"

namespace gec::testing {
namespace {

TEST(KernelsQuantize, QuantizeLinearPerTensor) {
  // rint halves to even: 1.5 -> 2, -1.5 -> -2; 500 + 128 saturates at 255.
  auto y = run_op("QuantizeLinear", {make<float>({5}, {0, 2, 3, -3, 1000}), make<float>({}, {2}), make<uint8_t>({}, {128})});
  ASSERT_EQ(y[0].dtype(), DType::kUInt8);
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{128, 129, 130, 126, 255}));
  // int8 zero point: -150 - 1 saturates at -128; rint(0.5) = 0; rint(2.5) = 2.
  y = run_op("QuantizeLinear", {make<float>({3}, {-300, 1, 5}), make<float>({}, {2}), make<int8_t>({}, {-1})});
  EXPECT_EQ(values<int8_t>(y[0]), (std::vector<int8_t>{-128, -1, 1}));
  // No zero point: uint8 with zp 0; negatives clamp to 0.
  y = run_op("QuantizeLinear", {make<float>({2}, {-1, 7}), make<float>({}, {1}), Tensor()});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 7}));
}

// Found by fuzzing gom_load: a NaN input made the cast to int8 undefined.
// NaN quantizes to the zero point.
TEST(KernelsQuantize, NanQuantizesToTheZeroPoint) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = run_op("QuantizeLinear", {make<float>({2}, {nan, 4}), make<float>({}, {2}), make<int8_t>({}, {-3})});
  EXPECT_EQ(values<int8_t>(y[0]), (std::vector<int8_t>{-3, -1}));
  auto d = run_op("DynamicQuantizeLinear", {make<float>({3}, {-1, nan, 1})}, {}, 3);
  ASSERT_EQ(d.size(), 3u);
  // Range [-1, 1]: scale 2/255, zero point rint(127.49...) = 127; 1 -> 127.5 + 127 -> 254.
  EXPECT_EQ(values<uint8_t>(d[2])[0], 127);
  EXPECT_EQ(values<uint8_t>(d[0]), (std::vector<uint8_t>{0, 127, 254}));
}

// Found by fuzzing gom_load: a per-axis scale shorter than the axis was read
// past its end. Params that do not fit x are refused: by shape inference
// (the kInvalidModel cases; a .gom whose plan skips it reaches the kernel's
// own check, replayed in tests/fuzz_regressions/gom_load) and by the kernel.
TEST(KernelsQuantize, ParamsThatDoNotFitAreRefused) {
  const Tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error([&] { run_op("QuantizeLinear", {x, make<float>({2}, {1, 1}), make<uint8_t>({2}, {0, 0})}); },
               ErrorCode::kInvalidModel, "input 1 [2] is neither a scalar nor 1-D of size 3");
  expect_error([&] { run_op("QuantizeLinear", {x, make<float>({3}, {1, 1, 1}), make<uint8_t>({1}, {0})}); },
               ErrorCode::kInvalidArgument, "the zero point has 1 elements, the scale 3");
  expect_error([&] { run_op("DequantizeLinear", {make<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({0}, {})}); },
               ErrorCode::kInvalidModel, "input 1 [0] is neither a scalar nor 1-D");
  expect_error([&] { run_op("QuantizeLinear", {x, make<float>({3}, {1, 1, 1})}, {ai("axis", 5)}); },
               ErrorCode::kInvalidModel, "axis 5 is out of range");
}

TEST(KernelsQuantize, QuantizeDequantizePerAxis) {
  auto y = run_op("QuantizeLinear", {make<float>({1, 2, 2}, {1, 2, 10, 20}), make<float>({2}, {1, 10}), make<uint8_t>({2}, {0, 5})});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{1, 2, 6, 7}));
  auto d = run_op("DequantizeLinear", {make<int8_t>({2, 2}, {1, 2, 3, 4}), make<float>({2}, {1, 0.5f}), make<int8_t>({2}, {0, 2})});
  expect_close(values<float>(d[0]), {1, 0, 3, 1});
  // axis 0 instead of the default 1.
  d = run_op("DequantizeLinear", {make<int8_t>({2, 2}, {1, 2, 3, 4}), make<float>({2}, {1, 0.5f}), make<int8_t>({2}, {0, 2})},
             {ai("axis", 0)});
  expect_close(values<float>(d[0]), {1, 2, 0.5f, 1});
}

TEST(KernelsQuantize, DequantizeLinear) {
  auto d = run_op("DequantizeLinear", {make<uint8_t>({4}, {0, 3, 128, 255}), make<float>({}, {2}), make<uint8_t>({}, {128})});
  expect_close(values<float>(d[0]), {-256, -250, 0, 254});
  d = run_op("DequantizeLinear", {make<int32_t>({1}, {-5}), make<float>({}, {0.5f})});
  expect_close(values<float>(d[0]), {-2.5f});
}

TEST(KernelsQuantize, DynamicQuantizeLinear) {
  // Range [-3, 2]: scale 5/255, zero point 3 / scale = 153.
  auto y = run_op("DynamicQuantizeLinear", {make<float>({3}, {0, 2, -3})}, {}, 3);
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{153, 255, 0}));
  expect_close(values<float>(y[1]), {5.f / 255.f});
  EXPECT_EQ(values<uint8_t>(y[2])[0], 153);
  // All positive: the range still includes 0, so zp = 0, scale = 51/255.
  y = run_op("DynamicQuantizeLinear", {make<float>({2}, {0, 51})}, {}, 3);
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 255}));
  expect_close(values<float>(y[1]), {0.2f});
  // All zeros: scale 0 and no division by zero.
  y = run_op("DynamicQuantizeLinear", {make<float>({2}, {0, 0})}, {}, 3);
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(values<float>(y[1])[0], 0.f);
}

TEST(KernelsQuantize, MatMulInteger) {
  // (A - 1)(B - 5) = [[0,1],[2,3]]^2 = [[2,3],[6,11]].
  auto y = run_op("MatMulInteger", {make<uint8_t>({2, 2}, {1, 2, 3, 4}), make<uint8_t>({2, 2}, {5, 6, 7, 8}),
                                    make<uint8_t>({}, {1}), make<uint8_t>({}, {5})});
  ASSERT_EQ(y[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{2, 3, 6, 11}));
  // int8, no zero points, 1-D A: [-1, 2] x [[3], [-4]] = [-11].
  y = run_op("MatMulInteger", {make<int8_t>({2}, {-1, 2}), make<int8_t>({2, 1}, {3, -4})});
  ASSERT_EQ(y[0].shape(), Shape{1});
  EXPECT_EQ(values<int32_t>(y[0])[0], -11);
  // Batch broadcast [2,1,2] x [2,1]; per-column b zero point.
  y = run_op("MatMulInteger", {make<uint8_t>({2, 1, 2}, {1, 1, 2, 0}), make<uint8_t>({2, 1}, {3, 4}), Tensor(),
                               make<uint8_t>({1}, {1})});
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{5, 4}));
}

TEST(KernelsQuantize, QLinearMatMul) {
  // a real [1, 2], b - zp = [0, 2]: acc 8 -> 8 * 0.5 * 1 / 0.5 = 8, + 10.
  auto y = run_op("QLinearMatMul", {make<uint8_t>({1, 2}, {2, 4}), make<float>({}, {0.5f}), make<uint8_t>({}, {0}),
                                    make<uint8_t>({2, 1}, {1, 3}), make<float>({}, {1}), make<uint8_t>({}, {1}),
                                    make<float>({}, {0.5f}), make<uint8_t>({}, {10})});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{18}));
}

TEST(KernelsQuantize, ConvInteger) {
  std::vector<uint8_t> x9;
  for (uint8_t i = 1; i <= 9; ++i) x9.push_back(i);
  // x - 1 = 0..8 and a 2x2 kernel of ones: window sums.
  auto y = run_op("ConvInteger", {make<uint8_t>({1, 1, 3, 3}, x9), make<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}), make<uint8_t>({}, {1})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{8, 12, 20, 24}));
  // Padding counts as x_zero_point, i.e. 0 after subtraction.
  y = run_op("ConvInteger", {make<uint8_t>({1, 1, 3, 3}, x9), make<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}), make<uint8_t>({}, {1})},
             {ais("pads", {1, 1, 1, 1})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 1, 4, 4}));
  const auto v = values<int32_t>(y[0]);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 1);   // x'(0,0) + x'(0,1)
  EXPECT_EQ(v[15], 8);  // x'(2,2) only
}

TEST(KernelsQuantize, QLinearConv) {
  // acc = 2x, + bias 2, * 0.5 * 1 / 1.
  auto y = run_op("QLinearConv", {make<uint8_t>({1, 1, 2, 2}, {2, 4, 6, 8}), make<float>({}, {0.5f}), make<uint8_t>({}, {0}),
                                  make<int8_t>({1, 1, 1, 1}, {2}), make<float>({}, {1}), make<int8_t>({}, {0}),
                                  make<float>({}, {1}), make<uint8_t>({}, {0}), make<int32_t>({1}, {2})});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{3, 5, 7, 9}));
}

}  // namespace
}  // namespace gec::testing
