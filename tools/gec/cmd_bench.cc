// gec bench MODEL [--warmup N] [--iterations N] [--threads N] [--json]
// gec profile MODEL [--iterations N] [--top N] [--trace trace.json]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct BenchArgs {
  std::string model, input_dir, trace;
  std::vector<std::string> inputs;
  int warmup = 10, iterations = 50, threads = 0, top = 25;
  bool json = false;
  CompileFlags flags;
};

// Deterministic inputs from the declared types: dynamic dims become 1,
// floats uniform in [0, 1), integers 0..9, bools alternate.
std::vector<Tensor> generated_inputs(const Session& s) {
  std::vector<Tensor> r;
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uf(0.f, 1.f);
  for (const auto& io : s.inputs()) {
    if (io.kind != ValueKind::kTensor)
      fail(ErrorCode::kInvalidArgument, "cannot generate input '" + io.str() +
                                            "': gec bench and gec profile generate tensor inputs only");
    Shape shape;
    for (int64_t d : io.dims) shape.push_back(d < 0 ? 1 : d);
    Tensor t(io.dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (io.dtype) {
        case DType::kFloat32: t.as<float>()[i] = uf(rng); break;
        case DType::kFloat64: t.as<double>()[i] = uf(rng); break;
        case DType::kInt64: t.as<int64_t>()[i] = static_cast<int64_t>(rng() % 10); break;
        case DType::kInt32: t.as<int32_t>()[i] = static_cast<int32_t>(rng() % 10); break;
        case DType::kBool: case DType::kUInt8: t.as<uint8_t>()[i] = static_cast<uint8_t>(i % 2); break;
        default: break;  // zero-filled
      }
    }
    r.push_back(std::move(t));
  }
  return r;
}

int64_t peak_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t idx = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[idx];
}

struct Loaded {
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs;
  std::vector<TensorView> views;
  double load_ms = 0;
  bool generated = false;  // inputs made by generated_inputs()

  /// The first run; when it fails on generated inputs, says how to give real ones.
  void first_run() {
    try {
      session->run(views);
    } catch (const Error& e) {
      if (!generated || e.code() == ErrorCode::kInternal) throw;
      throw Error(e.code(), std::string(e.what()) +
                                " (on generated inputs, every dynamic dim set to 1: give real inputs with "
                                "--input-dir / --input, or fix the dims with --input-shape)");
    }
  }
};

Loaded load(const BenchArgs& a, bool profile) {
  Loaded l;
  SessionOptions so;
  so.num_threads = a.threads;
  so.profile = profile;
  auto t0 = Clock::now();
  l.session = open_model(a.model, a.flags, so);
  l.load_ms = ms_since(t0);
  l.generated = a.input_dir.empty() && a.inputs.empty();
  l.inputs = l.generated ? generated_inputs(*l.session)
                                                        : tensor_inputs(*l.session, read_inputs(*l.session, a.input_dir, a.inputs),
                                                                        profile ? "profile" : "bench");
  for (auto& t : l.inputs) l.views.push_back(t.view());
  return l;
}

void add_common(CLI::App* app, BenchArgs& a) {
  app->add_option("model", a.model, "MODEL.gom or MODEL.onnx")->required();
  app->add_option("--input-dir", a.input_dir, "folder with input_K.pb files (default: generated inputs)");
  app->add_option("--input", a.inputs, "NAME=FILE with FILE .npy or .pb (repeatable)");
  app->add_option("--iterations", a.iterations, "timed runs")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--threads", a.threads, "intra-op threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  a.flags.add_to(app);
}
}  // namespace

