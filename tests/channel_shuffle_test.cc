// ShuffleNet's channel shuffle and the channel moves around it:
//  - the rule channel_shuffle (pass channel_shuffle_fusion): the spelled-out
//    Reshape + Transpose + Reshape, with or without the Concat before it,
//    becomes com.graphengine::ChannelShuffle with the outputs unchanged; its
//    guards (another permutation, a group of 1, a shape that does not come
//    back) leave the graph alone;
//  - the same pass folds the channel Slices or Split that read the shuffled
//    map into the op (attribute split), and leaves them where they do not
//    cover it once each or something else reads it;
//  - the ChannelShuffle kernel against the formula of ops/channel_shuffle.cc
//    (y[n, j*g + i] = cat[n, i*(C/g) + j]), plain and nhwc, one to three
//    inputs, the two-branch loop and the general table, sizes that go
//    parallel, split outputs; Slice and Split read and write nhwc with plain's answers,
//    and nChw16c for whole 16-channel blocks (other ranges refused).
// All data movement: results must be bit-identical.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/domain.h"
#include "ops/layout.h"
#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

std::unique_ptr<Pass> fusion() {
  auto pass = make_channel_shuffle_fusion();
  return pass;
}

TEST(ChannelShuffleFusion, ReshapeTransposeReshapeBecomesOneOp) {
  auto pass = fusion();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,6,2,2]
  const %s5: int64[5] = [1, 2, 3, 2, 2]
  const %s4: int64[4] = [1, 6, 2, 2]
  %r = Reshape(%x, %s5) : float32[1,2,3,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,3,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,6,2,2]
  output %y
})", R"(graph {
  input %x: float32[1,6,2,2]
  %y = com.graphengine::ChannelShuffle(%x) {group = 2} : float32[1,6,2,2]
  output %y
})", 1);
}

TEST(ChannelShuffleFusion, TheConcatBeforeItIsFoldedIn) {
  auto pass = fusion();
  expect_rewrite(*pass, R"(graph {
  input %a: float32[2,4,3,1]
  input %b: float32[2,8,3,1]
  const %s5: int64[5] = [2, 3, 4, 3, 1]
  const %s4: int64[4] = [2, 12, 3, 1]
  %c = Concat(%a, %b) {axis = -3} : float32[2,12,3,1]
  %r = Reshape(%c, %s5) : float32[2,3,4,3,1]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[2,4,3,3,1]
  %y = Reshape(%t, %s4) : float32[2,12,3,1]
  output %y
})", R"(graph {
  input %a: float32[2,4,3,1]
  input %b: float32[2,8,3,1]
  %y = com.graphengine::ChannelShuffle(%a, %b) {group = 3} : float32[2,12,3,1]
  output %y
})", 1);
}

// A Concat that something else reads too stays, and the shuffle reads it.
TEST(ChannelShuffleFusion, AConcatReadElsewhereStays) {
  auto pass = fusion();
  expect_rewrite(*pass, R"(graph {
  input %a: float32[1,2,2,2]
  input %b: float32[1,2,2,2]
  const %s5: int64[5] = [1, 2, 2, 2, 2]
  const %s4: int64[4] = [1, 4, 2, 2]
  %c = Concat(%a, %b) {axis = 1} : float32[1,4,2,2]
  %r = Reshape(%c, %s5) : float32[1,2,2,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,2,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,4,2,2]
  %z = Relu(%c) : float32[1,4,2,2]
  output %y
  output %z
})", R"(graph {
  input %a: float32[1,2,2,2]
  input %b: float32[1,2,2,2]
  %c = Concat(%a, %b) {axis = 1} : float32[1,4,2,2]
  %z = Relu(%c) : float32[1,4,2,2]
  %y = com.graphengine::ChannelShuffle(%c) {group = 2} : float32[1,4,2,2]
  output %y
  output %z
})", 1);
}

