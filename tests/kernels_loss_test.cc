// NegativeLogLikelihoodLoss-13 kernel; expected values hand-computed from the
// ONNX operator text. input = [[-1,-2,-3],[-4,-5,-6]], target = [2, 0]:
// per-sample losses 3 and 4.
#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

Tensor logp() { return make<float>({2, 3}, {-1, -2, -3, -4, -5, -6}); }
Tensor target() { return make<int64_t>({2}, {2, 0}); }

TEST(KernelsLoss, NllReductions) {
  auto y = run_op("NegativeLogLikelihoodLoss", {logp(), target()}, {as("reduction", "none")});
  ASSERT_EQ(y[0].shape(), Shape{2});
  expect_close(values<float>(y[0]), {3, 4});
  y = run_op("NegativeLogLikelihoodLoss", {logp(), target()}, {as("reduction", "sum")});
  ASSERT_EQ(y[0].shape(), Shape{});
  expect_close(values<float>(y[0]), {7});
  y = run_op("NegativeLogLikelihoodLoss", {logp(), target()});  // default mean
  expect_close(values<float>(y[0]), {3.5f});
}

TEST(KernelsLoss, NllWeightAndIgnoreIndex) {
  // weight [1, 2, .5]: losses 1.5 and 4, mean over total weight .5 + 1.
  auto y = run_op("NegativeLogLikelihoodLoss", {logp(), target(), make<float>({3}, {1, 2, 0.5f})});
  expect_close(values<float>(y[0]), {5.5f / 1.5f});
  // ignore_index 0 drops the second sample from the sum and the count.
  y = run_op("NegativeLogLikelihoodLoss", {logp(), target()}, {ai("ignore_index", 0)});
  expect_close(values<float>(y[0]), {3});
  // A negative ignore_index never indexes the input.
  y = run_op("NegativeLogLikelihoodLoss", {logp(), make<int64_t>({2}, {-1, 1})}, {ai("ignore_index", -1), as("reduction", "sum")});
  expect_close(values<float>(y[0]), {5});
  // Spatial form [N, C, d]: input [1, 2, 2], target [1, 2] = [1, 0].
  y = run_op("NegativeLogLikelihoodLoss", {make<float>({1, 2, 2}, {-1, -2, -3, -4}), make<int64_t>({1, 2}, {1, 0})},
             {as("reduction", "none")});
  expect_close(values<float>(y[0]), {3, 2});
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {logp(), make<int64_t>({2}, {3, 0})}), Error);
}

}  // namespace
}  // namespace gec
