// The schedule stage's layout assignment (schedule::assign_layouts, named
// layout_propagation for --disable-pass: nChw16c or nhwc between oneDNN
// convolutions) and the kernels that honour the layouts it chooses:
//  - pattern tests: which nodes read/write blocked values and where the
//    com.graphengine::Reorder nodes go (graph output, Flatten/Resize
//    consumers sharing one Reorder, an Add of a blocked and a plain input,
//    C not a multiple of 16 -> nhwc for its whole group, one layout per
//    group, Concat of nhwc inputs plain), each also run before/after the
//    pass with the CPU kernels: the outputs must not change;
//  - a small CNN (conv, relu, residual add, maxpool, concat, global average
//    pool, flatten, gemm; C = 16/32) through the -O3 pipeline with and
//    without the pass;
//  - the Reorder kernel against the nChw16c and nhwc index formulas, and
//    MaxPool and AveragePool with an nChw16c or nhwc input against the
//    plain one.
// Tolerance of blocked vs plain runs: |a - b| <= 1e-4 + 1e-4 * |b| (oneDNN's
// JIT convolutions sum in another order than its gemm one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "memory_test_util.h"
#include "ops/layout.h"
#include "ops/nn_shape.h"
#include "ops/tensor_ops.h"
#include "passes_util.h"
#include "schedule/schedule.h"

namespace gec::passes {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

/// Deterministic values in about [-1, 1), both signs.
Tensor wave(Shape s, int seed) {
  Tensor t(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.as<float>()[i] = 0.2f * static_cast<float>((i * 7 + seed * 5) % 11) - 1.f + 0.01f * static_cast<float>(i % 5);
  return t;
}

ir::TensorType f32(const Shape& s) { return ir::TensorType::of(DType::kFloat32, s); }

/// Conv k x k, stride 1, "same" padding, bias; output `name` + "_y".
ir::Value* conv(ir::Graph& g, ir::Value* x, int64_t oc, int64_t k, const std::string& name) {
  const Shape xs = x->type.static_shape();
  ir::Value* w = g.add_constant(name + "_W", wave({oc, xs[1], k, k}, static_cast<int>(oc + k)));
  ir::Value* b = g.add_constant(name + "_B", wave({oc}, 3));
  ir::Node* n = g.add_node("Conv", {x, w, b}, {name + "_y"}, name);
  n->set_attr(ir::Attribute::Ints("pads", {k / 2, k / 2, k / 2, k / 2}));
  n->output(0)->type = f32({xs[0], oc, xs[2], xs[3]});
  return n->output(0);
}

ir::Value* unary(ir::Graph& g, const std::string& op, ir::Value* x, const std::string& name) {
  ir::Node* n = g.add_node(op, {x}, {name + "_y"}, name);
  n->output(0)->type = x->type;
  return n->output(0);
}

ir::Value* binary(ir::Graph& g, const std::string& op, ir::Value* a, ir::Value* b, const std::string& name) {
  ir::Node* n = g.add_node(op, {a, b}, {name + "_y"}, name);
  n->output(0)->type = a->type;
  return n->output(0);
}

/// Concat of the 4-D `xs` on axis 1; output `name` + "_y".
ir::Node* concat(ir::Graph& g, const std::vector<ir::Value*>& xs, const std::string& name) {
  ir::Node* n = g.add_node("Concat", xs, {name + "_y"}, name);
  n->set_attr(ir::Attribute::Int("axis", 1));
  Shape s = xs[0]->type.static_shape();
  s[1] = 0;
  for (const ir::Value* x : xs) s[1] += x->type.static_shape()[1];
  n->output(0)->type = f32(s);
  return n;
}

/// `op` (GlobalAveragePool or GlobalMaxPool) of the 4-D `x`: [N,C,1,1],
/// output `name` + "_y".
ir::Node* global_pool(ir::Graph& g, const std::string& op, ir::Value* x, const std::string& name) {
  ir::Node* n = g.add_node(op, {x}, {name + "_y"}, name);
  const Shape s = x->type.static_shape();
  n->output(0)->type = f32({s[0], s[1], 1, 1});
  return n;
}

/// Slice of `x` from `from` to `to` on `axis` (constant starts, ends,
/// axes); output `name` + "_y".
ir::Node* slice(ir::Graph& g, ir::Value* x, int64_t axis, int64_t from, int64_t to, const std::string& name) {
  ir::Node* n = g.add_node("Slice",
                           {x, g.add_constant(name + "_s", make<int64_t>({1}, {from})),
                            g.add_constant(name + "_e", make<int64_t>({1}, {to})),
                            g.add_constant(name + "_a", make<int64_t>({1}, {axis}))},
                           {name + "_y"}, name);
  Shape s = x->type.static_shape();
  s[static_cast<size_t>(axis)] = to - from;
  n->output(0)->type = f32(s);
  return n;
}

/// com.graphengine::Reorder of `in` from layout `from` to `to` (layout
/// names); output `name` + "_y".
ir::Value* reorder_node(ir::Graph& g, ir::Value* in, const std::string& from, const std::string& to,
                        const std::string& name) {
  ir::Node* r = g.add_node(ops::kReorderOp, {in}, {name + "_y"}, name, ops::kGecDomain);
  r->set_attr(ir::Attribute::String("from", from));
  r->set_attr(ir::Attribute::String("to", to));
  r->output(0)->type = in->type;
  return r->output(0);
}
/// Transpose by `perm` of `in` (4-D); output `name` + "_y".
ir::Node* transpose(ir::Graph& g, ir::Value* in, const std::vector<int64_t>& perm, const std::string& name) {
  ir::Node* n = g.add_node("Transpose", {in}, {name + "_y"}, name);
  n->set_attr(ir::Attribute::Ints("perm", perm));
  const Shape s = in->type.static_shape();
  Shape o;
  for (int64_t a : perm) o.push_back(s[static_cast<size_t>(a)]);
  n->output(0)->type = f32(o);
  return n;
}

/// Split of the 4-D `x` into two equal halves on `axis`; outputs `name` +
/// "_0" and "_1".
ir::Node* halves(ir::Graph& g, ir::Value* x, int64_t axis, const std::string& name) {
  ir::Node* n = g.add_node("Split", {x}, {name + "_0", name + "_1"}, name);
  n->set_attr(ir::Attribute::Int("axis", axis));
  Shape s = x->type.static_shape();
  s[static_cast<size_t>(axis)] /= 2;
  for (ir::Value* o : n->outputs()) o->type = f32(s);
  return n;
}

ir::Node* node(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name == name) return n.get();
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

std::vector<ir::Node*> reorders(const ir::Graph& g) {
  std::vector<ir::Node*> r;
  for (const auto& n : g.nodes())
    if (n->op_type == ops::kReorderOp && n->domain == ops::kGecDomain) r.push_back(n.get());
  return r;
}

/// The Reorders of values computed in `g` (not of a graph input, which a
/// first convolution into nhwc reads reordered).
std::vector<ir::Node*> inner_reorders(const ir::Graph& g) {
  std::vector<ir::Node*> r;
  for (ir::Node* n : reorders(g))
    if (n->input(0)->producer()) r.push_back(n);
  return r;
}

using schedule::LayoutAssignment;
using kernels::LayoutQuery;

std::vector<std::string> names(const std::vector<ops::Layout>& l) {
  std::vector<std::string> r;
  for (ops::Layout x : l) r.push_back(ops::layout_name(x));
  return r;
}
/// The layout names node `n` reads / writes under `a` (empty: all plain).
std::vector<std::string> in_layouts(const LayoutAssignment& a, const ir::Node* n) {
  auto it = a.nodes.find(n);
  return it == a.nodes.end() ? std::vector<std::string>{} : names(it->second.in);
}
std::vector<std::string> out_layouts(const LayoutAssignment& a, const ir::Node* n) {
  auto it = a.nodes.find(n);
  return it == a.nodes.end() ? std::vector<std::string>{} : names(it->second.out);
}
bool has_layouts(const LayoutAssignment& a, const ir::Node* n) { return a.nodes.count(n) > 0; }
bool output_blocked(const LayoutAssignment& a, const ir::Node* n) {
  auto it = a.nodes.find(n);
  return it != a.nodes.end() && !it->second.out.empty() && it->second.out[0] == ops::Layout::kNChw16c;
}

const std::string B = ops::kBlockedLayout, P = ops::kPlainLayout, L = ops::kChannelsLastLayout;

void expect_near_all(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    for (int64_t j = 0; j < got[i].numel(); ++j) {
      const float a = got[i].as<float>()[j], b = want[i].as<float>()[j];
      ASSERT_LE(std::fabs(a - b), 1e-4f + 1e-4f * std::fabs(b)) << "output " << i << " element " << j;
    }
  }
}

/// The pattern tests decide layouts as on a CPU where oneDNN has a JIT
/// kernel for every blocked conv (AVX-512); the real query is tested below.
std::string jit_everywhere(const ir::Node&, ops::Layout, ops::Layout) { return "jit:avx512_core"; }
std::string ref_everywhere(const ir::Node&, ops::Layout, ops::Layout) { return "ref:any"; }
/// As oneDNN 2.6 answers on AVX-512: JIT for one layout on both sides or a
/// plain src into nChw16c, ref:any for a plain src into nhwc or mixed
/// non-plain layouts.
std::string like_avx512(const ir::Node&, ops::Layout src, ops::Layout dst) {
  if (src == dst || (src == ops::Layout::kPlain && dst == ops::Layout::kNChw16c)) return "jit:avx512_core";
  return "ref:any";
}

/// Assigns layouts in `g`; checks it verifies and keeps every output when
/// run with those layouts.
LayoutAssignment run_pass_and_compare(ir::Graph& g, const std::map<std::string, Tensor>& feeds,
                                      LayoutQuery query = jit_everywhere) {
  const auto before = run_graph(g, feeds);
  LayoutAssignment a = schedule::assign_layouts(g, query);
  g.verify();
  expect_near_all(run_graph(g, feeds, &a), before);
  return a;
}
int64_t changes(const LayoutAssignment& a) { return a.blocked_values + a.reorders; }

// ---- pattern tests ----------------------------------------------------------

// x -> conv1 (3->16) -> relu1 -> conv2 (16->32) -> relu2 = graph output:
// the first conv reads plain and writes blocked; the graph output is plain,
// so one Reorder sits between conv2 and relu2.
TEST(LayoutPropagation, ChainBlockedUntilGraphOutput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 8, 8});
  ir::Value* c2 = conv(g, unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1"), 32, 3, "conv2");
  g.outputs().push_back(unary(g, "Relu", c2, "relu2"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 8, 8}, 1)}});
  EXPECT_EQ(a.blocked_values, 3);
  EXPECT_EQ(a.reorders, 1);
  EXPECT_EQ(in_layouts(a, node(g, "conv1")), (std::vector<std::string>{P, P, P}));
  EXPECT_EQ(out_layouts(a, node(g, "conv1")), (std::vector<std::string>{B}));
  EXPECT_EQ(out_layouts(a, node(g, "relu1")), (std::vector<std::string>{B}));
  EXPECT_EQ(in_layouts(a, node(g, "conv2")), (std::vector<std::string>{B, P, P}));
  EXPECT_EQ(out_layouts(a, node(g, "conv2")), (std::vector<std::string>{B}));
  EXPECT_FALSE(has_layouts(a, node(g, "relu2")));
  auto r = reorders(g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->input(0), c2);
  EXPECT_EQ(r[0]->get_string("from", ""), B);
  EXPECT_EQ(r[0]->get_string("to", ""), P);
  EXPECT_EQ(node(g, "relu2")->input(0), r[0]->output(0));
  EXPECT_EQ(g.outputs()[0]->name(), "relu2_y");
}

// The same chain where oneDNN would run the blocked convs only with its
// reference implementation (an AVX2 CPU, or a large dilation): all plain.
TEST(LayoutPropagation, ReferenceImplementationKeepsConvsPlain) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 8, 8});
  ir::Value* c2 = conv(g, unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1"), 32, 3, "conv2");
  g.outputs().push_back(unary(g, "Relu", c2, "relu2"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 8, 8}, 1)}}, ref_everywhere);
  EXPECT_EQ(changes(a), 0);
  for (const auto& n : g.nodes()) EXPECT_FALSE(has_layouts(a, n.get())) << n->name;
}

