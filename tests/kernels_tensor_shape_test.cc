// Kernel + infer tests of the shape-query and generator ops: Shape, Size,
// ConstantOfShape, Range, EyeLike, OneHot, Trilu, NonZero, DepthToSpace,
// SpaceToDepth. Expected values are from the ONNX operator docs or by hand.
#include <cmath>
#include <limits>

#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(TensorShapeOp, StartEnd) {
  Tensor x = iota_f({1, 3, 5, 7});
  auto a = run_op("Shape", {x}, {Attribute::Int("start", -3), Attribute::Int("end", -1)});
  EXPECT_EQ(a[0].dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(values<int64_t>(run_op("Shape", {x})[0]), (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(values<int64_t>(run_op("Shape", {x}, {Attribute::Int("start", 1)})[0]), (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(values<int64_t>(run_op("Shape", {x}, {Attribute::Int("end", 10)})[0]), (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(run_op("Shape", {x}, {Attribute::Int("start", 3), Attribute::Int("end", 1)})[0].shape(), Shape{0});
  EXPECT_EQ(run_op("Shape", {make<float>({}, {1})})[0].shape(), Shape{0});
  EXPECT_EQ(values<int64_t>(run_op("Shape", {make<float>({0, 4}, {})})[0]), (std::vector<int64_t>{0, 4}));
}

TEST(TensorSizeOp, ScalarInt64) {
  auto a = run_op("Size", {iota_f({2, 3})});
  EXPECT_EQ(a[0].shape(), Shape{});
  EXPECT_EQ(a[0].dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(a[0]), std::vector<int64_t>{6});
  EXPECT_EQ(values<int64_t>(run_op("Size", {make<float>({0, 4}, {})})[0]), std::vector<int64_t>{0});
  EXPECT_EQ(values<int64_t>(run_op("Size", {make<float>({}, {1})})[0]), std::vector<int64_t>{1});
}

TEST(TensorConstantOfShape, ValueDefaultAndScalar) {
  auto a = run_op("ConstantOfShape", {i64s({2, 3})},
                  {Attribute::TensorAttr("value", make<int64_t>({1}, {5}))});
  EXPECT_EQ(a[0].dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(a[0]), std::vector<int64_t>(6, 5));
  auto b = run_op("ConstantOfShape", {i64s({2})});
  EXPECT_EQ(b[0].dtype(), DType::kFloat32);
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{0, 0}));
  auto c = run_op("ConstantOfShape", {i64s({})}, {Attribute::TensorAttr("value", make<float>({1}, {1.5f}))});
  EXPECT_EQ(c[0].shape(), Shape{});
  EXPECT_EQ(values<float>(c[0]), std::vector<float>{1.5f});
  auto d = run_op("ConstantOfShape", {i64s({3, 0})});
  EXPECT_EQ(d[0].shape(), (Shape{3, 0}));
  EXPECT_EQ(error_code_of("ConstantOfShape", {i64s({-1})}), ErrorCode::kInvalidModel);
}

TEST(TensorRange, IntAndFloat) {
  auto a = run_op("Range", {i64(3), i64(10), i64(3)});
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{3, 6, 9}));
  auto b = run_op("Range", {make<float>({}, {10}), make<float>({}, {4}), make<float>({}, {-3})});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{10, 7}));
  auto c = run_op("Range", {make<int32_t>({}, {1}), make<int32_t>({}, {5}), make<int32_t>({}, {2})});
  EXPECT_EQ(values<int32_t>(c[0]), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(run_op("Range", {i64(5), i64(1), i64(1)})[0].shape(), Shape{0});
  auto d = run_op("Range", {make<float>({}, {0}), make<float>({}, {1}), make<float>({}, {0.25f})});
  EXPECT_EQ(values<float>(d[0]), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  auto e = run_op("Range", {i64(-1), i64(-6), i64(-2)});
  EXPECT_EQ(values<int64_t>(e[0]), (std::vector<int64_t>{-1, -3, -5}));
  EXPECT_EQ(error_code_of("Range", {i64(0), i64(3), i64(0)}), ErrorCode::kInvalidModel);
}

TEST(TensorEyeLike, OffsetsAndDtype) {
  auto a = run_op("EyeLike", {iota_f({3, 4})}, {Attribute::Int("k", 1)});
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  auto b = run_op("EyeLike", {iota_f({2, 2})}, {Attribute::Int("dtype", 6)});
  EXPECT_EQ(b[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(b[0]), (std::vector<int32_t>{1, 0, 0, 1}));
  auto c = run_op("EyeLike", {iota_f({3, 3})}, {Attribute::Int("dtype", 9), Attribute::Int("k", -1)});
  EXPECT_EQ(values<bool>(c[0]), (std::vector<bool>{false, false, false, true, false, false, false, true, false}));
  auto d = run_op("EyeLike", {iota_f({2, 3})}, {Attribute::Int("k", 5)});
  EXPECT_EQ(values<float>(d[0]), std::vector<float>(6, 0.f));
}

TEST(TensorOneHot, AxesNegativeAndOutOfRange) {
  auto a = run_op("OneHot", {make<int64_t>({4}, {0, 2, -1, 5}), i64(3), make<float>({2}, {0, 1})});
  EXPECT_EQ(a[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}));
  auto b = run_op("OneHot", {make<int64_t>({2}, {1, 0}), make<float>({1}, {3}), make<int64_t>({2}, {-1, 7})},
                  {Attribute::Int("axis", 0)});
  EXPECT_EQ(b[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(b[0]), (std::vector<int64_t>{-1, 7, 7, -1, -1, -1}));
  // axis 1 of a [2,2] index tensor -> [2, depth, 2].
  auto c = run_op("OneHot", {make<int32_t>({2, 2}, {0, 1, 1, 0}), i64(2), make<float>({2}, {0, 1})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(c[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{1, 0, 0, 1, 0, 1, 1, 0}));
}

TEST(TensorTrilu, OnnxExamples) {
  Tensor x = make<int64_t>({4, 5}, {4, 7, 3, 7, 9, 1, 2, 8, 6, 9, 9, 4, 0, 8, 7, 4, 3, 4, 2, 4});
  EXPECT_EQ(values<int64_t>(run_op("Trilu", {x})[0]),
            (std::vector<int64_t>{4, 7, 3, 7, 9, 0, 2, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 2, 4}));
  EXPECT_EQ(values<int64_t>(run_op("Trilu", {x}, {Attribute::Int("upper", 0)})[0]),
            (std::vector<int64_t>{4, 0, 0, 0, 0, 1, 2, 0, 0, 0, 9, 4, 0, 0, 0, 4, 3, 4, 2, 0}));
  EXPECT_EQ(values<int64_t>(run_op("Trilu", {x, i64(1)})[0]),
            (std::vector<int64_t>{0, 7, 3, 7, 9, 0, 0, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 0, 4}));
  EXPECT_EQ(values<int64_t>(run_op("Trilu", {x, i64(-1)}, {Attribute::Int("upper", 0)})[0]),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9, 4, 0, 0, 0, 4, 3, 4, 0, 0}));
  auto b = run_op("Trilu", {make<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{1, 2, 0, 4, 5, 6, 0, 8}));
  EXPECT_EQ(run_op("Trilu", {make<float>({0, 3}, {})})[0].shape(), (Shape{0, 3}));
}

TEST(TensorNonZero, OnnxExampleFloatsAndEdges) {
  auto a = run_op("NonZero", {make<bool>({2, 2}, {true, false, true, true})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto b = run_op("NonZero", {make<float>({4}, {0.f, -0.f, nan, 2.f})});
  EXPECT_EQ(b[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values<int64_t>(b[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(run_op("NonZero", {make<int32_t>({3}, {0, 0, 0})})[0].shape(), (Shape{1, 0}));
  EXPECT_EQ(run_op("NonZero", {make<int64_t>({}, {5})})[0].shape(), (Shape{0, 1}));
}

// ONNX DepthToSpace docs: x = [1, 8, 2, 3] with x[c, h, w] = 9c + 3h + w.
Tensor depth_input() {
  Tensor x(DType::kFloat32, {1, 8, 2, 3});
  for (int c = 0; c < 8; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w) x.as<float>()[(c * 2 + h) * 3 + w] = static_cast<float>(9 * c + 3 * h + w);
  return x;
}

const std::vector<float> kDcr = {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22,
                                 5,  23, 39, 57, 40, 58, 41, 59, 9,  27, 10, 28, 11, 29, 45, 63,
                                 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68};

TEST(TensorDepthToSpace, DcrAndCrd) {
  auto a = run_op("DepthToSpace", {depth_input()}, {Attribute::Int("blocksize", 2)});
  EXPECT_EQ(a[0].shape(), (Shape{1, 2, 4, 6}));
  EXPECT_EQ(values<float>(a[0]), kDcr);
  auto b = run_op("DepthToSpace", {depth_input()},
                  {Attribute::Int("blocksize", 2), Attribute::String("mode", "CRD")});
  EXPECT_EQ(values<float>(b[0]),
            (std::vector<float>{0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13,
                                5,  14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
                                55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68}));
  EXPECT_EQ(error_code_of("DepthToSpace", {iota_f({1, 6, 2, 2})}, {Attribute::Int("blocksize", 2)}),
            ErrorCode::kInvalidModel);
}

TEST(TensorSpaceToDepth, InvertsDcr) {
  auto a = run_op("SpaceToDepth", {make<float>({1, 2, 4, 6}, kDcr)}, {Attribute::Int("blocksize", 2)});
  EXPECT_EQ(a[0].shape(), (Shape{1, 8, 2, 3}));
  EXPECT_EQ(values<float>(a[0]), values<float>(depth_input()));
  EXPECT_EQ(error_code_of("SpaceToDepth", {iota_f({1, 1, 3, 2})}, {Attribute::Int("blocksize", 2)}),
            ErrorCode::kInvalidModel);
}

}  // namespace
}  // namespace gec
