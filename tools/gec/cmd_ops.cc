// gec ops [--domain D] [--json]: the ops this build compiles and runs, with
// their domain, for ai.onnx the opsets it imports them from, and the element
// dtypes their kernel takes for input 0 (kernels::input0_dtypes).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "frontend/onnx/canonicalize.h"
#include "frontend/onnx/importer.h"
#include "frontend/tensorflow/importer.h"
#include "kernels/kernel.h"
#include "ops/domain.h"
#include "ops/op_schema.h"
#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
/// "float32,float64,int64", or "all" when every dtype is there.
std::string dtype_list(const std::vector<DType>* dts) {
  if (!dts) return "?";
  std::string r;
  for (DType d : *dts) r += (r.empty() ? "" : ",") + std::string(dtype_name(d));
  return dts->size() >= 16 ? "all" : r;
}
}  // namespace

Command add_ops(CLI::App& root) {
  auto domain = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto tensorflow = std::make_shared<bool>(false);
  CLI::App* app = root.add_subcommand("ops", "list the supported ops: domain, op type, ONNX opsets");
  CLI::Option* dom_opt = app->add_option("--domain", *domain, "only this domain (\"\" or ai.onnx for the default one)");
  app->add_flag("--json", *json, "print a JSON array");
  app->add_flag("--tensorflow", *tensorflow, "list the TensorFlow ops the TensorFlow frontend converts instead");
  return {app, [domain, json, dom_opt, tensorflow]() {
            if (*tensorflow) {
              const std::vector<std::string> tf_ops = frontend::tensorflow_ops();
              if (*json) {
                std::printf("%s\n", nlohmann::json(tf_ops).dump().c_str());
              } else {
                for (const std::string& op : tf_ops) std::printf("TensorFlow       %s\n", op.c_str());
                std::printf("%zu TensorFlow ops (GraphDef .pb and TensorFlow.js model.json)\n", tf_ops.size());
              }
              return 0;
            }
            nlohmann::json out = nlohmann::json::array();
            const std::string want = ops::canonical_domain(*domain);
            const bool filter = dom_opt->count() > 0;
            size_t n = 0;
            for (const auto& [dom, op] : ops::registered_ops()) {
              if (!kernels::find_kernel(dom, op)) continue;  // a schema the compiler rewrites away
              if (filter && dom != want) continue;
              std::string versions = "internal (made by the compiler)";
              nlohmann::json j = {{"domain", dom.empty() ? "ai.onnx" : dom}, {"op_type", op}};
              const std::vector<DType>* dts = kernels::input0_dtypes(dom, op);
              j["dtypes"] = nlohmann::json::array();
              if (dts)
                for (DType d : *dts) j["dtypes"].push_back(dtype_name(d));
              if (dom.empty()) {
                const auto [from, to] = frontend::onnx_opset_range(op);
                if (from > 0) {
                  versions = "opsets " + std::to_string(from) + "-" + std::to_string(to);
                  j["opsets"] = {from, to};
                }
              } else if (dom != ops::kGecDomain) {
                versions = "custom domain";
              }
              if (*json) {
                out.push_back(j);
              } else {
                std::printf("%-16s %-27s %-32s %s\n", dom.empty() ? "ai.onnx" : dom.c_str(), op.c_str(),
                            versions.c_str(), dtype_list(dts).c_str());
              }
              ++n;
            }
            if (!filter || want.empty())
              for (const std::string& op : frontend::ops_rewritten_on_import()) {
                const auto [from, to] = frontend::onnx_opset_range(op);
                if (from == 0) continue;
                const std::string versions = "opsets " + std::to_string(from) + "-" + std::to_string(to);
                if (*json)
                  out.push_back({{"domain", "ai.onnx"}, {"op_type", op}, {"opsets", {from, to}}, {"rewritten", true}});
                else
                  std::printf("%-16s %-27s %-32s (rewritten into other ops on import)\n", "ai.onnx", op.c_str(),
                              versions.c_str());
                ++n;
              }
            if (*json) std::printf("%s\n", out.dump().c_str());
            else std::printf("%zu ops (dtypes: of input 0, the op's main data input)\n", n);
            return 0;
          }};
}

}  // namespace gec::cli
