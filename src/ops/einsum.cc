// Einsum-12 schema and equation parsing (see ops/einsum.h). The output dtype
// is the inputs' (they must agree); the shape follows from the equation.
#include "ops/einsum.h"

#include <algorithm>
#include <map>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

constexpr int kLetters = 52;

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One term ("ij...k"): letters before and after the ellipsis.
struct Term {
  std::vector<int> head, tail;
  bool ellipsis = false;
};

Term parse_term(const std::string& s, const std::function<void(const std::string&)>& err) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis) err("term '" + s + "' has two ellipses");
      t.ellipsis = true;
      i += 2;
      continue;
    }
    const int l = letter_label(s[i]);
    if (l < 0) err(std::string("bad character '") + s[i] + "' in einsum term '" + s + "'");
    (t.ellipsis ? t.tail : t.head).push_back(l);
  }
  return t;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

}  // namespace

EinsumPlan plan_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                       const std::function<void(const std::string&)>& err) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  const std::vector<std::string> in_terms = split(explicit_out ? eq.substr(0, arrow) : eq, ',');
  if (in_terms.size() != shapes.size())
    err("equation '" + equation + "' has " + std::to_string(in_terms.size()) + " input terms for " +
        std::to_string(shapes.size()) + " inputs");

  EinsumPlan p;
  std::vector<Term> terms;
  size_t ell_rank = 0;
  for (size_t i = 0; i < in_terms.size(); ++i) {
    terms.push_back(parse_term(in_terms[i], err));
    const Term& t = terms.back();
    const size_t letters = t.head.size() + t.tail.size();
    if (shapes[i].size() < letters || (!t.ellipsis && shapes[i].size() != letters))
      err("term '" + in_terms[i] + "' does not match input " + std::to_string(i) + " of shape " +
          shape_str(shapes[i]));
    if (t.ellipsis) ell_rank = std::max(ell_rank, shapes[i].size() - letters);
  }
  p.label_size.assign(kLetters + ell_rank, -1);
  std::map<int, int> occurrences;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    std::vector<int> labels = t.head;
    if (t.ellipsis) {
      const size_t e = shapes[i].size() - t.head.size() - t.tail.size();
      for (size_t j = 0; j < e; ++j) labels.push_back(kLetters + static_cast<int>(ell_rank - e + j));
    }
    labels.insert(labels.end(), t.tail.begin(), t.tail.end());
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t n = shapes[i][d];
      int64_t& size = p.label_size[static_cast<size_t>(l)];
      if (size < 0 || size == 1) size = n;
      else if (n != 1 && n != size)
        err("einsum dimension for '" + in_terms[i] + "' has size " + std::to_string(n) + ", expected " +
            std::to_string(size));
      if (l < kLetters) ++occurrences[l];
    }
    p.input_labels.push_back(std::move(labels));
  }
  for (size_t j = 0; j < ell_rank; ++j) {
    const int l = kLetters + static_cast<int>(j);
    if (p.label_size[static_cast<size_t>(l)] < 0) p.label_size[static_cast<size_t>(l)] = 1;
  }

  if (explicit_out) {
    const std::string out_term = eq.substr(arrow + 2);
    const Term t = parse_term(out_term, err);
    p.output_labels = t.head;
    if (t.ellipsis)
      for (size_t j = 0; j < ell_rank; ++j) p.output_labels.push_back(kLetters + static_cast<int>(j));
    p.output_labels.insert(p.output_labels.end(), t.tail.begin(), t.tail.end());
    for (size_t i = 0; i < p.output_labels.size(); ++i) {
      const int l = p.output_labels[i];
      if (l < kLetters && !occurrences.count(l)) err("output letter of '" + equation + "' is not in any input");
      if (std::count(p.output_labels.begin(), p.output_labels.end(), l) > 1)
        err("output of '" + equation + "' repeats a letter");
    }
  } else {
    for (size_t j = 0; j < ell_rank; ++j) p.output_labels.push_back(kLetters + static_cast<int>(j));
    // Alphabetical in ASCII order: uppercase (labels 26..51) before lowercase.
    std::vector<int> once;
    for (const auto& [l, n] : occurrences)
      if (n == 1) once.push_back(l);
    std::sort(once.begin(), once.end(), [](int a, int b) { return (a + 26) % kLetters < (b + 26) % kLetters; });
    p.output_labels.insert(p.output_labels.end(), once.begin(), once.end());
  }
  for (size_t l = 0; l < p.label_size.size(); ++l)
    if (p.label_size[l] >= 0 &&
        std::find(p.output_labels.begin(), p.output_labels.end(), static_cast<int>(l)) == p.output_labels.end())
      p.sum_labels.push_back(static_cast<int>(l));
  for (int l : p.output_labels) p.output_shape.push_back(p.label_size[static_cast<size_t>(l)]);
  return p;
}

namespace {

void infer_einsum(InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.error("needs at least one input");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.dtype(i) != ctx.dtype(0)) ctx.error("inputs have different dtypes");
    shapes.push_back(ctx.shape(i));
  }
  const EinsumPlan p = plan_einsum(ctx.node->get_string("equation", ""), shapes,
                                   [&ctx](const std::string& m) { ctx.error(m); });
  ctx.set_output(0, ctx.dtype(0), p.output_shape);
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "Einsum", .infer = infer_einsum, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
