// Weights that oneDNN primitives read in the layout they ask for
// (kernels/cpu/common/onednn_common.h, PackedWeights): constants of the model
// packed once and shared, and weights fed or computed in the graph packed
// again in every run, in sessions as users run them.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <nlohmann/json.hpp>
#include <vector>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "gec/threading.h"
#include "kernels/cpu/common/gemm_simd.h"
#include "kernels/kernel.h"
#include "model/reader.h"
#include "runtime/executor.h"
#include "onnx_build.h"
#include "test_util.h"

namespace gec {
namespace {

namespace ob = testing::onnx_build;

std::vector<float> pattern(size_t n, int mul, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * mul) % mod) - mod / 2) * scale;
  return v;
}

/// y[m, n] = sum_k a[m, k] * b(k, n), in double.
template <typename B>
std::vector<float> matmul_ref(const std::vector<float>& a, int64_t m, int64_t k, int64_t n, B b) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * b(p, j);
      y[i * n + j] = static_cast<float>(acc);
    }
  return y;
}

// x [M,K] -> MatMul(B [K,N]) -> y1; x -> Gemm(W [N2,K], transB, C [N2]) -> y2;
// x3 [2,5,K] -> MatMul(the same B) -> y3. B and W are initializers (Linear
// layer weights), large enough that oneDNN's brgemm matmul asks for a
// packed layout on CPUs with AVX-512. Two sessions of one .gom, two runs
// each: the second run of each reads the copies its first run packed.
TEST(PackedWeights, ConstantMatMulAndGemmWeightsGiveTheProduct) {
  constexpr int64_t M = 37, K = 256, N = 300, N2 = 192;
  const std::vector<float> b = pattern(K * N, 7, 19, 1.f / 32), w = pattern(N2 * K, 5, 23, 1.f / 32),
                           c = pattern(N2, 3, 11, 0.25f);
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, std::to_string(M) + "," + std::to_string(K));
  ob::add_input(g, "x3", ob::kFloat, "2,5," + std::to_string(K));
  ob::add_output(g, "y1", ob::kFloat, std::to_string(M) + "," + std::to_string(N));
  ob::add_output(g, "y2", ob::kFloat, std::to_string(M) + "," + std::to_string(N2));
  ob::add_output(g, "y3", ob::kFloat, "2,5," + std::to_string(N));
  ob::add_float_init(g, "B", {K, N}, b);
  ob::add_float_init(g, "W", {N2, K}, w);
  ob::add_float_init(g, "C", {N2}, c);
  ob::add_node(g, "MatMul", {"x", "B"}, {"y1"});
  ob::attr_i(ob::add_node(g, "Gemm", {"x", "W", "C"}, {"y2"}), "transB", 1);
  ob::add_node(g, "MatMul", {"x3", "B"}, {"y3"});
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());

  for (int session = 0; session < 2; ++session) {
    auto s = Session::load_from_bytes(cm.gom);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> xv = pattern(M * K, 11 + run, 17, 1.f / 8), x3v = pattern(10 * K, 13 + run, 29, 1.f / 8);
      const Tensor x = testing::make<float>({M, K}, xv), x3 = testing::make<float>({2, 5, K}, x3v);
      const std::vector<Tensor> out = s->run({x.view(), x3.view()});
      ASSERT_EQ(out.size(), 3u);
      const auto bk = [&](int64_t p, int64_t j) { return double(b[p * N + j]); };
      const auto wt = [&](int64_t p, int64_t j) { return double(w[j * K + p]); };
      std::vector<float> y2 = matmul_ref(xv, M, K, N2, wt);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N2; ++j) y2[i * N2 + j] += c[j];
      const std::string trace = "session " + std::to_string(session) + " run " + std::to_string(run);
      SCOPED_TRACE(trace);
      testing::expect_close(testing::values<float>(out[0]), matmul_ref(xv, M, K, N, bk), 1e-4f, 1e-5f);
      testing::expect_close(testing::values<float>(out[1]), y2, 1e-4f, 1e-5f);
      testing::expect_close(testing::values<float>(out[2]), matmul_ref(x3v, 10, K, N, bk), 1e-4f, 1e-5f);
    }
  }
}

