// gec run MODEL.gom|MODEL.onnx --input-dir DIR | --input NAME=FILE ... [--output-dir OUT] [--format pb|npy]
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "frontend/onnx/tensor_proto.h"
#include "support/compare.h"
#include "support/npy.h"
#include "tools/gec/cli.h"

namespace fs = std::filesystem;

namespace gec::cli {

namespace {
struct RunArgs {
  std::string model, input_dir, output_dir, format = "pb";
  std::vector<std::string> inputs;
  int threads = 0;
  CompileFlags flags;
};
}  // namespace

Command add_run(CLI::App& root) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* app = root.add_subcommand("run", "run a .gom (or compile and run a .onnx) on given inputs");
  app->add_option("model", a->model, "MODEL.gom or MODEL.onnx")->required();
  app->add_option("--input-dir", a->input_dir, "folder with input_K.pb (ONNX TensorProto) files");
  app->add_option("--input", a->inputs, "NAME=FILE with FILE .npy or .pb (repeatable)");
  app->add_option("--output-dir", a->output_dir, "write output_K.pb (or .npy) files here");
  app->add_option("--format", a->format, "output file format")->check(CLI::IsMember({"pb", "npy"}));
  app->add_option("--threads", a->threads, "intra-op threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  a->flags.add_to(app);
  return {app, [a]() {
            SessionOptions so;
            so.num_threads = a->threads;
            auto session = open_model(a->model, a->flags, so);
            std::vector<Tensor> inputs = read_inputs(*session, a->input_dir, a->inputs);
            std::vector<TensorView> views;
            for (auto& t : inputs) views.push_back(t.view());
            auto t0 = std::chrono::steady_clock::now();
            std::vector<Tensor> outs = session->run(views);
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (!a->output_dir.empty()) fs::create_directories(a->output_dir);
            std::printf("ran %s in %.2f ms (first run)\n", a->model.c_str(), ms);
            for (size_t k = 0; k < outs.size(); ++k) {
              const auto& io = session->outputs()[k];
              TensorStats st = summarize(outs[k].view());
              std::printf("  %-24s %-8s %-20s min %-12.6g max %-12.6g mean %-12.6g%s\n", io.name.c_str(),
                          dtype_name(outs[k].dtype()), shape_str(outs[k].shape()).c_str(), st.min, st.max, st.mean,
                          st.nan_count ? (" NaN x" + std::to_string(st.nan_count)).c_str() : "");
              if (a->output_dir.empty()) continue;
              fs::path p = fs::path(a->output_dir) / ("output_" + std::to_string(k) + "." + a->format);
              if (a->format == "npy") write_npy(p.string(), outs[k].view());
              else frontend::write_tensor_proto_file(p.string(), outs[k].view(), io.name);
            }
            return 0;
          }};
}

}  // namespace gec::cli