Command add_bench(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* app = root.add_subcommand("bench", "measure latency, throughput, load time and peak memory");
  add_common(app, *a);
  app->add_option("--warmup", a->warmup, "untimed runs first")->check(CLI::NonNegativeNumber)->capture_default_str();
  app->add_flag("--json", a->json, "print one JSON object");
  return {app, [a]() {
            Loaded l = load(*a, false);
            auto t0 = Clock::now();
            l.first_run();
            const double first_ms = ms_since(t0);
            for (int i = 0; i < a->warmup; ++i) l.session->run(l.views);
            std::vector<double> times;
            for (int i = 0; i < a->iterations; ++i) {
              t0 = Clock::now();
              l.session->run(l.views);
              times.push_back(ms_since(t0));
            }
            const double median = percentile(times, 0.5);
            nlohmann::json j = {{"median_ms", median},
                                {"p90_ms", percentile(times, 0.9)},
                                {"p99_ms", percentile(times, 0.99)},
                                {"min_ms", *std::min_element(times.begin(), times.end())},
                                {"max_ms", *std::max_element(times.begin(), times.end())},
                                {"load_ms", l.load_ms},
                                {"first_run_ms", first_ms},
                                {"peak_rss_bytes", peak_rss_bytes()},
                                {"threads", a->threads},
                                {"iterations", a->iterations},
                                {"throughput_per_s", median > 0 ? 1000.0 / median : 0}};
            if (a->json) {
              std::printf("%s\n", j.dump().c_str());
              return 0;
            }
            std::printf("%s: %d runs after %d warm-up, %s threads\n", a->model.c_str(), a->iterations, a->warmup,
                        a->threads ? std::to_string(a->threads).c_str() : "all-core");
            std::printf("  latency ms: min %.3f  median %.3f  p90 %.3f  p99 %.3f  max %.3f\n", j["min_ms"].get<double>(),
                        median, j["p90_ms"].get<double>(), j["p99_ms"].get<double>(), j["max_ms"].get<double>());
            std::printf("  throughput: %.1f inferences/s\n", j["throughput_per_s"].get<double>());
            std::printf("  load %.1f ms, first run %.1f ms, peak RSS %.1f MiB\n", l.load_ms, first_ms,
                        peak_rss_bytes() / 1048576.0);
            return 0;
          }};
}

Command add_profile(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  a->iterations = 20;
  CLI::App* app = root.add_subcommand("profile", "time every node and show where the time goes");
  add_common(app, *a);
  app->add_option("--top", a->top, "rows to show (0 = all)")->capture_default_str();
  app->add_option("--trace", a->trace, "write Chrome trace-event JSON (open in Perfetto)");
  return {app, [a]() {
            Loaded l = load(*a, true);
            l.first_run();  // warm-up: primitive creation is not per-run cost
            l.session->reset_profile();
            for (int i = 0; i < a->iterations; ++i) l.session->run(l.views);
            auto prof = l.session->profile();
            double total = 0;
            for (auto& p : prof) total += p.total_ms;
            std::vector<size_t> order(prof.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t x, size_t y) { return prof[x].total_ms > prof[y].total_ms; });
            const double n = a->iterations;
            std::printf("%-36s %-18s %-22s %10s %7s %12s  %s\n", "node", "op", "kernel", "mean ms", "%", "bytes",
                        "input shapes");
            size_t shown = 0;
            for (size_t i : order) {
              if (a->top > 0 && shown++ >= static_cast<size_t>(a->top)) break;
              const auto& p = prof[i];
              std::string shapes;
              for (auto& s : p.input_shapes) shapes += (shapes.empty() ? "" : " ") + shape_str(s);
              std::printf("%-36.36s %-18.18s %-22.22s %10.4f %6.1f%% %12lld  %s\n", p.name.c_str(), p.op_type.c_str(),
                          p.kernel.c_str(), p.total_ms / n, total ? 100 * p.total_ms / total : 0,
                          static_cast<long long>(p.bytes_accessed), shapes.c_str());
            }
            std::map<std::string, std::pair<double, int>> by_op;
            for (auto& p : prof) {
              by_op[p.op_type].first += p.total_ms;
              by_op[p.op_type].second += 1;
            }
            std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
            std::sort(ops.begin(), ops.end(), [](auto& x, auto& y) { return x.second.first > y.second.first; });
            std::printf("\n%-24s %6s %10s %7s\n", "op type", "nodes", "mean ms", "%");
            for (auto& [op, v] : ops)
              std::printf("%-24s %6d %10.4f %6.1f%%\n", op.c_str(), v.second, v.first / n,
                          total ? 100 * v.first / total : 0);
            std::printf("total %.3f ms per run over %zu nodes (%d runs)\n", total / n, prof.size(), a->iterations);
            if (!a->trace.empty()) {
              nlohmann::json events = nlohmann::json::array();
              double ts = 0;
              for (auto& p : prof) {
                const double dur = p.total_ms / n * 1000.0;  // microseconds, mean per run
                events.push_back({{"name", p.name}, {"cat", p.op_type}, {"ph", "X"}, {"ts", ts}, {"dur", dur},
                                  {"pid", 1}, {"tid", 0}, {"args", {{"kernel", p.kernel}}}});
                ts += dur;
              }
              std::ofstream f(a->trace);
              if (!f) fail(ErrorCode::kIo, a->trace + ": cannot write");
              f << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
            }
            return 0;
          }};
}

}  // namespace gec::cli
