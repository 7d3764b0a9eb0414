// The memory plan on the real models in ../shared/models (read-only), compiled
// at -O3 with the static input shapes of test_data_set_0: the plan is within
// 5% of its lower bound, the outputs match the reference, and running with
// caller-owned output buffers (zero copy where possible) gives the same
// outputs. Fails (saying so) when the shared folder is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "shared_models_util.h"

namespace gec {
namespace {

namespace fs = std::filesystem;
const std::string& kModels = testing::kSharedModels;

std::vector<Tensor> read_set(const std::string& dir, const std::string& kind, std::vector<std::string>* names) {
  std::vector<Tensor> r;
  for (int k = 0;; ++k) {
    const std::string p = dir + "/" + kind + "_" + std::to_string(k) + ".pb";
    if (!fs::exists(p)) break;
    std::string name;
    r.push_back(frontend::read_tensor_proto_file(p, &name));
    if (names) names->push_back(name);
  }
  return r;
}

// |a - b| <= atol + rtol * |b| for floats (gec test's default tolerances),
// exact for other dtypes.
void expect_match(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (want.dtype() == DType::kFloat32) {
    int bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const float a = got.as<float>()[i], b = want.as<float>()[i];
      if (!(std::fabs(a - b) <= 1e-4f + 1e-3f * std::fabs(b)) && !(std::isnan(a) && std::isnan(b))) ++bad;
    }
    EXPECT_EQ(bad, 0) << what;
  } else if (want.dtype() != DType::kString) {
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.bytes()), 0) << what;
  }
}

TEST(MemoryModels, PlansAreTightAndOutputsRightWithCallerBuffers) {
  nlohmann::json manifest;
  ASSERT_NO_FATAL_FAILURE(testing::read_shared_manifest(&manifest));
  for (const auto& m : manifest["models"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    const std::string dir = kModels + "/" + name;
    std::vector<std::string> in_names;
    std::vector<Tensor> inputs = read_set(dir + "/test_data_set_0", "input", &in_names);
    std::vector<Tensor> expected = read_set(dir + "/test_data_set_0", "output", nullptr);
    CompileOptions co;
    co.opt_level = 3;
    for (size_t i = 0; i < inputs.size(); ++i) co.input_shapes[in_names[i]] = inputs[i].shape();
    CompiledModel cm = compile_onnx_file(dir + "/model.onnx", co);
    const nlohmann::json mem = nlohmann::json::parse(cm.report_json)["memory"];
    EXPECT_LE(mem["arena_bytes"].get<double>(), 1.05 * mem["lower_bound_bytes"].get<double>());
    EXPECT_LE(mem["arena_bytes"].get<int64_t>(), mem["no_reuse_bytes"].get<int64_t>());

    auto s = Session::load_from_bytes(cm.gom);
    std::vector<TensorView> in;
    for (auto& t : inputs) in.push_back(t.view());
    std::vector<Tensor> got = s->run(in);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) expect_match(got[i], expected[i], "output " + std::to_string(i));

    std::vector<Tensor> mine;
    std::vector<TensorView> views;
    for (auto& t : got) mine.emplace_back(t.dtype(), t.shape());
    for (auto& t : mine) views.push_back(t.view());
    s->run(in, views);
    for (size_t i = 0; i < got.size(); ++i) expect_match(mine[i], expected[i], "caller buffer " + std::to_string(i));
    // And once more into the arena: unbinding restored the plan.
    std::vector<Tensor> again = s->run(in);
    for (size_t i = 0; i < got.size(); ++i) expect_match(again[i], expected[i], "rerun " + std::to_string(i));
  }
}

}  // namespace
}  // namespace gec