// A MatMul (N = 1024) and a transB Gemm (N = 512) with constant B. Where
// oneDNN's MatMul would be gemm-based (CPUs without AVX-512) the compiler
// gives both the "gemm" variant (our own GEMM, gemm_simd) and stores B
// packed into its panels (layout "gec.gemm/..."), which a session reads in
// place. The products (one followed by a Gelu that FusedMatMul takes, run
// after the product there) match a double-precision loop.
TEST(PackedWeights, GemmVariantWeightsAreStoredPackedAndReadInPlace) {
  constexpr int64_t M = 24, K = 64, N = 1024, N2 = 512;
  const std::vector<float> b = pattern(K * N, 7, 19, 1.f / 32), w = pattern(N2 * K, 5, 23, 1.f / 32);
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, std::to_string(M) + "," + std::to_string(K));
  ob::add_output(g, "y1", ob::kFloat, std::to_string(M) + "," + std::to_string(N));
  ob::add_output(g, "y2", ob::kFloat, std::to_string(M) + "," + std::to_string(N2));
  ob::add_float_init(g, "B", {K, N}, b);
  ob::add_float_init(g, "W", {N2, K}, w);
  ob::add_node(g, "MatMul", {"x", "B"}, {"p"});
  // Gelu(p) = 0.5 p (1 + erf(p / sqrt 2)), as PyTorch exports it (opset 13).
  ob::add_float_init(g, "sqrt2", {}, {1.41421356f});
  ob::add_float_init(g, "one", {}, {1.f});
  ob::add_float_init(g, "half", {}, {0.5f});
  ob::add_node(g, "Div", {"p", "sqrt2"}, {"d"});
  ob::add_node(g, "Erf", {"d"}, {"e"});
  ob::add_node(g, "Add", {"e", "one"}, {"a"});
  ob::add_node(g, "Mul", {"p", "a"}, {"pa"});
  ob::add_node(g, "Mul", {"pa", "half"}, {"y1"});
  ob::attr_i(ob::add_node(g, "Gemm", {"x", "W"}, {"y2"}), "transB", 1);
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  if (!testing::cpu_has_avx512()) {
    std::vector<size_t> sizes;
    for (const auto& p : lm.packed_weights) {
      EXPECT_EQ(p.layout.rfind("gec.gemm/", 0), 0u) << p.layout;
      sizes.push_back(p.bytes);
    }
    std::sort(sizes.begin(), sizes.end());
    EXPECT_EQ(sizes, (std::vector<size_t>{kernels::cpu::gemm_simd::packed_b_floats(K, N2) * sizeof(float),
                                          kernels::cpu::gemm_simd::packed_b_floats(K, N) * sizeof(float)}));
    int gemm_steps = 0;
    for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
      if (st.variant == "gemm") {
        ++gemm_steps;
        EXPECT_EQ(st.kernel.rfind("native.gemm", 0), 0u) << st.kernel;
      }
    EXPECT_EQ(gemm_steps, 2);  // the MatMul (with its Gelu) and the Gemm
  }
  // --disable-pass native_gemm: no step takes the variant, oneDNN's MatMul
  // runs both (the same values).
  CompileOptions off;
  off.disabled_passes = {"native_gemm"};
  const CompiledModel onednn = compile_onnx_bytes(bytes.data(), bytes.size(), off);
  const model::LoadedModel onednn_lm = model::read_gom_bytes(onednn.gom);
  for (const schedule::Step& st : onednn_lm.execution_plan.graphs[0].steps)
    if (st.kernel.find("matmul") != std::string::npos || st.kernel.find("gemm") != std::string::npos) {
      EXPECT_EQ(st.variant, "");
      EXPECT_EQ(st.kernel.rfind("onednn.matmul", 0), 0u) << st.kernel;
    }
  auto s = Session::load_from_bytes(cm.gom);
  const std::vector<float> xv = pattern(M * K, 11, 17, 1.f / 8);
  const Tensor x = testing::make<float>({M, K}, xv);
  const std::vector<Tensor> out = s->run({x.view()});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(s->packed_weights().packed, 0);
  std::vector<float> y1 = matmul_ref(xv, M, K, N, [&](int64_t p, int64_t j) { return double(b[p * N + j]); });
  for (float& v : y1) v = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  const std::vector<float> y2 = matmul_ref(xv, M, K, N2, [&](int64_t p, int64_t j) { return double(w[j * K + p]); });
  testing::expect_close(testing::values<float>(out[0]), y1, 1e-4f, 1e-5f);
  testing::expect_close(testing::values<float>(out[1]), y2, 1e-4f, 1e-5f);
  auto s_onednn = Session::load_from_bytes(onednn.gom);  // outputs live as long as their session
  const std::vector<Tensor> out_onednn = s_onednn->run({x.view()});
  testing::expect_close(testing::values<float>(out_onednn[0]), y1, 1e-4f, 1e-5f);
  testing::expect_close(testing::values<float>(out_onednn[1]), y2, 1e-4f, 1e-5f);
}

// One square constant W [64, 64] read as B by a MatMul and as B^T by a
// transB Gemm (a tied weight): the two packed copies are different bytes
// from the same address, so each node must get its own (the layout names
// the orientation), in a session, through the stored copies and with two
// run contexts. Both products match a double-precision loop.
TEST(PackedWeights, ASquareWeightReadAsBAndAsBTransposedGetsTwoCopies) {
  constexpr int64_t M = 20, D = 64;
  const std::vector<float> w = pattern(D * D, 7, 19, 1.f / 32);
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, std::to_string(M) + "," + std::to_string(D));
  ob::add_output(g, "y1", ob::kFloat, std::to_string(M) + "," + std::to_string(D));
  ob::add_output(g, "y2", ob::kFloat, std::to_string(M) + "," + std::to_string(D));
  ob::add_float_init(g, "W", {D, D}, w);
  ob::add_node(g, "MatMul", {"x", "W"}, {"y1"});
  ob::attr_i(ob::add_node(g, "Gemm", {"x", "W"}, {"y2"}), "transB", 1);
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const std::vector<float> xv = pattern(M * D, 11, 17, 1.f / 8);
  const std::vector<float> y1 = matmul_ref(xv, M, D, D, [&](int64_t p, int64_t j) { return double(w[p * D + j]); });
  const std::vector<float> y2 = matmul_ref(xv, M, D, D, [&](int64_t p, int64_t j) { return double(w[j * D + p]); });
  const Tensor x = testing::make<float>({M, D}, xv);
  SessionOptions two;
  two.max_concurrent_requests = 2;
  for (const SessionOptions& o : {SessionOptions{}, two}) {
    auto s = Session::load_from_bytes(cm.gom, o);
    for (int run = 0; run < 2; ++run) {
      const std::vector<Tensor> out = s->run({x.view()});
      ASSERT_EQ(out.size(), 2u);
      testing::expect_close(testing::values<float>(out[0]), y1, 1e-4f, 1e-5f);
      testing::expect_close(testing::values<float>(out[1]), y2, 1e-4f, 1e-5f);
    }
  }
  if (!testing::cpu_has_avx512()) {
    EXPECT_EQ(model::read_gom_bytes(cm.gom).packed_weights.size(), 2u);
  }
}

