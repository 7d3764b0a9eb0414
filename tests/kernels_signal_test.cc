// Tests of the signal kernels (DFT, STFT, window generators,
// MelWeightMatrix). Expected values are hand-computed from the definitions in
// the ONNX operator text.
#include "kernels_nn_util.h"

namespace gec::testing {
namespace {

TEST(KernelsSignal, DftRealInput) {
  // DFT of [1, 2, 3, 4]: 10, -2+2i, -2, -2-2i.
  auto y = run_op("DFT", {make<float>({1, 4, 1}, {1, 2, 3, 4})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 4, 2}));
  expect_close(values<float>(y[0]), {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5f, 1e-5f);
  y = run_op("DFT", {make<float>({1, 4, 1}, {1, 2, 3, 4})}, {ai("onesided", 1)});
  ASSERT_EQ(y[0].shape(), (Shape{1, 3, 2}));
  expect_close(values<float>(y[0]), {10, 0, -2, 2, -2, 0}, 1e-5f, 1e-5f);
  // dft_length 2 truncates to [1, 2]: 3, -1.
  y = run_op("DFT", {make<float>({1, 4, 1}, {1, 2, 3, 4}), make<int64_t>({}, {2})});
  expect_close(values<float>(y[0]), {3, 0, -1, 0}, 1e-5f, 1e-5f);
}

TEST(KernelsSignal, DftInverseAndAxis) {
  auto y = run_op("DFT", {make<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2})}, {ai("inverse", 1)});
  expect_close(values<float>(y[0]), {1, 0, 2, 0, 3, 0, 4, 0}, 1e-5f, 1e-5f);
  // axis 2 of [1, 1, 2, 1]: [5, 7] -> 12, -2.
  y = run_op("DFT", {make<float>({1, 1, 2, 1}, {5, 7})}, {ai("axis", 2)});
  expect_close(values<float>(y[0]), {12, 0, -2, 0}, 1e-5f, 1e-5f);
}

TEST(KernelsSignal, Stft) {
  // Frames [1,2] and [3,4], onesided length-2 DFTs.
  auto y = run_op("STFT", {make<float>({1, 4, 1}, {1, 2, 3, 4}), make<int64_t>({}, {2}), Tensor(), make<int64_t>({}, {2})});
  ASSERT_EQ(y[0].shape(), (Shape{1, 2, 2, 2}));
  expect_close(values<float>(y[0]), {3, 0, -1, 0, 7, 0, -1, 0}, 1e-5f, 1e-5f);
  // Window [1, 0] keeps the first sample of each frame.
  y = run_op("STFT", {make<float>({1, 4, 1}, {1, 2, 3, 4}), make<int64_t>({}, {2}), make<float>({2}, {1, 0})});
  expect_close(values<float>(y[0]), {1, 0, 1, 0, 3, 0, 3, 0}, 1e-5f, 1e-5f);
}

TEST(KernelsSignal, Windows) {
  auto y = run_op("HannWindow", {make<int64_t>({}, {4})});
  expect_close(values<float>(y[0]), {0, 0.5f, 1, 0.5f}, 1e-5f, 1e-6f);
  y = run_op("HannWindow", {make<int64_t>({}, {3})}, {ai("periodic", 0)});
  expect_close(values<float>(y[0]), {0, 1, 0}, 1e-5f, 1e-6f);
  y = run_op("HammingWindow", {make<int64_t>({}, {4})});
  expect_close(values<float>(y[0]), {0.0869565f, 0.5434783f, 1, 0.5434783f}, 1e-5f, 1e-6f);
  y = run_op("BlackmanWindow", {make<int64_t>({}, {4})});
  expect_close(values<float>(y[0]), {0, 0.34f, 1, 0.34f}, 1e-5f, 1e-6f);
  // output_datatype float64.
  y = run_op("HannWindow", {make<int32_t>({}, {2})}, {ai("output_datatype", 11)});
  ASSERT_EQ(y[0].dtype(), DType::kFloat64);
  EXPECT_NEAR(values<double>(y[0])[1], 1.0, 1e-12);
}

TEST(KernelsSignal, MelWeightMatrix) {
  // 2 bins, dft 16, rate 16, 0..8 Hz: edges at DFT bins 0, 2, 4, 6.
  auto y = run_op("MelWeightMatrix", {make<int64_t>({}, {2}), make<int64_t>({}, {16}), make<int64_t>({}, {16}),
                                      make<float>({}, {0}), make<float>({}, {8})});
  ASSERT_EQ(y[0].shape(), (Shape{9, 2}));
  expect_close(values<float>(y[0]), {0, 0, 0.5f, 0, 1, 0, 0.5f, 0.5f, 0, 1, 0, 0.5f, 0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace gec::testing
