// `gec`: compile ONNX models into offline models, run, inspect and test them.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gec/threading.h"
#include "support/spelling.h"
#include "tools/gec/cli.h"

namespace {
/// OpenMP fixed its wait policy when it started, before main(). For `--spin
/// off`, unless the user set a policy, ask for PASSIVE and start this
/// program over, once: the second start finds the variable set. If the
/// restart fails, this run goes on with OpenMP's default policy.
void restart_with_openmp_policy(int argc, char** argv) {
  gec::SpinPolicy policy = gec::SpinPolicy::kOn;
  for (int i = 1; i < argc; ++i)
    if ((std::strcmp(argv[i], "--spin") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "off") == 0) ||
        std::strcmp(argv[i], "--spin=off") == 0)
      policy = gec::SpinPolicy::kOff;
  if (gec::prepare_openmp_environment(policy)) {
    ::execv("/proc/self/exe", argv);
    ::unsetenv("OMP_WAIT_POLICY");  // the restart failed: say what libgomp really runs with
  }
}
}  // namespace

int main(int argc, char** argv) {
  restart_with_openmp_policy(argc, argv);
  CLI::App app{"GraphEngine: a graph compiler and executor for ONNX and TensorFlow models on x86-64 CPUs"};
  app.set_version_flag("--version", std::string("gec ") + gec::version());
  app.require_subcommand(1);
  std::vector<gec::cli::Command> cmds = {gec::cli::add_compile(app), gec::cli::add_run(app),
                                         gec::cli::add_inspect(app), gec::cli::add_test(app),
                                         gec::cli::add_bench(app), gec::cli::add_profile(app),
                                         gec::cli::add_compare(app), gec::cli::add_ops(app)};
  // A first word that is neither an option nor a command: name it (CLI11
  // would only say that a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    std::vector<std::string> all;
    for (const auto& c : cmds) {
      known = known || c.app->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + c.app->get_name();
      all.push_back(c.app->get_name());
    }
    if (!known) {
      const std::string near = gec::closest_name(argv[1], all);
      std::fprintf(stderr, "gec: error: unknown command '%s' (%scommands: %s; gec --help)\n", argv[1],
                   near.empty() ? "" : ("did you mean '" + near + "'? ").c_str(), names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "gec: error: %s (gec %s--help lists the options)\n", e.what(),
                 argc > 1 && argv[1][0] != '-' ? (std::string(argv[1]) + " ").c_str() : "");
    return 2;
  }
  try {
    for (auto& c : cmds)
      if (c.app->parsed()) return c.action();
  } catch (const gec::Error& e) {
    std::fprintf(stderr, "gec: error: %s\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {  // a path the user gave: an I/O error, not ours
    std::fprintf(stderr, "gec: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gec: error: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gec: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
