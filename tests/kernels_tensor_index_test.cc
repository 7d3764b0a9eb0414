// Kernel + infer tests of the indexing ops: Slice, Gather, GatherElements,
// GatherND, ScatterElements, ScatterND. Expected values are from the ONNX
// operator docs' examples or worked out by hand.
#include <limits>

#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor arange_i64(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return make<int64_t>({n}, v);
}

// ---- Slice ----------------------------------------------------------------------

TEST(TensorSlice, OnnxExamples) {
  Tensor x = make<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto a = run_op("Slice", {x, i64s({1, 0}), i64s({2, 3}), i64s({0, 1}), i64s({1, 2})});
  EXPECT_EQ(a[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{5, 7}));
  auto b = run_op("Slice", {x, i64s({0, 1}), i64s({-1, 1000})});
  EXPECT_EQ(b[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{2, 3, 4}));
}

TEST(TensorSlice, NegativeStepsAndClamping) {
  Tensor x = arange_i64(10);
  auto rev = run_op("Slice", {x, i64s({-1}), i64s({kMin}), i64s({0}), i64s({-1})});
  EXPECT_EQ(values<int64_t>(rev[0]), (std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  auto s3 = run_op("Slice", {x, i64s({8}), i64s({1}), i64s({0}), i64s({-3})});
  EXPECT_EQ(values<int64_t>(s3[0]), (std::vector<int64_t>{8, 5, 2}));
  // start past the end with a negative step clamps to dim-1; end clamps to -1.
  auto c = run_op("Slice", {arange_i64(5), i64s({100}), i64s({-100}), i64s({0}), i64s({-2})});
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{4, 2, 0}));
  auto m = run_op("Slice", {arange_i64(5), i64s({2}), i64s({kMax})});
  EXPECT_EQ(values<int64_t>(m[0]), (std::vector<int64_t>{2, 3, 4}));
  auto huge = run_op("Slice", {arange_i64(5), i64s({1}), i64s({kMax}), i64s({0}), i64s({kMax})});
  EXPECT_EQ(values<int64_t>(huge[0]), (std::vector<int64_t>{1}));
  auto e = run_op("Slice", {arange_i64(5), i64s({3}), i64s({1})});
  EXPECT_EQ(e[0].shape(), Shape{0});
}

TEST(TensorSlice, NegativeAxisInt32ParamsAndStrings) {
  Tensor x = iota_f({2, 3, 2});
  auto a = run_op("Slice", {x, make<int32_t>({1}, {1}), make<int32_t>({1}, {3}), make<int32_t>({1}, {-2})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
  auto s = run_op("Slice", {make_str({4}, {"a", "b", "c", "d"}), i64s({-1}), i64s({0}), Tensor(), i64s({-2})});
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"d", "b"}));
}

TEST(TensorSlice, LargeInnerSliceMatchesByHand) {
  // [4, 100, 96] keep rows 10..89 of axis 1 and reverse axis 2.
  Tensor x = iota_f({4, 100, 96});
  auto a = run_op("Slice", {x, i64s({10, -1}), i64s({90, kMin}), i64s({1, 2}), i64s({1, -1})});
  EXPECT_EQ(a[0].shape(), (Shape{4, 80, 96}));
  auto v = values<float>(a[0]);
  EXPECT_EQ(v[0], 10 * 96 + 95.f);
  EXPECT_EQ(v[(3 * 80 + 79) * 96 + 0], (3 * 100 + 89) * 96 + 95.f);
  EXPECT_EQ(v[(2 * 80 + 5) * 96 + 90], (2 * 100 + 15) * 96 + 5.f);
}

TEST(TensorSlice, Errors) {
  EXPECT_EQ(error_code_of("Slice", {arange_i64(5), i64s({0}), i64s({1}), i64s({0}), i64s({0})}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Slice", {arange_i64(5), i64s({0, 0}), i64s({1, 1}), i64s({0, 0})}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Slice", {arange_i64(5), i64s({0}), i64s({1}), i64s({1})}), ErrorCode::kInvalidModel);
}

