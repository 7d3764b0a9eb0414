// `gec`: compile ONNX models into offline models, run, inspect and test them.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "tools/gec/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"GraphEngine: an ONNX graph compiler and executor for x86-64 CPUs"};
  app.set_version_flag("--version", std::string("gec ") + gec::version());
  app.require_subcommand(1);
  std::vector<gec::cli::Command> cmds = {gec::cli::add_compile(app), gec::cli::add_run(app),
                                         gec::cli::add_inspect(app), gec::cli::add_test(app),
                                         gec::cli::add_bench(app), gec::cli::add_profile(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
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
