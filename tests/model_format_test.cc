// .gom offline model file: byte layout (from ../shared/docs/DESIGN.md and
// src/model/format.h), full IR round trip, and refusal of truncated,
// corrupted, newer-version and garbage files without crashing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <set>

#include <onnx/onnx_pb.h>

#include "gec/compiler.h"
#include "gec/error.h"
#include "gec/runtime.h"
#include "gom.pb.h"
#include "model/format.h"
#include "model/reader.h"
#include "model/writer.h"
#include "memory/memory_plan.h"
#include "schedule/execution_plan.h"

namespace gec::model {
namespace {

using ir::Attribute;
using ir::Dim;
using ir::Graph;
using ir::Node;
using ir::TensorType;
using ir::Value;
using ir::ValueIndex;

// Every dtype with byte data (string handled separately).
const DType kByteDtypes[] = {DType::kFloat32, DType::kUInt8,  DType::kInt8,      DType::kUInt16,
                             DType::kInt16,   DType::kInt32,  DType::kInt64,     DType::kBool,
                             DType::kFloat16, DType::kFloat64, DType::kUInt32,   DType::kUInt64,
                             DType::kComplex64, DType::kComplex128, DType::kBFloat16};

Tensor patterned(DType dt, Shape shape, int seed) {
  Tensor t(dt, std::move(shape));
  auto* b = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < t.bytes(); ++i) b[i] = static_cast<uint8_t>(dt == DType::kBool ? (i + seed) % 2 : i * 13 + seed);
  return t;
}

Tensor strings(Shape shape, std::vector<std::string> v) {
  Tensor t(DType::kString, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.as<std::string>()[i] = v[i];
  return t;
}

// main:  x[N,3] -> Add(x, c_float32) -> a ; If(cond) { then: Mul(a, k) ; else: Loop-ish
//        body with a nested subgraph reading `a` from two levels up } -> y
// plus one constant of every dtype consumed by a Concat-like node, an omitted
// optional input, every attribute kind and fused_from (the plans: make_model).
std::unique_ptr<Graph> make_graph() {
  auto g = std::make_unique<Graph>();
  g->name = "main";
  TensorType xt;
  xt.dtype = DType::kFloat32;
  xt.has_shape = true;
  xt.dims = {Dim{-1, "N"}, Dim{3, ""}};
  Value* x = g->add_value("x", xt);
  g->inputs().push_back(x);
  Value* cond = g->add_value("cond", TensorType::of(DType::kBool, {}));
  g->inputs().push_back(cond);

  Value* c = g->add_constant("c_f32", patterned(DType::kFloat32, {3}, 1));
  Node* add = g->add_node("Add", {x, c}, {"a"}, "add0");
  add->fused_from = {"onnx_add", "onnx_relu"};
  add->output(0)->type = xt;

  // One constant per dtype, plus scalar, empty and string constants.
  std::vector<Value*> consts;
  int seed = 3;
  for (DType dt : kByteDtypes) consts.push_back(g->add_constant(std::string("k_") + dtype_name(dt), patterned(dt, {2, 3}, seed++)));
  consts.push_back(g->add_constant("k_scalar", patterned(DType::kInt64, {}, 9)));
  consts.push_back(g->add_constant("k_empty", Tensor(DType::kFloat32, {0, 4})));
  consts.push_back(g->add_constant("k_str", strings({3}, {"", "hello", std::string("a\0b", 3)})));
  std::vector<Value*> pack_in = consts;
  pack_in.insert(pack_in.begin() + 2, nullptr);  // omitted optional input
  Node* pack = g->add_node("PackAll", pack_in, {"packed", "packed2"}, "pack", "com.graphengine");
  pack->output(0)->type = TensorType::of(DType::kUInt8, {64});
  pack->output(1)->type = TensorType::of(DType::kUInt8, {16});
  pack->attrs.push_back(Attribute::Int("i", -7));
  pack->attrs.push_back(Attribute::Float("f", 2.5f));
  pack->attrs.push_back(Attribute::String("s", std::string("x\0y", 3)));
  pack->attrs.push_back(Attribute::Ints("ints", {1, -2, 1LL << 40}));
  pack->attrs.push_back(Attribute::Floats("floats", {0.25f, -1.f}));
  pack->attrs.push_back(Attribute::Strings("strings", {"p", "", "q"}));
  pack->attrs.push_back(Attribute::TensorAttr("t", patterned(DType::kFloat16, {2, 2}, 5)));
  pack->attrs.push_back(Attribute::TensorAttr("ts", strings({2, 1}, {"u", "vw"})));

  // If with two branches; the else branch nests one more subgraph that reads
  // `a` (two scopes up) and `x`.
  auto then_g = std::make_shared<Graph>();
  then_g->name = "then";
  then_g->parent = g.get();
  Value* k = then_g->add_constant("k", patterned(DType::kFloat32, {1}, 2));
  Node* mul = then_g->add_node("Mul", {add->output(0), k}, {"t_out"}, "mul");
  then_g->outputs().push_back(mul->output(0));

  auto else_g = std::make_shared<Graph>();
  else_g->name = "else";
  else_g->parent = g.get();
  Value* iter = else_g->add_value("iter", TensorType::of(DType::kInt64, {}));
  else_g->inputs().push_back(iter);
  auto inner = std::make_shared<Graph>();
  inner->name = "inner";
  inner->parent = else_g.get();
  // Names need not be UTF-8 (ONNX does not enforce it).
  Node* neg = inner->add_node("Neg", {add->output(0)}, {"n_out\xff"}, "neg\xc3");
  inner->outputs().push_back(neg->output(0));
  inner->outputs().push_back(x);  // outer-scope value as a subgraph output
  Node* wrap = else_g->add_node("Scope", {iter}, {"e_out", "e_x"}, "wrap");
  wrap->attrs.push_back(Attribute::GraphAttr("body", inner));
  else_g->outputs().push_back(wrap->output(0));

  Node* iff = g->add_node("If", {cond}, {"y"}, "if0");
  iff->attrs.push_back(Attribute::GraphAttr("then_branch", then_g));
  iff->attrs.push_back(Attribute::GraphAttr("else_branch", else_g));
  g->outputs().push_back(iff->output(0));
  g->outputs().push_back(pack->output(0));
  return g;
}

/// make_graph's model with hand-made plans: constants in WEIGHTS, x and cond
/// graph inputs, "packed" at arena byte 128 and "packed2" at 0 (arena 4096
/// bytes), everything else dynamic; one step per node in order, add0's
/// kernel "cpu.binary" and pack's output layouts {plain, plain}.
struct HandModel {
  std::unique_ptr<Graph> g;
  ValueIndex ids;
  memory::MemoryPlan mp;
  schedule::ExecutionPlan ep;
};

HandModel make_model() {
  HandModel m;
  m.g = make_graph();
  m.ids = ValueIndex(*m.g);
  m.mp.arena_bytes = 4096;
  m.mp.values.assign(static_cast<size_t>(m.ids.size()), {memory::Storage::kDynamic, 0});
  for (int32_t id = 0; id < m.ids.size(); ++id) {
    const Value* v = m.ids.value(id);
    memory::Placement& p = m.mp.at(id);
    if (v->is_constant()) p.storage = memory::Storage::kWeight;
    if (v->name() == "x" || v->name() == "cond") p.storage = memory::Storage::kGraphInput;
    if (v->name() == "packed") p = {memory::Storage::kArena, 128};
    if (v->name() == "packed2") p = {memory::Storage::kArena, 0};
  }
  ir::for_each_graph(static_cast<const Graph&>(*m.g), [&](const Graph& sg) {
    schedule::GraphSchedule& gs = m.ep.graphs.emplace_back();
    int32_t i = 0;
    for (const auto& n : sg.nodes()) {
      schedule::Step st;
      st.node = i++;
      if (n->name == "add0") st.kernel = "cpu.binary";
      // Layout codes of each output (non-plain ones need 4-D float values,
      // which this graph has not: LayoutPropagation.* round-trip those).
      if (n->name == "pack") st.output_layouts = {ops::Layout::kPlain, ops::Layout::kPlain};
      gs.steps.push_back(st);
    }
  });
  return m;
}

const std::string kMeta = R"({"compiler":"gec 0.1","opt":"O2"})";

std::vector<uint8_t> write_model(const HandModel& m, const std::string& meta = kMeta, int32_t opset = 17) {
  return write_gom(*m.g, m.ids, m.mp, m.ep, opset, meta);
}

std::vector<uint8_t> write_test_model() { return write_model(make_model()); }

/// All-plain plans for a graph of constants and computed values.
std::vector<uint8_t> write_plain(const Graph& g, int32_t opset, const std::string& meta) {
  const ValueIndex ids(g);
  memory::MemoryPlan mp;
  for (int32_t id = 0; id < ids.size(); ++id)
    mp.values.push_back(memory::Placement{ids.value(id)->is_constant() ? memory::Storage::kWeight : memory::Storage::kDynamic, 0});
  schedule::ExecutionPlan ep;
  ir::for_each_graph(g, [&](const Graph& sg) {
    schedule::GraphSchedule& gs = ep.graphs.emplace_back();
    for (int32_t i = 0; i < static_cast<int32_t>(sg.nodes().size()); ++i) {
      schedule::Step st;
      st.node = i;
      gs.steps.push_back(st);
    }
  });
  return write_gom(g, ids, mp, ep, opset, meta);
}

// ---- structural comparison ----------------------------------------------------

void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& where) {
  ASSERT_EQ(a.dtype(), b.dtype()) << where;
  ASSERT_EQ(a.shape(), b.shape()) << where;
  if (a.dtype() == DType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.as<std::string>()[i], b.as<std::string>()[i]) << where;
  } else if (a.bytes() > 0) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0) << where;
  }
}

