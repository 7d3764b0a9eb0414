// Einsum-12 kernel + infer tests: explicit and implicit outputs, diagonals,
// ellipsis broadcasting, full sums. Expected values computed by hand.
#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;

Tensor m22(float a, float b, float c, float d) { return make<float>({2, 2}, {a, b, c, d}); }

std::vector<float> einsum(const std::string& eq, const std::vector<Tensor>& in, Shape* shape = nullptr) {
  auto r = run_op("Einsum", in, {Attribute::String("equation", eq)});
  if (shape) *shape = r[0].shape();
  return values<float>(r[0]);
}

TEST(Einsum, MatMulExplicitAndImplicit) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]].
  EXPECT_EQ(einsum("ij,jk->ik", {m22(1, 2, 3, 4), m22(5, 6, 7, 8)}), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(einsum("ij, jk", {m22(1, 2, 3, 4), m22(5, 6, 7, 8)}), (std::vector<float>{19, 22, 43, 50}));
  // Implicit output is alphabetical: "ba" -> output "ab" = transpose.
  EXPECT_EQ(einsum("ba", {m22(1, 2, 3, 4)}), (std::vector<float>{1, 3, 2, 4}));
}

TEST(Einsum, TransposeDiagonalTraceSum) {
  EXPECT_EQ(einsum("ij->ji", {m22(1, 2, 3, 4)}), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(einsum("ii->i", {m22(1, 2, 3, 4)}), (std::vector<float>{1, 4}));
  Shape s;
  EXPECT_EQ(einsum("ii", {m22(1, 2, 3, 4)}, &s), (std::vector<float>{5}));
  EXPECT_EQ(s, Shape{});
  EXPECT_EQ(einsum("ij->", {m22(1, 2, 3, 4)}), (std::vector<float>{10}));
  EXPECT_EQ(einsum("ij->i", {m22(1, 2, 3, 4)}), (std::vector<float>{3, 7}));
}

TEST(Einsum, InnerAndOuterProduct) {
  Tensor a = make<float>({3}, {1, 2, 3});
  Tensor b = make<float>({3}, {4, 5, 6});
  EXPECT_EQ(einsum("i,i", {a, b}), (std::vector<float>{32}));
  Shape s;
  EXPECT_EQ(einsum("i,j->ij", {make<float>({2}, {1, 2}), b}, &s), (std::vector<float>{4, 5, 6, 8, 10, 12}));
  EXPECT_EQ(s, (Shape{2, 3}));
}

TEST(Einsum, EllipsisBatchDiagonalAndBatchMatMul) {
  // Two 2x2 matrices; batch diagonal of each.
  Tensor x = make<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Shape s;
  EXPECT_EQ(einsum("...ii->...i", {x}, &s), (std::vector<float>{1, 4, 5, 8}));
  EXPECT_EQ(s, (Shape{2, 2}));
  // Batched matmul with the identity then with all-ones.
  Tensor eye = make<float>({2, 2, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
  EXPECT_EQ(einsum("bij,bjk->bik", {x, eye}), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  // Ellipsis broadcast: [2,2,2] with a [2,2] right operand.
  EXPECT_EQ(einsum("...ij,jk->...ik", {x, m22(1, 1, 1, 1)}), (std::vector<float>{3, 3, 7, 7, 11, 11, 15, 15}));
}

TEST(Einsum, IntegersAndErrors) {
  auto r = run_op("Einsum", {make<int64_t>({2}, {3, 4}), make<int64_t>({2}, {5, 6})},
                  {Attribute::String("equation", "i,i->")});
  EXPECT_EQ(values<int64_t>(r[0]), (std::vector<int64_t>{39}));
  EXPECT_EQ(error_code_of("Einsum", {m22(1, 2, 3, 4)}, {Attribute::String("equation", "ijk->i")}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Einsum", {m22(1, 2, 3, 4), make<float>({3}, {1, 2, 3})},
                          {Attribute::String("equation", "ij,j->i")}),
            ErrorCode::kInvalidModel);
}

}  // namespace
}  // namespace gec
