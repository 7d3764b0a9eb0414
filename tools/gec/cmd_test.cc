// gec test PATH...: the ONNX backend-test runner (compile, run every data
// set, compare every output); one line per test, then "N passed, N failed".
#include <cstdio>

#include "compiler/backend_test.h"
#include "tools/gec/cli.h"

namespace gec::cli {

namespace {
struct TestArgs {
  std::vector<std::string> paths;
  std::vector<int> levels;
  double rtol = 1e-3, atol = 1e-4;
  int threads = 0;
};
}  // namespace

Command add_test(CLI::App& root) {
  auto a = std::make_shared<TestArgs>();
  CLI::App* app = root.add_subcommand("test", "run ONNX backend-test folders (model.onnx + test_data_set_N/)");
  app->add_option("paths", a->paths, "test folders, or folders of test folders")->required();
  app->add_option("-O,--opt-level", a->levels, "optimization levels to run (repeatable; default 2)")
      ->check(CLI::Range(0, 3));
  app->add_option("--rtol", a->rtol, "relative tolerance for floats (default 1e-3)");
  app->add_option("--atol", a->atol, "absolute tolerance for floats (default 1e-4)");
  app->add_option("--threads", a->threads, "intra-op threads (0 = all cores)");
  return {app, [a]() {
            BackendTestOptions o;
            if (!a->levels.empty()) o.opt_levels = a->levels;
            o.rtol = a->rtol;
            o.atol = a->atol;
            o.num_threads = a->threads;
            auto dirs = collect_test_dirs(a->paths);
            int passed = 0, failed = 0;
            for (size_t i = 0; i < dirs.size(); ++i) {
              if (stderr_is_tty()) std::fprintf(stderr, "\r[%zu/%zu] %-60s", i + 1, dirs.size(), dirs[i].c_str());
              BackendTestResult r = run_backend_test(dirs[i], o);
              if (stderr_is_tty()) std::fprintf(stderr, "\r%-80s\r", "");
              if (r.passed) {
                ++passed;
                std::printf("PASS %-50s max abs err %.3g\n", r.name.c_str(), r.max_abs_error);
              } else {
                ++failed;
                std::printf("FAIL %-50s %s\n", r.name.c_str(), r.message.c_str());
              }
              std::fflush(stdout);
            }
            std::printf("%d passed, %d failed\n", passed, failed);
            return failed ? 1 : 0;
          }};
}

}  // namespace gec::cli