// A group with one small odd-channel conv (a 24-channel 1x1 pair, as a
// segmentation head's class count) and large 3x3 convolutions: without
// Winograd in the balance the odd channels make the whole group nhwc; with
// it (the compiler's kernels::choose_variant, real oneDNN queries) the
// group keeps nChw16c on AVX-512, its 3x3 convs run the winograd variant,
// and the 24-channel values run plain between Reorders. Outputs equal the
// plain graph's either way.
TEST(LayoutPropagation, WinogradGainsKeepAGroupBlockedDespiteOddChannels) {
  const auto build = [](ir::Graph& g) {
    ir::Value* x = g.add_value("x", f32({1, 64, 28, 28}));
    g.inputs().push_back(x);
    ir::Value* a = unary(g, "Relu", conv(g, x, 128, 3, "conv1"), "relu1");
    ir::Value* b = unary(g, "Relu", conv(g, a, 128, 3, "conv2"), "relu2");
    ir::Value* c = unary(g, "Relu", conv(g, b, 24, 1, "conv3"), "relu3");
    g.outputs().push_back(conv(g, c, 32, 1, "conv4"));
  };
  const std::map<std::string, Tensor> feeds{{"x", wave({1, 64, 28, 28}, 5)}};
  ir::Graph plain, direct, wino;
  build(plain);
  build(direct);
  build(wino);
  const auto want = run_graph(plain, feeds);
  const LayoutAssignment ad = schedule::assign_layouts(direct);
  const LayoutAssignment aw = schedule::assign_layouts(wino, {}, kernels::choose_variant);
  direct.verify();
  wino.verify();
  EXPECT_EQ(out_layouts(ad, node(direct, "conv2")), std::vector<std::string>{L});
  const bool avx512 = gec::testing::cpu_has_avx512();
  EXPECT_EQ(out_layouts(aw, node(wino, "conv2")), std::vector<std::string>{avx512 ? B : L});
  const schedule::ExecutionPlan plan = schedule::make_execution_plan(wino, aw, nullptr, kernels::choose_variant);
  int winograd_steps = 0;
  for (const schedule::Step& st : plan.graphs[0].steps) winograd_steps += st.variant == "winograd";
  EXPECT_EQ(winograd_steps, avx512 ? 2 : 0);  // conv1 (its input reordered in) and conv2
  // Sums of 1152 products of the wave values reach the thousands: compare
  // against the largest output.
  float largest = 0;
  for (int64_t j = 0; j < want[0].numel(); ++j) largest = std::max(largest, std::fabs(want[0].as<float>()[j]));
  for (const auto& got : {run_graph(direct, feeds, &ad), run_graph(wino, feeds, &aw)}) {
    ASSERT_EQ(got[0].shape(), want[0].shape());
    for (int64_t j = 0; j < got[0].numel(); ++j)
      ASSERT_LE(std::fabs(got[0].as<float>()[j] - want[0].as<float>()[j]), 1e-5f * largest) << j;
  }
}

// A 3x3 conv whose output is a graph output stays plain (graph outputs are
// never held blocked), so it can never run Winograd: it must not weigh
// against the group's odd channels (24 here), which stays nhwc.
TEST(LayoutPropagation, AWinogradConvIntoAGraphOutputDoesNotKeepAGroupBlocked) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", f32({1, 64, 28, 28}));
  g.inputs().push_back(x);
  ir::Value* a = unary(g, "Relu", conv(g, x, 24, 1, "conv1"), "relu1");
  ir::Value* b = unary(g, "Relu", conv(g, a, 128, 1, "conv2"), "relu2");
  g.outputs().push_back(conv(g, b, 128, 3, "conv3"));
  const LayoutAssignment la = schedule::assign_layouts(g, {}, kernels::choose_variant);
  g.verify();
  EXPECT_EQ(out_layouts(la, node(g, "conv2")), std::vector<std::string>{L});
}

// The real query (oneDNN on this CPU): a conv is planned blocked only where
// oneDNN has a non-reference implementation for it, including a dilated conv
// that oneDNN 2.6 runs blocked only with ref:any.
TEST(LayoutPropagation, RealQueryNeverPlansAReferenceConvolution) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 32, 14, 14});
  ir::Value* c1 = conv(g, x, 32, 3, "conv1");
  ir::Value* w = g.add_constant("dil_W", wave({32, 32, 3, 3}, 4));
  ir::Node* dil = g.add_node("Conv", {unary(g, "Relu", c1, "relu1"), w}, {"dil_y"}, "dilated");
  dil->set_attr(ir::Attribute::Ints("dilations", {24, 24}));
  dil->set_attr(ir::Attribute::Ints("pads", {24, 24, 24, 24}));
  dil->output(0)->type = f32({1, 32, 14, 14});
  g.outputs().push_back(unary(g, "Relu", conv(g, dil->output(0), 32, 3, "conv3"), "relu3"));
  const LayoutAssignment a = schedule::assign_layouts(g);
  g.verify();
  int convs = 0;
  for (const auto& n : g.nodes()) {
    if (n->op_type != "Conv") continue;
    ++convs;
    const ops::Layout in = has_layouts(a, n.get()) ? a.nodes.at(n.get()).in[0] : ops::Layout::kPlain;
    const ops::Layout out = has_layouts(a, n.get()) ? a.nodes.at(n.get()).out[0] : ops::Layout::kPlain;
    const std::string impl = kernels::implementation_for_layout(*n, in, out);
    ASSERT_FALSE(impl.empty()) << n->name;
    EXPECT_FALSE(kernels::is_reference_implementation(impl)) << n->name << " planned as " << impl;
  }
  EXPECT_EQ(convs, 3);
}

// A blocked value read by a conv, a Flatten and a Resize: the two plain
// readers share one Reorder; the global pool's [1,32,1,1] output needs none.
TEST(LayoutPropagation, PlainConsumersShareOneReorder) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 4, 4});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
  ir::Node* gap = global_pool(g, "GlobalAveragePool", conv(g, r1, 32, 1, "conv2"), "gap");
  ir::Node* fl2 = g.add_node("Flatten", {gap->output(0)}, {"flat2"}, "flatten2");
  fl2->output(0)->type = f32({1, 32});
  ir::Node* fl = g.add_node("Flatten", {r1}, {"flat"}, "flatten");
  fl->output(0)->type = f32({1, 256});
  ir::Node* rs = g.add_node("Resize", {r1, nullptr, g.add_constant("scales", make<float>({4}, {1, 1, 2, 2}))},
                            {"up"}, "resize");
  rs->output(0)->type = f32({1, 16, 8, 8});
  g.outputs() = {fl2->output(0), fl->output(0), rs->output(0)};
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 4, 4}, 2)}});
  auto r = reorders(g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->input(0), r1);
  EXPECT_EQ(fl->input(0), r[0]->output(0));
  EXPECT_EQ(rs->input(0), r[0]->output(0));
  EXPECT_EQ(node(g, "conv2")->input(0), r1);
  EXPECT_EQ(in_layouts(a, gap), (std::vector<std::string>{B}));
  EXPECT_EQ(fl2->input(0), gap->output(0));  // H = W = 1: same bytes
}

// Add(blocked, plain graph input) runs plain: the blocked operand is
// reordered, the Add's output stays plain (its reader conv3 is plain: its
// src would need a reorder and its output is a graph output).
TEST(LayoutPropagation, MixedAddReadsPlain) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* z = input(g, "z", {1, 16, 6, 6});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
  ir::Value* sum = binary(g, "Add", r1, z, "add");
  ir::Node* gap = global_pool(g, "GlobalMaxPool", conv(g, r1, 16, 3, "conv2"), "gap");
  g.outputs() = {conv(g, sum, 16, 1, "conv3"), gap->output(0)};
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 3)}, {"z", wave({1, 16, 6, 6}, 4)}});
  auto r = reorders(g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->input(0), r1);
  ir::Node* add = node(g, "add");
  EXPECT_EQ(add->input(0), r[0]->output(0));
  EXPECT_FALSE(has_layouts(a, add));
  EXPECT_FALSE(has_layouts(a, node(g, "conv3")));
  EXPECT_EQ(out_layouts(a, node(g, "conv2")), (std::vector<std::string>{B}));
}

// 24 channels (not a multiple of 16) make the whole chain nhwc, the
// 32-channel values in it too (one layout per connected group): x is
// reordered to nhwc for the first conv (a plain src into an nhwc dst has
// only a reference kernel), the last conv's output back to plain for the
// graph output's Relu.
TEST(LayoutPropagation, OddChannelCountsRunInNhwc) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1");
  ir::Value* r2 = unary(g, "Relu", conv(g, r1, 32, 3, "conv2"), "relu2");
  ir::Value* c3 = conv(g, r2, 24, 1, "conv3");
  g.outputs().push_back(unary(g, "Relu", c3, "relu3"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 5)}}, like_avx512);
  EXPECT_EQ(a.blocked_values, 5);
  EXPECT_EQ(a.channels_last_values, 5);
  EXPECT_EQ(in_layouts(a, node(g, "conv1")), (std::vector<std::string>{L, P, P}));
  for (const char* n : {"conv1", "relu1", "conv2", "relu2", "conv3"})
    EXPECT_EQ(out_layouts(a, node(g, n)), (std::vector<std::string>{L})) << n;
  EXPECT_EQ(in_layouts(a, node(g, "conv2"))[0], L);
  EXPECT_FALSE(has_layouts(a, node(g, "relu3")));
  auto r = reorders(g);
  ASSERT_EQ(r.size(), 2u);
  for (ir::Node* re : r) {
    if (re->input(0) == x) {
      EXPECT_EQ(re->get_string("to", ""), L);
      EXPECT_EQ(node(g, "conv1")->input(0), re->output(0));
    } else {
      EXPECT_EQ(re->input(0), c3);
      EXPECT_EQ(re->get_string("from", ""), L);
      EXPECT_EQ(re->get_string("to", ""), P);
    }
  }
}

/// Grouped conv 3x3 (pads 1) of `x` into `oc` channels in `group` groups.
ir::Value* grouped_conv(ir::Graph& g, ir::Value* x, int64_t oc, int64_t group, const std::string& name) {
  const Shape xs = x->type.static_shape();
  ir::Value* w = g.add_constant(name + "_W", wave({oc, xs[1] / group, 3, 3}, static_cast<int>(oc + group)));
  ir::Node* n = g.add_node("Conv", {x, w}, {name + "_y"}, name);
  n->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
  n->set_attr(ir::Attribute::Int("group", group));
  n->output(0)->type = f32({xs[0], oc, xs[2], xs[3]});
  return n->output(0);
}

// ResNeXt's grouped convs split 16-channel blocks (8 groups of 4 of 32
// channels): nChw16c has no fast kernel for them, so their group is nhwc
// although every channel count is a multiple of 16. A depthwise conv in the
// same place keeps nChw16c.
TEST(LayoutPropagation, GroupsThatSplitABlockRunInNhwc) {
  for (int64_t group : {8, 32}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 6, 6});
    ir::Value* r1 = unary(g, "Relu", conv(g, x, 32, 3, "conv1"), "relu1");
    ir::Value* r2 = unary(g, "Relu", grouped_conv(g, r1, 32, group, "gconv"), "relu2");
    ir::Value* c3 = conv(g, r2, 32, 1, "conv3");
    g.outputs().push_back(unary(g, "Relu", c3, "relu3"));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 5)}}, like_avx512);
    const std::string want = group == 8 ? L : B;
    for (const char* n : {"conv1", "relu1", "gconv", "relu2", "conv3"})
      EXPECT_EQ(out_layouts(a, node(g, n)), (std::vector<std::string>{want})) << n << ", group " << group;
    EXPECT_EQ(in_layouts(a, node(g, "gconv"))[0], want) << "group " << group;
  }
}

// The same grouped conv in a group that also holds an in-place Concat: the
// grouped conv counts like an odd-channel value, so the group is nhwc and
// the conv does not fall back to plain gemm between Reorders.
TEST(LayoutPropagation, GroupsThatSplitABlockOutweighASmallConcat) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 32, 3, "conv1"), "relu1");
  ir::Value* gc = grouped_conv(g, r1, 32, 8, "gconv");
  ir::Node* cat = concat(g, {gc, conv(g, r1, 16, 1, "branch")}, "concat");
  g.outputs().push_back(global_pool(g, "GlobalMaxPool", conv(g, cat->output(0), 16, 1, "conv3"), "gap")->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 5)}}, like_avx512);
  EXPECT_EQ(out_layouts(a, node(g, "gconv")), (std::vector<std::string>{L}));
  EXPECT_EQ(in_layouts(a, node(g, "gconv"))[0], L);
}

// Groups apart (a plain-only DepthToSpace between them) get their own
// layouts: 16/32 channels before it nChw16c, 8/24 channels after it nhwc,
// and the global pool reads nhwc.
TEST(LayoutPropagation, EachGroupGetsItsOwnLayout) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 4, 4});
  ir::Value* c2 = conv(g, unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1"), 32, 3, "conv2");
  ir::Node* d2s = g.add_node("DepthToSpace", {c2}, {"up"}, "d2s");
  d2s->set_attr(ir::Attribute::Int("blocksize", 2));
  d2s->output(0)->type = f32({1, 8, 8, 8});
  ir::Value* c4 = conv(g, unary(g, "Relu", conv(g, d2s->output(0), 24, 3, "conv3"), "relu3"), 24, 1, "conv4");
  ir::Node* gap = global_pool(g, "GlobalAveragePool", c4, "gap");
  g.outputs().push_back(gap->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 4, 4}, 7)}}, like_avx512);
  EXPECT_EQ(out_layouts(a, node(g, "conv1")), (std::vector<std::string>{B}));
  EXPECT_EQ(out_layouts(a, node(g, "conv2")), (std::vector<std::string>{B}));
  EXPECT_EQ(in_layouts(a, node(g, "conv3"))[0], L);
  EXPECT_EQ(out_layouts(a, node(g, "conv4")), (std::vector<std::string>{L}));
  EXPECT_EQ(in_layouts(a, gap), (std::vector<std::string>{L}));
  EXPECT_FALSE(has_layouts(a, d2s));
  EXPECT_EQ(reorders(g).size(), 2u);  // conv2's output to plain, the DepthToSpace's to nhwc
}

