// Tests of MaxPool with Indices / native dtypes, MaxUnpool, GridSample and
// RoiAlign. Expected values are hand-computed from the ONNX operator text.
#include <limits>

#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(NnSampling, MaxPoolIndices) {
  // Two channels of [[1,5,2],[6,0,3]] (+10 on the second), 2x2 windows:
  // maxima 6 at (1,0) and 5 at (0,1).
  auto out = run_op("MaxPool", {make<float>({1, 2, 2, 3}, {1, 5, 2, 6, 0, 3, 11, 15, 12, 16, 10, 13})},
                    {ais("kernel_shape", {2, 2})}, 2);
  expect_close(values<float>(out[0]), {6, 5, 16, 15});
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{3, 1, 9, 7}));
  // Column-major: index = w*H + h within the plane.
  out = run_op("MaxPool", {make<float>({1, 2, 2, 3}, {1, 5, 2, 6, 0, 3, 11, 15, 12, 16, 10, 13})},
               {ais("kernel_shape", {2, 2}), ai("storage_order", 1)}, 2);
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 2, 7, 8}));
}

TEST(NnSampling, MaxPoolUint8CeilMode) {
  // [1,2,3,4,5] with kernel 2, stride 2, ceil_mode: windows [1,2], [3,4], [5].
  auto out = run_op("MaxPool", {make<uint8_t>({1, 1, 5}, {1, 2, 3, 4, 5})},
                    {ais("kernel_shape", {2}), ais("strides", {2}), ai("ceil_mode", 1)});
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{2, 4, 5}));
}

TEST(NnSampling, MaxUnpool) {
  auto out = run_op("MaxUnpool", {make<float>({1, 1, 1, 1}, {7}), make<int64_t>({1, 1, 1, 1}, {3})},
                    {ais("kernel_shape", {2, 2}), ais("strides", {2, 2})});
  ASSERT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  expect_close(values<float>(out[0]), {0, 0, 0, 7});
  // output_shape 3x3: index 3 of the 2x2 default is (1,1), i.e. 4 in 3x3.
  out = run_op("MaxUnpool", {make<float>({1, 1, 1, 1}, {7}), make<int64_t>({1, 1, 1, 1}, {3}), make<int64_t>({4}, {1, 1, 3, 3})},
               {ais("kernel_shape", {2, 2}), ais("strides", {2, 2})});
  expect_close(values<float>(out[0]), {0, 0, 0, 0, 7, 0, 0, 0, 0});
  EXPECT_THROW(run_op("MaxUnpool", {make<float>({1, 1, 1, 1}, {7}), make<int64_t>({1, 1, 1, 1}, {4})},
                      {ais("kernel_shape", {2, 2}), ais("strides", {2, 2})}),
               Error);
}

Tensor image() { return make<float>({1, 1, 2, 2}, {1, 2, 3, 4}); }

float grid_sample(float gx, float gy, std::vector<ir::Attribute> attrs) {
  return values<float>(run_op("GridSample", {image(), make<float>({1, 1, 1, 2}, {gx, gy})}, std::move(attrs))[0])[0];
}

TEST(NnSampling, GridSampleBilinearPadding) {
  EXPECT_NEAR(grid_sample(0, 0, {}), 2.5f, 1e-6f);                         // centre: mean of all four
  EXPECT_NEAR(grid_sample(0, 0, {ai("align_corners", 1)}), 2.5f, 1e-6f);
  EXPECT_NEAR(grid_sample(-1, -1, {}), 0.25f, 1e-6f);                      // (-.5,-.5): 3/4 of the taps are 0
  EXPECT_NEAR(grid_sample(-1, -1, {as("padding_mode", "border")}), 1.f, 1e-6f);
  EXPECT_NEAR(grid_sample(-1, -1, {ai("align_corners", 1)}), 1.f, 1e-6f);  // exactly pixel (0,0)
  // x = -1 reflects about -0.5 to 0; y = .5: (1 + 3) / 2.
  EXPECT_NEAR(grid_sample(-1.5f, 0, {as("padding_mode", "reflection")}), 2.f, 1e-6f);
}

// A NaN or infinite grid point samples zero in every mode and padding (its
// cast to a pixel index would be undefined).
TEST(NnSampling, GridSampleNonFiniteGridIsZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      EXPECT_EQ(grid_sample(nan, 0, {as("mode", mode), as("padding_mode", pad)}), 0.f) << mode << " " << pad;
      EXPECT_EQ(grid_sample(0, inf, {as("mode", mode), as("padding_mode", pad)}), 0.f) << mode << " " << pad;
    }
}

TEST(NnSampling, GridSampleNearestBicubic) {
  // (0.1, -0.6) -> x = .6 -> 1, y = -.1 -> 0: pixel (0,1) = 2.
  EXPECT_NEAR(grid_sample(0.1f, -0.6f, {as("mode", "nearest")}), 2.f, 1e-6f);
  // Bicubic at an exact pixel gives the pixel (weights 0,1,0,0).
  EXPECT_NEAR(grid_sample(1, 1, {as("mode", "bicubic"), ai("align_corners", 1)}), 4.f, 1e-5f);
  EXPECT_THROW(grid_sample(0, 0, {as("mode", "area")}), Error);
}

Tensor ramp() {  // value = 4*row + col, a linear field that bilinear sampling reproduces
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return make<float>({1, 1, 4, 4}, v);
}

TEST(NnSampling, RoiAlign) {
  auto roi = [](std::vector<ir::Attribute> a) {
    return values<float>(run_op("RoiAlign", {ramp(), make<float>({1, 4}, {0, 0, 3, 3}), make<int64_t>({1}, {0})}, std::move(a))[0]);
  };
  // One sample at the box centre (1.5, 1.5): 7.5; half_pixel shifts it to (1, 1): 5.
  expect_close(roi({ai("sampling_ratio", 1), as("coordinate_transformation_mode", "output_half_pixel")}), {7.5f});
  expect_close(roi({ai("sampling_ratio", 1)}), {5.f});
  // Adaptive 3x3 samples of a linear field average to the centre value.
  expect_close(roi({as("coordinate_transformation_mode", "output_half_pixel")}), {7.5f});
  // max of the 2x2 samples at .75 and 2.25: 2.25*4 + 2.25.
  expect_close(roi({ai("sampling_ratio", 2), as("mode", "max"), as("coordinate_transformation_mode", "output_half_pixel")}),
               {11.25f});
  // 2x2 output bins.
  auto y = run_op("RoiAlign", {ramp(), make<float>({1, 4}, {0, 0, 4, 4}), make<int64_t>({1}, {0})},
                  {ai("output_height", 2), ai("output_width", 2), ai("sampling_ratio", 1),
                   as("coordinate_transformation_mode", "output_half_pixel")});
  expect_close(values<float>(y[0]), {5.f, 7.f, 13.f, 15.f});
  EXPECT_THROW(run_op("RoiAlign", {ramp(), make<float>({1, 4}, {0, 0, 3, 3}), make<int64_t>({1}, {1})}), Error);
}

}  // namespace
}  // namespace gec
