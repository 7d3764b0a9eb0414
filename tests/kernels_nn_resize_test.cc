// Resize kernel (ONNX Resize-13): nearest modes, linear, cubic, coordinate
// transformations; expected values worked out from the operator text (the
// 2x2 linear cases are the ONNX backend tests resize_upsample_scales_linear*).
#include <cmath>
#include <limits>

#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

std::vector<Tensor> with_scales(const Tensor& x, std::vector<float> s) {
  return {x, Tensor(), make<float>({static_cast<int64_t>(s.size())}, s)};
}
std::vector<Tensor> with_sizes(const Tensor& x, std::vector<int64_t> s) {
  return {x, Tensor(), Tensor(), make<int64_t>({static_cast<int64_t>(s.size())}, s)};
}

TEST(NnResize, NearestAsymmetricUpsample) {
  // x_orig = o/2 = 0, .5, 1, 1.5; round_prefer_floor -> 0,0,1,1.
  auto x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  auto out = run_op("Resize", with_scales(x, {1, 1, 2, 2}), {as("coordinate_transformation_mode", "asymmetric")});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 4, 4}));
  expect_close(values<float>(out[0]), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // round_prefer_ceil -> 0,1,1,2 (clamped to 1).
  auto ceil = run_op("Resize", with_scales(x, {1, 1, 2, 2}),
                     {as("coordinate_transformation_mode", "asymmetric"), as("nearest_mode", "round_prefer_ceil")});
  expect_close(values<float>(ceil[0]), {1, 2, 2, 2, 3, 4, 4, 4, 3, 4, 4, 4, 3, 4, 4, 4});
}

// Found by fuzzing gom_load: a scale of 1e30 overflowed the float -> int64
// conversion of the output dim (undefined behaviour). Now an error.
TEST(NnResize, HugeScalesAreAnError) {
  auto x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_error([&] { run_op("Resize", with_scales(x, {1, 1, 1e30f, 1}), {}); }, ErrorCode::kInvalidModel,
               "too large");
}

// Found by fuzzing gom_load: sizes that resize a leading dim (C 2 -> 1)
// took the per-plane fast path, which wrote two planes into one. Linear over
// C averages the two constant channels (half_pixel: c = 0.5).
TEST(NnResize, ResizingALeadingDimTakesTheGeneralPath) {
  auto x = make<float>({1, 2, 4, 1}, {1, 1, 1, 1, 3, 3, 3, 3});
  auto out = run_op("Resize", with_sizes(x, {1, 1, 5, 8}), {as("mode", "linear")});
  ASSERT_EQ(out[0].shape(), (Shape{1, 1, 5, 8}));
  expect_close(values<float>(out[0]), std::vector<float>(40, 2.f));
}

// Resize-19 half_pixel_symmetric: the rounding of 4 x 0.6 = 2.4 -> 2 is
// shared by both ends: offset = 2 * (1 - 2 / 2.4) = 1/3, then half_pixel.
TEST(NnResize, HalfPixelSymmetricShiftsByTheRounding) {
  auto x = make<float>({1, 1, 1, 4}, {0, 10, 20, 30});
  auto out = run_op("Resize", with_scales(x, {1, 1, 1, 0.6f}),
                    {as("mode", "linear"), as("coordinate_transformation_mode", "half_pixel_symmetric")});
  ASSERT_EQ(out[0].shape(), (Shape{1, 1, 1, 2}));
  // x_ori = 1/3 + (o + 0.5) / 0.6 - 0.5: 0.6667 and 2.3333 -> 6.667, 23.333.
  expect_close(values<float>(out[0]), {6.6666667f, 23.333333f}, 1e-4f);
}

TEST(NnResize, NearestFloorAndCeilModes1D) {
  // asymmetric, scale 1.5 on 2 -> 3: x_orig = 0, .667, 1.333.
  auto x = make<float>({2}, {10, 20});
  auto fl = run_op("Resize", with_scales(x, {1.5f}), {as("coordinate_transformation_mode", "asymmetric"), as("nearest_mode", "floor")});
  expect_close(values<float>(fl[0]), {10, 10, 20});
  auto ce = run_op("Resize", with_scales(x, {1.5f}), {as("coordinate_transformation_mode", "asymmetric"), as("nearest_mode", "ceil")});
  expect_close(values<float>(ce[0]), {10, 20, 20});
}

TEST(NnResize, NearestDownsampleBySizes) {
  // ONNX resize_downsample_sizes_nearest: half_pixel, x_orig = 0.5 and 2.5.
  auto out = run_op("Resize", with_sizes(make<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), {1, 1, 1, 2}), {});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 2}));
  expect_close(values<float>(out[0]), {1, 3});
}

TEST(NnResize, NearestOnUint8) {
  auto out = run_op("Resize", with_scales(make<uint8_t>({2}, {7, 9}), {2}), {as("coordinate_transformation_mode", "asymmetric")});
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{7, 7, 9, 9}));
}

TEST(NnResize, LinearHalfPixel) {
  auto out = run_op("Resize", with_scales(make<float>({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2}), {as("mode", "linear")});
  expect_close(values<float>(out[0]), {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f,
                                       3.75f, 4});
}

// The plane fast path's two-tap columns: an edge column has one tap, and
// an infinite input there stays infinite (0 * inf would be NaN). Columns
// away from the inf are the finite blend.
TEST(NnResize, LinearEdgeColumnsKeepAnInfiniteInput) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = run_op("Resize", with_scales(make<float>({1, 1, 2, 3}, {inf, 1, 2, 3, 4, 5}), {1, 1, 2, 2}),
                    {as("mode", "linear")});
  ASSERT_EQ(out[0].shape(), (Shape{1, 1, 4, 6}));
  const std::vector<float> v = values<float>(out[0]);
  for (float f : v) EXPECT_FALSE(std::isnan(f));
  EXPECT_EQ(v[0], inf);   // (0, 0): the corner, one tap in each dim
  EXPECT_EQ(v[1], inf);   // 0.75 * inf + 0.25 * 1
  EXPECT_EQ(v[5], 2.f);   // the right edge column: one tap, input 2
  EXPECT_EQ(v[23], 5.f);  // the far corner
}