// Graphs a and b (ids from ia and ib) are the same, value ids included.
void expect_same_graph(const Graph& a, const Graph& b, const ValueIndex& ia, const ValueIndex& ib) {
  auto id_a = [&](const Value* v) { return ia.id_or_none(v); };
  auto id_b = [&](const Value* v) { return ib.id_or_none(v); };
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.values().size(), b.values().size()) << a.name;
  for (size_t i = 0; i < a.values().size(); ++i) {
    const Value& va = *a.values()[i];
    const Value& vb = *b.values()[i];
    const std::string where = a.name + "/" + va.name();
    EXPECT_EQ(va.name(), vb.name());
    EXPECT_EQ(va.type, vb.type) << where;
    EXPECT_EQ(id_a(&va), id_b(&vb)) << where;
    ASSERT_EQ(va.is_constant(), vb.is_constant()) << where;
    if (va.is_constant()) expect_same_tensor(*va.constant, *vb.constant, where);
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size()) << a.name;
  auto na = a.node_list(), nb = b.node_list();
  for (size_t i = 0; i < na.size(); ++i) {
    const Node& x = *na[i];
    const Node& y = *nb[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op_type, y.op_type);
    EXPECT_EQ(x.domain, y.domain);
    EXPECT_EQ(x.fused_from, y.fused_from);
    ASSERT_EQ(x.inputs().size(), y.inputs().size()) << x.name;
    for (size_t j = 0; j < x.inputs().size(); ++j) EXPECT_EQ(id_a(x.input(j)), id_b(y.input(j))) << x.name;
    ASSERT_EQ(x.outputs().size(), y.outputs().size()) << x.name;
    for (size_t j = 0; j < x.outputs().size(); ++j) EXPECT_EQ(id_a(x.output(j)), id_b(y.output(j))) << x.name;
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << x.name;
    for (size_t j = 0; j < x.attrs.size(); ++j) {
      const Attribute& p = x.attrs[j];
      const Attribute& q = y.attrs[j];
      const std::string where = x.name + "." + p.name;
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.kind, q.kind) << where;
      EXPECT_EQ(p.i, q.i) << where;
      EXPECT_EQ(p.f, q.f) << where;
      EXPECT_EQ(p.s, q.s) << where;
      EXPECT_EQ(p.ints, q.ints) << where;
      EXPECT_EQ(p.floats, q.floats) << where;
      EXPECT_EQ(p.strings, q.strings) << where;
      ASSERT_EQ(p.t != nullptr, q.t != nullptr) << where;
      if (p.t) expect_same_tensor(*p.t, *q.t, where);
      ASSERT_EQ(p.g != nullptr, q.g != nullptr) << where;
      if (p.g) {
        EXPECT_EQ(q.g->parent, &b) << where;
        expect_same_graph(*p.g, *q.g, ia, ib);
      }
    }
  }
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) EXPECT_EQ(id_a(a.inputs()[i]), id_b(b.inputs()[i]));
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(id_a(a.outputs()[i]), id_b(b.outputs()[i]));
}

// ---- byte-level helpers (written from the format spec, not from writer.cc) ----

template <typename T>
T get(const std::vector<uint8_t>& b, size_t at) {
  T x;
  std::memcpy(&x, b.data() + at, sizeof(T));
  return x;
}
template <typename T>
void set(std::vector<uint8_t>& b, size_t at, T x) {
  std::memcpy(b.data() + at, &x, sizeof(T));
}

struct Entry { uint32_t kind; uint64_t offset, size, hash; };

std::vector<Entry> entries(const std::vector<uint8_t>& b) {
  std::vector<Entry> r;
  const uint32_t count = get<uint32_t>(b, 24);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = 40 + 32 * i;
    r.push_back({get<uint32_t>(b, at), get<uint64_t>(b, at + 8), get<uint64_t>(b, at + 16), get<uint64_t>(b, at + 24)});
  }
  return r;
}

Entry entry_of(const std::vector<uint8_t>& b, uint32_t kind) {
  for (const Entry& e : entries(b))
    if (e.kind == kind) return e;
  ADD_FAILURE() << "no partition of kind " << kind;
  return {};
}

// The WEIGHTS_XXH64 partition of format version 3 for `w`: block_bytes, then
// the XXH64 of each block_bytes piece of `w` (the last one shorter).
std::vector<uint8_t> block_hashes(const uint8_t* w, uint64_t n, uint64_t block_bytes) {
  std::vector<uint8_t> out(8);
  std::memcpy(out.data(), &block_bytes, 8);
  for (uint64_t at = 0; at < n; at += block_bytes) {
    out.resize(out.size() + 8);
    set<uint64_t>(out, out.size() - 8, XXH64(w + at, std::min(block_bytes, n - at), 0));
  }
  return out;
}

// Recomputes every checksum, so a test can make content changes that only the
// semantic checks can catch: WEIGHTS_XXH64 (of its own block size, when it
// fits its partition), each partition's hash, and the header's hash (format
// version 2: of everything after the header; 3: without WEIGHTS' bytes).
void reseal(std::vector<uint8_t>& b) {
  const uint32_t count = get<uint32_t>(b, 24);
  auto fits = [&](uint64_t off, uint64_t size) { return off <= b.size() && size <= b.size() - off; };
  std::optional<Entry> weights;
  for (uint32_t i = 0; i < count && 40 + 32 * uint64_t{i} + 32 <= b.size(); ++i) {
    const size_t at = 40 + 32 * i;
    if (get<uint32_t>(b, at) == 2 && fits(get<uint64_t>(b, at + 8), get<uint64_t>(b, at + 16)))
      weights = Entry{2, get<uint64_t>(b, at + 8), get<uint64_t>(b, at + 16), 0};
  }
  for (uint32_t i = 0; i < count && 40 + 32 * uint64_t{i} + 32 <= b.size(); ++i) {
    const size_t at = 40 + 32 * i;
    const uint64_t off = get<uint64_t>(b, at + 8), size = get<uint64_t>(b, at + 16);
    if (get<uint32_t>(b, at) != 4 || !weights || !fits(off, size) || size < 8) continue;
    const uint64_t block = get<uint64_t>(b, off);
    if (block == 0 || size != ((weights->size + block - 1) / block + 1) * 8) continue;  // left as it is
    const std::vector<uint8_t> h = block_hashes(b.data() + weights->offset, weights->size, block);
    std::memcpy(b.data() + off, h.data(), size);
  }
  for (uint32_t i = 0; i < count && 40 + 32 * uint64_t{i} + 32 <= b.size(); ++i) {
    const size_t at = 40 + 32 * i;
    const uint64_t off = get<uint64_t>(b, at + 8), size = get<uint64_t>(b, at + 16);
    if (fits(off, size)) set<uint64_t>(b, at + 24, XXH64(b.data() + off, size, 0));
  }
  if (get<uint32_t>(b, 8) >= 3 && weights && weights->offset >= 40) {
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, b.data() + 40, weights->offset - 40);
    XXH64_update(st, b.data() + weights->offset + weights->size, b.size() - weights->offset - weights->size);
    set<uint64_t>(b, 32, XXH64_digest(st));
    XXH64_freeState(st);
  } else {
    set<uint64_t>(b, 32, XXH64(b.data() + 40, b.size() - 40, 0));
  }
}

