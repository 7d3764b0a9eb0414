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
//
// Then the channel ranges read from the shuffled map, when they are all it
// is read for, become its outputs:
//
//   Slice(ChannelShuffle(x_i), [o_j], [o_j + k_j], axes [1]) for j = 0..m-1
//   (or one Split of it on dim 1)  ->  ChannelShuffle(x_i, split = [k_0, ...])
//
// Why: ShuffleNet V2's next block halves the map again (torch.chunk), two
// Slices that copied it once more (torchvision's shufflenet_v2_x0_5: 26
// Slices, 0.13 of 1.4 ms); the shuffle writes the halves instead. Guards:
// the shuffled map is no graph output and is read only by those Slices
// (constant bounds, step 1, every dim but 1 whole) or that Split (on dim
// 1), whose ranges cover its channels once each, in one contiguous run per
// output.
#include <algorithm>

#include "ops/domain.h"
#include "ops/tensor_ops.h"
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

/// The channels [first, first + count) of `v` ([N, C, ...]) that Slice `n`
/// reads from it (ONNX Slice-13's bounds, ops::compute_slice), or nullopt
/// when it reads anything else (another dim, a step, non-constant bounds).
std::optional<std::pair<int64_t, int64_t>> channel_range(const ir::Node* n, const ir::Value* v) {
  if (!is_op(n, "Slice") || n->input(0) != v || n->inputs().size() < 3) return std::nullopt;
  const auto vs = static_shape(v);
  const auto starts = const_ints(n->input(1));
  const auto ends = const_ints(n->input(2));
  // Absent axes and steps: empty (compute_slice's defaults).
  const std::optional<std::vector<int64_t>> none = std::vector<int64_t>{};
  const auto axes = n->has_input(3) ? const_ints(n->input(3)) : none;
  const auto steps = n->has_input(4) ? const_ints(n->input(4)) : none;
  if (!vs || vs->size() < 2 || !starts || !ends || !axes || !steps) return std::nullopt;
  std::vector<ops::SliceAxis> sl;
  try {
    sl = ops::compute_slice(*vs, *starts, *ends, *axes, *steps,
                            [](const std::string& why) { fail(ErrorCode::kInvalidModel, why); });
  } catch (const Error&) {
    return std::nullopt;  // bounds the Slice itself refuses
  }
  for (size_t d = 0; d < sl.size(); ++d)
    if (sl[d].step != 1 || (d != 1 && (sl[d].start != 0 || sl[d].count != (*vs)[d]))) return std::nullopt;
  return std::make_pair(sl[1].start, sl[1].count);
}

/// ChannelShuffle `n` without a split whose one output is read only by
/// channel Slices or one channel Split that cover it once: the shuffle
/// takes their outputs (rule at the top of this file).
bool fold_channel_ranges(ir::Graph& g, ir::Node* n) {
  if (n->domain != ops::kGecDomain || n->op_type != "ChannelShuffle" || n->has_attr("split") ||
      n->outputs().size() != 1)
    return false;
  ir::Value* y = n->output(0);
  const auto ys = static_shape(y);
  if (!ys || ys->size() < 2 || g.is_graph_output(y) || y->uses().empty()) return false;
  struct Part {
    int64_t first, count;
    ir::Value* value;
  };
  std::vector<Part> parts;
  std::vector<ir::Node*> readers;
  for (const auto& [user, idx] : y->uses()) {
    if (user->owner() != &g) return false;
    if (std::find(readers.begin(), readers.end(), user) == readers.end()) readers.push_back(user);
  }
  for (ir::Node* r : readers) {
    if (is_op(r, "Split")) {
      if (readers.size() != 1 || r->input(0) != y) return false;
      int64_t axis = r->get_int("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(ys->size());
      if (axis != 1) return false;
      int64_t first = 0;
      for (ir::Value* o : r->outputs()) {
        if (!o) return false;  // an output left out
        const auto os = static_shape(o);
        if (!os || os->size() != ys->size()) return false;
        parts.push_back({first, (*os)[1], o});
        first += (*os)[1];
      }
    } else if (const auto range = channel_range(r, y)) {
      parts.push_back({range->first, range->second, r->output(0)});
    } else {
      return false;
    }
  }
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.first < b.first; });
  int64_t next = 0;
  for (const Part& p : parts) {
    if (p.first != next || p.count < 1) return false;
    next += p.count;
  }
  if (next != (*ys)[1] || parts.size() < 2) return false;
  std::vector<std::string> names;
  std::vector<int64_t> split;
  for (const Part& p : parts) {
    names.push_back(g.unique_name(p.value->name() + "/shuffled"));
    split.push_back(p.count);
  }
  ir::Node* f = g.add_node("ChannelShuffle", n->inputs(), names, n->name, ops::kGecDomain);
  f->set_attr(ir::Attribute::Int("group", n->get_int("group", 0)));
  f->set_attr(ir::Attribute::Ints("split", split));
  f->fused_from = n->fused_from.empty() ? std::vector<std::string>{n->name} : n->fused_from;
  for (ir::Node* r : readers) f->fused_from.push_back(r->name);
  for (size_t j = 0; j < parts.size(); ++j) {
    f->output(j)->type = parts[j].value->type;
    GEC_CHECK(replace_value_keeping_name(g, parts[j].value, f->output(j)),
              "channel_shuffle_fusion: cannot replace " + parts[j].value->name());
  }
  for (ir::Node* r : readers) g.remove_node(r);
  g.remove_node(n);
  return true;
}

class ChannelShuffleFusion final : public Pass {
 public:
  ChannelShuffleFusion() : rules_(make_rule_pass("channel_shuffle_fusion", channel_shuffle_fusion_rules())) {}
  const char* name() const override { return "channel_shuffle_fusion"; }
  int64_t run(ir::Graph& g) override {
    const int64_t fused = rules_->run(g);
    folded_ = 0;
    // rewrite_to_fixed_point sorts every graph it changed.
    if (!disabled_.count("channel_shuffle_split")) folded_ = rewrite_to_fixed_point(g, fold_channel_ranges);
    return fused + folded_;
  }
  void set_disabled(const std::set<std::string>& rules) override {
    disabled_ = rules;
    rules_->set_disabled(rules);
  }
  std::map<std::string, int64_t> rule_hits() const override {
    auto hits = rules_->rule_hits();
    hits["channel_shuffle_split"] = folded_;
    return hits;
  }

 private:
  std::unique_ptr<Pass> rules_;
  std::set<std::string> disabled_;
  int64_t folded_ = 0;
};

}  // namespace

std::vector<RewriteRule> channel_shuffle_fusion_rules() {
  return {{"channel_shuffle", {"Reshape"},
           "Reshape(Transpose(Reshape([Concat(x_i)] x, [N,g,C/g,S]), [0,2,1,...]), [N,C,S]) -> ChannelShuffle(x_i, g)",
           match_channel_shuffle, rewrite_channel_shuffle}};
}

std::unique_ptr<Pass> make_channel_shuffle_fusion() { return std::make_unique<ChannelShuffleFusion>(); }

}  // namespace gec::passes
