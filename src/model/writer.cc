// .gom writer: IR graph -> MODEL_DEF protobuf + WEIGHTS blob + METADATA text,
// wrapped in the header and partition table of src/model/format.h.
#include "model/writer.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>

#include "gec/error.h"
#include "gom.pb.h"
#include "model/format.h"

namespace gec::model {
namespace {

void put_type(const ir::TensorType& t, gom::TensorType* out) {
  out->set_dtype(static_cast<int32_t>(t.dtype));
  out->set_has_shape(t.has_shape);
  out->set_kind(static_cast<int32_t>(t.kind));
  for (const ir::Dim& d : t.dims) {
    gom::Dim* pd = out->add_dims();
    pd->set_value(d.value);
    pd->set_param(d.param);
  }
}

void put_inline_tensor(const Tensor& t, gom::InlineTensor* out) {
  out->set_dtype(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) out->add_shape(d);
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) out->add_strings(t.as<std::string>()[i]);
  } else {
    out->set_data(static_cast<const char*>(t.data()), t.bytes());
  }
}

// Lays constant data out in WEIGHTS, each tensor at a 64-byte aligned
// offset. Only the layout is decided here; write_gom copies each tensor once,
// straight into the file image.
class WeightsBuilder {
 public:
  // Returns the offset of `t`'s bytes. Bytes already placed are not placed
  // twice: the same storage, or the same content (xxh64, then compared byte
  // by byte), e.g. a weight that constant folding copied for two nodes, or
  // two initializers an exporter wrote out twice.
  uint64_t place(const Tensor& t) { return place(t.data(), t.bytes()); }
  uint64_t place(const void* data, size_t n) {
    auto key = std::make_pair(const_cast<void*>(data), n);
    auto it = placed_.find(key);
    if (it != placed_.end()) return it->second;
    const auto* bytes = static_cast<const uint8_t*>(data);
    const uint64_t hash = XXH64(bytes, n, 0);
    auto [first, last] = by_content_.equal_range(hash);
    for (auto c = first; c != last; ++c) {
      const Piece& p = pieces_[c->second];
      if (p.bytes == n && (p.bytes == 0 || std::memcmp(p.data, bytes, p.bytes) == 0)) {
        placed_.emplace(key, p.offset);
        return p.offset;
      }
    }
    const uint64_t off = align_up(size_, kWeightAlign);
    size_ = off + n;
    by_content_.emplace(hash, pieces_.size());
    pieces_.push_back({bytes, n, off});
    placed_.emplace(key, off);
    return off;
  }
  uint64_t size() const { return size_; }
  /// Copies every placed tensor into `dst` (size() bytes, padding zeroed).
  void copy_to(uint8_t* dst) const {
    uint64_t at = 0;
    for (const Piece& p : pieces_) {
      std::memset(dst + at, 0, p.offset - at);
      if (p.bytes) std::memcpy(dst + p.offset, p.data, p.bytes);
      at = p.offset + p.bytes;
    }
  }

 private:
  struct Piece {
    const uint8_t* data;
    uint64_t bytes, offset;
  };
  struct KeyHash {
    size_t operator()(const std::pair<void*, size_t>& k) const {
      return std::hash<void*>()(k.first) ^ (std::hash<size_t>()(k.second) * 31);
    }
  };
  uint64_t size_ = 0;
  std::vector<Piece> pieces_;
  std::unordered_map<std::pair<void*, size_t>, uint64_t, KeyHash> placed_;
  std::unordered_multimap<uint64_t, size_t> by_content_;  // xxh64 -> index in pieces_
};

void put_value(const ir::Value& v, int32_t graph_index, memory::Storage storage, WeightsBuilder& weights,
               gom::Value* out) {
  out->set_name(v.name());
  put_type(v.type, out->mutable_type());
  out->set_graph(graph_index);
  GEC_CHECK((storage == memory::Storage::kWeight) == v.is_constant(),
            "write_gom: value '" + v.name() + "': the memory plan's kWeight and constant data disagree");
  if (v.is_constant()) {
    const Tensor& c = *v.constant;
    out->set_const_dtype(static_cast<int32_t>(c.dtype()));
    for (int64_t d : c.shape()) out->add_const_shape(d);
    if (c.dtype() == DType::kString) {
      for (int64_t i = 0; i < c.numel(); ++i) out->add_strings(c.as<std::string>()[i]);
    } else {
      out->set_data_offset(static_cast<int64_t>(weights.place(c)));
      out->set_bytes(static_cast<int64_t>(c.bytes()));
    }
  }
}

