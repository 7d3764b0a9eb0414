// Anonymous memory whose pages are present from the start, for the large
// buffers a run writes: the activation arena and the run's scratch buffer
// (kernels::ScratchBuffer). A fresh page costs a fault on its first write;
// under a hypervisor each takes microseconds (about 9 us per 4 KiB page on
// the Firecracker VM the benchmarks run on: 70 ms for 30 MiB, most of
// ppocr_v4_det's first run), while huge pages populated at allocation took
// 2-40 ms there (fast when the kernel has free huge pages) and the first
// writes after it 2 ms. Measured in bench/results.md, "First run: fresh
// pages".
#pragma once

#include <cstddef>
#include <cstdint>

namespace gec {

class PageBlock {
 public:
  /// Nothing mapped: data() is null, size() 0.
  PageBlock() = default;
  /// Maps at least `bytes` (rounded up to whole pages, at least one, so
  /// data() is never null), zero-filled, every page present and writable
  /// (MADV_POPULATE_WRITE, Linux 5.14+, then one write per page from user
  /// space, which a hypervisor that shadows the page tables needs; see
  /// page_block.cc). From
  /// 2 MiB up the block is 2 MiB-aligned and advised for transparent huge
  /// pages (madvise(MADV_HUGEPAGE): a hint the kernel may ignore). Throws
  /// gec::Error(kInternal) naming the size when the mapping fails or the
  /// memory to populate is not there (ENOMEM: it is taken here, not at
  /// first use).
  explicit PageBlock(size_t bytes) : PageBlock(bytes, bytes) {}
  /// As above, but only the pages holding the first `present` bytes are
  /// made present; the rest are faulted in if ever touched (the session
  /// passes where the memory plan's last arena slot ends, so an arena size
  /// larger than the plan uses, e.g. a forged one, commits nothing).
  PageBlock(size_t bytes, size_t present);
  PageBlock(PageBlock&& o) noexcept;
  PageBlock& operator=(PageBlock&& o) noexcept;
  PageBlock(const PageBlock&) = delete;
  PageBlock& operator=(const PageBlock&) = delete;
  ~PageBlock();

  /// Makes the block at least `bytes` long (rounded up to whole pages) and
  /// keeps the pages it has: mremap(2) grows the mapping in place or moves
  /// it whole with its page tables (nothing is copied or faulted again), so
  /// only the new tail is populated, zero-filled; the pages it had keep
  /// their bytes and whether they were present. data() may change, and a
  /// grown block is 2 MiB-aligned only where the kernel placed it so (it is
  /// still advised for huge pages from 2 MiB up). Nothing happens when the
  /// block is already that long. A scratch buffer that grows from 8 to
  /// 11 MiB in its first run populates 3 MiB, not 11 after 8. Where
  /// mremap fails the old pages are dropped and a fresh block is mapped.
  /// Errors: gec::Error(kInternal) naming the sizes for an impossible size
  /// (the block is kept), or when neither mremap nor a fresh mapping can
  /// give that size, or the new pages cannot be populated (ENOMEM): the
  /// block is then empty.
  void grow(size_t bytes);

  /// Makes the pages holding the first `bytes` bytes present and writable
  /// as the constructor does (at most size()), keeping their bytes. For a
  /// block made with fewer pages present, e.g. an arena whose pages a
  /// helper thread makes present while the loading thread makes kernels;
  /// nothing else may use the block meanwhile. Errors: gec::Error(kInternal)
  /// naming the sizes when the memory is not there (ENOMEM); the block is
  /// kept, its pages partly present.
  void make_present(size_t bytes);

  uint8_t* data() const { return data_; }
  /// The mapped size in bytes (a whole number of pages).
  size_t size() const { return size_; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gec