// Replaces MODEL_DEF with `m` (MODEL_DEF is not the last partition, so the
// file is re-assembled: MODEL_DEF, METADATA, WEIGHTS_XXH64, WEIGHTS at a
// 64-aligned offset).
std::vector<uint8_t> with_model_def(const std::vector<uint8_t>& b, const gom::Model& m) {
  const Entry meta = entry_of(b, 3), sums = entry_of(b, 4), w = entry_of(b, 2);
  std::string def;
  m.SerializeToString(&def);
  std::vector<uint8_t> out(40 + 4 * 32, 0);
  std::memcpy(out.data(), b.data(), 40);
  auto append = [&](uint32_t kind, const uint8_t* p, size_t n, int slot, bool align) {
    if (align) out.resize((out.size() + 63) / 64 * 64, 0);
    const size_t at = 40 + 32 * slot;
    set<uint32_t>(out, at, kind);
    set<uint64_t>(out, at + 8, out.size());
    set<uint64_t>(out, at + 16, n);
    out.insert(out.end(), p, p + n);
  };
  append(1, reinterpret_cast<const uint8_t*>(def.data()), def.size(), 0, false);
  append(3, b.data() + meta.offset, meta.size, 1, false);
  append(4, b.data() + sums.offset, sums.size, 2, false);
  append(2, b.data() + w.offset, w.size, 3, true);
  set<uint32_t>(out, 24, 4);
  set<uint64_t>(out, 16, out.size());
  reseal(out);
  return out;
}

gom::Model model_def_of(const std::vector<uint8_t>& b) {
  const Entry e = entry_of(b, 1);
  gom::Model m;
  EXPECT_TRUE(m.ParseFromArray(b.data() + e.offset, static_cast<int>(e.size)));
  return m;
}

// The error read_gom_bytes raises; fails the test if it returns or raises
// anything other than kCorruptFile.
std::string load_error(const std::vector<uint8_t>& b) {
  try {
    read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "file of " << b.size() << " bytes was accepted";
  return "";
}

std::string temp_gom(const std::string& name) {
  return ::testing::TempDir() + "/gec_model_" + std::to_string(::getpid()) + "_" + name + ".gom";
}

// ---- tests ----------------------------------------------------------------------

TEST(ModelFormat, HeaderAndPartitionTableFollowTheSpec) {
  const std::vector<uint8_t> b = write_test_model();
  ASSERT_GE(b.size(), 40u + 4 * 32u);
  EXPECT_EQ(std::memcmp(b.data(), "GECOM\0\0\0", 8), 0);
  EXPECT_EQ(get<uint32_t>(b, 8), 3u);            // format_version
  EXPECT_EQ(get<uint32_t>(b, 12), 40u);          // header_size
  EXPECT_EQ(get<uint64_t>(b, 16), b.size());     // file_size
  EXPECT_EQ(get<uint32_t>(b, 24), 4u);           // partition_count
  EXPECT_EQ(get<uint32_t>(b, 28), 0u);           // flags
  std::set<uint32_t> kinds;
  for (const Entry& e : entries(b)) {
    kinds.insert(e.kind);
    ASSERT_LE(e.offset + e.size, b.size());
    EXPECT_GE(e.offset, 40u + 4 * 32u);
    EXPECT_EQ(e.hash, XXH64(b.data() + e.offset, e.size, 0));
  }
  EXPECT_EQ(kinds, (std::set<uint32_t>{1, 2, 3, 4}));
  const Entry w = entry_of(b, 2), sums = entry_of(b, 4);
  EXPECT_EQ(w.offset % 64, 0u);
  // The header's hash: every byte after the header but WEIGHTS' (which is
  // last here, after its alignment padding).
  EXPECT_EQ(w.offset + w.size, b.size());
  EXPECT_EQ(get<uint64_t>(b, 32), XXH64(b.data() + 40, w.offset - 40, 0));
  // WEIGHTS_XXH64: 1 MiB blocks, one hash each.
  EXPECT_EQ(get<uint64_t>(b, sums.offset), uint64_t{1} << 20);
  EXPECT_EQ(std::vector<uint8_t>(b.begin() + sums.offset, b.begin() + sums.offset + sums.size),
            block_hashes(b.data() + w.offset, w.size, uint64_t{1} << 20));
  const Entry meta = entry_of(b, 3);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data() + meta.offset), meta.size), kMeta);
}

TEST(ModelFormat, WriterAssignsAlignedWeightOffsets) {
  const HandModel hm = make_model();
  const std::vector<uint8_t> b = write_model(hm);
  const uint64_t wsize = entry_of(b, 2).size;
  const gom::Model m = model_def_of(b);
  int constants = 0;
  for (int32_t id = 0; id < hm.ids.size(); ++id) {
    const Value* v = hm.ids.value(id);
    if (!v->is_constant()) continue;
    if (v->owner() == hm.g.get()) ++constants;
    const gom::Value& pv = m.values(id);
    EXPECT_EQ(pv.data_offset() % 64, 0) << v->name();
    EXPECT_LE(static_cast<uint64_t>(pv.data_offset()) + (v->constant->dtype() == DType::kString ? 0 : v->constant->bytes()),
              wsize);
  }
  EXPECT_EQ(constants, 19);
  // Ids are dense over all graphs: main's values first.
  EXPECT_EQ(hm.ids.id(hm.g->values().front().get()), 0);
}

TEST(ModelFormat, RoundTripsTheWholeIr) {
  const HandModel original = make_model();
  const std::vector<uint8_t> b = write_model(original);
  const std::string path = temp_gom("roundtrip");
  write_file(path, b);
  for (int from_file = 0; from_file < 2; ++from_file) {
    SCOPED_TRACE(from_file ? "read_gom_file" : "read_gom_bytes");
    LoadedModel m = from_file ? read_gom_file(path)
                              : read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b));
    ASSERT_TRUE(m.graph);
    EXPECT_EQ(m.arena_bytes, 4096);
    EXPECT_EQ(m.opset, 17);
    EXPECT_EQ(m.format_version, 3u);
    EXPECT_EQ(m.metadata_json, kMeta);
    EXPECT_EQ(static_cast<uint64_t>(m.weights_bytes), entry_of(b, 2).size);
    EXPECT_TRUE(m.keepalive);
    m.graph->verify();
    expect_same_graph(*original.g, *m.graph, original.ids, m.ids);
    // The plans come back as written.
    ASSERT_EQ(m.memory_plan.values.size(), original.mp.values.size());
    for (size_t i = 0; i < original.mp.values.size(); ++i) {
      EXPECT_EQ(m.memory_plan.values[i].storage, original.mp.values[i].storage) << i;
      EXPECT_EQ(m.memory_plan.values[i].offset, original.mp.values[i].offset) << i;
    }
    ASSERT_EQ(m.execution_plan.graphs.size(), original.ep.graphs.size());
    for (size_t gi = 0; gi < original.ep.graphs.size(); ++gi) {
      const auto& want = original.ep.graphs[gi].steps;
      const auto& got = m.execution_plan.graphs[gi].steps;
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].node, want[i].node);
        EXPECT_EQ(got[i].kernel, want[i].kernel);
        EXPECT_EQ(got[i].input_layouts, want[i].input_layouts);
        EXPECT_EQ(got[i].output_layouts, want[i].output_layouts);
      }
    }
    EXPECT_EQ(m.graphs.size(), 4u);
    EXPECT_EQ(m.graphs[0], m.graph.get());

    // Outer-scope references resolve to the enclosing graphs' own values.
    Graph* else_g = m.graph->node_list().back()->get_graph("else_branch");
    ASSERT_NE(else_g, nullptr);
    Graph* inner = else_g->node_list().front()->get_graph("body");
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(inner->parent, else_g);
    EXPECT_EQ(inner->node_list().front()->input(0), m.graph->find_value("a"));
    EXPECT_EQ(inner->outputs()[1], m.graph->find_value("x"));

    // Numeric constants point into one contiguous, 64-byte aligned blob.
    const Value* c0 = m.graph->find_value("c_f32");
    for (const auto& v : m.graph->values()) {
      if (!v->is_constant() || v->constant->dtype() == DType::kString) continue;
      const auto addr = reinterpret_cast<uintptr_t>(v->constant->data());
      EXPECT_EQ(addr % 64, 0u) << v->name();
      const gom::Model def = model_def_of(b);
      EXPECT_EQ(addr - reinterpret_cast<uintptr_t>(c0->constant->data()),
                static_cast<uintptr_t>(def.values(m.ids.id(v.get())).data_offset() - def.values(m.ids.id(c0)).data_offset()))
          << v->name();
    }
  }
  std::remove(path.c_str());
}