/// Resize of `x` [N,C,H,W] to [N,C,2H,2W] by constant scales; output `name` + "_y".
ir::Node* upsample(ir::Graph& g, ir::Value* x, const std::string& mode, const std::string& name) {
  const Shape s = x->type.static_shape();
  ir::Node* n = g.add_node("Resize", {x, nullptr, g.add_constant(name + "_scales", make<float>({4}, {1, 1, 2, 2}))},
                           {name + "_y"}, name);
  n->set_attr(ir::Attribute::String("mode", mode));
  n->output(0)->type = f32({s[0], s[1], 2 * s[2], 2 * s[3]});
  return n;
}

// A Resize of H and W between convolutions (an FPN neck's upsampling) runs
// in their group's layout, nChw16c (32 channels) or nhwc (24), nearest and
// linear, batch 1 and 2: no Reorder but the input's (into nhwc), and the
// outputs of the plain graph (the real kernels, so the pixel loops of both
// layouts are run).
TEST(LayoutPropagation, ResizeBetweenConvolutionsKeepsTheirLayout) {
  for (int64_t c : {32, 24})
    for (const char* mode : {"nearest", "linear"})
      for (int64_t n : {1, 2}) {
        SCOPED_TRACE(std::to_string(c) + " channels, " + mode + ", batch " + std::to_string(n));
        ir::Graph g;
        ir::Value* x = input(g, "x", {n, 3, 5, 6});
        ir::Node* rs = upsample(g, unary(g, "Relu", conv(g, x, c, 3, "conv1"), "relu1"), mode, "resize");
        ir::Node* gap = global_pool(g, "GlobalMaxPool", conv(g, rs->output(0), c, 3, "conv2"), "gap");
        g.outputs().push_back(gap->output(0));
        const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({n, 3, 5, 6}, 4)}}, like_avx512);
        const std::string want = c == 24 ? L : B;
        EXPECT_EQ(in_layouts(a, rs), (std::vector<std::string>{want, P, P}));
        EXPECT_EQ(out_layouts(a, rs), (std::vector<std::string>{want}));
        EXPECT_TRUE(inner_reorders(g).empty());
      }
}

// A Resize whose output only plain consumers read (a graph output) runs
// plain: the one Reorder moves its 5x6 input, not its 10x12 output.
TEST(LayoutPropagation, ResizeIntoPlainConsumersReordersItsInput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 5, 6});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1");
  g.outputs().push_back(global_pool(g, "GlobalMaxPool", conv(g, r1, 24, 3, "conv2"), "gap")->output(0));
  ir::Node* rs = upsample(g, r1, "nearest", "resize");
  g.outputs().push_back(rs->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 5, 6}, 4)}}, like_avx512);
  EXPECT_FALSE(has_layouts(a, rs));
  const auto r = inner_reorders(g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->input(0), r1);
  EXPECT_EQ(rs->input(0), r[0]->output(0));
}

// A Resize the target has no non-plain kernel for (here: scales from a run-
// time input) stays plain and does not join its input's and output's
// groups: 32 channels before it nChw16c, 24 after it nhwc (the real query,
// on a CPU with blocked JIT convolutions).
TEST(LayoutPropagation, ResizeWithRunTimeScalesStaysPlain) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 5, 6});
  ir::Value* scales = input(g, "scales", {4});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 32, 3, "conv1"), "relu1");
  g.outputs().push_back(global_pool(g, "GlobalMaxPool", conv(g, r1, 32, 3, "conv1b"), "gap1")->output(0));
  ir::Node* rs = g.add_node("Resize", {r1, nullptr, scales}, {"up"}, "resize");
  rs->output(0)->type = f32({1, 32, 10, 12});
  ir::Value* c3 = conv(g, unary(g, "Relu", conv(g, rs->output(0), 24, 3, "conv2"), "relu2"), 24, 1, "conv3");
  g.outputs().push_back(global_pool(g, "GlobalMaxPool", c3, "gap2")->output(0));
  const LayoutAssignment a = schedule::assign_layouts(g, kernels::implementation_for_layout);
  EXPECT_FALSE(has_layouts(a, rs));
  if (!kernels::is_reference_implementation(kernels::implementation_for_layout(
          *node(g, "conv1b"), ops::Layout::kNChw16c, ops::Layout::kNChw16c))) {
    // conv1's group: nChw16c, or nhwc where oneDNN's brgemm kernels pay.
    EXPECT_TRUE(has_layouts(a, node(g, "conv1")));
    EXPECT_NE(out_layouts(a, node(g, "conv1")), (std::vector<std::string>{P}));
    EXPECT_EQ(out_layouts(a, node(g, "conv3")), (std::vector<std::string>{L}));
  }
}

/// x [n,3,5,5] -> conv1 (24) -> relu1 -> {conv2 (24), conv3 (8)} -> concat
/// (32 channels) -> conv4 (`out_channels`) -> global max pool = graph
/// output. Returns the Concat; its layouts are then assigned and the graph
/// run before and after (run_pass_and_compare) into `a`.
ir::Node* concat_of_nhwc_convs(ir::Graph& g, int64_t n, int64_t out_channels, LayoutAssignment& a) {
  ir::Value* x = input(g, "x", {n, 3, 5, 5});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1");
  ir::Node* cat = concat(g, {conv(g, r1, 24, 3, "conv2"), conv(g, r1, 8, 1, "conv3")}, "concat");
  ir::Node* gap = global_pool(g, "GlobalMaxPool", conv(g, cat->output(0), out_channels, 3, "conv4"), "gap");
  g.outputs().push_back(gap->output(0));
  a = run_pass_and_compare(g, {{"x", wave({n, 3, 5, 5}, 8)}}, like_avx512);
  return cat;
}

// A Concat over channels in an nhwc group whose output a convolution reads
// runs nhwc, copying each pixel's channels (24 + 8 -> 32 -> 24 channels):
// no Reorder but the input's, and it is listed for the planner as never in
// place.
TEST(LayoutPropagation, ConcatInAnNhwcGroupCopiesPixels) {
  ir::Graph g;
  LayoutAssignment a;
  ir::Node* cat = concat_of_nhwc_convs(g, 2, 24, a);
  EXPECT_EQ(in_layouts(a, cat), (std::vector<std::string>{L, L}));
  EXPECT_EQ(out_layouts(a, cat), (std::vector<std::string>{L}));
  EXPECT_TRUE(inner_reorders(g).empty());
  EXPECT_EQ(a.copied_concats.count(cat), 1u);
}

// A Concat of nhwc inputs whose 32-channel output joins a group of its own
// (nChw16c, the consuming 16-channel conv's) stays plain: one Concat has
// one layout, and the nChw16c one needs nChw16c inputs.
TEST(LayoutPropagation, ConcatOfNhwcInputsReadsPlain) {
  ir::Graph g;
  LayoutAssignment a;
  ir::Node* cat = concat_of_nhwc_convs(g, 1, 16, a);
  EXPECT_FALSE(has_layouts(a, cat));
  EXPECT_EQ(out_layouts(a, node(g, "conv2")), (std::vector<std::string>{L}));
  EXPECT_EQ(out_layouts(a, node(g, "conv4")), (std::vector<std::string>{B}));
}

// A first conv whose output only a Flatten reads gains nothing: left plain.
TEST(LayoutPropagation, NoBlockedOutputWithoutABenefit) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 5, 5});
  ir::Node* fl = g.add_node("Flatten", {conv(g, x, 16, 3, "conv1")}, {"flat"}, "flatten");
  fl->output(0)->type = f32({1, 400});
  g.outputs().push_back(fl->output(0));
  EXPECT_EQ(changes(run_pass_and_compare(g, {{"x", wave({1, 3, 5, 5}, 6)}})), 0);
  EXPECT_TRUE(reorders(g).empty());
}

// Squeeze-and-excitation: x * sigmoid(conv(gap(x))) and a per-channel
// constant bias [C,1,1] run in the group's layout (the [1,C,1,1] and
// [C,1,1] operands read as vectors over the blocked bytes), no Reorder
// around them; for 24 channels (nhwc) and 32 (nChw16c).
void expect_squeeze_excitation_stays_blocked(int64_t c, const std::string& layout, int64_t n = 1) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {n, 3, 6, 6});
  ir::Value* r = unary(g, "Relu", conv(g, unary(g, "Relu", conv(g, x, c, 3, "conv1"), "relu1"), c, 3, "conv2"), "relu2");
  ir::Node* gap = global_pool(g, "GlobalAveragePool", r, "gap");
  ir::Value* sc = unary(g, "Sigmoid", conv(g, gap->output(0), c, 1, "conv3"), "sigmoid");
  ir::Value* m = binary(g, "Mul", r, sc, "mul");
  ir::Node* add = g.add_node("Add", {m, g.add_constant("bias", wave({c, 1, 1}, 3))}, {"add_y"}, "add");
  add->output(0)->type = m->type;
  ir::Node* gap2 = global_pool(g, "GlobalMaxPool", conv(g, add->output(0), c, 3, "conv4"), "gap2");
  g.outputs().push_back(gap2->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({n, 3, 6, 6}, 10)}}, like_avx512);
  EXPECT_EQ(out_layouts(a, node(g, "mul")), (std::vector<std::string>{layout}));
  EXPECT_EQ(out_layouts(a, add), (std::vector<std::string>{layout}));
  EXPECT_EQ(in_layouts(a, add), (std::vector<std::string>{layout, P}));
  for (ir::Node* re : reorders(g)) EXPECT_EQ(re->input(0), x) << "only the input may need a Reorder";
}
TEST(LayoutPropagation, SqueezeExcitationStaysNhwc) { expect_squeeze_excitation_stays_blocked(24, L); }
TEST(LayoutPropagation, SqueezeExcitationStaysNChw16c) { expect_squeeze_excitation_stays_blocked(32, B); }
// Batch 2: the scale is [2,C,1,1] (one vector per image).
TEST(LayoutPropagation, SqueezeExcitationBatch2) {
  expect_squeeze_excitation_stays_blocked(24, L, 2);
  expect_squeeze_excitation_stays_blocked(32, B, 2);
}

// A group holding a channel Concat that nChw16c runs in place stays
// nChw16c when the Concat moves at least as many elements as the group's
// odd-channel values hold: the 24-channel conv then stays plain. With a
// smaller Concat (two branches, 32 x 5 x 5 against two 24 x 5 x 5 maps)
// the group is nhwc and the Concat copies.
TEST(LayoutPropagation, GroupWithInPlaceConcatStaysNChw16c) {
  for (int branches : {4, 2}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 5, 5});
    ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
    std::vector<ir::Value*> ins;
    for (int b = 0; b < branches; ++b) ins.push_back(conv(g, r1, 16, b % 2 ? 1 : 3, "branch" + std::to_string(b)));
    ir::Node* cat = concat(g, ins, "concat");
    ir::Value* c5 = conv(g, unary(g, "Relu", conv(g, cat->output(0), 24, 3, "conv4"), "relu4"), 16, 3, "conv5");
    ir::Node* gap = global_pool(g, "GlobalMaxPool", c5, "gap");
    g.outputs().push_back(gap->output(0));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 5, 5}, 9)}}, like_avx512);
    SCOPED_TRACE(std::to_string(branches) + " branches");
    if (branches == 4) {
      EXPECT_EQ(a.channels_last_values, 0);
      EXPECT_EQ(out_layouts(a, cat), (std::vector<std::string>{B}));
      EXPECT_FALSE(has_layouts(a, node(g, "conv4")));
    } else {
      EXPECT_GT(a.channels_last_values, 0);
      EXPECT_EQ(out_layouts(a, node(g, "conv4")), (std::vector<std::string>{L}));
    }
  }
}

// GoogLeNet's Inception-4 blocks: a branch behind a 24-channel conv comes
// out plain (its conv has no nChw16c src). With three blocked 16-channel
// branches beside it the Concat stays blocked and in place: that branch is
// reordered in, and nothing else. When the plain input holds more elements
// than the blocked ones (32 channels against 16), the Concat runs plain.
TEST(LayoutPropagation, ConcatReordersASmallPlainInputIn) {
  for (int blocked_branches : {3, 1}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 5, 5});
    ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
    std::vector<ir::Value*> ins;
    for (int b = 0; b < blocked_branches; ++b) ins.push_back(conv(g, r1, 16, b % 2 ? 1 : 3, "branch" + std::to_string(b)));
    const int64_t plain_channels = blocked_branches == 3 ? 16 : 32;
    ins.push_back(conv(g, conv(g, r1, 24, 1, "narrow"), plain_channels, 3, "widen"));
    ir::Node* cat = concat(g, ins, "concat");
    ir::Node* gap = global_pool(g, "GlobalMaxPool", conv(g, cat->output(0), 16, 3, "conv5"), "gap");
    g.outputs().push_back(gap->output(0));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 5, 5}, 9)}}, like_avx512);
    SCOPED_TRACE(std::to_string(blocked_branches) + " blocked branches");
    EXPECT_EQ(a.channels_last_values, 0);
    EXPECT_FALSE(has_layouts(a, node(g, "widen")));
    if (blocked_branches == 3) {
      EXPECT_EQ(out_layouts(a, cat), (std::vector<std::string>{B}));
      EXPECT_EQ(in_layouts(a, cat), (std::vector<std::string>{B, B, B, B}));
      int into_concat = 0;
      for (const ir::Node* r : reorders(g))
        for (const auto& [user, idx] : r->output(0)->uses()) into_concat += user == cat;
      EXPECT_EQ(into_concat, 1);  // widen's output only
      EXPECT_EQ(a.reorders, 2);   // and relu1 -> plain for narrow
    } else {
      EXPECT_FALSE(has_layouts(a, cat));
    }
  }
}

