// MatMul (numpy semantics) and Gemm kernels: hand-computed small cases,
// each float32 one with oneDNN's MatMul (variant "") and with our own GEMM
// (variant "gemm", gemm_simd), plus batched and fused products at sizes
// past gemm_simd's blocks against a double-precision loop.
#include <cmath>

#include "kernels_nn_util.h"
#include "ops/domain.h"

namespace gec {
namespace {
using namespace gec::testing;

/// Runs `op` with each MatMul variant and expects `want` (shape `shape`).
void expect_both(const std::string& op, const std::vector<Tensor>& in, std::vector<ir::Attribute> attrs,
                 const Shape& shape, const std::vector<float>& want, const std::string& domain = "") {
  for (const char* variant : {"", "gemm"}) {
    SCOPED_TRACE(std::string("variant '") + variant + "'");
    kernels::KernelConfig config;
    config.variant = variant;
    const std::vector<Tensor> out = run_op(op, in, attrs, 1, domain, config);
    EXPECT_EQ(out[0].shape(), shape);
    expect_close(values<float>(out[0]), want);
  }
}

const std::vector<float> k3x4 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

TEST(NnMatMul, VectorTimesMatrix) {
  expect_both("MatMul", {make<float>({3}, {1, 2, 3}), make<float>({3, 4}, k3x4)}, {}, Shape{4}, {38, 44, 50, 56});
}

TEST(NnMatMul, VectorDotVectorIsScalar) {
  expect_both("MatMul", {make<float>({3}, {1, 2, 3}), make<float>({3}, {4, 5, 6})}, {}, Shape{}, {32});
}

TEST(NnMatMul, MatrixTimesVector) {
  expect_both("MatMul", {make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({3}, {1, 1, 1})}, {}, Shape{2}, {6, 15});
}

TEST(NnMatMul, BatchBroadcastBothSides) {
  // A [2,1,2,2]: A_a = (a+1) * I. B [3,2,2]: B_j = [[1,j],[0,1]].
  // out [2,3,2,2]: out[a][j] = (a+1) * B_j.
  std::vector<float> e;
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 3; ++j)
      for (float v : {1.f, float(j), 0.f, 1.f}) e.push_back((a + 1) * v);
  expect_both("MatMul",
              {make<float>({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2}),
               make<float>({3, 2, 2}, {1, 0, 0, 1, 1, 1, 0, 1, 1, 2, 0, 1})},
              {}, Shape{2, 3, 2, 2}, e);
}

TEST(NnMatMul, BatchedVectorRhsAndOddSizes) {
  // A [2,1,3] batches [1,2,3] and [4,5,6]; B [3] of ones -> [2,1].
  expect_both("MatMul", {make<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}), make<float>({3}, {1, 1, 1})}, {}, Shape{2, 1},
              {6, 15});
}

TEST(NnMatMul, EmptyInnerDimGivesZeros) {
  expect_both("MatMul", {make<float>({2, 0}, {}), make<float>({0, 3}, {})}, {}, Shape{2, 3}, std::vector<float>(6, 0.f));
}

TEST(NnMatMul, Int64Loop) {
  auto out = run_op("MatMul", {make<int64_t>({2, 2}, {1, 2, 3, 4}), make<int64_t>({1, 2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{19, 22, 43, 50}));
}

TEST(NnMatMul, ShapeChangeRebuilds) {
  KernelHarness h("MatMul", 2, {});
  expect_close(values<float>(h.run({make<float>({1, 2}, {1, 2}), make<float>({2, 1}, {3, 4})}, {1, 1})), {11});
  expect_close(values<float>(h.run({make<float>({1, 3}, {1, 2, 3}), make<float>({3, 1}, {1, 1, 1})}, {1, 1})), {6});
}

// A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]] -> AB = [[4,5],[10,11]].
const std::vector<float> kA = {1, 2, 3, 4, 5, 6}, kAt = {1, 4, 2, 5, 3, 6};
const std::vector<float> kB = {1, 0, 0, 1, 1, 1}, kBt = {1, 0, 1, 0, 1, 1};

TEST(NnGemm, PlainAndTransposed) {
  const Shape s{2, 2};
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB)}, {}, s, {4, 5, 10, 11});
  expect_both("Gemm", {make<float>({3, 2}, kAt), make<float>({3, 2}, kB)}, {ai("transA", 1)}, s, {4, 5, 10, 11});
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({2, 3}, kBt)}, {ai("transB", 1)}, s, {4, 5, 10, 11});
  expect_both("Gemm", {make<float>({3, 2}, kAt), make<float>({2, 3}, kBt)}, {ai("transA", 1), ai("transB", 1)}, s,
              {4, 5, 10, 11});
}

TEST(NnGemm, AlphaBetaRowC) {
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2}, {10, 20})},
              {af("alpha", 2.f), af("beta", 0.5f)}, Shape{2, 2}, {13, 20, 25, 32});
}

// C of one row with alpha = beta = 1 is the primitive's bias (matmul.cc):
// [N] and [1, N], with transB; a one-element C over two columns is still
// broadcast into Y first.
TEST(NnGemm, RowCAsBias) {
  const Shape s{2, 2};
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2}, {10, 20})}, {}, s,
              {14, 25, 20, 31});
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({2, 3}, kBt), make<float>({1, 2}, {10, 20})},
              {ai("transB", 1)}, s, {14, 25, 20, 31});
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({1}, {7})}, {}, s,
              {11, 12, 17, 18});
  // N = 1: C [1] is one row, the bias path again; A [2,3] x [1,1,1]^T = [6, 15].
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 1}, {1, 1, 1}), make<float>({1}, {0.5f})}, {},
              Shape{2, 1}, {6.5f, 15.5f});
}

