// Fuzz target: bytes -> .gom load (every check of model/reader.cc) -> run
// with zero-filled inputs of the declared shapes (dynamic dims 1).
//
// Structure-aware mutator (libFuzzer builds only): a mutant of a valid .gom
// whose checksums are wrong stops at the first hash check, so the mutator
// re-seals every mutant: it re-assembles the file from its partitions
// (MODEL_DEF, METADATA, WEIGHTS_XXH64, WEIGHTS at a 64-byte aligned offset)
// as format version 3, with fresh sizes, block hashes and XXH64s, after mutating either MODEL_DEF as bytes, MODEL_DEF as a
// gec.gom.Model (ids, dims, placements, op types, step layouts), or another
// partition. One mutation in eight stays raw (header and table included).
#include <xxhash.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "gec/error.h"
#include "gec/runtime.h"
#include "gom.pb.h"
#include "model/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  try {
    gec::SessionOptions so;
    so.num_threads = 1;
    so.max_arena_bytes = int64_t{256} << 20;
    auto s = gec::Session::load_from_bytes(bytes, so);
    std::vector<gec::AnyValue> inputs;
    int64_t total = 0;
    for (const gec::IoInfo& io : s->inputs()) {
      if (io.kind != gec::ValueKind::kTensor || !io.has_shape || io.dtype == gec::DType::kUndefined) return 0;
      gec::Shape shape;
      for (int64_t d : io.dims) shape.push_back(d < 0 ? 1 : d);
      const int64_t n = gec::shape_numel(shape);
      if (n < 0 || n > (int64_t{16} << 20)) return 0;
      total += n * static_cast<int64_t>(gec::dtype_size(io.dtype));
      if (total > (int64_t{64} << 20)) return 0;
      inputs.push_back(gec::AnyValue::of_tensor(gec::Tensor(io.dtype, shape)));
    }
    s->run_values(inputs);
  } catch (const gec::Error&) {
  }
  return 0;
}

#ifdef GEC_FUZZING
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using gec::model::FileHeader;
using gec::model::PartitionEntry;

struct Parts {
  FileHeader header;
  std::vector<uint8_t> model_def, metadata, weights;
};

bool split(const uint8_t* d, size_t n, Parts& p) {
  if (n < sizeof(FileHeader)) return false;
  std::memcpy(&p.header, d, sizeof(FileHeader));
  const FileHeader& h = p.header;
  if (h.header_size < sizeof(FileHeader) || h.partition_count > 16 ||
      h.header_size + uint64_t{h.partition_count} * sizeof(PartitionEntry) > n)
    return false;
  for (uint32_t i = 0; i < h.partition_count; ++i) {
    PartitionEntry e;
    std::memcpy(&e, d + h.header_size + i * sizeof(PartitionEntry), sizeof(e));
    if (e.offset > n || e.size > n - e.offset) return false;
    std::vector<uint8_t> bytes(d + e.offset, d + e.offset + e.size);
    if (e.kind == 1) p.model_def = std::move(bytes);
    else if (e.kind == 2) p.weights = std::move(bytes);
    else if (e.kind == 3) p.metadata = std::move(bytes);
  }
  return !p.model_def.empty();
}

// The file of `p`: header, four table entries, MODEL_DEF, METADATA,
// WEIGHTS_XXH64, WEIGHTS (64-aligned), every size and checksum recomputed
// (format version 3). 0 when over max_size.
size_t assemble(const Parts& p, uint8_t* out, size_t max_size) {
  std::vector<uint8_t> f(sizeof(FileHeader) + 4 * sizeof(PartitionEntry), 0);
  PartitionEntry table[4];
  const std::vector<uint8_t> sums = gec::model::weights_block_hashes(p.weights.data(), p.weights.size());
  const std::vector<uint8_t>* parts[4] = {&p.model_def, &p.metadata, &sums, &p.weights};
  const uint32_t kinds[4] = {1, 3, 4, 2};
  for (int i = 0; i < 4; ++i) {
    if (i == 3) f.resize(gec::model::align_up(f.size(), gec::model::kWeightAlign), 0);
    table[i] = PartitionEntry{kinds[i], 0, f.size(), parts[i]->size(), XXH64(parts[i]->data(), parts[i]->size(), 0)};
    f.insert(f.end(), parts[i]->begin(), parts[i]->end());
  }
  FileHeader h = p.header;
  h.format_version = gec::model::kFormatVersion;
  h.header_size = sizeof(FileHeader);
  h.partition_count = 4;
  h.file_size = f.size();
  std::memcpy(f.data() + sizeof(FileHeader), table, sizeof(table));
  h.xxh64 = gec::model::header_xxh64(f.data(), f.size(), sizeof(FileHeader), &table[3]);
  std::memcpy(f.data(), &h, sizeof(h));
  if (f.size() > max_size) return 0;
  std::memcpy(out, f.data(), f.size());
  return f.size();
}

