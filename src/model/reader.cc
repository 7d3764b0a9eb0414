// .gom loader: validates the container (header, version, sizes, checksums,
// partition bounds), then rebuilds the IR from MODEL_DEF, checking every id,
// code and offset before it is used, so that no input file can crash it or
// make it read outside the file. Constants alias the WEIGHTS bytes.
#include "model/reader.h"
#include "schedule/concurrency.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <limits>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "gec/error.h"
#include "gom.pb.h"
#include "memory/planner.h"
#include "model/format.h"
#include "ops/layout.h"
#include "ops/op_schema.h"
#include "support/mapped_file.h"

namespace gec::model {

const char* partition_kind_name(uint32_t kind) {
  switch (static_cast<PartitionKind>(kind)) {
    case PartitionKind::kModelDef: return "MODEL_DEF";
    case PartitionKind::kWeights: return "WEIGHTS";
    case PartitionKind::kMetadata: return "METADATA";
    case PartitionKind::kWeightsXxh64: return "WEIGHTS_XXH64";
  }
  return "UNKNOWN";
}

namespace {

std::string kind_label(uint32_t kind) {
  std::string n = partition_kind_name(kind);
  return n == "UNKNOWN" ? "UNKNOWN(" + std::to_string(kind) + ")" : n;
}

[[noreturn]] void corrupt(const std::string& file, const std::string& why) {
  fail(ErrorCode::kCorruptFile, "'" + file + "': " + why);
}

// ---- container: header, partition table, checksums ----------------------------

struct Layout {
  FileHeader header{};
  std::vector<PartitionEntry> parts;
  bool checksum_ok = true;
  std::vector<bool> part_checksum_ok;
  // Index into parts, or -1.
  int model_def = -1, weights = -1, metadata = -1, weights_xxh64 = -1;
  // WEIGHTS' block hashes, when the caller checks them later
  // (defer_weights_check): the partition's place was checked, its hashes not.
  bool weights_check_deferred = false;
  uint64_t weights_block_bytes = 0;
};

bool in_bounds(const PartitionEntry& p, size_t n) { return p.offset <= n && p.size <= n - p.offset; }

// Checks header fields that must hold before anything else can be trusted.
FileHeader read_header(const uint8_t* d, size_t n, const std::string& file) {
  // Check the magic on what there is, so that a short foreign file is "not a
  // model" while a short prefix of a model is "truncated".
  const size_t magic_len = n < sizeof(kMagic) ? n : sizeof(kMagic);
  if (magic_len > 0 && std::memcmp(d, kMagic, magic_len) != 0)
    corrupt(file, "not a GraphEngine offline model (bad magic; `gec compile` makes one from an ONNX or TensorFlow model)");
  if (n < kHeaderSize)
    corrupt(file, "truncated (" + std::to_string(n) + " bytes, shorter than the " +
                      std::to_string(kHeaderSize) + "-byte header)");
  FileHeader h;
  std::memcpy(&h, d, sizeof(h));
  if (h.format_version > kFormatVersion)
    corrupt(file, "written by a newer GraphEngine (format version " + std::to_string(h.format_version) +
                      "; this build reads " + std::to_string(kFormatVersion) + ")");
  if (h.format_version == 0) corrupt(file, "corrupted: format version 0");
  if (h.format_version < kOldestFormatVersion)
    corrupt(file, "format version " + std::to_string(h.format_version) + ", older than the oldest this build reads (" +
                      std::to_string(kOldestFormatVersion) + "): recompile the model (gec compile)");
  if (h.file_size > n)
    corrupt(file, "truncated (expected " + std::to_string(h.file_size) + " bytes, found " + std::to_string(n) + ")");
  if (h.file_size < n)
    corrupt(file, "corrupted: file size mismatch (header says " + std::to_string(h.file_size) + " bytes, found " +
                      std::to_string(n) + ")");
  if (h.header_size < kHeaderSize || h.header_size > n)
    corrupt(file, "corrupted: header size " + std::to_string(h.header_size) + " out of range");
  if (h.partition_count > (n - h.header_size) / sizeof(PartitionEntry))
    corrupt(file, "corrupted: partition table (" + std::to_string(h.partition_count) +
                      " entries) runs past the end of the file");
  return h;
}

// Names the damaged part after the whole-file hash failed (only then are
// partitions hashed a second time).
// `skip`: a partition not to hash (WEIGHTS, which the header's hash of format
// version 3 does not cover), or -1.
std::string locate_checksum_damage(const uint8_t* d, size_t n, const Layout& l, int skip = -1) {
  for (size_t i = 0; i < l.parts.size(); ++i) {
    const PartitionEntry& p = l.parts[i];
    if (static_cast<int>(i) != skip && in_bounds(p, n) && XXH64(d + p.offset, p.size, 0) != p.xxh64)
      return kind_label(p.kind);
  }
  return "partition table or padding";
}

// Bytes read per pread() when hashing a mapped file: small enough to stay
// in cache between the copy and the hash.
constexpr size_t kReadChunk = size_t{128} << 10;

// XXH64 of [d, d + n) of a `mapped` file read with pread() through `buf`
// (MappedFile::read: the mapping's pages are never touched, so verifying
// makes nothing resident and costs no page faults); nullopt when the file
// cannot be read that way.
std::optional<uint64_t> hash_read(const uint8_t* d, size_t n, const MappedFile& mapped, std::vector<uint8_t>& buf) {
  buf.resize(kReadChunk);
  const std::unique_ptr<XXH64_state_t, XXH_errorcode (*)(XXH64_state_t*)> st(XXH64_createState(), XXH64_freeState);
  if (!st) fail(ErrorCode::kInternal, "out of memory hashing the offline model");
  XXH64_reset(st.get(), 0);
  for (size_t at = 0; at < n; at += kReadChunk) {
    const size_t len = std::min(kReadChunk, n - at);
    if (!mapped.read(d + at, buf.data(), len)) return std::nullopt;  // throws when the file shrank
    XXH64_update(st.get(), buf.data(), len);
  }
  return XXH64_digest(st.get());
}

// XXH64 of [d, d + n). When the bytes are `mapped`, reads them with
// pread() (hash_read); where that fails, hashes the mapping a few MiB at a
// time and drops each piece's pages after it, so checksumming a large file
// never holds all of it resident (weights are faulted back in by the
// kernels that read them, and only those).
uint64_t hash_bytes(const uint8_t* d, size_t n, const MappedFile* mapped) {
  if (!mapped) return XXH64(d, n, 0);
  std::vector<uint8_t> buf;
  if (const std::optional<uint64_t> h = hash_read(d, n, *mapped, buf)) return *h;
  XXH64_state_t* st = XXH64_createState();
  if (!st) fail(ErrorCode::kInternal, "out of memory hashing the offline model");
  XXH64_reset(st, 0);
  // Pieces end on 4 MiB boundaries of the address space, so every piece
  // after the first starts on a page and no page straddles two of them.
  constexpr uintptr_t kPiece = uintptr_t{4} << 20;
  for (size_t at = 0; at < n;) {
    const uintptr_t here = reinterpret_cast<uintptr_t>(d + at);
    const size_t len = std::min<size_t>((here / kPiece + 1) * kPiece - here, n - at);
    XXH64_update(st, d + at, len);
    mapped->drop_resident(d + at, len);
    at += len;
  }
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

// Index of the first block of the `n` bytes of WEIGHTS at `w` whose XXH64
// differs from its entry in `hashes` (block_bytes each, the last one
// shorter), or -1 when none does. Blocks are taken in turn by `threads`
// threads; a `mapped` file is read with pread() (hash_read), or where that
// fails through the mapping with each block's pages dropped after it is
// hashed (as hash_bytes does), so verifying never holds WEIGHTS resident.
int64_t first_bad_block(const uint8_t* w, uint64_t n, const uint8_t* hashes, uint64_t block_bytes, int threads,
                        const MappedFile* mapped) {
  const uint64_t blocks = (n + block_bytes - 1) / block_bytes;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> bad{blocks};
  std::atomic<bool> shrank{false};  // the file ended early (MappedFile::read)
  std::exception_ptr shrank_error;   // set by the one thread that saw it first
  const auto work = [&]() noexcept {
    std::vector<uint8_t> buf;  // this thread's pread() buffer (hash_read)
    for (uint64_t k; (k = next.fetch_add(1)) < blocks && k < bad.load(std::memory_order_relaxed) &&
                     !shrank.load(std::memory_order_relaxed);) {
      const uint64_t at = k * block_bytes, len = std::min(block_bytes, n - at);
      uint64_t want;
      std::memcpy(&want, hashes + k * sizeof(uint64_t), sizeof(want));
      std::optional<uint64_t> got;
      try {
        if (mapped) got = hash_read(w + at, len, *mapped, buf);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kIo) {
          // The file shrank: its mapping must not be read past the end.
          if (!shrank.exchange(true)) shrank_error = std::current_exception();
          return;
        }
        // No memory for the hash state: hash through the mapping.
      } catch (...) {
        // No memory for the buffer: hash through the mapping.
      }
      if (shrank.load()) return;
      if (!got) {
        got = XXH64(w + at, len, 0);
        if (mapped) mapped->drop_resident(w + at, len);
      }
      if (*got != want)
        for (uint64_t b = bad.load(); k < b && !bad.compare_exchange_weak(b, k);) {
        }
    }
  };
  const uint64_t helpers = std::min<uint64_t>(static_cast<uint64_t>(std::max(threads, 1)), blocks);
  std::vector<std::thread> pool;
  try {
    for (uint64_t t = 1; t < helpers; ++t) pool.emplace_back(work);
  } catch (...) {
    // No more threads (a pids limit) or memory for them: this thread does the rest.
  }
  work();
  for (auto& t : pool) t.join();
  if (shrank_error) std::rethrow_exception(shrank_error);
  return bad.load() < blocks ? static_cast<int64_t>(bad.load()) : -1;
}

[[noreturn]] void weights_mismatch(const std::string& file, int64_t bad, uint64_t block_bytes, uint64_t size) {
  const uint64_t at = static_cast<uint64_t>(bad) * block_bytes;
  corrupt(file, "corrupted: checksum mismatch in WEIGHTS (block " + std::to_string(bad) + ", bytes " +
                    std::to_string(at) + ".." + std::to_string(std::min(at + block_bytes, size)) +
                    " of the partition)");
}

// Checks the checksums of format version 3 (format.h): the header's hash of
// every byte but WEIGHTS', then WEIGHTS block by block on `threads` threads.
// With `strict` a mismatch throws; otherwise it is recorded in `l`. With
// `defer`, WEIGHTS' hashes are left for the caller (Layout::weights_check_deferred)
// once their partition is known to fit.
void check_v3_checksums(const uint8_t* d, size_t n, const std::string& file, bool strict, const MappedFile* mapped,
                        int threads, Layout& l, bool defer) {
  const FileHeader& h = l.header;
  const PartitionEntry* w = l.weights >= 0 ? &l.parts[l.weights] : nullptr;
  if (header_xxh64(d, n, h.header_size, w) != h.xxh64) {
    l.checksum_ok = false;
    if (strict) corrupt(file, "corrupted: checksum mismatch in " + locate_checksum_damage(d, n, l, l.weights));
    return;
  }
  if (!w) return;
  // WEIGHTS_XXH64 is under the header's hash, which has just matched.
  if (l.weights_xxh64 < 0) corrupt(file, "corrupted: WEIGHTS without a WEIGHTS_XXH64 partition");
  const PartitionEntry& c = l.parts[l.weights_xxh64];
  uint64_t block_bytes = 0;
  if (c.size >= sizeof(uint64_t)) std::memcpy(&block_bytes, d + c.offset, sizeof(uint64_t));
  // Blocks of 64-byte multiples: at most one drop_resident call per page.
  if (block_bytes == 0 || block_bytes % kWeightAlign != 0 || block_bytes > (uint64_t{1} << 40) ||
      c.size != ((w->size + block_bytes - 1) / block_bytes + 1) * sizeof(uint64_t))
    corrupt(file, "corrupted: WEIGHTS_XXH64 (" + std::to_string(c.size) + " bytes, blocks of " +
                      std::to_string(block_bytes) + ") does not fit WEIGHTS' " + std::to_string(w->size) + " bytes");
  if (defer) {
    l.weights_check_deferred = true;
    l.weights_block_bytes = block_bytes;
    return;
  }
  const int64_t bad =
      first_bad_block(d + w->offset, w->size, d + c.offset + sizeof(uint64_t), block_bytes, threads, mapped);
  if (bad < 0) return;
  l.checksum_ok = false;
  if (strict) weights_mismatch(file, bad, block_bytes, w->size);
}

// Parses the container. With `strict`, checksum mismatches throw; otherwise
// they are recorded in the Layout (for inspect). `mapped`: the mapping `d`
// lies in, or null. `threads`: how many threads verify WEIGHTS' blocks.
// `defer_weights`: leave WEIGHTS' block hashes of a version 3 file unchecked
// (Layout::weights_check_deferred says when they were).
Layout read_layout(const uint8_t* d, size_t n, const std::string& file, bool strict,
                   const MappedFile* mapped = nullptr, int threads = 1, bool defer_weights = false) {
  Layout l;
  l.header = read_header(d, n, file);
  const FileHeader& h = l.header;
  l.parts.resize(h.partition_count);
  if (h.partition_count)
    std::memcpy(l.parts.data(), d + h.header_size, h.partition_count * sizeof(PartitionEntry));
  // Version 2 hashes everything first, so that damage anywhere reads as a
  // checksum mismatch; version 3 needs WEIGHTS' place (checked below) first.
  const bool v2 = h.format_version < 3;
  if (v2) {
    l.checksum_ok = hash_bytes(d + h.header_size, n - h.header_size, mapped) == h.xxh64;
    if (!l.checksum_ok && strict)
      corrupt(file, "corrupted: checksum mismatch in " + locate_checksum_damage(d, n, l));
  }

  const uint64_t table_end = h.header_size + uint64_t{h.partition_count} * sizeof(PartitionEntry);
  for (size_t i = 0; i < l.parts.size(); ++i) {
    const PartitionEntry& p = l.parts[i];
    const std::string name = kind_label(p.kind);
    if (!in_bounds(p, n) || p.offset < table_end)
      corrupt(file, "corrupted: partition " + name + " (offset " + std::to_string(p.offset) + ", size " +
                        std::to_string(p.size) + ") lies outside the file's data area");
    int* slot = p.kind == uint32_t(PartitionKind::kModelDef)  ? &l.model_def
                : p.kind == uint32_t(PartitionKind::kWeights) ? &l.weights
                : p.kind == uint32_t(PartitionKind::kMetadata) ? &l.metadata
                : p.kind == uint32_t(PartitionKind::kWeightsXxh64) && !v2 ? &l.weights_xxh64
                                                                            : nullptr;
    if (!slot) continue;  // unknown kinds are skipped: a later minor addition
    if (*slot >= 0) corrupt(file, "corrupted: two " + name + " partitions");
    *slot = static_cast<int>(i);
  }
  if (l.model_def < 0) corrupt(file, "corrupted: no MODEL_DEF partition");
  // No two partitions share a byte (a WEIGHTS partition laid over MODEL_DEF
  // would hand its bytes to the kernels as weights).
  for (size_t i = 0; i < l.parts.size(); ++i)
    for (size_t j = i + 1; j < l.parts.size(); ++j) {
      const PartitionEntry& a = l.parts[i];
      const PartitionEntry& b = l.parts[j];
      if (a.size && b.size && a.offset < b.offset + b.size && b.offset < a.offset + a.size)
        corrupt(file, "corrupted: partitions " + kind_label(a.kind) + " and " + kind_label(b.kind) + " overlap");
    }
  if (l.weights >= 0 && l.parts[l.weights].offset % kWeightAlign != 0)
    corrupt(file, "corrupted: WEIGHTS partition is not 64-byte aligned");
  if (!v2) check_v3_checksums(d, n, file, strict, mapped, threads, l, defer_weights);
  for (const PartitionEntry& p : l.parts) l.part_checksum_ok.push_back(l.checksum_ok || XXH64(d + p.offset, p.size, 0) == p.xxh64);
  return l;
}

bool parse_model_def(const uint8_t* d, const Layout& l, gom::Model& m) {
  const PartitionEntry& p = l.parts[l.model_def];
  if (p.size > static_cast<uint64_t>(INT_MAX)) return false;
  return m.ParseFromArray(d + p.offset, static_cast<int>(p.size));
}

// ---- MODEL_DEF -> IR --------------------------------------------------------------

// Product of dims with overflow and sign checks; false when invalid.
bool checked_numel(const Shape& s, int64_t& out) {
  out = 1;
  for (int64_t d : s)
    if (d < 0) return false;
  for (int64_t d : s)
    if (d == 0) { out = 0; return true; }
  for (int64_t d : s) {
    if (out > std::numeric_limits<int64_t>::max() / d) return false;
    out *= d;
  }
  return true;
}

// Byte size of a dense tensor, or -1 when the shape or dtype is invalid or the
// size overflows.
int64_t checked_bytes(DType dt, const Shape& s) {
  int64_t n = 0;
  if (!checked_numel(s, n)) return -1;
  const int64_t esz = static_cast<int64_t>(dtype_size(dt));
  if (esz > 0 && n > std::numeric_limits<int64_t>::max() / esz) return -1;
  return n * esz;
}

class GraphBuilder {
 public:
  GraphBuilder(const gom::Model& m, const std::string& file, const uint8_t* weights, uint64_t weights_size,
               std::shared_ptr<void> owner)
      : m_(m), file_(file), weights_(weights), weights_size_(weights_size), owner_(std::move(owner)) {}

