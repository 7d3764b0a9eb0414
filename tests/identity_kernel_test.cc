// Identity through evaluate_node: shows the run_op pattern kernel tests use.
#include "test_util.h"

namespace gec {
namespace {
using namespace gec::testing;

TEST(IdentityKernel, CopiesValuesAndShape) {
  auto out = run_op("Identity", {make<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(IdentityKernel, EmptyTensor) {
  auto out = run_op("Identity", {make<float>({0, 3}, {})});
  EXPECT_EQ(out[0].shape(), (Shape{0, 3}));
}

TEST(KernelRegistry, UnknownOpIsUnsupportedAndNamesTheNode) {
  try {
    run_op("NoSuchOp", {make<float>({1}, {1})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos);
  }
}

}  // namespace
}  // namespace gec