TEST(ChannelShuffleFusion, GuardsLeaveOtherReshapesAlone) {
  auto pass = fusion();
  // Another permutation (dims 2 and 3 swapped).
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,6,2,2]
  const %s5: int64[5] = [1, 2, 3, 2, 2]
  const %s4: int64[4] = [1, 6, 2, 2]
  %r = Reshape(%x, %s5) : float32[1,2,3,2,2]
  %t = Transpose(%r) {perm = [0, 1, 3, 2, 4]} : float32[1,2,2,3,2]
  %y = Reshape(%t, %s4) : float32[1,6,2,2]
  output %y
})");
  // The shape does not come back to x's.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,6,2,2]
  const %s5: int64[5] = [1, 2, 3, 2, 2]
  const %s4: int64[4] = [1, 3, 4, 2]
  %r = Reshape(%x, %s5) : float32[1,2,3,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,3,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,3,4,2]
  output %y
})");
  // The split Reshape is not [N, g, C/g, H, W] (H split instead of C).
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,2,6,2]
  const %s5: int64[5] = [1, 2, 2, 3, 2]
  const %s4: int64[4] = [1, 2, 6, 2]
  %r = Reshape(%x, %s5) : float32[1,2,2,3,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,2,2,3,2]
  %y = Reshape(%t, %s4) : float32[1,2,6,2]
  output %y
})");
  // The 5-D value is also a graph output: it must stay.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,6,2,2]
  const %s5: int64[5] = [1, 2, 3, 2, 2]
  const %s4: int64[4] = [1, 6, 2, 2]
  %r = Reshape(%x, %s5) : float32[1,2,3,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,3,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,6,2,2]
  output %y
  output %t
})");
}

// ShuffleNet V2's next block halves the shuffled map: the two Slices (or
// a Split) become the shuffle's outputs.
TEST(ChannelShuffleFusion, TheSlicesAfterItBecomeItsOutputs) {
  auto pass = fusion();
  expect_rewrite(*pass, R"(graph {
  input %a: float32[1,4,3,3]
  input %b: float32[1,4,3,3]
  const %s5: int64[5] = [1, 2, 4, 3, 3]
  const %s4: int64[4] = [1, 8, 3, 3]
  const %z: int64[1] = [0]
  const %h: int64[1] = [4]
  const %e: int64[1] = [9223372036854775807]
  const %ax: int64[1] = [1]
  %c = Concat(%a, %b) {axis = 1} : float32[1,8,3,3]
  %r = Reshape(%c, %s5) : float32[1,2,4,3,3]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,4,2,3,3]
  %y = Reshape(%t, %s4) : float32[1,8,3,3]
  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,3,3]
  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,3,3]
  %u = Relu(%lo) : float32[1,4,3,3]
  output %u
  output %hi
})", R"(graph {
  input %a: float32[1,4,3,3]
  input %b: float32[1,4,3,3]
  %lo, %hi = com.graphengine::ChannelShuffle(%a, %b) {group = 2, split = [4, 4]} : float32[1,4,3,3], float32[1,4,3,3]
  %u = Relu(%lo) : float32[1,4,3,3]
  output %u
  output %hi
})", 2);
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,6,2,2]
  const %s5: int64[5] = [1, 2, 3, 2, 2]
  const %s4: int64[4] = [1, 6, 2, 2]
  const %sp: int64[3] = [1, 2, 3]
  %r = Reshape(%x, %s5) : float32[1,2,3,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,3,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,6,2,2]
  %p, %q, %w = Split(%y, %sp) {axis = -3} : float32[1,1,2,2], float32[1,2,2,2], float32[1,3,2,2]
  output %p
  output %q
  output %w
})", R"(graph {
  input %x: float32[1,6,2,2]
  %p, %q, %w = com.graphengine::ChannelShuffle(%x) {group = 2, split = [1, 2, 3]} : float32[1,1,2,2], float32[1,2,2,2], float32[1,3,2,2]
  output %p
  output %q
  output %w
})", 2);
}