// ---- Gather ---------------------------------------------------------------------

TEST(TensorGather, OnnxExamplesAxis0And1) {
  auto a = run_op("Gather", {make<float>({3, 2}, {1, 2, 3, 4, 5, 6}), make<int64_t>({2, 2}, {0, 1, 1, 2})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 2, 3, 4, 3, 4, 5, 6}));
  auto b = run_op("Gather", {make<float>({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}),
                             make<int64_t>({1, 2}, {0, 2})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(b[0].shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
}

TEST(TensorGather, NegativeIndicesScalarIndexInt32AndStrings) {
  Tensor x = make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto a = run_op("Gather", {x, make<int64_t>({1}, {-1})});
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{5, 6}));
  auto s = run_op("Gather", {x, make<int64_t>({}, {1})});
  EXPECT_EQ(s[0].shape(), Shape{2});
  EXPECT_EQ(values<float>(s[0]), (std::vector<float>{3, 4}));
  auto c = run_op("Gather", {x, make<int32_t>({2}, {1, -2})}, {Attribute::Int("axis", -1)});
  EXPECT_EQ(c[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{2, 1, 4, 3, 6, 5}));
  auto t = run_op("Gather", {make_str({3}, {"a", "b", "c"}), make<int64_t>({3}, {2, 2, 0})});
  EXPECT_EQ(strs(t[0]), (std::vector<std::string>{"c", "c", "a"}));
  auto e = run_op("Gather", {x, make<int64_t>({0}, {})});
  EXPECT_EQ(e[0].shape(), (Shape{0, 2}));
}

TEST(TensorGather, OutOfRangeIsInvalidArgument) {
  EXPECT_EQ(error_code_of("Gather", {iota_f({3}), make<int64_t>({1}, {3})}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of("Gather", {iota_f({3}), make<int64_t>({1}, {-4})}), ErrorCode::kInvalidArgument);
}

TEST(TensorGather, LargeEmbeddingLookup) {
  Tensor table = iota_f({1000, 64});
  std::vector<int64_t> ids(600);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 37) % 1000);
  auto a = run_op("Gather", {table, make<int64_t>({2, 300}, ids)});
  auto v = values<float>(a[0]);
  ASSERT_EQ(a[0].shape(), (Shape{2, 300, 64}));
  for (size_t i : {0u, 1u, 299u, 599u}) EXPECT_EQ(v[i * 64 + 7], ids[i] * 64 + 7.f) << i;
}

TEST(TensorGatherElements, OnnxExamples) {
  auto a = run_op("GatherElements", {make<float>({2, 2}, {1, 2, 3, 4}), make<int64_t>({2, 2}, {0, 0, 1, 0})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 1, 4, 3}));
  Tensor x = make<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto b = run_op("GatherElements", {x, make<int64_t>({2, 3}, {1, 2, 0, 2, 0, 0})});
  EXPECT_EQ(b[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{4, 8, 3, 7, 2, 3}));
  auto c = run_op("GatherElements", {x, make<int32_t>({2, 3}, {-1, -2, 0, -2, 0, 0})});
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{7, 5, 3, 4, 2, 3}));
  EXPECT_EQ(error_code_of("GatherElements", {x, make<int64_t>({1, 1}, {3})}), ErrorCode::kInvalidArgument);
}