void put_node(const ir::Node& n, const ir::ValueIndex& ids,
              const std::unordered_map<const ir::Graph*, int32_t>& graph_index, gom::Node* out) {
  out->set_name(n.name);
  out->set_op_type(n.op_type);
  out->set_domain(n.domain);
  for (const auto& f : n.fused_from) out->add_fused_from(f);
  for (const ir::Value* in : n.inputs()) out->add_inputs(ids.id_or_none(in));
  for (const ir::Value* o : n.outputs()) out->add_outputs(ids.id(o));
  for (const ir::Attribute& a : n.attrs) {
    gom::Attribute* pa = out->add_attrs();
    pa->set_name(a.name);
    pa->set_kind(static_cast<int32_t>(a.kind));
    pa->set_i(a.i);
    pa->set_f(a.f);
    pa->set_s(a.s);
    for (int64_t x : a.ints) pa->add_ints(x);
    for (float x : a.floats) pa->add_floats(x);
    for (const auto& s : a.strings) pa->add_strings(s);
    if (a.kind == ir::Attribute::Kind::kTensor) {
      GEC_CHECK(a.t, "write_gom: tensor attribute '" + a.name + "' of " + n.describe() + " is empty");
      put_inline_tensor(*a.t, pa->mutable_t());
    }
    pa->set_g(-1);
    if (a.kind == ir::Attribute::Kind::kGraph) {
      GEC_CHECK(a.g, "write_gom: graph attribute '" + a.name + "' of " + n.describe() + " is empty");
      pa->set_g(graph_index.at(a.g.get()));
    }
  }
}

void put_memory_plan(const memory::MemoryPlan& p, gom::MemoryPlan* out) {
  for (const memory::Placement& v : p.values) {
    gom::Placement* pv = out->add_values();
    pv->set_storage(static_cast<int32_t>(v.storage));
    pv->set_offset(v.offset);
  }
  for (int32_t id : p.concat_in_place) out->add_concat_in_place(id);
  out->set_arena_bytes(p.arena_bytes);
}

void put_execution_plan(const schedule::ExecutionPlan& p, gom::ExecutionPlan* out) {
  for (const schedule::GraphSchedule& g : p.graphs) {
    gom::GraphSchedule* pg = out->add_graphs();
    if (g.streams > 1) {
      pg->set_streams(g.streams);
      pg->set_events(g.events);
    }
    for (const schedule::Step& s : g.steps) {
      gom::Step* ps = pg->add_steps();
      ps->set_node(s.node);
      ps->set_kernel(s.kernel);
      for (ops::Layout l : s.input_layouts) ps->add_input_layouts(static_cast<int32_t>(l));
      for (ops::Layout l : s.output_layouts) ps->add_output_layouts(static_cast<int32_t>(l));
      ps->set_variant(s.variant);
      ps->set_threads(s.threads);
      ps->set_stream(s.stream);
      for (int32_t e : s.wait_events) ps->add_wait_events(e);
      ps->set_record(s.record_event + 1);
    }
  }
}

// Builds the Model message; fills `weights` with constant data.
gom::Model build_model(const ir::Graph& main_graph, const ir::ValueIndex& ids, const memory::MemoryPlan& mp,
                       const schedule::ExecutionPlan& ep, int32_t opset, WeightsBuilder& weights,
                       const std::vector<PackedWeightBytes>& packed) {
  std::vector<const ir::Graph*> graphs;
  std::unordered_map<const ir::Graph*, int32_t> graph_index;
  ir::for_each_graph(main_graph, [&](const ir::Graph& g) {
    graph_index[&g] = static_cast<int32_t>(graphs.size());
    graphs.push_back(&g);
  });
  GEC_CHECK(static_cast<int32_t>(mp.values.size()) == ids.size(), "write_gom: the memory plan does not fit the graph");
  GEC_CHECK(ep.graphs.size() == graphs.size(), "write_gom: the execution plan does not fit the graph");

  gom::Model m;
  m.set_opset(opset);
  // Largest constants first: kernels pack the big ones (convolution weights)
  // once and the session then returns their pages (MappedFile::
  // drop_resident), while small constants (biases, scales) are read at every
  // run. Interleaved, each small one would keep its large page-cache folio
  // (up to 2 MiB) of packed-away weights mapped; kept apart, a handful of
  // pages at the end stay resident.
  std::vector<const Tensor*> by_size;
  for (int32_t id = 0; id < ids.size(); ++id) {
    const ir::Value* v = ids.value(id);
    if (v->is_constant() && v->constant->dtype() != DType::kString) by_size.push_back(v->constant.get());
  }
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const Tensor* a, const Tensor* b) { return a->bytes() > b->bytes(); });
  for (const Tensor* t : by_size) weights.place(*t);
  // Packed copies after every plain constant: a run reads them, and not the
  // plain bytes of what they replace. Constants stored once (equal bytes)
  // share one pointer at load, so one copy per (plain bytes, layout) serves
  // them all.
  std::set<std::pair<uint64_t, std::string>> stored;
  for (const PackedWeightBytes& pw : packed) {
    GEC_CHECK(pw.value >= 0 && pw.value < ids.size() && ids.value(pw.value)->is_constant() &&
                  ids.value(pw.value)->constant->dtype() != DType::kString && pw.data && pw.bytes > 0,
              "write_gom: a packed weight for value " + std::to_string(pw.value) + ", not a numeric constant");
    if (!stored.emplace(weights.place(*ids.value(pw.value)->constant), pw.layout).second) continue;
    gom::PackedWeight* out = m.add_packed_weights();
    out->set_value(pw.value);
    out->set_layout(pw.layout);
    out->set_data_offset(static_cast<int64_t>(weights.place(pw.data, pw.bytes)));
    out->set_bytes(static_cast<int64_t>(pw.bytes));
  }
  for (int32_t id = 0; id < ids.size(); ++id) {
    const ir::Value* v = ids.value(id);
    put_value(*v, graph_index.at(v->owner()), mp.at(id).storage, weights, m.add_values());
  }
  for (const ir::Graph* g : graphs) {
    gom::Graph* pg = m.add_graphs();
    pg->set_name(g->name);
    pg->set_parent(g->parent ? graph_index.at(g->parent) : -1);
    for (const auto& n : g->nodes()) put_node(*n, ids, graph_index, pg->add_nodes());
    for (const ir::Value* v : g->inputs()) pg->add_inputs(ids.id(v));
    for (const ir::Value* v : g->outputs()) pg->add_outputs(ids.id(v));
  }
  put_memory_plan(mp, m.mutable_memory_plan());
  put_execution_plan(ep, m.mutable_execution_plan());
  m.set_weights_bytes(static_cast<int64_t>(weights.size()));
  return m;
}

