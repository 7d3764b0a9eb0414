// LSTM kernel (ONNX LSTM-14), hidden size 2, input size 1. The weights make
// the equations easy to follow by hand: W and R are zero except the cell
// gate (Wc = [1,-1], Rc = identity), so i = f = o = sigmoid(0) = 0.5 unless a
// peephole is set, and with initial_c = [2,4]:
//   step x=1: c~ = tanh([1,-1]) = [.7615942,-.7615942],
//             C1 = .5*[2,4] + .5*c~ = [1.3807971, 1.6192029],
//             H1 = .5*tanh(C1) = [.4405648, .4622543]
//   step x=2: c~ = tanh([2,-2] + H1), C2 = .5*C1 + .5*c~ = [1.1828673, .3537311],
//             H2 = .5*tanh(C2) = [.4141768, .1698401]
// (values evaluated with a calculator from these formulas).
#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

std::vector<float> weights_w(int dirs) {
  std::vector<float> w;
  for (int d = 0; d < dirs; ++d) w.insert(w.end(), {0, 0, 0, 0, 0, 0, 1, -1});
  return w;
}
std::vector<float> weights_r(int dirs) {
  std::vector<float> r;
  for (int d = 0; d < dirs; ++d) {
    r.insert(r.end(), 12, 0.f);
    r.insert(r.end(), {1, 0, 0, 1});
  }
  return r;
}

TEST(NnLstm, ForwardTwoSteps) {
  auto out = run_op("LSTM",
                    {make<float>({2, 1, 1}, {1, 2}), make<float>({1, 8, 1}, weights_w(1)), make<float>({1, 8, 2}, weights_r(1)),
                     Tensor(), Tensor(), Tensor(), make<float>({1, 1, 2}, {2, 4})},
                    {ai("hidden_size", 2)}, 3);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 2}));
  expect_close(values<float>(out[0]), {0.4405648f, 0.4622543f, 0.4141768f, 0.1698401f});
  expect_close(values<float>(out[1]), {0.4141768f, 0.1698401f});
  expect_close(values<float>(out[2]), {1.1828673f, 0.3537311f});
}

TEST(NnLstm, BiasShiftsGates) {
  // Wb_f = Rb_f = -100 shuts the forget gate: C1 = 0.5 * c~ (x=1), so
  // H1 = .5*tanh(.5*tanh(1)) = .5*tanh(.3807971) = .1816997 (and negated).
  std::vector<float> b(16, 0.f);
  b[4] = b[5] = b[12] = b[13] = -100.f;
  auto out = run_op("LSTM",
                    {make<float>({1, 1, 1}, {1}), make<float>({1, 8, 1}, weights_w(1)), make<float>({1, 8, 2}, weights_r(1)),
                     make<float>({1, 16}, b), Tensor(), Tensor(), make<float>({1, 1, 2}, {2, 4})},
                    {ai("hidden_size", 2)}, 2);
  expect_close(values<float>(out[1]), {0.1816997f, -0.1816997f});
}

TEST(NnLstm, InputPeephole) {
  // P = [pi, po, pf] = [[1,1],[0,0],[0,0]]: i = sigmoid(C_{t-1}).
  auto out = run_op("LSTM",
                    {make<float>({2, 1, 1}, {1, 2}), make<float>({1, 8, 1}, weights_w(1)), make<float>({1, 8, 2}, weights_r(1)),
                     Tensor(), Tensor(), Tensor(), make<float>({1, 1, 2}, {2, 4}), make<float>({1, 6}, {1, 1, 0, 0, 0, 0})},
                    {}, 3);
  expect_close(values<float>(out[0]), {0.4658293f, 0.4244363f, 0.4654458f, -0.0437729f});
  expect_close(values<float>(out[2]), {1.6650310f, -0.0877705f});
}

