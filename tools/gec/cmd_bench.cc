// gec bench MODEL [--shape NAME:DIMS] [--warmup N] [--iterations N] [--duration S] [--threads N] [--json]
// gec profile MODEL [--shape NAME:DIMS] [--iterations N] [--warmup N] [--top N] [--wide] [--trace trace.json] [--json]
// The loops and the numbers are the library's (gec/bench.h); this file reads
// the flags and prints.
#include "gec/bench.h"

#include <algorithm>
#include <limits>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
// `v` without trailing zeros (0.5, 20, 60000).
std::string format_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct BenchArgs {
  std::string model, input_dir, trace;
  std::vector<std::string> inputs, shapes;
  double duration_s = 0, interval_ms = 0;
  int concurrency = 1;
  int warmup = 10, iterations = 50, threads = 0, top = 25;
  bool json = false, wide = false;
  std::string adapt_threads = "on";
  CompileFlags flags;
};

struct Loaded {
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs;
  std::vector<TensorView> views;
  double load_ms = 0;
  int64_t rss_before_load_bytes = 0;
  bool generated = false;  // inputs made by generate_inputs()

  /// Runs `f`; when it fails on generated inputs, says how to give real ones.
  template <typename F>
  auto with_hint(F f) {
    try {
      return f();
    } catch (const Error& e) {
      if (!generated || e.code() == ErrorCode::kInternal) throw;
      throw Error(e.code(), std::string(e.what()) +
                                " (on generated inputs, dynamic dims not given by --shape set to 1: give real inputs with "
                                "--input-dir / --input, or their shapes with --shape)");
    }
  }
};

Loaded load(const BenchArgs& a, bool profile) {
  Loaded l;
  SessionOptions so;
  so.num_threads = a.threads;
  so.adapt_threads = a.adapt_threads == "on";
  so.profile = profile;
  so.max_concurrent_requests = a.concurrency;
  so.wait_when_busy = true;
  l.rss_before_load_bytes = resident_set_bytes();
  auto t0 = Clock::now();
  l.session = open_model(a.model, a.flags, so);
  l.load_ms = ms_since(t0);
  l.generated = a.input_dir.empty() && a.inputs.empty();
  if (!l.generated && !a.shapes.empty())
    fail(ErrorCode::kInvalidArgument, "--shape sets the shapes of generated inputs; the inputs given by --input-dir "
                                      "/ --input have their own");
  std::map<std::string, Shape> shapes;
  for (const auto& spec : a.shapes) {
    auto [name, shape] = parse_shape_spec(spec, "--shape");
    if (!shapes.emplace(name, shape).second) fail(ErrorCode::kInvalidArgument, "--shape given twice for '" + name + "'");
  }
  l.inputs = l.generated ? generate_inputs(*l.session, shapes)
                         : tensor_inputs(*l.session, read_inputs(*l.session, a.input_dir, a.inputs),
                                         profile ? "profile" : "bench");
  for (auto& t : l.inputs) l.views.push_back(t.view());
  return l;
}

