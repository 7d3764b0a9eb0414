// GRU-14 and RNN-14 kernels with hidden size 1 and input size 1, so each
// step is one scalar formula (ONNX operator text); expected values were
// evaluated with a calculator from those formulas:
//   RNN  W=1, R=0.5, Wb+Rb=0.3, X=[1,-1]: h1 = tanh(1.3) = .8617232,
//        h2 = tanh(-1 + .5*h1 + .3) = -.2628230
//   GRU  W=R=[0,0,1] (z = r = sigmoid(0) = .5), X=[1,2]:
//        h1 = .5*tanh(1) = .3807971, h2 = .5*tanh(2 + .5*h1) + .5*h1 = .6780379
#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(NnRnn, SimpleRnnForward) {
  auto out = run_op("RNN",
                    {make<float>({2, 1, 1}, {1, -1}), make<float>({1, 1, 1}, {1}), make<float>({1, 1, 1}, {0.5f}),
                     make<float>({1, 2}, {0.1f, 0.2f})},
                    {ai("hidden_size", 1)}, 2);
  ASSERT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  expect_close(values<float>(out[0]), {0.8617232f, -0.2628230f});
  expect_close(values<float>(out[1]), {-0.2628230f});
}

TEST(NnRnn, SimpleRnnBidirectional) {
  // The reverse direction sees x = -1 first: tanh(-0.7) = -.6043678, then tanh(1 + .5*r1 + .3) = .7606755.
  auto out = run_op("RNN",
                    {make<float>({2, 1, 1}, {1, -1}), make<float>({2, 1, 1}, {1, 1}), make<float>({2, 1, 1}, {0.5f, 0.5f}),
                     make<float>({2, 2}, {0.1f, 0.2f, 0.1f, 0.2f})},
                    {ai("hidden_size", 1), as("direction", "bidirectional")}, 2);
  ASSERT_EQ(out[0].shape(), (Shape{2, 2, 1, 1}));
  // Y[t, dir]: forward h at t, reverse h at t (reverse step 1 is t = 0).
  expect_close(values<float>(out[0]), {0.8617232f, 0.7606755f, -0.2628230f, -0.6043678f});
  expect_close(values<float>(out[1]), {-0.2628230f, 0.7606755f});
}

TEST(NnRnn, SequenceLensAndLayout) {
  // Batch 2, lens [2, 1], layout 1 (X [batch, seq, input]): entry 1 stops
  // after x = 2: tanh(2.3) = .9800964; its Y at t = 1 stays 0.
  auto out = run_op("RNN",
                    {make<float>({2, 2, 1}, {1, -1, 2, 5}), make<float>({1, 1, 1}, {1}), make<float>({1, 1, 1}, {0.5f}),
                     make<float>({1, 2}, {0.1f, 0.2f}), make<int32_t>({2}, {2, 1})},
                    {ai("layout", 1)}, 2);
  ASSERT_EQ(out[0].shape(), (Shape{2, 2, 1, 1}));
  expect_close(values<float>(out[0]), {0.8617232f, -0.2628230f, 0.9800964f, 0.f});
  ASSERT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  expect_close(values<float>(out[1]), {-0.2628230f, 0.9800964f});
}

TEST(NnGru, ForwardTwoSteps) {
  auto out = run_op("GRU",
                    {make<float>({2, 1, 1}, {1, 2}), make<float>({1, 3, 1}, {0, 0, 1}), make<float>({1, 3, 1}, {0, 0, 1})},
                    {ai("hidden_size", 1)}, 2);
  ASSERT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  expect_close(values<float>(out[0]), {0.3807971f, 0.6780379f});
  expect_close(values<float>(out[1]), {0.6780379f});
}

TEST(NnGru, LinearBeforeReset) {
  // Rb_h = 1, one step x = 1, h0 = 0:
  //   linear_before_reset=1: n = tanh(1 + r*(0 + 1)) = tanh(1.5), h = .5*n = .4525741
  //   linear_before_reset=0: n = tanh(1 + (r*0)*1 + 1) = tanh(2),  h = .4820138
  const std::vector<float> b{0, 0, 0, 0, 0, 1};
  for (int lbr : {1, 0}) {
    auto out = run_op("GRU",
                      {make<float>({1, 1, 1}, {1}), make<float>({1, 3, 1}, {0, 0, 1}), make<float>({1, 3, 1}, {0, 0, 1}),
                       make<float>({1, 6}, b)},
                      {ai("linear_before_reset", lbr)}, 2);
    expect_close(values<float>(out[1]), {lbr ? 0.4525741f : 0.4820138f});
  }
}

TEST(NnGru, RefusesFloat64) {
  EXPECT_THROW(run_op("GRU", {make<double>({1, 1, 1}, {1}), make<double>({1, 3, 1}, {0, 0, 1}),
                              make<double>({1, 3, 1}, {0, 0, 1})}),
               Error);
}

}  // namespace
}  // namespace gec
