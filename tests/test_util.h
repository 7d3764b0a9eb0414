// Helpers for kernel and pass tests: build tensors, run one op.
#pragma once

#include <gtest/gtest.h>
#include <dnnl.hpp>
#include <hwy/targets.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "gec/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace gec::testing {

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else return DType::kUndefined;
}

/// Runs `f`, expecting gec::Error with `code` and a message containing `part`.
template <typename F>
void expect_error(F&& f, ErrorCode code, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no gec::Error thrown (expected one containing '" << part << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

/// A tensor of the given shape filled with `values` (row-major).
template <typename T>
Tensor make(const Shape& shape, const std::vector<T>& values) {
  static_assert(dtype_of<T>() != DType::kUndefined, "make(): no dtype for this element type");
  Tensor t(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << "make(): wrong number of values";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
    if constexpr (std::is_same_v<T, bool>) t.as<uint8_t>()[i] = values[i] ? 1 : 0;
    else t.as<T>()[i] = values[i];
  }
  return t;
}

/// Row-major contents of a tensor as a vector.
template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) r[i] = t.as<uint8_t>()[i] != 0;
    else r[i] = t.as<T>()[i];
  }
  return r;
}

/// Runs one op through its infer function and CPU kernel (evaluate_node)
/// on `threads` threads. An undefined Tensor in `inputs` is an omitted
/// optional input. `config` sets layouts or a kernel variant (dtypes are
/// taken from the inputs).
inline std::vector<Tensor> run_op(const std::string& op_type, const std::vector<Tensor>& inputs,
                                  std::vector<ir::Attribute> attrs = {}, size_t num_outputs = 1,
                                  const std::string& domain = "", const kernels::KernelConfig& config = {},
                                  int threads = 2) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  std::vector<const TensorView*> views;
  std::vector<TensorView> storage(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ins.push_back(nullptr);
      views.push_back(nullptr);
      continue;
    }
    ins.push_back(g.add_value("in" + std::to_string(i), ir::TensorType::of(inputs[i].dtype(), inputs[i].shape())));
    storage[i] = inputs[i].view();
    views.push_back(&storage[i]);
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back("out" + std::to_string(i));
  ir::Node* n = g.add_node(op_type, ins, outs, "test_" + op_type, domain);
  n->attrs = std::move(attrs);
  return kernels::evaluate_node(*n, views, threads, nullptr, config);
}

/// Element-wise |a - b| <= atol + rtol * |b|, NaN equal to NaN.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                         float rtol = 1e-5f, float atol = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "at " << i;
      continue;
    }
    EXPECT_NEAR(actual[i], expected[i], atol + rtol * std::fabs(expected[i])) << "at " << i;
  }
}

/// True when oneDNN runs its AVX-512 kernels on this CPU (its Winograd
/// convolutions and most blocked-layout JIT kernels need them).
inline bool cpu_has_avx512() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
         isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

/// What the process writes to stdout (file descriptor 1) while `f` runs.
inline std::string capture_stdout(const std::function<void()>& f) {
  char path[] = "/tmp/gec_stdout_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  if (fd < 0) return "";
  std::fflush(stdout);
  // Puts stdout back and removes the file, also when f throws.
  struct Restore {
    int fd, saved;
    const char* path;
    ~Restore() {
      std::fflush(stdout);
      dup2(saved, 1);
      close(saved);
      close(fd);
      unlink(path);
    }
  } restore{fd, dup(1), path};
  dup2(fd, 1);
  f();
  std::fflush(stdout);
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Calls f() once per Highway target compiled in and supported by this CPU,
/// each time with dispatch pinned to that target (and its name traced), so
/// a test of a Highway loop covers the AVX-512, AVX2 and SSE4 code paths on
/// one machine; dispatch is unpinned afterwards, also when f() fails.
inline void for_each_hwy_target(const std::function<void()>& f) {
  struct Unpin {
    ~Unpin() { hwy::SetSupportedTargetsForTest(0); }
  } unpin;
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    f();
  }
}

}  // namespace gec::testing