void add_common(CLI::App* app, BenchArgs& a) {
  app->add_option("model", a.model, "MODEL.gom, or a model to compile first (.onnx, TensorFlow .pb or model.json)")->required();
  app->add_option("--input-dir", a.input_dir, "folder with input_K.pb files (default: generated inputs)");
  app->add_option("--input", a.inputs, "NAME=FILE with FILE .npy or .pb (repeatable)");
  app->add_option("--shape", a.shapes,
                  "shape of a generated input, e.g. x:4,3,224,224 (repeatable; dynamic dims not given are 1)");
  app->add_option("--iterations", a.iterations, "timed runs")
      ->check(number_in(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  app->add_option("--threads", a.threads, kThreadsHelp)->check(thread_count());
  add_spin_option(app);
  app->add_option("--adapt-threads", a.adapt_threads,
                  "use fewer threads while other processes keep the cores busy, and run small steps on one thread "
                  "where the first runs measure that faster (on, the default), or always --threads for every step")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  a.flags.add_to(app);
}
}  // namespace

Command add_bench(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* app = root.add_subcommand("bench", "measure latency, throughput, load time and peak memory");
  add_common(app, *a);
  app->add_option("--warmup", a->warmup, "untimed runs first")->check(non_negative_int())->capture_default_str();
  app->add_option("--duration", a->duration_s,
                  "go on with timed runs for at least this many seconds (and at least --iterations runs)")
      ->check(number_in(0.0, 86400.0));
  app->add_option("--concurrency", a->concurrency,
                  "requests in flight at once on the one loaded model (threads per request: the cores divided "
                  "among them, unless --threads)")
      ->check(number_in(1, 1024))
      ->capture_default_str();
  app->add_option("--interval-ms", a->interval_ms,
                  "wait this long before each timed run, as between a service's requests "
                  "(idle threads have gone to sleep)")
      ->check(number_in(0.0, 60000.0))
      ->capture_default_str();
  app->add_flag("--json", a->json, "print one JSON object");
  return {app, [a]() {
            Loaded l = load(*a, false);
            BenchOptions bo;
            bo.warmup = a->warmup;
            bo.iterations = a->iterations;
            bo.duration_s = a->duration_s;
            bo.concurrency = a->concurrency;
            bo.interval_ms = a->interval_ms;
            BenchResult r = l.with_hint([&] { return bench(*l.session, l.views, bo); });
            r.load_ms = l.load_ms;
            r.rss_before_load_bytes = l.rss_before_load_bytes;
            if (a->json) {
              std::printf("%s\n", r.json().c_str());
              return 0;
            }
            std::printf("%s: %d runs in %.2f s after %d warm-up%s, %d thread%s%s, %d stream%s%s\n", a->model.c_str(),
                        r.iterations, r.timed_s, a->warmup,
                        r.tuning_runs > 0 ? (" (+" + std::to_string(r.tuning_runs) + " while step threads were tuned)").c_str()
                                          : "",
                        r.threads, r.threads == 1 ? "" : "s",
                        r.concurrency > 1 ? (" per request, " + std::to_string(r.concurrency) +
                                             " requests in flight").c_str() : "",
                        r.streams, r.streams == 1 ? "" : "s",
                        r.interval_ms > 0 ? (", " + format_number(r.interval_ms) + " ms apart").c_str() : "");
            std::printf("  latency ms: min %.3f  median %.3f  p90 %.3f  p99 %.3f  max %.3f\n", r.min_ms, r.median_ms,
                        r.p90_ms, r.p99_ms, r.max_ms);
            std::printf("  throughput: %.1f runs/s, %.1f samples/s (batch %lld: the inputs' leading dim)%s\n",
                        r.runs_per_s, r.samples_per_s, static_cast<long long>(r.batch),
                        r.concurrency > 1 ? ", runs completed per second of wall clock" : "");
            std::printf("  threads per run: %d to %d of %d; %d OS threads; idle threads: %s\n", r.min_run_threads,
                        r.max_run_threads, r.threads, r.os_threads, r.openmp_wait_policy.c_str());
            std::printf("  load %.1f ms, first run %.1f ms, peak RSS %.1f MiB", r.load_ms, r.first_run_ms,
                        r.peak_rss_bytes / 1048576.0);
            if (r.rss_before_load_bytes > 0)
              std::printf(" (%.1f MiB before the model was loaded)", r.rss_before_load_bytes / 1048576.0);
            std::printf("\n");
            std::printf("  packed weights: %lld stored in the model, %lld of them read in place, %lld packed at load or run\n",
                        static_cast<long long>(r.weights_stored), static_cast<long long>(r.weights_adopted),
                        static_cast<long long>(r.weights_packed));
            return 0;
          }};
}

Command add_profile(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  a->iterations = 20;
  CLI::App* app = root.add_subcommand("profile", "time every node and show where the time goes");
  add_common(app, *a);
  a->warmup = 1;
  app->add_option("--top", a->top, "rows to show (0 = all)")
      ->capture_default_str()
      ->check(number_in(0, std::numeric_limits<int>::max()));
  app->add_option("--warmup", a->warmup, "untimed runs first (0 with --iterations 1: profile the first run)")
      ->check(non_negative_int())
      ->capture_default_str();
  app->add_flag("--wide", a->wide, "full node, op and kernel names (default: cut to the column)");
  app->add_option("--trace", a->trace,
                  "write Chrome trace-event JSON: one event per node call (open in Perfetto)");
  app->add_flag("--json", a->json, "print one JSON object (per-node and per-op-type times) instead of the tables");
  return {app, [a]() {
            Loaded l = load(*a, true);
            ProfileOptions po;
            po.iterations = a->iterations;
            po.warmup = a->warmup;
            ProfileResult r = l.with_hint([&] { return profile(*l.session, l.views, po); });
            if (!a->trace.empty()) {
              std::ofstream f(a->trace);
              if (!f) fail(ErrorCode::kIo, a->trace + ": cannot write");
              f << r.trace_json() << "\n";
            }
            if (a->json) {
              std::printf("%s\n", r.json().c_str());
              return 0;
            }
            std::vector<size_t> order(r.nodes.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t x, size_t y) { return r.nodes[x].mean_ms > r.nodes[y].mean_ms; });
            // Names are cut to their column unless --wide; a cut one ends in '~'.
            auto col = [&](const std::string& t, size_t w) {
              if (a->wide || t.size() <= w) return t;
              return t.substr(0, w - 1) + "~";
            };
            size_t wn = 36, wo = 18, wk = 22;
            if (a->wide)
              for (const ProfiledNode& pn : r.nodes) {
                wn = std::max(wn, pn.node.name.size());
                wo = std::max(wo, pn.node.op_type.size());
                wk = std::max(wk, pn.node.kernel.size());
              }
            std::printf("%-*s %-*s %-*s %3s %10s %10s %10s %7s %12s %8s  %s\n", int(wn), "node", int(wo), "op", int(wk),
                        "kernel", "thr", "mean ms", "median ms", "p90 ms", "%", "bytes", "GFLOP/s",
                        "input shapes [fused from]");
            size_t shown = 0;
            for (size_t i : order) {
              if (a->top > 0 && shown++ >= static_cast<size_t>(a->top)) break;
              const ProfiledNode& pn = r.nodes[i];
              const NodeProfile& p = pn.node;
              std::string shapes;
              for (auto& s : p.input_shapes) shapes += (shapes.empty() ? "" : " ") + shape_str(s);
              if (!p.fused_from.empty()) {
                std::string from;
                for (const auto& f : p.fused_from) from += (from.empty() ? "" : ", ") + f;
                shapes += "  [" + from + "]";
              }
              const std::string gflops = pn.gflop_per_s > 0 ? std::to_string(static_cast<long long>(pn.gflop_per_s + 0.5))
                                                            : std::string("-");
              // A body's node: "> name" (its holder in the JSON's "inside").
              const std::string name = p.inside.empty() ? p.name : "> " + p.name;
              std::printf("%-*s %-*s %-*s %3d %10.4f %10.4f %10.4f %6.1f%% %12lld %8s  %s\n", int(wn),
                          col(name, wn).c_str(), int(wo), col(p.op_type, wo).c_str(), int(wk), col(p.kernel, wk).c_str(),
                          p.threads, pn.mean_ms,
                          pn.median_ms, pn.p90_ms, 100 * pn.share, static_cast<long long>(p.bytes_accessed),
                          gflops.c_str(), shapes.c_str());
            }
            std::printf("\n%-24s %6s %10s %7s\n", "op type", "nodes", "mean ms", "%");
            for (const ProfiledOpType& o : r.op_types)
              std::printf("%-24s %6d %10.4f %6.1f%%\n", o.op_type.c_str(), o.nodes, o.mean_ms, 100 * o.share);
            double flops = 0;  // per run: a body node counts its calls (a Loop's every iteration, a branch not taken 0)
            for (const ProfiledNode& pn : r.nodes)
              flops += pn.flops * static_cast<double>(pn.node.calls) / std::max(1, a->iterations);
            size_t main_nodes = 0;
            for (const ProfiledNode& pn : r.nodes) main_nodes += pn.node.inside.empty();
            std::printf("total %.3f ms per run over %zu nodes (%d run%s after %d warm-up%s%s)", r.total_ms, main_nodes,
                        a->iterations, a->iterations == 1 ? "" : "s", r.warmup,
                        r.tuning_runs > 0 ? (" +" + std::to_string(r.tuning_runs) + " while step threads were tuned").c_str()
                                          : "",
                        r.warmup == 0 ? ": the first run included" : "");
            if (main_nodes < r.nodes.size()) std::printf(" and %zu in bodies (\">\")", r.nodes.size() - main_nodes);
            size_t alone = 0;  // main-graph nodes whose last call ran on one thread ("thr")
            for (const ProfiledNode& pn : r.nodes) alone += pn.node.inside.empty() && pn.node.threads == 1;
            if (r.threads > 1)
              std::printf("; %zu %s", alone,
                          alone == 1 ? "node ran on one thread in its last call" : "nodes ran on one thread in their last call");
            if (flops > 0) std::printf("; dense ops %.2f GFLOP per run, %.0f GFLOP/s over the whole run", flops / 1e9,
                                       r.total_ms > 0 ? flops / (r.total_ms * 1e6) : 0.0);
            std::printf("\n");
            return 0;
          }};
}

}  // namespace gec::cli
