// CenterCropPad-18, Col2Im-18, AffineGrid-20 and RotaryEmbedding-23: values
// worked out by hand from the operator texts (tests/new_opsets/ holds models
// with ONNX Runtime's outputs), and one test per guard of their shape
// inference and kernels.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace gec {
namespace {

using ir::Attribute;
using testing::expect_error;
using testing::make;
using testing::run_op;
using testing::values;

TEST(CenterCropPad, CropsTheCentreAndPadsBothSides) {
  // [1,2,3,4,5] -> 3: drop 1 at each end; [1,2] -> 5: 1 zero before, 2 after.
  auto crop = run_op("CenterCropPad", {make<float>({5}, {1, 2, 3, 4, 5}), make<int64_t>({1}, {3})});
  EXPECT_EQ(values<float>(crop[0]), (std::vector<float>{2, 3, 4}));
  auto pad = run_op("CenterCropPad", {make<float>({2}, {1, 2}), make<int64_t>({1}, {5})});
  EXPECT_EQ(values<float>(pad[0]), (std::vector<float>{0, 1, 2, 0, 0}));
  // Odd crop: 4 -> 3 keeps the first three (floor of half the difference off the start).
  auto odd = run_op("CenterCropPad", {make<float>({4}, {1, 2, 3, 4}), make<int64_t>({1}, {3})});
  EXPECT_EQ(values<float>(odd[0]), (std::vector<float>{1, 2, 3}));
  // axes: only dim 1 changes.
  auto ax = run_op("CenterCropPad", {make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), make<int64_t>({1}, {1})},
                   {Attribute::Ints("axes", {-1})});
  EXPECT_EQ(ax[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(ax[0]), (std::vector<int64_t>{2, 5}));
}

TEST(CenterCropPad, RefusesShapesThatDoNotFitTheAxes) {
  const Tensor x = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error([&] { run_op("CenterCropPad", {x, make<int64_t>({1}, {2})}); }, ErrorCode::kInvalidModel,
               "shape has 1 entries for 2 axes");
  expect_error([&] { run_op("CenterCropPad", {x, make<int64_t>({2}, {2, 2})}, {Attribute::Ints("axes", {0, -2})}); },
               ErrorCode::kInvalidModel, "appears twice");
  expect_error([&] { run_op("CenterCropPad", {x, make<int64_t>({2}, {2, -1})}); }, ErrorCode::kInvalidModel,
               "negative");
  expect_error([&] { run_op("CenterCropPad", {x, make<int64_t>({1}, {2})}, {Attribute::Ints("axes", {2})}); },
               ErrorCode::kInvalidModel, "axis");
}

TEST(Col2Im, AddsOverlappingBlocksBackIntoTheImage) {
  // 1 channel, image [1,3], block [1,2]: positions 0 and 1 overlap at x = 1.
  // Columns: block element 0 then 1, each over the 2 positions.
  auto y = run_op("Col2Im", {make<float>({1, 2, 2}, {1, 2, 10, 20}), make<int64_t>({2}, {1, 3}),
                             make<int64_t>({2}, {1, 2})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 1, 1, 3}));
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1, 2 + 10, 20}));
  // pads: the values that land in the padding are dropped.
  auto p = run_op("Col2Im", {make<float>({1, 2, 3}, {1, 2, 3, 10, 20, 30}), make<int64_t>({2}, {1, 2}),
                             make<int64_t>({2}, {1, 2})},
                  {Attribute::Ints("pads", {0, 1, 0, 1})});
  EXPECT_EQ(values<float>(p[0]), (std::vector<float>{2 + 10, 3 + 20}));
}

TEST(Col2Im, RefusesGeometryThatDoesNotMatchTheInput) {
  const Tensor img = make<int64_t>({2}, {1, 3}), blk = make<int64_t>({2}, {1, 2});
  expect_error([&] { run_op("Col2Im", {Tensor(DType::kFloat32, {1, 2, 3}), img, blk}); }, ErrorCode::kInvalidModel,
               "must be the number of block positions, 2");
  expect_error([&] { run_op("Col2Im", {Tensor(DType::kFloat32, {1, 3, 2}), img, blk}); }, ErrorCode::kInvalidModel,
               "not a multiple of prod(block_shape) = 2");
  expect_error([&] { run_op("Col2Im", {Tensor(DType::kFloat32, {1, 2, 2}), img, make<int64_t>({1}, {2})}); },
               ErrorCode::kInvalidModel, "same number");
  expect_error([&] { run_op("Col2Im", {Tensor(DType::kFloat32, {1, 2, 2}), img, blk}, {Attribute::Ints("strides", {0, 1})}); },
               ErrorCode::kInvalidModel, "positive");
  expect_error([&] { run_op("Col2Im", {Tensor(DType::kFloat32, {1, 4, 1}), img, make<int64_t>({2}, {1, 4})}); },
               ErrorCode::kInvalidModel, "does not fit");
}

