// Schema of com.graphengine::ChannelShuffle, ShuffleNet's channel shuffle
// (Zhang et al., "ShuffleNet", CVPR 2018, section 3.1; Ma et al.,
// "ShuffleNet V2", ECCV 2018) of the channel concatenation of its inputs:
//   cat = Concat(x_0, ..., x_k-1, axis = 1)        [N, C, ...], C = sum of C_i
//   y[n, j * group + i, ...] = cat[n, i * (C / group) + j, ...]
//                                   for 0 <= i < group, 0 <= j < C / group
// ONNX has no such op: exporters spell it Reshape [N, group, C/group, ...],
// Transpose perm [0, 2, 1, ...], Reshape [N, C, ...] after the Concat; the
// pass channel_shuffle_fusion puts it together. Inputs: one or more tensors
// of one dtype and rank >= 2, equal in every dim but 1. Attribute group
// (int, >= 1, dividing C). Output: [N, C, ...] of that dtype; or, with the
// attribute split (ints, each >= 1, summing to C), one output per entry,
// output j = y[:, o_j : o_j + split[j], ...] with o_j the sum of the
// entries before it (the same pass folds the Slices or Split of ShuffleNet
// V2's next block, which halve y, into the op). Errors (kInvalidModel): no
// input, mixed dtypes or shapes, a group that does not divide C, a channel
// count past int64, a split that does not sum to C or whose length is not
// the output count, several outputs without a split. Runs plain, or per
// pixel on nhwc tensors (LayoutRule::kChannelMove).
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void infer_channel_shuffle(InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.error("needs at least one input");
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) ctx.error("input " + std::to_string(i) + " is missing");
  Shape out = ctx.shape(0);
  if (out.size() < 2) ctx.error("inputs must have rank >= 2, got " + shape_str(out));
  out[1] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.shape(i);
    if (ctx.dtype(i) != ctx.dtype(0))
      ctx.error(std::string("input dtypes differ: ") + dtype_name(ctx.dtype(0)) + " and " + dtype_name(ctx.dtype(i)));
    bool same = s.size() == out.size();
    for (size_t d = 0; same && d < s.size(); ++d) same = d == 1 || s[d] == ctx.shape(0)[d];
    if (!same) ctx.error("input shapes " + shape_str(ctx.shape(0)) + " and " + shape_str(s) + " differ outside dim 1");
    if (__builtin_add_overflow(out[1], s[1], &out[1])) ctx.error("the concatenated channel count overflows int64");
  }
  const int64_t group = ctx.node->get_int("group", 0);
  if (group < 1 || out[1] % group != 0)
    ctx.error("group " + std::to_string(group) + " must be >= 1 and divide the " + std::to_string(out[1]) +
              " channels");
  const size_t outputs = ctx.node->outputs().size();
  if (!ctx.node->has_attr("split")) {
    if (outputs != 1) ctx.error("has " + std::to_string(outputs) + " outputs but no split attribute");
    ctx.set_output(0, ctx.dtype(0), out);
    return;
  }
  const std::vector<int64_t> split = ctx.node->get_ints("split");
  if (split.size() != outputs)
    ctx.error("split has " + std::to_string(split.size()) + " entries for " + std::to_string(outputs) + " outputs");
  int64_t sum = 0;
  for (int64_t k : split) {
    if (k < 1) ctx.error("split entries must be >= 1");
    if (__builtin_add_overflow(sum, k, &sum)) ctx.error("split overflows int64");
  }
  if (sum != out[1])
    ctx.error("split sums to " + std::to_string(sum) + ", not the " + std::to_string(out[1]) + " channels");
  for (size_t j = 0; j < outputs; ++j) {
    Shape sj = out;
    sj[1] = split[j];
    ctx.set_output(j, ctx.dtype(0), sj);
  }
}

}  // namespace

GEC_REGISTER_OP({.domain = kGecDomain,
                 .op_type = "ChannelShuffle",
                 .infer = infer_channel_shuffle,
                 .traits = traits(PatternKind::kInjective).with_layout(LayoutRule::kChannelMove)});

}  // namespace gec::ops