TEST(ModelFormat, ConstantsOutliveTheCallersBuffer) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(write_test_model());
  LoadedModel m = read_gom_bytes(bytes);
  bytes.reset();
  const Value* k = m.graph->find_value("k_int64");
  ASSERT_NE(k, nullptr);
  // patterned(kInt64, {2,3}, seed 9): byte i = i*13 + 9 (k_int64 is the 7th dtype, seed 3+6).
  EXPECT_EQ(static_cast<const uint8_t*>(k->constant->data())[1], 13 + 9);
}

TEST(ModelFormat, SharedConstantDataIsStoredOnce) {
  Graph g;
  Tensor t = patterned(DType::kFloat32, {16}, 1);
  Value* a = g.add_constant("a", t);
  Value* b = g.add_constant("b", t);  // same storage
  Node* n = g.add_node("Add", {a, b}, {"y"});
  g.outputs().push_back(n->output(0));
  const std::vector<uint8_t> bytes = write_plain(g, 17, "{}");
  const gom::Model m = model_def_of(bytes);
  EXPECT_EQ(m.values(0).data_offset(), m.values(1).data_offset());
  EXPECT_EQ(entry_of(bytes, 2).size, 64u);
}

// Equal bytes in separate storage (two initializers an exporter wrote out
// twice, a weight folded into a copy) are stored once too; different bytes
// of the same size are not merged.
TEST(ModelFormat, EqualConstantDataIsStoredOnce) {
  Graph g;
  Value* a = g.add_constant("a", patterned(DType::kFloat32, {16}, 1));
  Value* b = g.add_constant("b", patterned(DType::kFloat32, {16}, 1));  // a copy
  Value* c = g.add_constant("c", patterned(DType::kFloat32, {16}, 2));  // other bytes
  ASSERT_NE(a->constant->data(), b->constant->data());
  Node* ab = g.add_node("Add", {a, b}, {"ab"});
  Node* abc = g.add_node("Add", {ab->output(0), c}, {"y"});
  g.outputs().push_back(abc->output(0));
  const std::vector<uint8_t> bytes = write_plain(g, 17, "{}");
  const gom::Model m = model_def_of(bytes);
  EXPECT_EQ(m.values(0).data_offset(), m.values(1).data_offset());
  EXPECT_NE(m.values(0).data_offset(), m.values(2).data_offset());
  EXPECT_EQ(entry_of(bytes, 2).size, 128u);
  auto shared = std::make_shared<std::vector<uint8_t>>(bytes);
  LoadedModel lm = read_gom_bytes(shared);
  EXPECT_EQ(std::memcmp(lm.graph->find_value("b")->constant->data(), b->constant->data(), 64), 0);
  EXPECT_EQ(std::memcmp(lm.graph->find_value("c")->constant->data(), c->constant->data(), 64), 0);
}

TEST(ModelFormat, EmptyGraphRoundTrips) {
  Graph g;
  g.name = "empty";
  const std::vector<uint8_t> b = write_plain(g, 13, "");
  LoadedModel m = read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b));
  EXPECT_EQ(m.graph->name, "empty");
  EXPECT_TRUE(m.graph->nodes().empty());
  EXPECT_EQ(m.weights_bytes, 0);
  EXPECT_EQ(m.opset, 13);
}

TEST(ModelFormat, RefusesEveryTruncation) {
  const std::vector<uint8_t> b = write_test_model();
  for (size_t n = 0; n < b.size(); ++n) {
    const std::vector<uint8_t> cut(b.begin(), b.begin() + n);
    const std::string msg = load_error(cut);
    EXPECT_NE(msg.find("truncated"), std::string::npos) << n << ": " << msg;
  }
  const std::string msg = load_error(std::vector<uint8_t>(b.begin(), b.begin() + 100));
  EXPECT_NE(msg.find("expected " + std::to_string(b.size()) + " bytes, found 100"), std::string::npos) << msg;
}

// Also read from a file (read_gom_file hashes it with pread(), not through
// its mapping: MappedFile::read).
TEST(ModelFormat, NamesThePartitionWithABadChecksum) {
  const std::vector<uint8_t> b = write_test_model();
  const std::string path = temp_gom("bad_checksum");
  for (const char* kind : {"MODEL_DEF", "WEIGHTS", "METADATA", "WEIGHTS_XXH64"}) {
    const std::string k = kind;
    const uint32_t code = k == "MODEL_DEF" ? 1 : k == "WEIGHTS" ? 2 : k == "METADATA" ? 3 : 4;
    const Entry e = entry_of(b, code);
    ASSERT_GT(e.size, 2u);
    for (uint64_t at : {e.offset, e.offset + e.size / 2, e.offset + e.size - 1}) {
      std::vector<uint8_t> bad = b;
      bad[at] ^= 0x40;
      const std::string msg = load_error(bad);
      EXPECT_NE(msg.find(std::string("corrupted: checksum mismatch in ") + kind), std::string::npos) << msg;
      write_file(path, bad);
      std::string file_msg = "accepted";
      try {
        read_gom_file(path);
      } catch (const Error& err) {
        EXPECT_EQ(err.code(), ErrorCode::kCorruptFile) << err.what();
        file_msg = err.what();
      }
      EXPECT_NE(file_msg.find(std::string("corrupted: checksum mismatch in ") + kind), std::string::npos) << file_msg;
    }
  }
  write_file(path, b);
  EXPECT_TRUE(read_gom_file(path).graph);
  std::remove(path.c_str());
  std::vector<uint8_t> bad = b;
  bad[40 + 4] ^= 1;  // partition table, reserved field
  EXPECT_NE(load_error(bad).find("checksum mismatch in partition table"), std::string::npos);
  bad = b;
  bad[33] ^= 1;  // the stored whole-file hash itself
  EXPECT_NE(load_error(bad).find("checksum mismatch"), std::string::npos);
}

// Re-seals `b` with WEIGHTS_XXH64 over blocks of `block_bytes` (the
// partition resized in place: it must be the last before WEIGHTS, as the
// writer places it).
std::vector<uint8_t> with_block_size(const std::vector<uint8_t>& b, uint64_t block_bytes) {
  const Entry w = entry_of(b, 2);
  std::vector<uint8_t> sums = block_hashes(b.data() + w.offset, w.size, block_bytes);
  std::vector<uint8_t> out = with_model_def(b, model_def_of(b));
  const Entry old = entry_of(out, 4);
  // Rebuild with the new WEIGHTS_XXH64: MODEL_DEF, METADATA as they are, then
  // the new sums, then WEIGHTS re-aligned.
  std::vector<uint8_t> r(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(old.offset));
  r.insert(r.end(), sums.begin(), sums.end());
  r.resize((r.size() + 63) / 64 * 64, 0);
  const uint64_t w_at = r.size();
  r.insert(r.end(), b.begin() + static_cast<std::ptrdiff_t>(w.offset),
           b.begin() + static_cast<std::ptrdiff_t>(w.offset + w.size));
  for (int slot = 0; slot < 4; ++slot) {
    const size_t at = 40 + 32 * slot;
    if (get<uint32_t>(r, at) == 4) set<uint64_t>(r, at + 16, sums.size());
    if (get<uint32_t>(r, at) == 2) set<uint64_t>(r, at + 8, w_at);
  }
  set<uint64_t>(r, 16, r.size());
  reseal(r);
  return r;
}

TEST(ModelFormat, WeightsAreVerifiedBlockByBlockOnSeveralThreads) {
  // 64-byte blocks: the small test model's WEIGHTS spans many of them.
  const std::vector<uint8_t> b = with_block_size(write_test_model(), 64);
  const Entry w = entry_of(b, 2);
  ASSERT_GT(w.size, 64u * 8);
  for (int threads : {1, 2, 4}) {
    EXPECT_NO_THROW(read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b), threads)) << threads;
    // Damage in blocks 3 and 7: every thread count names the first one.
    std::vector<uint8_t> bad = b;
    bad[w.offset + 3 * 64 + 5] ^= 0x10;
    bad[w.offset + 7 * 64] ^= 0x01;
    try {
      read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(bad), threads);
      ADD_FAILURE() << "damaged WEIGHTS accepted on " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorruptFile);
      EXPECT_NE(std::string(e.what()).find("checksum mismatch in WEIGHTS (block 3, bytes 192..256 of the partition)"),
                std::string::npos)
          << e.what();
    }
  }
  // The last block is shorter: damage to its final byte is found too.
  std::vector<uint8_t> bad = b;
  bad[w.offset + w.size - 1] ^= 0x80;
  EXPECT_NE(load_error(bad).find("checksum mismatch in WEIGHTS (block " + std::to_string((w.size - 1) / 64)),
            std::string::npos);
}

