// Per-node thread decisions (schedule::Step::threads): small nodes are
// planned on one thread, large ones on the run's threads, the choice
// survives the .gom, and outputs do not depend on it.
#include <gtest/gtest.h>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "schedule/execution_plan.h"
#include "test_util.h"

namespace gec {
namespace {

namespace ob = testing::onnx_build;

// ob::conv_relu_model(s) compiled at -O0 (Conv and Relu kept apart).
CompiledModel conv_relu(int64_t s) {
  const std::string bytes = ob::conv_relu_model(s).SerializeAsString();
  CompileOptions o;
  o.opt_level = 0;
  return compile_onnx_bytes(bytes.data(), bytes.size(), o);
}

std::vector<int32_t> plan_threads(const CompiledModel& cm) {
  model::LoadedModel m = model::read_gom_bytes(cm.gom);
  std::vector<int32_t> r;
  for (const auto& s : m.execution_plan.graphs[0].steps) r.push_back(s.threads);
  return r;
}

TEST(ScheduleThreads, SmallNodesRunOnOneThreadLargeOnesOnAll) {
  // 16 x 2 x 2 floats: 256 bytes per value, 2 x 16 x 16 x 9 x 4 = 36864 FLOPs.
  EXPECT_EQ(plan_threads(conv_relu(2)), (std::vector<int32_t>{1, 1}));
  // 16 x 64 x 64 floats: 256 KiB per value, 37.7 MFLOP for the conv.
  EXPECT_EQ(plan_threads(conv_relu(64)), (std::vector<int32_t>{0, 0}));
}

TEST(ScheduleThreads, OutputsDoNotDependOnTheDecision) {
  const CompiledModel small = conv_relu(2);
  Tensor x(DType::kFloat32, {1, 16, 2, 2});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>(i % 7) - 3.f;
  SessionOptions one, two;
  one.num_threads = 1;
  two.num_threads = 2;
  one.adapt_threads = two.adapt_threads = false;
  auto a = Session::load_from_bytes(small.gom, one)->run({x.view()});
  auto b = Session::load_from_bytes(small.gom, two)->run({x.view()});
  EXPECT_EQ(testing::values<float>(a[0]), testing::values<float>(b[0]));
}

}  // namespace
}  // namespace gec