// A depthwise 3x3 conv on a graph input whose output only a Flatten reads:
// it gains by itself (oneDNN's plain depthwise is im2col + GEMM), so it runs
// blocked between two Reorders; without the depthwise rule it would be
// ruled out (no consumer benefits) and stay plain.
TEST(LayoutPropagation, DepthwiseStaysBlockedBetweenReorders) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 32, 6, 6});
  ir::Value* w = g.add_constant("dw_W", wave({32, 1, 3, 3}, 4));
  ir::Node* dw = g.add_node("Conv", {x, w}, {"dw_y"}, "dw");
  dw->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
  dw->set_attr(ir::Attribute::Int("group", 32));
  dw->output(0)->type = f32({1, 32, 6, 6});
  ir::Node* fl = g.add_node("Flatten", {dw->output(0)}, {"flat"}, "flatten");
  fl->output(0)->type = f32({1, 32 * 36});
  g.outputs().push_back(fl->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 32, 6, 6}, 2)}});
  EXPECT_TRUE(output_blocked(a, node(g, "dw")));
  EXPECT_EQ(in_layouts(a, node(g, "dw"))[0], B);
  EXPECT_EQ(reorders(g).size(), 2u);
}

// A convolution between two plain neighbours (graph input, Flatten) keeps
// its blocked layout when its arithmetic pays for the two Reorders (3x3,
// 64 -> 32 channels: 2*32*64*9 / (4*(64+32)) = 96 FLOP per byte), and stays
// plain when it would not (1x1, same channels: 11 FLOP per byte).
TEST(LayoutPropagation, AConvBetweenReordersMustPayForThem) {
  for (const int64_t k : {3, 1}) {
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 64, 6, 6});
    ir::Node* fl = g.add_node("Flatten", {conv(g, x, 32, k, "c")}, {"flat"}, "flatten");
    fl->output(0)->type = f32({1, 32 * 36});
    g.outputs().push_back(fl->output(0));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 64, 6, 6}, 2)}});
    EXPECT_EQ(output_blocked(a, node(g, "c")), k == 3) << "kernel " << k;
    EXPECT_EQ(reorders(g).size(), k == 3 ? 2u : 0u) << "kernel " << k;
  }
}

/// ConvTranspose of `x` with kernel = stride = 2 into `oc` channels
/// ([N,C,H,W] -> [N,oc,2H,2W]), bias; output `name` + "_y".
ir::Node* upconv(ir::Graph& g, ir::Value* x, int64_t oc, const std::string& name) {
  const Shape s = x->type.static_shape();
  ir::Node* n = g.add_node("ConvTranspose", {x, g.add_constant(name + "_W", wave({s[1], oc, 2, 2}, 6)),
                                             g.add_constant(name + "_B", wave({oc}, 2))},
                           {name + "_y"}, name);
  n->set_attr(ir::Attribute::Ints("strides", {2, 2}));
  n->output(0)->type = f32({s[0], oc, 2 * s[2], 2 * s[3]});
  return n;
}

// A ConvTranspose (stride = kernel: the MatMul form) after a convolution
// that writes nhwc reads X nhwc, in place, where the target has its brgemm
// MatMul (the real query answers for it): no Reorder but the input's, and
// the plain graph's outputs (batch 2, one band of rows).
TEST(LayoutPropagation, ConvTransposeReadsAnNhwcInput) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 3, 6, 5});
  ir::Node* up = upconv(g, unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1"), 8, "up");
  g.outputs().push_back(up->output(0));
  const LayoutQuery query = [](const ir::Node& n, ops::Layout s, ops::Layout d) {
    return n.op_type == "ConvTranspose" ? kernels::implementation_for_layout(n, s, d) : like_avx512(n, s, d);
  };
  const bool fits = !kernels::implementation_for_layout(*up, ops::Layout::kNhwc, ops::Layout::kPlain).empty();
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({2, 3, 6, 5}, 3)}}, query);
  if (!fits) {
    EXPECT_FALSE(has_layouts(a, up));
    return;
  }
  EXPECT_EQ(in_layouts(a, up), (std::vector<std::string>{L, P, P}));
  EXPECT_EQ(out_layouts(a, up), (std::vector<std::string>{P}));
  EXPECT_EQ(out_layouts(a, node(g, "conv1")), (std::vector<std::string>{L}));
  EXPECT_TRUE(inner_reorders(g).empty());
}

// A pool that shrinks H x W ends one layout group and starts another, and
// each side chooses its own layout. Where oneDNN's nhwc kernels are brgemm
// ones (brg_for_nhwc), the 20x20 stage after the pool goes nhwc (its 3x3
// convolutions gain there), while the 40x40 stage before it keeps nChw16c
// for its in-place Concat; the MaxPool reads nChw16c and writes nhwc, with
// no Reorder between. Without brgemm kernels (like_avx512) both stay nChw16c.
std::string brg_for_nhwc(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src == ops::Layout::kNhwc && dst == ops::Layout::kNhwc) return "brg:avx512_core";
  return like_avx512(n, src, dst);
}
/// `g` planned with layouts `a` (its memory plan and execution plan), as
/// the bytes of a .gom.
std::shared_ptr<const std::vector<uint8_t>> gom_bytes(ir::Graph& g, const LayoutAssignment& a) {
  g.topo_sort();
  gec::testing::Planned p(g);
  const schedule::ExecutionPlan plan = schedule::make_execution_plan(g, a);
  return std::make_shared<const std::vector<uint8_t>>(model::write_gom(g, p.ids, p.plan, plan, 17, "{}"));
}
/// The outputs of a Session on 2 threads loaded from `bytes`, for input x.
std::vector<Tensor> run_gom(const std::shared_ptr<const std::vector<uint8_t>>& bytes, const Tensor& x) {
  SessionOptions so;
  so.num_threads = 2;
  return Session::load_from_bytes(bytes, so)->run({x.view()});
}

/// x [1,3,40,40] -> conv1 (16) -> relu -> {3x3, 1x1 convs (16)} -> concat
/// (32) -> maxpool 2x2 / 2 -> conv3 (32) -> relu -> conv4 (32) -> global
/// average pool.
void build_two_stages(ir::Graph& g) {
  ir::Value* x = input(g, "x", {1, 3, 40, 40});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
  ir::Node* cat = concat(g, {conv(g, r1, 16, 3, "branch_a"), conv(g, r1, 16, 1, "branch_b")}, "concat");
  ir::Node* mp = g.add_node("MaxPool", {cat->output(0)}, {"mp_y"}, "maxpool");
  mp->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
  mp->set_attr(ir::Attribute::Ints("strides", {2, 2}));
  mp->output(0)->type = f32({1, 32, 20, 20});
  ir::Value* r3 = unary(g, "Relu", conv(g, mp->output(0), 32, 3, "conv3"), "relu3");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", conv(g, r3, 32, 3, "conv4"), "gap")->output(0));
}
TEST(LayoutPropagation, StagesOnEachSideOfAPoolChooseTheirOwnLayout) {
  for (bool brg : {true, false}) {
    SCOPED_TRACE(brg ? "brgemm nhwc kernels" : "JIT kernels only");
    ir::Graph g;
    build_two_stages(g);
    const LayoutAssignment a =
        run_pass_and_compare(g, {{"x", wave({1, 3, 40, 40}, 9)}}, brg ? brg_for_nhwc : like_avx512);
    const std::string after = brg ? L : B;
    ir::Node* mp = node(g, "maxpool");
    EXPECT_EQ(out_layouts(a, node(g, "concat")), (std::vector<std::string>{B}));
    EXPECT_EQ(in_layouts(a, mp), (std::vector<std::string>{B}));
    EXPECT_EQ(out_layouts(a, mp), (std::vector<std::string>{after}));
    EXPECT_EQ(out_layouts(a, node(g, "conv3")), (std::vector<std::string>{after}));
    EXPECT_EQ(out_layouts(a, node(g, "conv4")), (std::vector<std::string>{after}));
    EXPECT_TRUE(reorders(g).empty());
  }
}

// The same plan through the offline model: written to a .gom, loaded (the
// loader's checks and the kernels made for the steps' layouts) and run by
// a Session on 2 threads, the pool reading nChw16c and writing nhwc; the
// outputs equal the plain graph's.
TEST(LayoutPropagation, PoolThatChangesLayoutRunsThroughTheOfflineModel) {
  const std::map<std::string, Tensor> feeds{{"x", wave({1, 3, 40, 40}, 9)}};
  ir::Graph with, without;
  build_two_stages(with);
  build_two_stages(without);
  const LayoutAssignment a = schedule::assign_layouts(with, brg_for_nhwc);
  const auto bytes = gom_bytes(with, a);
  const model::LoadedModel loaded = model::read_gom_bytes(bytes);
  int changing_pools = 0;
  for (const schedule::Step& st : loaded.execution_plan.graphs[0].steps)
    changing_pools += st.input_layouts.size() == 1 && st.output_layouts.size() == 1 &&
                      st.input_layouts[0] == ops::Layout::kNChw16c && st.output_layouts[0] == ops::Layout::kNhwc;
  EXPECT_EQ(changing_pools, 1);
  expect_near_all(run_gom(bytes, feeds.at("x")), run_graph(without, feeds));
}

// The nhwc weighing leaves a group with a grouped (not depthwise)
// convolution alone: oneDNN's nhwc kernels for whole 16-channel groups
// are unmeasured per node, and RegNetX-400MF in nhwc ran 1.12x its nChw16c
// time. The same 20x20 stage with an ungrouped conv in its place goes nhwc.
TEST(LayoutPropagation, GroupedConvolutionsKeepTheirStageNChw16c) {
  for (int64_t group : {2, 1}) {
    SCOPED_TRACE("group " + std::to_string(group));
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 20, 20});
    ir::Value* r1 = unary(g, "Relu", conv(g, x, 32, 3, "conv1"), "relu1");
    ir::Node* gc = g.add_node("Conv", {r1, g.add_constant("gc_W", wave({32, 32 / group, 3, 3}, 5)),
                                       g.add_constant("gc_B", wave({32}, 3))},
                              {"gc_y"}, "grouped");
    gc->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
    gc->set_attr(ir::Attribute::Int("group", group));
    gc->output(0)->type = f32({1, 32, 20, 20});
    ir::Value* r2 = unary(g, "Relu", gc->output(0), "relu2");
    g.outputs().push_back(global_pool(g, "GlobalAveragePool", conv(g, r2, 32, 3, "conv3"), "gap")->output(0));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 20, 20}, 9)}}, brg_for_nhwc);
    EXPECT_EQ(out_layouts(a, gc), (std::vector<std::string>{group > 1 ? B : L}));
    EXPECT_EQ(out_layouts(a, node(g, "conv3")), (std::vector<std::string>{group > 1 ? B : L}));
  }
}

// A conv whose nhwc kernel would be a gemm one (or a reference one) would
// run plain between Reorders in an nhwc group: the weighing charges it,
// and the 20x20 stage that the brgemm convs alone would make nhwc keeps
// nChw16c (as GroupedConvolutionsKeepTheirStageNChw16c's group 1 case
// shows, the same stage without it goes nhwc).
TEST(LayoutPropagation, AConvWithoutAFastNhwcKernelKeepsItsStageNChw16c) {
  const LayoutQuery query = [](const ir::Node& n, ops::Layout src, ops::Layout dst) -> std::string {
    if (n.name == "conv2" && dst == ops::Layout::kNhwc) return "gemm:jit";
    return brg_for_nhwc(n, src, dst);
  };
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 20, 20});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 32, 3, "conv1"), "relu1");
  ir::Value* r2 = unary(g, "Relu", conv(g, r1, 32, 3, "conv2"), "relu2");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", conv(g, r2, 32, 3, "conv3"), "gap")->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 20, 20}, 9)}}, query);
  EXPECT_EQ(out_layouts(a, node(g, "conv2")), (std::vector<std::string>{B}));
  EXPECT_EQ(out_layouts(a, node(g, "conv3")), (std::vector<std::string>{B}));
}

// ---- the small CNN through -O3 ------------------------------------------------

