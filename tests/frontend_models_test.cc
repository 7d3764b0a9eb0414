// ONNX frontend on the real models in ../shared/models (read-only): each
// imports, verifies, and has the node count the manifest lists. Fails
// (saying so) when the shared folder is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/onnx/importer.h"
#include "shared_models_util.h"

namespace gec::frontend {
namespace {

const std::string& kModels = testing::kSharedModels;

TEST(FrontendModels, AllSharedModelsImport) {
  nlohmann::json manifest;
  ASSERT_NO_FATAL_FAILURE(testing::read_shared_manifest(&manifest));
  size_t imported = 0;
  for (const auto& m : manifest["models"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    // With the support check on: every op of these models has a schema and a kernel.
    ImportResult r = import_onnx_file(kModels + "/" + name + "/model.onnx");
    ASSERT_TRUE(r.graph);
    EXPECT_NO_THROW(r.graph->verify());
    EXPECT_EQ(r.onnx_nodes, m["nodes_total_incl_subgraphs"].get<size_t>());
    EXPECT_EQ(r.opset, m["opset_import"]["ai.onnx"].get<int64_t>());
    EXPECT_EQ(r.graph->inputs().size(), m["inputs"].size());
    EXPECT_EQ(r.graph->outputs().size(), m["outputs"].size());
    for (size_t i = 0; i < r.graph->inputs().size(); ++i)
      EXPECT_EQ(r.graph->inputs()[i]->name(), m["inputs"][i]["name"].get<std::string>());
    // Canonical forms only: no Constant, Dropout or Upsample nodes anywhere.
    ir::for_each_graph(*r.graph, [&](ir::Graph& g) {
      for (const auto& n : g.nodes()) {
        EXPECT_NE(n->op_type, "Constant") << n->name;
        EXPECT_NE(n->op_type, "Dropout") << n->name;
        EXPECT_NE(n->op_type, "Upsample") << n->name;
        if (n->op_type == "Squeeze" || n->op_type == "Unsqueeze" || n->op_type.rfind("Reduce", 0) == 0) {
          EXPECT_FALSE(n->has_attr("axes")) << n->name;
        }
      }
    });
    ++imported;
  }
  EXPECT_GE(imported, 10u);
}

}  // namespace
}  // namespace gec::frontend
