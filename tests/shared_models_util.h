// The real models in ../shared/models (read-only, next to the repository)
// for the tests that run them: where they are and their manifest.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace gec::testing {

inline const std::string kSharedModels = std::string(GEC_SOURCE_DIR) + "/../shared/models";

/// Parses ../shared/models/manifest.json into `manifest` (its "models" array
/// lists each model's name and facts). A fatal test failure, saying where the
/// folder is expected, when the file is missing: call it under
/// ASSERT_NO_FATAL_FAILURE.
inline void read_shared_manifest(nlohmann::json* manifest) {
  std::ifstream mf(kSharedModels + "/manifest.json");
  ASSERT_TRUE(mf.good()) << kSharedModels
                         << "/manifest.json is missing: the shared models are expected in ../shared next to the "
                            "repository";
  *manifest = nlohmann::json::parse(mf);
}

}  // namespace gec::testing