// Bounds as exporters write them: a negative start, axes -3, ends past C;
// a Split without sizes (equal parts).
TEST(ChannelShuffleFusion, SliceAndSplitSpellingsFold) {
  auto pass = fusion();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,8,2,2]
  const %s5: int64[5] = [1, 2, 4, 2, 2]
  const %s4: int64[4] = [1, 8, 2, 2]
  const %z: int64[1] = [0]
  const %m: int64[1] = [-5]
  const %e: int64[1] = [100]
  const %ax: int64[1] = [-3]
  %r = Reshape(%x, %s5) : float32[1,2,4,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,4,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,8,2,2]
  %lo = Slice(%y, %z, %m, %ax) : float32[1,3,2,2]
  %hi = Slice(%y, %m, %e, %ax) : float32[1,5,2,2]
  output %lo
  output %hi
})", R"(graph {
  input %x: float32[1,8,2,2]
  %lo, %hi = com.graphengine::ChannelShuffle(%x) {group = 2, split = [3, 5]} : float32[1,3,2,2], float32[1,5,2,2]
  output %lo
  output %hi
})", 2);
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,8,2,2]
  const %s5: int64[5] = [1, 2, 4, 2, 2]
  const %s4: int64[4] = [1, 8, 2, 2]
  %r = Reshape(%x, %s5) : float32[1,2,4,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,4,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,8,2,2]
  %p, %q = Split(%y) {axis = 1} : float32[1,4,2,2], float32[1,4,2,2]
  output %p
  output %q
})", R"(graph {
  input %x: float32[1,8,2,2]
  %p, %q = com.graphengine::ChannelShuffle(%x) {group = 2, split = [4, 4]} : float32[1,4,2,2], float32[1,4,2,2]
  output %p
  output %q
})", 2);
}

// --disable-pass channel_shuffle_split is a known name and keeps the
// Slices; the shuffle itself is still fused.
TEST(ChannelShuffleFusion, TheSplitRuleCanBeDisabled) {
  const std::vector<std::string> names = all_pass_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "channel_shuffle_split"), names.end());
  auto pass = fusion();
  pass->set_disabled({"channel_shuffle_split"});
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,8,2,2]
  const %s5: int64[5] = [1, 2, 4, 2, 2]
  const %s4: int64[4] = [1, 8, 2, 2]
  const %z: int64[1] = [0]
  const %h: int64[1] = [4]
  const %e: int64[1] = [8]
  const %ax: int64[1] = [1]
  %r = Reshape(%x, %s5) : float32[1,2,4,2,2]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,4,2,2,2]
  %y = Reshape(%t, %s4) : float32[1,8,2,2]
  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,2,2]
  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,2,2]
  output %lo
  output %hi
})", R"(graph {
  input %x: float32[1,8,2,2]
  const %z: int64[1] = [0]
  const %h: int64[1] = [4]
  const %e: int64[1] = [8]
  const %ax: int64[1] = [1]
  %y = com.graphengine::ChannelShuffle(%x) {group = 2} : float32[1,8,2,2]
  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,2,2]
  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,2,2]
  output %lo
  output %hi
})", 1);
  EXPECT_EQ(pass->rule_hits().at("channel_shuffle_split"), 0);
}

