// Rewrite rules as a table, and the one driver that applies them.
//
// A fusion or folding is a row: its name, the op types its match starts at,
// a one-line formula, a match and a rewrite. The match only looks (it returns
// the pattern's nodes and the values the rewrite needs); the rewrite builds
// the replacement and returns the value that takes over the pattern's
// output. Everything else is the driver's, once for every rule:
//  - the shared guards: every node of the pattern is in the graph being
//    rewritten, and every value a pattern node makes, except the last node's
//    output, is read only inside the pattern and is not a graph output (so
//    removing the pattern loses nothing);
//  - the commit: the replacement takes over the last node's output (and its
//    name when it is a graph output), the replacement's producer records the
//    ONNX node names it now computes (Node::fused_from, in graph order), and
//    the pattern's nodes are removed once nothing reads them;
//  - a worklist: every node is tried once, and the nodes next to a rewrite
//    are tried again, until nothing matches (MLIR's greedy pattern driver,
//    tinygrad's graph_rewrite);
//  - counts per rule (the compile report's "rules"), disabling a rule by its
//    name (--disable-pass NAME), and an error, not silence, when the rules do
//    not settle (a rule that rewrites without shrinking the graph).
#pragma once

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gec::passes {

class Pass;

/// What a rule's match found.
struct Match {
  /// The node whose output 0 the replacement takes over (the pattern's last node).
  ir::Node* last = nullptr;
  /// Every node of the pattern, `last` included. A node the rewrite changes
  /// in place (a Conv that becomes a FusedConv) is one of them too.
  std::vector<ir::Node*> nodes;
  /// The values the rewrite reads, in the rule's own order.
  std::vector<ir::Value*> values;
  /// Anything else the match worked out (an affine map, an activation).
  std::any data;
};

/// Looks at `root` (an op of the rule's root types) and returns the pattern,
/// or nullopt. Must not change the graph.
using MatchFn = std::function<std::optional<Match>(const ir::Graph& g, ir::Node* root)>;
/// Builds the replacement for a match that passed the driver's guards and
/// returns the value that takes over `m.last`'s output 0: a new node's output
/// (typed), or the output of a pattern node changed in place. Must succeed.
using RewriteFn = std::function<ir::Value*(ir::Graph& g, const Match& m)>;

struct RewriteRule {
  std::string name;                 ///< for --disable-pass and the report's "rules"
  std::vector<std::string> roots;   ///< op types the match starts at: ai.onnx ones, or DOMAIN::OP of another domain
  std::string formula;              ///< one line, e.g. "BatchNormalization(Conv(x, W, B)) -> Conv(x, W*a, B*a+b)"
  MatchFn match;
  RewriteFn rewrite;
};

/// Applies `rules` to `g` and every subgraph until none matches; rules named
/// in `disabled` are skipped. Adds the rewrites of each rule to `hits`
/// (by rule name) and returns their total. Errors: kInternal when the rules
/// have not settled after 4 rewrites per node (plus 64) of a graph, naming
/// the rule that fired last.
int64_t apply_rules(ir::Graph& g, const std::vector<RewriteRule>& rules, const std::set<std::string>& disabled,
                    std::map<std::string, int64_t>& hits);

/// A pass made of rule rows, applied by apply_rules.
std::unique_ptr<Pass> make_rule_pass(const char* name, std::vector<RewriteRule> rules);

// The rule tables, one per pass file.
std::vector<RewriteRule> conv_bn_folding_rules();
std::vector<RewriteRule> conv_transpose_folding_rules();
std::vector<RewriteRule> conv_scale_folding_rules();
std::vector<RewriteRule> gemm_bn_folding_rules();
std::vector<RewriteRule> matmul_add_to_gemm_rules();
std::vector<RewriteRule> transformer_fusion_rules();
std::vector<RewriteRule> matmul_epilogue_fusion_rules();
std::vector<RewriteRule> conv_activation_fusion_rules();
std::vector<RewriteRule> pad_folding_rules();
std::vector<RewriteRule> conv_kernel_cropping_rules();
std::vector<RewriteRule> batchnorm_to_mul_add_rules();
std::vector<RewriteRule> channel_shuffle_fusion_rules();
std::vector<RewriteRule> global_pool_canonicalization_rules();

/// Every rule of every table (for validating --disable-pass and for docs).
std::vector<const RewriteRule*> all_rules();

}  // namespace gec::passes