// x [1,64,28,28] -> three 3x3 Conv + Relu (pads 1, 64 channels) -> y: the
// convolutions between blocked values get the winograd variant on AVX-512
// (NnConv.WinogradIsChosenOnlyWhereItPays), whose transformed weights the
// .gom stores ("onednn-wino/..." layouts) and a session reads in place,
// packing nothing; the outputs match the direct kernels' compile
// (--disable-pass winograd, direct_conv, nhwc_conv, taps_conv and im2col_conv: no variant at all) and a -O0 compile (plain, no packing) within
// float32 rounding of sums over 576 products. Without oneDNN's Winograd
// kernels (no AVX-512) the steps are nhwc and get the winograd_nhwc variant
// (our own kernel, "gec.winograd/..." layouts) instead, and the rest holds
// the same way.
TEST(PackedWeights, WinogradWeightsAreStoredAndReadInPlace) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,64,28,28");
  ob::add_output(g, "y", ob::kFloat, "1,64,28,28");
  std::string in = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string w = "w" + std::to_string(i), c = "c" + std::to_string(i), r = "r" + std::to_string(i);
    ob::add_float_init(g, w, {64, 64, 3, 3}, pattern(64 * 64 * 9, 7 + 2 * i, 31, 1.f / 256));
    ob::attr_ints(ob::add_node(g, "Conv", {in, w}, {c}), "pads", {1, 1, 1, 1});
    ob::add_node(g, "Relu", {c}, {i == 2 ? std::string("y") : r});
    in = r;
  }
  const std::string bytes = m.SerializeAsString();
  CompileOptions direct_opts, o0;
  direct_opts.disabled_passes = {"winograd", "direct_conv", "nhwc_conv", "taps_conv", "im2col_conv", "native_gemm"};
  o0.opt_level = 0;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const CompiledModel direct = compile_onnx_bytes(bytes.data(), bytes.size(), direct_opts);
  const CompiledModel plain = compile_onnx_bytes(bytes.data(), bytes.size(), o0);

  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  // Steps of `variant` (each with a kernel named from `kernel`) and the
  // stored copies whose layout starts with `layout`: one per step.
  const auto steps_with_copies = [&](const std::string& variant, const std::string& kernel,
                                     const std::string& layout) {
    int steps = 0, copies = 0;
    for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
      if (st.variant == variant) {
        ++steps;
        EXPECT_EQ(st.kernel.rfind(kernel, 0), 0u) << st.kernel;
      }
    for (const auto& p : lm.packed_weights) copies += p.layout.rfind(layout, 0) == 0;
    EXPECT_EQ(copies, steps) << variant;
    return steps;
  };
  const int winograd_steps = steps_with_copies("winograd", "onednn.conv.winograd", "onednn-wino/");
  // Without AVX-512 our own Winograd kernel (winograd_nhwc) takes them, its
  // transformed weights stored the same way.
  const int native_steps = steps_with_copies("winograd_nhwc", "native.winograd", "gec.winograd/");
  // The compile report counts them; with the variant off it has no entry.
  EXPECT_EQ(nlohmann::json::parse(cm.report_json)["kernel_variants"]["winograd"].get<int>(), winograd_steps);
  EXPECT_EQ(nlohmann::json::parse(cm.report_json)["kernel_variants"]["winograd_nhwc"].get<int>(), native_steps);
  EXPECT_FALSE(nlohmann::json::parse(direct.report_json).contains("kernel_variants"));
  const model::LoadedModel direct_lm = model::read_gom_bytes(direct.gom);
  for (const schedule::Step& st : direct_lm.execution_plan.graphs[0].steps) EXPECT_EQ(st.variant, "") << st.kernel;

  const Tensor x = testing::make<float>({1, 64, 28, 28}, pattern(64 * 28 * 28, 13, 29, 1.f / 8));
  auto s = Session::load_from_bytes(cm.gom);
  const std::vector<float> got = testing::values<float>(s->run({x.view()})[0]);
  const Session::PackedWeightCounts pw = s->packed_weights();
  EXPECT_EQ(pw.adopted, pw.stored);
  EXPECT_EQ(pw.packed, 0);
  const std::vector<float> want_direct =
      testing::values<float>(Session::load_from_bytes(direct.gom)->run({x.view()})[0]);
  const std::vector<float> want_plain = testing::values<float>(Session::load_from_bytes(plain.gom)->run({x.view()})[0]);
  float largest = 0;
  for (float v : want_plain) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.f);
  testing::expect_close(got, want_plain, 0.f, 2e-5f * largest);
  testing::expect_close(want_direct, want_plain, 0.f, 2e-5f * largest);
  // With oneDNN's AVX-512 kernels (this project's CI machine) the two
  // convolutions between blocked values at least run the variant.
  if (testing::cpu_has_avx512()) {
    EXPECT_GE(winograd_steps, 2);
  }
}