  /// Fills r.graph, r.graphs, r.ids, r.memory_plan and r.execution_plan.
  void build(LoadedModel& r) {
    make_graphs();
    read_memory_plan(r.memory_plan);
    make_values(r.memory_plan);
    for (int gi = 0; gi < m_.graphs_size(); ++gi) make_nodes(gi);
    for (int gi = 0; gi < m_.graphs_size(); ++gi) bind_io(gi);
    for (size_t gi = 1; gi < graphs_.size(); ++gi)
      if (!claimed_[gi]) bad("subgraph " + std::to_string(gi) + " is not attached to any node");
    read_execution_plan(r.execution_plan, r.memory_plan);
    std::unordered_set<const ir::Value*> defined;
    check_order(0, r.execution_plan, defined);
    check_concats(r.memory_plan);
    check_graph_inputs(r.memory_plan);
    try {
      main_->verify();
    } catch (const Error& e) {
      bad(std::string("inconsistent graph: ") + e.what());
    }
    r.ids = ir::ValueIndex::of_values(values_);
    check_plans_against_ops(r);
    r.graphs.assign(graphs_.begin(), graphs_.end());
    r.graph = std::move(main_);
    r.subgraph_owner = std::move(subgraphs_);
  }

 private:
  [[noreturn]] void bad(const std::string& why) const { corrupt(file_, "corrupted: " + why); }

