// PageBlock (support/page_block.h): the arena's and the scratch buffer's
// memory is mapped with its pages already present, zero-filled, and
// huge-page aligned from 2 MiB up; ScratchBuffer grows over it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gec/error.h"
#include "kernels/kernel.h"
#include "support/page_block.h"

namespace gec {
namespace {

// Pages of [p, p + n) that mincore(2) reports resident.
size_t resident_pages(const uint8_t* p, size_t n) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((n + page - 1) / page);
  EXPECT_EQ(::mincore(const_cast<uint8_t*>(p), n, vec.data()), 0);
  size_t k = 0;
  for (unsigned char v : vec) k += v & 1;
  return k;
}

// Lines of /proc/self/maps that overlap [p, p + n).
size_t mappings_over(const uint8_t* p, size_t n) {
  std::ifstream maps("/proc/self/maps");
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  size_t k = 0;
  for (std::string line; std::getline(maps, line);) {
    const size_t dash = line.find('-');
    const uintptr_t a = std::stoull(line.substr(0, dash), nullptr, 16);
    const uintptr_t b = std::stoull(line.substr(dash + 1, line.find(' ') - dash - 1), nullptr, 16);
    k += a < hi && lo < b;
  }
  return k;
}

TEST(PageBlock, PagesArePresentZeroedAndAlignedBeforeAnyWrite) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (size_t{3} << 20) + 5;
  PageBlock b(bytes);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(b.size() % page, 0u);
  EXPECT_GE(b.size(), bytes);
  EXPECT_LT(b.size(), bytes + page);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (size_t{2} << 20), 0u) << "huge-page aligned from 2 MiB up";
  EXPECT_EQ(resident_pages(b.data(), b.size()), b.size() / page) << "populated at allocation, not on first touch";
  size_t nonzero = 0;
  for (size_t i = 0; i < b.size(); ++i) nonzero += b.data()[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  b.data()[b.size() - 1] = 7;  // writable to its last byte
  EXPECT_EQ(b.data()[b.size() - 1], 7);
}

TEST(PageBlock, OnlyThePresentPrefixIsPopulated) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  PageBlock b(size_t{8} << 20, 3 * page + 1);  // 4 pages asked present
  EXPECT_EQ(b.size(), size_t{8} << 20);
  EXPECT_GE(resident_pages(b.data(), 4 * page), 4u);
  // Beyond the prefix nothing was touched; THP may back the first 2 MiB
  // whole, so look past it.
  EXPECT_EQ(resident_pages(b.data() + (size_t{4} << 20), size_t{4} << 20), 0u);
  b.data()[b.size() - 1] = 1;  // still mapped and writable
  EXPECT_EQ(b.data()[b.size() - 1], 1);
}

TEST(PageBlock, MakePresentPopulatesAPrefixLaterAndKeepsItsBytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  PageBlock b(size_t{8} << 20, 0);  // nothing present yet
  EXPECT_EQ(resident_pages(b.data() + (size_t{4} << 20), size_t{4} << 20), 0u);
  b.data()[0] = 42;  // a page written before: its byte stays
  b.data()[5 * page + 3] = 9;
  b.make_present((size_t{5} << 20) + 1);  // up to a page past 5 MiB
  EXPECT_EQ(resident_pages(b.data(), (size_t{5} << 20) + page), (size_t{5} << 20) / page + 1);
  EXPECT_EQ(resident_pages(b.data() + (size_t{6} << 20), size_t{2} << 20), 0u) << "only the prefix asked for";
  EXPECT_EQ(b.data()[0], 42);
  EXPECT_EQ(b.data()[5 * page + 3], 9);
  size_t nonzero = 0;
  for (size_t i = 0; i < (size_t{5} << 20); ++i) nonzero += b.data()[i] != 0;
  EXPECT_EQ(nonzero, 2u) << "the other bytes are still zero";
  b.make_present(size_t{1} << 40);  // more than the block: the whole block, no error
  EXPECT_EQ(resident_pages(b.data(), b.size()), b.size() / page);
  PageBlock empty;
  empty.make_present(page);  // nothing mapped: nothing to do
  EXPECT_EQ(empty.data(), nullptr);
}