// x [1,128,28,28] -> 3x3 Conv + Relu -> 3x3 stride-2 Conv + Relu -> 1x1
// Conv -> y [1,128,14,14]: the strided convolution between blocked values
// gets the nhwc variant on AVX-512 (NnConv.NhwcVariantIsChosenForStridedConvolutionsWhereItPays),
// whose weights the .gom stores packed for oneDNN's nhwc kernel and a
// session reads in place; the report counts it; outputs match a compile
// without it (--disable-pass nhwc_conv) and -O0 within float32 rounding of
// sums over 1152 products, with the session's default threads (those the
// compiler packed for: every stored copy read in place) and with 1 thread
// (oneDNN may block for it otherwise; values only). Elsewhere no step gets
// the variant and the rest still holds.
TEST(PackedWeights, NhwcConvolutionWeightsAreStoredAndReadInPlace) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,128,28,28");
  ob::add_output(g, "y", ob::kFloat, "1,128,14,14");
  ob::add_float_init(g, "w0", {128, 128, 3, 3}, pattern(128 * 128 * 9, 7, 31, 1.f / 512));
  ob::add_float_init(g, "w1", {128, 128, 3, 3}, pattern(128 * 128 * 9, 11, 29, 1.f / 512));
  ob::add_float_init(g, "w2", {128, 128, 1, 1}, pattern(128 * 128, 5, 23, 1.f / 128));
  ob::attr_ints(ob::add_node(g, "Conv", {"x", "w0"}, {"c0"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"c0"}, {"r0"});
  onnx::NodeProto* strided = ob::add_node(g, "Conv", {"r0", "w1"}, {"c1"});
  ob::attr_ints(strided, "pads", {1, 1, 1, 1});
  ob::attr_ints(strided, "strides", {2, 2});
  ob::add_node(g, "Relu", {"c1"}, {"r1"});
  ob::add_node(g, "Conv", {"r1", "w2"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  CompileOptions off, o0;
  off.disabled_passes = {"nhwc_conv"};
  o0.opt_level = 0;
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const CompiledModel without = compile_onnx_bytes(bytes.data(), bytes.size(), off);
  const CompiledModel plain = compile_onnx_bytes(bytes.data(), bytes.size(), o0);

  int nhwc_steps = 0;
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom), without_lm = model::read_gom_bytes(without.gom);
  for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
    if (st.variant == "nhwc") {
      ++nhwc_steps;
      EXPECT_EQ(st.kernel.rfind("onednn.conv.nhwc", 0), 0u) << st.kernel;
    }
  for (const schedule::Step& st : without_lm.execution_plan.graphs[0].steps) EXPECT_NE(st.variant, "nhwc") << st.kernel;
  EXPECT_EQ(nlohmann::json::parse(cm.report_json)["kernel_variants"]["nhwc"].get<int>(), nhwc_steps);
  EXPECT_EQ(nlohmann::json::parse(without.report_json)["kernel_variants"]["nhwc"].get<int>(), 0);
  if (testing::cpu_has_avx512()) {
    EXPECT_EQ(nhwc_steps, 1);
  }

  const Tensor x = testing::make<float>({1, 128, 28, 28}, pattern(128 * 28 * 28, 13, 29, 1.f / 8));
  const std::vector<float> want = testing::values<float>(Session::load_from_bytes(plain.gom)->run({x.view()})[0]);
  const std::vector<float> want_without =
      testing::values<float>(Session::load_from_bytes(without.gom)->run({x.view()})[0]);
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.f);
  testing::expect_close(want_without, want, 0.f, 2e-5f * largest);
  auto s = Session::load_from_bytes(cm.gom);
  testing::expect_close(testing::values<float>(s->run({x.view()})[0]), want, 0.f, 2e-5f * largest);
  const Session::PackedWeightCounts pw = s->packed_weights();
  EXPECT_EQ(pw.adopted, pw.stored);
  EXPECT_EQ(pw.packed, 0);
  SessionOptions one;
  one.num_threads = 1;
  testing::expect_close(testing::values<float>(Session::load_from_bytes(cm.gom, one)->run({x.view()})[0]), want, 0.f,
                        2e-5f * largest);
}

