// StringNormalizer-10 CPU kernel: drops stop words (compared exactly, or
// after lowercasing when is_case_sensitive = 0), then applies
// case_change_action (LOWER, UPPER, NONE). Accepts [C] and [1, C] inputs;
// when every string is dropped the output is one empty string, shape [1] or
// [1, 1], as the operator text says. Case mapping is ASCII only: the
// `locale` attribute is accepted and ignored (other locales: not supported
// beyond ASCII letters).
//
// TfIdfVectorizer-9 CPU kernel: counts the pool's n-grams in each row (n in
// [min_gram_length, max_gram_length], items taken every skip+1 positions for
// skip in [0, max_skip_count]; unigrams counted once), then writes TF
// (counts), IDF (weight where the count > 0) or TFIDF (count * weight).
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_set>

#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(upper ? std::toupper(u) : std::tolower(u));
  }
  return s;
}

class StringNormalizerKernel final : public Kernel {
 public:
  explicit StringNormalizerKernel(const ir::Node& n)
      : node_(n), case_sensitive_(n.get_int("is_case_sensitive", 0) != 0) {
    const std::string action = n.get_string("case_change_action", "NONE");
    if (action == "LOWER") action_ = -1;
    else if (action == "UPPER") action_ = 1;
    else if (action != "NONE")
      fail(ErrorCode::kUnsupported, n.describe() + ": case_change_action '" + action + "' is not supported");
    if (const ir::Attribute* sw = n.find_attr("stopwords"))
      for (const std::string& w : sw->strings) stop_.insert(case_sensitive_ ? w : ascii_case(w, false));
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const bool two_d = x.shape.size() == 2;
    if (x.dtype != DType::kString || !(x.shape.size() == 1 || (two_d && x.shape[0] == 1)))
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": input must be a string tensor [C] or [1, C], got " +
                                            std::string(dtype_name(x.dtype)) + shape_str(x.shape));
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& s = x.as<std::string>()[i];
      if (stop_.count(case_sensitive_ ? s : ascii_case(s, false))) continue;
      kept.push_back(action_ == 0 ? s : ascii_case(s, action_ > 0));
    }
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    TensorView* y = ctx.allocate_output(0, DType::kString, two_d ? Shape{1, c} : Shape{c});
    std::copy(kept.begin(), kept.end(), y->as<std::string>());
  }

 private:
  const ir::Node& node_;
  bool case_sensitive_;
  int action_ = 0;  // -1 lower, 0 none, 1 upper
  std::unordered_set<std::string> stop_;
};

GEC_REGISTER_KERNEL("", "StringNormalizer", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  return std::make_unique<StringNormalizerKernel>(n);
});