template <typename T>
void put_pod(std::vector<uint8_t>& out, size_t at, const T& x) {
  std::memcpy(out.data() + at, &x, sizeof(T));
}

}  // namespace

std::vector<uint8_t> write_gom(const ir::Graph& main_graph, const ir::ValueIndex& ids,
                               const memory::MemoryPlan& memory_plan, const schedule::ExecutionPlan& execution_plan,
                               int32_t opset, const std::string& metadata_json,
                               const std::vector<PackedWeightBytes>& packed) {
  main_graph.verify();
  WeightsBuilder weights;
  const gom::Model model = build_model(main_graph, ids, memory_plan, execution_plan, opset, weights, packed);
  std::string model_def;
  GEC_CHECK(model.SerializeToString(&model_def), "write_gom: MODEL_DEF does not serialize (over 2 GB?)");

  // MODEL_DEF, METADATA, WEIGHTS_XXH64, then WEIGHTS at an aligned offset
  // (padding is zeros). The weights, most of the file, are copied once, into
  // place; their block hashes are filled in once they are.
  struct Part { PartitionKind kind; const uint8_t* data; uint64_t size; };
  const uint64_t blocks = (weights.size() + kChecksumBlockBytes - 1) / kChecksumBlockBytes;
  const Part parts[] = {
      {PartitionKind::kModelDef, reinterpret_cast<const uint8_t*>(model_def.data()), model_def.size()},
      {PartitionKind::kMetadata, reinterpret_cast<const uint8_t*>(metadata_json.data()), metadata_json.size()},
      {PartitionKind::kWeightsXxh64, nullptr, (blocks + 1) * sizeof(uint64_t)},
      {PartitionKind::kWeights, nullptr, weights.size()},
  };
  const uint32_t count = sizeof(parts) / sizeof(parts[0]);
  uint64_t cursor = kHeaderSize + count * sizeof(PartitionEntry);
  std::vector<PartitionEntry> table(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (parts[i].kind == PartitionKind::kWeights) cursor = align_up(cursor, kWeightAlign);
    table[i] = PartitionEntry{static_cast<uint32_t>(parts[i].kind), 0, cursor, parts[i].size, 0};
    cursor += parts[i].size;
  }
  std::vector<uint8_t> out;
  out.reserve(cursor);
  out.resize(kHeaderSize + count * sizeof(PartitionEntry), 0);
  for (uint32_t i = 0; i < count; ++i) {
    out.resize(table[i].offset, 0);
    if (parts[i].data) {
      out.insert(out.end(), parts[i].data, parts[i].data + parts[i].size);
    } else {
      out.resize(out.size() + parts[i].size);  // value-initialized, then overwritten
      if (parts[i].kind == PartitionKind::kWeights) weights.copy_to(out.data() + table[i].offset);
    }
  }
  GEC_CHECK(out.size() == cursor, "write_gom: layout mismatch");
  const PartitionEntry& w = table[count - 1];
  const std::vector<uint8_t> block_hashes = weights_block_hashes(out.data() + w.offset, w.size);
  GEC_CHECK(block_hashes.size() == table[count - 2].size, "write_gom: WEIGHTS_XXH64 size mismatch");
  std::memcpy(out.data() + table[count - 2].offset, block_hashes.data(), block_hashes.size());
  for (uint32_t i = 0; i < count; ++i) {
    table[i].xxh64 = XXH64(out.data() + table[i].offset, parts[i].size, 0);
    put_pod(out, kHeaderSize + i * sizeof(PartitionEntry), table[i]);
  }
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format_version = kFormatVersion;
  h.header_size = kHeaderSize;
  h.file_size = out.size();
  h.partition_count = count;
  h.flags = 0;
  h.xxh64 = header_xxh64(out.data(), out.size(), kHeaderSize, &w);
  put_pod(out, 0, h);
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail(ErrorCode::kIo, "cannot open '" + path + "' for writing: " + std::strerror(errno));
  const size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool ok = n == bytes.size() && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok)
    fail(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(ok ? errno : err));
}

}  // namespace gec::model
