// Pad folded into the Conv, MaxPool or AveragePool after it (passes/pad_folding.cc): one
// positive test per rule and a negative test per guard, Before/Expected.
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {

using namespace gec::testing;
using namespace gec::passes::testing;

TEST(PadFolding, ZeroPadBeforeConvBecomesItsPads) {
  auto pass = make_pad_folding();
  auto g = expect_rewrite(*pass, R"(graph {
  input %x: float32[1,1,3,3]
  const %p: int64[8] = [0, 0, 1, 0, 0, 0, 0, 2]
  const %W: float32[1,1,2,2] = [1.0, 1.0, 1.0, 1.0]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,4,5] @pad
  %y = Conv(%xp, %W) {pads = [0, 1, 0, 0]} : float32[1,1,3,5] @conv
  output %y
})", R"(graph {
  input %x: float32[1,1,3,3]
  const %W: float32[1,1,2,2] = [1.0, 1.0, 1.0, 1.0]
  %y = Conv(%x, %W) {pads = [1, 1, 0, 2]} : float32[1,1,3,5]
  output %y
})", 1);
  EXPECT_EQ(only_node(*g, "Conv")->fused_from, (std::vector<std::string>{"pad", "conv"}));
}

TEST(PadFolding, MinusInfinityPadBeforeMaxPoolBecomesItsPads) {
  auto pass = make_pad_folding();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,4,4]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
  const %v: float32[] = [-inf]
  %xp = Pad(%x, %p, %v) {mode = "constant"} : float32[1,2,6,6]
  %y = MaxPool(%xp) {kernel_shape = [3, 3], strides = [2, 2]} : float32[1,2,2,2]
  output %y
})", R"(graph {
  input %x: float32[1,2,4,4]
  %y = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : float32[1,2,2,2]
  output %y
})", 1);
}

// PyTorch's avg_pool2d(count_include_pad=True): the zeros of the Pad count
// in every divisor, as AveragePool's own pads do with count_include_pad 1.
TEST(PadFolding, ZeroPadBeforeAveragePoolBecomesCountedPads) {
  auto pass = make_pad_folding();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,2,4,5]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 1, 2]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,2,6,8]
  %y = AveragePool(%xp) {kernel_shape = [3, 3]} : float32[1,2,4,6]
  output %y
})", R"(graph {
  input %x: float32[1,2,4,5]
  %y = AveragePool(%x) {count_include_pad = 1, kernel_shape = [3, 3], pads = [1, 1, 1, 2]} : float32[1,2,4,6]
  output %y
})", 1);
  // Its own pads, already counted: summed.
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,1,4,4]
  const %p: int64[8] = [0, 0, 1, 0, 0, 0, 0, 1]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,5,5]
  %y = AveragePool(%xp) {count_include_pad = 1, kernel_shape = [3, 3], pads = [1, 1, 0, 0]} : float32[1,1,4,4]
  output %y
})", R"(graph {
  input %x: float32[1,1,4,4]
  %y = AveragePool(%x) {count_include_pad = 1, kernel_shape = [3, 3], pads = [2, 1, 0, 1]} : float32[1,1,4,4]
  output %y
})", 1);
}

// Strides, windows, asymmetric Pads and the pool's own counted pads: the
// folded pool computes what Pad + AveragePool did (run on ramp inputs).
TEST(PadFolding, AveragePoolSweepKeepsTheOutputs) {
  int folded = 0;
  for (int64_t k : {2, 3})
    for (int64_t s : {1, 2})
      for (int64_t pt : {0, 1})
        for (int64_t pb : {1, 2})
          for (int64_t own : {0, 1}) {
            if (pt >= k || pb + own >= k || pt + own >= k) continue;  // pads below the window (the rule's guard)
            const int64_t h = 5 + pt + pb, w = 6 + 1;                   // the padded map: rows pt/pb, one column
            const int64_t oh = (h + 2 * own - k) / s + 1, ow = (w + 2 * own - k) / s + 1;
            const std::string shape = "float32[1,2," + std::to_string(oh) + "," + std::to_string(ow) + "]";
            const std::string text = "graph {\n  input %x: float32[1,2,5,6]\n  const %p: int64[8] = [0, 0, " +
                                     std::to_string(pt) + ", 1, 0, 0, " + std::to_string(pb) +
                                     ", 0]\n  %xp = Pad(%x, %p) {mode = \"constant\"} : float32[1,2," +
                                     std::to_string(h) + "," + std::to_string(w) +
                                     "]\n  %y = AveragePool(%xp) {count_include_pad = 1, kernel_shape = [" +
                                     std::to_string(k) + ", " + std::to_string(k) + "], pads = [" +
                                     std::to_string(own) + ", " + std::to_string(own) + ", " + std::to_string(own) +
                                     ", " + std::to_string(own) + "], strides = [" + std::to_string(s) + ", " +
                                     std::to_string(s) + "]} : " + shape + "\n  output %y\n}";
            auto g = ir::parse_graph(text);
            std::map<std::string, Tensor> feeds{{"x", ramp_for(g->inputs()[0])}};
            const std::vector<Tensor> want = run_graph(*g, feeds);
            const int64_t n = make_pad_folding()->run(*g);
            g->verify();
            const std::vector<Tensor> got = run_graph(*g, feeds);
            SCOPED_TRACE(text);
            ASSERT_EQ(got[0].shape(), want[0].shape());
            expect_close(values<float>(got[0]), values<float>(want[0]), 1e-6f, 1e-6f);
            folded += static_cast<int>(n);
          }
  EXPECT_GT(folded, 8);
}

