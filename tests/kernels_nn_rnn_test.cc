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

// The default GRU cell's vector passes (rnn.cc gru_step: one Sigmoid pass
// over z and r, one Tanh pass over the candidates) against the ONNX GRU-14
// equations in double, hidden size 37 (vector tails), three steps of two
// sequences, both linear_before_reset values, biases and an initial state,
// on every compiled Highway target.
TEST(NnGru, DefaultCellMatchesTheEquationsInDouble) {
  constexpr int64_t T = 3, B = 2, I = 5, H = 37, G = 3 * H;
  const std::vector<float> x = sawtooth(T * B * I, 7, 17, 0.2), w = sawtooth(G * I, 5, 23, 0.05),
                           r = sawtooth(G * H, 3, 29, 0.02), b = sawtooth(2 * G, 11, 13, 0.1),
                           h0 = sawtooth(B * H, 13, 31, 0.05);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int lbr : {0, 1}) {
    std::vector<double> h(h0.begin(), h0.end()), want_y;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> hn(h.size());
      for (int64_t bb = 0; bb < B; ++bb) {
        auto xw = [&](int k, int64_t u) {  // (X W^T + Wb) of gate k (z, r, h), unit u
          double acc = b[k * H + u];
          for (int64_t q = 0; q < I; ++q) acc += double(x[(t * B + bb) * I + q]) * w[(k * H + u) * I + q];
          return acc;
        };
        auto hr = [&](int k, int64_t u, const std::vector<double>& hv) {  // (hv R^T + Rb) of gate k, unit u
          double acc = b[G + k * H + u];
          for (int64_t q = 0; q < H; ++q) acc += hv[bb * H + q] * r[(k * H + u) * H + q];
          return acc;
        };
        std::vector<double> rh(h.size());  // r * H_{t-1} of this entry (linear_before_reset = 0)
        for (int64_t u = 0; u < H; ++u) rh[bb * H + u] = sigmoid(xw(1, u) + hr(1, u, h)) * h[bb * H + u];
        for (int64_t j = 0; j < H; ++j) {
          const double z = sigmoid(xw(0, j) + hr(0, j, h));
          const double n = lbr ? std::tanh(xw(2, j) + sigmoid(xw(1, j) + hr(1, j, h)) * hr(2, j, h))
                               : std::tanh(xw(2, j) + hr(2, j, rh));
          hn[bb * H + j] = (1 - z) * n + z * h[bb * H + j];
        }
      }
      h = hn;
      want_y.insert(want_y.end(), h.begin(), h.end());
    }
    // The same reference for every target.
    for_each_hwy_target([&] {
      const auto out = run_op("GRU",
                              {make<float>({T, B, I}, x), make<float>({1, G, I}, w), make<float>({1, G, H}, r),
                               make<float>({1, 2 * G}, b), Tensor(), make<float>({1, B, H}, h0)},
                              {ai("hidden_size", H), ai("linear_before_reset", lbr)}, 2);
      const std::vector<float> y = values<float>(out[0]);
      ASSERT_EQ(y.size(), want_y.size());
      for (size_t i = 0; i < y.size(); ++i)
        EXPECT_NEAR(y[i], want_y[i], 2e-6) << "linear_before_reset " << lbr << " at " << i;
    });
  }
}

TEST(NnGru, RefusesFloat64) {
  EXPECT_THROW(run_op("GRU", {make<double>({1, 1, 1}, {1}), make<double>({1, 3, 1}, {0, 0, 1}),
                              make<double>({1, 3, 1}, {0, 0, 1})}),
               Error);
}

}  // namespace
}  // namespace gec
