// .npy reader/writer; see npy.h for the format.
#include "support/npy.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "gec/error.h"
#include "support/file_util.h"

namespace gec {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicLen = 6;

struct DescrCode {
  DType dtype;
  const char* code;  // kind + item size, as in numpy's descr after the byte order
};
constexpr DescrCode kCodes[] = {
    {DType::kFloat16, "f2"}, {DType::kFloat32, "f4"},   {DType::kFloat64, "f8"},     {DType::kInt8, "i1"},
    {DType::kInt16, "i2"},   {DType::kInt32, "i4"},     {DType::kInt64, "i8"},       {DType::kUInt8, "u1"},
    {DType::kUInt16, "u2"},  {DType::kUInt32, "u4"},    {DType::kUInt64, "u8"},      {DType::kBool, "b1"},
    {DType::kComplex64, "c8"}, {DType::kComplex128, "c16"},
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

[[noreturn]] void bad_file(const std::string& path, const std::string& why) {
  fail(ErrorCode::kInvalidArgument, "'" + path + "' is not a valid .npy file: " + why);
}

// A tiny parser for the header's Python dict literal.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") { descr = quoted(); have_descr = true; }
      else if (key == "fortran_order") { fortran = boolean(); have_fortran = true; }
      else if (key == "shape") { shape = tuple(); have_shape = true; }
      else error("unexpected key '" + key + "'");
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!have_descr || !have_fortran || !have_shape) error("header lacks descr, fortran_order or shape");
  }

 private:
  [[noreturn]] void error(const std::string& why) { bad_file(path_, "header " + why); }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) error(std::string("expected '") + c + "' at byte " + std::to_string(pos_));
    ++pos_;
  }
  std::string quoted() {
    skip_ws();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) error("expected a quoted string");
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos) error("has an unterminated string");
    std::string r = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(pos_, 4, "True") == 0) { pos_ += 4; return true; }
    if (s_.compare(pos_, 5, "False") == 0) { pos_ += 5; return false; }
    error("expected True or False");
  }
  Shape tuple() {
    Shape r;
    expect('(');
    while (!peek(')')) {
      skip_ws();
      int64_t v = 0;
      size_t digits = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) error("has a dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) error("expected a dimension in shape");
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
      r.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return r;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

DType dtype_from_descr(const std::string& descr, const std::string& path) {
  if (descr.size() < 3) bad_file(path, "unsupported dtype '" + descr + "'");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  for (const DescrCode& c : kCodes) {
    if (code != c.code) continue;
    const bool one_byte = dtype_size(c.dtype) == 1;
    if (order == '<' || order == '|' || (one_byte && (order == '>' || order == '='))) return c.dtype;
    if (order == '>') bad_file(path, "big-endian dtype '" + descr + "' is not supported");
    break;
  }
  bad_file(path, "unsupported dtype '" + descr + "'");
}

const char* descr_code(DType t) {
  for (const DescrCode& c : kCodes)
    if (c.dtype == t) return c.code;
  return nullptr;
}

std::string shape_tuple(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

void read_exact(std::FILE* f, void* dst, size_t n, const std::string& path, const char* what) {
  if (n == 0) return;
  const size_t got = std::fread(dst, 1, n, f);
  if (got == n) return;
  if (std::ferror(f)) fail(ErrorCode::kIo, "cannot read '" + path + "': " + std::strerror(errno));
  bad_file(path, std::string("truncated ") + what + " (expected " + std::to_string(n) + " bytes, found " +
                     std::to_string(got) + ")");
}

}  // namespace

Tensor read_npy(const std::string& path, uint64_t max_bytes) {
  // One open, checked (not a FIFO, which fopen would wait on, or a device)
  // and then read: the file checked is the file read.
  const RegularFile rf(path);
  if (rf.size() > max_bytes)
    fail(ErrorCode::kIo, "'" + path + "' is " + std::to_string(rf.size()) + " bytes, more than the " +
                             std::to_string(max_bytes) + " bytes allowed for it");
  const int fd = ::dup(rf.fd());
  File f(fd >= 0 ? ::fdopen(fd, "rb") : nullptr);
  if (!f) {
    if (fd >= 0) ::close(fd);
    fail(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  }
  unsigned char pre[kNpyMagicLen + 2];
  read_exact(f.get(), pre, sizeof(pre), path, "preamble");
  if (std::memcmp(pre, kNpyMagic, kNpyMagicLen) != 0) bad_file(path, "bad magic (not a .npy file)");
  const int major = pre[kNpyMagicLen];
  if (major < 1 || major > 3)
    bad_file(path, "unsupported format version " + std::to_string(major) + "." + std::to_string(pre[kNpyMagicLen + 1]));
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  const size_t len_size = major == 1 ? 2 : 4;
  read_exact(f.get(), len_bytes, len_size, path, "header length");
  uint32_t header_len = 0;
  for (size_t i = 0; i < len_size; ++i) header_len |= uint32_t{len_bytes[i]} << (8 * i);
  if (header_len > (1u << 24)) bad_file(path, "header length " + std::to_string(header_len) + " is implausible");
  std::string header(header_len, '\0');
  read_exact(f.get(), header.data(), header_len, path, "header");

  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(header, path).parse(descr, fortran, shape);
  if (fortran)
    fail(ErrorCode::kInvalidArgument, "'" + path + "': fortran_order arrays are not supported (save in C order)");
  const DType dt = dtype_from_descr(descr, path);
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / 16 / d)
      bad_file(path, "shape " + shape_str(shape) + " is too large");
    numel *= d;
  }
  // Check the size before allocating, so a lying header cannot ask for terabytes.
  const uint64_t need = static_cast<uint64_t>(numel) * dtype_size(dt);
  const long here = std::ftell(f.get());
  if (here < 0 || std::fseek(f.get(), 0, SEEK_END) != 0) fail(ErrorCode::kIo, "cannot seek in '" + path + "'");
  const long end = std::ftell(f.get());
  if (end < here || std::fseek(f.get(), here, SEEK_SET) != 0) fail(ErrorCode::kIo, "cannot seek in '" + path + "'");
  if (static_cast<uint64_t>(end - here) < need)
    bad_file(path, "truncated data (shape " + shape_str(shape) + " needs " + std::to_string(need) + " bytes, found " +
                       std::to_string(end - here) + ")");
  Tensor t(dt, shape);
  read_exact(f.get(), t.data(), t.bytes(), path, "data");
  return t;
}

void write_npy(const std::string& path, const TensorView& t) {
  const char* code = descr_code(t.dtype);
  if (!code)
    fail(ErrorCode::kInvalidArgument, std::string("cannot write ") + dtype_name(t.dtype) + " tensor to '" + path +
                                          "': .npy has no such dtype here");
  const std::string order = dtype_size(t.dtype) == 1 ? "|" : "<";
  std::string header = "{'descr': '" + order + code + "', 'fortran_order': False, 'shape': " + shape_tuple(t.shape) +
                       ", }";
  // Pad so that data starts at a multiple of 64 bytes; the header ends in '\n'.
  const bool v2 = header.size() + 1 + kNpyMagicLen + 2 + 2 > 65535;
  const size_t prefix = kNpyMagicLen + 2 + (v2 ? 4 : 2);
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kNpyMagic, kNpyMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;

  File f(std::fopen(path.c_str(), "wb"));
  if (!f) fail(ErrorCode::kIo, "cannot open '" + path + "' for writing: " + std::strerror(errno));
  const size_t bytes = t.bytes();
  bool ok = std::fwrite(out.data(), 1, out.size(), f.get()) == out.size();
  if (ok && bytes) ok = std::fwrite(t.data, 1, bytes, f.get()) == bytes;
  ok = ok && std::fflush(f.get()) == 0;
  if (!ok) fail(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(errno));
  if (std::fclose(f.release()) != 0) fail(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace gec