TEST(ModelFormat, DeferredWeightsCheckRunsLaterAndSessionsStillRefuseDamage) {
  const std::vector<uint8_t> b = with_block_size(write_test_model(), 64);
  const Entry w = entry_of(b, 2);
  std::vector<uint8_t> bad = b;
  bad[w.offset + 5 * 64 + 1] ^= 0x08;
  // Deferred: the read succeeds, the check it hands back finds block 5, and
  // keeps the bytes alive after the LoadedModel and every other owner are
  // gone (ASan would see a read of freed memory otherwise).
  std::function<void(int)> verify;
  {
    auto bytes = std::make_shared<const std::vector<uint8_t>>(bad);
    LoadedModel m = read_gom_bytes(bytes, 1, /*defer_weights_check=*/true);
    ASSERT_TRUE(m.verify_weights);
    verify = std::move(m.verify_weights);
  }
  for (int threads : {1, 3}) {
    try {
      verify(threads);
      ADD_FAILURE() << "damaged WEIGHTS passed the deferred check on " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorruptFile);
      EXPECT_NE(std::string(e.what()).find("checksum mismatch in WEIGHTS (block 5, bytes 320..384"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b), 2, true).verify_weights(2));
  // Not deferred unless asked: the plain read throws and leaves no check.
  EXPECT_NE(load_error(bad).find("block 5"), std::string::npos);
  EXPECT_FALSE(read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b)).verify_weights);
  // A session reports the damage even when making a kernel fails first: this
  // hand-built model's kernels are refused (it names no kernel this build
  // has), which is the error when WEIGHTS is intact.
  for (int threads : {1, 2}) {
    SessionOptions so;
    so.num_threads = threads;
    for (const std::vector<uint8_t>* file : std::initializer_list<const std::vector<uint8_t>*>{&b, &bad}) {
      try {
        Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(*file), so);
        ADD_FAILURE() << "the hand-built model loaded";
      } catch (const Error& e) {
        if (file == &bad) {
          EXPECT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
          EXPECT_NE(std::string(e.what()).find("block 5"), std::string::npos) << e.what();
          EXPECT_EQ(std::string(e.what()).find("recompile"), std::string::npos) << e.what();
        } else {
          EXPECT_NE(std::string(e.what()).find("recompile the model"), std::string::npos) << e.what();
          EXPECT_EQ(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
        }
      }
    }
  }
}

TEST(ModelFormat, RefusesWeightsWithoutFittingBlockHashes) {
  const std::vector<uint8_t> good = write_test_model();
  std::vector<uint8_t> b = good;
  for (int slot = 0; slot < 4; ++slot)
    if (get<uint32_t>(b, 40 + 32 * slot) == 4) set<uint32_t>(b, 40 + 32 * slot, 9);  // an unknown kind now
  reseal(b);
  EXPECT_NE(load_error(b).find("WEIGHTS without a WEIGHTS_XXH64 partition"), std::string::npos);
  for (uint64_t block : {uint64_t{0}, uint64_t{32}, uint64_t{65}, uint64_t{128}, uint64_t{1} << 50}) {
    b = good;
    set<uint64_t>(b, entry_of(b, 4).offset, block);  // not a multiple of 64, or the hashes no longer fit
    reseal(b);
    EXPECT_NE(load_error(b).find("does not fit WEIGHTS"), std::string::npos) << block;
  }
}

TEST(ModelFormat, ReadsFormatVersion2) {
  // Version 2: one hash of every byte after the header, no WEIGHTS_XXH64
  // (a partition of kind 4 is one this version does not know, and skipped).
  std::vector<uint8_t> b = write_test_model();
  set<uint32_t>(b, 8, 2);
  reseal(b);
  EXPECT_EQ(get<uint64_t>(b, 32), XXH64(b.data() + 40, b.size() - 40, 0));
  const LoadedModel m = read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b), 2);
  EXPECT_EQ(m.format_version, 2u);
  m.graph->verify();
  std::vector<uint8_t> bad = b;
  bad[entry_of(b, 2).offset + 1] ^= 4;
  EXPECT_NE(load_error(bad).find("corrupted: checksum mismatch in WEIGHTS"), std::string::npos);
  bad = b;
  set<uint64_t>(bad, entry_of(b, 4).offset, 0);  // kind 4's bytes: under the whole-file hash only
  EXPECT_NE(load_error(bad).find("checksum mismatch in WEIGHTS_XXH64"), std::string::npos);
}

TEST(ModelFormat, RefusesNewerVersionsAndForeignFiles) {
  std::vector<uint8_t> b = write_test_model();
  set<uint32_t>(b, 8, 4);
  EXPECT_NE(load_error(b).find("written by a newer GraphEngine (format version 4; this build reads 3)"),
            std::string::npos);
  set<uint32_t>(b, 8, 1);  // the format before the plans had their own messages
  EXPECT_NE(load_error(b).find("format version 1, older than the oldest this build reads (2): recompile the model"),
            std::string::npos);

  std::mt19937 rng(1234);
  std::vector<uint8_t> garbage(5000);
  for (auto& x : garbage) x = static_cast<uint8_t>(rng());
  garbage[0] = 'X';
  EXPECT_NE(load_error(garbage).find("not a GraphEngine offline model (bad magic; `gec compile` makes one"),
            std::string::npos);
  std::memcpy(garbage.data(), "GECOM\0\0\0", 8);
  load_error(garbage);  // valid magic, garbage after it: some kCorruptFile error
  EXPECT_NE(load_error({'{', '}'}).find("not a GraphEngine offline model"), std::string::npos);

  b = write_test_model();
  b.push_back(0);
  EXPECT_NE(load_error(b).find("file size mismatch"), std::string::npos);
}

TEST(ModelFormat, RefusesStructurallyBadContainers) {
  const std::vector<uint8_t> good = write_test_model();
  std::vector<uint8_t> b = good;
  set<uint64_t>(b, 40 + 8, uint64_t{1} << 62);  // MODEL_DEF offset far past the end
  reseal(b);
  EXPECT_NE(load_error(b).find("outside the file"), std::string::npos);

  b = good;
  set<uint32_t>(b, 24, 1u << 30);  // more entries than the file can hold
  reseal(b);
  EXPECT_NE(load_error(b).find("partition table"), std::string::npos);

  b = good;
  for (int i = 0; i < 4; ++i)
    if (get<uint32_t>(b, 40 + 32 * i) == 1) set<uint32_t>(b, 40 + 32 * i, 3);  // MODEL_DEF -> METADATA
  reseal(b);
  EXPECT_NE(load_error(b).find("corrupted"), std::string::npos);

  b = good;
  const Entry def = entry_of(b, 1);
  for (uint64_t i = 0; i < def.size; ++i) b[def.offset + i] = 0xff;  // not protobuf
  reseal(b);
  EXPECT_NE(load_error(b).find("MODEL_DEF does not parse"), std::string::npos);
}

