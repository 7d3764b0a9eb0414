// The .gom loader (runtime side; never links libonnx). It maps the file,
// checks header, version, sizes and checksums, parses MODEL_DEF and rebuilds
// the IR with constants pointing straight into the mapping (zero copy).
// File layout: src/model/format.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "memory/memory_plan.h"
#include "schedule/execution_plan.h"
#include "support/mapped_file.h"

namespace gec::model {

/// A model read back from a .gom file.
struct LoadedModel {
  /// The node tables: the main graph incl. subgraphs, as written (read-only
  /// for the runtime). Constant tensors point INTO `keepalive` (read-only
  /// memory: never write to them), except string constants, which own their
  /// storage.
  std::unique_ptr<ir::Graph> graph;
  /// Every graph by its index in the file (graphs[0] = graph.get()); the
  /// execution plan's graphs follow this order.
  std::vector<const ir::Graph*> graphs;
  /// Value ids as written (the plans' ids).
  ir::ValueIndex ids;
  memory::MemoryPlan memory_plan;        // stats left empty
  schedule::ExecutionPlan execution_plan;
  /// Main-graph steps that write arena values whose shapes the loader could
  /// not re-derive (they depend on a computed input's values): the executor
  /// infers and checks them at run time. Sorted.
  std::vector<int32_t> check_at_run;
  /// Keeps the subgraphs alive (they are also held by their nodes).
  std::vector<std::shared_ptr<ir::Graph>> subgraph_owner;
  int64_t arena_bytes = 0;    // bytes of the activation arena the plan needs
  /// Bytes of the model's constants in WEIGHTS, and of the packed copies
  /// after them (together the partition's size).
  int64_t weights_bytes = 0, packed_weights_bytes = 0;
  int32_t opset = 0;          // ai.onnx opset of the source model
  uint32_t format_version = 0;
  std::string metadata_json;  // METADATA partition text ("" when absent)
  /// The mapping or byte buffer the constant tensors point into.
  std::shared_ptr<const void> keepalive;
  /// Constants packed at compile time (gom.proto PackedWeight), each
  /// checked to name a numeric constant and to lie inside WEIGHTS: the
  /// session offers them to the kernels (kernels::SharedWeights::add_stored).
  struct PackedWeight {
    int32_t value = -1;
    std::string layout;
    const void* data = nullptr;  // into `keepalive`, read-only, 64-byte aligned
    size_t bytes = 0;
  };
  std::vector<PackedWeight> packed_weights;
  /// The file mapping when the model was read from a file (null for bytes):
  /// the session returns the pages of constants whose packed copies replace
  /// them (MappedFile::drop_resident).
  std::shared_ptr<const MappedFile> mapped;
  /// Set only when read with defer_weights_check (and the file has
  /// WEIGHTS): verifies WEIGHTS' block checksums on the given number of
  /// threads, throwing as the read would have: gec::Error(kCorruptFile)
  /// naming the first damaged block, or kIo when the file shrank since it
  /// was mapped. Safe to
  /// call from another thread while the model is used, and after the
  /// LoadedModel is gone (it holds the bytes). Nothing runs it for the
  /// caller: outputs computed before it returns may come from damaged
  /// weights.
  std::function<void(int threads)> verify_weights;
};

/// Maps `path` (mmap PROT_READ, MAP_PRIVATE), checksums it once (WEIGHTS in
/// 1 MiB blocks on `threads` threads, format version 3) and rebuilds
/// the model, checking the plans against the graph and the ops (see
/// reader.cc: each arena output's planned type re-derived by its op's infer
/// function, the memory plan verified). Throws gec::Error(kIo) when the file cannot be read and
/// gec::Error(kCorruptFile) naming the file and the reason when it is
/// truncated, not a .gom, written by a newer format version, fails a checksum
/// or holds inconsistent contents. Never reads outside the file. With
/// `defer_weights_check`, WEIGHTS' block checksums (format version 3) are
/// left to LoadedModel::verify_weights, which the caller must run before it
/// trusts any output (the session does so while it makes its kernels); the
/// rest of the file is checked as without it.
LoadedModel read_gom_file(const std::string& path, int threads = 1, bool defer_weights_check = false);

/// As read_gom_file, on bytes in memory (errors name "<memory>"). Constants
/// point into `bytes`; if the WEIGHTS partition would not be 64-byte aligned
/// in that buffer, the bytes are first copied once into an aligned buffer.
LoadedModel read_gom_bytes(std::shared_ptr<const std::vector<uint8_t>> bytes, int threads = 1,
                           bool defer_weights_check = false);

/// What `gec inspect` prints about a file.
struct GomSummary {
  struct Partition {
    std::string kind;  // "MODEL_DEF", "WEIGHTS", "METADATA", "WEIGHTS_XXH64", "UNKNOWN(n)"
    uint32_t kind_code = 0;
    uint64_t offset = 0, size = 0, xxh64 = 0;
    bool checksum_ok = false;
  };
  uint32_t format_version = 0;
  uint32_t header_size = 0;
  uint64_t file_size = 0;
  uint32_t flags = 0;
  uint64_t xxh64 = 0;
  bool checksum_ok = false;  // the header's hash matches, and (version 3) WEIGHTS' block hashes
  std::vector<Partition> partitions;
  // From MODEL_DEF (left 0 when it does not parse).
  int64_t arena_bytes = 0, weights_bytes = 0;
  int32_t opset = 0;
  int64_t graph_count = 0, node_count = 0, value_count = 0, constant_count = 0;
  /// Weight copies packed at compile time (gom.proto PackedWeight) and their bytes.
  int64_t packed_weight_count = 0, packed_weight_bytes = 0;
  std::string metadata_json;
};

/// Reads the header, partition table and MODEL_DEF summary without building
/// the IR. Checksum mismatches are reported in the summary, not thrown; a file
/// too damaged to describe (truncated, bad magic, newer version, partition
/// out of bounds) throws gec::Error(kCorruptFile) as read_gom_file does.
GomSummary inspect_gom_file(const std::string& path);

}  // namespace gec::model
