// Runtime side of the memory plan: aliases and Concat slices give the right
// values, skipped Concats stay right across runs, and graph outputs bound to
// caller buffers are produced there directly (zero copy) or, when they cannot
// be, copied. Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "memory_test_util.h"
#include "runtime/executor.h"
#include "test_util.h"

namespace gec::runtime {
namespace {

using testing::add_input;
using testing::add_op;
using testing::make;
using testing::values;
constexpr DType F = DType::kFloat32;

TEST(RuntimeMemory, AliasChainGivesTheRightValues) {
  // x[2,3] -> Relu -> Reshape[3,2] -> Flatten(axis 1)[3,2] -> Unsqueeze(0)[1,3,2]
  //        -> Squeeze(0)[3,2] -> Neg: all one buffer.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {2, 3});
  ir::Value* a = add_op(g, "Relu", {x}, "a", {2, 3});
  ir::Value* r = add_op(g, "Reshape", {a, g.add_constant("s", make<int64_t>({2}, {3, 2}))}, "r", {3, 2});
  ir::Value* f = add_op(g, "Flatten", {r}, "f", {3, 2}, {ir::Attribute::Int("axis", 1)});
  ir::Value* ax = g.add_constant("ax", make<int64_t>({1}, {0}));
  ir::Value* u = add_op(g, "Unsqueeze", {f, ax}, "u", {1, 3, 2});
  ir::Value* q = add_op(g, "Squeeze", {u, ax}, "q", {3, 2});
  ir::Value* y = add_op(g, "Neg", {q}, "y", {3, 2});
  g.outputs().push_back(y);
  memory::MemoryStats st;
  auto s = testing::plan_and_load(g, &st);
  EXPECT_EQ(st.aliases, 4);
  EXPECT_EQ(st.in_place, 1);
  EXPECT_EQ(st.arena_bytes, 64);
  testing::Planned P(g);  // the same plan again, to read the offsets
  for (ir::Value* v : {r, f, u, q, y}) EXPECT_EQ(P.at(v).offset, P.at(a).offset) << v->name();
  Tensor in = make<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto out = s->run({in.view()});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, -2, 0, -4, 0, -6}));
}

// x1[1,2,2] -> Relu = a, x2[1,1,2] -> Neg = b, c = Concat(a, b, axis 1)[1,3,2].
ir::Value* concat_graph(ir::Graph& g, bool consume) {
  ir::Value* x1 = add_input(g, "x1", F, {1, 2, 2});
  ir::Value* x2 = add_input(g, "x2", F, {1, 1, 2});
  ir::Value* a = add_op(g, "Relu", {x1}, "a", {1, 2, 2});
  ir::Value* b = add_op(g, "Neg", {x2}, "b", {1, 1, 2});
  ir::Value* c = add_op(g, "Concat", {a, b}, "c", {1, 3, 2}, {ir::Attribute::Int("axis", 1)});
  ir::Value* y = consume ? add_op(g, "Softsign", {c}, "y", {1, 3, 2}) : c;
  g.outputs().push_back(y);
  return c;
}

TEST(RuntimeMemory, ConcatInPlaceIsSkippedAndRight) {
  ir::Graph g;
  ir::Value* c = concat_graph(g, true);
  auto s = testing::plan_and_load(g);
  testing::Planned P(g);
  ASSERT_TRUE(P.plan.concat_done(P.ids.id(c)));
  Tensor x1 = make<float>({1, 2, 2}, {-1, 2, 3, -4});
  Tensor x2 = make<float>({1, 1, 2}, {3, -1});
  // c = {0, 2, 3, 0, -3, 1}; softsign v / (1 + |v|).
  const std::vector<float> want = {0, 2.f / 3, 3.f / 4, 0, -3.f / 4, 1.f / 2};
  for (int run = 0; run < 2; ++run) testing::expect_close(values<float>(s->run({x1.view(), x2.view()})[0]), want);
}

TEST(RuntimeMemory, ConcatOutputBoundToCallerMemoryStillCopiesItsSlices) {
  ir::Graph g;
  concat_graph(g, false);
  auto s = testing::plan_and_load(g);
  Tensor x1 = make<float>({1, 2, 2}, {-1, 2, 3, -4});
  Tensor x2 = make<float>({1, 1, 2}, {3, -1});
  const std::vector<float> want = {0, 2, 3, 0, -3, 1};
  Tensor out(F, {1, 3, 2});
  s->run({x1.view(), x2.view()}, {out.view()});
  EXPECT_EQ(values<float>(out), want);
  // Unbound again: the skipped Concat leaves c in the arena, copied out.
  EXPECT_EQ(values<float>(s->run({x1.view(), x2.view()})[0]), want);
  Tensor out2(F, {1, 3, 2});
  s->run({x1.view(), x2.view()}, {out2.view()});
  EXPECT_EQ(values<float>(out2), want);
}