// The shuffled map stays whole when anything else reads it, the ranges do
// not cover it once each, or a Slice steps or reads another dim.
TEST(ChannelShuffleFusion, SlicesThatDoNotSplitItStay) {
  auto pass = fusion();
  const std::string head = R"(graph {
  input %a: float32[1,4,3,3]
  input %b: float32[1,4,3,3]
  const %s5: int64[5] = [1, 2, 4, 3, 3]
  const %s4: int64[4] = [1, 8, 3, 3]
  const %z: int64[1] = [0]
  const %h: int64[1] = [4]
  const %f: int64[1] = [5]
  const %e: int64[1] = [8]
  const %ax: int64[1] = [1]
  const %ax2: int64[1] = [2]
  const %two: int64[1] = [2]
  const %six: int64[1] = [6]
  %c = Concat(%a, %b) {axis = 1} : float32[1,8,3,3]
  %r = Reshape(%c, %s5) : float32[1,2,4,3,3]
  %t = Transpose(%r) {perm = [0, 2, 1, 3, 4]} : float32[1,4,2,3,3]
  %y = Reshape(%t, %s4) : float32[1,8,3,3]
)";
  const std::string shuffled = R"(graph {
  input %a: float32[1,4,3,3]
  input %b: float32[1,4,3,3]
  const %z: int64[1] = [0]
  const %h: int64[1] = [4]
  const %f: int64[1] = [5]
  const %e: int64[1] = [8]
  const %ax: int64[1] = [1]
  const %ax2: int64[1] = [2]
  const %two: int64[1] = [2]
  const %six: int64[1] = [6]
  %y = com.graphengine::ChannelShuffle(%a, %b) {group = 2} : float32[1,8,3,3]
)";
  const std::vector<std::string> tails = {
      // Also a graph output.
      "  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,3,3]\n  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,3,3]\n"
      "  output %lo\n  output %hi\n  output %y\n}",
      // Also read by a Relu.
      "  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,3,3]\n  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,3,3]\n"
      "  %u = Relu(%y) : float32[1,8,3,3]\n  output %lo\n  output %hi\n  output %u\n}",
      // Overlapping ranges.
      "  %lo = Slice(%y, %z, %f, %ax) : float32[1,5,3,3]\n  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,3,3]\n"
      "  output %lo\n  output %hi\n}",
      // Counts that add up to C, ranges that do not cover it.
      "  %lo = Slice(%y, %z, %six, %ax) : float32[1,6,3,3]\n  %hi = Slice(%y, %two, %h, %ax) : float32[1,2,3,3]\n"
      "  output %lo\n  output %hi\n}",
      // A channel left out.
      "  %lo = Slice(%y, %z, %h, %ax) : float32[1,4,3,3]\n  %hi = Slice(%y, %f, %e, %ax) : float32[1,3,3,3]\n"
      "  output %lo\n  output %hi\n}",
      // Every second channel.
      "  %lo = Slice(%y, %z, %e, %ax, %two) : float32[1,4,3,3]\n  %hi = Slice(%y, %h, %e, %ax) : float32[1,4,3,3]\n"
      "  output %lo\n  output %hi\n}",
      // Rows, not channels.
      "  %lo = Slice(%y, %z, %two, %ax2) : float32[1,8,2,3]\n  %hi = Slice(%y, %two, %e, %ax2) : float32[1,8,1,3]\n"
      "  output %lo\n  output %hi\n}",
      // One range, the whole map.
      "  %lo = Slice(%y, %z, %e, %ax) : float32[1,8,3,3]\n  output %lo\n}",
  };
  for (const std::string& tail : tails) expect_rewrite(*pass, head + tail, shuffled + tail, 1);
}

/// Distinct values: element i of input k is 1000 * k + i.
std::vector<Tensor> distinct_inputs(const std::vector<Shape>& shapes) {
  std::vector<Tensor> r;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Tensor t(DType::kFloat32, shapes[k]);
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 1000.f * static_cast<float>(k) + static_cast<float>(i);
    r.push_back(std::move(t));
  }
  return r;
}

/// The formula: concatenation on dim 1, then channel k to (k % (C/g)) * g + k / (C/g).
Tensor reference_shuffle(const std::vector<Tensor>& xs, int64_t group) {
  Shape s = xs[0].shape();
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  s[1] = 0;
  for (const Tensor& x : xs) s[1] += x.shape()[1];
  Tensor y(DType::kFloat32, s);
  const int64_t c = s[1], per = c / group;
  for (int64_t n = 0; n < s[0]; ++n) {
    int64_t k = 0;  // channel of the concatenation
    for (const Tensor& x : xs)
      for (int64_t ci = 0; ci < x.shape()[1]; ++ci, ++k)
        for (int64_t e = 0; e < inner; ++e)
          y.as<float>()[(n * c + (k % per) * group + k / per) * inner + e] =
              x.as<float>()[(n * x.shape()[1] + ci) * inner + e];
  }
  return y;
}

/// [N,C,H,W] plain -> its nhwc (or nChw16c) bytes (still labelled
/// [N,C,H,W]), and back.
Tensor to_nhwc(const Tensor& t, bool back = false, bool blocked = false) {
  const Shape s = t.shape();
  Tensor r(DType::kFloat32, s);
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) {
          const int64_t plain = ((n * s[1] + c) * s[2] + h) * s[3] + w;
          const int64_t held = blocked ? (((n * (s[1] / 16) + c / 16) * s[2] + h) * s[3] + w) * 16 + c % 16
                                       : ((n * s[2] + h) * s[3] + w) * s[1] + c;
          if (back) r.as<float>()[plain] = t.as<float>()[held];
          else r.as<float>()[held] = t.as<float>()[plain];
        }
  return r;
}
Tensor to_blocked(const Tensor& t, bool back = false) { return to_nhwc(t, back, true); }

