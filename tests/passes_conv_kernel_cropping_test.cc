// Kernel taps that read only padding cropped from a Conv
// (passes/conv_kernel_cropping.cc): Before/Expected for the atrous case and
// a window larger than its input, negative cases for each guard, and a sweep
// over strides, dilations, pads and groups that runs every rewritten Conv
// against the original (outputs within 1e-5) and checks that a Conv is
// cropped only where a first or last tap reads nothing but padding.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels_nn_util.h"
#include "passes_util.h"

namespace gec::passes {
namespace {

using namespace gec::testing;
using namespace gec::passes::testing;

std::string consts(const char* name, const Shape& s) {
  std::string r = "  const %" + std::string(name) + ": float32[";
  int64_t n = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    r += (i ? "," : "") + std::to_string(s[i]);
    n *= s[i];
  }
  r += "] = [";
  for (int64_t i = 0; i < n; ++i) r += (i ? ", " : "") + std::to_string(i + 1) + ".0";
  return r + "]\n";
}

// DeepLab's atrous pyramid: 3x3 taps at dilation 24 on a 14x14 map. Only
// the centre tap ever lands inside the input: a 1x1 convolution (weight 5,
// the centre of 1..9), no padding, dilation 1.
TEST(ConvKernelCropping, DilationPastTheInputLeavesTheCentreTap) {
  auto pass = make_conv_kernel_cropping();
  auto g = expect_rewrite(*pass, "graph {\n  input %x: float32[1,1,14,14]\n" + consts("W", {1, 1, 3, 3}) +
                                     "  %y = Conv(%x, %W) {dilations = [24, 24], pads = [24, 24, 24, 24]} : "
                                     "float32[1,1,14,14] @aspp\n  output %y\n}",
                          R"(graph {
  input %x: float32[1,1,14,14]
  const %W: float32[1,1,1,1] = [5.0]
  %y = Conv(%x, %W) {auto_pad = "NOTSET", dilations = [1, 1], kernel_shape = [1, 1], pads = [0, 0, 0, 0]} : float32[1,1,14,14]
  output %y
})",
                          1);
  EXPECT_EQ(only_node(*g, "Conv")->fused_from, (std::vector<std::string>{"aspp"}));
}

// A 7x7 window with pads 3 on a 3x3 map: taps 0 and 6 of each axis read
// padding for every output; 5x5 with pads 2 is left. Rows 1..5 and columns
// 1..5 of W (values 1..49 row-major).
TEST(ConvKernelCropping, WindowLargerThanItsInputIsCropped) {
  auto pass = make_conv_kernel_cropping();
  std::string w5 = "  const %W: float32[1,1,5,5] = [";
  for (int r = 1; r <= 5; ++r)
    for (int c = 1; c <= 5; ++c) w5 += ((r == 1 && c == 1) ? "" : ", ") + std::to_string(r * 7 + c + 1) + ".0";
  w5 += "]\n";
  expect_rewrite(*pass, "graph {\n  input %x: float32[1,1,3,3]\n" + consts("W", {1, 1, 7, 7}) +
                            "  %y = Conv(%x, %W) {pads = [3, 3, 3, 3]} : float32[1,1,3,3]\n  output %y\n}",
                 "graph {\n  input %x: float32[1,1,3,3]\n" + w5 +
                     "  %y = Conv(%x, %W) {auto_pad = \"NOTSET\", dilations = [1, 1], kernel_shape = [5, 5], "
                     "pads = [2, 2, 2, 2]} : float32[1,1,3,3]\n  output %y\n}",
                 1);
}

TEST(ConvKernelCropping, GuardsKeepTheConv) {
  auto pass = make_conv_kernel_cropping();
  // Dilation 12 on 14x14: every tap reads the input for some output.
  expect_unchanged(*pass, "graph {\n  input %x: float32[1,1,14,14]\n" + consts("W", {1, 1, 3, 3}) +
                              "  %y = Conv(%x, %W) {dilations = [12, 12], pads = [12, 12, 12, 12]} : "
                              "float32[1,1,14,14]\n  output %y\n}");
  // The spatial size is not known at compile time.
  expect_unchanged(*pass, "graph {\n  input %x: float32[1,1,?,?]\n" + consts("W", {1, 1, 3, 3}) +
                              "  %y = Conv(%x, %W) {dilations = [24, 24], pads = [24, 24, 24, 24]} : "
                              "float32[1,1,?,?]\n  output %y\n}");
  // W is not a constant.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,1,14,14]
  input %W: float32[1,1,3,3]
  %y = Conv(%x, %W) {dilations = [24, 24], pads = [24, 24, 24, 24]} : float32[1,1,14,14]
  output %y
})");
  // An axis where no tap reads the input (the output is the bias alone): left as it is.
  expect_unchanged(*pass, "graph {\n  input %x: float32[1,1,2,2]\n" + consts("W", {1, 1, 1, 1}) +
                              "  %y = Conv(%x, %W) {pads = [1, 1, 1, 1], strides = [3, 3]} : "
                              "float32[1,1,2,2]\n  output %y\n}");
}

/// Conv [1, 2, h, w] -> M 3, kernel kh x kw, as written by `attrs`;
/// returns the node.
ir::Node* add_conv(ir::Graph& g, int64_t h, int64_t w, int64_t kh, int64_t kw, std::vector<ir::Attribute> attrs,
                   int group = 1) {
  ir::Value* x = input(g, "x", {1, 2, h, w});
  const int64_t cin = 2 / group;
  Tensor wt(DType::kFloat32, {group == 2 ? 2 : 3, cin, kh, kw});
  for (int64_t i = 0; i < wt.numel(); ++i) wt.as<float>()[i] = 0.1f * static_cast<float>((i * 5) % 13) - 0.6f;
  ir::Node* c = g.add_node("Conv", {x, g.add_constant("W", wt)}, {"y"}, "conv");
  c->attrs = std::move(attrs);
  if (group != 1) c->set_attr(ir::Attribute::Int("group", group));
  return c;
}