// Session::run's returned tensors: storage the Session recycles, two
// blocks per output lent in turn. In the usual loop (the previous result
// held while the next run writes) the runs alternate between the two
// blocks; a block comes back only once every Tensor sharing it is gone, so
// a held tensor keeps its values, and a third run while both are held gets
// a new block. A held output stays valid after the Session is gone. For
// outputs of `n` floats: 6 (heap blocks) and 2^18 + 6 (1 MiB and more:
// huge-page blocks).
void expect_outputs_recycled(int64_t n) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {n});
  g.outputs().push_back(add_op(g, "Neg", {x}, "y", {n}));
  auto s = testing::plan_and_load(g);
  std::vector<Tensor> in;
  for (float v : {1.f, 2.f, 3.f, 4.f}) {
    Tensor t(F, {n});
    std::fill(t.as<float>(), t.as<float>() + n, v);
    in.push_back(t);
  }
  const auto all = [n](const Tensor& t, float v) {
    return std::all_of(t.as<float>(), t.as<float>() + n, [v](float e) { return e == v; });
  };
  std::vector<Tensor> a = s->run({in[0].view()});
  std::vector<Tensor> b = s->run({in[1].view()});  // a held: the other block
  EXPECT_NE(b[0].data(), a[0].data());
  const void* first = a[0].data();
  a.clear();
  // Had a's storage gone back to the allocator, this would likely take it.
  const Tensor decoy(F, {n});
  std::vector<Tensor> c = s->run({in[2].view()});  // a dropped, b held: a's block again
  EXPECT_NE(decoy.data(), first);
  EXPECT_EQ(c[0].data(), first);
  EXPECT_TRUE(all(b[0], -2.f));
  EXPECT_TRUE(all(c[0], -3.f));
  std::vector<Tensor> d = s->run({in[3].view()});  // b and c held: a new block
  EXPECT_NE(d[0].data(), b[0].data());
  EXPECT_NE(d[0].data(), c[0].data());
  EXPECT_TRUE(all(b[0], -2.f));
  EXPECT_TRUE(all(c[0], -3.f));
  EXPECT_TRUE(all(d[0], -4.f));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d[0].data()) % 64, 0u);
  s.reset();
  EXPECT_TRUE(all(b[0], -2.f));
  EXPECT_TRUE(all(d[0], -4.f));
}

TEST(RuntimeMemory, OutputStorageIsReusedOnlyOnceTheCallerDroppedIt) { expect_outputs_recycled(6); }
TEST(RuntimeMemory, LargeOutputStorageIsReusedOnlyOnceTheCallerDroppedIt) {
  expect_outputs_recycled((int64_t{1} << 18) + 6);
}

// Runs `g` through an Executor over an arena filled with 0xAB.
// The graph goes through the .gom writer and reader, as a Session's does;
// `offset(name)` is a value's arena offset in the loaded plan.
struct ArenaRun {
  model::LoadedModel model;
  std::vector<uint8_t> arena;
  std::unique_ptr<Executor> ex;
  ArenaRun(ir::Graph& g) {
    testing::Planned p(g);
    model = model::read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(testing::gom_of(g, p)));
    arena.assign(static_cast<size_t>(model.memory_plan.arena_bytes) + 64, 0xAB);
    ex = std::make_unique<Executor>(model, arena.data(), 1, false);
  }
  int64_t offset(const std::string& name) const {
    for (int32_t id = 0; id < model.ids.size(); ++id)
      if (model.ids.value(id)->name() == name) return model.memory_plan.at(id).offset;
    ADD_FAILURE() << "no value " << name;
    return 0;
  }
  bool untouched(int64_t off, int64_t bytes) const {
    for (int64_t i = off; i < off + bytes; ++i)
      if (arena[static_cast<size_t>(i)] != 0xAB) return false;
    return true;
  }
};

