// Kernel + infer tests of the shape-preserving data-movement ops: Reshape,
// Flatten, Squeeze, Unsqueeze, Concat, Split, Transpose, Expand, Tile, Pad.
// Expected values are worked out by hand or taken from the ONNX operator
// docs; the larger Transpose cases compare against a naive index loop
// written here.
#include "kernels_tensor_util.h"
#include "ops/op_schema.h"

namespace gec {
namespace {
using namespace gec::testing;

// ---- Reshape --------------------------------------------------------------------

TEST(TensorReshape, MinusOneAndZeroCopy) {
  auto a = run_op("Reshape", {iota_f({2, 3, 4}), i64s({0, -1})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(values<float>(a[0])[13], 13.f);
  auto b = run_op("Reshape", {iota_f({2, 3}), i64s({3, -1})});
  EXPECT_EQ(b[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(TensorReshape, ZeroSizeWithAndWithoutAllowzero) {
  // allowzero=0: the 0s copy input dims 0 and 1 -> [0, 3, 3].
  auto a = run_op("Reshape", {make<float>({0, 3}, {}), i64s({0, 0, 3})});
  EXPECT_EQ(a[0].shape(), (Shape{0, 3, 3}));
  // allowzero=1: 0 means a real 0.
  auto b = run_op("Reshape", {make<float>({0, 3}, {}), i64s({0, 0, 3})}, {Attribute::Int("allowzero", 1)});
  EXPECT_EQ(b[0].shape(), (Shape{0, 0, 3}));
  auto c = run_op("Reshape", {make<float>({0, 3}, {}), i64s({3, 0})}, {Attribute::Int("allowzero", 1)});
  EXPECT_EQ(c[0].shape(), (Shape{3, 0}));
  // -1 next to a copied dim of the zero-size input: [-1, 0] -> [0, 3].
  auto d = run_op("Reshape", {make<float>({0, 3}, {}), i64s({-1, 0})});
  EXPECT_EQ(d[0].shape(), (Shape{0, 3}));
}

TEST(TensorReshape, ScalarAndStrings) {
  auto a = run_op("Reshape", {make<float>({1, 1}, {7}), i64s({})});
  EXPECT_EQ(a[0].shape(), Shape{});
  EXPECT_EQ(values<float>(a[0]), std::vector<float>{7});
  auto s = run_op("Reshape", {make_str({2, 2}, {"a", "b", "c", "d"}), i64s({4})});
  EXPECT_EQ(s[0].shape(), Shape{4});
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(TensorReshape, BadShapesAreModelErrors) {
  EXPECT_EQ(error_code_of("Reshape", {iota_f({2, 3}), i64s({4, 2})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Reshape", {iota_f({2, 3}), i64s({-1, -1})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Reshape", {iota_f({2, 3}), i64s({-1, 0})}, {Attribute::Int("allowzero", 1)}),
            ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Reshape", {iota_f({2, 3}), i64s({0, 0, 0})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Reshape", {iota_f({2, 3}), i64s({-2, 3})}), ErrorCode::kInvalidModel);
}

TEST(TensorReshape, UnknownShapeValueNeedsValueAtCompileTime) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType::of(DType::kFloat32, {2, 3}));
  ir::Value* s = g.add_value("s", ir::TensorType::of(DType::kInt64, {2}));
  ir::Node* n = g.add_node("Reshape", {x, s}, {"y"});
  TensorView xv{nullptr, DType::kFloat32, {2, 3}}, sv{nullptr, DType::kInt64, {2}};
  ops::InferContext ctx;
  ctx.node = n;
  ctx.inputs = {&xv, &sv};
  EXPECT_THROW(ops::find_schema("", "Reshape")->infer(ctx), ops::NeedsValue);
}

// ---- Flatten / Squeeze / Unsqueeze ---------------------------------------------

TEST(TensorFlatten, Axes) {
  EXPECT_EQ(run_op("Flatten", {iota_f({2, 3, 4})})[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(run_op("Flatten", {iota_f({2, 3, 4})}, {Attribute::Int("axis", -1)})[0].shape(), (Shape{6, 4}));
  EXPECT_EQ(run_op("Flatten", {iota_f({2, 3, 4})}, {Attribute::Int("axis", 0)})[0].shape(), (Shape{1, 24}));
  EXPECT_EQ(run_op("Flatten", {iota_f({2, 3, 4})}, {Attribute::Int("axis", 3)})[0].shape(), (Shape{24, 1}));
  EXPECT_EQ(error_code_of("Flatten", {iota_f({2, 3})}, {Attribute::Int("axis", 3)}), ErrorCode::kInvalidModel);
}

TEST(TensorSqueeze, AbsentAxesRemoveAllOnes) {
  auto a = run_op("Squeeze", {iota_f({1, 3, 1, 2})});
  EXPECT_EQ(a[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(run_op("Squeeze", {make<float>({1, 1}, {4})})[0].shape(), Shape{});
}

TEST(TensorSqueeze, NegativeAxesAndErrors) {
  EXPECT_EQ(run_op("Squeeze", {iota_f({1, 3, 1, 2}), i64s({-2})})[0].shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run_op("Squeeze", {iota_f({1, 3, 1, 2}), i64s({0, 2})})[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(error_code_of("Squeeze", {iota_f({1, 3}), i64s({1})}), ErrorCode::kInvalidModel);
  EXPECT_EQ(error_code_of("Squeeze", {iota_f({1, 3}), i64s({2})}), ErrorCode::kInvalidModel);
}

TEST(TensorUnsqueeze, NegativeAxesAndScalar) {
  EXPECT_EQ(run_op("Unsqueeze", {iota_f({3, 2}), i64s({0, -1})})[0].shape(), (Shape{1, 3, 2, 1}));
  EXPECT_EQ(run_op("Unsqueeze", {iota_f({3, 2}), i64s({1})})[0].shape(), (Shape{3, 1, 2}));
  auto s = run_op("Unsqueeze", {make<int64_t>({}, {5}), i64s({0})});
  EXPECT_EQ(s[0].shape(), Shape{1});
  EXPECT_EQ(values<int64_t>(s[0]), std::vector<int64_t>{5});
  EXPECT_EQ(error_code_of("Unsqueeze", {iota_f({3}), i64s({0, 0})}), ErrorCode::kInvalidModel);
}

// ---- Concat / Split -------------------------------------------------------------

TEST(TensorConcat, NegativeAxis) {
  auto a = run_op("Concat", {make<float>({2, 2}, {1, 2, 3, 4}), make<float>({2, 1}, {5, 6})},
                  {Attribute::Int("axis", -1)});
  EXPECT_EQ(a[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 2, 5, 3, 4, 6}));
}

TEST(TensorConcat, ThreeInputsMiddleAxisAndEmptyInput) {
  auto a = run_op("Concat",
                  {make<int64_t>({2, 1, 2}, {1, 2, 3, 4}), make<int64_t>({2, 0, 2}, {}),
                   make<int64_t>({2, 2, 2}, {5, 6, 7, 8, 9, 10, 11, 12})},
                  {Attribute::Int("axis", 1)});
  EXPECT_EQ(a[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<int64_t>(a[0]), (std::vector<int64_t>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12}));
  auto e = run_op("Concat", {make<float>({0, 2}, {}), make<float>({0, 2}, {})}, {Attribute::Int("axis", 0)});
  EXPECT_EQ(e[0].shape(), (Shape{0, 2}));
}

TEST(TensorConcat, StringsAndShapeMismatch) {
  auto a = run_op("Concat", {make_str({1, 2}, {"a", "b"}), make_str({2, 2}, {"c", "d", "e", "f"})},
                  {Attribute::Int("axis", 0)});
  EXPECT_EQ(strs(a[0]), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(error_code_of("Concat", {iota_f({2, 2}), iota_f({2, 3})}, {Attribute::Int("axis", 0)}),
            ErrorCode::kInvalidModel);
}

TEST(TensorSplit, EqualUnevenAndExplicit) {
  auto a = run_op("Split", {iota_f({6})}, {}, 3);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(values<float>(a[2]), (std::vector<float>{4, 5}));
  auto b = run_op("Split", {iota_f({2, 3}), i64s({1, 2})}, {Attribute::Int("axis", -1)}, 2);
  EXPECT_EQ(b[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(b[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(b[1]), (std::vector<float>{1, 2, 4, 5}));
  auto c = run_op("Split", {iota_f({5})}, {}, 2);  // Split-18 rule: ceil, last smaller
  EXPECT_EQ(c[0].shape(), Shape{3});
  EXPECT_EQ(values<float>(c[1]), (std::vector<float>{3, 4}));
  auto z = run_op("Split", {iota_f({3}), i64s({0, 3})}, {}, 2);
  EXPECT_EQ(z[0].shape(), Shape{0});
  auto w = run_op("Split", {iota_f({4}), i64s({})}, {}, 2);  // empty split = absent
  EXPECT_EQ(values<float>(w[1]), (std::vector<float>{2, 3}));
  EXPECT_EQ(error_code_of("Split", {iota_f({3}), i64s({1, 1})}, {}, 2), ErrorCode::kInvalidModel);
}

// ---- Transpose ------------------------------------------------------------------

/// Naive reference: out[i] = in[perm-mapped index].
std::vector<float> ref_transpose(const Tensor& in, const std::vector<int64_t>& perm) {
  const Shape& s = in.shape();
  Shape os(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) os[i] = s[perm[i]];
  std::vector<int64_t> ist(s.size(), 1);
  for (size_t i = s.size() - 1; i-- > 0;) ist[i] = ist[i + 1] * s[i + 1];
  std::vector<float> out(static_cast<size_t>(in.numel()));
  for (int64_t o = 0; o < in.numel(); ++o) {
    int64_t t = o, src = 0;
    for (size_t k = os.size(); k-- > 0;) {
      src += (t % os[k]) * ist[perm[k]];
      t /= os[k];
    }
    out[o] = in.as<float>()[src];
  }
  return out;
}

TEST(TensorTranspose, DefaultReversesDims) {
  auto a = run_op("Transpose", {make<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(a[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorTranspose, CommonModelPermsMatchReference) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 5, 3, 4}, {0, 2, 1, 3}},    {{2, 5, 6, 7}, {0, 2, 3, 1}}, {{2, 6, 7, 5}, {0, 3, 1, 2}},
      {{1, 64, 32, 33}, {0, 2, 3, 1}}, {{3, 70, 65}, {0, 2, 1}},     {{67, 129}, {1, 0}},
      {{2, 3, 4, 5}, {3, 1, 0, 2}},    {{1, 128, 12, 64}, {0, 2, 1, 3}}, {{2, 3, 4, 5}, {-1, 0, 1, 2}},
      // 8 x 8 register blocks with edges on both sides (oww_melspectrogram's
      // spectrogram, Whisper's frames), and a block-aligned one.
      {{1, 1, 257, 97}, {0, 1, 3, 2}}, {{1, 384, 150}, {0, 2, 1}},  {{16, 24}, {1, 0}}};
  for (const auto& [shape, perm] : cases) {
    Tensor in = iota_f(shape);
    auto out = run_op("Transpose", {in}, {Attribute::Ints("perm", perm)});
    std::vector<int64_t> p = perm;
    for (auto& v : p) v = v < 0 ? v + static_cast<int64_t>(shape.size()) : v;
    Shape os;
    for (int64_t v : p) os.push_back(shape[v]);
    EXPECT_EQ(out[0].shape(), os);
    EXPECT_EQ(values<float>(out[0]), ref_transpose(in, p)) << shape_str(shape) << " perm " << shape_str(perm);
  }
}

TEST(TensorTranspose, OtherDtypesAndEdges) {
  auto a = run_op("Transpose", {make<int8_t>({2, 2}, {1, 2, 3, 4})}, {Attribute::Ints("perm", {1, 0})});
  EXPECT_EQ(values<int8_t>(a[0]), (std::vector<int8_t>{1, 3, 2, 4}));
  auto s = run_op("Transpose", {make_str({1, 3}, {"x", "y", "z"})});
  EXPECT_EQ(s[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(run_op("Transpose", {make<float>({0, 3}, {})})[0].shape(), (Shape{3, 0}));
  EXPECT_EQ(values<float>(run_op("Transpose", {make<float>({}, {2.5f})})[0]), std::vector<float>{2.5f});
  EXPECT_EQ(error_code_of("Transpose", {iota_f({2, 3})}, {Attribute::Ints("perm", {0, 0})}),
            ErrorCode::kInvalidModel);
}

// ---- Expand / Tile --------------------------------------------------------------

TEST(TensorExpand, Bidirectional) {
  // [2,1,4] with shape [3,1] -> [2,3,4]: the input's dim 1 broadcasts to 3,
  // the target's trailing 1 takes the input's 4.
  Tensor in = iota_f({2, 1, 4});
  auto a = run_op("Expand", {in, i64s({3, 1})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 3, 4}));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back(static_cast<float>(i * 4 + k));
  EXPECT_EQ(values<float>(a[0]), want);
}

TEST(TensorExpand, SmallerTargetScalarAndColumn) {
  auto a = run_op("Expand", {iota_f({3, 4}), i64s({4})});
  EXPECT_EQ(a[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(values<float>(a[0])[11], 11.f);
  auto b = run_op("Expand", {make<float>({}, {7}), i64s({2, 2})});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{7, 7, 7, 7}));
  auto c = run_op("Expand", {make<int64_t>({3, 1}, {1, 2, 3}), i64s({2, 1, 2})});
  EXPECT_EQ(c[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  auto s = run_op("Expand", {make_str({1}, {"q"}), i64s({3})});
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"q", "q", "q"}));
  EXPECT_EQ(run_op("Expand", {iota_f({1, 3}), i64s({0, 3})})[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(error_code_of("Expand", {iota_f({2, 3}), i64s({4})}), ErrorCode::kInvalidModel);
}

TEST(TensorExpand, LargeAttentionMaskUsesThreads) {
  Tensor in = iota_f({2, 1, 1, 128});
  auto a = run_op("Expand", {in, i64s({2, 4, 128, 128})});
  auto v = values<float>(a[0]);
  ASSERT_EQ(v.size(), 2u * 4 * 128 * 128);
  EXPECT_EQ(v[(1 * 4 + 3) * 128 * 128 + 77 * 128 + 5], 128.f + 5);
  EXPECT_EQ(v[5 * 128 + 127], 127.f);
}

TEST(TensorTile, Repeats) {
  auto a = run_op("Tile", {make<float>({2, 2}, {1, 2, 3, 4}), i64s({1, 2})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  auto b = run_op("Tile", {make<float>({2, 2}, {1, 2, 3, 4}), i64s({2, 1})});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
  auto c = run_op("Tile", {make<float>({2}, {1, 2}), i64s({0})});
  EXPECT_EQ(c[0].shape(), Shape{0});
  EXPECT_EQ(error_code_of("Tile", {iota_f({2}), i64s({1, 1})}), ErrorCode::kInvalidModel);
}

// ---- Pad ------------------------------------------------------------------------

TEST(TensorPad, ConstantWithValue) {
  auto a = run_op("Pad", {make<float>({2, 2}, {1, 2, 3, 4}), i64s({1, 0, 0, 1}), make<float>({}, {9})});
  EXPECT_EQ(a[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{9, 9, 9, 1, 2, 9, 3, 4, 9}));
}

TEST(TensorPad, ReflectAndEdgeOnnxExamples) {
  Tensor x = make<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  auto r = run_op("Pad", {x, i64s({0, 2, 0, 0})}, {Attribute::String("mode", "reflect")});
  EXPECT_EQ(r[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(values<float>(r[0]),
            (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  auto e = run_op("Pad", {x, i64s({0, 2, 0, 0})}, {Attribute::String("mode", "edge")});
  EXPECT_EQ(values<float>(e[0]),
            (std::vector<float>{1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}));
}

TEST(TensorPad, OneDimReflectEdgeAndCrop) {
  Tensor x = make<int64_t>({3}, {1, 2, 3});
  auto r = run_op("Pad", {x, i64s({2, 2})}, {Attribute::String("mode", "reflect")});
  EXPECT_EQ(values<int64_t>(r[0]), (std::vector<int64_t>{3, 2, 1, 2, 3, 2, 1}));
  auto e = run_op("Pad", {x, i64s({2, 1})}, {Attribute::String("mode", "edge")});
  EXPECT_EQ(values<int64_t>(e[0]), (std::vector<int64_t>{1, 1, 1, 2, 3, 3}));
  auto c = run_op("Pad", {make<int64_t>({4}, {1, 2, 3, 4}), i64s({-1, 1})});
  EXPECT_EQ(values<int64_t>(c[0]), (std::vector<int64_t>{2, 3, 4, 0}));
}

TEST(TensorPad, AxesInputAndOuterAxisReflect) {
  auto a = run_op("Pad", {make<float>({2, 2}, {1, 2, 3, 4}), i64s({1, 1}), Tensor(), i64s({-1})});
  EXPECT_EQ(a[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(a[0]), (std::vector<float>{0, 1, 2, 0, 0, 3, 4, 0}));
  // reflect on the outer axis: rows 1,0,1,2,1.
  auto b = run_op("Pad", {make<float>({3, 1}, {1, 2, 3}), i64s({1, 0, 1, 0})}, {Attribute::String("mode", "reflect")});
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{2, 1, 2, 3, 2}));
  EXPECT_EQ(error_code_of("Pad", {make<float>({0}, {}), i64s({1, 1})}, {Attribute::String("mode", "edge")}),
            ErrorCode::kInvalidModel);
  auto z = run_op("Pad", {make<float>({0, 2}, {}), i64s({1, 0, 0, 0})});
  EXPECT_EQ(z[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values<float>(z[0]), (std::vector<float>{0, 0}));
}

}  // namespace
}  // namespace gec
