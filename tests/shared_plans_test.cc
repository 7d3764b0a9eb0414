// The execution plans of the real models in ../shared/models (read-only),
// compiled at -O3 with the static input shapes of test_data_set_0: no
// convolution is planned where oneDNN would run it with a reference
// (unoptimized) implementation. Each oneDNN convolution step of every graph
// (subgraphs too) is asked again, with the layouts its step records, which
// implementation oneDNN picks on this CPU (kernels::implementation_for_layout);
// steps without static shapes (chosen at run time) must be plain.
// Fails (saying so) when the shared folder is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "kernels/kernel.h"
#include "model/reader.h"
#include "shared_models_util.h"

namespace gec {
namespace {

namespace fs = std::filesystem;
const std::string& kModels = testing::kSharedModels;

TEST(SharedPlans, NoConvolutionRunsAReferenceImplementation) {
  nlohmann::json manifest;
  ASSERT_NO_FATAL_FAILURE(testing::read_shared_manifest(&manifest));
  int checked = 0;
  for (const auto& m : manifest["models"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    const std::string dir = kModels + "/" + name;
    CompileOptions co;
    co.opt_level = 3;
    for (int k = 0;; ++k) {
      const std::string p = dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb";
      if (!fs::exists(p)) break;
      std::string in_name;
      const Tensor t = frontend::read_tensor_proto_file(p, &in_name);
      co.input_shapes[in_name] = t.shape();
    }
    const CompiledModel cm = compile_onnx_file(dir + "/model.onnx", co);
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

}  // namespace
}  // namespace gec