TEST(NnLstm, InitialHFeedsTheRecurrence) {
  // initial_h = [1,-1] and x = 0: c~ = tanh(Rc h0) = tanh([1,-1]), the same
  // as the x=1 step above, so H1 = [.4405648, .4622543].
  auto out = run_op("LSTM",
                    {make<float>({1, 1, 1}, {0}), make<float>({1, 8, 1}, weights_w(1)), make<float>({1, 8, 2}, weights_r(1)),
                     Tensor(), Tensor(), make<float>({1, 1, 2}, {1, -1}), make<float>({1, 1, 2}, {2, 4})},
                    {}, 2);
  expect_close(values<float>(out[1]), {0.4405648f, 0.4622543f});
}

// Bidirectional, batch 2: batch 0 runs x = [1,2], batch 1 has length 1 (x =
// [1, ignored]). Reverse over [1,2] processes x=2 first: H = [.4509223,
// .4541730] at t=1, then [.4151256, .2350895] at t=0.
TEST(NnLstm, BidirectionalWithSequenceLens) {
  auto out = run_op("LSTM",
                    {make<float>({2, 2, 1}, {1, 1, 2, 99}), make<float>({2, 8, 1}, weights_w(2)),
                     make<float>({2, 8, 2}, weights_r(2)), Tensor(), make<int32_t>({2}, {2, 1}), Tensor(),
                     make<float>({2, 2, 2}, {2, 4, 2, 4, 2, 4, 2, 4})},
                    {as("direction", "bidirectional"), ai("hidden_size", 2)}, 3);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2, 2}));
  const float a0 = 0.4405648f, a1 = 0.4622543f;
  expect_close(values<float>(out[0]), {a0, a1, a0, a1, 0.4151256f, 0.2350895f, a0, a1,  // t=0: fwd b0,b1; rev b0,b1
                                       0.4141768f, 0.1698401f, 0, 0, 0.4509223f, 0.4541730f, 0, 0});
  expect_close(values<float>(out[1]), {0.4141768f, 0.1698401f, a0, a1, 0.4151256f, 0.2350895f, a0, a1});
  expect_close(values<float>(out[2]), {1.1828673f, 0.3537311f, 1.3807971f, 1.6192029f, 1.1889444f, 0.5103001f,
                                       1.3807971f, 1.6192029f});
}

TEST(NnLstm, Layout1BatchMajor) {
  // Same case as above with X [B, T, I], Y [B, T, dirs, H], Y_h [B, dirs, H].
  auto out = run_op("LSTM",
                    {make<float>({2, 2, 1}, {1, 2, 1, 99}), make<float>({2, 8, 1}, weights_w(2)),
                     make<float>({2, 8, 2}, weights_r(2)), Tensor(), make<int64_t>({2}, {2, 1}), Tensor(),
                     make<float>({2, 2, 2}, {2, 4, 2, 4, 2, 4, 2, 4})},
                    {as("direction", "bidirectional"), ai("layout", 1)}, 2);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2, 2}));
  const float a0 = 0.4405648f, a1 = 0.4622543f;
  expect_close(values<float>(out[0]), {a0, a1, 0.4151256f, 0.2350895f, 0.4141768f, 0.1698401f, 0.4509223f, 0.4541730f,
                                       a0, a1, a0, a1, 0, 0, 0, 0});
  EXPECT_EQ(out[1].shape(), (Shape{2, 2, 2}));
  expect_close(values<float>(out[1]), {0.4141768f, 0.1698401f, 0.4151256f, 0.2350895f, a0, a1, a0, a1});
}

