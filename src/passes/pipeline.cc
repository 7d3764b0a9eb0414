// The pass pipeline per optimization level: one readable list each. Any pass
// can be skipped by name (--disable-pass). shape_inference is last at every
// level: the memory planner trusts the static shapes it leaves.
#include <set>

#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "support/spelling.h"

namespace gec::passes {
namespace {

// -O1: cleanup that never changes how a node computes.
void add_cleanup(PassManager& pm) {
  pm.add(make_constant_folding());  // with shape folding, to a fixed point with shape inference
  pm.add(make_noop_elimination());  // Identity, Dropout, same-type Cast, same-shape Reshape, ...
  pm.add(make_cse());               // also merges identical small constants
  pm.add(make_dead_node_elimination());
}

// -O2: fold explicit padding into window ops and per-channel affine ops into the weights before them.
void add_fusion(PassManager& pm) {
  pm.add(make_pad_folding());           // Pad + Conv / MaxPool -> the window op's pads
  pm.add(make_conv_kernel_cropping());  // Conv taps that read only padding dropped
  pm.add(make_conv_bn_folding());       // Conv + BatchNormalization
  pm.add(make_conv_transpose_folding());  // ConvTranspose + BN / per-channel Mul / Add
  pm.add(make_conv_scale_folding());    // Conv + per-channel Mul / Add
  pm.add(make_gemm_bn_folding());       // Gemm / MatMul + BatchNormalization
  pm.add(make_matmul_add_to_gemm());    // MatMul + 1-D bias Add (2-D A)
  pm.add(make_transformer_fusion());    // GELU, LayerNorm, residual Add + LayerNorm, attention
  pm.add(make_matmul_epilogue_fusion());  // MatMul + bias [+ activation] -> FusedMatMul (oneDNN post-ops)
  pm.add(make_matmul_merge());          // Q, K, V projections of one input -> one product + Split
  pm.add(make_channel_shuffle_fusion());  // [Concat +] Reshape + Transpose + Reshape -> ChannelShuffle
  pm.add(make_global_pool_canonicalization());  // ReduceMean over every spatial dim -> GlobalAveragePool (after LayerNorm's)
}

}  // namespace

PassManager make_pipeline(int opt_level) {
  PassManager pm;
  if (opt_level >= 1) add_cleanup(pm);
  if (opt_level >= 2) {
    add_fusion(pm);
    pm.add(make_dead_node_elimination());
  }
  if (opt_level >= 3) {
    // One folding can expose another (Conv -> Mul -> BN: the Mul folds
    // first, then the BN), and folding leaves cleanup (duplicate biases):
    // run fusion and cleanup once more.
    add_fusion(pm);
    add_cleanup(pm);
  }
  // After every folding: a BatchNormalization none took becomes a
  // per-channel Mul + Add (any layout, fused with what follows).
  if (opt_level >= 2) pm.add(make_batchnorm_to_mul_add());
  // After every folding: those match a plain Conv, this makes it a FusedConv.
  if (opt_level >= 2) pm.add(make_conv_activation_fusion());  // + Add + Relu as oneDNN post-ops
  // Last: what the pattern rules left of elementwise chains becomes one
  // kernel per group (after them, so their specialised kernels win).
  if (opt_level >= 2) pm.add(make_autofusion());
  // Analysis every level needs: exact static shapes for memory planning.
  pm.add(make_shape_inference());
  return pm;
}

DisableNames disable_names() {
  DisableNames d;
  std::set<std::string> names;
  for (int level = 0; level <= 3; ++level)
    for (const auto& n : make_pipeline(level).names()) names.insert(n);
  d.passes.assign(names.begin(), names.end());
  for (const RewriteRule* rule : all_rules()) d.rules.push_back(rule->name);
  d.rules.push_back("channel_shuffle_split");  // channel_shuffle_fusion's fold of the Slices after a shuffle (no table rule)
  std::vector<std::string>& r = d.stages;
  r.push_back("layout_propagation");  // the schedule stage's layout assignment (-O2 and up)
  r.push_back("pack_weights");        // weights packed into the .gom at compile time (-O2 and up)
  r.push_back("winograd");            // Winograd convolutions where they pay (-O2 and up)
  r.push_back("direct_conv");         // small convolutions on the native direct loops (-O2 and up)
  r.push_back("nhwc_conv");           // strided nChw16c convolutions in oneDNN's nhwc kernel (-O2 and up)
  r.push_back("taps_conv");           // atrous convolutions as one product per tap inside X (-O2 and up)
  r.push_back("im2col_conv");         // strided (or small-map) nhwc convolutions as columns and one GEMM (-O2 and up)
  r.push_back("native_gemm");         // MatMul and Gemm on our own GEMM where oneDNN's is its sgemm (-O2 and up)
  return d;
}

std::vector<std::string> all_pass_names() {
  DisableNames d = disable_names();
  std::vector<std::string> r = std::move(d.passes);
  r.insert(r.end(), d.rules.begin(), d.rules.end());
  r.insert(r.end(), d.stages.begin(), d.stages.end());
  return r;
}

std::string unknown_pass_message(const std::string& name) {
  const DisableNames d = disable_names();
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& n : v) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  const std::string near = closest_name(name, all_pass_names());
  return "unknown pass or rule '" + name + "' (" + (near.empty() ? "" : "did you mean '" + near + "'? ") +
         "passes: " + join(d.passes) + "; rules: " + join(d.rules) + "; stages: " + join(d.stages) + ")";
}

}  // namespace gec::passes
