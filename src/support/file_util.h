// Reading files a user names without trusting them: only regular files (a
// FIFO would block, a device such as /dev/zero never ends), sizes checked
// against a limit before anything is allocated, and paths a model names
// resolved inside the model's folder after following symlinks.
#pragma once

#include <cstdint>
#include <string>

namespace gec {

/// A regular file opened read-only (O_NONBLOCK, so opening a FIFO does not
/// wait for a writer); closes itself.
class RegularFile {
 public:
  /// Errors: kIo naming `path` when it cannot be opened or stat'ed, or is
  /// not a regular file (FIFO, device, directory, socket).
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  /// Reads exactly `n` bytes at `offset` into `dst`; kIo on a short read.
  void read_at(void* dst, uint64_t n, uint64_t offset) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// The whole of regular file `path`. Errors: as RegularFile, and kIo when it
/// is larger than `max_bytes` ("`path` is N bytes, more than the M bytes
/// allowed for <what>").
std::string read_regular_file(const std::string& path, uint64_t max_bytes, const std::string& what);

/// `relative` (a path a model names, e.g. an external-data location) joined
/// to `dir` and resolved with realpath(3), symlinks followed. Errors:
/// kInvalidModel when the result lies outside realpath(`dir`) (ONNX
/// Runtime treats external data outside the model folder as a security
/// bug); kIo when it does not exist.
std::string resolve_inside(const std::string& dir, const std::string& relative, const std::string& what);

}  // namespace gec