TEST(TensorGatherND, OnnxExamples) {
  Tensor x2 = make<int64_t>({2, 2}, {0, 1, 2, 3});
  auto a = run_op("GatherND", {x2, make<int64_t>({2, 2}, {0, 0, 1, 1})});
  EXPECT_EQ(a[0].shape(), Shape{2});
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{0, 3}));
  auto b = run_op("GatherND", {x2, make<int64_t>({2, 1}, {1, 0})});
  EXPECT_EQ(b[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(b[0]), (std::vector<int64_t>{2, 3, 0, 1}));
  Tensor x3 = make<int64_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto c = run_op("GatherND", {x3, make<int64_t>({2, 2}, {0, 1, 1, 0})});
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  auto d = run_op("GatherND", {x3, make<int64_t>({2, 1, 2}, {0, 1, 1, 0})});
  EXPECT_EQ(d[0].shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values<int64_t>(d[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  auto e = run_op("GatherND", {x3, make<int64_t>({2, 1}, {1, 0})}, {Attribute::Int("batch_dims", 1)});
  EXPECT_EQ(e[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(e[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  auto f = run_op("GatherND", {x2, make<int64_t>({1, 2}, {-1, -2})});
  EXPECT_EQ(values<int64_t>(f[0]), std::vector<int64_t>{2});
}

// ---- Scatter --------------------------------------------------------------------

TEST(TensorScatterElements, OnnxExamples) {
  auto a = run_op("ScatterElements", {make<float>({3, 3}, std::vector<float>(9, 0.f)),
                                      make<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1}),
                                      make<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})});
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
  Tensor x = make<float>({1, 5}, {1, 2, 3, 4, 5});
  auto b = run_op("ScatterElements", {x, make<int64_t>({1, 2}, {1, 3}), make<float>({1, 2}, {1.1f, 2.1f})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{1.0f, 1.1f, 3.0f, 2.1f, 5.0f}));
  auto c = run_op("ScatterElements", {x, make<int64_t>({1, 2}, {1, -3}), make<float>({1, 2}, {1.1f, 2.1f})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(values<float>(c[0]), (std::vector<float>{1.0f, 1.1f, 2.1f, 4.0f, 5.0f}));
  auto d = run_op("ScatterElements", {x, make<int64_t>({1, 2}, {1, 1}), make<float>({1, 2}, {1.1f, 2.1f})},
                  {Attribute::Int("axis", 1), Attribute::String("reduction", "add")});
  expect_close(values<float>(d[0]), {1.0f, 5.2f, 3.0f, 4.0f, 5.0f});
  auto m = run_op("ScatterElements", {x, make<int64_t>({1, 2}, {1, 1}), make<float>({1, 2}, {1.1f, 2.1f})},
                  {Attribute::Int("axis", 1), Attribute::String("reduction", "max")});
  expect_close(values<float>(m[0]), {1.0f, 2.1f, 3.0f, 4.0f, 5.0f});
  EXPECT_EQ(error_code_of("ScatterElements", {x, make<int64_t>({1, 1}, {5}), make<float>({1, 1}, {0})},
                          {Attribute::Int("axis", 1)}),
            ErrorCode::kInvalidArgument);
}

TEST(TensorScatterND, OnnxExampleSlicesAndReduction) {
  auto a = run_op("ScatterND", {make<int64_t>({8}, {1, 2, 3, 4, 5, 6, 7, 8}), make<int64_t>({4, 1}, {4, 3, 1, 7}),
                                make<int64_t>({4}, {9, 10, 11, 12})});
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{1, 11, 3, 10, 9, 6, 7, 12}));
  auto b = run_op("ScatterND", {make<float>({2, 2}, {1, 2, 3, 4}), make<int64_t>({1, 1}, {-1}),
                                make<float>({1, 2}, {9, 8})});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{1, 2, 9, 8}));
  auto c = run_op("ScatterND", {make<int64_t>({3}, {1, 2, 3}), make<int64_t>({2, 1}, {0, 0}), make<int64_t>({2}, {2, 3})},
                  {Attribute::String("reduction", "mul")});
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{6, 2, 3}));
  auto s = run_op("ScatterND", {make_str({2}, {"a", "b"}), make<int64_t>({1, 1}, {1}), make_str({1}, {"z"})});
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(error_code_of("ScatterND", {iota_f({2, 2}), make<int64_t>({1, 1}, {0}), iota_f({2})}),
            ErrorCode::kInvalidModel);
}

}  // namespace
}  // namespace gec
