// Kernel + infer tests of TopK, CumSum, Unique, Compress, ReverseSequence and
// NonMaxSuppression. Expected values are worked out by hand from the ONNX
// operator text (the NMS case is the operator doc's suppress_by_IOU example,
// checked by hand below).
#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;

// ---- TopK ----------------------------------------------------------------------------

TEST(IndexTopK, LargestAlongLastAxis) {
  Tensor x = make<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto r = run_op("TopK", {x, i64s({3})}, {}, 2);
  EXPECT_EQ(r[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(values<int64_t>(r[1]), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1}));
}

TEST(IndexTopK, SmallestTiesKeepLowerIndexFirst) {
  Tensor x = make<int32_t>({4}, {3, 1, 3, 1});
  auto r = run_op("TopK", {x, i64s({3})}, {Attribute::Int("largest", 0)}, 2);
  EXPECT_EQ(values<int32_t>(r[0]), (std::vector<int32_t>{1, 1, 3}));
  EXPECT_EQ(values<int64_t>(r[1]), (std::vector<int64_t>{1, 3, 0}));
}

TEST(IndexTopK, AxisZeroAndKZero) {
  // Columns sorted independently: [5,1] [2,6] -> top-1 per column.
  Tensor x = make<double>({2, 2}, {5, 2, 1, 6});
  auto r = run_op("TopK", {x, i64s({1})}, {Attribute::Int("axis", 0)}, 2);
  EXPECT_EQ(r[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values<double>(r[0]), (std::vector<double>{5, 6}));
  EXPECT_EQ(values<int64_t>(r[1]), (std::vector<int64_t>{0, 1}));
  auto e = run_op("TopK", {x, i64s({0})}, {}, 2);
  EXPECT_EQ(e[0].shape(), (Shape{2, 0}));
  EXPECT_EQ(error_code_of("TopK", {x, i64s({3})}, {}, 2), ErrorCode::kInvalidModel);
}

// ---- CumSum --------------------------------------------------------------------------

TEST(IndexCumSum, ExclusiveAndReverse) {
  Tensor x = make<float>({5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(values<float>(run_op("CumSum", {x, i64(0)})[0]), (std::vector<float>{1, 3, 6, 10, 15}));
  EXPECT_EQ(values<float>(run_op("CumSum", {x, i64(0)}, {Attribute::Int("exclusive", 1)})[0]),
            (std::vector<float>{0, 1, 3, 6, 10}));
  EXPECT_EQ(values<float>(run_op("CumSum", {x, i64(0)}, {Attribute::Int("reverse", 1)})[0]),
            (std::vector<float>{15, 14, 12, 9, 5}));
  EXPECT_EQ(values<float>(run_op("CumSum", {x, i64(0)},
                                 {Attribute::Int("reverse", 1), Attribute::Int("exclusive", 1)})[0]),
            (std::vector<float>{14, 12, 9, 5, 0}));
}

TEST(IndexCumSum, AxesOfMatrixWithInt32Axis) {
  Tensor x = make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(values<int64_t>(run_op("CumSum", {x, make<int32_t>({}, {0})})[0]),
            (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values<int64_t>(run_op("CumSum", {x, i64(-1)})[0]), (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(run_op("CumSum", {make<float>({0, 3}, {}), i64(0)})[0].shape(), (Shape{0, 3}));
}

// ---- Unique --------------------------------------------------------------------------

TEST(IndexUnique, SortedAndUnsortedFlat) {
  Tensor x = make<float>({6}, {2, 1, 1, 3, 4, 3});
  auto s = run_op("Unique", {x}, {}, 4);
  EXPECT_EQ(values<float>(s[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(s[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(s[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(s[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = run_op("Unique", {x}, {Attribute::Int("sorted", 0)}, 4);
  EXPECT_EQ(values<float>(u[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(IndexUnique, AlongAxisComparesWholeSlices) {
  Tensor x = make<int64_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  auto r = run_op("Unique", {x}, {Attribute::Int("axis", 0)}, 4);
  EXPECT_EQ(r[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(r[0]), (std::vector<int64_t>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(r[1]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(r[2]), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(values<int64_t>(r[3]), (std::vector<int64_t>{2, 1}));
  // Columns: [1,1,2], [0,0,3], [0,0,4]; sorted lexicographically: col 1, col 2, col 0.
  auto c = run_op("Unique", {x}, {Attribute::Int("axis", -1)}, 4);
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 1, 3, 4, 2}));
  EXPECT_EQ(values<int64_t>(c[2]), (std::vector<int64_t>{2, 0, 1}));
}

TEST(IndexUnique, StringsAndEmpty) {
  auto r = run_op("Unique", {make_str({3}, {"b", "a", "b"})}, {}, 1);
  EXPECT_EQ(strs(r[0]), (std::vector<std::string>{"a", "b"}));
  auto e = run_op("Unique", {make<float>({0}, {})}, {}, 4);
  EXPECT_EQ(e[0].shape(), Shape{0});
  EXPECT_EQ(e[3].shape(), Shape{0});
}

// ---- Compress ------------------------------------------------------------------------

TEST(IndexCompress, AxesAndFlattened) {
  Tensor x = make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto a0 = run_op("Compress", {x, make<bool>({3}, {false, true, true})}, {Attribute::Int("axis", 0)});
  EXPECT_EQ(a0[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(a0[0]), (std::vector<float>{3, 4, 5, 6}));
  auto a1 = run_op("Compress", {x, make<bool>({2}, {false, true})}, {Attribute::Int("axis", -1)});
  EXPECT_EQ(a1[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(values<float>(a1[0]), (std::vector<float>{2, 4, 6}));
  // No axis: flattened; a short condition leaves the rest out.
  auto f = run_op("Compress", {x, make<bool>({5}, {false, true, false, false, true})});
  EXPECT_EQ(values<float>(f[0]), (std::vector<float>{2, 5}));
  EXPECT_EQ(error_code_of("Compress", {x, make<bool>({4}, {true, true, true, true})}, {Attribute::Int("axis", 0)}),
            ErrorCode::kInvalidModel);
}

// ---- ReverseSequence -----------------------------------------------------------------

TEST(IndexReverseSequence, TimeMajorAndBatchMajor) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  // x[t][b] = 4t + b; lens per batch 4,3,2,1.
  auto t = run_op("ReverseSequence", {make<float>({4, 4}, v), i64s({4, 3, 2, 1})},
                  {Attribute::Int("time_axis", 0), Attribute::Int("batch_axis", 1)});
  EXPECT_EQ(values<float>(t[0]), (std::vector<float>{12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}));
  // x[b][t] = 4b + t; lens 1,2,3,4.
  auto b = run_op("ReverseSequence", {make<float>({4, 4}, v), i64s({1, 2, 3, 4})},
                  {Attribute::Int("time_axis", 1), Attribute::Int("batch_axis", 0)});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
}

// ---- NonMaxSuppression ---------------------------------------------------------------

Tensor nms_boxes() {
  return make<float>({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
}

TEST(IndexNms, SuppressByIou) {
  // Score order 3, 0, 1, 2, 4, 5. Boxes 1 and 2 overlap box 0 with IoU
  // 0.9 / 1.1 > 0.5, box 4 overlaps box 3 likewise; 3, 0, 5 remain.
  Tensor scores = make<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  auto r = run_op("NonMaxSuppression",
                  {nms_boxes(), scores, i64s({3}), make<float>({1}, {0.5f}), make<float>({1}, {0.f})});
  EXPECT_EQ(r[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(values<int64_t>(r[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Score threshold 0.4 drops box 5; a limit of 1 keeps only box 3.
  auto t = run_op("NonMaxSuppression",
                  {nms_boxes(), scores, i64s({3}), make<float>({1}, {0.5f}), make<float>({1}, {0.4f})});
  EXPECT_EQ(values<int64_t>(t[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  auto one = run_op("NonMaxSuppression", {nms_boxes(), scores, i64s({1})});
  EXPECT_EQ(values<int64_t>(one[0]), (std::vector<int64_t>{0, 0, 3}));
  // max_output_boxes_per_class absent means 0 boxes.
  EXPECT_EQ(run_op("NonMaxSuppression", {nms_boxes(), scores})[0].shape(), (Shape{0, 3}));
}

TEST(IndexNms, CenterPointFormat) {
  // Two unit boxes centred 0.1 apart (IoU 0.9/1.1) and one far away.
  Tensor boxes = make<float>({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 10.5f, 1, 1});
  Tensor scores = make<float>({1, 1, 3}, {0.9f, 0.95f, 0.5f});
  auto r = run_op("NonMaxSuppression", {boxes, scores, i64s({5}), make<float>({1}, {0.5f})},
                  {Attribute::Int("center_point_box", 1)});
  EXPECT_EQ(values<int64_t>(r[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
}

}  // namespace
}  // namespace gec
