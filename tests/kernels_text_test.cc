// StringNormalizer-10 and TfIdfVectorizer-9 kernel tests (operator doc
// examples and variations, worked by hand).
#include "kernels_tensor_util.h"

namespace gec {
namespace {
using namespace gec::testing;

Tensor days() { return make_str({4}, {"monday", "tuesday", "wednesday", "thursday"}); }

TEST(TextStringNormalizer, StopWordsAndCaseChange) {
  auto r = run_op("StringNormalizer", {days()},
                  {Attribute::String("case_change_action", "UPPER"), Attribute::Strings("stopwords", {"monday"})});
  EXPECT_EQ(strs(r[0]), (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "THURSDAY"}));
  auto n = run_op("StringNormalizer", {days()});
  EXPECT_EQ(strs(n[0]), (std::vector<std::string>{"monday", "tuesday", "wednesday", "thursday"}));
}

TEST(TextStringNormalizer, CaseSensitivity) {
  Tensor x = make_str({1, 3}, {"Monday", "tuesday", "MONDAY"});
  // Case-insensitive (the default): both spellings are stop words.
  auto i = run_op("StringNormalizer", {x}, {Attribute::Strings("stopwords", {"monday"})});
  EXPECT_EQ(i[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(strs(i[0]), (std::vector<std::string>{"tuesday"}));
  auto s = run_op("StringNormalizer", {x},
                  {Attribute::Strings("stopwords", {"monday"}), Attribute::Int("is_case_sensitive", 1),
                   Attribute::String("case_change_action", "LOWER")});
  EXPECT_EQ(strs(s[0]), (std::vector<std::string>{"monday", "tuesday", "monday"}));
}

TEST(TextStringNormalizer, AllDroppedGivesOneEmptyString) {
  auto r = run_op("StringNormalizer", {make_str({2}, {"a", "a"})}, {Attribute::Strings("stopwords", {"a"})});
  EXPECT_EQ(r[0].shape(), Shape{1});
  EXPECT_EQ(strs(r[0]), (std::vector<std::string>{""}));
  auto t = run_op("StringNormalizer", {make_str({1, 1}, {"a"})}, {Attribute::Strings("stopwords", {"a"})});
  EXPECT_EQ(t[0].shape(), (Shape{1, 1}));
}

// Pool: unigrams 2,3,5,4 (outputs 0-3), bigrams (5,6),(7,8),(6,7) (outputs 4-6).
std::vector<Attribute> tfidf_attrs(int64_t min_n, int64_t max_n, int64_t skip, const std::string& mode) {
  return {Attribute::Int("min_gram_length", min_n), Attribute::Int("max_gram_length", max_n),
          Attribute::Int("max_skip_count", skip), Attribute::String("mode", mode),
          Attribute::Ints("ngram_counts", {0, 4}), Attribute::Ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6}),
          Attribute::Ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}),
          Attribute::Floats("weights", {1, 2, 3, 4, 5, 6, 7})};
}

Tensor tfidf_input() { return make<int32_t>({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}); }

TEST(TextTfIdf, BigramsWithoutSkipAndUnigramIdf) {
  // Consecutive pairs include (7,8), (6,7), (5,6) once each.
  auto tf = run_op("TfIdfVectorizer", {tfidf_input()}, tfidf_attrs(2, 2, 0, "TF"));
  EXPECT_EQ(tf[0].shape(), Shape{7});
  EXPECT_EQ(values<float>(tf[0]), (std::vector<float>{0, 0, 0, 0, 1, 1, 1}));
  // Unigram counts 2:0, 3:3, 5:1, 4:0; IDF writes the weight where present.
  auto idf = run_op("TfIdfVectorizer", {tfidf_input()}, tfidf_attrs(1, 1, 0, "IDF"));
  EXPECT_EQ(values<float>(idf[0]), (std::vector<float>{0, 2, 3, 0, 0, 0, 0}));
}

TEST(TextTfIdf, SkipsAndTfIdfOnBatch) {
  // Skip 2 adds (x8, x11) = (7, 8); skip 1 matches nothing. TFIDF = count * weight.
  Tensor batch = make<int64_t>({2, 6}, {5, 6, 7, 8, 2, 2, 3, 9, 9, 9, 9, 9});
  auto r = run_op("TfIdfVectorizer", {tfidf_input()}, tfidf_attrs(2, 2, 2, "TFIDF"));
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{0, 0, 0, 0, 5, 12, 7}));
  // Rows: [5,6,7,8,2,2] has 2 twice, 5 once, (5,6),(6,7),(7,8) once; [3,9,...] has 3 once.
  auto b = run_op("TfIdfVectorizer", {batch}, tfidf_attrs(1, 2, 0, "TF"));
  EXPECT_EQ(b[0].shape(), (Shape{2, 7}));
  EXPECT_EQ(values<float>(b[0]), (std::vector<float>{2, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace gec
