// The C API (include/gec/c_api.h) against the C++ API and stored references:
// same outputs, every error a status + message, never a throw.
#include "gec/c_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "onnx_build.h"

namespace gec {
namespace {

namespace ob = testing::onnx_build;

const std::string kModelDir = std::string(GEC_SOURCE_DIR) + "/tests/new_opsets/mlp_softmax_opset23";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "c_api_" + std::to_string(getpid()) + "_" + name;
}

// Compiles `onnx` with the C API into a .gom in the temp folder.
std::string compile_c(const std::string& onnx, const std::string& name, int level = 2) {
  std::string gom = temp_path(name + ".gom");
  gec_compile_options* o = gec_compile_options_create();
  EXPECT_EQ(gec_compile_options_set_opt_level(o, level), GEC_OK);
  char* report = nullptr;
  EXPECT_EQ(gec_compile_file(onnx.c_str(), gom.c_str(), o, &report), GEC_OK) << gec_last_error_message();
  EXPECT_NE(report, nullptr);
  if (report) {
    EXPECT_NE(std::string(report).find("\"memory\""), std::string::npos);
  }
  gec_string_free(report);
  gec_compile_options_free(o);
  return gom;
}

gec_tensor c_view(const Tensor& t) {
  return gec_tensor{t.data(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.shape().size()),
                    t.shape().data(), t.bytes()};
}

TEST(CApi, RunsAStoredModelAndMatchesItsReference) {
  std::string gom = compile_c(kModelDir + "/model.onnx", "mlp");
  gec_session* s = nullptr;
  ASSERT_EQ(gec_session_load(gom.c_str(), nullptr, &s), GEC_OK) << gec_last_error_message();
  ASSERT_EQ(gec_session_input_count(s), 1u);
  ASSERT_EQ(gec_session_output_count(s), 1u);
  Tensor x = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/input_0.pb");
  Tensor ref = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/output_0.pb");
  gec_io_info in{}, out{};
  ASSERT_EQ(gec_session_input_info(s, 0, &in), GEC_OK);
  ASSERT_EQ(gec_session_output_info(s, 0, &out), GEC_OK);
  EXPECT_EQ(in.dtype, GEC_FLOAT32);
  EXPECT_EQ(in.kind, 0);
  ASSERT_EQ(in.rank, static_cast<int32_t>(x.shape().size()));
  for (int d = 0; d < in.rank; ++d) EXPECT_EQ(in.dims[d], x.shape()[d]);
  ASSERT_EQ(out.rank, static_cast<int32_t>(ref.shape().size()));
  EXPECT_GT(gec_session_arena_bytes(s), 0);
  EXPECT_GT(gec_session_weights_bytes(s), 0);
  EXPECT_GE(gec_session_num_threads(s), 1);

  // Caller buffers.
  Tensor y(DType::kFloat32, ref.shape());
  gec_tensor ci = c_view(x), co = c_view(y);
  ASSERT_EQ(gec_session_run(s, &ci, 1, &co, 1), GEC_OK) << gec_last_error_message();
  for (int64_t i = 0; i < ref.numel(); ++i) EXPECT_NEAR(y.as<float>()[i], ref.as<float>()[i], 1e-5f) << i;

  // Library-owned outputs: the same bits.
  gec_result* r = nullptr;
  ASSERT_EQ(gec_session_run_alloc(s, &ci, 1, &r), GEC_OK) << gec_last_error_message();
  ASSERT_EQ(gec_result_count(r), 1u);
  gec_tensor got{};
  ASSERT_EQ(gec_result_get(r, 0, &got), GEC_OK);
  EXPECT_EQ(got.dtype, GEC_FLOAT32);
  EXPECT_EQ(got.byte_size, y.bytes());
  EXPECT_EQ(std::memcmp(got.data, y.data(), y.bytes()), 0);
  EXPECT_EQ(gec_result_get(r, 1, &got), GEC_INVALID_ARGUMENT);
  gec_result_free(r);
  gec_session_free(s);
  std::remove(gom.c_str());
}

TEST(CApi, LoadFromMemoryGivesTheSameSessionAsFromAFile) {
  std::string gom = compile_c(kModelDir + "/model.onnx", "mlp_mem");
  std::ifstream f(gom, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  gec_session_options* o = gec_session_options_create();
  ASSERT_EQ(gec_session_options_set_num_threads(o, 1), GEC_OK);
  ASSERT_EQ(gec_session_options_set_adapt_threads(o, 0), GEC_OK);
  gec_session* s = nullptr;
  ASSERT_EQ(gec_session_load_from_memory(bytes.data(), bytes.size(), o, &s), GEC_OK) << gec_last_error_message();
  bytes.assign(bytes.size(), 0);  // copied at load: the caller's buffer may go
  EXPECT_EQ(gec_session_num_threads(s), 1);
  Tensor x = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/input_0.pb");
  Tensor ref = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/output_0.pb");
  gec_tensor ci = c_view(x);
  gec_result* r = nullptr;
  ASSERT_EQ(gec_session_run_alloc(s, &ci, 1, &r), GEC_OK) << gec_last_error_message();
  gec_tensor got{};
  ASSERT_EQ(gec_result_get(r, 0, &got), GEC_OK);
  for (int64_t i = 0; i < ref.numel(); ++i)
    EXPECT_NEAR(static_cast<const float*>(got.data)[i], ref.as<float>()[i], 1e-5f) << i;
  gec_result_free(r);
  gec_session_free(s);
  gec_session_options_free(o);
  std::remove(gom.c_str());
}

// Y = Relu(X * 2) with X float32[N,3]: a dynamic batch, dim_params and run_alloc.
std::string dynamic_model() {
  onnx::ModelProto m = ob::new_model(17, 8);
  auto* g = m.mutable_graph();
  ob::add_input(g, "X", ob::kFloat, "N,3");
  ob::add_output(g, "Y", ob::kFloat, "N,3");
  ob::add_float_init(g, "two", {}, {2.0f});
  ob::add_node(g, "Mul", {"X", "two"}, {"T"});
  ob::add_node(g, "Relu", {"T"}, {"Y"});
  std::string path = temp_path("dyn.onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

TEST(CApi, DynamicBatchRunsWithLibraryOwnedOutputsAndCallerBuffers) {
  std::string onnx = dynamic_model();
  std::string gom = compile_c(onnx, "dyn");
  gec_session* s = nullptr;
  ASSERT_EQ(gec_session_load(gom.c_str(), nullptr, &s), GEC_OK) << gec_last_error_message();
  gec_io_info in{};
  ASSERT_EQ(gec_session_input_info(s, 0, &in), GEC_OK);
  EXPECT_STREQ(in.name, "X");
  ASSERT_EQ(in.rank, 2);
  EXPECT_EQ(in.dims[0], -1);
  EXPECT_STREQ(in.dim_params[0], "N");
  EXPECT_EQ(in.dims[1], 3);
  EXPECT_STREQ(in.dim_params[1], "");
  for (int64_t n : {1, 5}) {
    std::vector<float> x(n * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 4.0f;
    int64_t dims[2] = {n, 3};
    gec_tensor ci{x.data(), GEC_FLOAT32, 2, dims, x.size() * sizeof(float)};
    gec_result* r = nullptr;
    ASSERT_EQ(gec_session_run_alloc(s, &ci, 1, &r), GEC_OK) << gec_last_error_message();
    gec_tensor y{};
    ASSERT_EQ(gec_result_get(r, 0, &y), GEC_OK);
    ASSERT_EQ(y.rank, 2);
    EXPECT_EQ(y.dims[0], n);
    const float* yp = static_cast<const float*>(y.data);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(yp[i], std::max(0.0f, 2 * x[i])) << i;
    // The same with a buffer of the right shape.
    std::vector<float> yb(x.size(), -1.0f);
    gec_tensor co{yb.data(), GEC_FLOAT32, 2, dims, yb.size() * sizeof(float)};
    ASSERT_EQ(gec_session_run(s, &ci, 1, &co, 1), GEC_OK) << gec_last_error_message();
    EXPECT_EQ(std::memcmp(yb.data(), yp, yb.size() * sizeof(float)), 0);
    gec_result_free(r);
  }
  gec_session_free(s);
  std::remove(gom.c_str());
  std::remove(onnx.c_str());
}

// Expects `st` to be `want` with a message containing `part`.
void expect_status(gec_status st, gec_status want, const std::string& part) {
  EXPECT_EQ(st, want) << gec_status_name(st) << ": " << gec_last_error_message();
  EXPECT_NE(std::string(gec_last_error_message()).find(part), std::string::npos) << gec_last_error_message();
}

TEST(CApi, BadCallsReturnAStatusAndAMessageNamingTheProblem) {
  gec_session* s = nullptr;
  expect_status(gec_session_load("/nonexistent/model.gom", nullptr, &s), GEC_IO, "/nonexistent/model.gom");
  EXPECT_EQ(s, nullptr);
  const char junk[] = "definitely not a gom file";
  expect_status(gec_session_load_from_memory(junk, sizeof junk, nullptr, &s), GEC_CORRUPT_FILE, "");
  expect_status(gec_session_load(nullptr, nullptr, &s), GEC_INVALID_ARGUMENT, "gom_path is NULL");
  expect_status(gec_compile_file("/nonexistent/m.onnx", "/tmp/x.gom", nullptr, nullptr), GEC_IO, "m.onnx");
  gec_compile_options* co = gec_compile_options_create();
  expect_status(gec_compile_options_set_opt_level(co, 7), GEC_INVALID_ARGUMENT, "outside 0..3");
  expect_status(gec_compile_options_set_streams(co, 65), GEC_INVALID_ARGUMENT, "outside 0..64");
  EXPECT_EQ(gec_compile_options_set_streams(co, 2), GEC_OK);
  int64_t bad_dims[1] = {-2};
  expect_status(gec_compile_options_set_input_shape(co, "X", bad_dims, 1), GEC_INVALID_ARGUMENT, "negative");
  gec_compile_options_free(co);
  gec_session_options* so = gec_session_options_create();
  expect_status(gec_session_options_set_num_threads(so, -1), GEC_INVALID_ARGUMENT, "num_threads");
  gec_session_options_free(so);

  std::string onnx = dynamic_model();
  std::string gom = compile_c(onnx, "dyn_bad");
  ASSERT_EQ(gec_session_load(gom.c_str(), nullptr, &s), GEC_OK);
  std::vector<float> x(6, 1.0f);
  int64_t dims[2] = {2, 3};
  gec_tensor ok{x.data(), GEC_FLOAT32, 2, dims, x.size() * sizeof(float)};
  gec_result* r = nullptr;
  expect_status(gec_session_run_alloc(s, &ok, 0, &r), GEC_INVALID_ARGUMENT, "1 inputs, 0 were given");
  gec_tensor wrong_dtype = ok;
  wrong_dtype.dtype = GEC_INT32;
  expect_status(gec_session_run_alloc(s, &wrong_dtype, 1, &r), GEC_INVALID_ARGUMENT, "'X'");
  gec_tensor short_buffer = ok;
  short_buffer.byte_size = 8;
  expect_status(gec_session_run_alloc(s, &short_buffer, 1, &r), GEC_INVALID_ARGUMENT, "needs 24 bytes");
  gec_tensor bad_code = ok;
  bad_code.dtype = 99;
  expect_status(gec_session_run_alloc(s, &bad_code, 1, &r), GEC_INVALID_ARGUMENT, "unknown dtype code 99");
  gec_tensor strings = ok;
  strings.dtype = GEC_STRING;
  expect_status(gec_session_run_alloc(s, &strings, 1, &r), GEC_UNSUPPORTED, "string");
  gec_tensor no_dims = ok;
  no_dims.dims = nullptr;
  expect_status(gec_session_run_alloc(s, &no_dims, 1, &r), GEC_INVALID_ARGUMENT, "dims is NULL");
  gec_tensor negative = ok;
  int64_t neg[2] = {-1, 3};
  negative.dims = neg;
  expect_status(gec_session_run_alloc(s, &negative, 1, &r), GEC_INVALID_ARGUMENT, "negative dim");
  EXPECT_EQ(r, nullptr);
  // An output buffer of the wrong shape names the output and both shapes.
  std::vector<float> y(3);
  int64_t ydims[2] = {1, 3};
  gec_tensor yt{y.data(), GEC_FLOAT32, 2, ydims, y.size() * sizeof(float)};
  expect_status(gec_session_run(s, &ok, 1, &yt, 1), GEC_INVALID_ARGUMENT, "output 'Y'");
  gec_io_info info{};
  expect_status(gec_session_output_info(s, 3, &info), GEC_INVALID_ARGUMENT, "output index 3");
  EXPECT_STREQ(gec_status_name(GEC_CORRUPT_FILE), "GEC_CORRUPT_FILE");
  EXPECT_EQ(gec_dtype_size(GEC_FLOAT16), 2u);
  EXPECT_EQ(gec_dtype_size(GEC_STRING), 0u);
  EXPECT_STREQ(gec_dtype_name(GEC_INT64), "int64");
  EXPECT_STREQ(gec_dtype_name(1234), "undefined");
  EXPECT_STREQ(gec_version(), version());
  gec_session_free(s);
  std::remove(gom.c_str());
  std::remove(onnx.c_str());
}

// Two runs at once on one session (max_concurrent_requests 2, waiting when
// busy): both right.
TEST(CApi, ConcurrentRunsOnOneSession) {
  std::string gom = compile_c(kModelDir + "/model.onnx", "mlp_conc");
  gec_session_options* o = gec_session_options_create();
  ASSERT_EQ(gec_session_options_set_max_concurrent_requests(o, 2), GEC_OK);
  ASSERT_EQ(gec_session_options_set_wait_when_busy(o, 1), GEC_OK);
  ASSERT_EQ(gec_session_options_set_num_threads(o, 1), GEC_OK);
  expect_status(gec_session_options_set_max_concurrent_requests(o, 0), GEC_INVALID_ARGUMENT, "outside 1..1024");
  gec_session* s = nullptr;
  ASSERT_EQ(gec_session_load(gom.c_str(), o, &s), GEC_OK) << gec_last_error_message();
  Tensor x = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/input_0.pb");
  Tensor ref = frontend::read_tensor_proto_file(kModelDir + "/test_data_set_0/output_0.pb");
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        Tensor y(DType::kFloat32, ref.shape());
        gec_tensor ci = c_view(x), co = c_view(y);
        if (gec_session_run(s, &ci, 1, &co, 1) != GEC_OK) {
          ++bad[t];
          continue;
        }
        for (int64_t i = 0; i < ref.numel(); ++i)
          if (std::fabs(y.as<float>()[i] - ref.as<float>()[i]) > 1e-5f) ++bad[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  gec_session_free(s);
  gec_session_options_free(o);
  std::remove(gom.c_str());
}

TEST(CApi, TheLastErrorMessageIsKeptPerThread) {
  gec_session* s = nullptr;
  ASSERT_NE(gec_session_load("/nonexistent/a.gom", nullptr, &s), GEC_OK);
  std::string other;
  std::thread t([&] {
    gec_session* s2 = nullptr;
    gec_session_load("/nonexistent/b.gom", nullptr, &s2);
    other = gec_last_error_message();
  });
  t.join();
  EXPECT_NE(other.find("b.gom"), std::string::npos) << other;
  EXPECT_NE(std::string(gec_last_error_message()).find("a.gom"), std::string::npos) << gec_last_error_message();
}

}  // namespace
}  // namespace gec