TEST(PadFolding, AveragePoolGuardsKeepThePad) {
  auto pass = make_pad_folding();
  const std::string head = R"(graph {
  input %x: float32[1,1,4,4]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,6,6]
)";
  // Own pads not counted in the divisor: the Pad's zeros would be, its own not.
  expect_unchanged(*pass, head + R"(  %y = AveragePool(%xp) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : float32[1,1,6,6]
  output %y
})");
  // ceil_mode: a partial window at the end.
  expect_unchanged(*pass, head + R"(  %y = AveragePool(%xp) {ceil_mode = 1, kernel_shape = [3, 3], strides = [2, 2]} : float32[1,1,3,3]
  output %y
})");
  // A pad as large as the window.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,1,4,4]
  const %p: int64[8] = [0, 0, 2, 2, 0, 0, 2, 2]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,8,8]
  %y = AveragePool(%xp) {kernel_shape = [2, 2]} : float32[1,1,7,7]
  output %y
})");
  // A non-zero pad value.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,1,4,4]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
  const %v: float32[] = [1.0]
  %xp = Pad(%x, %p, %v) {mode = "constant"} : float32[1,1,6,6]
  %y = AveragePool(%xp) {kernel_shape = [3, 3]} : float32[1,1,4,4]
  output %y
})");
}

// Each guard on its own: the graph stays as it is.
TEST(PadFolding, GuardsKeepThePad) {
  auto pass = make_pad_folding();
  const std::string conv_tail = R"(
  %y = Conv(%xp, %W) : float32[1,1,3,4]
  output %y
})";
  const std::string head = R"(graph {
  input %x: float32[1,1,3,3]
  const %W: float32[1,1,2,2] = [1.0, 1.0, 1.0, 1.0]
)";
  // A non-zero pad value.
  expect_unchanged(*pass, head + R"(  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 0, 1]
  const %v: float32[] = [1.0]
  %xp = Pad(%x, %p, %v) {mode = "constant"} : float32[1,1,4,5])" + conv_tail);
  // Reflect mode.
  expect_unchanged(*pass, head + R"(  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 0, 1]
  %xp = Pad(%x, %p) {mode = "reflect"} : float32[1,1,4,5])" + conv_tail);
  // Padding the channel dim.
  expect_unchanged(*pass, head + R"(  const %p: int64[8] = [0, 1, 0, 0, 0, 0, 1, 2]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,2,4,5])" + conv_tail);
  // Negative pads (a crop).
  expect_unchanged(*pass, head + R"(  const %p: int64[8] = [0, 0, -1, 0, 0, 0, 2, 2]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,4,5])" + conv_tail);
  // The padded map read twice.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,1,3,3]
  const %W: float32[1,1,2,2] = [1.0, 1.0, 1.0, 1.0]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 0, 1]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,4,4]
  %y = Conv(%xp, %W) : float32[1,1,3,3]
  %z = Relu(%xp) : float32[1,1,4,4]
  output %y
  output %z
})");
  // auto_pad on the Conv.
  expect_unchanged(*pass, head + R"(  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 0, 1]
  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,1,4,4]
  %y = Conv(%xp, %W) {auto_pad = "SAME_UPPER"} : float32[1,1,4,4]
  output %y
})");
  // MaxPool: zero padding is not -inf; pads reaching the kernel size; an
  // indices output.
  const std::string pool_head = R"(graph {
  input %x: float32[1,2,4,4]
  const %p: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
)";
  expect_unchanged(*pass, pool_head + R"(  %xp = Pad(%x, %p) {mode = "constant"} : float32[1,2,6,6]
  %y = MaxPool(%xp) {kernel_shape = [3, 3], strides = [2, 2]} : float32[1,2,2,2]
  output %y
})");
  expect_unchanged(*pass, pool_head + R"(  const %v: float32[] = [-inf]
  %xp = Pad(%x, %p, %v) {mode = "constant"} : float32[1,2,6,6]
  %y = MaxPool(%xp) {kernel_shape = [1, 1]} : float32[1,2,6,6]
  output %y
})");
  expect_unchanged(*pass, pool_head + R"(  const %v: float32[] = [-inf]
  %xp = Pad(%x, %p, %v) {mode = "constant"} : float32[1,2,6,6]
  %y, %i = MaxPool(%xp) {kernel_shape = [3, 3], strides = [2, 2]} : float32[1,2,2,2], int64[1,2,2,2]
  output %y
  output %i
})");
}

}  // namespace
}  // namespace gec::passes
