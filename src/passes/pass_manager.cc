// PassManager: runs passes in order, with timing, node counts, verification
// and (--dump-graph) a dump of the graph before the first pass and after each.
#include <algorithm>
#include <chrono>

#include "passes/pass.h"

namespace gec::passes {

std::vector<PassStats> PassManager::run(ir::Graph& g, const CompileOptions& opts) {
  std::vector<PassStats> stats;
  const bool dump = !opts.dump_graph_dir.empty();
  int dumped = 0;
  if (dump) dump_graph(g, opts.dump_graph_dir, dumped++, "input");
  const std::set<std::string> off(opts.disabled_passes.begin(), opts.disabled_passes.end());
  for (auto& p : passes_) {
    if (off.count(p->name())) continue;
    p->set_disabled(off);  // rule names among them switch single rules off
    PassStats s;
    s.name = p->name();
    s.nodes_before = g.count_nodes_recursive();
    auto t0 = std::chrono::steady_clock::now();
    s.changes = p->run(g);
    s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    s.nodes_after = g.count_nodes_recursive();
    s.rules = p->rule_hits();
#ifndef NDEBUG
    const bool verify = true;
#else
    const bool verify = opts.verify_each_pass;
#endif
    if (verify) {
      try {
        g.verify();
      } catch (const Error& e) {
        fail(ErrorCode::kInternal, std::string("after pass ") + p->name() + ": " + e.what());
      }
    }
    if (dump) dump_graph(g, opts.dump_graph_dir, dumped++, p->name());
    stats.push_back(s);
  }
  return stats;
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> r;
  for (auto& p : passes_) r.push_back(p->name());
  return r;
}

}  // namespace gec::passes