// x [1,32,16,8] -> four 1x3 / 3x1 Conv + Relu (32 channels, pads 1) -> y:
// small convolutions get the direct variant (our own loops), whose
// packed weights the .gom stores ("gec.direct/16/[OC,IC,KH,KW]") and a
// session reads in place; two run contexts share them. The outputs match
// a compile with --disable-pass direct_conv (oneDNN's convolutions) within
// float32 rounding of sums over 96 products, and that compile has no
// direct step.
TEST(PackedWeights, DirectConvolutionWeightsAreStoredAndReadInPlace) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,32,16,8");
  ob::add_output(g, "y", ob::kFloat, "1,32,16,8");
  std::string in = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string w = "w" + std::to_string(i), c = "c" + std::to_string(i), r = "r" + std::to_string(i);
    const int64_t kh = i % 2 == 0 ? 1 : 3, kw = i % 2 == 0 ? 3 : 1;
    ob::add_float_init(g, w, {32, 32, kh, kw}, pattern(32 * 32 * 3, 7 + 2 * i, 31, 1.f / 16));
    ob::attr_ints(ob::add_node(g, "Conv", {in, w}, {c}), "pads", {kh / 2, kw / 2, kh / 2, kw / 2});
    ob::add_node(g, "Relu", {c}, {i == 3 ? std::string("y") : r});
    in = r;
  }
  const std::string bytes = m.SerializeAsString();
  CompileOptions off;
  off.disabled_passes = {"direct_conv"};
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const CompiledModel onednn = compile_onnx_bytes(bytes.data(), bytes.size(), off);
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  int direct_steps = 0, direct_copies = 0;
  for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
    if (st.variant == "direct") {
      ++direct_steps;
      EXPECT_EQ(st.kernel.rfind("native.direct", 0), 0u) << st.kernel;
    }
  for (const auto& p : lm.packed_weights) direct_copies += p.layout.rfind("gec.direct/16/", 0) == 0;
  EXPECT_GE(direct_steps, 2);  // those between blocked values (the last one writes plain y)
  EXPECT_EQ(direct_copies, direct_steps);
  EXPECT_EQ(nlohmann::json::parse(cm.report_json)["kernel_variants"]["direct"].get<int>(), direct_steps);
  const model::LoadedModel onednn_lm = model::read_gom_bytes(onednn.gom);
  for (const schedule::Step& st : onednn_lm.execution_plan.graphs[0].steps) EXPECT_NE(st.variant, "direct") << st.kernel;

  const Tensor x = testing::make<float>({1, 32, 16, 8}, pattern(32 * 16 * 8, 13, 29, 1.f / 8));
  SessionOptions two;
  two.max_concurrent_requests = 2;
  auto s = Session::load_from_bytes(cm.gom, two);
  const std::vector<float> got = testing::values<float>(s->run({x.view()})[0]);
  const Session::PackedWeightCounts pw = s->packed_weights();
  EXPECT_EQ(pw.adopted, pw.stored);
  EXPECT_EQ(pw.packed, 0);
  const std::vector<float> want = testing::values<float>(Session::load_from_bytes(onednn.gom)->run({x.view()})[0]);
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.f);
  testing::expect_close(got, want, 0.f, 1e-5f * largest);
  // A second run context (two runs at once) reads the same stored copies.
  std::vector<float> a, b;
  std::thread t([&] { a = testing::values<float>(s->run({x.view()})[0]); });
  b = testing::values<float>(s->run({x.view()})[0]);
  t.join();
  EXPECT_EQ(a, got);
  EXPECT_EQ(b, got);
  EXPECT_EQ(s->packed_weights().packed, 0);
}

/// Model `bytes` compiled as is and with compile stage `stage` off: the
/// steps of kernel variant `variant` run kernel `kernel`, one each without
/// AVX-512 (`steps_without_avx512`), each with one stored copy whose layout
/// starts with `layout`, counted in the report; with the stage off no step
/// has the variant or the kernel and the report counts 0. Returns both
/// compiles (as is, off).
std::pair<CompiledModel, CompiledModel> expect_stage_variant(const std::string& bytes, const std::string& stage,
                                                             const std::string& variant, const std::string& kernel,
                                                             const std::string& layout, int steps_without_avx512) {
  CompileOptions off;
  off.disabled_passes = {stage};
  CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  CompiledModel without = compile_onnx_bytes(bytes.data(), bytes.size(), off);
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  int steps = 0, copies = 0;
  for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
    if (st.variant == variant) {
      ++steps;
      EXPECT_EQ(st.kernel, kernel);
    }
  for (const auto& p : lm.packed_weights) copies += p.layout.rfind(layout, 0) == 0;
  if (!testing::cpu_has_avx512()) {
    EXPECT_EQ(steps, steps_without_avx512);
  }
  EXPECT_EQ(copies, steps);
  EXPECT_EQ(nlohmann::json::parse(cm.report_json)["kernel_variants"][variant].get<int>(), steps);
  const model::LoadedModel without_lm = model::read_gom_bytes(without.gom);
  for (const schedule::Step& st : without_lm.execution_plan.graphs[0].steps) {
    EXPECT_NE(st.variant, variant) << st.kernel;
    EXPECT_NE(st.kernel, kernel);
  }
  EXPECT_EQ(nlohmann::json::parse(without.report_json)["kernel_variants"][variant].get<int>(), 0);
  return {std::move(cm), std::move(without)};
}

/// Runs `x` through a Session of `cm` (options `o`): no weight packed at
/// load, outputs within 2e-5 of the largest |y| of `reference`'s. Returns
/// the session and its output.
std::pair<std::unique_ptr<Session>, std::vector<float>> expect_outputs_of(const CompiledModel& cm,
                                                                          const CompiledModel& reference,
                                                                          const Tensor& x, SessionOptions o = {}) {
  auto s = Session::load_from_bytes(cm.gom, o);
  std::vector<float> got = testing::values<float>(s->run({x.view()})[0]);
  EXPECT_EQ(s->packed_weights().packed, 0);
  const std::vector<float> want =
      testing::values<float>(Session::load_from_bytes(reference.gom)->run({x.view()})[0]);
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::fabs(v));
  EXPECT_GT(largest, 0.f);
  testing::expect_close(got, want, 0.f, 2e-5f * largest);
  return {std::move(s), std::move(got)};
}

