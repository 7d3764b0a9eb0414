// ShuffleNet's channel shuffle, spelled out by exporters, put back together:
//
//   Reshape(Transpose(Reshape(x, [N, g, C/g, S...]), perm [0, 2, 1, 3, ...]), [N, C, S...])
//       -> com.graphengine::ChannelShuffle(x, group = g)
//   ... and when x is Concat(x_0, ..., x_k-1, axis 1), read only there:
//       -> com.graphengine::ChannelShuffle(x_0, ..., x_k-1, group = g)
//
// Why: the 5-D Reshape and Transpose read and write plain data only, so in a
// ShuffleNet every block left the convolutions' nhwc for plain and came
// back through two Reorders, and the Transpose copied the map once more
// (torchvision's shufflenet_v2_x1_0: 37 Reorders, 0.7 + 0.3 ms of 3.3 in
// `gec profile`). ChannelShuffle runs per pixel in nhwc (ops/channel_
// shuffle.cc), and with the Concat folded in it writes the shuffled map
// straight from the two branches.
// Guards: every value involved has a static shape; x is [N, C, S...] (rank
// >= 3), the first Reshape gives [N, g, C/g, S...] with g > 1, the
// Transpose swaps dims 1 and 2 only, the second Reshape gives x's shape
// back; the Concat (if any) joins on dim 1. The driver's guards keep every
// intermediate value private to the pattern.
#include "ops/domain.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

std::optional<Match> match_channel_shuffle(const ir::Graph& g, ir::Node* last) {
  ir::Node* transpose = sole_producer(g, last->input(0), "Transpose");
  if (!transpose) return std::nullopt;
  ir::Node* first = sole_producer(g, transpose->input(0), "Reshape");
  if (!first) return std::nullopt;
  ir::Value* x = first->input(0);
  const auto xs = static_shape(x);
  const auto split = static_shape(first->output(0));
  const auto ys = static_shape(last->output(0));
  if (!xs || !split || !ys || xs->size() < 3 || *ys != *xs || split->size() != xs->size() + 1) return std::nullopt;
  const int64_t group = (*split)[1];
  if ((*split)[0] != (*xs)[0] || group <= 1 || (*xs)[1] % group != 0 || (*split)[2] != (*xs)[1] / group)
    return std::nullopt;
  for (size_t d = 2; d < xs->size(); ++d)
    if ((*split)[d + 1] != (*xs)[d]) return std::nullopt;
  std::vector<int64_t> perm = transpose->get_ints("perm", {});
  if (perm.size() != split->size()) return std::nullopt;
  for (size_t d = 0; d < perm.size(); ++d)
    if (perm[d] != static_cast<int64_t>(d == 1 ? 2 : d == 2 ? 1 : d)) return std::nullopt;
  Match m{last, {first, transpose, last}, {x}, group};
  // The Concat before it, on the channel dim, read only here.
  if (ir::Node* concat = sole_producer(g, x, "Concat")) {
    int64_t axis = concat->get_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(xs->size());
    bool inputs_ok = axis == 1 && !concat->inputs().empty();
    for (ir::Value* v : concat->inputs()) inputs_ok = inputs_ok && v && static_shape(v);
    if (inputs_ok) {
      m.nodes.insert(m.nodes.begin(), concat);
      m.values.assign(concat->inputs().begin(), concat->inputs().end());
    }
  }
  return m;
}

ir::Value* rewrite_channel_shuffle(ir::Graph& g, const Match& m) {
  ir::Node* n = g.add_node("ChannelShuffle", m.values, {g.unique_name(m.last->output(0)->name())}, m.last->name,
                           ops::kGecDomain);
  n->set_attr(ir::Attribute::Int("group", std::any_cast<int64_t>(m.data)));
  n->output(0)->type = m.last->output(0)->type;
  return n->output(0);
}

}  // namespace

std::vector<RewriteRule> channel_shuffle_fusion_rules() {
  return {{"channel_shuffle", {"Reshape"},
           "Reshape(Transpose(Reshape([Concat(x_i)] x, [N,g,C/g,S]), [0,2,1,...]), [N,C,S]) -> ChannelShuffle(x_i, g)",
           match_channel_shuffle, rewrite_channel_shuffle}};
}

std::unique_ptr<Pass> make_channel_shuffle_fusion() {
  return make_rule_pass("channel_shuffle_fusion", channel_shuffle_fusion_rules());
}

}  // namespace gec::passes
