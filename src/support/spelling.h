// Suggestions for misspelt names a user typed (a subcommand, a pass): the
// known name closest in edit distance, when it is close enough to be the
// one meant.
#pragma once

#include <string>
#include <vector>

namespace gec {

/// Edits that turn `a` into `b`: insertions, deletions, substitutions and
/// transpositions of two neighbouring characters, each 1, no substring
/// edited twice (the optimal string alignment form of the Damerau-Levenshtein
/// distance; Damerau 1964, "A technique for computer detection and
/// correction of spelling errors"). Bytes, not Unicode characters.
int edit_distance(const std::string& a, const std::string& b);

/// The name in `names` closest to `word` by edit_distance when at most
/// max(1, |word| / 3) edits away (the first of equally close ones); "" when
/// none is.
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace gec