// A bidirectional LSTM or GRU on 2 threads runs its directions at once, one
// thread each (rnn_common.h run_directions); on 1 thread one after the
// other. Both give the same Y, Y_h (and Y_c): hidden 128 (a step's
// product, 2 x 128 x 512 multiply-adds for LSTM, stays below the split over
// threads), 6 steps, 2 sequences of lengths 6 and 4, both biases and
// initial states, every output of both directions.
TEST(NnLstm, BidirectionalDirectionsAtOnceMatchOneThread) {
  constexpr int64_t T = 6, B = 2, I = 24, H = 128;
  for (const std::string op : {"LSTM", "GRU"}) {
    const int64_t G = (op == "LSTM" ? 4 : 3) * H;
    std::vector<Tensor> in = {make<float>({T, B, I}, sawtooth(T * B * I, 11, 29, 0.1)),
                              make<float>({2, G, I}, sawtooth(2 * G * I, 7, 23, 0.02)),
                              make<float>({2, G, H}, sawtooth(2 * G * H, 5, 19, 0.01)),
                              make<float>({2, 2 * G}, sawtooth(4 * G, 3, 11, 0.05)),
                              make<int32_t>({B}, {6, 4}),
                              make<float>({2, B, H}, sawtooth(2 * B * H, 13, 17, 0.1))};
    if (op == "LSTM") in.push_back(make<float>({2, B, H}, sawtooth(2 * B * H, 9, 31, 0.1)));
    const size_t outs = op == "LSTM" ? 3 : 2;
    const std::vector<ir::Attribute> attrs = {as("direction", "bidirectional"), ai("hidden_size", H)};
    const std::vector<Tensor> one = run_op(op, in, attrs, outs, "", {}, 1), two = run_op(op, in, attrs, outs, "", {}, 2);
    for (size_t k = 0; k < outs; ++k) {
      EXPECT_EQ(one[k].shape(), two[k].shape()) << op << " output " << k;
      expect_close(values<float>(two[k]), values<float>(one[k]), 1e-6f, 1e-7f);
    }
    float largest = 0;
    for (float v : values<float>(one[0])) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 0.05) << op << ": the outputs should not all be near zero";
    // The shorter sequence's steps past its length are zero in both directions.
    for (int64_t t = 4; t < T; ++t)
      for (int64_t d = 0; d < 2; ++d)
        for (int64_t j = 0; j < H; ++j) EXPECT_EQ(two[0].as<float>()[((t * 2 + d) * B + 1) * H + j], 0.f) << op;
  }
}

// A step's dot products split over threads from 512K multiply-adds
// (rnn_common.h kSplitDotMacs): hidden 512, one sequence, a [1,512] x
// [512,2048] (LSTM) or [512,1536] (GRU) product per step, on 2 threads
// against 1 (each thread's columns of the gates must land where one thread
// puts them).
TEST(NnLstm, StepProductsSplitOverThreadsMatchOneThread) {
  constexpr int64_t T = 3, B = 1, I = 16, H = 512;
  for (const std::string op : {"LSTM", "GRU"}) {
    const int64_t G = (op == "LSTM" ? 4 : 3) * H;
    const std::vector<Tensor> in = {make<float>({T, B, I}, sawtooth(T * B * I, 11, 29, 0.1)),
                                    make<float>({1, G, I}, sawtooth(G * I, 7, 23, 0.02)),
                                    make<float>({1, G, H}, sawtooth(G * H, 5, 19, 0.004)),
                                    make<float>({1, 2 * G}, sawtooth(2 * G, 3, 11, 0.05))};
    const std::vector<ir::Attribute> attrs = {ai("hidden_size", H)};
    const Tensor one = run_op(op, in, attrs, 1, "", {}, 1)[0], two = run_op(op, in, attrs, 1, "", {}, 2)[0];
    expect_close(values<float>(two), values<float>(one), 1e-6f, 1e-7f);
    float largest = 0;
    for (float v : values<float>(one)) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 0.05) << op << ": the outputs should not all be near zero";
  }
}

