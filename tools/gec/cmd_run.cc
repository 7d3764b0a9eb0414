// gec run MODEL.gom|MODEL.onnx --input-dir DIR | --input NAME=FILE ... [--output-dir OUT] [--format pb|npy]
#include <chrono>
#include <cstdio>
#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "frontend/model_format.h"
#include "frontend/onnx/tensor_proto.h"
#include "support/compare.h"
#include "support/npy.h"
#include "tools/gec/cli.h"

namespace fs = std::filesystem;

namespace gec::cli {

namespace {
struct RunArgs {
  std::string model, input_dir, output_dir, format = "pb", dump_dir;
  std::vector<std::string> inputs;
  int threads = 0;
  CompileFlags flags;
};

void print_tensor(const std::string& label, const Tensor& t) {
  TensorStats st = summarize(t.view());
  std::printf("  %-24s %-8s %-20s min %-12.6g max %-12.6g mean %-12.6g%s\n", label.c_str(), dtype_name(t.dtype()),
              shape_str(t.shape()).c_str(), st.min, st.max, st.mean,
              st.nan_count ? (" NaN x" + std::to_string(st.nan_count)).c_str() : "");
}

// One line per tensor; a sequence prints its length, then one line per element.
void print_output(const std::string& name, const AnyValue& v) {
  if (v.kind == ValueKind::kTensor) return print_tensor(name, v.tensor);
  std::printf("  %-24s %s\n", name.c_str(), v.str().c_str());
  if (!v.has_value) return;
  if (!v.is_sequence_like()) return print_tensor("  (value)", v.tensor);
  for (size_t j = 0; j < v.elements.size(); ++j) print_tensor("  [" + std::to_string(j) + "]", v.elements[j]);
}

// output_K.pb (a TensorProto, SequenceProto or OptionalProto) or, for npy,
// output_K.npy / one output_K_J.npy per sequence element.
void write_output(const std::string& dir, const std::string& format, size_t k, const std::string& name,
                  const AnyValue& v) {
  const std::string stem = (fs::path(dir) / ("output_" + std::to_string(k))).string();
  if (format == "pb") return frontend::write_value_proto_file(stem + ".pb", v, name);
  if (!v.is_sequence_like()) {
    if (v.has_value) write_npy(stem + ".npy", v.tensor.view());
    return;
  }
  for (size_t j = 0; j < v.elements.size(); ++j) write_npy(stem + "_" + std::to_string(j) + ".npy", v.elements[j].view());
}

/// A file name for value `name`: letters, digits, '.', '-' and '_' kept,
/// anything else '_', then "_K" (the first K free) when an earlier value
/// took that name.
std::string file_stem(const std::string& name, std::set<std::string>& used) {
  std::string s;
  for (unsigned char c : name) s += (std::isalnum(c) || c == '.' || c == '-' || c == '_') ? static_cast<char>(c) : '_';
  if (s.empty() || s[0] == '.') s = "_" + s;
  if (s.size() > 200) s.resize(200);
  std::string stem = s;
  for (int k = 1; !used.insert(stem).second; ++k) stem = s + "_" + std::to_string(k);  // names taken stay taken
  return stem;
}

/// --dump-tensors: every tensor output as DIR/<name>.pb (a TensorProto
/// carrying the value's name) and DIR/index.json listing name, file, dtype,
/// shape and min / max / mean.
void dump_tensors(const std::string& dir, const Session& s, const std::vector<AnyValue>& outs) {
  nlohmann::json index = nlohmann::json::array();
  std::set<std::string> used;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (outs[k].kind != ValueKind::kTensor) continue;
    const std::string& name = s.outputs()[k].name;
    const std::string file = file_stem(name, used) + ".pb";
    frontend::write_tensor_proto_file((fs::path(dir) / file).string(), outs[k].tensor.view(), name);
    const TensorStats st = summarize(outs[k].tensor.view());
    index.push_back({{"name", name}, {"file", file}, {"dtype", dtype_name(outs[k].tensor.dtype())},
                     {"shape", outs[k].tensor.shape()}, {"min", st.min}, {"max", st.max}, {"mean", st.mean},
                     {"nan", st.nan_count}});
  }
  std::ofstream(fs::path(dir) / "index.json") << index.dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
                                              << "\n";
  std::printf("dumped %zu tensors to %s (index.json lists them)\n", index.size(), dir.c_str());
}

void make_dir(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    fail(ErrorCode::kIo, flag + " " + dir + ": cannot create the folder" + (ec ? ": " + ec.message() : std::string()));
}

}  // namespace

Command add_run(CLI::App& root) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* app = root.add_subcommand("run", "run a .gom (or compile and run a .onnx) on given inputs");
  app->add_option("model", a->model, "MODEL.gom, or a model to compile first (.onnx, TensorFlow .pb or model.json)")->required();
  app->add_option("--input-dir", a->input_dir, "folder with input_K.pb (ONNX TensorProto) files");
  app->add_option("--input", a->inputs, "NAME=FILE with FILE .npy or .pb (repeatable)");
  app->add_option("--output-dir", a->output_dir, "write output_K.pb (or .npy) files here");
  app->add_option("--format", a->format, "output file format")->check(CLI::IsMember({"pb", "npy"}));
  app->add_option("--dump-tensors", a->dump_dir,
                  "write every value the model computes (or those of --extra-outputs) to DIR as NAME.pb (not for a .gom)");
  app->add_option("--threads", a->threads, kThreadsHelp)->check(thread_count());
  add_spin_option(app);
  a->flags.add_to(app);
  return {app, [a]() {
            SessionOptions so;
            so.num_threads = a->threads;
            const size_t declared_outputs = [&]() -> size_t {
              if (a->dump_dir.empty()) return SIZE_MAX;
              if (is_gom_file(a->model))
                fail(ErrorCode::kInvalidArgument, "--dump-tensors needs the model itself (it recompiles it with "
                                                  "every value as an output), not the offline model " + a->model);
              // The model's own outputs come first: count them in the import.
              frontend::ImportOptions io;
              io.input_shapes = a->flags.to_options().input_shapes;
              io.outputs = a->flags.outputs;
              return frontend::import_any_file(a->model, io).graph->outputs().size();
            }();
            if (!a->dump_dir.empty() && a->flags.extra_outputs.empty()) a->flags.extra_outputs = {"*"};
            auto session = open_model(a->model, a->flags, so);
            std::vector<AnyValue> inputs = read_inputs(*session, a->input_dir, a->inputs);
            auto t0 = std::chrono::steady_clock::now();
            std::vector<AnyValue> outs = session->run_values(inputs);
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (!a->output_dir.empty()) make_dir("--output-dir", a->output_dir);
            std::printf("ran %s in %.2f ms (first run)\n", a->model.c_str(), ms);
            if (!a->dump_dir.empty()) {
              make_dir("--dump-tensors", a->dump_dir);
              dump_tensors(a->dump_dir, *session, outs);
            }
            for (size_t k = 0; k < outs.size() && k < declared_outputs; ++k) {
              const auto& io = session->outputs()[k];
              print_output(io.name, outs[k]);
              if (!a->output_dir.empty()) write_output(a->output_dir, a->format, k, io.name, outs[k]);
            }
            return 0;
          }};
}

}  // namespace gec::cli
