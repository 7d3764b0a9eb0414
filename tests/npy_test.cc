// .npy I/O: round trips for every supported dtype, the exact on-disk layout
// from NEP 1, hand-written headers (versions 1.0 and 2.0), and bad files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "gec/error.h"
#include "support/npy.h"

namespace gec {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/gec_npy_" + std::to_string(::getpid()) + "_" + name + ".npy";
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A preamble + header as NEP 1 describes it, with no padding.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
  std::string r("\x93NUMPY", 6);
  r += static_cast<char>(major);
  r += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) r += static_cast<char>((len >> (8 * i)) & 0xff);
  return r + header + data;
}

ErrorCode error_code_of(const std::string& path) {
  try {
    read_npy(path);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "read_npy(" << path << ") did not throw";
  return ErrorCode::kInternal;
}

TEST(Npy, RoundTripsEveryDtype) {
  const DType all[] = {DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt8,  DType::kInt16,
                       DType::kInt32,   DType::kInt64,   DType::kUInt8,   DType::kUInt16, DType::kUInt32,
                       DType::kUInt64,  DType::kBool,    DType::kComplex64, DType::kComplex128};
  for (DType dt : all) {
    Tensor t(dt, {2, 3, 5});
    auto* bytes = static_cast<uint8_t*>(t.data());
    for (size_t i = 0; i < t.bytes(); ++i) bytes[i] = static_cast<uint8_t>(dt == DType::kBool ? i % 2 : i * 7 + 1);
    const std::string path = temp_path(dtype_name(dt));
    write_npy(path, t.view());
    Tensor r = read_npy(path);
    EXPECT_EQ(r.dtype(), dt) << dtype_name(dt);
    EXPECT_EQ(r.shape(), (Shape{2, 3, 5})) << dtype_name(dt);
    ASSERT_EQ(r.bytes(), t.bytes());
    EXPECT_EQ(std::memcmp(r.data(), t.data(), t.bytes()), 0) << dtype_name(dt);
    std::remove(path.c_str());
  }
}

TEST(Npy, WritesTheLayoutNumpyWrites) {
  Tensor t(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) t.as<float>()[i] = static_cast<float>(i) + 0.5f;
  const std::string path = temp_path("layout");
  write_npy(path, t.view());
  const std::string b = read_all(path);
  // 10-byte preamble + 59-byte dict + padding + '\n' rounded up to 128.
  ASSERT_EQ(b.size(), 128u + 24u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<uint8_t>(b[8]) | (static_cast<uint8_t>(b[9]) << 8), 118);
  EXPECT_EQ(b.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(b[127], '\n');
  EXPECT_EQ(b[126], ' ');
  float v[6];
  std::memcpy(v, b.data() + 128, sizeof(v));
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[5], 5.5f);
  std::remove(path.c_str());
}

TEST(Npy, ZeroDimAndEmptyArrays) {
  Tensor s(DType::kInt64, {});
  s.as<int64_t>()[0] = -42;
  const std::string p0 = temp_path("scalar");
  write_npy(p0, s.view());
  EXPECT_NE(read_all(p0).find("'shape': (), }"), std::string::npos);
  Tensor r = read_npy(p0);
  EXPECT_TRUE(r.shape().empty());
  EXPECT_EQ(r.as<int64_t>()[0], -42);

  Tensor e(DType::kFloat32, {0, 3});
  const std::string p1 = temp_path("empty");
  write_npy(p1, e.view());
  Tensor re = read_npy(p1);
  EXPECT_EQ(re.shape(), (Shape{0, 3}));
  EXPECT_EQ(re.numel(), 0);

  Tensor one(DType::kUInt8, {4});
  const std::string p2 = temp_path("one_d");
  write_npy(p2, one.view());
  EXPECT_NE(read_all(p2).find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(read_all(p2).find("'shape': (4,), }"), std::string::npos);
  for (const auto& p : {p0, p1, p2}) std::remove(p.c_str());
}

TEST(Npy, ReadsHandWrittenHeaders) {
  // Version 1.0, keys in another order, double quotes, no padding to 64.
  const int32_t vals[3] = {7, -1, 1 << 30};
  const std::string path = temp_path("hand1");
  write_all(path, npy_bytes(1, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<i4\"}\n",
                            std::string(reinterpret_cast<const char*>(vals), sizeof(vals))));
  Tensor t = read_npy(path);
  EXPECT_EQ(t.dtype(), DType::kInt32);
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.as<int32_t>()[0], 7);
  EXPECT_EQ(t.as<int32_t>()[1], -1);
  EXPECT_EQ(t.as<int32_t>()[2], 1 << 30);

  // Version 2.0 (4-byte header length), Python 2 long suffixes, bool data.
  const std::string path2 = temp_path("hand2");
  write_all(path2, npy_bytes(2, "{'descr': '|b1', 'fortran_order': False, 'shape': (2L, 1L), }\n",
                             std::string("\x01\x00", 2)));
  Tensor b = read_npy(path2);
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(b.as<uint8_t>()[0], 1);
  EXPECT_EQ(b.as<uint8_t>()[1], 0);
  std::remove(path.c_str());
  std::remove(path2.c_str());
}

TEST(Npy, RejectsBadFiles) {
  const std::string p = temp_path("bad");
  const std::string f4 = std::string(8, '\0');
  write_all(p, "\x93NUMPX\x01\x00" + std::string(60, ' '));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // bad magic
  write_all(p, npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // Fortran order
  write_all(p, npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // big-endian
  write_all(p, npy_bytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // object array
  write_all(p, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // 8 data bytes for 12 needed
  write_all(p, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // huge shape, tiny file
  write_all(p, npy_bytes(1, "{'descr': '<f4', 'shape': (2,), }\n", f4));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // missing key
  write_all(p, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,", ""));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // cut-off header
  write_all(p, std::string("\x93NUMPY\x01\x00\xff\x00", 10));
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // header shorter than its length
  write_all(p, "");
  EXPECT_EQ(error_code_of(p), ErrorCode::kInvalidArgument);  // empty file
  std::remove(p.c_str());
  EXPECT_EQ(error_code_of(temp_path("does_not_exist")), ErrorCode::kIo);
}

TEST(Npy, RefusesDtypesWithoutANpyCode) {
  Tensor s(DType::kString, {1});
  EXPECT_THROW(write_npy(temp_path("str"), s.view()), Error);
  Tensor bf(DType::kBFloat16, {1});
  try {
    write_npy(temp_path("bf16"), bf.view());
    FAIL() << "bfloat16 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_THROW(write_npy("/nonexistent_dir/x.npy", Tensor(DType::kFloat32, {1}).view()), Error);
}

}  // namespace
}  // namespace gec