TEST(ModelFormat, RefusesInconsistentModelDefs) {
  const std::vector<uint8_t> good = write_test_model();
  const gom::Model base = model_def_of(good);
  // Sanity: re-assembling the unchanged MODEL_DEF loads fine.
  EXPECT_NO_THROW(read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(with_model_def(good, base))));

  auto value_index = [&](const std::string& name) {
    for (int i = 0; i < base.values_size(); ++i)
      if (base.values(i).name() == name) return i;
    ADD_FAILURE() << name;
    return 0;
  };
  struct Case { const char* what; std::function<void(gom::Model&)> edit; const char* expect; };
  const std::vector<Case> cases = {
      {"node input id past the end", [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(0)->set_inputs(0, 99999); },
       "out of range"},
      {"negative id", [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(0)->set_inputs(0, -5); }, "out of range"},
      {"graph output id", [](gom::Model& m) { m.mutable_graphs(0)->set_outputs(0, 1 << 30); }, "out of range"},
      {"weight past WEIGHTS", [&](gom::Model& m) { m.mutable_values(value_index("k_float64"))->set_data_offset(1 << 20); },
       "outside WEIGHTS"},
      {"weight size lies", [&](gom::Model& m) { m.mutable_values(value_index("k_float64"))->set_bytes(8); },
       "byte size"},
      {"bad const dtype", [&](gom::Model& m) { m.mutable_values(value_index("k_int8"))->set_const_dtype(99); },
       "invalid dtype code 99"},
      {"bad type dtype", [&](gom::Model& m) { m.mutable_values(value_index("x"))->mutable_type()->set_dtype(-3); },
       "invalid dtype code -3"},
      {"bad storage", [&](gom::Model& m) { m.mutable_memory_plan()->mutable_values(value_index("x"))->set_storage(17); }, "storage code"},
      {"plan for fewer values", [](gom::Model& m) { m.mutable_memory_plan()->mutable_values()->RemoveLast(); }, "memory plan"},
      {"graph input not so placed", [&](gom::Model& m) { m.mutable_memory_plan()->mutable_values(value_index("x"))->set_storage(4); }, "graph input"},
      {"Concat in place of a non-Concat", [&](gom::Model& m) { m.mutable_memory_plan()->add_concat_in_place(value_index("packed")); }, "not the arena output of a Concat"},
      {"step names a node twice", [](gom::Model& m) { m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps(1)->set_node(0); }, "twice"},
      {"step missing", [](gom::Model& m) { m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps()->RemoveLast(); }, "steps for"},
      {"plan for fewer graphs", [](gom::Model& m) { m.mutable_execution_plan()->mutable_graphs()->RemoveLast(); }, "execution plan"},
      {"bad layout code", [](gom::Model& m) {
         for (auto& st : *m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps())
           if (st.output_layouts_size()) st.set_output_layouts(0, 9);
       }, "invalid layout code"},
      {"layout count", [](gom::Model& m) {
         for (auto& st : *m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps())
           if (st.output_layouts_size()) st.add_output_layouts(0);
       }, "layouts for"},
      {"string count", [&](gom::Model& m) { m.mutable_values(value_index("k_str"))->add_strings("extra"); },
       "string count"},
      {"arena slot past arena", [&](gom::Model& m) { m.mutable_memory_plan()->mutable_values(value_index("packed"))->set_offset(4090); },
       "arena"},
      {"bad attribute kind", [](gom::Model& m) {
         for (auto& n : *m.mutable_graphs(0)->mutable_nodes())
           if (n.attrs_size()) { n.mutable_attrs(0)->set_kind(42); return; }
       }, "invalid kind"},
      {"bad subgraph index", [](gom::Model& m) {
         for (auto& n : *m.mutable_graphs(0)->mutable_nodes())
           if (n.op_type() == "If") n.mutable_attrs(0)->set_g(77);
       }, "invalid subgraph"},
      {"subgraph used twice", [](gom::Model& m) {
         for (auto& n : *m.mutable_graphs(0)->mutable_nodes())
           if (n.op_type() == "If") n.mutable_attrs(1)->set_g(n.attrs(0).g());
       }, "invalid subgraph"},
      {"parent cycle", [](gom::Model& m) { m.mutable_graphs(1)->set_parent(2); }, "invalid parent"},
      {"no graphs", [](gom::Model& m) { m.clear_graphs(); }, "no graph"},
      {"value read from an unrelated graph", [&](gom::Model& m) {
         // main's Add reads the then-branch constant `k`.
         m.mutable_graphs(0)->mutable_nodes(0)->set_inputs(1, value_index("k"));
       }, "unrelated graph"},
      {"output defined twice", [](gom::Model& m) {
         auto* g = m.mutable_graphs(0);
         g->mutable_nodes(1)->set_outputs(0, g->nodes(0).outputs(0));
       }, "cannot own"},
      {"use before definition", [](gom::Model& m) {
         auto* nodes = m.mutable_graphs(0)->mutable_nodes();
         nodes->SwapElements(0, nodes->size() - 1);  // If (reads `a`) before Add
       }, "before it is defined"},
      {"inline tensor size", [](gom::Model& m) {
         for (auto& n : *m.mutable_graphs(0)->mutable_nodes())
           for (auto& a : *n.mutable_attrs())
             if (a.name() == "t") a.mutable_t()->add_shape(1000);
       }, "data size"},
      {"weights_bytes disagrees", [](gom::Model& m) { m.set_weights_bytes(m.weights_bytes() + 64); }, "weight bytes"},
      {"packed weight of a graph input", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("x"));
         p->set_bytes(64);
       }, "not a numeric constant"},
      {"packed weight of a string constant", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_str"));
         p->set_bytes(64);
       }, "not a numeric constant"},
      {"packed weight id past the end", [](gom::Model& m) { m.add_packed_weights()->set_value(1 << 30); },
       "not a numeric constant"},
      {"packed weight past WEIGHTS", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_float64"));
         p->set_data_offset(1 << 20);
         p->set_bytes(64);
       }, "inside WEIGHTS"},
      {"packed weight unaligned", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_float64"));
         p->set_data_offset(8);
         p->set_bytes(8);
       }, "inside WEIGHTS"},
      {"packed weight at a negative offset", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_float64"));
         p->set_data_offset(-64);
         p->set_bytes(64);
       }, "inside WEIGHTS"},
      {"packed weight of 2^63 - 1 bytes", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_float64"));
         p->set_bytes(INT64_MAX);
       }, "inside WEIGHTS"},
      {"packed weight of no bytes", [&](gom::Model& m) {
         gom::PackedWeight* p = m.add_packed_weights();
         p->set_value(value_index("k_float64"));
       }, "inside WEIGHTS"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    gom::Model m = base;
    c.edit(m);
    const std::string msg = load_error(with_model_def(good, m));
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find("corrupted"), std::string::npos) << c.what << ": " << msg;
  }
}

TEST(ModelFormat, SurvivesRandomDamageToModelDef) {
  // Flip bytes inside MODEL_DEF and re-seal the checksums, so that the
  // protobuf and IR checks (not the hash) must stop every bad file.
  const std::vector<uint8_t> good = write_test_model();
  const Entry def = entry_of(good, 1);
  std::mt19937 rng(42);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) b[def.offset + rng() % def.size] ^= static_cast<uint8_t>(1u << (rng() % 8));
    reseal(b);
    try {
      LoadedModel m = read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b));
      m.graph->verify();
      ++accepted;  // e.g. a changed name or float: still a consistent model
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
    }
  }
  EXPECT_LT(accepted, 3000);
}

TEST(ModelFormat, SurvivesRandomDamageToHeaderAndTable) {
  // Same for the header and partition table: bounds checks, not the hash.
  const std::vector<uint8_t> good = write_test_model();
  const size_t table_end = 40 + 32 * 4;
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    b[rng() % table_end] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (iter % 2) reseal(b);
    try {
      read_gom_bytes(std::make_shared<const std::vector<uint8_t>>(b));
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
    }
  }
}

TEST(ModelFormat, InspectSummarizesAndReportsDamage) {
  std::vector<uint8_t> b = write_test_model();
  const std::string path = temp_gom("inspect");
  write_file(path, b);
  GomSummary s = inspect_gom_file(path);
  EXPECT_EQ(s.format_version, 3u);
  EXPECT_EQ(s.header_size, 40u);
  EXPECT_EQ(s.file_size, b.size());
  EXPECT_TRUE(s.checksum_ok);
  ASSERT_EQ(s.partitions.size(), 4u);
  std::set<std::string> names;
  for (const auto& p : s.partitions) {
    names.insert(p.kind);
    EXPECT_TRUE(p.checksum_ok) << p.kind;
  }
  EXPECT_EQ(names, (std::set<std::string>{"MODEL_DEF", "WEIGHTS", "METADATA", "WEIGHTS_XXH64"}));
  EXPECT_EQ(s.opset, 17);
  EXPECT_EQ(s.arena_bytes, 4096);
  EXPECT_EQ(s.graph_count, 4);
  EXPECT_EQ(s.node_count, 6);  // Add, PackAll, If, Mul, Scope, Neg
  EXPECT_EQ(s.constant_count, 20);  // 19 in main, `k` in then_branch
  EXPECT_EQ(s.metadata_json, kMeta);

  b[entry_of(b, 2).offset + 3] ^= 1;
  write_file(path, b);
  s = inspect_gom_file(path);
  EXPECT_FALSE(s.checksum_ok);
  for (const auto& p : s.partitions) EXPECT_EQ(p.checksum_ok, p.kind != "WEIGHTS") << p.kind;
  std::remove(path.c_str());

  try {
    read_gom_file(temp_gom("missing"));
    FAIL() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
}


// ---- crafted .gom files with valid checksums (issue: hostile input) -----------
//
// x[1,3,8,8] -> Conv(3->4, 3x3, pads 1) -> Relu -> GlobalAveragePool ->
// Flatten -> MatMul([4,5]) -> y[1,5], opset 13. Each case edits one field of
// the compiled MODEL_DEF (or the partition table) and re-seals the checksums;
// the loader must refuse the file with kCorruptFile before any kernel runs.

std::string small_cnn_onnx() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("small_cnn");
  auto io = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  io(g->add_input(), "x", {1, 3, 8, 8});
  io(g->add_output(), "y", {1, 5});
  auto init = [&](const char* name, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.01f * static_cast<float>((i * 7) % 13) - 0.05f);
  };
  init("W", {4, 3, 3, 3});
  init("B", {4});
  init("M", {4, 5});
  auto node = [&](const char* op, std::vector<std::string> in, const char* out, const char* name) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto* conv = node("Conv", {"x", "W", "B"}, "c", "conv");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  node("Relu", {"c"}, "r", "relu");
  node("GlobalAveragePool", {"r"}, "p", "gap");
  node("Flatten", {"p"}, "f", "flatten");
  node("MatMul", {"f", "M"}, "y", "matmul");
  return m.SerializeAsString();
}