TEST(NnResize, LinearAlignCorners) {
  auto out = run_op("Resize", with_scales(make<float>({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2}),
                    {as("mode", "linear"), as("coordinate_transformation_mode", "align_corners")});
  const float t = 1.f / 3, s = 2.f / 3;
  expect_close(values<float>(out[0]), {1, 1 + t, 1 + s, 2, 1 + s, 2, 2 + t, 2 + s, 2 + t, 2 + s, 3, 3 + t, 3, 3 + t,
                                       3 + s, 4});
}

TEST(NnResize, PytorchHalfPixelSingleOutput) {
  auto x = make<float>({1, 4}, {0, 1, 2, 3});
  // half_pixel: x_orig = 0.5/0.25 - 0.5 = 1.5; pytorch_half_pixel: 0 for length 1.
  auto hp = run_op("Resize", with_sizes(x, {1, 1}), {as("mode", "linear")});
  expect_close(values<float>(hp[0]), {1.5f});
  auto pt = run_op("Resize", with_sizes(x, {1, 1}), {as("mode", "linear"), as("coordinate_transformation_mode", "pytorch_half_pixel")});
  expect_close(values<float>(pt[0]), {0});
}

TEST(NnResize, CubicAsymmetric) {
  // A = -0.75; at t = .5 the weights are [-.09375, .59375, .59375, -.09375];
  // integer positions copy; outside taps take the edge value.
  auto x = make<float>({1, 4}, {0, 1, 2, 3});
  auto out = run_op("Resize", with_scales(x, {1, 2}), {as("mode", "cubic"), as("coordinate_transformation_mode", "asymmetric")});
  expect_close(values<float>(out[0]), {0, 0.40625f, 1, 1.5f, 2, 2.59375f, 3, 3.09375f});
  auto ex = run_op("Resize", with_scales(x, {1, 2}),
                   {as("mode", "cubic"), as("coordinate_transformation_mode", "asymmetric"), ai("exclude_outside", 1)});
  EXPECT_NEAR(values<float>(ex[0])[1], 0.40625f / 1.09375f, 1e-5f);
}

TEST(NnResize, TfCropAndResizeExtrapolates) {
  // roi on the last dim [0.5, 1.5]: x_orig = 1.5, 3, 4.5 (outside -> 10).
  auto out = run_op("Resize",
                    {make<float>({1, 4}, {0, 1, 2, 3}), make<float>({4}, {0, 0.5f, 1, 1.5f}), Tensor(),
                     make<int64_t>({2}, {1, 3})},
                    {as("mode", "linear"), as("coordinate_transformation_mode", "tf_crop_and_resize"),
                     af("extrapolation_value", 10.f)});
  expect_close(values<float>(out[0]), {1.5f, 3, 10});
}

}  // namespace
}  // namespace gec

namespace gec {
namespace {
using namespace gec::testing;

// Resize-18 antialias, linear, shrinking [0,4,8,12] by 0.5 (half_pixel):
// output 0 sits at c = 0.5; the triangle stretched to +-2 pixels weighs
// pixels -1 (the edge, 0), 0, 1, 2 by 1,3,3,1 / 8: 0 + 0 + 1.5 + 1 = 2.5
// (plain linear gives 2). Output 1 at c = 2.5: pixels 1, 2, 3, 4 (edge 12):
// 0.5 + 3 + 4.5 + 1.5 = 9.5. A growing dim is not filtered.
TEST(NnResize, AntialiasStretchesTheLinearFilterWhenShrinking) {
  auto x = make<float>({1, 4}, {0, 4, 8, 12});
  std::vector<ir::Attribute> linear_aa = {ir::Attribute::String("mode", "linear"), ir::Attribute::Int("antialias", 1)};
  auto aa = run_op("Resize", {x, Tensor(), make<float>({2}, {1, 0.5f})}, linear_aa);
  expect_close(values<float>(aa[0]), {2.5f, 9.5f});
  auto plain = run_op("Resize", {x, Tensor(), make<float>({2}, {1, 0.5f})}, {ir::Attribute::String("mode", "linear")});
  expect_close(values<float>(plain[0]), {2, 10});
  auto up_aa = run_op("Resize", {x, Tensor(), make<float>({2}, {1, 2})}, linear_aa);
  auto up = run_op("Resize", {x, Tensor(), make<float>({2}, {1, 2})}, {ir::Attribute::String("mode", "linear")});
  EXPECT_EQ(values<float>(up_aa[0]), values<float>(up[0]));
  // exclude_outside drops the edge tap instead of repeating the edge pixel:
  // output 1 becomes (4 + 3*8 + 3*12) / 7.
  linear_aa.push_back(ir::Attribute::Int("exclude_outside", 1));
  auto ex = run_op("Resize", {x, Tensor(), make<float>({2}, {1, 0.5f})}, linear_aa);
  expect_close(values<float>(ex[0]), {(3 * 4.f + 8) / 7, (4 + 3 * 8.f + 3 * 12) / 7});
}

}  // namespace
}  // namespace gec
