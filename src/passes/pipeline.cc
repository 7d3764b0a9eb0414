// The pass pipeline per optimization level: one readable list each.
#include <set>

#include "passes/pass.h"

namespace gec::passes {

PassManager make_pipeline(int opt_level) {
  PassManager pm;
  if (opt_level >= 1) {
    pm.add(make_identity_elimination());
    pm.add(make_constant_folding());
    pm.add(make_dead_node_elimination());
  }
  // Analyses every level needs: exact static shapes for memory planning.
  pm.add(make_shape_inference());
  return pm;
}

std::vector<std::string> all_pass_names() {
  std::set<std::string> names;
  for (int level = 0; level <= 3; ++level)
    for (const auto& n : make_pipeline(level).names()) names.insert(n);
  return {names.begin(), names.end()};
}

}  // namespace gec::passes