// r = Relu(Conv1x1(x)), x [1,64,56,56]; a = Relu(Conv3x3/2(r, w) +
// Conv1x1/2(r, s)); y = Conv1x1(a): the 3x3 convolution fuses the Add as
// its residual (FusedConv), between nhwc values. Without AVX-512
// it takes the im2col_nhwc variant (native.im2col_nhwc+fused: columns and
// one oneDNN MatMul, Z as a sum post-op), its weights stored as the taps
// layout and read in place; the report counts it; --disable-pass
// im2col_conv plans no such step. Both give the same outputs within float32
// rounding of sums over 576 products, on one run context and two at once.
TEST(PackedWeights, Im2colConvolutionIsPlannedStoredAndTurnedOffByItsStage) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,64,56,56");
  ob::add_output(g, "y", ob::kFloat, "1,64,28,28");
  ob::add_float_init(g, "w", {64, 64, 3, 3}, pattern(64 * 64 * 9, 7, 31, 1.f / 16));
  ob::add_float_init(g, "b", {64}, pattern(64, 3, 7, 1.f / 4));
  ob::add_float_init(g, "s", {64, 64, 1, 1}, pattern(64 * 64, 11, 37, 1.f / 16));
  ob::add_float_init(g, "w0", {64, 64, 1, 1}, pattern(64 * 64, 5, 23, 1.f / 16));
  ob::add_float_init(g, "w2", {64, 64, 1, 1}, pattern(64 * 64, 3, 19, 1.f / 16));
  ob::add_node(g, "Conv", {"x", "w0"}, {"t"});
  ob::add_node(g, "Relu", {"t"}, {"r"});
  auto* conv = ob::add_node(g, "Conv", {"r", "w", "b"}, {"c"});
  ob::attr_ints(conv, "pads", {1, 1, 1, 1});
  ob::attr_ints(conv, "strides", {2, 2});
  ob::attr_ints(ob::add_node(g, "Conv", {"r", "s"}, {"k"}), "strides", {2, 2});
  ob::add_node(g, "Add", {"c", "k"}, {"d"});
  ob::add_node(g, "Relu", {"d"}, {"a"});
  ob::add_node(g, "Conv", {"a", "w2"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  const std::pair<CompiledModel, CompiledModel> compiles =
      expect_stage_variant(bytes, "im2col_conv", "im2col_nhwc", "native.im2col_nhwc+fused", "gec.im2col/", 1);
  const Tensor x = testing::make<float>({1, 64, 56, 56}, pattern(64 * 56 * 56, 13, 29, 1.f / 8));
  SessionOptions two;
  two.max_concurrent_requests = 2;
  // Not structured bindings: the thread's lambda below captures these
  // (clang 14, the sanitizer build, refuses captured bindings).
  const auto run = expect_outputs_of(compiles.first, compiles.second, x, two);
  Session* s = run.first.get();
  const std::vector<float>& got = run.second;
  std::vector<float> a2, b2;
  std::thread t([&] { a2 = testing::values<float>(s->run({x.view()})[0]); });
  b2 = testing::values<float>(s->run({x.view()})[0]);
  t.join();
  EXPECT_EQ(a2, got);
  EXPECT_EQ(b2, got);
}

// x [1,64,14,14] -> 1x1 Conv -> Relu -> DeepLab's atrous 3x3 Conv
// (dilation 12, pads 12: 0.18 of its tap-pixel pairs inside x) -> Relu ->
// 1x1 Conv -> y. Without AVX-512 the group is nhwc, where oneDNN has only
// its gemm kernel for the atrous one: the compiler plans it with the taps
// variant (native.taps, weights stored per tap as gec.taps/ and read in
// place) and the report counts it (with AVX-512 the group keeps nChw16c,
// which has no taps variant: then no such step, and the rest holds);
// --disable-pass taps_conv plans no such step (oneDNN's kernel, plain
// between reorders). Both give the same outputs within float32 rounding
// of sums over 576 products.
TEST(PackedWeights, TapsConvolutionIsPlannedStoredAndTurnedOffByItsStage) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,64,14,14");
  ob::add_output(g, "y", ob::kFloat, "1,32,14,14");
  ob::add_float_init(g, "w0", {64, 64, 1, 1}, pattern(64 * 64, 7, 31, 1.f / 16));
  ob::add_float_init(g, "w1", {64, 64, 3, 3}, pattern(64 * 64 * 9, 11, 37, 1.f / 16));
  ob::add_float_init(g, "w2", {32, 64, 1, 1}, pattern(32 * 64, 5, 23, 1.f / 16));
  ob::add_node(g, "Conv", {"x", "w0"}, {"c0"});
  ob::add_node(g, "Relu", {"c0"}, {"r0"});
  auto* atrous = ob::add_node(g, "Conv", {"r0", "w1"}, {"c1"});
  ob::attr_ints(atrous, "pads", {12, 12, 12, 12});
  ob::attr_ints(atrous, "dilations", {12, 12});
  ob::add_node(g, "Relu", {"c1"}, {"r1"});
  ob::add_node(g, "Conv", {"r1", "w2"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  const std::pair<CompiledModel, CompiledModel> compiles =
      expect_stage_variant(bytes, "taps_conv", "taps", "native.taps+fused", "gec.taps/", 1);
  expect_outputs_of(compiles.first, compiles.second,
                    testing::make<float>({1, 64, 14, 14}, pattern(64 * 14 * 14, 13, 29, 1.f / 8)));
}

// x [1,16,8,8] -> Conv(w0) -> Relu -> Conv(w, fed as a graph input) -> Relu
// -> Conv(w0) -> y, 3x3 convolutions with pads 1: the middle convolution
// runs between values the layout pass holds in nChw16c, so oneDNN asks for
// blocked weights and the kernel packs w. The caller then writes other
// weights into the same buffer: the next run must use them (a copy kept by
// pointer would repeat the first output). A fresh session given the new
// weights is the reference.
TEST(PackedWeights, FedConvolutionWeightsArePackedAgainInEveryRun) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,8,8");
  ob::add_input(g, "w", ob::kFloat, "16,16,3,3");
  ob::add_output(g, "y", ob::kFloat, "1,16,8,8");
  ob::add_float_init(g, "w0", {16, 16, 3, 3}, pattern(16 * 16 * 9, 3, 7, 0.05f));
  ob::attr_ints(ob::add_node(g, "Conv", {"x", "w0"}, {"a"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"a"}, {"r"});
  ob::attr_ints(ob::add_node(g, "Conv", {"r", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"c"}, {"t"});
  ob::attr_ints(ob::add_node(g, "Conv", {"t", "w0"}, {"y"}), "pads", {1, 1, 1, 1});
  const std::string bytes = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  // The middle convolution reads a non-plain src (else oneDNN would take W
  // as it is, and nothing would be packed).
  const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
  const std::vector<ir::Node*> nodes = lm.graphs[0]->node_list();
  int fed = 0;
  for (const schedule::Step& st : lm.execution_plan.graphs[0].steps) {
    const ir::Node* n = nodes.at(static_cast<size_t>(st.node));
    if (n->inputs().size() < 2 || !n->input(1) || n->input(1)->name() != "w") continue;
    ++fed;
    EXPECT_EQ(st.kernel.rfind("onednn.conv", 0), 0u) << st.kernel;
    ASSERT_FALSE(st.input_layouts.empty()) << "the fed-weight convolution is planned plain";
    EXPECT_NE(st.input_layouts[0], ops::Layout::kPlain);
  }
  ASSERT_EQ(fed, 1);

  const Tensor x = testing::make<float>({1, 16, 8, 8}, pattern(16 * 64, 7, 23, 0.125f));
  const std::vector<float> w1 = pattern(16 * 16 * 9, 5, 13, 0.1f), w2 = pattern(16 * 16 * 9, 11, 17, 0.1f);
  auto s = Session::load_from_bytes(cm.gom);
  Tensor w = testing::make<float>({16, 16, 3, 3}, w1);
  const std::vector<float> first = testing::values<float>(s->run({x.view(), w.view()})[0]);
  std::copy(w2.begin(), w2.end(), w.as<float>());  // same buffer, new weights
  const std::vector<float> second = testing::values<float>(s->run({x.view(), w.view()})[0]);

  auto fresh = Session::load_from_bytes(cm.gom);
  const Tensor w2t = testing::make<float>({16, 16, 3, 3}, w2);
  const std::vector<float> want = testing::values<float>(fresh->run({x.view(), w2t.view()})[0]);
  testing::expect_close(second, want, 1e-5f, 1e-5f);
  float changed = 0;
  for (size_t i = 0; i < first.size() && i < want.size(); ++i) changed = std::max(changed, std::abs(first[i] - want[i]));
  EXPECT_GT(changed, 1e-2f) << "the two weights should give different outputs";
}

// x [1,16,8,8] -> Conv(w0) -> Relu -> Conv(w1) -> Relu -> Conv(w0b) -> y,
// 3x3 convolutions with pads 1 between blocked values, then y -> Flatten ->
// Gemm(G [1024,300]) -> z: every weight is a constant oneDNN reads packed.
// w0b holds w0's bytes (an exporter's duplicate): the .gom stores them once,
// and one packed copy per layout serves both.
std::string packed_model() {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,8,8");
  ob::add_output(g, "z", ob::kFloat, "1,300");
  ob::add_float_init(g, "w0", {16, 16, 3, 3}, pattern(16 * 16 * 9, 3, 7, 0.05f));
  ob::add_float_init(g, "w1", {16, 16, 3, 3}, pattern(16 * 16 * 9, 5, 13, 0.05f));
  ob::add_float_init(g, "w0b", {16, 16, 3, 3}, pattern(16 * 16 * 9, 3, 7, 0.05f));
  ob::add_float_init(g, "G", {1024, 300}, pattern(1024 * 300, 7, 19, 1.f / 64));
  ob::attr_ints(ob::add_node(g, "Conv", {"x", "w0"}, {"a"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"a"}, {"r"});
  ob::attr_ints(ob::add_node(g, "Conv", {"r", "w1"}, {"c"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Relu", {"c"}, {"t"});
  ob::attr_ints(ob::add_node(g, "Conv", {"t", "w0b"}, {"y"}), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Flatten", {"y"}, {"f"});
  ob::add_node(g, "Gemm", {"f", "G"}, {"z"});
  return m.SerializeAsString();
}

// The compiler stores each constant weight packed the way its kernel asks
// (-O2 and up); a session on this machine reads every stored copy in place
// and packs nothing, with the same bits as a model whose weights are packed
// at run time (--disable-pass pack_weights).
TEST(PackedWeights, CopiesStoredAtCompileTimeAreReadInPlaceWithTheSameBits) {
  const std::string bytes = packed_model();
  CompileOptions off;
  off.disabled_passes = {"pack_weights"};
  const CompiledModel stored = compile_onnx_bytes(bytes.data(), bytes.size());
  const CompiledModel at_run = compile_onnx_bytes(bytes.data(), bytes.size(), off);
  EXPECT_TRUE(model::read_gom_bytes(at_run.gom).packed_weights.empty());
  const model::LoadedModel lm = model::read_gom_bytes(stored.gom);
  ASSERT_GE(lm.packed_weights.size(), 2u) << "oneDNN asked for no packed layout (a CPU without AVX-512?)";
  EXPECT_GT(stored.gom->size(), at_run.gom->size());  // the plain copies stay, the packed ones are added

  const Tensor x = testing::make<float>({1, 16, 8, 8}, pattern(16 * 64, 7, 23, 0.125f));
  // Every step on its planned thread count in both sessions: the step
  // thread tuning times its steps and may run one session's product on one
  // thread and the other's on two, and oneDNN's gemm-based MatMul (CPUs
  // without AVX-512) sums in another order there.
  SessionOptions planned;
  planned.adapt_threads = false;
  auto a = Session::load_from_bytes(stored.gom, planned), b = Session::load_from_bytes(at_run.gom, planned);
  for (int run = 0; run < 2; ++run) {
    const std::vector<Tensor> ya = a->run({x.view()}), yb = b->run({x.view()});
    ASSERT_EQ(ya.size(), 1u);
    ASSERT_EQ(ya[0].bytes(), yb[0].bytes());
    EXPECT_EQ(std::memcmp(ya[0].data(), yb[0].data(), ya[0].bytes()), 0) << "run " << run;
  }
  // The copies are not the model's weights: the limit and the count do not see them.
  EXPECT_EQ(a->weights_bytes(), b->weights_bytes());
  SessionOptions limit;
  limit.max_weights_bytes = b->weights_bytes();
  EXPECT_NO_THROW(Session::load_from_bytes(stored.gom, limit));
  limit.max_weights_bytes = b->weights_bytes() - 1;
  EXPECT_THROW(Session::load_from_bytes(stored.gom, limit), Error);
  const Session::PackedWeightCounts pa = a->packed_weights(), pb = b->packed_weights();
  int64_t copy_bytes = 0;
  for (const auto& p : lm.packed_weights) copy_bytes += static_cast<int64_t>(p.bytes);
  EXPECT_GE(pa.stored_bytes, copy_bytes);  // the copies, each 64-byte aligned
  EXPECT_LT(pa.stored_bytes, copy_bytes + 64 * static_cast<int64_t>(lm.packed_weights.size()));
  EXPECT_EQ(pa.stored, static_cast<int64_t>(lm.packed_weights.size()));
  EXPECT_EQ(pa.adopted, pa.stored);
  EXPECT_EQ(pa.packed, 0);
  EXPECT_EQ(pb.stored, 0);
  EXPECT_EQ(pb.adopted, 0);
  EXPECT_EQ(pb.packed, pa.stored);
}

// A stored copy whose layout description is not the one the kernel wants
// (another CPU's packing, or a damaged description) is not read: the kernel
// packs the plain weights itself and the outputs are those of a model
// packed at run time.
TEST(PackedWeights, AStoredCopyInAnotherLayoutIsPackedAgain) {
  const std::string bytes = packed_model();
  const CompiledModel cm = compile_onnx_bytes(bytes.data(), bytes.size());
  const model::LoadedModel m = model::read_gom_bytes(cm.gom);
  ASSERT_FALSE(m.packed_weights.empty());
  const Tensor x = testing::make<float>({1, 16, 8, 8}, pattern(16 * 64, 7, 23, 0.125f));
  // Every step on its planned thread count, as the executor below: the step
  // thread tuning may run a product on one thread, and oneDNN's gemm-based
  // MatMul (CPUs without AVX-512) sums in another order there.
  SessionOptions planned;
  planned.adapt_threads = false;
  const std::vector<Tensor> want = Session::load_from_bytes(cm.gom, planned)->run({x.view()});

  // how 0: the copies as stored (the control: every one is read); 1:
  // another layout; 2: the right layout, the wrong size. The executor runs
  // on the compiler's thread count, as a default session does.
  for (int how = 0; how < 3; ++how) {
    kernels::SharedWeights shared;
    for (const auto& p : m.packed_weights) {
      std::string layout = p.layout;
      size_t n = p.bytes;
      if (how == 1) layout.back() ^= 1;
      if (how == 2) n -= 64;
      shared.add_stored(m.ids.value(p.value)->constant->data(), {layout, p.data, n});
    }
    std::vector<uint8_t> arena(static_cast<size_t>(m.arena_bytes) + 64);
    uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(arena.data()) + 63) / 64 * 64);
    runtime::Executor e(m, base, available_cores(), false, 0, &shared);
    e.bind_input(0, x.view());
    e.run();
    SCOPED_TRACE(how == 0 ? "as stored" : how == 1 ? "another layout" : "another size");
    EXPECT_EQ(shared.adopted(), how == 0 ? m.packed_weights.size() : 0u);
    EXPECT_EQ(shared.size(), m.packed_weights.size());
    ASSERT_EQ(e.output(0).bytes(), want[0].bytes());
    EXPECT_EQ(std::memcmp(e.output(0).data, want[0].data(), want[0].bytes()), 0);
  }
}

}  // namespace
}  // namespace gec