std::vector<uint8_t> compiled_small_cnn(int level) {
  const std::string onnx = small_cnn_onnx();
  CompileOptions o;
  o.opt_level = level;
  return *compile_onnx_bytes(onnx.data(), onnx.size(), o).gom;
}

// An offline model handed to the compiler (`gec compile x.gom`) is named
// as one, not as invalid ONNX; a .gom that cannot be written names the file
// and the system's reason, and leaves no temporary file behind (a missing
// folder: the temporary file cannot be opened; `path` an existing folder:
// it is written, then cannot replace the folder, and is removed).
TEST(ModelFormat, CompilingAnOfflineModelAndUnwritablePathsAreExplained) {
  const std::vector<uint8_t> gom = compiled_small_cnn(2);
  try {
    compile_any_bytes(gom.data(), gom.size(), {}, ".", "small.gom");
    ADD_FAILURE() << "compiled a .gom";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("'small.gom' is a GraphEngine offline model (.gom), compiled already"),
              std::string::npos)
        << e.what();
  }
  const std::string onnx = small_cnn_onnx();
  const CompiledModel m = compile_onnx_bytes(onnx.data(), onnx.size());
  const std::string path = ::testing::TempDir() + "gec_no_such_folder/small.gom";
  try {
    save_gom(m, path);
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("'" + path + ".tmp' for writing: No such file or directory"),
              std::string::npos)
        << e.what();
  }
  const std::string folder = ::testing::TempDir() + "gec_save_gom_folder_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  try {
    save_gom(m, folder);
    ADD_FAILURE() << "replaced a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot move the temporary file '" + folder + ".tmp' to '" + folder + "'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(::access((folder + ".tmp").c_str(), F_OK), 0) << "the temporary file was left behind";
  ::rmdir(folder.c_str());
}

int node_index(const gom::Model& m, const std::string& op) {
  for (int i = 0; i < m.graphs(0).nodes_size(); ++i)
    if (m.graphs(0).nodes(i).op_type() == op) return i;
  ADD_FAILURE() << "no " << op;
  return 0;
}

void set_dims(gom::Value* v, std::vector<int64_t> dims) {
  v->mutable_type()->clear_dims();
  for (int64_t d : dims) v->mutable_type()->add_dims()->set_value(d);
}

// A valid layout code on a step whose shapes that layout cannot hold (the
// small CNN's 4-channel convolution planned nChw16c, which would write a
// channel-padded buffer past its value): refused with an error naming the
// layout, at load or at the first run, never run.
/// Loads `good` with the steps of the nodes named `node` given these
/// layout codes; returns the error's message ("" when it loaded and ran),
/// which must be kCorruptFile: the loader checks the layouts along every
/// edge (model/reader.cc, check_layouts).
std::string load_with_layouts(const std::vector<uint8_t>& good, const std::string& op,
                              const std::vector<int>& in_codes, const std::vector<int>& out_codes) {
  gom::Model m = model_def_of(good);
  const int node = node_index(m, op);
  int edited = 0;
  for (auto& st : *m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps()) {
    if (st.node() != node) continue;
    st.clear_input_layouts();
    st.clear_output_layouts();
    for (int c : in_codes) st.add_input_layouts(c);
    for (int c : out_codes) st.add_output_layouts(c);
    ++edited;
  }
  EXPECT_EQ(edited, 1);
  try {
    auto s = Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(with_model_def(good, m)));
    std::vector<Tensor> in;
    for (size_t i = 0; i < s->inputs().size(); ++i) in.push_back(Tensor(DType::kFloat32, {1, 3, 8, 8}));
    std::vector<TensorView> views;
    for (Tensor& t : in) views.push_back(t.view());
    s->run(views);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorruptFile) << e.what();
    return e.what();
  }
  return "";
}

// A conv's output planned nChw16c for [1,4,8,8] (C % 16 != 0): refused at
// load, naming the value and the layout.
/// The layout codes the first FusedConv's step reads its inputs in (all
/// plain where the plan has none).
std::vector<int> conv_input_codes(const std::vector<uint8_t>& good) {
  const gom::Model m = model_def_of(good);
  const int conv = node_index(m, "FusedConv");
  std::vector<int> codes(static_cast<size_t>(m.graphs(0).nodes(conv).inputs_size()), 0);
  for (const auto& st : m.execution_plan().graphs(0).steps())
    if (st.node() == conv && st.input_layouts_size() > 0)
      for (int i = 0; i < st.input_layouts_size(); ++i) codes[static_cast<size_t>(i)] = st.input_layouts(i);
  return codes;
}

TEST(HostileGom, LayoutsTheShapesCannotHoldAreRefused) {
  const std::vector<uint8_t> good = compiled_small_cnn(2);
  const std::string msg = load_with_layouts(good, "FusedConv", conv_input_codes(good), {1});
  EXPECT_NE(msg.find("cannot be held in layout nChw16c"), std::string::npos) << "accepted, or another error: " << msg;
}

// A step that reads a value in another layout than its producer wrote it
// (the conv reading its src plain where it was written nhwc, or nhwc where
// it was written plain) would get its bytes in another order: refused at
// load, naming both layouts.
TEST(HostileGom, LayoutsThatDisagreeAlongAnEdgeAreRefused) {
  const std::vector<uint8_t> good = compiled_small_cnn(2);
  std::vector<int> in = conv_input_codes(good);
  in[0] = in[0] == 0 ? 2 : 0;
  const std::string msg = load_with_layouts(good, "FusedConv", in, {0});
  EXPECT_NE(msg.find(in[0] == 0 ? "in layout nchw, written in nhwc" : "in layout nhwc, written in nchw"),
            std::string::npos)
      << "accepted, or another error: " << msg;
}

// Resident bytes of this process (/proc/self/statm); -1 when unreadable.
int64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0, resident = -1;
  if (!(f >> pages >> resident)) return -1;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

// An arena size far beyond where the plan's slots end (a forged
// memory_plan.arena_bytes) is mapped but not made resident: the session
// populates only the bytes its slots use, and runs as compiled.
TEST(HostileGom, ForgedArenaSizeCommitsNoMemory) {
  const std::vector<uint8_t> good = compiled_small_cnn(2);
  gom::Model m = model_def_of(good);
  const int64_t planned = m.memory_plan().arena_bytes();
  m.mutable_memory_plan()->set_arena_bytes(int64_t{1} << 30);
  Tensor x(DType::kFloat32, {1, 3, 8, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = 0.1f * static_cast<float>(i % 9);
  auto ref = Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(good));
  const std::vector<Tensor> want = ref->run({x.view()});
  const int64_t before = resident_bytes();
  ASSERT_GT(before, 0);
  auto s = Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(with_model_def(good, m)));
  const std::vector<Tensor> got = s->run({x.view()});
  const int64_t after = resident_bytes();
  EXPECT_LT(after - before, int64_t{256} << 20) << "planned arena " << planned << " bytes, forged 1 GiB";
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].bytes(), want[i].bytes());
    EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), got[i].bytes()), 0) << "output " << i;
  }
}

