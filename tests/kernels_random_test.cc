// Random generator kernels: values cannot be compared with another engine,
// so these check dtype, shape, ranges and the degenerate distributions
// (scale 0, probability 0 or 1, one overwhelming logit) whose values are known.
#include "kernels_tensor_util.h"
#include "ops/op_schema.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(Random, SchemasAreNondeterministic) {
  for (const char* op : {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
                         "Multinomial"}) {
    const ops::OpSchema* s = ops::find_schema("", op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_FALSE(s->deterministic) << op;
  }
}

TEST(Random, UniformShapeDtypeAndRange) {
  auto r = run_op("RandomUniform", {},
                  {Attribute::Ints("shape", {3, 5}), Attribute::Float("low", 2.f), Attribute::Float("high", 3.f),
                   Attribute::Int("dtype", static_cast<int64_t>(DType::kFloat64))});
  ASSERT_EQ(r[0].dtype(), DType::kFloat64);
  EXPECT_EQ(r[0].shape(), (Shape{3, 5}));
  for (double v : values<double>(r[0])) {
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
  }
  auto like = run_op("RandomUniformLike", {make<float>({4}, {0, 0, 0, 0})});
  EXPECT_EQ(like[0].dtype(), DType::kFloat32);
  EXPECT_EQ(like[0].shape(), Shape{4});
}

TEST(Random, NormalWithZeroScaleIsTheMean) {
  auto r = run_op("RandomNormal", {},
                  {Attribute::Ints("shape", {2, 2}), Attribute::Float("mean", 1.5f), Attribute::Float("scale", 0.f),
                   Attribute::Float("seed", 7.f)});
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f}));
  auto like = run_op("RandomNormalLike", {make<double>({3}, {0, 0, 0})},
                     {Attribute::Int("dtype", static_cast<int64_t>(DType::kFloat32))});
  EXPECT_EQ(like[0].dtype(), DType::kFloat32);
  EXPECT_EQ(like[0].shape(), Shape{3});
}

TEST(Random, BernoulliCertainProbabilities) {
  auto r = run_op("Bernoulli", {make<float>({4}, {0, 1, 0, 1})});
  EXPECT_EQ(r[0].dtype(), DType::kFloat32);
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{0, 1, 0, 1}));
  auto b = run_op("Bernoulli", {make<double>({2}, {1, 0})}, {Attribute::Int("dtype", static_cast<int64_t>(DType::kBool))});
  EXPECT_EQ(values<bool>(b[0]), (std::vector<bool>{true, false}));
}

TEST(Random, MultinomialOverwhelmingLogit) {
  auto r = run_op("Multinomial", {make<float>({2, 3}, {0, 100, 0, 100, 0, 0})}, {Attribute::Int("sample_size", 4)});
  ASSERT_EQ(r[0].dtype(), DType::kInt32);
  EXPECT_EQ(r[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(values<int32_t>(r[0]), (std::vector<int32_t>{1, 1, 1, 1, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace gec
