// gec compile MODEL -o MODEL.gom [-O0..-O3] [--report R.json] [--verbose]
// MODEL: an ONNX model, a frozen TensorFlow GraphDef (.pb) or a TensorFlow.js
// model.json; the frontend is chosen from the file's bytes.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
struct CompileArgs {
  std::string model, output, report, dump_graph;
  bool verbose = false;
  CompileFlags flags;
};

void print_table(const nlohmann::json& r) {
  std::printf("%-12s %10s\n", "stage", "ms");
  for (const char* s : {"parse", "optimize", "schedule", "memory", "lower", "pack_weights", "serialize"})
    if (r["stages"].contains(s)) std::printf("%-12s %10.2f\n", s, r["stages"][s].get<double>());
  std::printf("\n%-30s %9s %8s %8s %8s\n", "pass", "ms", "before", "after", "changes");
  for (const auto& p : r["passes"])
    std::printf("%-30s %9.2f %8lld %8lld %8lld\n", p["name"].get<std::string>().c_str(), p["ms"].get<double>(),
                p["nodes_before"].get<long long>(), p["nodes_after"].get<long long>(), p["changes"].get<long long>());
  if (r.contains("fusion")) {
    const auto& f = r["fusion"];
    std::string fired;
    for (const auto& [rule, count] : f["rules"].items())
      if (count.get<long long>() > 0) fired += (fired.empty() ? "" : ", ") + rule + " " + std::to_string(count.get<long long>());
    std::printf("\nfusion: %lld -> %lld kernels, %lld elementwise groups of %lld ops; %s\n",
                f["kernels_before"].get<long long>(), f["kernels_after"].get<long long>(), f["groups"].get<long long>(),
                f["ops_in_groups"].get<long long>(), fired.empty() ? "no rule fired" : fired.c_str());
  }
  const auto& m = r["memory"];
  std::printf("\nnodes: %lld in the model file, %lld in the plan (subgraphs' nodes included in both; the plan "
              "adds layout assignment's Reorders to the fusion line's kernels)\n",
              r["nodes"]["onnx"].get<long long>(), r["nodes"]["final"].get<long long>());
  std::printf("memory: arena %lld bytes (lower bound %lld, no reuse %lld, reuse rate %.1f%%), weights %lld bytes\n",
              m["arena_bytes"].get<long long>(), m["lower_bound_bytes"].get<long long>(),
              m["no_reuse_bytes"].get<long long>(), 100 * m["reuse_rate"].get<double>(),
              m["weights_bytes"].get<long long>());
  if (r.contains("packed_weights")) {
    const auto& pw = r["packed_weights"];
    std::printf("packed weights: %lld copies (%lld bytes) packed for this machine's kernels, over %lld steps%s%s\n",
                pw["weights"].get<long long>(), pw["bytes"].get<long long>(), pw["steps_prepared"].get<long long>(),
                pw.contains("failure") ? "; not packed: " : "",
                pw.contains("failure") ? pw["failure"].get<std::string>().c_str() : "");
  }
  if (r.contains("kernel_variants")) {
    std::printf("winograd: %lld convolutions on oneDNN's Winograd kernel\n",
                r["kernel_variants"].value("winograd", 0LL));
    std::printf("winograd_nhwc: %lld convolutions on the native Winograd kernel (nhwc)\n",
                r["kernel_variants"].value("winograd_nhwc", 0LL));
    std::printf("direct: %lld small convolutions on the native direct loops\n",
                r["kernel_variants"].value("direct", 0LL));
    std::printf("nhwc: %lld strided blocked convolutions on oneDNN's nhwc kernel between reorders\n",
                r["kernel_variants"].value("nhwc", 0LL));
    std::printf("taps: %lld atrous convolutions one product per tap inside the input\n",
                r["kernel_variants"].value("taps", 0LL));
    std::printf("im2col_nhwc: %lld strided or small-map convolutions as gathered columns and one GEMM (nhwc)\n",
                r["kernel_variants"].value("im2col_nhwc", 0LL));
    std::printf("gemm: %lld MatMul, FusedMatMul and Gemm steps on our own GEMM\n",
                r["kernel_variants"].value("gemm", 0LL));
  }
  if (r.contains("streams")) {
    const auto& st = r["streams"];
    std::printf("streams: %lld (%s), %lld events of %lld cross-stream edges after pruning; estimated %.3f ms "
                "(critical path %.3f ms, one stream %.3f ms); arena %lld bytes, %lld on one stream\n",
                st["count"].get<long long>(), st["choice"].get<std::string>().c_str(), st["events"].get<long long>(),
                st["events_before_pruning"].get<long long>(), st["estimate_ms"].get<double>(),
                st["critical_path_ms_estimate"].get<double>(), st["one_stream_estimate_ms"].get<double>(),
                st["arena_bytes"].get<long long>(), st["one_stream_arena_bytes"].get<long long>());
  }
}
}  // namespace

