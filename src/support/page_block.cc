// Populated anonymous mappings; see page_block.h.
#include "support/page_block.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "gec/error.h"

namespace gec {

// Makes the pages of [p, p + size) present, writable, keeping their bytes:
// MADV_POPULATE_WRITE (Linux 5.14) one 2 MiB-aligned piece at a time, then
// one write per page from user space (an atomic OR of 0). The madvise
// allocates a piece's pages in one call (a huge page where advised); where
// it fails for another reason than memory (EINVAL on older kernels, EPERM
// or ENOSYS from a sandbox's filter, EINTR) the writes fault them in one by
// one. The pieces: the madvise holds the process's memory-map lock for
// the whole range it is given, and a thread that maps or protects memory
// meanwhile waits for it. At load the arena is populated on a helper while
// the loading thread makes oneDNN primitives, whose code generation does
// exactly that: with ppocr_v4_det's 22.9 MB in one call, its first
// primitive waited 3-44 ms for the madvise (which itself took 2.8-22 ms
// on this VM); piece by piece it waits at most one piece's time. The writes
// are there for hypervisors that shadow the guest's page tables (the PVM
// guest the benchmarks run on): the kernel's populate leaves the mapping
// the CPU walks to be filled at each page's first user access, a few
// microseconds a page, so without them a run's first steps paid it
// (squeezenet1_1's 3.8 MiB arena: 2.4 ms; its first two steps on one
// thread took 1.8 and 1.2 ms, 0.7 and 0.3 after). Where the page tables
// are the hardware's own they are one store per 4 KiB; they fault without
// the memory-map lock on Linux 6.4 and later (per-VMA locks). Returns
// false when the memory is not there (ENOMEM).
static bool populate(uint8_t* p, size_t size) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  constexpr uintptr_t kPiece = uintptr_t{2} << 20;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // The compiler must not see the 0: clang turns an atomic OR of a known 0
  // whose result is unused into a load, which maps the shared zero page
  // where the madvise did nothing and writes no page at all.
  uint8_t zero = 0;
  asm("" : "+r"(zero));
  uint8_t* const end = p + size;
  for (uint8_t* at = p; at < end;) {
    uint8_t* const next =
        std::min(end, reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(at) + kPiece) & ~(kPiece - 1)));
    if (::madvise(at, static_cast<size_t>(next - at), MADV_POPULATE_WRITE) != 0 && errno == ENOMEM) return false;
    for (uint8_t* q = at; q < next; q += page) __atomic_fetch_or(q, zero, __ATOMIC_RELAXED);
    at = next;
  }
  return true;
}

// From this size up a block is 2 MiB-aligned and advised for huge pages.
constexpr size_t kHuge = size_t{2} << 20;

// The mapped size of a block of `bytes`: whole pages, at least one; an
// error naming the size when it cannot be mapped (with room to align it).
static size_t mapped_size(size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - 2 * kHuge) fail(ErrorCode::kInternal, "cannot map " + std::to_string(bytes) + " bytes");
  return bytes == 0 ? page : (bytes + page - 1) / page * page;
}

PageBlock::PageBlock(size_t bytes, size_t present) {
  const size_t size = mapped_size(bytes);
  const bool huge = size >= kHuge;
  const size_t span = huge ? size + kHuge : size;
  void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    fail(ErrorCode::kInternal, "out of memory mapping " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  uint8_t* base = static_cast<uint8_t*>(p);
  if (huge) {
    uint8_t* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + kHuge - 1) & ~(kHuge - 1));
    if (aligned > base) ::munmap(base, static_cast<size_t>(aligned - base));
    const size_t tail = static_cast<size_t>(base + span - (aligned + size));
    if (tail > 0) ::munmap(aligned + size, tail);
    base = aligned;
    ::madvise(base, size, MADV_HUGEPAGE);  // a hint: refused (e.g. THP off) is fine
  }
  data_ = base;
  size_ = size;
  try {
    make_present(present);
  } catch (...) {
    release();
    throw;
  }
}

void PageBlock::grow(size_t bytes) {
  if (bytes <= size_) return;
  if (!data_) {
    *this = PageBlock(bytes);
    return;
  }
  const size_t size = mapped_size(bytes);
  // One mapping in, one mapping out (grown in place or moved whole), so a
  // later grow moves one mapping too: every kernel since 2.4 does that.
  void* p = ::mremap(data_, size_, size, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {  // the old mapping is untouched: drop it, map afresh
    release();
    *this = PageBlock(bytes);
    return;
  }
  const size_t had = size_;
  data_ = static_cast<uint8_t*>(p);
  size_ = size;
  if (size >= kHuge) ::madvise(data_, size_, MADV_HUGEPAGE);  // a hint, as for a fresh block
  if (!populate(data_ + had, size_ - had)) {
    release();
    fail(ErrorCode::kInternal, "out of memory growing a block of " + std::to_string(had) + " bytes to " +
                                   std::to_string(bytes));
  }
}

void PageBlock::make_present(size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t n = std::min(size_, (std::min(bytes, size_) + page - 1) / page * page);
  if (n > 0 && !populate(data_, n))
    fail(ErrorCode::kInternal, "out of memory making " + std::to_string(n) + " bytes of a " + std::to_string(size_) +
                                   "-byte block present");
}

PageBlock::PageBlock(PageBlock&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

PageBlock& PageBlock::operator=(PageBlock&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

PageBlock::~PageBlock() { release(); }

void PageBlock::release() {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace gec