// x[1,3,16,16] -> conv1 3->16 -> relu -> conv2 16->16 + residual (relu) ->
// maxpool 2x2 -> {conv3 1x1 16->16 -> relu, conv4 3x3 16->16} -> concat (32)
// -> global average pool -> flatten -> gemm 32->10.
void build_cnn(ir::Graph& g) {
  ir::Value* x = input(g, "x", {1, 3, 16, 16});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 16, 3, "conv1"), "relu1");
  ir::Value* res = binary(g, "Add", conv(g, r1, 16, 3, "conv2"), r1, "add");
  ir::Node* mp = g.add_node("MaxPool", {res}, {"mp_y"}, "maxpool");
  mp->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
  mp->set_attr(ir::Attribute::Ints("strides", {2, 2}));
  mp->output(0)->type = f32({1, 16, 8, 8});
  ir::Value* a = unary(g, "Relu", conv(g, mp->output(0), 16, 1, "conv3"), "relu3");
  ir::Value* b = conv(g, mp->output(0), 16, 3, "conv4");
  ir::Node* cat = concat(g, {a, b}, "concat");
  ir::Node* gap = global_pool(g, "GlobalAveragePool", cat->output(0), "gap");
  ir::Node* fl = g.add_node("Flatten", {gap->output(0)}, {"flat"}, "flatten");
  fl->output(0)->type = f32({1, 32});
  ir::Node* gemm = g.add_node("Gemm", {fl->output(0), g.add_constant("Wg", wave({10, 32}, 7)),
                                       g.add_constant("Bg", wave({10}, 8))},
                              {"y"}, "gemm");
  gemm->set_attr(ir::Attribute::Int("transB", 1));
  gemm->output(0)->type = f32({1, 10});
  g.outputs().push_back(gemm->output(0));
}

TEST(LayoutPropagation, SmallCnnAtO3SameOutputsWithAndWithoutThePass) {
  const std::map<std::string, Tensor> feeds{{"x", wave({1, 3, 16, 16}, 9)}};
  ir::Graph with, without;
  build_cnn(with);
  build_cnn(without);
  CompileOptions on, off;
  off.disabled_passes = {"layout_propagation"};
  // Whether oneDNN runs conv2 blocked with a JIT kernel on this CPU (AVX-512)
  // decides what the pass may do.
  const bool jit_blocked = !kernels::is_reference_implementation(
      kernels::implementation_for_layout(*node(with, "conv2"), ops::Layout::kNChw16c, ops::Layout::kNChw16c));
  make_pipeline(3).run(with, on);
  make_pipeline(3).run(without, off);
  const LayoutAssignment a = schedule::assign_layouts(with);  // the compile driver's step after the passes
  with.verify();
  expect_near_all(run_graph(with, feeds, &a), run_graph(without, feeds));
  if (!jit_blocked) {  // no blocked JIT convolution here: nothing may be blocked
    for (const auto& n : with.nodes()) EXPECT_FALSE(output_blocked(a, n.get())) << n->name;
    return;
  }
  // Everything from conv1's output to the concat is non-plain: nChw16c, or
  // nhwc where the group's convolutions and pools gain (each side of the
  // maxpool, a stage edge, chooses its own; the pool writes the other
  // side's layout). No Reorder but x's own into nhwc (a 3-channel conv
  // reads a plain src only into nChw16c).
  for (const ir::Node* r : reorders(with)) EXPECT_EQ(r->input(0)->name(), "x");
  const std::vector<std::string> mp_out = out_layouts(a, node(with, "maxpool"));
  ASSERT_EQ(mp_out.size(), 1u);
  EXPECT_NE(mp_out[0], P);
  EXPECT_EQ(in_layouts(a, node(with, "maxpool")), out_layouts(a, node(with, "conv2")));  // conv2 + add + relu, fused
  EXPECT_EQ(out_layouts(a, node(with, "concat")), mp_out);
  int held_convs = 0;
  for (const auto& n : with.nodes())
    if (n->op_type.find("Conv") != std::string::npos && has_layouts(a, n.get()) &&
        out_layouts(a, n.get()) != std::vector<std::string>{P})
      ++held_convs;
  EXPECT_EQ(held_convs, 4);
}

// The layouts travel through the plan: the small CNN with every conv chain
// blocked (as on an AVX-512 CPU) is planned, written to a .gom, loaded and
// run by a Session; its outputs equal the plain graph's. The .gom's steps
// carry the layouts the assignment chose.
TEST(LayoutPropagation, BlockedPlanRunsThroughTheOfflineModel) {
  const std::map<std::string, Tensor> feeds{{"x", wave({1, 3, 16, 16}, 9)}};
  ir::Graph with, without;
  build_cnn(with);
  build_cnn(without);
  CompileOptions opts;
  make_pipeline(3).run(with, opts);
  make_pipeline(3).run(without, opts);
  const LayoutAssignment a = schedule::assign_layouts(with, jit_everywhere);
  ASSERT_GT(a.blocked_values, 0);
  const auto bytes = gom_bytes(with, a);
  const model::LoadedModel loaded = model::read_gom_bytes(bytes);
  int blocked_steps = 0;
  for (const schedule::Step& st : loaded.execution_plan.graphs[0].steps)
    for (ops::Layout l : st.output_layouts) blocked_steps += l != ops::Layout::kPlain;
  EXPECT_EQ(blocked_steps, a.blocked_values);
  expect_near_all(run_gom(bytes, feeds.at("x")), run_graph(without, feeds));
}

// An FPN-style neck: a 24-channel map and a pooled, convolved, upsampled
// copy of it joined by a channel Concat (nhwc), then a convolution.
void build_neck(ir::Graph& g) {
  ir::Value* x = input(g, "x", {1, 3, 8, 8});
  ir::Value* r1 = unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1");
  ir::Node* mp = g.add_node("MaxPool", {r1}, {"mp_y"}, "maxpool");
  mp->set_attr(ir::Attribute::Ints("kernel_shape", {2, 2}));
  mp->set_attr(ir::Attribute::Ints("strides", {2, 2}));
  mp->output(0)->type = f32({1, 24, 4, 4});
  ir::Node* up = upsample(g, conv(g, mp->output(0), 24, 3, "conv2"), "nearest", "up");
  ir::Node* cat = concat(g, {conv(g, r1, 24, 1, "lateral"), up->output(0)}, "concat");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", conv(g, cat->output(0), 24, 3, "conv3"), "gap")->output(0));
}

// The neck with its Resize and Concat nhwc, planned with the assignment's
// copied Concats, through a .gom and a Session: the plain graph's outputs,
// and the Concat is not in place. Planned without them (the Concat in
// place, as a crafted file could say), the loader refuses the file.
TEST(LayoutPropagation, NhwcConcatRunsThroughTheOfflineModel) {
  const std::map<std::string, Tensor> feeds{{"x", wave({1, 3, 8, 8}, 12)}};
  ir::Graph with, without;
  build_neck(with);
  build_neck(without);
  const LayoutAssignment a = schedule::assign_layouts(with, jit_everywhere);
  ASSERT_EQ(a.copied_concats.size(), 1u);
  EXPECT_EQ(out_layouts(a, node(with, "up")), (std::vector<std::string>{L}));
  with.topo_sort();
  const ir::ValueIndex ids(with);
  const schedule::ExecutionPlan plan = schedule::make_execution_plan(with, a);
  auto gom = [&](const std::unordered_set<const ir::Node*>* copied) {
    const memory::MemoryPlan mp = memory::plan_memory(with, ids, nullptr, copied);
    return std::make_shared<const std::vector<uint8_t>>(model::write_gom(with, ids, mp, plan, 17, "{}"));
  };
  SessionOptions so;
  so.num_threads = 2;
  const auto bytes = gom(&a.copied_concats);
  EXPECT_TRUE(model::read_gom_bytes(bytes).memory_plan.concat_in_place.empty());
  auto session = Session::load_from_bytes(bytes, so);
  expect_near_all(session->run({feeds.at("x").view()}), run_graph(without, feeds));
  const auto forged = gom(nullptr);
  ASSERT_FALSE(model::read_gom_bytes(forged).memory_plan.concat_in_place.empty());
  try {
    Session::load_from_bytes(forged, so);
    ADD_FAILURE() << "an nhwc Concat in place was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorruptFile);
    EXPECT_NE(std::string(e.what()).find("nhwc"), std::string::npos) << e.what();
  }
}

// Plans an op's kernel cannot honour, forged into a .gom (the layouts agree
// along every edge, so only the op's rule is broken): a Softmax (plain
// only) reading and writing nChw16c, a Relu writing another layout than it
// reads, an Add reading a full-shape operand plain while writing nChw16c, a
// Slice reading nChw16c and writing plain, a Transpose writing nChw16c.
// The loader refuses each (kCorruptFile), naming the rule.
TEST(LayoutPropagation, ForgedLayoutsAnOpCannotHonourAreRefused) {
  using ops::Layout;
  struct Case {
    std::string op;
    std::string expect;
  };
  for (const Case& c : {Case{"Softmax", "reads plain data only"}, Case{"Relu", "output 0 must have input 0's layout"},
                        Case{"Add", "operand 1 must be read in the output's layout"},
                        Case{"Slice", "input 0 must be read in the output's layout"},
                        Case{"Transpose", "a Transpose writes plain or nhwc"}}) {
    SCOPED_TRACE(c.op);
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 6, 6});
    ir::Value* c1 = conv(g, x, 16, 3, "conv1");
    ir::Value* plain = conv(g, x, 16, 1, "conv_plain");  // a full-shape operand, written plain
    ir::Node* mid = c.op == "Add" ? g.add_node("Add", {c1, plain}, {"mid_y"}, "mid")
                    : c.op == "Slice"     ? slice(g, c1, 1, 0, 16, "mid")
                    : c.op == "Transpose" ? transpose(g, c1, {0, 1, 3, 2}, "mid")
                                          : g.add_node(c.op, {c1}, {"mid_y"}, "mid");
    if (c.op == "Softmax") mid->set_attr(ir::Attribute::Int("axis", 1));
    mid->output(0)->type = c1->type;
    ir::Value* c2 = conv(g, mid->output(0), 16, 3, "conv2");
    ir::Node* gap = global_pool(g, "GlobalAveragePool", c2, "gap");
    g.outputs().push_back(gap->output(0));
    g.topo_sort();
    LayoutAssignment a;
    a.nodes[node(g, "conv1")] = {{Layout::kPlain, Layout::kPlain, Layout::kPlain}, {Layout::kNChw16c}};
    std::vector<Layout> mid_in(mid->inputs().size(), Layout::kNChw16c);
    if (c.op == "Add") mid_in[1] = Layout::kPlain;
    if (c.op == "Slice") mid_in = {Layout::kNChw16c, Layout::kPlain, Layout::kPlain, Layout::kPlain};
    // The Relu writes plain (its reader conv2 reads plain: the edge agrees);
    // so does the Transpose until its plan is forged below.
    const Layout mid_out = c.op == "Relu" || c.op == "Transpose" ? Layout::kPlain : Layout::kNChw16c;
    a.nodes[mid] = {mid_in, {mid_out}};
    a.nodes[node(g, "conv2")] = {{mid_out, Layout::kPlain, Layout::kPlain}, {Layout::kNChw16c}};
    a.nodes[gap] = {{Layout::kNChw16c}, {Layout::kPlain}};
    const ir::ValueIndex ids(g);
    const memory::MemoryPlan mp = memory::plan_memory(g, ids);
    schedule::ExecutionPlan plan = schedule::make_execution_plan(g, a);
    // The plan's steps edited after it is made: mid writes `l`, conv2 reads it.
    const auto forge_edge = [&](Layout l) {
      std::vector<const ir::Node*> table;
      for (const auto& n : g.nodes()) table.push_back(n.get());
      for (schedule::Step& st : plan.graphs[0].steps) {
        const ir::Node* sn = table[static_cast<size_t>(st.node)];
        if (sn == mid) st.output_layouts = {l};
        if (sn == node(g, "conv2")) st.input_layouts[0] = l;
      }
    };
    // The Slice's kernel refuses the forged layouts when the plan is made,
    // so forge the plan: it writes plain, conv2 reads plain.
    if (c.op == "Slice") forge_edge(Layout::kPlain);
    // The Transpose is made with a plain output (its kernel refuses nChw16c
    // when the plan is made); forged to write nChw16c, which conv2 reads.
    if (c.op == "Transpose") forge_edge(Layout::kNChw16c);
    auto bytes = std::make_shared<const std::vector<uint8_t>>(model::write_gom(g, ids, mp, plan, 17, "{}"));
    try {
      model::read_gom_bytes(bytes);
      ADD_FAILURE() << "a forged plan was loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'mid'"), std::string::npos) << e.what();
    }
  }
}

// ---- kernels ---------------------------------------------------------------

