// Tests of the math ops added for ONNX conformance: trig/hyperbolic unary
// ops, Shrink, BitShift, Hardmax, Det, LpNormalization,
// MeanVarianceNormalization, Cast to/from string and float16 binary ops.
// Expected values are hand-computed from the ONNX operator text.
#include <cmath>
#include <limits>
#include <string>

#include "kernels_nn_util.h"

namespace gec::testing {
namespace {

TEST(KernelsMath, TrigAndHyperbolic) {
  const struct {
    const char* op;
    float x, y;
  } cases[] = {
      {"Tan", 0.7853982f, 1.0f},        {"Asin", 0.5f, 0.5235988f},   {"Acos", 0.5f, 1.0471976f},
      {"Atan", 1.0f, 0.7853982f},       {"Sinh", 1.0f, 1.1752012f},   {"Cosh", 1.0f, 1.5430806f},
      {"Asinh", 1.0f, 0.8813736f},      {"Acosh", 2.0f, 1.3169579f},  {"Atanh", 0.5f, 0.5493061f},
  };
  for (const auto& c : cases) {
    auto out = run_op(c.op, {make<float>({1}, {c.x})});
    expect_close(values<float>(out[0]), {c.y});
  }
  // Outside the domain: NaN, as C and numpy give.
  EXPECT_TRUE(std::isnan(values<float>(run_op("Asin", {make<float>({}, {2.f})})[0])[0]));
  // float64 and an odd length (not a vector multiple).
  auto d = run_op("Sinh", {make<double>({3}, {0.0, -1.0, 2.0})});
  EXPECT_NEAR(values<double>(d[0])[1], -1.1752011936438014, 1e-12);
  EXPECT_NEAR(values<double>(d[0])[2], 3.626860407847019, 1e-12);
}

TEST(KernelsMath, Shrink) {
  auto y = run_op("Shrink", {make<float>({5}, {-2.f, -1.f, 0.f, 1.f, 2.f})}, {af("lambd", 1.5f), af("bias", 1.5f)});
  expect_close(values<float>(y[0]), {-0.5f, 0.f, 0.f, 0.f, 0.5f});
  // Defaults lambd 0.5, bias 0: hard shrink.
  y = run_op("Shrink", {make<float>({3}, {-0.5f, 0.6f, -0.7f})});
  expect_close(values<float>(y[0]), {0.f, 0.6f, -0.7f});
  auto yi = run_op("Shrink", {make<int8_t>({5}, {-3, -1, 0, 1, 3})}, {af("lambd", 1.f), af("bias", 1.f)});
  EXPECT_EQ(values<int8_t>(yi[0]), (std::vector<int8_t>{-2, 0, 0, 0, 2}));
}

TEST(KernelsMath, BitShift) {
  auto r = run_op("BitShift", {make<uint8_t>({3}, {16, 4, 1}), make<uint8_t>({3}, {1, 2, 3})}, {as("direction", "RIGHT")});
  EXPECT_EQ(values<uint8_t>(r[0]), (std::vector<uint8_t>{8, 1, 0}));
  // Left shift wraps in the type; a shift by the bit width gives 0; scalar broadcast.
  auto l = run_op("BitShift", {make<uint8_t>({4}, {1, 2, 128, 3}), make<uint8_t>({}, {1})}, {as("direction", "LEFT")});
  EXPECT_EQ(values<uint8_t>(l[0]), (std::vector<uint8_t>{2, 4, 0, 6}));
  auto w = run_op("BitShift", {make<uint8_t>({1}, {255}), make<uint8_t>({1}, {8})}, {as("direction", "LEFT")});
  EXPECT_EQ(values<uint8_t>(w[0])[0], 0);
  Tensor a(DType::kUInt64, {2}), b(DType::kUInt64, {2});
  a.as<uint64_t>()[0] = 1;
  a.as<uint64_t>()[1] = 0x8000000000000000ull;
  b.as<uint64_t>()[0] = 40;
  b.as<uint64_t>()[1] = 63;
  auto u = run_op("BitShift", {a, b}, {as("direction", "RIGHT")});
  EXPECT_EQ(u[0].as<uint64_t>()[0], 0u);
  EXPECT_EQ(u[0].as<uint64_t>()[1], 1u);
  // Signed inputs are refused.
  EXPECT_THROW(run_op("BitShift", {make<int32_t>({1}, {1}), make<int32_t>({1}, {1})}, {as("direction", "LEFT")}), Error);
}

TEST(KernelsMath, Hardmax) {
  auto y = run_op("Hardmax", {make<float>({2, 3}, {3, 1, 3, 0, 5, 2})});
  expect_close(values<float>(y[0]), {1, 0, 0, 0, 1, 0});  // first maximum wins the tie
  y = run_op("Hardmax", {make<float>({2, 2}, {1, 2, 3, 0})}, {ai("axis", 0)});
  expect_close(values<float>(y[0]), {0, 1, 1, 0});
  // Middle axis of [2, 2, 1].
  y = run_op("Hardmax", {make<float>({2, 2, 1}, {1, 4, 9, -1})}, {ai("axis", 1)});
  expect_close(values<float>(y[0]), {0, 1, 1, 0});
}

TEST(KernelsMath, Det) {
  auto y = run_op("Det", {make<float>({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(y[0].shape(), Shape{});
  expect_close(values<float>(y[0]), {-2.f});
  // Batch: 2*I (det 8) and a permutation that needs a pivot (det -1).
  y = run_op("Det", {make<float>({2, 3, 3}, {2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 1, 0, 1, 0, 0, 0, 0, 1})});
  expect_close(values<float>(y[0]), {8.f, -1.f});
  y = run_op("Det", {make<double>({1, 2, 2}, {1, 2, 2, 4})});  // singular
  EXPECT_EQ(values<double>(y[0])[0], 0.0);
}

TEST(KernelsMath, LpNormalization) {
  auto y = run_op("LpNormalization", {make<float>({2, 2}, {3, 4, 0, 5})}, {ai("axis", 1)});
  expect_close(values<float>(y[0]), {0.6f, 0.8f, 0.f, 1.f});
  y = run_op("LpNormalization", {make<float>({2, 1}, {1, -3})}, {ai("axis", 0), ai("p", 1)});
  expect_close(values<float>(y[0]), {0.25f, -0.75f});
  EXPECT_THROW(run_op("LpNormalization", {make<float>({2}, {1, 2})}, {ai("p", 3)}), Error);
}

TEST(KernelsMath, MeanVarianceNormalization) {
  // One group of 4 over the default axes [0, 2, 3]: mean 2.5, std sqrt(1.25).
  auto y = run_op("MeanVarianceNormalization", {make<float>({1, 1, 1, 4}, {1, 2, 3, 4})});
  expect_close(values<float>(y[0]), {-1.3416408f, -0.4472136f, 0.4472136f, 1.3416408f});
  // Two channels normalized separately; a constant channel gives 0.
  y = run_op("MeanVarianceNormalization", {make<float>({1, 2, 1, 2}, {0, 2, 5, 5})});
  expect_close(values<float>(y[0]), {-1.f, 1.f, 0.f, 0.f});
}

TEST(KernelsMath, CastNumbersToString) {
  auto y = run_op("Cast", {make<float>({6}, {1.5f, 0.1f, 3.0f, 1e-5f, -2.25f, std::numeric_limits<float>::quiet_NaN()})},
                  {ai("to", static_cast<int64_t>(DType::kString))});
  ASSERT_EQ(y[0].dtype(), DType::kString);
  const std::string* s = y[0].as<std::string>();
  EXPECT_EQ(s[0], "1.5");
  EXPECT_EQ(s[1], "0.1");  // shortest round-trip digits, as numpy prints float32
  EXPECT_EQ(s[2], "3.0");
  EXPECT_EQ(s[3], "1e-05");
  EXPECT_EQ(s[4], "-2.25");
  EXPECT_EQ(s[5], "nan");
  auto yi = run_op("Cast", {make<int64_t>({2}, {-7, 123456789012})}, {ai("to", static_cast<int64_t>(DType::kString))});
  EXPECT_EQ(yi[0].as<std::string>()[1], "123456789012");
}

TEST(KernelsMath, CastStringToNumbers) {
  Tensor x(DType::kString, {5});
  const char* in[] = {"1.25", "-INF", "NaN", "+INF", "-0.5"};
  for (int i = 0; i < 5; ++i) x.as<std::string>()[i] = in[i];
  auto y = run_op("Cast", {x}, {ai("to", static_cast<int64_t>(DType::kFloat32))});
  const auto v = values<float>(y[0]);
  EXPECT_EQ(v[0], 1.25f);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] < 0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_TRUE(std::isinf(v[3]) && v[3] > 0);
  EXPECT_EQ(v[4], -0.5f);
  Tensor xi(DType::kString, {1});
  xi.as<std::string>()[0] = "-9007199254740993";  // not representable as a double
  auto yi = run_op("Cast", {xi}, {ai("to", static_cast<int64_t>(DType::kInt64))});
  EXPECT_EQ(values<int64_t>(yi[0])[0], -9007199254740993LL);
  xi.as<std::string>()[0] = "abc";
  EXPECT_THROW(run_op("Cast", {xi}, {ai("to", static_cast<int64_t>(DType::kFloat32))}), Error);
}

Tensor half(const Shape& s, const std::vector<uint16_t>& bits) {
  Tensor t(DType::kFloat16, s);
  for (size_t i = 0; i < bits.size(); ++i) t.as<uint16_t>()[i] = bits[i];
  return t;
}

TEST(KernelsMath, Float16Binary) {
  // 1.0 = 0x3C00, 2.0 = 0x4000, -1.5 = 0xBE00, -2.0 = 0xC000.
  auto y = run_op("Max", {half({2}, {0x3C00, 0xBE00}), half({2}, {0x4000, 0xC000})});
  ASSERT_EQ(y[0].dtype(), DType::kFloat16);
  EXPECT_EQ(y[0].as<uint16_t>()[0], 0x4000);
  EXPECT_EQ(y[0].as<uint16_t>()[1], 0xBE00);
  // fmod(5.5, 2) = 1.5 (0x3E00); 5.5 = 0x4580. Mod (fmod=0) of -5.5 by 2 = 0.5 (0x3800).
  y = run_op("Mod", {half({1}, {0x4580}), half({1}, {0x4000})}, {ai("fmod", 1)});
  EXPECT_EQ(y[0].as<uint16_t>()[0], 0x3E00);
  y = run_op("Mod", {half({1}, {0xC580}), half({}, {0x4000})});
  EXPECT_EQ(y[0].as<uint16_t>()[0], 0x3800);
  // 1 + 1 = 2 (0x4000) through the float32 round trip.
  y = run_op("Add", {half({1}, {0x3C00}), half({1}, {0x3C00})});
  EXPECT_EQ(y[0].as<uint16_t>()[0], 0x4000);
  // Comparisons keep a bool output.
  auto c = run_op("Less", {half({2}, {0x3C00, 0x4000}), half({2}, {0x4000, 0x3C00})});
  EXPECT_EQ(values<bool>(c[0]), (std::vector<bool>{true, false}));
}

}  // namespace
}  // namespace gec::testing
