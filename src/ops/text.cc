// Schemas of the text ops: StringNormalizer-10 and TfIdfVectorizer-9
// (ai.onnx operator text). StringNormalizer's output length depends on which
// strings are stop words, so its kernel allocates the output
// (shape_from_kernel).
#include <algorithm>

#include "ops/op_schema.h"

namespace gec::ops {
namespace {

// TfIdfVectorizer: X [C] or [N, C] -> float [max(ngram_indexes) + 1] or [N, that].
void infer_tfidf(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  if (x.empty() || x.size() > 2) ctx.error("input must be [C] or [N, C], got " + shape_str(x));
  const std::vector<int64_t> idx = ctx.node->get_ints("ngram_indexes");
  int64_t width = 0;
  for (int64_t i : idx) {
    if (i < 0) ctx.error("ngram_indexes must be >= 0");
    width = std::max(width, i + 1);
  }
  ctx.set_output(0, DType::kFloat32, x.size() == 1 ? Shape{width} : Shape{x[0], width});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "TfIdfVectorizer", .infer = infer_tfidf, .traits = traits(PatternKind::kOpaque)});

GEC_REGISTER_OP({.domain = "",
                 .op_type = "StringNormalizer",
                 .infer = [](InferContext&) { throw NeedsValue{}; },
                 .deterministic = true,
                 .shape_from_kernel = true, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