kernels::KernelConfig layouts(size_t inputs, size_t outputs, ops::Layout data, size_t data_inputs) {
  kernels::KernelConfig c;
  c.input_layouts.assign(inputs, ops::Layout::kPlain);
  for (size_t i = 0; i < data_inputs; ++i) c.input_layouts[i] = data;
  c.output_layouts.assign(outputs, data);
  return c;
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(values<float>(got), values<float>(want)) << what;
}

TEST(ChannelShuffleKernel, MatchesTheFormulaPlainAndChannelsLast) {
  struct Case {
    std::vector<int64_t> channels;
    int64_t group;
    Shape nhw;  // N, H, W
  };
  const std::vector<Case> cases = {
      {{6, 6}, 2, {1, 3, 5}},        // two branches: the interleaving loop
      {{58, 58}, 2, {1, 28, 28}},    // ShuffleNet's, large enough for 2 threads
      {{10, 14}, 2, {2, 4, 3}},      // unequal halves: the table
      {{12}, 4, {1, 2, 2}},          // one input
      {{4, 5, 3}, 3, {2, 3, 3}},     // three inputs, g = 3
      {{232, 232}, 4, {1, 14, 14}},  // g = 4, parallel, the table
  };
  for (const Case& k : cases) {
    std::vector<Shape> shapes;
    for (int64_t c : k.channels) shapes.push_back({k.nhw[0], c, k.nhw[1], k.nhw[2]});
    const std::vector<Tensor> xs = distinct_inputs(shapes);
    const Tensor want = reference_shuffle(xs, k.group);
    const std::string what = "group " + std::to_string(k.group) + ", " + std::to_string(xs.size()) + " inputs, " +
                             std::to_string(want.shape()[1]) + " channels";
    const std::vector<ir::Attribute> attrs{ir::Attribute::Int("group", k.group)};
    expect_same(run_op("ChannelShuffle", xs, attrs, 1, ops::kGecDomain)[0], want, what + " plain");
    std::vector<Tensor> held;
    for (const Tensor& x : xs) held.push_back(to_nhwc(x));
    const auto got = run_op("ChannelShuffle", held, attrs, 1, ops::kGecDomain,
                            layouts(held.size(), 1, ops::Layout::kNhwc, held.size()));
    expect_same(to_nhwc(got[0], true), want, what + " nhwc");
  }
}

