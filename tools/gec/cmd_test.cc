// gec test PATH...: the ONNX backend-test runner (compile, run every data
// set, compare every output); one line per test, then
// "N passed, N failed, N skipped". With --expect FILE, failures listed there
// are expected (and a listed test that passes is an error, so the file stays
// true). Exit status 1 on any unexpected result.
#include <algorithm>
#include <cstdio>

#include "compiler/backend_test.h"
#include "passes/pass.h"
#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
struct TestArgs {
  std::vector<std::string> paths;
  std::vector<int> levels;
  double rtol = 1e-3, atol = 1e-4;
  int threads = 0;
  std::string expect;
  bool quiet = false;
  bool static_shapes = false;
  std::vector<std::string> disabled_passes;
  int streams = 0;
};

struct Tally {
  int passed = 0, failed = 0, skipped = 0, expected_failures = 0, unexpected_passes = 0, unexpected_failures = 0;
};

void run_one(const std::string& dir, const BackendTestOptions& base, const Expectations& ex, bool quiet, Tally& t) {
  BackendTestOptions o = base;
  const std::string name = dir.substr(dir.find_last_of('/') + 1);
  const Expectation want = ex.lookup(name);
  if (want == Expectation::kSkip) {
    ++t.skipped;
    std::printf("SKIP  %-50s %s\n", name.c_str(), ex.entries.at(name).reason.c_str());
    return;
  }
  o.shape_only = want == Expectation::kShapeOnly;
  BackendTestResult r = run_backend_test(dir, o);
  if (r.passed) {
    ++t.passed;
    if (want == Expectation::kFail) {
      ++t.unexpected_passes;
      std::printf("XPASS %-50s listed as failing (%s) but passes: remove it from the expectations file\n",
                  r.name.c_str(), ex.entries.at(name).reason.c_str());
    } else if (!quiet) {
      char err[64];
      std::snprintf(err, sizeof err, "max abs err %.3g", r.max_abs_error);
      std::printf("PASS  %-50s %s\n", r.name.c_str(), o.shape_only ? "(shapes and dtypes only: random outputs)" : err);
    }
    return;
  }
  ++t.failed;
  if (want == Expectation::kFail) {
    ++t.expected_failures;
    if (!quiet) std::printf("XFAIL %-50s %s\n", r.name.c_str(), r.message.c_str());
  } else {
    ++t.unexpected_failures;
    std::printf("FAIL  %-50s %s\n", r.name.c_str(), r.message.c_str());
  }
}
}  // namespace

Command add_test(CLI::App& root) {
  auto a = std::make_shared<TestArgs>();
  CLI::App* app = root.add_subcommand("test", "run backend-test folders (model.onnx, model.pb or model.json + test_data_set_N/)");
  app->add_option("paths", a->paths, "test folders, or folders of test folders")->required();
  // One level per -O (repeat the flag), so `-O 0 -O 3 DIR1 DIR2` leaves the paths alone.
  app->add_option("-O,--opt-level", a->levels, "optimization levels to run, each must pass (repeatable; default 2)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(number_in(0, 3));
  app->add_option("--rtol", a->rtol, "relative tolerance for floats (default 1e-3)")->check(tolerance());
  app->add_option("--atol", a->atol, "absolute tolerance for floats (default 1e-4)")->check(tolerance());
  app->add_option("--threads", a->threads, kThreadsHelp)->check(thread_count());
  add_spin_option(app);
  app->add_option("--expect", a->expect, "expectations file: tests that fail, are random, or are skipped, with reasons");
  app->add_flag("-q,--quiet", a->quiet, "print only unexpected results and the summary");
  app->add_option("--streams", a->streams, "streams of every compile (0 = auto, 1..64)")->check(number_in(0, 64));
  // One name per flag, so `--disable-pass winograd DIR1 DIR2` leaves the paths alone.
  app->add_option("--disable-pass", a->disabled_passes,
                  "skip a pass, a single rewrite rule or a stage (layout_propagation, pack_weights, winograd, direct_conv, "
                  "nhwc_conv, taps_conv, im2col_conv, native_gemm) by "
                  "name in every compile (one per flag, repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_flag("--static-shapes", a->static_shapes,
                "also compile per data set with its inputs' shapes (as --input-shape would) and run that");
  return {app, [a]() {
            BackendTestOptions o;
            if (!a->levels.empty()) o.opt_levels = a->levels;
            o.rtol = a->rtol;
            o.atol = a->atol;
            o.num_threads = a->threads;
            o.static_shapes = a->static_shapes;
            o.disabled_passes = a->disabled_passes;
            // A misspelt pass is a usage error (exit 2), not one failure per folder.
            const std::vector<std::string> known = passes::all_pass_names();
            for (const std::string& name : a->disabled_passes) {
              if (std::find(known.begin(), known.end(), name) != known.end()) continue;
              fail(ErrorCode::kInvalidArgument, "--disable-pass: " + passes::unknown_pass_message(name));
            }
            o.streams = a->streams;
            Expectations ex;
            if (!a->expect.empty()) ex = Expectations::load(a->expect);
            auto dirs = collect_test_dirs(a->paths);
            Tally t;
            const bool tty = stderr_is_tty();
            for (size_t i = 0; i < dirs.size(); ++i) {
              if (tty) std::fprintf(stderr, "\r[%zu/%zu] %-60.60s", i + 1, dirs.size(), dirs[i].c_str());
              run_one(dirs[i], o, ex, a->quiet, t);
              if (tty) std::fprintf(stderr, "\r%-80s\r", "");
              std::fflush(stdout);
            }
            std::printf("%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped);
            if (!a->expect.empty())
              std::printf("expectations (%s): %d failures expected, %d unexpected failures, %d unexpected passes\n",
                          a->expect.c_str(), t.expected_failures, t.unexpected_failures, t.unexpected_passes);
            return (t.unexpected_failures || t.unexpected_passes) ? 1 : 0;
          }};
}

}  // namespace gec::cli