TEST(AffineGrid, IdentityThetaGivesTheBaseGrid) {
  const Tensor theta = make<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  // Width 2, height 1: centres at x = -0.5, 0.5 (y = 0); corners at x = -1, 1 (a size of 1 gives 0).
  auto c = run_op("AffineGrid", {theta, make<int64_t>({4}, {1, 1, 1, 2})});
  ASSERT_EQ(c[0].shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{-0.5f, 0, 0.5f, 0}));
  auto a = run_op("AffineGrid", {theta, make<int64_t>({4}, {1, 1, 1, 2})}, {Attribute::Int("align_corners", 1)});
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{-1, 0, 1, 0}));
  // A translation moves every point.
  auto t = run_op("AffineGrid", {make<float>({1, 2, 3}, {1, 0, 0.25f, 0, 1, -1}), make<int64_t>({4}, {1, 1, 1, 2})});
  EXPECT_EQ(values<float>(t[0]), (std::vector<float>{-0.25f, -1, 0.75f, -1}));
}

TEST(AffineGrid, RefusesThetaThatDoesNotFitSize) {
  expect_error([&] { run_op("AffineGrid", {Tensor(DType::kFloat32, {1, 3, 4}), make<int64_t>({4}, {1, 1, 2, 2})}); },
               ErrorCode::kInvalidModel, "theta must be [N,2,3]");
  expect_error([&] { run_op("AffineGrid", {Tensor(DType::kFloat32, {2, 2, 3}), make<int64_t>({4}, {1, 1, 2, 2})}); },
               ErrorCode::kInvalidModel, "differs from size's");
  expect_error([&] { run_op("AffineGrid", {Tensor(DType::kFloat32, {1, 2, 3}), make<int64_t>({3}, {1, 1, 2})}); },
               ErrorCode::kInvalidModel, "4 ([N,C,H,W]) or 5");
  expect_error([&] { run_op("AffineGrid", {Tensor(DType::kFloat32, {1, 2, 3}), make<int64_t>({4}, {1, 1, 0, 2})}); },
               ErrorCode::kInvalidModel, "spatial dim <= 0");
}

TEST(RotaryEmbedding, RotatesPairsByTheCachedAngles) {
  // One head of 4: pairs (x0, x2), (x1, x3) non-interleaved; (x0, x1), (x2, x3) interleaved.
  // Angle 90 degrees on the first pair, 0 on the second.
  const Tensor x = make<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor cos = make<float>({1, 1, 2}, {0, 1}), sin = make<float>({1, 1, 2}, {1, 0});
  auto y = run_op("RotaryEmbedding", {x, cos, sin});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{-3, 2, 1, 4}));
  auto yi = run_op("RotaryEmbedding", {x, cos, sin}, {Attribute::Int("interleaved", 1)});
  EXPECT_EQ(values<float>(yi[0]), (std::vector<float>{-2, 1, 3, 4}));
  // Partial rotation leaves the tail alone; position_ids pick the cache row.
  const Tensor cache_cos = make<float>({2, 1}, {1, 0}), cache_sin = make<float>({2, 1}, {0, 1});
  auto p = run_op("RotaryEmbedding", {x, cache_cos, cache_sin, make<int64_t>({1, 1}, {1})},
                  {Attribute::Int("rotary_embedding_dim", 2)});
  EXPECT_EQ(values<float>(p[0]), (std::vector<float>{-2, 1, 3, 4}));
}

TEST(RotaryEmbedding, RefusesBadShapesAndPositions) {
  const Tensor x3 = make<float>({1, 1, 4}, {1, 2, 3, 4});
  const Tensor cos = make<float>({1, 1, 2}, {0, 1}), sin = make<float>({1, 1, 2}, {1, 0});
  expect_error([&] { run_op("RotaryEmbedding", {x3, cos, sin}); }, ErrorCode::kInvalidModel, "num_heads is required");
  expect_error([&] { run_op("RotaryEmbedding", {x3, cos, sin}, {Attribute::Int("num_heads", 3)}); },
               ErrorCode::kInvalidModel, "not a multiple of num_heads");
  const Tensor x4 = make<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  expect_error([&] { run_op("RotaryEmbedding", {x4, cos, sin}, {Attribute::Int("rotary_embedding_dim", 3)}); },
               ErrorCode::kInvalidModel, "must be even");
  expect_error([&] { run_op("RotaryEmbedding", {x4, make<float>({1, 1, 1}, {1}), make<float>({1, 1, 1}, {0})}); },
               ErrorCode::kInvalidModel, "without position_ids the caches must be [1,1,2]");
  const Tensor c2 = make<float>({2, 2}, {1, 1, 1, 1}), s2 = make<float>({2, 2}, {0, 0, 0, 0});
  expect_error([&] { run_op("RotaryEmbedding", {x4, c2, s2, make<int64_t>({1, 1}, {2})}); },
               ErrorCode::kInvalidArgument, "position_ids[0,0] = 2 is outside the caches' 0..1");
  expect_error([&] { run_op("RotaryEmbedding", {x4, c2, s2, make<int64_t>({1, 1}, {-1})}); },
               ErrorCode::kInvalidArgument, "outside");
}

}  // namespace
}  // namespace gec