  void make_graphs() {
    const int count = m_.graphs_size();
    if (count == 0) bad("MODEL_DEF holds no graph");
    depth_.assign(count, 0);
    claimed_.assign(count, false);
    for (int gi = 0; gi < count; ++gi) {
      const gom::Graph& pg = m_.graphs(gi);
      ir::Graph* g;
      if (gi == 0) {
        if (pg.parent() != -1) bad("main graph has a parent");
        main_ = std::make_unique<ir::Graph>();
        g = main_.get();
      } else {
        if (pg.parent() < 0 || pg.parent() >= gi)
          bad("graph " + std::to_string(gi) + " has invalid parent " + std::to_string(pg.parent()));
        depth_[gi] = depth_[pg.parent()] + 1;
        if (depth_[gi] > kMaxGraphDepth) bad("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth));
        subgraphs_.push_back(std::make_shared<ir::Graph>());
        g = subgraphs_.back().get();
        g->parent = graphs_[pg.parent()];
      }
      g->name = pg.name();
      graphs_.push_back(g);
    }
  }

  ir::TensorType make_type(const gom::TensorType& pt, const std::string& what) const {
    if (pt.dtype() != 0 && !dtype_is_valid(pt.dtype()))
      bad(what + " has invalid dtype code " + std::to_string(pt.dtype()));
    if (!pt.has_shape() && pt.dims_size() > 0) bad(what + " has dims but no shape");
    if (pt.kind() < 0 || pt.kind() > static_cast<int32_t>(ValueKind::kOptionalSequence))
      bad(what + " has invalid value kind " + std::to_string(pt.kind()));
    ir::TensorType t;
    t.kind = static_cast<ValueKind>(pt.kind());
    t.dtype = static_cast<DType>(pt.dtype());
    t.has_shape = pt.has_shape();
    for (const gom::Dim& d : pt.dims()) {
      if (d.value() < -1) bad(what + " has dim " + std::to_string(d.value()));
      t.dims.push_back(ir::Dim{d.value(), d.param()});
    }
    return t;
  }

  std::shared_ptr<Tensor> make_constant(const gom::Value& pv, const std::string& what) const {
    if (!dtype_is_valid(pv.const_dtype())) bad(what + " has invalid dtype code " + std::to_string(pv.const_dtype()));
    const DType dt = static_cast<DType>(pv.const_dtype());
    const Shape shape(pv.const_shape().begin(), pv.const_shape().end());
    int64_t numel = 0;
    if (!checked_numel(shape, numel)) bad(what + " has invalid shape " + shape_str(shape));
    if (dt == DType::kString) {
      if (numel != pv.strings_size()) bad(what + ": string count does not match shape " + shape_str(shape));
      auto t = std::make_shared<Tensor>(dt, shape);
      for (int64_t i = 0; i < numel; ++i) t->as<std::string>()[i] = pv.strings(static_cast<int>(i));
      return t;
    }
    const int64_t bytes = checked_bytes(dt, shape);
    if (bytes < 0 || bytes != pv.bytes()) bad(what + ": byte size does not match " + dtype_name(dt) + shape_str(shape));
    const uint64_t off = static_cast<uint64_t>(pv.data_offset());
    if (pv.data_offset() < 0 || off > weights_size_ || static_cast<uint64_t>(bytes) > weights_size_ - off)
      bad(what + ": data (offset " + std::to_string(pv.data_offset()) + ", " + std::to_string(bytes) +
          " bytes) lies outside WEIGHTS (" + std::to_string(weights_size_) + " bytes)");
    if (off % kWeightAlign != 0) bad(what + ": weight offset " + std::to_string(off) + " is not 64-byte aligned");
    // Read-only memory, typed void* only because Tensor is one type for all.
    void* data = const_cast<uint8_t*>(weights_ ? weights_ + off : nullptr);
    return std::make_shared<Tensor>(dt, shape, data, owner_);
  }

  void read_memory_plan(memory::MemoryPlan& plan) const {
    const gom::MemoryPlan& pm = m_.memory_plan();
    if (pm.arena_bytes() < 0) bad("negative arena size");
    if (pm.values_size() != m_.values_size())
      bad("the memory plan places " + std::to_string(pm.values_size()) + " values, the model has " +
          std::to_string(m_.values_size()));
    plan.arena_bytes = pm.arena_bytes();
    for (int id = 0; id < pm.values_size(); ++id) {
      const gom::Placement& pp = pm.values(id);
      if (pp.storage() < 0 || pp.storage() > memory::kMaxStorageCode)
        bad("value " + std::to_string(id) + " has invalid storage code " + std::to_string(pp.storage()));
      plan.values.push_back({static_cast<memory::Storage>(pp.storage()), pp.offset()});
    }
    int32_t prev = -1;
    for (int32_t id : pm.concat_in_place()) {
      if (id <= prev || id >= m_.values_size()) bad("memory plan: Concat-in-place list is not sorted value ids");
      plan.concat_in_place.push_back(prev = id);
    }
  }

  void make_values(const memory::MemoryPlan& plan) {
    values_.reserve(m_.values_size());
    int last_graph = 0;
    for (int id = 0; id < m_.values_size(); ++id) {
      const gom::Value& pv = m_.values(id);
      const std::string what = "value " + std::to_string(id) + " ('" + pv.name() + "')";
      if (pv.graph() < last_graph || pv.graph() >= m_.graphs_size())
        bad(what + " has invalid graph index " + std::to_string(pv.graph()));
      last_graph = pv.graph();
      ir::Value* v = graphs_[pv.graph()]->add_value(pv.name(), make_type(pv.type(), what));
      const memory::Placement& p = plan.at(id);
      if (p.storage == memory::Storage::kUnplanned) bad(what + " has no place in the memory plan");
      if (p.storage == memory::Storage::kWeight && !v->type.is_tensor()) bad(what + ": a constant " + v->type.str());
      if (p.storage == memory::Storage::kWeight) v->constant = make_constant(pv, what);
      if (p.storage == memory::Storage::kArena) {
        if (pv.graph() != 0) bad(what + ": an arena slot for a subgraph value");
        check_arena_slot(*v, p, plan.arena_bytes, what);
      }
      values_.push_back(v);
    }
  }

  void check_arena_slot(const ir::Value& v, const memory::Placement& p, int64_t arena_bytes,
                        const std::string& what) const {
    if (p.offset < 0 || p.offset > arena_bytes) bad(what + ": arena offset out of range");
    if (!v.type.is_tensor()) bad(what + ": an arena slot for a " + v.type.str());
    if (!v.type.is_static() || v.type.dtype == DType::kString) bad(what + ": an arena slot for " + v.type.str());
    const int64_t bytes = checked_bytes(v.type.dtype, v.type.static_shape());
    if (bytes < 0 || bytes > arena_bytes - p.offset) bad(what + ": arena slot runs past the arena");
  }

  std::unordered_map<const ir::Value*, int32_t> value_ids_;      // check_layouts: value -> id
  std::unordered_map<const ir::Value*, ops::Layout> written_;   //   and the layout each was written in

  // Each graph's steps name each of its nodes once, in node-table order
  // (the plan verifier's lifetimes follow that order), with valid layout
  // codes, one per input/output or none. Only the main graph has streams;
  // their events must make a run that cannot deadlock (schedule::Concurrency
  // checks that, at verify time).
  void read_execution_plan(schedule::ExecutionPlan& plan, const memory::MemoryPlan& mp) {
    const gom::ExecutionPlan& pe = m_.execution_plan();
    if (pe.graphs_size() != m_.graphs_size())
      bad("the execution plan schedules " + std::to_string(pe.graphs_size()) + " graphs, the model has " +
          std::to_string(m_.graphs_size()));
    for (int gi = 0; gi < pe.graphs_size(); ++gi) {
      const std::vector<ir::Node*> nodes = graphs_[gi]->node_list();
      schedule::GraphSchedule& gs = plan.graphs.emplace_back();
      const gom::GraphSchedule& pg = pe.graphs(gi);
      gs.streams = std::max(1, pg.streams());
      gs.events = pg.events();
      // The main graph's streams and events are checked by
      // schedule::Concurrency (check_plans_against_ops) before any use.
      if (gi > 0 && (gs.streams != 1 || gs.events != 0))
        bad("graph " + std::to_string(gi) + " is a subgraph and has streams or events of its own");
      for (const gom::Step& ps : pg.steps()) {
        const size_t index = gs.steps.size();
        const std::string what = "graph " + std::to_string(gi) + " step " + std::to_string(index);
        if (index >= nodes.size() || ps.node() != static_cast<int32_t>(index))
          bad(what + " names node " + std::to_string(ps.node()) +
              "; steps run each node once (out of range or twice is refused), in node order");
        const ir::Node& n = *nodes[index];
        schedule::Step s;
        s.node = ps.node();
        s.kernel = ps.kernel();
        s.variant = ps.variant();
        if (ps.threads() != 0 && ps.threads() != 1)
          bad(what + " has threads " + std::to_string(ps.threads()) + " (0 or 1)");
        s.threads = ps.threads();
        s.stream = ps.stream();
        s.record_event = ps.record() - 1;
        if (gi > 0 && (s.stream != 0 || ps.record() != 0 || ps.wait_events_size() != 0))
          bad(what + " is in a subgraph and names a stream or events");
        s.wait_events.assign(ps.wait_events().begin(), ps.wait_events().end());
        read_layouts(ps.input_layouts(), n.inputs().size(), s.input_layouts, what + " (" + n.describe() + ") inputs");
        read_layouts(ps.output_layouts(), n.outputs().size(), s.output_layouts, what + " (" + n.describe() + ") outputs");
        gs.steps.push_back(std::move(s));
      }
      if (gs.steps.size() != nodes.size())
        bad("graph " + std::to_string(gi) + ": the execution plan has " + std::to_string(gs.steps.size()) +
            " steps for " + std::to_string(nodes.size()) + " nodes");
      check_layouts(gi, nodes, gs, mp);
    }
  }

  // The layouts agree along every edge (ops/layout.h) and with each op's
  // layout rule (ops/op_schema.h LayoutRule; many kernels only honour the
  // output's layout, so the plan must not claim more):
  //  - a step reads each value in the layout its producer (or a Reorder's
  //    `to`) wrote it; graph inputs, constants and graph outputs are plain,
  //    and so is every value a subgraph reads from an outer graph (the
  //    `written` map spans the graphs, main first);
  //  - a non-plain value is an arena value (its type checked against its
  //    op's inference) of static float32 [N,C,H,W] whose C the layout fits;
  //    subgraphs are all plain;
  //  - plain-only ops read and write plain; a unary pass-through writes
  //    input 0's layout and reads its other inputs plain; binary and
  //    elementwise groups write one layout and read each operand in it, or
  //    plain for a per-channel operand or a one-element constant; global
  //    pools write plain. (Conv, pools, Concat, Resize and ConvTranspose
  //    kernels check their own layouts when made.)
  // A value of H = W = 1 whose type is checked (arena, constant, graph
  // input) has the same bytes in every layout and may be read in any. A
  // plan that broke these would run with kernels reading bytes in another
  // order: wrong numbers, silently.
  void check_layouts(int gi, const std::vector<ir::Node*>& nodes, const schedule::GraphSchedule& gs,
                     const memory::MemoryPlan& mp) {
    if (value_ids_.empty())
      for (size_t id = 0; id < values_.size(); ++id) value_ids_[values_[id]] = static_cast<int32_t>(id);
    const auto storage = [&](const ir::Value* v) {
      auto it = value_ids_.find(v);
      return it == value_ids_.end() || static_cast<size_t>(it->second) >= mp.values.size()
                 ? memory::Storage::kUnplanned
                 : mp.at(it->second).storage;
    };
    const auto typed = [&](const ir::Value* v) {  // a type the load checks
      const memory::Storage st = storage(v);
      return v->is_constant() || st == memory::Storage::kArena || st == memory::Storage::kGraphInput;
    };
    const auto layout_free = [&](const ir::Value* v) {
      return typed(v) && v->type.is_static() && ops::same_bytes_in_every_layout(v->type.static_shape());
    };
    const auto check_holdable = [&](const ir::Value* v, ops::Layout l, const std::string& what) {
      if (l == ops::Layout::kPlain) return;
      if (gi > 0) bad(what + ": a subgraph value in layout " + ops::layout_name(l) + " (subgraphs run plain)");
      bool ok = (storage(v) == memory::Storage::kArena || layout_free(v)) && v->type.is_tensor() &&
                v->type.is_static() && v->type.dtype == DType::kFloat32;
      const Shape sh = ok ? v->type.static_shape() : Shape{};
      ok = ok && sh.size() == 4 && ops::layout_fits_channels(l, sh[1]);
      if (!ok) bad(what + ": '" + v->name() + "' of type " + v->type.str() + " cannot be held in layout " +
                   ops::layout_name(l));
    };
    for (size_t k = 0; k < nodes.size(); ++k) {
      const ir::Node& n = *nodes[k];
      const schedule::Step& st = gs.steps[k];
      const std::string what = "graph " + std::to_string(gi) + " step " + std::to_string(k) + " (" + n.describe() + ")";
      // A Reorder converts between the layouts its attributes name (its
      // step's own layouts stay plain).
      const bool reorder = n.domain == ops::kGecDomain && n.op_type == ops::kReorderOp;
      ops::Layout from = ops::Layout::kPlain, to = ops::Layout::kPlain;
      if (reorder && (!ops::layout_from_name(n.get_string("from", ops::kPlainLayout), &from) ||
                      !ops::layout_from_name(n.get_string("to", ops::kPlainLayout), &to)))
        bad(what + ": a Reorder between unknown layouts");
      if (reorder && (!st.input_layouts.empty() || !st.output_layouts.empty()))
        for (const auto* codes : {&st.input_layouts, &st.output_layouts})
          for (ops::Layout l : *codes)
            if (l != ops::Layout::kPlain) bad(what + ": a Reorder's step names layouts of its own");
      std::vector<ops::Layout> in(n.inputs().size(), ops::Layout::kPlain), out(n.outputs().size(), ops::Layout::kPlain);
      for (size_t i = 0; i < in.size(); ++i) {
        const ir::Value* v = n.input(i);
        if (!v) continue;
        in[i] = reorder && i == 0 ? from : st.input_layouts.empty() ? ops::Layout::kPlain : st.input_layouts[i];
        check_holdable(v, in[i], what + " input " + std::to_string(i));
        auto w = written_.find(v);
        const ops::Layout wrote = w == written_.end() ? ops::Layout::kPlain : w->second;
        if (in[i] != wrote && !layout_free(v))
          bad(what + " reads '" + v->name() + "' in layout " + ops::layout_name(in[i]) + ", written in " +
              ops::layout_name(wrote));
      }
      for (size_t i = 0; i < out.size(); ++i) {
        const ir::Value* v = n.output(i);
        if (!v) continue;
        out[i] = reorder && i == 0 ? to : st.output_layouts.empty() ? ops::Layout::kPlain : st.output_layouts[i];
        check_holdable(v, out[i], what + " output " + std::to_string(i));
        written_[v] = out[i];
      }
      if (!reorder) check_layout_rule(n, in, out, what, layout_free);
    }
    for (const ir::Value* v : graphs_[gi]->outputs()) {
      auto w = written_.find(v);
      if (w != written_.end() && w->second != ops::Layout::kPlain && !layout_free(v))
        bad("graph " + std::to_string(gi) + " output '" + v->name() + "' is written in layout " +
            ops::layout_name(w->second) + " (graph outputs are plain)");
    }
  }

  // check_layouts' second half: `in` / `out`, the layouts node `n` reads and
  // writes, against its op's rule.
  template <typename Free>
  void check_layout_rule(const ir::Node& n, const std::vector<ops::Layout>& in, const std::vector<ops::Layout>& out,
                         const std::string& what, const Free& layout_free) const {
    const auto refuse = [&](const std::string& why) { bad(what + ": " + why); };
    const auto plain_or_free = [&](const ir::Value* v, ops::Layout l) {
      return !v || l == ops::Layout::kPlain || layout_free(v);
    };
    switch (ops::traits_of(n).layout) {
      case ops::LayoutRule::kPlainOnly:
        for (size_t i = 0; i < in.size(); ++i)
          if (!plain_or_free(n.input(i), in[i])) refuse("this op reads plain data only");
        for (size_t i = 0; i < out.size(); ++i)
          if (!plain_or_free(n.output(i), out[i])) refuse("this op writes plain data only");
        return;
      case ops::LayoutRule::kUnaryPassThrough:
        if (!out.empty() && !in.empty() && out[0] != in[0] && !layout_free(n.output(0)))
          refuse("output 0 must have input 0's layout");
        for (size_t i = 1; i < in.size(); ++i)
          if (!plain_or_free(n.input(i), in[i])) refuse("inputs after the first are read plain");
        return;
      case ops::LayoutRule::kBinaryPassThrough:
      case ops::LayoutRule::kElementwiseGroup: {
        if (out.empty()) return;
        const ops::Layout l = out[0];
        for (size_t i = 1; i < out.size(); ++i)
          if (out[i] != l) refuse("every output must have one layout");
        for (size_t i = 0; i < in.size(); ++i) {
          const ir::Value* v = n.input(i);
          if (!v || in[i] == l) continue;
          const bool one = v->is_constant() && v->constant->numel() == 1;
          const bool per_channel = v->type.is_static() && n.output(0)->type.is_static() &&
                                   ops::per_channel_operand(v->type.static_shape(), n.output(0)->type.static_shape());
          if (!(in[i] == ops::Layout::kPlain && (one || per_channel)) && !layout_free(v))
            refuse("operand " + std::to_string(i) + " must be read in the output's layout " + ops::layout_name(l) +
                   " (or plain: a per-channel operand or a one-element constant)");
        }
        return;
      }
      case ops::LayoutRule::kGlobalPool:
        for (size_t i = 0; i < out.size(); ++i)
          if (!plain_or_free(n.output(i), out[i])) refuse("a global pool writes plain");
        return;
      case ops::LayoutRule::kTranspose:
        for (size_t i = 0; i < out.size(); ++i)
          if (out[i] == ops::Layout::kNChw16c) refuse("a Transpose writes plain or nhwc");
        for (size_t i = 1; i < in.size(); ++i)
          if (!plain_or_free(n.input(i), in[i])) refuse("inputs after the first are read plain");
        return;
      case ops::LayoutRule::kChannelMove: {
        // Input 0 and every output in one layout; the other inputs in it or
        // plain (index tensors; ChannelShuffle's kernel checks that its data
        // inputs all share the output's layout).
        // The kernels check what else a layout needs (nChw16c: whole
        // 16-channel blocks; ChannelShuffle: plain or nhwc).
        const ops::Layout l = out.empty() ? ops::Layout::kPlain : out[0];
        for (size_t i = 1; i < out.size(); ++i)
          if (out[i] != l && !layout_free(n.output(i))) refuse("every output must have one layout");
        for (size_t i = 0; i < in.size(); ++i) {
          const ir::Value* v = n.input(i);
          if (in[i] != l && (i == 0 || !plain_or_free(v, in[i])) && !(v && layout_free(v)))
            refuse("input " + std::to_string(i) + " must be read in the output's layout" + (i ? " or plain" : ""));
        }
        return;
      }
      default:  // Conv, pools, Concat, Resize, ConvTranspose: their kernels check
        return;
    }
  }

  template <typename Codes>
  void read_layouts(const Codes& codes, size_t count, std::vector<ops::Layout>& out, const std::string& what) const {
    if (codes.empty()) return;
    if (static_cast<size_t>(codes.size()) != count)
      bad(what + ": " + std::to_string(codes.size()) + " layouts for " + std::to_string(count));
    for (int32_t c : codes) {
      if (c < 0 || c > ops::kMaxLayoutCode) bad(what + ": invalid layout code " + std::to_string(c));
      out.push_back(static_cast<ops::Layout>(c));
    }
  }

  // What the kernels would otherwise trust, checked once per load (the
  // steps are in node order already: read_execution_plan):
  //  - value kinds fit their ops; every node has an output;
  //  - every main-graph node that writes into the arena gets, from its op's
  //    infer function over its inputs' types (constants, arena values and
  //    graph inputs) and constant data, exactly the dtype and shape the plan
  //    gave each arena output; a node that reads a dynamic value, or whose
  //    output shape depends on a computed input's values, is checked at run
  //    time instead (LoadedModel::check_at_run);
  //  - the memory plan passes memory::verify_plan (no two live values share
  //    bytes unless an alias, in-place or Concat slice makes it right) in
  //    the streams' happens-before order, which also proves every read waits
  //    for its producer.
  void check_plans_against_ops(LoadedModel& r) {
    for (const ir::Graph* g : graphs_)
      for (const auto& n : g->nodes())
        if (n->outputs().empty()) bad(n->describe() + " has no output");
    try {
      ops::check_value_kinds(static_cast<const ir::Graph&>(*main_));
    } catch (const Error& e) {
      bad(e.what());
    }
    const memory::MemoryPlan& plan = r.memory_plan;
    int32_t index = 0;
    for (const auto& np : main_->nodes()) {
      const ir::Node& n = *np;
      const int32_t step = index++;
      bool writes_arena = false;
      for (const ir::Value* o : n.outputs()) writes_arena |= plan.in_arena(r.ids.id(o));
      const ops::OpSchema* schema = ops::find_schema(n.domain, n.op_type);
      if (!writes_arena || !schema || schema->shape_from_kernel) continue;  // no schema: the executor refuses it
      std::vector<TensorView> views(n.inputs().size());
      ops::InferContext ic;
      ic.node = &n;
      bool known = true;
      for (size_t i = 0; i < n.inputs().size(); ++i) {
        const ir::Value* v = n.input(i);
        if (!v) {
          ic.inputs.push_back(nullptr);
          continue;
        }
        // Trusted shapes: constants, arena values (checked here in order) and
        // graph inputs (Session::run checks them against their declaration).
        // A dynamic value's declared type may lie: its readers are checked
        // at run time.
        const memory::Storage st = plan.at(r.ids.id(v)).storage;
        if (!v->type.is_tensor()) known = false;
        else if (v->constant) views[i] = v->constant->view();
        else if (v->type.is_static() && (st == memory::Storage::kArena || st == memory::Storage::kGraphInput))
          views[i] = TensorView{nullptr, v->type.dtype, v->type.static_shape()};
        else known = false;
        ic.inputs.push_back(&views[i]);
      }
      try {
        if (known) schema->infer(ic);
      } catch (const ops::NeedsValue&) {
        known = false;
      } catch (const Error& e) {
        bad(e.what());
      }
      if (!known) {
        r.check_at_run.push_back(step);
        continue;
      }
      if (ic.out_shapes.size() < n.outputs().size())
        bad(n.describe() + ": its op makes " + std::to_string(ic.out_shapes.size()) + " outputs, the node has " +
            std::to_string(n.outputs().size()));
      for (size_t i = 0; i < n.outputs().size(); ++i) {
        const ir::Value* o = n.output(i);
        if (!plan.in_arena(r.ids.id(o))) continue;
        const ir::TensorType want = ir::TensorType::of(ic.out_dtypes[i], ic.out_shapes[i]);
        if (!(o->type == want))
          bad(n.describe() + ": output '" + o->name() + "' is planned as " + o->type.str() + ", its inputs make " +
              want.str());
      }
    }
    try {
      const schedule::Concurrency order(r.execution_plan.graphs.at(0));
      memory::verify_plan(*main_, r.ids, plan, &order);
    } catch (const Error& e) {
      bad(e.what());
    }
  }

  // kGraphInput storage is exactly the main graph's inputs (the caller binds
  // those and nothing else).
  void check_graph_inputs(const memory::MemoryPlan& plan) const {
    const auto& ins = main_->inputs();
    for (size_t id = 0; id < values_.size(); ++id) {
      const bool is_input = std::find(ins.begin(), ins.end(), values_[id]) != ins.end();
      if (is_input != (plan.values[id].storage == memory::Storage::kGraphInput))
        bad("memory plan: value " + std::to_string(id) + " ('" + values_[id]->name() + "') " +
            (is_input ? "is a graph input without" : "has") + " graph-input storage" + (is_input ? "" : " but is no graph input"));
    }
  }

  // Every Concat-in-place entry is the arena output of an ai.onnx Concat of
  // the main graph (the executor skips that node).
  void check_concats(const memory::MemoryPlan& plan) const {
    for (int32_t id : plan.concat_in_place) {
      const ir::Value* v = values_[static_cast<size_t>(id)];
      const ir::Node* p = v->producer();
      if (!p || p->op_type != "Concat" || !p->domain.empty() || p->owner() != main_.get() ||
          !plan.in_arena(id) || p->output(0) != v)
        bad("memory plan: value " + std::to_string(id) + " ('" + v->name() + "') is not the arena output of a Concat");
    }
  }

  ir::Value* value_at(int32_t id, const std::string& what) const {
    if (id < 0 || id >= static_cast<int32_t>(values_.size())) bad(what + ": value id " + std::to_string(id) + " out of range");
    return values_[id];
  }

  bool visible(const ir::Value* v, const ir::Graph* g) const {
    for (const ir::Graph* s = g; s; s = s->parent)
      if (v->owner() == s) return true;
    return false;
  }

  Tensor make_inline_tensor(const gom::InlineTensor& pt, const std::string& what) const {
    if (!dtype_is_valid(pt.dtype())) bad(what + " has invalid dtype code " + std::to_string(pt.dtype()));
    const DType dt = static_cast<DType>(pt.dtype());
    const Shape shape(pt.shape().begin(), pt.shape().end());
    int64_t numel = 0;
    if (!checked_numel(shape, numel)) bad(what + " has invalid shape " + shape_str(shape));
    if (dt == DType::kString) {
      if (numel != pt.strings_size()) bad(what + ": string count does not match shape");
      Tensor t(dt, shape);
      for (int64_t i = 0; i < numel; ++i) t.as<std::string>()[i] = pt.strings(static_cast<int>(i));
      return t;
    }
    const int64_t bytes = checked_bytes(dt, shape);
    if (bytes < 0 || static_cast<uint64_t>(bytes) != pt.data().size()) bad(what + ": data size does not match shape");
    Tensor t(dt, shape);
    if (bytes) std::memcpy(t.data(), pt.data().data(), static_cast<size_t>(bytes));
    return t;
  }

  ir::Attribute make_attr(const gom::Attribute& pa, int graph_index, const std::string& what) {
    if (pa.kind() < 0 || pa.kind() > static_cast<int32_t>(ir::Attribute::Kind::kGraph))
      bad(what + " has invalid kind " + std::to_string(pa.kind()));
    ir::Attribute a;
    a.name = pa.name();
    a.kind = static_cast<ir::Attribute::Kind>(pa.kind());
    a.i = pa.i();
    a.f = pa.f();
    a.s = pa.s();
    a.ints.assign(pa.ints().begin(), pa.ints().end());
    a.floats.assign(pa.floats().begin(), pa.floats().end());
    a.strings.assign(pa.strings().begin(), pa.strings().end());
    if (a.kind == ir::Attribute::Kind::kTensor) a.t = std::make_shared<Tensor>(make_inline_tensor(pa.t(), what));
    if (a.kind == ir::Attribute::Kind::kGraph) {
      const int gi = pa.g();
      if (gi <= 0 || gi >= m_.graphs_size() || m_.graphs(gi).parent() != graph_index || claimed_[gi])
        bad(what + " refers to invalid subgraph " + std::to_string(gi));
      claimed_[gi] = true;
      a.g = subgraphs_[gi - 1];
    }
    return a;
  }

  void make_nodes(int gi) {
    ir::Graph* g = graphs_[gi];
    for (const gom::Node& pn : m_.graphs(gi).nodes()) {
      const std::string what = "node '" + pn.name() + "' (" + pn.op_type() + ")";
      std::vector<ir::Value*> ins, outs;
      for (int32_t id : pn.inputs()) {
        ir::Value* v = id == -1 ? nullptr : value_at(id, what);
        if (v && !visible(v, g)) bad(what + " reads value " + std::to_string(id) + " from an unrelated graph");
        ins.push_back(v);
      }
      for (int32_t id : pn.outputs()) {
        ir::Value* v = value_at(id, what);
        if (v->owner() != g || v->producer() || v->is_constant())
          bad(what + " defines value " + std::to_string(id) + " that it cannot own");
        for (ir::Value* o : outs)
          if (o == v) bad(what + " defines value " + std::to_string(id) + " twice");
        outs.push_back(v);
      }
      ir::Node* n = g->add_node_with_outputs(pn.op_type(), ins, outs, pn.name(), pn.domain());
      n->fused_from.assign(pn.fused_from().begin(), pn.fused_from().end());
      for (const gom::Attribute& pa : pn.attrs())
        n->attrs.push_back(make_attr(pa, gi, what + " attribute '" + pa.name() + "'"));
    }
  }

  // In the order of the execution plan's steps, every value must be defined
  // before the node that reads it runs, also when a subgraph reads it from an
  // enclosing graph (ir::Graph::verify checks only a graph's own values).
  // Depth is bounded by kMaxGraphDepth.
  void check_order(int gi, const schedule::ExecutionPlan& plan, std::unordered_set<const ir::Value*>& defined) const {
    const ir::Graph& g = *graphs_[gi];
    const std::vector<ir::Node*> nodes = g.node_list();
    for (const ir::Value* v : g.inputs()) defined.insert(v);
    for (const auto& v : g.values())
      if (v->is_constant()) defined.insert(v.get());
    for (const schedule::Step& s : plan.graphs[gi].steps) {
      const ir::Node* n = nodes[static_cast<size_t>(s.node)];
      for (const ir::Value* v : n->inputs())
        if (v && !defined.count(v)) bad(n->describe() + " in graph '" + g.name + "' reads '" + v->name() + "' before it is defined");
      for (const auto& a : n->attrs)
        if (a.kind == ir::Attribute::Kind::kGraph && a.g) check_order(graph_index(a.g.get()), plan, defined);
      for (const ir::Value* v : n->outputs()) defined.insert(v);
    }
    for (const ir::Value* v : g.outputs())
      if (!defined.count(v)) bad("graph '" + g.name + "' outputs '" + v->name() + "', which is never defined");
  }

  int graph_index(const ir::Graph* g) const {
    for (size_t i = 0; i < graphs_.size(); ++i)
      if (graphs_[i] == g) return static_cast<int>(i);
    bad("a subgraph outside the model");
  }

  void bind_io(int gi) {
    ir::Graph* g = graphs_[gi];
    const std::string what = "graph '" + g->name + "'";
    for (int32_t id : m_.graphs(gi).inputs()) {
      ir::Value* v = value_at(id, what + " input");
      if (v->owner() != g) bad(what + " input " + std::to_string(id) + " belongs to another graph");
      g->inputs().push_back(v);
    }
    for (int32_t id : m_.graphs(gi).outputs()) {
      ir::Value* v = value_at(id, what + " output");
      if (!visible(v, g)) bad(what + " output " + std::to_string(id) + " is not visible in it");
      g->outputs().push_back(v);
    }
  }

  const gom::Model& m_;
  const std::string& file_;
  const uint8_t* weights_;
  uint64_t weights_size_;
  std::shared_ptr<void> owner_;
  std::unique_ptr<ir::Graph> main_;
  std::vector<std::shared_ptr<ir::Graph>> subgraphs_;  // graph i >= 1 is subgraphs_[i - 1]
  std::vector<ir::Graph*> graphs_;
  std::vector<int> depth_;
  std::vector<bool> claimed_;
  std::vector<ir::Value*> values_;
};

LoadedModel load(const uint8_t* d, size_t n, const std::string& file, std::shared_ptr<const void> keepalive,
                 int threads, bool defer_weights_check, std::shared_ptr<const MappedFile> mapped = nullptr) {
  const Layout l = read_layout(d, n, file, /*strict=*/true, mapped.get(), threads, defer_weights_check);
  gom::Model m;
  if (!parse_model_def(d, l, m)) corrupt(file, "corrupted: MODEL_DEF does not parse");
  const uint8_t* weights = nullptr;
  uint64_t weights_size = 0;
  if (l.weights >= 0) {
    weights = d + l.parts[l.weights].offset;
    weights_size = l.parts[l.weights].size;
  }
  if (static_cast<uint64_t>(m.weights_bytes()) != weights_size)
    corrupt(file, "corrupted: MODEL_DEF expects " + std::to_string(m.weights_bytes()) + " weight bytes, WEIGHTS holds " +
                      std::to_string(weights_size));

  LoadedModel r;
  GraphBuilder b(m, file, weights, weights_size, std::const_pointer_cast<void>(keepalive));
  b.build(r);
  for (const gom::PackedWeight& pw : m.packed_weights()) {
    const std::string what = "packed weight of value " + std::to_string(pw.value());
    if (pw.value() < 0 || pw.value() >= r.ids.size() || !r.ids.value(pw.value())->is_constant() ||
        r.ids.value(pw.value())->constant->dtype() == DType::kString)
      corrupt(file, "corrupted: " + what + ": not a numeric constant");
    const uint64_t off = static_cast<uint64_t>(pw.data_offset());
    if (pw.data_offset() < 0 || pw.bytes() <= 0 || off > weights_size ||
        static_cast<uint64_t>(pw.bytes()) > weights_size - off || off % kWeightAlign != 0)
      corrupt(file, "corrupted: " + what + ": data (offset " + std::to_string(pw.data_offset()) + ", " +
                        std::to_string(pw.bytes()) + " bytes) is not an aligned range inside WEIGHTS (" +
                        std::to_string(weights_size) + " bytes)");
    r.packed_weights.push_back({pw.value(), pw.layout(), weights + off, static_cast<size_t>(pw.bytes())});
  }
  r.arena_bytes = r.memory_plan.arena_bytes;
  // The model's own constants end where the packed copies (placed after
  // them) begin; a packed copy equal to a constant's bytes shares them.
  int64_t plain_end = 0;
  for (int32_t id = 0; id < r.ids.size(); ++id)
    if (const ir::Value* v = r.ids.value(id); v->is_constant() && v->constant->dtype() != DType::kString && weights)
      plain_end = std::max<int64_t>(plain_end, static_cast<const uint8_t*>(v->constant->data()) - weights +
                                                   static_cast<int64_t>(v->constant->bytes()));
  r.weights_bytes = std::min(plain_end, static_cast<int64_t>(weights_size));
  r.packed_weights_bytes = static_cast<int64_t>(weights_size) - r.weights_bytes;
  r.opset = m.opset();
  r.format_version = l.header.format_version;
  if (l.metadata >= 0) {
    const PartitionEntry& p = l.parts[l.metadata];
    r.metadata_json.assign(reinterpret_cast<const char*>(d + p.offset), p.size);
  }
  if (l.weights_check_deferred) {
    const PartitionEntry& w = l.parts[l.weights];
    const uint8_t* hashes = d + l.parts[l.weights_xxh64].offset + sizeof(uint64_t);
    // Holds the bytes (keepalive) and the mapping itself: the check may
    // outlive the LoadedModel when the caller's work beside it fails.
    r.verify_weights = [file, keepalive, mapped, bytes = d + w.offset, size = w.size, hashes,
                        block_bytes = l.weights_block_bytes](int check_threads) {
      const int64_t bad = first_bad_block(bytes, size, hashes, block_bytes, check_threads, mapped.get());
      if (bad >= 0) weights_mismatch(file, bad, block_bytes, size);
    };
  }
  r.keepalive = std::move(keepalive);
  r.mapped = std::move(mapped);
  return r;
}

}  // namespace

LoadedModel read_gom_file(const std::string& path, int threads, bool defer_weights_check) {
  std::shared_ptr<const MappedFile> f = MappedFile::open(path);
  const uint8_t* d = f->data();
  const size_t n = f->size();
  return load(d, n, path, std::shared_ptr<const void>(f, f.get()), threads, defer_weights_check, f);
}

LoadedModel read_gom_bytes(std::shared_ptr<const std::vector<uint8_t>> bytes, int threads, bool defer_weights_check) {
  GEC_CHECK(bytes != nullptr, "read_gom_bytes: null buffer");
  if (reinterpret_cast<uintptr_t>(bytes->data()) % kWeightAlign == 0)
    return load(bytes->data(), bytes->size(), "<memory>", std::shared_ptr<const void>(bytes, bytes->data()), threads,
                defer_weights_check);
  // WEIGHTS sits at an aligned file offset; an aligned base keeps constants aligned.
  void* p = aligned_alloc64(bytes->size());
  std::shared_ptr<const void> copy(p, aligned_free);
  if (!bytes->empty()) std::memcpy(p, bytes->data(), bytes->size());
  return load(static_cast<const uint8_t*>(p), bytes->size(), "<memory>", copy, threads, defer_weights_check);
}

GomSummary inspect_gom_file(const std::string& path) {
  std::shared_ptr<const MappedFile> f = MappedFile::open(path);
  const uint8_t* d = f->data();
  const Layout l = read_layout(d, f->size(), path, /*strict=*/false);
  GomSummary s;
  s.format_version = l.header.format_version;
  s.header_size = l.header.header_size;
  s.file_size = l.header.file_size;
  s.flags = l.header.flags;
  s.xxh64 = l.header.xxh64;
  s.checksum_ok = l.checksum_ok;
  for (size_t i = 0; i < l.parts.size(); ++i) {
    const PartitionEntry& p = l.parts[i];
    s.partitions.push_back({kind_label(p.kind), p.kind, p.offset, p.size, p.xxh64, l.part_checksum_ok[i]});
  }
  if (l.metadata >= 0) {
    const PartitionEntry& p = l.parts[l.metadata];
    s.metadata_json.assign(reinterpret_cast<const char*>(d + p.offset), p.size);
  }
  gom::Model m;
  if (!parse_model_def(d, l, m)) return s;
  s.arena_bytes = m.memory_plan().arena_bytes();
  s.weights_bytes = m.weights_bytes();
  s.opset = m.opset();
  s.graph_count = m.graphs_size();
  s.value_count = m.values_size();
  for (const gom::Graph& g : m.graphs()) s.node_count += g.nodes_size();
  for (const gom::Placement& p : m.memory_plan().values())
    if (p.storage() == static_cast<int32_t>(memory::Storage::kWeight)) ++s.constant_count;
  s.packed_weight_count = m.packed_weights_size();
  for (const gom::PackedWeight& pw : m.packed_weights()) s.packed_weight_bytes += std::max<int64_t>(pw.bytes(), 0);
  return s;
}

}  // namespace gec::model