template <typename Tok>
class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(const ir::Node& n, std::vector<Tok> pool) : node_(n) {
    min_n_ = n.get_int("min_gram_length", 1);
    max_n_ = n.get_int("max_gram_length", 1);
    max_skip_ = n.get_int("max_skip_count", 0);
    const std::string mode = n.get_string("mode", "TF");
    if (mode == "TF") mode_ = 0;
    else if (mode == "IDF") mode_ = 1;
    else if (mode == "TFIDF") mode_ = 2;
    else fail(ErrorCode::kUnsupported, n.describe() + ": mode '" + mode + "' is not supported");
    out_index_ = n.get_ints("ngram_indexes");
    weights_ = n.get_floats("weights");
    const std::vector<int64_t> starts = n.get_ints("ngram_counts");
    if (min_n_ < 1 || max_n_ < min_n_ || max_skip_ < 0 || static_cast<int64_t>(starts.size()) < max_n_)
      fail(ErrorCode::kInvalidModel, n.describe() + ": bad gram lengths or ngram_counts");
    // Pool n-grams of length k lie in [starts[k-1], starts[k]) (or to the end).
    int64_t id = 0;
    for (size_t k = 1; k <= starts.size(); ++k) {
      const int64_t b = starts[k - 1];
      const int64_t e = k < starts.size() ? starts[k] : static_cast<int64_t>(pool.size());
      if (b < 0 || e > static_cast<int64_t>(pool.size()) || b > e || (e - b) % static_cast<int64_t>(k) != 0)
        fail(ErrorCode::kInvalidModel, n.describe() + ": ngram_counts does not split the pool");
      for (int64_t p = b; p < e; p += static_cast<int64_t>(k), ++id)
        grams_[std::vector<Tok>(pool.begin() + p, pool.begin() + p + static_cast<int64_t>(k))] = id;
    }
    if (static_cast<int64_t>(out_index_.size()) != id || (!weights_.empty() && weights_.size() != out_index_.size()))
      fail(ErrorCode::kInvalidModel, n.describe() + ": ngram_indexes/weights do not match the pool");
  }

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& y = ctx.out(0);
    const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
    const int64_t cols = x.shape.back();
    const int64_t width = y.shape.back();
    std::vector<Tok> row(static_cast<size_t>(cols));
    std::vector<float> counts(static_cast<size_t>(width));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = token(x, r * cols + c);
      std::fill(counts.begin(), counts.end(), 0.f);
      count_row(row, counts);
      float* out = y.as<float>() + r * width;
      for (int64_t i = 0; i < width; ++i) out[i] = counts[static_cast<size_t>(i)];
    }
  }

 private:
  Tok token(const TensorView& x, int64_t i) const {
    if constexpr (std::is_same_v<Tok, std::string>) {
      return x.as<std::string>()[i];
    } else {
      if (x.dtype == DType::kInt32) return x.as<int32_t>()[i];
      if (x.dtype == DType::kInt64) return x.as<int64_t>()[i];
      fail(ErrorCode::kUnsupported, node_.describe() + ": input dtype " + dtype_name(x.dtype));
    }
  }

  void count_row(const std::vector<Tok>& row, std::vector<float>& counts) const {
    const int64_t len = static_cast<int64_t>(row.size());
    std::vector<Tok> gram;
    for (int64_t n = min_n_; n <= max_n_; ++n)
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip_); ++skip)
        for (int64_t start = 0; start + (n - 1) * (skip + 1) < len; ++start) {
          gram.clear();
          for (int64_t k = 0; k < n; ++k) gram.push_back(row[static_cast<size_t>(start + k * (skip + 1))]);
          auto it = grams_.find(gram);
          if (it == grams_.end()) continue;
          counts[static_cast<size_t>(out_index_[static_cast<size_t>(it->second)])] += 1.f;
        }
    if (mode_ == 0) return;
    // IDF / TFIDF: weights are per pool n-gram; apply through ngram_indexes.
    std::vector<float> scaled(counts.size(), 0.f);
    for (size_t g = 0; g < out_index_.size(); ++g) {
      const size_t o = static_cast<size_t>(out_index_[g]);
      const float w = weights_.empty() ? 1.f : weights_[g];
      scaled[o] = mode_ == 1 ? (counts[o] > 0 ? w : 0.f) : counts[o] * w;
    }
    counts.swap(scaled);
  }

  const ir::Node& node_;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0;
  int mode_ = 0;  // 0 TF, 1 IDF, 2 TFIDF
  std::vector<int64_t> out_index_;
  std::vector<float> weights_;
  std::map<std::vector<Tok>, int64_t> grams_;  // pool n-gram -> its index in pool order
};

GEC_REGISTER_KERNEL("", "TfIdfVectorizer", [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
  if (const ir::Attribute* s = n.find_attr("pool_strings")) return std::make_unique<TfIdfKernel<std::string>>(n, s->strings);
  return std::make_unique<TfIdfKernel<int64_t>>(n, n.get_ints("pool_int64s"));
});

}  // namespace
}  // namespace gec::kernels::cpu
