// The two checksums of a format version 3 .gom (src/model/format.h): the
// header's hash of everything but WEIGHTS, and WEIGHTS' block hashes. The
// writer, the reader and the tests that re-seal crafted files share them.
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "gec/error.h"
#include "model/format.h"

namespace gec::model {

uint64_t header_xxh64(const uint8_t* file, size_t n, uint32_t header_size, const PartitionEntry* weights) {
  XXH64_state_t* st = XXH64_createState();
  if (!st) fail(ErrorCode::kInternal, "out of memory hashing an offline model");
  XXH64_reset(st, 0);
  if (weights && weights->offset >= header_size && weights->offset <= n && weights->size <= n - weights->offset) {
    XXH64_update(st, file + header_size, weights->offset - header_size);
    XXH64_update(st, file + weights->offset + weights->size, n - weights->offset - weights->size);
  } else if (n > header_size) {
    XXH64_update(st, file + header_size, n - header_size);
  }
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

std::vector<uint8_t> weights_block_hashes(const uint8_t* w, uint64_t n, uint64_t block_bytes) {
  GEC_CHECK(block_bytes > 0, "weights_block_hashes: block_bytes must be positive");
  const uint64_t blocks = (n + block_bytes - 1) / block_bytes;
  std::vector<uint8_t> out((blocks + 1) * sizeof(uint64_t));
  std::memcpy(out.data(), &block_bytes, sizeof(uint64_t));
  for (uint64_t k = 0; k < blocks; ++k) {
    const uint64_t at = k * block_bytes;
    const uint64_t h = XXH64(w + at, std::min(block_bytes, n - at), 0);
    std::memcpy(out.data() + (k + 1) * sizeof(uint64_t), &h, sizeof(uint64_t));
  }
  return out;
}

}  // namespace gec::model