// Reorder nchw -> nChw16c puts element (n,c,h,w) at
// ((n*C/16 + c/16)*H*W + h*W + w)*16 + c%16; and back.
TEST(LayoutReorder, MatchesTheBlockedIndexFormula) {
  const int64_t N = 2, C = 32, H = 3, W = 5;
  Tensor x = wave({N, C, H, W}, 10);
  Tensor blocked = run_op(ops::kReorderOp, {x}, {ir::Attribute::String("from", P), ir::Attribute::String("to", B)},
                          1, ops::kGecDomain)[0];
  ASSERT_EQ(blocked.shape(), x.shape());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        ASSERT_EQ(blocked.as<float>()[((n * C / 16 + c / 16) * H * W + p) * 16 + c % 16],
                  x.as<float>()[(n * C + c) * H * W + p]);
  Tensor back = run_op(ops::kReorderOp, {blocked}, {ir::Attribute::String("from", B), ir::Attribute::String("to", P)},
                       1, ops::kGecDomain)[0];
  expect_near_all({back}, {x});
}

// Reorder nchw -> nhwc puts element (n,c,h,w) at ((n*H + h)*W + w)*C + c,
// for a C that is no multiple of 16; nhwc <-> nChw16c both ways too.
TEST(LayoutReorder, MatchesTheChannelsLastIndexFormula) {
  const int64_t N = 2, C = 24, H = 3, W = 5;
  Tensor x = wave({N, C, H, W}, 12);
  auto reorder = [](const Tensor& t, const std::string& from, const std::string& to) {
    return run_op(ops::kReorderOp, {t}, {ir::Attribute::String("from", from), ir::Attribute::String("to", to)}, 1,
                  ops::kGecDomain)[0];
  };
  Tensor last = reorder(x, P, L);
  ASSERT_EQ(last.shape(), x.shape());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        ASSERT_EQ(last.as<float>()[(n * H * W + p) * C + c], x.as<float>()[(n * C + c) * H * W + p]);
  expect_near_all({reorder(last, L, P)}, {x});
  Tensor x32 = wave({1, 32, 2, 3}, 13);
  expect_near_all({reorder(reorder(reorder(x32, P, L), L, B), B, P)}, {x32});
}

/// One MaxPool or AveragePool window for expect_blocked_pool_matches_plain.
struct PoolCase {
  const char* op;
  std::vector<int64_t> kernel, strides, pads, dilations;
  int64_t ceil_mode = 0, count_include_pad = 0;
};

// MaxPool and AveragePool on a blocked input: Reorder -> pool (blocked, the
// native pixel-vector loop) -> Reorder equals oneDNN's plain pooling, for
// windows with and without padding, strides 1 and 2, dilations, ceil_mode
// (partial windows at the end) and both AveragePool counts; sizes make both
// the four-pixel groups and the single border pixels run.
void expect_blocked_pool_matches_plain(ops::Layout layout, const Shape& xs) {
  const std::vector<PoolCase> cases = {
      {"MaxPool", {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {"MaxPool", {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {"MaxPool", {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},
      {"MaxPool", {3, 2}, {2, 1}, {2, 0, 1, 1}, {2, 3}},
      {"AveragePool", {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 0},
      {"AveragePool", {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 1},
      {"AveragePool", {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 1},
      {"AveragePool", {3, 3}, {2, 2}, {1, 0, 1, 0}, {1, 1}, 1, 0},
      {"AveragePool", {3, 2}, {2, 1}, {2, 1, 2, 1}, {2, 3}, 0, 1},
      {"AveragePool", {2, 2}, {2, 2}, {1, 1, 1, 1}, {2, 2}, 1, 1},  // dilated ceil_mode windows counting pads
  };
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " kernel " + std::to_string(c.kernel[0]) + "x" + std::to_string(c.kernel[1]) +
                 " strides " + std::to_string(c.strides[0]) + "," + std::to_string(c.strides[1]) + " ceil_mode " +
                 std::to_string(c.ceil_mode) + " count_include_pad " + std::to_string(c.count_include_pad));
    ir::Graph g;
    const std::string name = ops::layout_name(layout);
    ir::Value* x = input(g, "x", xs);
    ir::Node* to = g.add_node(ops::kReorderOp, {x}, {"xb"}, "to", ops::kGecDomain);
    to->set_attr(ir::Attribute::String("from", P));
    to->set_attr(ir::Attribute::String("to", name));
    to->output(0)->type = x->type;
    LayoutAssignment a;
    Shape ys;
    auto pool = [&](ir::Value* in, const std::string& n, bool blocked) {
      ir::Node* p = g.add_node(c.op, {in}, {n + "_y"}, n);
      p->set_attr(ir::Attribute::Ints("kernel_shape", c.kernel));
      p->set_attr(ir::Attribute::Ints("strides", c.strides));
      p->set_attr(ir::Attribute::Ints("pads", c.pads));
      if (c.dilations != std::vector<int64_t>{1, 1}) p->set_attr(ir::Attribute::Ints("dilations", c.dilations));
      p->set_attr(ir::Attribute::Int("ceil_mode", c.ceil_mode));
      if (std::string(c.op) == "AveragePool")
        p->set_attr(ir::Attribute::Int("count_include_pad", c.count_include_pad));
      const ops::WindowAttrs wa = ops::resolve_window_attrs(ops::read_window_attrs(*p), 2, nullptr, n);
      const ops::WindowGeom geom = ops::window_geometry(n, wa, Shape(xs.begin() + 2, xs.end()));
      ys = {xs[0], xs[1], geom.out[0], geom.out[1]};
      p->output(0)->type = f32(ys);
      if (blocked) {
        a.nodes[p] = {{layout}, {layout}};
        kernels::KernelConfig config = kernels::KernelConfig::for_node(*p);
        config.input_layouts = config.output_layouts = {layout};
        EXPECT_EQ(kernels::create_kernel(*p, config)->impl_name(), "native.pool");
      }
      return p->output(0);
    };
    ir::Node* back = g.add_node(ops::kReorderOp, {pool(to->output(0), "pool_b", true)}, {"yb"}, "back",
                                ops::kGecDomain);
    back->set_attr(ir::Attribute::String("from", name));
    back->set_attr(ir::Attribute::String("to", P));
    back->output(0)->type = f32(ys);
    g.outputs() = {back->output(0), pool(x, "pool_p", false)};
    auto out = run_graph(g, {{"x", wave(xs, 11)}}, &a);
    expect_near_all({out[0]}, {out[1]});
  }
}

// A per-channel group (BatchNormalization as Mul + Add, then Relu; fused,
// or op by op on the binary kernels;
// the scale a run-time input as in squeeze-and-excitation) on a blocked
// input: Reorder -> FusedElementwise (blocked, rows of several pixels with
// the per-channel operands tiled) -> Reorder equals the plain group. Sizes
// whose pixel count is prime (7x7 has divisors 1, 7, 49; 5x3 is 15) and a
// per-image scale [2,C,1,1].
void expect_blocked_channel_group_matches_plain(ops::Layout layout, const Shape& xs, int64_t scale_n,
                                                bool fused = true) {
  ir::Graph g;
  const std::string name = ops::layout_name(layout);
  const int64_t C = xs[1];
  ir::Value* x = input(g, "x", xs);
  ir::Value* sc = input(g, "s", {scale_n, C, 1, 1});
  auto group = [&](ir::Value* in, const std::string& n) {
    ir::Value* m = binary(g, "Mul", in, sc, n + "_mul");
    ir::Node* add = g.add_node("Add", {m, g.add_constant(n + "_b", wave({C, 1, 1}, 4))}, {n + "_add_y"}, n + "_add");
    add->output(0)->type = m->type;
    return unary(g, "Relu", add->output(0), n + "_relu");
  };
  auto reorder = [&](ir::Value* in, const std::string& from, const std::string& to, const std::string& n) {
    return reorder_node(g, in, from, to, n);
  };
  ir::Value* yb = group(reorder(x, P, name, "to"), "blocked");
  ir::Value* yp = group(x, "plain");
  g.outputs() = {reorder(yb, name, P, "back"), yp};
  LayoutAssignment a;
  if (fused) {
    ASSERT_EQ(make_autofusion()->run(g), 2);
    for (const auto& n : g.nodes())
      if (n->op_type == "FusedElementwise" && n->input(0)->producer() && n->input(0)->producer()->name == "to")
        a.nodes[n.get()] = {{layout, ops::Layout::kPlain, ops::Layout::kPlain}, {layout}};
    ASSERT_EQ(a.nodes.size(), 1u);
  } else {  // the binary kernels (Mul, Add) and Relu one by one
    for (const char* n : {"blocked_mul", "blocked_add"}) a.nodes[node(g, n)] = {{layout, ops::Layout::kPlain}, {layout}};
    a.nodes[node(g, "blocked_relu")] = {{layout}, {layout}};
  }
  auto out = run_graph(g, {{"x", wave(xs, 11)}, {"s", wave({scale_n, C, 1, 1}, 5)}}, &a);
  expect_near_all({out[0]}, {out[1]});
}

TEST(LayoutReorder, BlockedChannelGroupMatchesPlain) {
  for (const Shape& xs : {Shape{2, 32, 7, 7}, Shape{2, 48, 5, 3}, Shape{1, 16, 56, 56}, Shape{2, 16, 1, 1}})
    for (int64_t n : {int64_t{1}, xs[0]}) {
      SCOPED_TRACE(shape_str(xs) + " scale batch " + std::to_string(n));
      expect_blocked_channel_group_matches_plain(ops::Layout::kNChw16c, xs, n);
      expect_blocked_channel_group_matches_plain(ops::Layout::kNChw16c, xs, n, false);
    }
}
TEST(LayoutReorder, ChannelsLastChannelGroupMatchesPlain) {
  for (const Shape& xs : {Shape{2, 24, 7, 7}, Shape{2, 40, 5, 3}, Shape{1, 8, 28, 28}})
    for (int64_t n : {int64_t{1}, xs[0]}) {
      SCOPED_TRACE(shape_str(xs) + " scale batch " + std::to_string(n));
      expect_blocked_channel_group_matches_plain(ops::Layout::kNhwc, xs, n);
      expect_blocked_channel_group_matches_plain(ops::Layout::kNhwc, xs, n, false);
    }
}

// Resize of H and W on a blocked input: Reorder -> Resize (blocked, the
// pixel loops) -> Reorder equals the plain Resize (the plane loops), for
// nearest and linear, upsampling and downsampling, by sizes (7x9 from 5x6:
// uneven taps), align_corners and half_pixel. (Cubic never takes the plane
// loops: its taps of the kept N and C dims are 4 wide, zero weights
// included, so it runs plain.)
void expect_blocked_resize_matches_plain(ops::Layout layout, const Shape& xs) {
  struct Case {
    const char* mode;
    const char* coord;
    int64_t oh, ow;
  };
  for (const Case& c : {Case{"nearest", "asymmetric", 10, 12}, Case{"nearest", "half_pixel", 7, 9},
                        Case{"linear", "half_pixel", 10, 12}, Case{"linear", "align_corners", 7, 9},
                        Case{"linear", "pytorch_half_pixel", 3, 2}}) {
    SCOPED_TRACE(std::string(c.mode) + " " + c.coord + " to " + std::to_string(c.oh) + "x" + std::to_string(c.ow));
    ir::Graph g;
    const std::string name = ops::layout_name(layout);
    ir::Value* x = input(g, "x", xs);
    const Shape ys{xs[0], xs[1], c.oh, c.ow};
    ir::Value* sizes = g.add_constant("sizes", make<int64_t>({4}, {ys[0], ys[1], ys[2], ys[3]}));
    auto resize = [&](ir::Value* in, const std::string& n) {
      ir::Node* r = g.add_node("Resize", {in, nullptr, nullptr, sizes}, {n + "_y"}, n);
      r->set_attr(ir::Attribute::String("mode", c.mode));
      r->set_attr(ir::Attribute::String("coordinate_transformation_mode", c.coord));
      r->output(0)->type = f32(ys);
      return r;
    };
    auto reorder = [&](ir::Value* in, const std::string& from, const std::string& to, const std::string& n) {
      return reorder_node(g, in, from, to, n);
    };
    ir::Node* rb = resize(reorder(x, P, name, "to"), "blocked");
    EXPECT_EQ(kernels::implementation_for_layout(*rb, layout, layout), "native.resize");
    LayoutAssignment a;
    a.nodes[rb] = {{layout, ops::Layout::kPlain, ops::Layout::kPlain, ops::Layout::kPlain}, {layout}};
    g.outputs() = {reorder(rb->output(0), name, P, "back"), resize(x, "plain")->output(0)};
    auto out = run_graph(g, {{"x", wave(xs, 13)}}, &a);
    expect_near_all({out[0]}, {out[1]});
  }
}

TEST(LayoutReorder, BlockedResizeMatchesPlain) { expect_blocked_resize_matches_plain(ops::Layout::kNChw16c, {2, 32, 5, 6}); }
TEST(LayoutReorder, ChannelsLastResizeMatchesPlain) {
  expect_blocked_resize_matches_plain(ops::Layout::kNhwc, {2, 24, 5, 6});
  expect_blocked_resize_matches_plain(ops::Layout::kNhwc, {1, 3, 5, 6});
}

// The layout query has no non-plain kernel for a Resize that changes C, takes
// its scales at run time or crops beyond the input (tf_crop_and_resize with
// a roi past the edges: extrapolated pixels): the planned layout is refused
// by the kernel too.
TEST(LayoutReorder, ResizeLayoutQueryRefusesWhatThePixelLoopsCannotDo) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 32, 4, 4});
  auto resize = [&](std::vector<ir::Value*> ins, const Shape& ys, const std::string& n) {
    ir::Node* r = g.add_node("Resize", ins, {n + "_y"}, n);
    r->output(0)->type = f32(ys);
    return r;
  };
  ir::Node* channels = resize({x, nullptr, g.add_constant("s1", make<float>({4}, {1, 2, 2, 2}))}, {1, 64, 8, 8}, "c");
  ir::Node* runtime = resize({x, nullptr, input(g, "s", {4})}, {1, 32, 8, 8}, "r");
  ir::Node* crop = resize({x, g.add_constant("roi", make<float>({8}, {0, 0, -0.5f, -0.5f, 1, 1, 1.5f, 1.5f})),
                           g.add_constant("s3", make<float>({4}, {1, 1, 2, 2}))},
                          {1, 32, 8, 8}, "crop");
  crop->set_attr(ir::Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize"));
  crop->set_attr(ir::Attribute::Float("extrapolation_value", 0.f));
  for (ir::Node* n : {channels, runtime, crop})
    for (ops::Layout l : {ops::Layout::kNChw16c, ops::Layout::kNhwc})
      EXPECT_EQ(kernels::implementation_for_layout(*n, l, l), "") << n->name << " " << ops::layout_name(l);
  // The plan says nhwc anyway (a crafted file): the kernel names the node.
  kernels::KernelConfig config = kernels::KernelConfig::for_node(*channels);
  config.input_layouts = {ops::Layout::kNhwc};
  config.output_layouts = {ops::Layout::kNhwc};
  const Tensor xt = wave({1, 32, 4, 4}, 2);
  const TensorView xv = xt.view(), sv = channels->input(2)->constant->view();
  try {
    kernels::evaluate_node(*channels, {&xv, nullptr, &sv}, 1, nullptr, config);
    ADD_FAILURE() << "a Resize of C ran in nhwc";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
  }
}

// ConvTranspose with stride = kernel on an nhwc X (Reorder -> ConvTranspose
// reading nhwc, writing plain) equals the plain one: batch 2, one band
// (16 outputs over 6x5) and several (24 outputs over 48x64: two bands of
// 24 rows per image); a 3x3 stride-3 kernel. (On a CPU without oneDNN's
// brgemm MatMul the kernel reorders X and runs the deconvolution: the same
// comparison.) Planned nChw16c, or nhwc for a form the MatMul does not take
// (stride 1), the kernel refuses, naming the node.
TEST(LayoutReorder, ConvTransposeOnNhwcMatchesPlain) {
  struct Case {
    Shape xs;
    int64_t oc, k;
  };
  for (const Case& c : {Case{{2, 24, 6, 5}, 16, 2}, Case{{2, 8, 48, 64}, 24, 2}, Case{{2, 16, 4, 7}, 5, 3}}) {
    SCOPED_TRACE(shape_str(c.xs) + " -> " + std::to_string(c.oc) + ", kernel " + std::to_string(c.k));
    ir::Graph g;
    ir::Value* x = input(g, "x", c.xs);
    ir::Value* w = g.add_constant("w", wave({c.xs[1], c.oc, c.k, c.k}, 6));
    ir::Value* b = g.add_constant("b", wave({c.oc}, 2));
    const Shape ys{c.xs[0], c.oc, c.k * c.xs[2], c.k * c.xs[3]};
    auto deconv = [&](ir::Value* in, const std::string& n) {
      ir::Node* d = g.add_node("ConvTranspose", {in, w, b}, {n + "_y"}, n);
      d->set_attr(ir::Attribute::Ints("strides", {c.k, c.k}));
      d->output(0)->type = f32(ys);
      return d;
    };
    ir::Node* to = g.add_node(ops::kReorderOp, {x}, {"xl"}, "to", ops::kGecDomain);
    to->set_attr(ir::Attribute::String("from", P));
    to->set_attr(ir::Attribute::String("to", L));
    to->output(0)->type = x->type;
    ir::Node* dl = deconv(to->output(0), "nhwc");
    LayoutAssignment a;
    a.nodes[dl] = {{ops::Layout::kNhwc, ops::Layout::kPlain, ops::Layout::kPlain}, {ops::Layout::kPlain}};
    g.outputs() = {dl->output(0), deconv(x, "plain")->output(0)};
    auto out = run_graph(g, {{"x", wave(c.xs, 9)}}, &a);
    expect_near_all({out[0]}, {out[1]});
  }
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 16, 4, 4});
  ir::Node* up = upconv(g, x, 8, "up");
  kernels::KernelConfig config = kernels::KernelConfig::for_node(*up);
  config.input_layouts = {ops::Layout::kNChw16c};
  EXPECT_THROW(kernels::create_kernel(*up, config), Error);
  up->set_attr(ir::Attribute::Ints("strides", {1, 1}));
  config.input_layouts = {ops::Layout::kNhwc};
  try {
    kernels::create_kernel(*up, config);
    ADD_FAILURE() << "a stride-1 ConvTranspose was made to read nhwc";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("'up'"), std::string::npos) << e.what();
  }
}

/// The start of a ShuffleNet V2 unit on 24 channels from input x[1,3,6,6]:
/// conv1 + Relu, its channel halves (slice0, slice1), and the branch on the
/// second (conv2, Relu, conv3). Returns the untouched half and the branch.
std::pair<ir::Value*, ir::Value*> shuffle_unit_halves(ir::Graph& g) {
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* c1 = unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1");
  ir::Value* half0 = slice(g, c1, 1, 0, 12, "slice0")->output(0);
  ir::Value* branch = conv(g, unary(g, "Relu", conv(g, slice(g, c1, 1, 12, 24, "slice1")->output(0), 12, 1, "conv2"),
                                    "relu2"),
                           12, 3, "conv3");
  return {half0, branch};
}

// A ShuffleNet V2 unit on 24 channels (nhwc): a channel Slice pair, a conv
// branch on one half, ChannelShuffle of the untouched half and the branch,
// then a channel Split feeding a conv and a Concat, and a Slice of a
// 32-channel map to 16. The channel moves stay nhwc (LayoutRule::
// kChannelMove): no Reorder reads or writes a value between the first
// conv and the last, and the outputs equal the plain run.
TEST(LayoutPropagation, ChannelShuffleUnitStaysChannelsLast) {
  ir::Graph g;
  const auto [half0, branch] = shuffle_unit_halves(g);
  ir::Node* shuffle = g.add_node("ChannelShuffle", {half0, branch}, {"shuffle_y"}, "shuffle", ops::kGecDomain);
  shuffle->set_attr(ir::Attribute::Int("group", 2));
  shuffle->output(0)->type = f32({1, 24, 6, 6});
  ir::Node* split = halves(g, shuffle->output(0), 1, "split");
  ir::Node* cat = concat(g, {split->output(0), conv(g, split->output(1), 12, 1, "conv4")}, "cat");
  ir::Value* c32 = conv(g, cat->output(0), 32, 1, "conv5");
  ir::Value* y = conv(g, slice(g, c32, 1, 0, 16, "slice16")->output(0), 16, 1, "conv6");
  g.outputs().push_back(unary(g, "Relu", y, "relu_out"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 4)}}, like_avx512);
  for (const char* n : {"slice0", "slice1", "shuffle", "cat"})
    EXPECT_EQ(out_layouts(a, node(g, n)), (std::vector<std::string>{L})) << n;
  EXPECT_EQ(in_layouts(a, node(g, "slice0")), (std::vector<std::string>{L, P, P, P}));
  EXPECT_EQ(in_layouts(a, node(g, "shuffle")), (std::vector<std::string>{L, L}));
  EXPECT_EQ(out_layouts(a, node(g, "split")), (std::vector<std::string>{L, L}));
  EXPECT_EQ(out_layouts(a, node(g, "slice16")), (std::vector<std::string>{L}));
  EXPECT_EQ(in_layouts(a, node(g, "conv6"))[0], L);
  const auto r = inner_reorders(g);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->input(0)->producer()->name, "conv6");  // to the plain graph output's Relu
}