// Every combination: the output is the original Conv's, and the pass rewrote
// exactly when some tap of an axis reads only padding (counted here by brute
// force over output positions).
TEST(ConvKernelCropping, SweepKeepsTheOutputs) {
  int rewritten = 0;
  for (int64_t h : {1, 3, 6})
    for (int64_t k : {1, 3, 5})
      for (int64_t s : {1, 2, 3})
        for (int64_t d : {1, 2, 4})
          for (int64_t p : {0, 1, 4})
            for (int group : {1, 2}) {
              const int64_t span = (k - 1) * d + 1;
              if (h + 2 * p < span || h + 1 + p + 1 < span) continue;  // no output
              ir::Graph g;
              ir::Node* c = add_conv(g, h, h + 1, k, k,
                                     {ais("strides", {s, 1}), ais("dilations", {d, d}), ais("pads", {p, p, p, 1})},
                                     group);
              c->output(0)->type = ir::TensorType::of(
                  DType::kFloat32, {1, group == 2 ? 2 : 3, (h + 2 * p - span) / s + 1, (h + 1 + p + 1 - span) + 1});
              g.outputs().push_back(c->output(0));
              // Brute force per axis: 0 the first and last taps read the
              // input for some output, 1 one of them reads only padding, 2 no
              // tap reads the input.
              auto dead_edge = [&](int64_t in, int64_t stride, int64_t pb, int64_t pe) {
                const int64_t out = (in + pb + pe - span) / stride + 1;
                std::vector<bool> live(static_cast<size_t>(k), false);
                for (int64_t t = 0; t < k; ++t)
                  for (int64_t o = 0; o < out; ++o) {
                    const int64_t at = o * stride - pb + t * d;
                    if (at >= 0 && at < in) live[t] = true;
                  }
                if (std::find(live.begin(), live.end(), true) == live.end()) return 2;
                return live.front() && live.back() ? 0 : 1;
              };
              const int hd = dead_edge(h, s, p, p), wd = dead_edge(h + 1, 1, p, 1);
              const bool can = (hd == 1 || wd == 1) && hd != 2 && wd != 2;
              std::map<std::string, Tensor> feeds{{"x", ramp_for(g.inputs()[0])}};
              const std::vector<Tensor> want = run_graph(g, feeds);
              const int64_t n = make_conv_kernel_cropping()->run(g);
              g.verify();
              const std::vector<Tensor> got = run_graph(g, feeds);
              SCOPED_TRACE("h " + std::to_string(h) + " k " + std::to_string(k) + " s " + std::to_string(s) + " d " +
                           std::to_string(d) + " p " + std::to_string(p) + " group " + std::to_string(group));
              ASSERT_EQ(got[0].shape(), want[0].shape());
              expect_close(values<float>(got[0]), values<float>(want[0]), 1e-5f, 1e-5f);
              // Cropped only where an edge tap is dead; a crop that would
              // need negative pads (an input crop) is refused.
              if (!can) {
                EXPECT_EQ(n, 0);
              }
              rewritten += static_cast<int>(n);
            }
  EXPECT_GT(rewritten, 20);  // the sweep does reach the rewrite
}

/// Runs the pass on the one-Conv graph `g`: one crop, the output within
/// 1e-5 of the original's on a ramp input. Returns the cropped Conv.
ir::Node* crop_and_compare(ir::Graph& g) {
  std::map<std::string, Tensor> feeds{{"x", ramp_for(g.inputs()[0])}};
  const std::vector<Tensor> want = run_graph(g, feeds);
  EXPECT_EQ(make_conv_kernel_cropping()->run(g), 1);
  const std::vector<Tensor> got = run_graph(g, feeds);
  expect_close(values<float>(got[0]), values<float>(want[0]), 1e-5f, 1e-5f);
  return only_node(g, "Conv");
}

// An axis that is not cropped may leave its last inputs unread (stride 2
// over 8 rows reads 7): that must not stop the crop of the other axis
// (dilation 24 over 14 columns: the centre tap only).
TEST(ConvKernelCropping, AnAxisLeftAsItIsDoesNotBlockTheCrop) {
  ir::Graph g;
  ir::Node* c = add_conv(g, 8, 14, 3, 3,
                         {ais("strides", {2, 1}), ais("dilations", {1, 24}), ais("pads", {0, 24, 0, 24})});
  c->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 3, 3, 14});
  g.outputs().push_back(c->output(0));
  ir::Node* n = crop_and_compare(g);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->get_ints("kernel_shape"), (std::vector<int64_t>{3, 1}));
}

// SAME_UPPER padding is resolved to explicit pads when the Conv is cropped.
TEST(ConvKernelCropping, AutoPadIsMadeExplicit) {
  ir::Graph g;
  ir::Node* c = add_conv(g, 2, 2, 5, 5, {as("auto_pad", "SAME_UPPER"), ais("dilations", {3, 3})});
  c->output(0)->type = ir::TensorType::of(DType::kFloat32, {1, 3, 2, 2});
  g.outputs().push_back(c->output(0));
  ir::Node* n = crop_and_compare(g);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->get_string("auto_pad", ""), "NOTSET");
}

}  // namespace
}  // namespace gec::passes
