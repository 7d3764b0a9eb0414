// MatMul (numpy semantics) and Gemm kernels: hand-computed small cases.
#include "kernels_nn_util.h"

namespace gec {
namespace {
using namespace gec::testing;

const std::vector<float> k3x4 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

TEST(NnMatMul, VectorTimesMatrix) {
  auto out = run_op("MatMul", {make<float>({3}, {1, 2, 3}), make<float>({3, 4}, k3x4)});
  EXPECT_EQ(out[0].shape(), (Shape{4}));
  expect_close(values<float>(out[0]), {38, 44, 50, 56});
}

TEST(NnMatMul, VectorDotVectorIsScalar) {
  auto out = run_op("MatMul", {make<float>({3}, {1, 2, 3}), make<float>({3}, {4, 5, 6})});
  EXPECT_EQ(out[0].shape(), (Shape{}));
  expect_close(values<float>(out[0]), {32});
}

TEST(NnMatMul, MatrixTimesVector) {
  auto out = run_op("MatMul", {make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({3}, {1, 1, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  expect_close(values<float>(out[0]), {6, 15});
}

TEST(NnMatMul, BatchBroadcastBothSides) {
  // A [2,1,2,2]: A_a = (a+1) * I. B [3,2,2]: B_j = [[1,j],[0,1]].
  // out [2,3,2,2]: out[a][j] = (a+1) * B_j.
  auto out = run_op("MatMul", {make<float>({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2}),
                               make<float>({3, 2, 2}, {1, 0, 0, 1, 1, 1, 0, 1, 1, 2, 0, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 2, 2}));
  std::vector<float> e;
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 3; ++j)
      for (float v : {1.f, float(j), 0.f, 1.f}) e.push_back((a + 1) * v);
  expect_close(values<float>(out[0]), e);
}

TEST(NnMatMul, BatchedVectorRhsAndOddSizes) {
  // A [2,1,3] batches [1,2,3] and [4,5,6]; B [3] of ones -> [2,1].
  auto out = run_op("MatMul", {make<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}), make<float>({3}, {1, 1, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 1}));
  expect_close(values<float>(out[0]), {6, 15});
}

TEST(NnMatMul, EmptyInnerDimGivesZeros) {
  auto out = run_op("MatMul", {make<float>({2, 0}, {}), make<float>({0, 3}, {})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  expect_close(values<float>(out[0]), std::vector<float>(6, 0.f));
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
  auto p = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB)});
  EXPECT_EQ(p[0].shape(), (Shape{2, 2}));
  expect_close(values<float>(p[0]), {4, 5, 10, 11});
  auto ta = run_op("Gemm", {make<float>({3, 2}, kAt), make<float>({3, 2}, kB)}, {ai("transA", 1)});
  expect_close(values<float>(ta[0]), {4, 5, 10, 11});
  auto tb = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({2, 3}, kBt)}, {ai("transB", 1)});
  expect_close(values<float>(tb[0]), {4, 5, 10, 11});
  auto both = run_op("Gemm", {make<float>({3, 2}, kAt), make<float>({2, 3}, kBt)}, {ai("transA", 1), ai("transB", 1)});
  expect_close(values<float>(both[0]), {4, 5, 10, 11});
}

TEST(NnGemm, AlphaBetaRowC) {
  auto out = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2}, {10, 20})},
                    {af("alpha", 2.f), af("beta", 0.5f)});
  expect_close(values<float>(out[0]), {13, 20, 25, 32});
}

// C of one row with alpha = beta = 1 is the primitive's bias (matmul.cc):
// [N] and [1, N], with transB; a one-element C over two columns is still
// broadcast into Y first.
TEST(NnGemm, RowCAsBias) {
  auto row = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2}, {10, 20})});
  expect_close(values<float>(row[0]), {14, 25, 20, 31});
  auto row2 = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({2, 3}, kBt), make<float>({1, 2}, {10, 20})},
                     {ai("transB", 1)});
  expect_close(values<float>(row2[0]), {14, 25, 20, 31});
  auto one = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({1}, {7})});
  expect_close(values<float>(one[0]), {11, 12, 17, 18});
  // N = 1: C [1] is one row, the bias path again; A [2,3] x [1,1,1]^T = [6, 15].
  auto col = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 1}, {1, 1, 1}), make<float>({1}, {0.5f})});
  expect_close(values<float>(col[0]), {6.5f, 15.5f});
}

TEST(NnGemm, ColumnAndScalarC) {
  auto col = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2, 1}, {100, 200})});
  expect_close(values<float>(col[0]), {104, 105, 210, 211});
  auto sc = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({}, {1})});
  expect_close(values<float>(sc[0]), {5, 6, 11, 12});
  auto full = run_op("Gemm", {make<float>({2, 3}, kA), make<float>({3, 2}, kB), make<float>({2, 2}, {1, 2, 3, 4})},
                     {af("beta", 0.f)});
  expect_close(values<float>(full[0]), {4, 5, 10, 11});  // beta 0 ignores C
}

}  // namespace
}  // namespace gec