// The same unit after channel_shuffle_split: the shuffle writes the two
// halves the next block reads (attribute split), both nhwc, and the
// outputs equal the plain run.
TEST(LayoutPropagation, ChannelShuffleWithSplitOutputsStaysChannelsLast) {
  ir::Graph g;
  const auto [half0, branch] = shuffle_unit_halves(g);
  ir::Node* shuffle =
      g.add_node("ChannelShuffle", {half0, branch}, {"shuffle_lo", "shuffle_hi"}, "shuffle", ops::kGecDomain);
  shuffle->set_attr(ir::Attribute::Int("group", 2));
  shuffle->set_attr(ir::Attribute::Ints("split", {12, 12}));
  shuffle->output(0)->type = f32({1, 12, 6, 6});
  shuffle->output(1)->type = f32({1, 12, 6, 6});
  ir::Node* cat = concat(g, {shuffle->output(0), conv(g, shuffle->output(1), 12, 1, "conv4")}, "cat");
  g.outputs().push_back(unary(g, "Relu", conv(g, cat->output(0), 32, 1, "conv5"), "relu_out"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 5)}}, like_avx512);
  EXPECT_EQ(in_layouts(a, node(g, "shuffle")), (std::vector<std::string>{L, L}));
  EXPECT_EQ(out_layouts(a, node(g, "shuffle")), (std::vector<std::string>{L, L}));
  kernels::KernelConfig nhwc;
  nhwc.input_layouts = nhwc.output_layouts = {ops::Layout::kNhwc, ops::Layout::kNhwc};
  EXPECT_EQ(kernels::create_kernel(*node(g, "shuffle"), nhwc)->impl_name(), "native.channel_shuffle.split");
}

// A ChannelShuffle whose second input is a graph output (held plain) and
// first a blocked conv output: all its data inputs must share a layout, so
// it runs plain with the first reordered (it once kept input 0 nhwc while
// reading input 1 plain, and its kernel refused the plan).
TEST(LayoutPropagation, ChannelShuffleOfMixedInputsRunsPlain) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* a = conv(g, unary(g, "Relu", conv(g, x, 24, 3, "conv1"), "relu1"), 12, 1, "conv_a");
  ir::Value* b = conv(g, a, 12, 3, "conv_b");
  ir::Node* shuffle = g.add_node("ChannelShuffle", {a, b}, {"shuffle_y"}, "shuffle", ops::kGecDomain);
  shuffle->set_attr(ir::Attribute::Int("group", 2));
  shuffle->output(0)->type = f32({1, 24, 6, 6});
  g.outputs().push_back(b);
  g.outputs().push_back(conv(g, shuffle->output(0), 24, 1, "conv_c"));
  const LayoutAssignment a_ = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 9)}}, like_avx512);
  EXPECT_FALSE(has_layouts(a_, node(g, "shuffle")));
}

// A Split of H in a 64-channel group stays nChw16c (whole blocks move on
// any axis), and so do the convolutions around it.
TEST(LayoutPropagation, SplitOfRowsKeepsABlockedGroup) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 8, 6});
  ir::Value* c = conv(g, unary(g, "Relu", conv(g, x, 64, 3, "conv1"), "relu1"), 64, 3, "conv2");
  ir::Node* split = halves(g, c, 2, "split");
  ir::Value* sum = binary(g, "Add", conv(g, split->output(0), 64, 3, "conv_t"), conv(g, split->output(1), 64, 3, "conv_b"),
                          "add");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", sum, "gap")->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 8, 6}, 10)}}, like_avx512);
  EXPECT_EQ(out_layouts(a, node(g, "split")), (std::vector<std::string>{B, B}));
  EXPECT_EQ(a.channels_last_values, 0);
  EXPECT_TRUE(inner_reorders(g).empty());
}

// A YOLOv8-style C2f block on 16-multiple channels: a channel Split into
// two 32-channel halves, a conv chain on one, and a Concat of all four. The
// Split has an nChw16c kernel for whole 16-channel blocks (the target's
// layout query), so the block stays nChw16c with no Reorder at all (the
// Split ran plain between three Reorders before).
TEST(LayoutPropagation, ChannelSplitOfWholeBlocksStaysBlocked) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* b = conv(g, unary(g, "Relu", conv(g, x, 32, 3, "conv_a"), "relu_a"), 64, 1, "conv_b");
  ir::Node* split = halves(g, b, 1, "split");
  ir::Value* c = conv(g, split->output(1), 32, 3, "conv_c");
  ir::Value* d = conv(g, c, 32, 3, "conv_d");
  ir::Node* cat = concat(g, {split->output(0), split->output(1), c, d}, "cat");
  ir::Value* e = conv(g, cat->output(0), 32, 1, "conv_e");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", e, "gap")->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 7)}}, like_avx512);
  EXPECT_EQ(in_layouts(a, node(g, "split")), (std::vector<std::string>{B}));
  EXPECT_EQ(out_layouts(a, node(g, "split")), (std::vector<std::string>{B, B}));
  EXPECT_EQ(out_layouts(a, node(g, "cat")), (std::vector<std::string>{B}));
  EXPECT_EQ(a.channels_last_values, 0);
  EXPECT_TRUE(inner_reorders(g).empty());
}