TEST(NnGemm, ColumnAndScalarC) {
  const Shape s{2, 2};
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2, 1}, {100, 200})}, {}, s,
              {104, 105, 210, 211});
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({}, {1})}, {}, s,
              {5, 6, 11, 12});
  expect_both("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2, 2}, {1, 2, 3, 4})},
              {af("beta", 0.f)}, s, {4, 5, 10, 11});  // beta 0 ignores C
  // C [2, 2] scaled by beta, alpha on the product, transposed A.
  expect_both("Gemm", {make<float>({3, 2}, kAt), make<float>({3, 2}, kB), make<float>({2, 2}, {1, 2, 3, 4})},
              {ai("transA", 1), af("alpha", 0.5f), af("beta", 2.f)}, s, {4, 6.5f, 11, 13.5f});
}

/// x [2, 3, 37, 300] (pattern) x w [300, 70] (+ b [70], Tanh) on both
/// variants and both thread counts: batch folded into M, blocks of K and
/// a last partial panel, against a double loop; then MatMul with a batched
/// B [2, 1, 300, 70] that broadcasts over A's second batch dim.
TEST(NnMatMul, BatchedAndFusedPastTheBlocksMatchALoop) {
  const auto pattern = [](size_t n, int a, int m) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(int64_t(i) * a % m - m / 2) / float(m);
    return v;
  };
  const int64_t B0 = 2, B1 = 3, M = 37, K = 300, N = 70;
  const std::vector<float> x = pattern(size_t(B0 * B1 * M * K), 7, 29), w = pattern(size_t(B0 * K * N), 5, 31),
                           b = pattern(size_t(N), 3, 17);
  for (bool batched_b : {false, true})
    for (bool fused : {false, true}) {
      if (batched_b && fused) continue;  // FusedMatMul's B is 2-D (ops/fused_matmul.h)
      std::vector<float> want(size_t(B0 * B1 * M * N));
      for (int64_t p = 0; p < B0 * B1; ++p)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            const float* wb = w.data() + (batched_b ? p / B1 * K * N : 0);
            double acc = fused ? b[size_t(j)] : 0.0;
            for (int64_t q = 0; q < K; ++q) acc += double(x[size_t((p * M + i) * K + q)]) * wb[q * N + j];
            want[size_t((p * M + i) * N + j)] = float(fused ? std::tanh(acc) : acc);
          }
      const Tensor wt = batched_b ? make<float>({B0, 1, K, N}, std::vector<float>(w.begin(), w.end()))
                                  : make<float>({K, N}, std::vector<float>(w.begin(), w.begin() + K * N));
      for (int threads : {1, 2})
        for (const char* variant : {"", "gemm"}) {
          SCOPED_TRACE(std::string("variant '") + variant + "' threads " + std::to_string(threads) +
                       (batched_b ? " batched B" : "") + (fused ? " fused" : ""));
          kernels::KernelConfig config;
          config.variant = variant;
          std::vector<Tensor> in = {make<float>({B0, B1, M, K}, x), wt};
          if (fused) in.push_back(make<float>({N}, b));
          const auto out = fused ? run_op("FusedMatMul", in, {as("activation", "Tanh")}, 1, ops::kGecDomain, config, threads)
                                 : run_op("MatMul", in, {}, 1, "", config, threads);
          EXPECT_EQ(out[0].shape(), (Shape{B0, B1, M, N}));
          expect_close(values<float>(out[0]), want, 1e-5f, 1e-5f);
        }
    }
}

// The compile-time choice (matmul.cc matmul_variant_choice): "gemm" for
// float32 products where oneDNN's MatMul would be its sgemm (no AVX-512),
// never for other dtypes.
TEST(NnMatMul, GemmVariantIsChosenForFloat32WithoutAvx512Only) {
  for (const std::string op : {"MatMul", "Gemm"})
    for (DType dt : {DType::kFloat32, DType::kInt64}) {
      if (op == "Gemm" && dt != DType::kFloat32) continue;  // Gemm takes float32 only
      ir::Graph g;
      ir::Value* a = g.add_value("a", ir::TensorType::of(dt, {4, 8}));
      ir::Value* b = g.add_value("b", ir::TensorType::of(dt, {8, 3}));
      ir::Node* n = g.add_node(op, {a, b}, {"y"}, "p");
      const std::string want = dt == DType::kFloat32 && !cpu_has_avx512() ? "gemm" : "";
      EXPECT_EQ(kernels::choose_variant(*n, kernels::KernelConfig::for_node(*n)), want) << op;
    }
}

TEST(NnMatMul, UnknownVariantIsRefused) {
  kernels::KernelConfig config;
  config.variant = "sgemm";
  EXPECT_THROW(run_op("MatMul", {make<float>({2, 2}, {1, 2, 3, 4}), make<float>({2, 2}, {1, 0, 0, 1})}, {}, 1, "",
                      config),
               Error);
}

}  // namespace
}  // namespace gec