TEST(HostileGom, CraftedModelDefsAreRefusedAtLoad) {
  const std::vector<uint8_t> o2 = compiled_small_cnn(2), o0 = compiled_small_cnn(0);
  // Sanity: both load and run as compiled.
  for (const auto* b : {&o2, &o0}) {
    auto s = Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(*b));
    Tensor x(DType::kFloat32, {1, 3, 8, 8});
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = 0.1f * static_cast<float>(i % 9);
    EXPECT_EQ(s->run({x.view()})[0].shape(), (Shape{1, 5}));
  }
  struct Case {
    const char* what;
    bool at_o0;
    std::function<void(gom::Model&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"GlobalAveragePool with no inputs", false,
       [](gom::Model& m) {
         const int gap = node_index(m, "GlobalAveragePool");
         m.mutable_graphs(0)->mutable_nodes(gap)->clear_inputs();
         // Where the pool reads a non-plain input, its step's layout count
         // would be refused first.
         for (auto& st : *m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps())
           if (st.node() == gap) st.clear_input_layouts();
       },
       "input 0 is required"},
      {"Relu with no inputs", true,
       [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(node_index(m, "Relu"))->clear_inputs(); },
       "input 0 is required"},
      {"MatMul input 1 omitted", false,
       [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(node_index(m, "MatMul"))->set_inputs(1, -1); },
       "input 1 is required"},
      {"FusedConv input 0 omitted", false,
       [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(node_index(m, "FusedConv"))->set_inputs(0, -1); },
       "input 0 is required"},
      {"conv output declared [1,0,8,8]", false,
       [](gom::Model& m) {
         const int conv = node_index(m, "FusedConv");
         set_dims(m.mutable_values(m.graphs(0).nodes(conv).outputs(0)), {1, 0, 8, 8});
       },
       "is planned as float32[1,0,8,8], its inputs make float32[1,4,8,8]"},
      {"MatMul output [1,2] at the arena's end", false,
       [](gom::Model& m) {
         const int y = m.graphs(0).outputs(0);
         set_dims(m.mutable_values(y), {1, 2});
         m.mutable_memory_plan()->mutable_values(y)->set_offset(m.memory_plan().arena_bytes() - 8);
       },
       "is planned as float32[1,2], its inputs make float32[1,5]"},
      {"GlobalAveragePool turned into Relu", false,
       [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(node_index(m, "GlobalAveragePool"))->set_op_type("Relu"); },
       "its inputs make float32[1,4,8,8]"},
      {"input declared [1,3,2,2]", false,
       [](gom::Model& m) { set_dims(m.mutable_values(m.graphs(0).inputs(0)), {1, 3, 2, 2}); },
       "its inputs make float32[1,"},  // then [1,4,2,2] or (checked below) [1,3,2,2]: x reordered to nhwc first
      {"output declared [1,5000]", false,
       [](gom::Model& m) { set_dims(m.mutable_values(m.graphs(0).outputs(0)), {1, 5000}); },
       "'y'"},  // its slot runs past the arena (or, with room, its inputs make [1,5])
      {"two live values on one byte", false,
       [](gom::Model& m) {
         // The conv output and the pooled value are both live at the pool.
         const int c = m.graphs(0).nodes(node_index(m, "FusedConv")).outputs(0);
         const int p = m.graphs(0).nodes(node_index(m, "GlobalAveragePool")).outputs(0);
         m.mutable_memory_plan()->mutable_values(p)->set_offset(m.memory_plan().values(c).offset());
       },
       "memory plan"},
      {"a value with no placement (found by fuzzing: its Expand then allocated without bound)", false,
       [](gom::Model& m) {
         m.mutable_memory_plan()->mutable_values(m.graphs(0).nodes(node_index(m, "Flatten")).outputs(0))->set_storage(0);
       },
       "has no place in the memory plan"},
      {"a node with no output", false,
       [](gom::Model& m) { m.mutable_graphs(0)->mutable_nodes(node_index(m, "Flatten"))->clear_outputs(); },
       ""},
      {"steps out of node order", false,
       [](gom::Model& m) {
         auto* steps = m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps();
         steps->SwapElements(0, 1);
       },
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::vector<uint8_t>& good = c.at_o0 ? o0 : o2;
    gom::Model m = model_def_of(good);
    c.edit(m);
    const std::string msg = load_error(with_model_def(good, m));
    EXPECT_NE(msg.find("corrupted"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    if (c.what == std::string("input declared [1,3,2,2]")) {
      EXPECT_TRUE(msg.find("make float32[1,4,2,2]") != std::string::npos ||
                  msg.find("make float32[1,3,2,2]") != std::string::npos)
          << msg;
    }
  }
}

// A dynamic value whose declared static type lies ([1,4,2,2] for the conv's
// real [1,4,8,8]) and an arena output sized from that lie: the loader cannot
// trust the dynamic value's type, so the reader of it is checked at run time
// and refused there, before its kernel writes past its arena slot.
TEST(HostileGom, ReadersOfDynamicValuesAreCheckedAtRun) {
  const std::vector<uint8_t> good = compiled_small_cnn(0);
  gom::Model m = model_def_of(good);
  const int conv = node_index(m, "Conv"), relu = node_index(m, "Relu");
  const int c = m.graphs(0).nodes(conv).outputs(0), r = m.graphs(0).nodes(relu).outputs(0);
  m.mutable_memory_plan()->mutable_values(c)->set_storage(static_cast<int32_t>(memory::Storage::kDynamic));
  set_dims(m.mutable_values(c), {1, 4, 2, 2});
  set_dims(m.mutable_values(r), {1, 4, 2, 2});
  // The kernel this build makes for the lying shapes (the honest ones ran
  // the convolution as a MatMul of its columns, which [1,4,2,2] does not
  // fit): the file passes the load's kernel check, and the run must catch it.
  for (auto& st : *m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps())
    if (st.node() == conv) st.set_kernel("onednn.conv");
  auto bytes = std::make_shared<const std::vector<uint8_t>>(with_model_def(good, m));
  std::unique_ptr<Session> s = Session::load_from_bytes(bytes);
  Tensor x(DType::kFloat32, {1, 3, 8, 8});
  try {
    s->run({x.view()});
    ADD_FAILURE() << "the lying plan ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("float32[1,4,8,8] at run time, the model planned float32[1,4,2,2]"),
              std::string::npos)
        << e.what();
  }
}

TEST(HostileGom, SessionsCheckWeightsWhileMakingKernelsAndRefuseDamage) {
  // Session::load reads with the WEIGHTS check deferred and runs it beside
  // the kernels' set-up: damage is still refused, on any thread count.
  const std::vector<uint8_t> good = compiled_small_cnn(2);
  const Entry w = entry_of(good, 2);
  ASSERT_GT(w.size, 0u);
  std::vector<uint8_t> bad = good;
  bad[w.offset + w.size / 2] ^= 0x20;
  for (int threads : {1, 2}) {
    SessionOptions so;
    so.num_threads = threads;
    try {
      Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(bad), so);
      ADD_FAILURE() << "a session accepted damaged WEIGHTS on " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorruptFile);
      EXPECT_NE(std::string(e.what()).find("checksum mismatch in WEIGHTS (block"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(Session::load_from_bytes(std::make_shared<const std::vector<uint8_t>>(good), so)) << threads;
    // From a file: the checker reads it with pread() beside the kernels' set-up.
    const std::string path = temp_gom("damaged_weights_" + std::to_string(threads));
    {
      std::ofstream f(path, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bad.data()), static_cast<std::streamsize>(bad.size()));
    }
    try {
      Session::load(path, so);
      ADD_FAILURE() << "a session accepted a damaged file on " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorruptFile);
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("checksum mismatch in WEIGHTS (block"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
  }
}

TEST(HostileGom, OverlappingPartitionsAreRefused) {
  std::vector<uint8_t> b = compiled_small_cnn(2);
  const Entry def = entry_of(b, 1);
  // Point WEIGHTS (the last entry of the table) at MODEL_DEF.
  for (int slot = 0; slot < 4; ++slot) {
    const size_t at = 40 + 32 * slot;
    if (get<uint32_t>(b, at) == 2) {
      set<uint64_t>(b, at + 8, (def.offset + 63) / 64 * 64);
      set<uint64_t>(b, at + 16, def.size);
    }
  }
  reseal(b);
  EXPECT_NE(load_error(b).find("overlap"), std::string::npos);
}

}  // namespace
}  // namespace gec::model