// A Slice and a Split of the batch dim (no group: unite needs one N) after
// a plain-only op: the layout pass leaves them plain and the outputs equal
// (the channel-move weighing once looked their values up in the groups and
// failed with an internal error).
TEST(LayoutPropagation, BatchSlicesOfPlainValuesStayPlain) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {2, 4, 5, 5});
  ir::Node* sm = g.add_node("Softmax", {x}, {"sm_y"}, "sm");
  sm->output(0)->type = x->type;
  ir::Node* sl = slice(g, sm->output(0), 0, 0, 1, "slice");
  ir::Node* split = halves(g, sm->output(0), 0, "split");
  g.outputs().push_back(conv(g, sl->output(0), 16, 3, "conv_a"));
  g.outputs().push_back(conv(g, split->output(1), 16, 3, "conv_b"));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({2, 4, 5, 5}, 8)}}, like_avx512);
  EXPECT_FALSE(has_layouts(a, node(g, "slice")));
  EXPECT_FALSE(has_layouts(a, node(g, "split")));
}

// Channel moves nChw16c cannot hold (here a Slice of channels 8..23, not
// whole 16-channel blocks) in a group of 16-multiple channels weigh like
// odd-channel values: against an in-place Concat that moves more elements
// the group keeps nChw16c and the Slice runs plain between Reorders; with
// an Add instead of the Concat the group goes nhwc and the Slice with it.
TEST(LayoutPropagation, ChannelMovesWeighAgainstInPlaceConcats) {
  for (bool with_concat : {true, false}) {
    SCOPED_TRACE(with_concat ? "Concat" : "Add");
    ir::Graph g;
    ir::Value* x = input(g, "x", {1, 3, 6, 6});
    ir::Value* a0 = unary(g, "Relu", conv(g, x, 32, 3, "conv_a"), "relu_a");
    ir::Value* b = conv(g, a0, 32, 3, "conv_b");
    ir::Value* c = conv(g, a0, 32, 3, "conv_c");
    ir::Value* joined = with_concat ? concat(g, {b, c}, "cat")->output(0) : binary(g, "Add", b, c, "add");
    ir::Value* d = conv(g, joined, 32, 1, "conv_d");
    ir::Node* sl = slice(g, d, 1, 8, 24, "slice");
    ir::Value* e = conv(g, sl->output(0), 16, 3, "conv_e");
    g.outputs().push_back(global_pool(g, "GlobalAveragePool", e, "gap")->output(0));
    const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 6)}}, like_avx512);
    if (with_concat) {
      // Concat 64 x 36 elements against the Slice's 32 x 36 + 16 x 36.
      EXPECT_EQ(out_layouts(a, node(g, "cat")), (std::vector<std::string>{B}));
      EXPECT_FALSE(has_layouts(a, node(g, "slice")));
      EXPECT_EQ(a.channels_last_values, 0);
    } else {
      EXPECT_EQ(out_layouts(a, node(g, "slice")), (std::vector<std::string>{L}));
      EXPECT_EQ(out_layouts(a, node(g, "add")), (std::vector<std::string>{L}));
      EXPECT_TRUE(inner_reorders(g).empty());
    }
  }
}

TEST(LayoutReorder, BlockedPoolMatchesPlain) {
  expect_blocked_pool_matches_plain(ops::Layout::kNChw16c, {1, 16, 5, 5});
  expect_blocked_pool_matches_plain(ops::Layout::kNChw16c, {2, 32, 13, 14});
}
TEST(LayoutReorder, ChannelsLastPoolMatchesPlain) {
  expect_blocked_pool_matches_plain(ops::Layout::kNhwc, {2, 24, 5, 5});
  expect_blocked_pool_matches_plain(ops::Layout::kNhwc, {1, 40, 13, 14});
  expect_blocked_pool_matches_plain(ops::Layout::kNhwc, {2, 3, 11, 9});
  expect_blocked_pool_matches_plain(ops::Layout::kNhwc, {1, 20, 9, 10});
}

// The Transpose kernel reading an nhwc or nChw16c input and writing a plain
// or nhwc output (LayoutRule::kTranspose) gives, for every permutation of
// 4 dims, the plain Transpose's elements (read back through a Reorder where
// the output is nhwc).
TEST(LayoutReorder, TransposeOfHeldLayoutsMatchesPlain) {
  const Shape xs{2, 32, 3, 5};
  std::vector<int64_t> perm{0, 1, 2, 3};
  int cases = 0;
  do {
    for (ops::Layout in : {ops::Layout::kPlain, ops::Layout::kNhwc, ops::Layout::kNChw16c})
      for (ops::Layout out : {ops::Layout::kPlain, ops::Layout::kNhwc}) {
        if (in == ops::Layout::kPlain && out == ops::Layout::kPlain) continue;
        SCOPED_TRACE(std::string(ops::layout_name(in)) + " -> " + ops::layout_name(out) + " perm " +
                     shape_str(Shape(perm.begin(), perm.end())));
        ir::Graph g;
        ir::Value* x = input(g, "x", xs);
        auto reorder = [&](ir::Value* v, ops::Layout from, ops::Layout to, const std::string& n) {
          return reorder_node(g, v, ops::layout_name(from), ops::layout_name(to), n);
        };
        ir::Value* held = in == ops::Layout::kPlain ? x : reorder(x, ops::Layout::kPlain, in, "to");
        ir::Node* t = transpose(g, held, perm, "held");
        ir::Value* y = out == ops::Layout::kPlain ? t->output(0) : reorder(t->output(0), out, ops::Layout::kPlain, "back");
        g.outputs() = {y, transpose(g, x, perm, "plain")->output(0)};
        LayoutAssignment a;
        a.nodes[t] = {{in}, {out}};
        const auto got = run_graph(g, {{"x", wave(xs, 21)}}, &a);
        ASSERT_EQ(got[0].shape(), got[1].shape());
        for (int64_t i = 0; i < got[1].numel(); ++i)
          ASSERT_EQ(got[0].as<float>()[i], got[1].as<float>()[i]) << "element " << i;
        ++cases;
      }
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(cases, 24 * 5);
  // Negative entries and no perm attribute (the dims reversed), from nhwc
  // into nhwc and plain.
  for (const auto& [perm_attr, has] : {std::pair{std::vector<int64_t>{0, -2, -1, 1}, true},
                                       std::pair{std::vector<int64_t>{-4, -1, 1, -2}, true},
                                       std::pair{std::vector<int64_t>{}, false}})
    for (ops::Layout out : {ops::Layout::kPlain, ops::Layout::kNhwc}) {
      ir::Graph g;
      ir::Value* x = input(g, "x", xs);
      ir::Node* t = g.add_node("Transpose", {reorder_node(g, x, P, L, "to")}, {"held_y"}, "held");
      ir::Node* ref = g.add_node("Transpose", {x}, {"plain_y"}, "plain");
      Shape ys;
      for (int64_t a : ops::transpose_perm(perm_attr, has, 4)) ys.push_back(xs[static_cast<size_t>(a)]);
      for (ir::Node* n : {t, ref}) {
        if (has) n->set_attr(ir::Attribute::Ints("perm", perm_attr));
        n->output(0)->type = f32(ys);
      }
      ir::Value* y = out == ops::Layout::kPlain ? t->output(0) : reorder_node(g, t->output(0), L, P, "back");
      g.outputs() = {y, ref->output(0)};
      LayoutAssignment a;
      a.nodes[t] = {{ops::Layout::kNhwc}, {out}};
      const auto got = run_graph(g, {{"x", wave(xs, 22)}}, &a);
      ASSERT_EQ(got[0].shape(), got[1].shape());
      for (int64_t i = 0; i < got[1].numel(); ++i) ASSERT_EQ(got[0].as<float>()[i], got[1].as<float>()[i]);
    }
  // What the kernel refuses: an nChw16c output (when made), a held input
  // that is not 4-D or an nChw16c one without whole 16-channel blocks (at
  // run), each kUnsupported.
  const auto expect_unsupported = [](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    }
  };
  {
    ir::Graph g;
    ir::Node* t = transpose(g, input(g, "x", xs), {0, 1, 2, 3}, "t");
    kernels::KernelConfig config = kernels::KernelConfig::for_node(*t);
    config.output_layouts = {ops::Layout::kNChw16c};
    expect_unsupported([&] { kernels::create_kernel(*t, config); }, "an nChw16c output");
  }
  for (const auto& [shape_case, layout] : {std::pair{Shape{2, 32, 15}, ops::Layout::kNhwc},
                                           std::pair{Shape{2, 24, 3, 5}, ops::Layout::kNChw16c}}) {
    const Shape shape = shape_case;  // a copy: lambdas may not capture structured bindings (clang 14)
    ir::Graph g;
    ir::Value* x = input(g, "x", shape);
    std::vector<int64_t> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
    ir::Node* t = transpose(g, x, perm, "t");
    g.outputs() = {t->output(0)};
    LayoutAssignment a;
    a.nodes[t] = {{layout}, {ops::Layout::kPlain}};
    expect_unsupported([&] { run_graph(g, {{"x", wave(shape, 23)}}, &a); }, ops::layout_name(layout));
  }
}

// A ConvNeXt-style block in an nhwc group (24 channels): a depthwise conv,
// a Transpose to channels last, a per-channel scale over the last dim, a
// Transpose back and the residual Add, into a conv. The first Transpose
// reads the conv's nhwc output (one contiguous copy), the second writes
// nhwc for the Add and the next conv: no Reorder between the first conv
// and the global pool.
TEST(LayoutPropagation, TransposesToAndFromChannelsLastKeepTheGroupNhwc) {
  ir::Graph g;
  ir::Value* x = input(g, "x", {1, 3, 6, 6});
  ir::Value* c1 = conv(g, x, 24, 3, "conv1");
  ir::Value* w = g.add_constant("dw_W", wave({24, 1, 3, 3}, 4));
  ir::Node* dw = g.add_node("Conv", {c1, w}, {"dw_y"}, "dw");
  dw->set_attr(ir::Attribute::Ints("pads", {1, 1, 1, 1}));
  dw->set_attr(ir::Attribute::Int("group", 24));
  dw->output(0)->type = f32({1, 24, 6, 6});
  ir::Node* to_last = transpose(g, dw->output(0), {0, 2, 3, 1}, "to_last");
  ir::Node* scale = g.add_node("Mul", {to_last->output(0), g.add_constant("gamma", wave({24}, 6))}, {"scale_y"}, "scale");
  scale->output(0)->type = to_last->output(0)->type;
  ir::Node* back = transpose(g, scale->output(0), {0, 3, 1, 2}, "back");
  ir::Value* sum = binary(g, "Add", back->output(0), c1, "add");
  g.outputs().push_back(global_pool(g, "GlobalAveragePool", conv(g, sum, 24, 3, "conv2"), "gap")->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 2)}});
  EXPECT_EQ(in_layouts(a, to_last), (std::vector<std::string>{L}));
  EXPECT_EQ(out_layouts(a, to_last), (std::vector<std::string>{P}));
  EXPECT_EQ(in_layouts(a, back), (std::vector<std::string>{P}));
  EXPECT_EQ(out_layouts(a, back), (std::vector<std::string>{L}));
  EXPECT_EQ(out_layouts(a, node(g, "add")), (std::vector<std::string>{L}));
  EXPECT_TRUE(inner_reorders(g).empty());
}

// A Transpose back from channels last whose output only a plain consumer
// reads (a Flatten) writes plain: the forward walk gives it an nhwc output
// (its plain input makes that a contiguous copy), which prune rules out.
TEST(LayoutPropagation, ATransposeIntoPlainConsumersWritesPlain) {
  ir::Graph g;
  ir::Value* c1 = conv(g, input(g, "x", {1, 3, 6, 6}), 24, 3, "conv1");
  ir::Node* to_last = transpose(g, c1, {0, 2, 3, 1}, "to_last");
  ir::Node* scale = g.add_node("Mul", {to_last->output(0), g.add_constant("gamma", wave({24}, 6))}, {"scale_y"}, "scale");
  scale->output(0)->type = to_last->output(0)->type;
  ir::Node* back = transpose(g, scale->output(0), {0, 3, 1, 2}, "back");
  ir::Node* fl = g.add_node("Flatten", {back->output(0)}, {"flat"}, "flatten");
  fl->output(0)->type = f32({1, 24 * 36});
  g.outputs().push_back(fl->output(0));
  const LayoutAssignment a = run_pass_and_compare(g, {{"x", wave({1, 3, 6, 6}, 3)}});
  EXPECT_EQ(in_layouts(a, to_last), (std::vector<std::string>{L}));
  const std::vector<std::string> back_out = out_layouts(a, back);  // empty: not in the assignment, all plain
  EXPECT_TRUE(back_out.empty() || back_out == std::vector<std::string>{P});
  EXPECT_TRUE(inner_reorders(g).empty());
}

}  // namespace
}  // namespace gec::passes
