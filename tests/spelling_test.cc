#include "support/spelling.h"

#include <gtest/gtest.h>

namespace gec {
namespace {

TEST(Spelling, EditDistanceCountsEachKindOfEditOnce) {
  EXPECT_EQ(edit_distance("", ""), 0);
  EXPECT_EQ(edit_distance("bench", "bench"), 0);
  EXPECT_EQ(edit_distance("", "run"), 3);
  EXPECT_EQ(edit_distance("bnch", "bench"), 1);    // insertion
  EXPECT_EQ(edit_distance("benchh", "bench"), 1);  // deletion
  EXPECT_EQ(edit_distance("bunch", "bench"), 1);   // substitution
  EXPECT_EQ(edit_distance("benhc", "bench"), 1);   // neighbours swapped
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  // The optimal string alignment form edits no substring twice: "ca" ->
  // "abc" takes 3 (true Damerau-Levenshtein would take 2).
  EXPECT_EQ(edit_distance("ca", "abc"), 3);
  EXPECT_EQ(edit_distance("abc", "ca"), 3);
}

TEST(Spelling, ClosestNameOnlyWhenCloseEnough) {
  const std::vector<std::string> cmds{"compile", "run", "inspect", "test", "bench", "profile", "compare", "ops"};
  EXPECT_EQ(closest_name("benhc", cmds), "bench");
  EXPECT_EQ(closest_name("complie", cmds), "compile");
  EXPECT_EQ(closest_name("rn", cmds), "run");
  EXPECT_EQ(closest_name("frobnicate", cmds), "");
  EXPECT_EQ(closest_name("xyz", cmds), "");  // 3 letters allow 1 edit: "ops" is 3 away
  EXPECT_EQ(closest_name("layout_propagaton", {"cse", "layout_propagation", "winograd"}), "layout_propagation");
  EXPECT_EQ(closest_name("anything", {}), "");
}

}  // namespace
}  // namespace gec