TEST(RuntimeMemory, OutputIsWrittenStraightIntoCallerMemory) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {5});
  ir::Value* y = add_op(g, "Neg", {x}, "y", {5});
  g.outputs().push_back(y);
  ArenaRun r(g);
  Tensor in = make<float>({5}, {1, -2, 3, -4, 5});
  Tensor out(F, {5});
  r.ex->bind_input(0, in.view());
  ASSERT_TRUE(r.ex->bind_output(0, out.view()));
  r.ex->run();
  EXPECT_EQ(values<float>(out), (std::vector<float>{-1, 2, -3, 4, -5}));
  EXPECT_EQ(r.ex->output(0).data, out.data());
  EXPECT_TRUE(r.untouched(r.offset("y"), 20)) << "the output went through the arena";
  r.ex->unbind_outputs();
  r.ex->run();
  EXPECT_EQ(r.ex->output(0).data, r.arena.data() + r.offset("y"));
  EXPECT_FALSE(r.untouched(r.offset("y"), 20));
}

TEST(RuntimeMemory, InPlaceOutputReadsTheArenaAndWritesTheCaller) {
  // t = Relu(x) in the arena; y = Neg(t) planned over t but bound to the caller.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {4});
  ir::Value* t = add_op(g, "Relu", {x}, "t", {4});
  ir::Value* y = add_op(g, "Neg", {t}, "y", {4});
  g.outputs().push_back(y);
  ArenaRun r(g);
  ASSERT_EQ(r.offset("y"), r.offset("t"));
  Tensor in = make<float>({4}, {1, -2, 3, -4});
  Tensor out(F, {4});
  r.ex->bind_input(0, in.view());
  ASSERT_TRUE(r.ex->bind_output(0, out.view()));
  r.ex->run();
  EXPECT_EQ(values<float>(out), (std::vector<float>{-1, 0, -3, 0}));
  std::vector<float> arena_t(4);
  std::memcpy(arena_t.data(), r.arena.data() + r.offset("t"), 16);
  EXPECT_EQ(arena_t, (std::vector<float>{1, 0, 3, 0}));  // t only: y never touched the arena
}

TEST(RuntimeMemory, OutputsThatCannotBeBoundAreCopied) {
  // y = Relu(x) is an output and has an alias z read later (w = Exp(z)):
  // binding y would leave z without data. x itself is an output too, twice.
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {3});
  ir::Value* y = add_op(g, "Relu", {x}, "y", {3});
  ir::Value* z = add_op(g, "Identity", {y}, "z", {3});
  ir::Value* w = add_op(g, "Neg", {z}, "w", {3});
  g.outputs() = {y, w, x, x};
  auto s = testing::plan_and_load(g);
  testing::Planned P(g);
  EXPECT_EQ(P.at(z).offset, P.at(y).offset);
  Tensor in = make<float>({3}, {-1, 2, -3});
  std::vector<Tensor> outs;
  std::vector<TensorView> views;
  for (int i = 0; i < 4; ++i) outs.emplace_back(F, Shape{3});
  for (auto& o : outs) views.push_back(o.view());
  s->run({in.view()}, views);
  EXPECT_EQ(values<float>(outs[0]), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(values<float>(outs[1]), (std::vector<float>{-0.f, -2, -0.f}));
  EXPECT_EQ(values<float>(outs[2]), (std::vector<float>{-1, 2, -3}));
  EXPECT_EQ(values<float>(outs[3]), (std::vector<float>{-1, 2, -3}));

  ir::Graph h;
  ir::Value* hx = add_input(h, "x", F, {3});
  ir::Value* hy = add_op(h, "Relu", {hx}, "y", {3});
  add_op(h, "Identity", {hy}, "z", {3});
  h.outputs() = {hy, h.find_value("z"), hx};
  ArenaRun r(h);
  EXPECT_FALSE(r.ex->output_bindable(0));  // z shares y's bytes after y
  EXPECT_TRUE(r.ex->output_bindable(1));
  EXPECT_FALSE(r.ex->output_bindable(2));  // a graph input
}

TEST(RuntimeMemory, WrongOutputBufferIsRefusedBeforeRunning) {
  ir::Graph g;
  ir::Value* x = add_input(g, "x", F, {3});
  g.outputs().push_back(add_op(g, "Neg", {x}, "y", {3}));
  auto s = testing::plan_and_load(g);
  Tensor in = make<float>({3}, {1, 2, 3});
  Tensor bad(F, {4});
  try {
    s->run({in.view()}, {bad.view()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos);
  }
  Tensor good(F, {3});
  s->run({in.view()}, {good.view()});  // still usable after the error
  EXPECT_EQ(values<float>(good), (std::vector<float>{-1, -2, -3}));
}

}  // namespace
}  // namespace gec::runtime
