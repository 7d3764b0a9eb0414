// The execution plans of the real models in ../shared/models (read-only),
// compiled at -O3 with the static input shapes of test_data_set_0: no
// convolution is planned where oneDNN would run it with a reference
// (unoptimized) implementation. Each oneDNN convolution step of every graph
// (subgraphs too) is asked again, with the layouts its step records, which
// implementation oneDNN picks on this CPU (kernels::implementation_for_layout);
// steps without static shapes (chosen at run time) must be plain. Then each
// model runs on its test data with oneDNN's verbose log on, which names the
// implementation of every primitive executed, subgraphs and shapes known only
// at run included: none may be a reference one.
// Fails (saying so) when the shared folder is absent.
#include <dnnl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "kernels/kernel.h"
#include "model/reader.h"
#include "shared_models_util.h"
#include "test_util.h"

namespace gec {
namespace {

namespace fs = std::filesystem;
const std::string& kModels = testing::kSharedModels;

/// The test inputs of ../shared/models/<name>/test_data_set_0, in order.
std::vector<std::pair<std::string, Tensor>> test_inputs(const std::string& dir) {
  std::vector<std::pair<std::string, Tensor>> ins;
  for (int k = 0;; ++k) {
    const std::string p = dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb";
    if (!fs::exists(p)) break;
    std::string in_name;
    Tensor t = frontend::read_tensor_proto_file(p, &in_name);
    ins.emplace_back(in_name, std::move(t));
  }
  return ins;
}

/// `dir`'s model.onnx compiled at -O3 with the shapes of `inputs`.
CompiledModel compile_at_test_shapes(const std::string& dir, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  CompileOptions co;
  co.opt_level = 3;
  for (const auto& [in_name, t] : inputs) co.input_shapes[in_name] = t.shape();
  return compile_onnx_file(dir + "/model.onnx", co);
}


TEST(SharedPlans, NoConvolutionRunsAReferenceImplementation) {
  nlohmann::json manifest;
  ASSERT_NO_FATAL_FAILURE(testing::read_shared_manifest(&manifest));
  int checked = 0;
  for (const auto& m : manifest["models"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    const std::string dir = kModels + "/" + name;
    const CompiledModel cm = compile_at_test_shapes(dir, test_inputs(dir));
    const model::LoadedModel lm = model::read_gom_bytes(cm.gom);
    ASSERT_EQ(lm.graphs.size(), lm.execution_plan.graphs.size());
    for (size_t gi = 0; gi < lm.graphs.size(); ++gi) {
      const std::vector<ir::Node*> table = lm.graphs[gi]->node_list();  // the steps' node indices
      for (const schedule::Step& st : lm.execution_plan.graphs[gi].steps) {
        if (st.kernel.rfind("onednn.conv", 0) != 0 || st.kernel.rfind("onednn.conv_as_matmul", 0) == 0) continue;
        const ir::Node& n = *table.at(static_cast<size_t>(st.node));
        // Without static shapes (silero's If branches) the implementation is
        // chosen at run time; only a plain layout is planned there.
        if (!n.input(0)->type.is_static() || !n.output(0)->type.is_static()) {
          EXPECT_TRUE(st.input_layouts.empty() && st.output_layouts.empty()) << n.name;
          continue;
        }
        const auto first = [](const std::vector<ops::Layout>& l) { return l.empty() ? ops::Layout::kPlain : l[0]; };
        const std::string impl =
            kernels::implementation_for_layout(n, first(st.input_layouts), first(st.output_layouts));
        ++checked;
        EXPECT_FALSE(impl.empty() || impl == "unsupported") << n.name << ": " << impl;
        EXPECT_FALSE(kernels::is_reference_implementation(impl))
            << n.name << " (" << n.op_type << ") is planned " << ops::layout_name(first(st.input_layouts)) << " -> "
            << ops::layout_name(first(st.output_layouts)) << ", where oneDNN runs " << impl;
      }
    }
  }
  EXPECT_GT(checked, 100) << "the shared CNNs have well over 100 oneDNN convolutions";
}

TEST(SharedPlans, NoOneDnnPrimitiveRunsAReferenceImplementation) {
  nlohmann::json manifest;
  ASSERT_NO_FATAL_FAILURE(testing::read_shared_manifest(&manifest));
  int executed = 0;
  for (const auto& m : manifest["models"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    const std::string dir = kModels + "/" + name;
    const auto inputs = test_inputs(dir);
    const CompiledModel cm = compile_at_test_shapes(dir, inputs);
    SessionOptions so;
    so.num_threads = 2;
    so.adapt_threads = false;
    auto session = Session::load_from_bytes(cm.gom, so);
    std::vector<TensorView> views;
    for (const auto& [in_name, t] : inputs) views.push_back(t.view());
    ASSERT_EQ(dnnl_set_verbose(1), dnnl_success);
    const std::string log = testing::capture_stdout([&] { session->run(views); });
    dnnl_set_verbose(0);
    // onednn_verbose,exec,cpu,<primitive>,<implementation>,<prop>,<layouts>,...
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("onednn_verbose,exec,", 0) != 0) continue;
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
      ASSERT_GT(f.size(), 4u) << line;
      ++executed;
      EXPECT_FALSE(kernels::is_reference_implementation(f[4])) << f[3] << " ran " << f[4] << ": " << line;
    }
  }
  // (Fewer where convolutions run on our own loops: 291 without AVX-512.)
  EXPECT_GT(executed, 200) << "the shared models run a few hundred oneDNN primitives";
}

}  // namespace
}  // namespace gec
