// Read-only mmap of a file; see mapped_file.h.
#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gec/error.h"

namespace gec {

static std::string errno_text() { return std::strerror(errno); }

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(ErrorCode::kIo, "cannot open '" + path + "': " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    fail(ErrorCode::kIo, "cannot stat '" + path + "': " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ErrorCode::kIo, "'" + path + "' is not a regular file");
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string why = errno_text();
      ::close(fd);
      m->size_ = 0;
      fail(ErrorCode::kIo, "cannot map '" + path + "': " + why);
    }
    m->data_ = static_cast<const uint8_t*>(p);
  }
  m->fd_ = fd;  // the mapping does not need it; read() does
  return m;
}

bool MappedFile::read(const void* p, void* dst, size_t n) const {
  if (fd_ < 0 || !contains(p, n)) return false;
  size_t done = 0;
  const off_t at = static_cast<off_t>(static_cast<const uint8_t*>(p) - data_);
  while (done < n) {
    const ssize_t r = ::pread(fd_, static_cast<uint8_t*>(dst) + done, n - done, at + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) fail(ErrorCode::kIo, "'" + path_ + "' is shorter than when it was mapped (changed while loading)");
    if (r < 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

bool MappedFile::contains(const void* p, size_t n) const {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(data_);
  return data_ && a >= b && n <= size_ && a - b <= size_ - n;
}

void MappedFile::drop_resident(const void* p, size_t n) const {
  if (!data_) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(data_), hi = lo + size_;
  uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + n;
  if (b < a) return;
  a = std::max(a, lo);
  b = std::min(b, hi);
  a = (a + page - 1) / page * page;
  b = b / page * page;
  if (a < b) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace gec
