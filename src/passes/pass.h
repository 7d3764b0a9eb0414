// Graph passes and the PassManager that runs them.
//
// A pass rewrites an ir::Graph in place and returns how many changes it made
// (nodes removed, folded, fused ...). Passes keep every graph output's name
// and value. The PassManager times each pass, counts nodes before/after, runs
// the IR verifier after each pass when asked, and records one JSON object per
// pass for the compile report.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gec/compiler.h"
#include "ir/graph.h"

namespace gec::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  /// Stable name used by --disable-pass and in the report.
  virtual const char* name() const = 0;
  /// Rewrites `g` (the main graph; passes recurse into subgraphs themselves
  /// where that is meaningful). Returns the number of changes.
  virtual int64_t run(ir::Graph& g) = 0;
  /// Rule passes (rewrite_rules.h): skip the rules of these names.
  virtual void set_disabled(const std::set<std::string>&) {}
  /// Rule passes: rewrites per rule in the last run.
  virtual std::map<std::string, int64_t> rule_hits() const { return {}; }
};

struct PassStats {
  std::string name;
  double ms = 0;
  size_t nodes_before = 0, nodes_after = 0;
  int64_t changes = 0;
  std::map<std::string, int64_t> rules;  // rewrites per rule (rule passes)
};

class PassManager {
 public:
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  /// Runs every pass not named in opts.disabled_passes, in order.
  std::vector<PassStats> run(ir::Graph& g, const CompileOptions& opts);
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

/// The pass list for an optimization level (pipeline.cc): -O0 none (only the
/// analyses every plan needs), -O1 cleanup, -O2 + fusion, -O3 everything.
PassManager make_pipeline(int opt_level);
/// Every pass name any level uses, then every rewrite rule name (both valid
/// for --disable-pass), then the compile stages --disable-pass also takes
/// ("layout_propagation": the schedule stage's layout assignment,
/// schedule/schedule.h; "pack_weights": the compiler's packed weights in
/// the .gom, compiler/compile.cc; the convolution variants' stages).
std::vector<std::string> all_pass_names();
/// The same names by kind: passes, rewrite rules, compile stages.
struct DisableNames {
  std::vector<std::string> passes, rules, stages;
};
DisableNames disable_names();
/// The error text for a --disable-pass name none of those is:
/// "unknown pass or rule 'NAME' (passes: ...; rules: ...; stages: ...)".
std::string unknown_pass_message(const std::string& name);

/// Recomputes value types with ops/ infer functions (shape_inference.cc);
/// returns how many types changed.
int64_t infer_static_shapes(ir::Graph& g);

// Factories, one per pass file.
std::unique_ptr<Pass> make_dead_node_elimination();
std::unique_ptr<Pass> make_noop_elimination();  // Identity, Dropout, same-shape reshapes, ...
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_cse();
std::unique_ptr<Pass> make_pad_folding();
std::unique_ptr<Pass> make_conv_kernel_cropping();
std::unique_ptr<Pass> make_channel_shuffle_fusion();
std::unique_ptr<Pass> make_global_pool_canonicalization();  // ReduceMean over H, W -> GlobalAveragePool
std::unique_ptr<Pass> make_batchnorm_to_mul_add();
std::unique_ptr<Pass> make_conv_bn_folding();
std::unique_ptr<Pass> make_conv_transpose_folding();
std::unique_ptr<Pass> make_conv_scale_folding();
std::unique_ptr<Pass> make_gemm_bn_folding();
std::unique_ptr<Pass> make_matmul_add_to_gemm();
std::unique_ptr<Pass> make_conv_activation_fusion();  // Conv + Add + activation -> FusedConv
std::unique_ptr<Pass> make_transformer_fusion();  // GELU, LayerNorm spelled out -> one op; attention
std::unique_ptr<Pass> make_matmul_epilogue_fusion();  // MatMul + bias + activation -> FusedMatMul
std::unique_ptr<Pass> make_matmul_merge();  // projections of one input -> one FusedMatMul + Split
std::unique_ptr<Pass> make_autofusion();  // elementwise groups -> FusedElementwise
std::unique_ptr<Pass> make_shape_inference();

/// Writes `g` as DIR/NN_<tag>.onnx, DIR/NN_<tag>.gir (textual IR) and
/// DIR/NN_<tag>.dot (+ .svg when `dot` is on PATH); graph_dump.cc. Errors: kIo when DIR cannot be written.
void dump_graph(const ir::Graph& g, const std::string& dir, int index, const std::string& tag);

}  // namespace gec::passes