// With split, the outputs are Y's channel ranges: the two-branch loop on
// halves (ShuffleNet V2's), the table for other ranges, plain and nhwc.
TEST(ChannelShuffleKernel, SplitOutputsAreTheRangesOfY) {
  struct Case {
    std::vector<int64_t> channels;
    int64_t group;
    std::vector<int64_t> split;
    Shape nhw;
  };
  const std::vector<Case> cases = {
      {{6, 6}, 2, {6, 6}, {1, 3, 5}},          // halves of halves: the loop
      {{58, 58}, 2, {58, 58}, {1, 28, 28}},    // ShuffleNet's, parallel
      {{5, 5}, 2, {5, 5}, {2, 2, 3}},          // odd halves: the table
      {{6, 6}, 2, {4, 8}, {1, 3, 2}},          // unequal ranges
      {{4, 5, 3}, 3, {2, 7, 3}, {2, 3, 3}},    // three inputs, three outputs
  };
  for (const Case& k : cases) {
    std::vector<Shape> shapes;
    for (int64_t c : k.channels) shapes.push_back({k.nhw[0], c, k.nhw[1], k.nhw[2]});
    const std::vector<Tensor> xs = distinct_inputs(shapes);
    const Tensor whole = reference_shuffle(xs, k.group);
    std::vector<Tensor> want;
    int64_t first = 0;
    for (int64_t part : k.split) {
      want.push_back(run_op("Slice", {whole, make<int64_t>({1}, {first}), make<int64_t>({1}, {first + part}),
                                      make<int64_t>({1}, {1})})[0]);
      first += part;
    }
    const std::string what = "group " + std::to_string(k.group) + ", " + std::to_string(k.split.size()) + " outputs";
    const std::vector<ir::Attribute> attrs{ir::Attribute::Int("group", k.group), ir::Attribute::Ints("split", k.split)};
    const auto plain = run_op("ChannelShuffle", xs, attrs, k.split.size(), ops::kGecDomain);
    ASSERT_EQ(plain.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j) expect_same(plain[j], want[j], what + " plain, output " + std::to_string(j));
    std::vector<Tensor> held;
    for (const Tensor& x : xs) held.push_back(to_nhwc(x));
    const auto got = run_op("ChannelShuffle", held, attrs, k.split.size(), ops::kGecDomain,
                            layouts(held.size(), k.split.size(), ops::Layout::kNhwc, held.size()));
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j)
      expect_same(to_nhwc(got[j], true), want[j], what + " nhwc, output " + std::to_string(j));
  }
  const std::vector<Tensor> xs = distinct_inputs({{1, 6, 2, 2}});
  expect_error([&] {
    run_op("ChannelShuffle", xs, {ir::Attribute::Int("group", 2), ir::Attribute::Ints("split", {2, 3})}, 2,
           ops::kGecDomain);
  }, ErrorCode::kInvalidModel, "sums to 5");
  expect_error([&] {
    run_op("ChannelShuffle", xs, {ir::Attribute::Int("group", 2), ir::Attribute::Ints("split", {6})}, 2,
           ops::kGecDomain);
  }, ErrorCode::kInvalidModel, "1 entries for 2 outputs");
  expect_error([&] { run_op("ChannelShuffle", xs, {ir::Attribute::Int("group", 2)}, 2, ops::kGecDomain); },
               ErrorCode::kInvalidModel, "no split");
}

TEST(ChannelShuffleKernel, RefusesBadGroupsAndOtherLayouts) {
  const std::vector<Tensor> xs = distinct_inputs({{1, 6, 2, 2}});
  expect_error([&] { run_op("ChannelShuffle", xs, {ir::Attribute::Int("group", 4)}, 1, ops::kGecDomain); },
               ErrorCode::kInvalidModel, "divide");
  expect_error([&] { run_op("ChannelShuffle", xs, {}, 1, ops::kGecDomain); }, ErrorCode::kInvalidModel, "group 0");
  expect_error(
      [&] {
        run_op("ChannelShuffle", distinct_inputs({{1, 16, 2, 2}}), {ir::Attribute::Int("group", 2)}, 1,
               ops::kGecDomain, layouts(1, 1, ops::Layout::kNChw16c, 1));
      },
      ErrorCode::kInvalidModel, "plain or nhwc");
  expect_error([&] { run_op("ChannelShuffle", distinct_inputs({{1, 6, 2, 2}, {1, 6, 3, 2}}),
                            {ir::Attribute::Int("group", 2)}, 1, ops::kGecDomain); },
               ErrorCode::kInvalidModel, "differ outside dim 1");
}

TEST(ChannelMoves, SliceMatchesPlain) {
  const Tensor x = distinct_inputs({{2, 7, 5, 6}})[0];
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{0}, {3}, {1}, {1}},                       // ShuffleNet's halves
      {{3}, {7}, {1}, {1}},
      {{1, 4}, {6, 0}, {1, 2}, {2, -1}},          // channels by 2, rows backwards
      {{1, 0, 2}, {2, 7, 5}, {0, 1, 3}, {1, 3, 1}},
  };
  for (const Case& k : cases) {
    const auto n = static_cast<int64_t>(k.axes.size());
    std::vector<Tensor> in{x, make<int64_t>({n}, k.starts), make<int64_t>({n}, k.ends), make<int64_t>({n}, k.axes),
                           make<int64_t>({n}, k.steps)};
    const Tensor want = run_op("Slice", in)[0];
    in[0] = to_nhwc(x);
    const Tensor got = run_op("Slice", in, {}, 1, "", layouts(5, 1, ops::Layout::kNhwc, 1))[0];
    expect_same(to_nhwc(got, true), want, "Slice on axes " + std::to_string(k.axes[0]) + "..");
  }
}

