// File reading without trust; see file_util.h.
#include "support/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gec/error.h"

namespace gec {

RegularFile::RegularFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    fail(ErrorCode::kIo, "cannot stat '" + path + "': " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(ErrorCode::kIo, "'" + path + "' is not a regular file (a FIFO, device or directory cannot be read as data)");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(void* dst, uint64_t n, uint64_t offset) const {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 30));
    const ssize_t got = ::pread(fd_, p, chunk, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail(ErrorCode::kIo, "cannot read '" + path_ + "': " + (got < 0 ? std::strerror(errno) : "short read"));
    p += got;
    n -= static_cast<uint64_t>(got);
    offset += static_cast<uint64_t>(got);
  }
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  RegularFile f(path);
  if (f.size() > max_bytes)
    fail(ErrorCode::kIo, "'" + path + "' is " + std::to_string(f.size()) + " bytes, more than the " +
                             std::to_string(max_bytes) + " bytes allowed for " + what);
  std::string bytes(static_cast<size_t>(f.size()), '\0');
  f.read_at(bytes.data(), f.size(), 0);
  return bytes;
}

std::string resolve_inside(const std::string& dir, const std::string& relative, const std::string& what) {
  auto real = [](const std::string& p) -> std::string {
    std::unique_ptr<char, decltype(&std::free)> r(::realpath(p.c_str(), nullptr), &std::free);
    return r ? std::string(r.get()) : std::string();
  };
  const std::string base = real(dir.empty() ? "." : dir);
  if (base.empty()) fail(ErrorCode::kIo, what + ": cannot resolve folder '" + dir + "': " + std::strerror(errno));
  const std::string joined = (dir.empty() ? std::string(".") : dir) + "/" + relative;
  const std::string target = real(joined);
  if (target.empty()) fail(ErrorCode::kIo, what + ": cannot open '" + joined + "': " + std::strerror(errno));
  if (target.compare(0, base.size(), base) != 0 || target.size() <= base.size() || target[base.size()] != '/')
    fail(ErrorCode::kInvalidModel, what + ": '" + relative + "' resolves to '" + target + "', outside the folder '" +
                                       base + "' (symlinks are followed)");
  return target;
}

}  // namespace gec