Command add_compile(CLI::App& root) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* app = root.add_subcommand("compile", "compile an ONNX or TensorFlow model into an offline model (.gom)");
  app->add_option("model", args->model, "the model: .onnx, a frozen TensorFlow GraphDef .pb, or a TensorFlow.js model.json")
      ->required();
  app->add_option("-o,--output", args->output, "the .gom file to write (default: MODEL with .gom)");
  app->add_option("--report", args->report, "write the compile report (JSON) here");
  app->add_flag("-v,--verbose", args->verbose, "print the compile report as a table");
  app->add_option("--dump-graph", args->dump_graph, "write the graph before/after each pass here (ONNX, textual IR .gir, DOT)");
  args->flags.add_to(app);
  return {app, [args]() {
            std::string out = args->output;
            if (out.empty()) {
              out = args->model;
              for (const char* ext : {".onnx", ".pb", ".json"})
                if (ends_with(out, ext)) {
                  out = out.substr(0, out.size() - std::strlen(ext));
                  break;
                }
              out += ".gom";
            }
            CompileOptions opts = args->flags.to_options();
            opts.dump_graph_dir = args->dump_graph;
            if (stderr_is_tty())  // a one-line progress bar; nothing when piped
              opts.on_stage = [](const char* stage, int i, int n) {
                std::fprintf(stderr, "\r[%.*s%*s] %-10s", 2 * (i + 1), "##############", 2 * (n - i - 1), "", stage);
              };
            CompiledModel m = compile_file(args->model, opts);
            if (stderr_is_tty()) std::fprintf(stderr, "\r%40s\r", "");
            save_gom(m, out);
            if (!args->report.empty()) {
              std::ofstream f(args->report);
              if (!f) fail(ErrorCode::kIo, args->report + ": cannot write");
              f << m.report_json << "\n";
            }
            auto r = nlohmann::json::parse(m.report_json);
            if (r.contains("warnings"))
              for (const auto& w : r["warnings"]) std::fprintf(stderr, "gec: warning: %s\n", w.get<std::string>().c_str());
            // A plan for dynamic input dims runs without what needs static
            // shapes (blocked layouts, elementwise fusion, one arena).
            const long long dynamic = r["memory"].value("dynamic_values", 0LL);
            if (dynamic > 0 && args->flags.input_shapes.empty())
              std::fprintf(stderr,
                           "gec: note: %lld %s known only at run (dynamic input dims); "
                           "--input-shape NAME:DIMS fixes them and lets the plan use blocked layouts, fusion "
                           "and one arena (gec inspect lists the inputs)\n",
                           dynamic, dynamic == 1 ? "value has a shape" : "values have shapes");
            if (args->verbose) print_table(r);
            double total = 0;
            for (auto& [k, v] : r["stages"].items()) total += v.get<double>();
            std::printf("compiled %s -> %s (%zu bytes, %lld nodes, %.1f ms)\n", args->model.c_str(), out.c_str(),
                        m.gom->size(), r["nodes"]["final"].get<long long>(), total);
            return 0;
          }};
}

}  // namespace gec::cli