// The products of a step run as dot products for up to 4 batch rows
// (rnn_common.h ProductNt; 4 x 128 x 512 multiply-adds: one thread) and
// through a oneDNN MatMul beyond: the same 4 sequences run in a batch of 4
// and as the first rows of a batch of 5 (hidden 128, input 64, 3 steps)
// give the same Y.
TEST(NnLstm, SmallAndLargeBatchProductsAgree) {
  constexpr int64_t T = 3, I = 64, H = 128, G = 4 * H;
  const std::vector<float> w = sawtooth(G * I, 7, 23, 0.01), r = sawtooth(G * H, 5, 19, 0.01),
                           b = sawtooth(2 * G, 3, 11, 0.05);
  const std::vector<float> x5 = sawtooth(T * 5 * I, 11, 29, 0.1);
  std::vector<float> x4;  // the first 4 of the 5 batch rows, per step ([T, B, I])
  for (int64_t t = 0; t < T; ++t) x4.insert(x4.end(), x5.begin() + (t * 5) * I, x5.begin() + (t * 5 + 4) * I);
  auto run = [&](int64_t batch, const std::vector<float>& x) {
    return run_op("LSTM", {make<float>({T, batch, I}, x), make<float>({1, G, I}, w), make<float>({1, G, H}, r),
                           make<float>({1, 2 * G}, b)},
                  {ai("hidden_size", H)}, 1)[0];
  };
  const Tensor y4 = run(4, x4), y5 = run(5, x5);  // Y [T, 1, B, H]
  std::vector<float> y5_first4;
  for (int64_t t = 0; t < T; ++t)
    y5_first4.insert(y5_first4.end(), y5.as<float>() + (t * 5) * H, y5.as<float>() + (t * 5 + 4) * H);
  expect_close(values<float>(y4), y5_first4, 1e-5f, 1e-6f);
  float largest = 0;
  for (float v : y5_first4) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 0.05) << "the outputs should not all be near zero";
}

// The default cell's vector passes (Sigmoid, Tanh, Tanh over whole gate
// rows, lstm.cc step_vectors) against the ONNX LSTM-14 equations in double,
// for a hidden size that leaves vector tails (37) over three steps of two
// sequences, with both biases and an initial state, on every compiled
// Highway target.
TEST(NnLstm, DefaultCellMatchesTheEquationsInDouble) {
  constexpr int64_t T = 3, B = 2, I = 6, H = 37, G = 4 * H;
  const std::vector<float> x = sawtooth(T * B * I, 7, 17, 0.2), w = sawtooth(G * I, 5, 23, 0.05),
                           r = sawtooth(G * H, 3, 29, 0.02), b = sawtooth(2 * G, 11, 13, 0.1),
                           h0 = sawtooth(B * H, 13, 31, 0.05), c0 = sawtooth(B * H, 17, 37, 0.1);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<double> h(h0.begin(), h0.end()), c(c0.begin(), c0.end()), want_y;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> hn(h.size());
    for (int64_t bb = 0; bb < B; ++bb)
      for (int64_t j = 0; j < H; ++j) {
        double g[4];  // i, o, f, c
        for (int k = 0; k < 4; ++k) {
          const int64_t row = k * H + j;
          double acc = double(b[row]) + b[G + row];
          for (int64_t q = 0; q < I; ++q) acc += double(x[(t * B + bb) * I + q]) * w[row * I + q];
          for (int64_t q = 0; q < H; ++q) acc += h[bb * H + q] * r[row * H + q];
          g[k] = acc;
        }
        const double cn = sigmoid(g[2]) * c[bb * H + j] + sigmoid(g[0]) * std::tanh(g[3]);
        c[bb * H + j] = cn;
        hn[bb * H + j] = sigmoid(g[1]) * std::tanh(cn);
      }
    h = hn;
    want_y.insert(want_y.end(), h.begin(), h.end());
  }
  // The same reference for every target.
  for_each_hwy_target([&] {
    const auto out = run_op("LSTM",
                            {make<float>({T, B, I}, x), make<float>({1, G, I}, w), make<float>({1, G, H}, r),
                             make<float>({1, 2 * G}, b), Tensor(), make<float>({1, B, H}, h0), make<float>({1, B, H}, c0)},
                            {ai("hidden_size", H)}, 3);
    const std::vector<float> y = values<float>(out[0]), yc = values<float>(out[2]);
    ASSERT_EQ(y.size(), want_y.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want_y[i], 2e-6) << i;
    for (size_t i = 0; i < yc.size(); ++i) EXPECT_NEAR(yc[i], c[i], 4e-6) << i;
  });
}

}  // namespace
}  // namespace gec
