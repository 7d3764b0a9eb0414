// BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot (ai.onnx 18) against values
// worked out by hand from the operator text: two's complement for signed
// types, every bit of 64-bit types, multidirectional broadcasting; float and
// bool inputs refused.
#include <gtest/gtest.h>

#include "test_util.h"

namespace gec {
namespace {

using testing::expect_error;
using testing::make;
using testing::run_op;
using testing::values;

TEST(KernelsBitwise, SignedTwosComplement) {
  const Tensor a = make<int8_t>({4}, {-1, -128, 0x55, 12});
  const Tensor b = make<int8_t>({4}, {0x0f, -1, 0x0f, -13});
  EXPECT_EQ(values<int8_t>(run_op("BitwiseAnd", {a, b})[0]), (std::vector<int8_t>{0x0f, -128, 0x05, 0}));
  EXPECT_EQ(values<int8_t>(run_op("BitwiseOr", {a, b})[0]), (std::vector<int8_t>{-1, -1, 0x5f, -1}));
  EXPECT_EQ(values<int8_t>(run_op("BitwiseXor", {a, b})[0]), (std::vector<int8_t>{-16, 127, 0x5a, -1}));
  EXPECT_EQ(values<int8_t>(run_op("BitwiseNot", {a})[0]), (std::vector<int8_t>{0, 127, -86, -13}));
}

TEST(KernelsBitwise, Uint64HighBitsAndBroadcasting) {
  const uint64_t hi = uint64_t{1} << 63;
  // [2,3] op [3]: the row is broadcast over both rows.
  const Tensor a = make<uint64_t>({2, 3}, {hi | 1, 2, 3, hi, 0, ~uint64_t{0}});
  const Tensor b = make<uint64_t>({3}, {hi, 3, 1});
  const Tensor y = run_op("BitwiseXor", {a, b})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<uint64_t>(y), (std::vector<uint64_t>{1, 1, 2, 0, 3, ~uint64_t{0} - 1}));
  EXPECT_EQ(values<uint64_t>(run_op("BitwiseNot", {make<uint64_t>({1}, {hi})})[0]),
            (std::vector<uint64_t>{hi - 1}));
}

TEST(KernelsBitwise, RefusesFloatBoolAndMixedDtypes) {
  expect_error([] { run_op("BitwiseAnd", {make<float>({1}, {1}), make<float>({1}, {1})}); },
               ErrorCode::kUnsupported, "dtype float32 is not an integer type");
  expect_error([] { run_op("BitwiseNot", {make<bool>({1}, {true})}); }, ErrorCode::kUnsupported,
               "dtype bool is not an integer type");
  expect_error([] { run_op("BitwiseOr", {make<int32_t>({1}, {1}), make<int64_t>({1}, {1})}); },
               ErrorCode::kInvalidModel, "int32");
}

}  // namespace
}  // namespace gec