void mutate_bytes(std::vector<uint8_t>& v) {
  const size_t n = v.size();
  v.resize(n * 2 + 64);
  v.resize(LLVMFuzzerMutate(v.data(), n, v.size()));
}

// One semantic edit of the Model message.
void mutate_model(gec::gom::Model& m, std::mt19937& rng) {
  auto pick = [&](int n) { return n > 0 ? static_cast<int>(rng() % static_cast<unsigned>(n)) : -1; };
  const int nv = m.values_size();
  gec::gom::Graph* g = m.graphs_size() ? m.mutable_graphs(pick(m.graphs_size())) : nullptr;
  gec::gom::Node* node = g && g->nodes_size() ? g->mutable_nodes(pick(g->nodes_size())) : nullptr;
  switch (rng() % 8) {
    case 0:
      if (node && node->inputs_size()) node->set_inputs(pick(node->inputs_size()), pick(nv + 1) - 1);
      break;
    case 1:
      if (node && g->nodes_size() > 1) node->set_op_type(g->nodes(pick(g->nodes_size())).op_type());
      break;
    case 2:
      if (node && node->inputs_size()) node->mutable_inputs()->RemoveLast();
      break;
    case 3:
      if (nv) {
        auto* t = m.mutable_values(pick(nv))->mutable_type();
        if (t->dims_size()) t->mutable_dims(pick(t->dims_size()))->set_value(static_cast<int64_t>(rng() % 10) - 1);
      }
      break;
    case 4:
      if (m.memory_plan().values_size()) {
        auto* pl = m.mutable_memory_plan()->mutable_values(pick(m.memory_plan().values_size()));
        const int64_t arena = std::max<int64_t>(1, m.memory_plan().arena_bytes());
        pl->set_offset(static_cast<int64_t>(rng() % static_cast<uint64_t>(arena)) & ~int64_t{3});
      }
      break;
    case 5:
      if (m.memory_plan().values_size())
        m.mutable_memory_plan()->mutable_values(pick(m.memory_plan().values_size()))->set_storage(pick(5));
      break;
    case 6:
      if (node && node->outputs_size() && nv) node->set_outputs(pick(node->outputs_size()), pick(nv));
      break;
    default:
      if (m.execution_plan().graphs_size() && m.execution_plan().graphs(0).steps_size()) {
        auto* st = m.mutable_execution_plan()->mutable_graphs(0)->mutable_steps(
            pick(m.execution_plan().graphs(0).steps_size()));
        st->add_output_layouts(pick(2));
      }
      break;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  Parts p;
  if (rng() % 8 == 0 || !split(data, size, p)) return LLVMFuzzerMutate(data, size, max_size);
  switch (rng() % 4) {
    case 0:
    case 1: {
      gec::gom::Model m;
      if (m.ParseFromArray(p.model_def.data(), static_cast<int>(p.model_def.size()))) {
        mutate_model(m, rng);
        std::string s;
        m.SerializeToString(&s);
        p.model_def.assign(s.begin(), s.end());
      } else {
        mutate_bytes(p.model_def);
      }
      break;
    }
    case 2: mutate_bytes(p.model_def); break;
    default: mutate_bytes(rng() % 2 ? p.metadata : p.weights); break;
  }
  const size_t n = assemble(p, data, max_size);
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
#endif  // GEC_FUZZING