TEST(ChannelMoves, SplitMatchesPlain) {
  const Tensor x = distinct_inputs({{2, 10, 4, 6}})[0];
  for (int64_t axis : {1, 2, 3, -3}) {
    const std::vector<int64_t> parts = axis == 3   ? std::vector<int64_t>{1, 5}
                                       : axis == 2 ? std::vector<int64_t>{3, 1}
                                                   : std::vector<int64_t>{3, 7};
    std::vector<Tensor> in{x, make<int64_t>({2}, parts)};
    const auto want = run_op("Split", in, {ir::Attribute::Int("axis", axis)}, 2);
    in[0] = to_nhwc(x);
    const auto got =
        run_op("Split", in, {ir::Attribute::Int("axis", axis)}, 2, "", layouts(2, 2, ops::Layout::kNhwc, 1));
    ASSERT_EQ(got.size(), 2u);
    for (size_t i = 0; i < 2; ++i) expect_same(to_nhwc(got[i], true), want[i], "Split axis " + std::to_string(axis));
  }
}

// nChw16c: channel ranges of whole 16-channel blocks, with any N, H, W
// slice; a range that is not is refused naming the node (a forged plan).
TEST(ChannelMoves, BlockedSliceAndSplitOfWholeBlocks) {
  const Tensor x = distinct_inputs({{2, 48, 5, 4}})[0];
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  for (const Case& k : {Case{{16}, {48}, {1}, {1}}, Case{{0, 1}, {16, 5}, {1, 2}, {1, 2}},
                        Case{{1, 16, 3}, {2, 48, 0}, {0, 1, 3}, {1, 1, -1}}}) {
    const auto n = static_cast<int64_t>(k.axes.size());
    std::vector<Tensor> in{x, make<int64_t>({n}, k.starts), make<int64_t>({n}, k.ends), make<int64_t>({n}, k.axes),
                           make<int64_t>({n}, k.steps)};
    const Tensor want = run_op("Slice", in)[0];
    if (want.shape()[1] % 16 != 0) continue;
    in[0] = to_blocked(x);
    const Tensor got = run_op("Slice", in, {}, 1, "", layouts(5, 1, ops::Layout::kNChw16c, 1))[0];
    expect_same(to_blocked(got, true), want, "blocked Slice from channel " + std::to_string(k.starts[0]));
  }
  std::vector<Tensor> bad{to_blocked(x), make<int64_t>({1}, {8}), make<int64_t>({1}, {40}), make<int64_t>({1}, {1})};
  expect_error([&] { run_op("Slice", bad, {}, 1, "", layouts(4, 1, ops::Layout::kNChw16c, 1)); },
               ErrorCode::kInvalidModel, "whole 16-channel blocks");
  for (int64_t axis : {1, 0, 2, 3, -3}) {  // x is [2, 48, 5, 4]
    const std::vector<int64_t> parts = axis == 0 ? std::vector<int64_t>{1, 1}
                                       : axis == 2 ? std::vector<int64_t>{2, 3}
                                       : axis == 3 ? std::vector<int64_t>{3, 1}
                                                   : std::vector<int64_t>{16, 32};
    std::vector<Tensor> in{x, make<int64_t>({2}, parts)};
    const auto want = run_op("Split", in, {ir::Attribute::Int("axis", axis)}, 2);
    in[0] = to_blocked(x);
    const auto got =
        run_op("Split", in, {ir::Attribute::Int("axis", axis)}, 2, "", layouts(2, 2, ops::Layout::kNChw16c, 1));
    for (size_t i = 0; i < 2; ++i)
      expect_same(to_blocked(got[i], true), want[i], "blocked Split axis " + std::to_string(axis));
  }
  expect_error(
      [&] {
        run_op("Split", {to_blocked(x), make<int64_t>({2}, {8, 40})}, {ir::Attribute::Int("axis", 1)}, 2, "",
               layouts(2, 2, ops::Layout::kNChw16c, 1));
      },
      ErrorCode::kInvalidModel, "whole 16-channel blocks");
}

}  // namespace
}  // namespace gec::passes
