// Byte layout of the .gom offline model file (see ../shared/docs/DESIGN.md,
// "Offline model file"). All integers are little-endian; structs are read and written
// with memcpy, never by casting a pointer into the file.
//
//   offset 0                 FileHeader (kHeaderSize bytes)
//   header_size              PartitionEntry[partition_count]
//   ...                      partitions, each at the offset its entry names:
//     MODEL_DEF  serialized gec.gom.Model (src/model/gom.proto)
//     METADATA   UTF-8 JSON text (compile options, source sha256, compiler
//                version, compile report)
//     WEIGHTS    raw constant data; the partition starts at a 64-byte aligned
//                file offset and each tensor at a 64-byte aligned offset inside
//                it, so mmapped constants are 64-byte aligned in memory.
//                After every constant: the weight copies packed at compile
//                time (gom.proto PackedWeight), each 64-byte aligned too.
//                String constants are NOT here: their elements are stored in
//                MODEL_DEF (gec.gom.Value.strings).
//
//     WEIGHTS_XXH64  u64 block_bytes, then one u64 XXH64 (seed 0) for each
//                block_bytes piece of WEIGHTS in order (the last one may be
//                shorter): WEIGHTS is verified in blocks, on several threads.
//
// Integrity (format version 3): FileHeader::xxh64 = XXH64(seed 0) of every
// byte after the header except WEIGHTS' own (partition table, MODEL_DEF,
// METADATA, WEIGHTS_XXH64, padding); WEIGHTS_XXH64 covers WEIGHTS block by
// block. Every byte after the header is thus under one of the two, and a
// load checks both. PartitionEntry::xxh64 = XXH64 of the partition's bytes,
// WEIGHTS' included: `gec inspect` and the damage report read those.
// Version 2 files (no WEIGHTS_XXH64; FileHeader::xxh64 over every byte after
// the header) are still read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gec::model {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, ".gom I/O assumes a little-endian host");

inline constexpr char kMagic[8] = {'G', 'E', 'C', 'O', 'M', '\0', '\0', '\0'};
/// The newest format this build reads and the one it writes.
inline constexpr uint32_t kFormatVersion = 3;
/// The oldest format this build reads (version 2: one whole-file hash).
inline constexpr uint32_t kOldestFormatVersion = 2;
/// Bytes of WEIGHTS under each WEIGHTS_XXH64 hash the writer stores.
inline constexpr uint64_t kChecksumBlockBytes = uint64_t{1} << 20;
/// Alignment of the WEIGHTS partition and of each tensor inside it.
inline constexpr uint64_t kWeightAlign = 64;
/// Deepest subgraph nesting the reader accepts (guards recursion).
inline constexpr int kMaxGraphDepth = 64;

enum class PartitionKind : uint32_t {
  kModelDef = 1,
  kWeights = 2,
  kMetadata = 3,
  kWeightsXxh64 = 4,  // format version 3 and later
};

/// "MODEL_DEF", "WEIGHTS", "METADATA", "WEIGHTS_XXH64" or "UNKNOWN".
const char* partition_kind_name(uint32_t kind);

struct FileHeader {
  char magic[8];            // kMagic
  uint32_t format_version;  // kFormatVersion
  uint32_t header_size;     // bytes of this header; the partition table follows
  uint64_t file_size;       // total file size in bytes
  uint32_t partition_count;
  uint32_t flags;           // reserved, 0
  uint64_t xxh64;           // XXH64(seed 0) of bytes [header_size, file_size) but WEIGHTS' (version 2: all)
};
static_assert(sizeof(FileHeader) == 40, "FileHeader must have no padding");
inline constexpr size_t kHeaderSize = sizeof(FileHeader);

struct PartitionEntry {
  uint32_t kind;      // PartitionKind
  uint32_t reserved;  // 0
  uint64_t offset;    // from the start of the file
  uint64_t size;      // bytes
  uint64_t xxh64;     // XXH64(seed 0) of the partition's bytes
};
static_assert(sizeof(PartitionEntry) == 32, "PartitionEntry must have no padding");

/// FileHeader::xxh64 of format version 3 for the `n`-byte file at `file`:
/// XXH64 (seed 0) of [header_size, n) without the bytes of `weights` (a
/// partition inside [header_size, n), or null for none).
uint64_t header_xxh64(const uint8_t* file, size_t n, uint32_t header_size, const PartitionEntry* weights);

/// The WEIGHTS_XXH64 partition for the `n` bytes of WEIGHTS at `w`:
/// block_bytes, then the XXH64 (seed 0) of each block, little-endian u64s.
std::vector<uint8_t> weights_block_hashes(const uint8_t* w, uint64_t n, uint64_t block_bytes = kChecksumBlockBytes);

/// Rounds n up to a multiple of `align` (a power of two).
constexpr uint64_t align_up(uint64_t n, uint64_t align) { return (n + align - 1) & ~(align - 1); }

}  // namespace gec::model