TEST(PageBlock, GrowingKeepsThePagesItHasAndPopulatesOnlyTheTail) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  PageBlock b;
  b.grow(0);
  EXPECT_EQ(b.data(), nullptr) << "nothing asked, nothing mapped";
  b.grow(3 * page + 1);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(b.size(), 4 * page);
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(i * 7 + 1);
  const uint8_t* before = b.data();
  b.grow(2 * page);  // smaller: nothing happens
  EXPECT_EQ(b.data(), before);
  EXPECT_EQ(b.size(), 4 * page);
  // Past 2 MiB: grown or moved, the old bytes at its head.
  const size_t bytes = (size_t{5} << 20) + 3;
  b.grow(bytes);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_GE(b.size(), bytes);
  EXPECT_LT(b.size(), bytes + page);
  EXPECT_EQ(mappings_over(b.data(), b.size()), 1u);
  size_t changed = 0, nonzero = 0;
  for (size_t i = 0; i < 4 * page; ++i) changed += b.data()[i] != static_cast<uint8_t>(i * 7 + 1);
  for (size_t i = 4 * page; i < b.size(); ++i) nonzero += b.data()[i] != 0;
  EXPECT_EQ(changed, 0u) << "the pages it had keep their bytes";
  EXPECT_EQ(nonzero, 0u) << "the new tail is zero-filled";
  EXPECT_EQ(resident_pages(b.data(), b.size()), b.size() / page) << "every page present after growing";
  b.data()[b.size() - 1] = 3;
  EXPECT_EQ(b.data()[b.size() - 1], 3);
  // Growing again from a huge-page block.
  const size_t more = size_t{9} << 20;
  b.grow(more);
  EXPECT_GE(b.size(), more);
  EXPECT_EQ(b.data()[0], 1);
  EXPECT_EQ(b.data()[(size_t{5} << 20) + 3 - 1], 0);
  EXPECT_EQ(resident_pages(b.data(), b.size()), b.size() / page);
  // Still one mapping after two grows (a growing mremap needs one on every
  // kernel), so a third grow works too.
  EXPECT_EQ(mappings_over(b.data(), b.size()), 1u);
  b.grow(size_t{13} << 20);
  EXPECT_EQ(b.data()[0], 1);
  EXPECT_EQ(mappings_over(b.data(), b.size()), 1u);
}

TEST(PageBlock, GrowingToAnImpossibleSizeIsAnErrorAndKeepsTheBlock) {
  PageBlock b(100);
  b.data()[0] = 4;
  EXPECT_THROW(b.grow(SIZE_MAX - 4096), Error);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(b.data()[0], 4);
}

TEST(ScratchBuffer, GrowsToTheLargestRequestAndKeepsItsBytes) {
  kernels::ScratchBuffer s;
  EXPECT_EQ(s.get(0), nullptr) << "nothing asked, nothing mapped";
  auto* a = static_cast<uint8_t*>(s.get(100));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  a[99] = 5;
  EXPECT_EQ(s.get(50), a) << "a smaller request reuses the buffer";
  EXPECT_EQ(a[99], 5);
  auto* big = static_cast<uint8_t*>(s.get(size_t{3} << 20));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(resident_pages(big, size_t{3} << 20), (size_t{3} << 20) / static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
  big[(size_t{3} << 20) - 1] = 9;
  EXPECT_EQ(s.get(size_t{1} << 20), big);
}

TEST(PageBlock, SmallAndEmptyRequestsMapWholePages) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  PageBlock none(0);
  ASSERT_NE(none.data(), nullptr) << "a zero-byte arena still has an address";
  EXPECT_EQ(none.size(), page);
  PageBlock small(100);
  EXPECT_EQ(small.size(), page);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % page, 0u);
  EXPECT_EQ(resident_pages(small.data(), small.size()), 1u);
}

TEST(PageBlock, MovingHandsOverTheMapping) {
  PageBlock a(size_t{1} << 16);
  uint8_t* p = a.data();
  p[10] = 42;
  PageBlock b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.data()[10], 42);
  PageBlock c;
  c = std::move(b);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), size_t{1} << 16);
}

TEST(PageBlock, AnImpossibleSizeIsAnErrorNotACrash) {
  EXPECT_THROW(PageBlock(SIZE_MAX - 10), Error);
  EXPECT_THROW(PageBlock(size_t{1} << 60), Error);
}

}  // namespace
}  // namespace gec
