// gec compare MODEL.onnx [--input-dir DIR | --input NAME=FILE ...]
//                        [-O 2] [--baseline-level 0 | --reference DIR] [--atol 1e-4] [--rtol 1e-3]
// Finds where two runs of one model part ways: every value the main graph
// computes becomes an output (CompileOptions::extra_outputs = "*"), the model
// runs at -O and at --baseline-level (or against the tensors stored in
// --reference: TensorProto .pb files named for the values, e.g. written by
// `gec run --dump-tensors` or by another engine), and the values both sides
// have are compared in node order. The first that differs beyond
// |a - b| <= atol + rtol * |b| is named with its node, op and error figures.
// Exit status 0 when every compared value agrees, 1 when one differs, 2 on
// bad input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "frontend/model_format.h"
#include "frontend/onnx/tensor_proto.h"
#include "support/compare.h"
#include "tools/gec/cli.h"

namespace fs = std::filesystem;

namespace gec::cli {

namespace {
struct CompareArgs {
  std::string model, input_dir, reference;
  std::vector<std::string> inputs;
  int baseline_level = 0, threads = 0;
  double atol = 1e-4, rtol = 1e-3;
  CompileFlags flags;
};

/// Every tensor the model computes, by name, after one run at `level`.
std::map<std::string, Tensor> run_all_values(const CompareArgs& a, int level, std::vector<std::string>* order) {
  CompileFlags f = a.flags;
  f.opt_level = level;
  f.extra_outputs = {"*"};
  SessionOptions so;
  so.num_threads = a.threads;
  so.adapt_threads = false;
  auto s = Session::load_from_bytes(compile_file(a.model, f.to_options()).gom, so);
  std::vector<AnyValue> outs = s->run_values(read_inputs(*s, a.input_dir, a.inputs));
  std::map<std::string, Tensor> r;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (outs[k].kind != ValueKind::kTensor) continue;
    const std::string& name = s->outputs()[k].name;
    if (order) order->push_back(name);
    r[name] = std::move(outs[k].tensor);
  }
  return r;
}

/// The tensors stored in `dir`: every .pb file, by the name inside it.
std::map<std::string, Tensor> read_reference(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(ErrorCode::kIo, "--reference " + dir + ": not a folder");
  std::map<std::string, Tensor> r;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".pb") continue;
    std::string name;
    Tensor t = frontend::read_tensor_proto_file(e.path().string(), &name);
    if (name.empty()) fail(ErrorCode::kInvalidArgument, e.path().string() + ": the TensorProto has no name");
    r[name] = std::move(t);
  }
  if (r.empty()) fail(ErrorCode::kInvalidArgument, "--reference " + dir + ": no .pb files");
  return r;
}
}  // namespace

Command add_compare(CLI::App& root) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* app = root.add_subcommand(
      "compare", "run a model at two levels (or against stored tensors) and name the first value that differs");
  app->add_option("model", a->model, "MODEL.onnx")->required();
  app->add_option("--input-dir", a->input_dir, "folder with input_K.pb files");
  app->add_option("--input", a->inputs, "NAME=FILE with FILE .npy or .pb (repeatable)");
  app->add_option("--baseline-level", a->baseline_level, "the level -O is compared against")
      ->check(number_in(0, 3))
      ->capture_default_str();
  app->add_option("--reference", a->reference,
                  "compare -O against these tensors instead (.pb files named for the values)");
  app->add_option("--atol", a->atol, "absolute tolerance")->check(tolerance())->capture_default_str();
  app->add_option("--rtol", a->rtol, "relative tolerance")->check(tolerance())->capture_default_str();
  app->add_option("--threads", a->threads, kThreadsHelp)->check(thread_count());
  a->flags.add_to(app);
  return {app, [a]() {
            if (!ends_with(a->model, ".onnx"))
              fail(ErrorCode::kInvalidArgument, "compare needs the .onnx model (" + a->model +
                                                    "): it recompiles it with every value as an output");
            std::vector<std::string> order;
            const std::map<std::string, Tensor> got = run_all_values(*a, a->flags.opt_level, &order);
            const bool vs_ref = !a->reference.empty();
            const std::map<std::string, Tensor> base =
                vs_ref ? read_reference(a->reference) : run_all_values(*a, a->baseline_level, nullptr);
            const std::string label = vs_ref ? a->reference : "-O" + std::to_string(a->baseline_level);
            // Producers by value name, from the model as imported (before any
            // pass); the values are compared in their producers' order (the
            // model's own outputs come first among the session's outputs).
            frontend::ImportResult imported = frontend::import_any_file(a->model);
            std::map<const ir::Node*, size_t> position;
            for (const auto& n : imported.graph->nodes()) position.emplace(n.get(), position.size());
            auto rank = [&](const std::string& name) {
              const ir::Value* v = imported.graph->find_value(name);
              auto it = v && v->producer() ? position.find(v->producer()) : position.end();
              return it == position.end() ? position.size() : it->second;
            };
            std::stable_sort(order.begin(), order.end(),
                             [&](const std::string& x, const std::string& y) { return rank(x) < rank(y); });
            size_t compared = 0, differ = 0;
            std::string first;
            for (const std::string& name : order) {
              auto it = base.find(name);
              if (it == base.end()) continue;  // fused away on the other side, or not stored
              ++compared;
              const CompareResult c = compare_tensors(got.at(name).view(), it->second.view(), a->rtol, a->atol);
              if (c.ok) continue;
              if (differ++ == 0) {
                const ir::Value* v = imported.graph->find_value(name);
                const ir::Node* n = v ? v->producer() : nullptr;
                double max_rel = 0;
                const TensorView gv = got.at(name).view(), bv = it->second.view();
                if (gv.shape == bv.shape && gv.dtype != DType::kString)
                  for (int64_t i = 0; i < gv.numel(); ++i) {
                    const double x = element_as_double(gv, i), y = element_as_double(bv, i);
                    if (y != 0) max_rel = std::max(max_rel, std::abs(x - y) / std::abs(y));
                  }
                char buf[512];
                std::snprintf(buf, sizeof buf,
                              "first difference: value '%s' (node '%s', op %s): %lld of %lld elements differ, "
                              "max abs error %.3g, max rel error %.3g",
                              name.c_str(), n ? n->name.c_str() : "?", n ? n->op_type.c_str() : "?",
                              static_cast<long long>(c.mismatches), static_cast<long long>(gv.numel()),
                              c.max_abs_error, max_rel);
                first = std::string(buf) + "\n  " + c.message;
              }
            }
            std::printf("%s: -O%d against %s: %zu values compared (atol %g, rtol %g), %zu differ\n", a->model.c_str(),
                        a->flags.opt_level, label.c_str(), compared, a->atol, a->rtol, differ);
            if (compared == 0)
              fail(ErrorCode::kInvalidArgument, "no value of the model has a counterpart in " + label);
            if (differ) std::printf("%s\n", first.c_str());
            return differ ? 1 : 0;
          }};
}

}  // namespace gec::cli
