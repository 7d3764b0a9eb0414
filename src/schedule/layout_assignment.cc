// assign_layouts (schedule.h; disabled by --disable-pass layout_propagation):
// hold activations between oneDNN convolutions in a non-plain layout
// (ops/layout.h: nChw16c, or nhwc where channel counts are not multiples of
// 16 or oneDNN's nhwc kernels pay) instead of plain NCHW. "Blocked" below
// means either of the two.
//
// Why: on plain NCHW, oneDNN 2.6 runs every convolution as im2col + GEMM; on
// nChw16c src and dst it runs its direct JIT kernels, on nhwc its brgemm
// ones (both faster, and they apply eltwise post-ops in registers). A
// reorder around each convolution costs about what that saves, so the
// layout must flow from conv to conv. Mixed src/dst layouts are worse
// still: oneDNN falls back to its reference convolution (hundreds of times
// slower), except for a first convolution with 1 to 3 input channels
// (plain src, nChw16c dst is a JIT kernel; into nhwc only an nhwc src with
// 3 channels is).
//
// Which layout: values that layout-following ops connect form groups
// (LayoutGroups below; a pool that shrinks H x W ends one and starts
// another); a group is nhwc when its odd-channel values (C % 16 != 0),
// odd-group convolutions and channel moves nChw16c has no kernel for
// outweigh the in-place channel Concats and Winograd convolutions nChw16c
// would give it, or when oneDNN's brgemm convolutions and the pools save
// more in nhwc than those lose; else nChw16c.
// Both layouts have exactly NCHW's bytes (nChw16c because C % 16 == 0), so
// the value types, the memory plan and the arena stay as they are; the
// decision is returned per node (LayoutAssignment) and goes into the
// execution plan's steps, from where each kernel receives it.
//
// Which ops read and write blocked values (each input/output entry):
//   Conv, FusedConv   src and dst both blocked (or, with C <= 3, plain src
//                     and nChw16c dst, or an nhwc src reordered from the
//                     input); Z has dst's layout. Eligible when the output
//                     fits its group's layout and, for nChw16c, the groups
//                     split channels in multiples of 16 or are depthwise
//                     (oneDNN's JIT kernels have no other blocked case), and
//                     when oneDNN, asked at compile time
//                     (kernels::implementation_for_layout), has a non-
//                     reference implementation for those layouts on this
//                     CPU (none blocked without AVX-512, none for some
//                     dilations).
//   unary elementwise out[i] = f(in[i]): output has the input's layout.
//   binary elementwise when every operand is blocked with the output's shape,
//                     a one-element constant, or per channel ([N or 1, C or
//                     1, 1, 1]: read as a vector over the blocked bytes, no
//                     other broadcasting); FusedElementwise the same, for
//                     all its outputs.
//   Concat axis 1     when every input is blocked nChw16c: per batch index, each
//                     input's channel groups are one contiguous range of
//                     the output, exactly as its channels are in NCHW (so
//                     the concat kernel and the planner's in-place concat
//                     work unchanged). In an nhwc group, when its output
//                     benefits: the kernel copies each pixel's channel
//                     ranges, and the planner never places it in place
//                     (LayoutAssignment::copied_concats).
//   MaxPool, AveragePool  blocked in and out (a pool at a stage edge reads
//                     its input's group's layout and writes its output's:
//                     the pixel kernel changes layout as it pools);
//                     GlobalAverage/MaxPool read a
//                     blocked input (the [N,C,1,1] output has the same
//                     bytes in both layouts).
//   ConvTranspose     reads an nhwc input where the target has a kernel for
//                     it (the MatMul form: X's rows are its row-major src),
//                     writes plain.
//   Resize            blocked in and out when it resamples H and W only and
//                     the target has a kernel for that (the layout query:
//                     constant scales / sizes, no crop), and its output
//                     benefits (below); else plain, between Reorders of its
//                     (smaller, when upsampling) input. FPN-style necks
//                     go blocked (ppocr_v4_det's, with its nhwc Concat and
//                     ConvTranspose: 12 Reorders -> 1).
//   Slice, Split, ChannelShuffle  in their group's layout when every data
//                     input arrives in it and the target has a kernel for
//                     it: nhwc moves each pixel's channels; nChw16c only
//                     whole 16-channel blocks (a Slice or Split of
//                     channels at multiples of 16, YOLOv8-style C2f
//                     splits, or of N, H, W). Those without an nChw16c kernel count
//                     toward nhwc in the group's decision like odd-channel
//                     values (ShuffleNet's split, shuffle and Concat: no
//                     round trip to plain per block).
//   Transpose         reads a 4-D input in the layout it arrives in (the
//                     kernel permutes the held dims: nhwc's [N,H,W,C], or
//                     nChw16c's with C as its two dims) and writes a 4-D
//                     output nhwc where its group is nhwc and its output
//                     benefits, each only where the copy still moves rows
//                     (ops::held_transpose_moves_rows), else plain (behind
//                     a Reorder of its input). ConvNeXt's Transposes to
//                     and from channels last around a depthwise conv in
//                     nhwc are then contiguous copies, with no Reorder on
//                     either side.
// Everything else reads plain data. Never blocked: graph inputs and outputs,
// values read inside a subgraph, values with a dim that is not static or 0.
//
// Algorithm: (1) a forward walk in topological order gives each node its
// layouts: a convolution is blocked unless ruled out, the others follow
// their inputs as above. (2) A backward walk marks which blocked values
// "benefit": some consumer reads them blocked and is a convolution, a global
// pool, a ConvTranspose, a Transpose, or passes the layout on to a value that
// benefits. A Resize or a Transpose whose
// output does not benefit is ruled out (it writes plain). A convolution
// whose output does not benefit and whose src would need a reorder to
// blocked (or is a 1-3 channel first convolution) is ruled out: it would
// only add reorders, unless it is depthwise (blocked depthwise beats plain
// even with a reorder on each side). (1)-(2) repeat until nothing changes. (A convolution
// whose src arrives blocked stays blocked even when its output is then
// reordered: a plain one would need its src reordered instead, and run the
// slower gemm kernel.) (3) Where a consumer wants the
// other layout of a value with H*W > 1, one com.graphengine::Reorder per
// (value, layout) is inserted and shared by all such consumers (a value
// with H = W = 1 has the same bytes in every layout).
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "gec/bench.h"
#include "kernels/kernel.h"
#include "ops/layout.h"
#include "ops/op_schema.h"
#include "ops/tensor_ops.h"
#include "schedule/schedule.h"

namespace gec::schedule {
namespace {

using kernels::LayoutQuery;

using Kind = ops::LayoutRule;  // each op declares its rule on its registration

/// Which inputs/outputs of one node are (to be) blocked.
struct NodeLayout {
  std::vector<bool> in, out;
  bool any() const {
    for (bool b : in)
      if (b) return true;
    for (bool b : out)
      if (b) return true;
    return false;
  }
};


Kind kind_of(const ir::Node* n) { return ops::traits_of(*n).layout; }

/// Float32 [N,C,H,W], every dim static and > 0: a shape a non-plain layout
/// can hold with plain's bytes (nChw16c also needs C % 16 == 0).
bool layout_shape(const ir::Value* v) {
  if (!v || !v->type.is_tensor() || v->type.dtype != DType::kFloat32 || !v->type.is_static()) return false;
  const Shape s = v->type.static_shape();
  if (s.size() != 4) return false;
  for (int64_t d : s)
    if (d <= 0) return false;
  return true;
}

int64_t channels(const ir::Value* v) { return v->type.static_shape()[1]; }

bool one_element_constant(const ir::Value* v) {
  return v && v->is_constant() && v->constant->numel() == 1 && v->type.dtype == DType::kFloat32;
}

/// A layout query's answer naming an optimized implementation: not "" (no
/// kernel), "unsupported" or a reference one.
bool fast_implementation(const std::string& impl) {
  return !impl.empty() && impl != "unsupported" && !kernels::is_reference_implementation(impl);
}

/// A fast implementation that is not gemm-based: oneDNN also has a gemm
/// convolution for nhwc (on CPUs without AVX-512), no faster than plain's.
bool fast_nhwc(const std::string& impl) { return fast_implementation(impl) && impl.find("gemm") == std::string::npos; }

/// An operand [n,c,1,1] (fewer dims count as leading 1s; n in {1,N}, c in
/// {1,C}) of a broadcast to the 4-D float32 `out` [N,C,H,W]: it has the
/// same bytes in every layout, and a kernel with a non-plain output reads
/// it as a per-channel vector (kernels/cpu/common/layout_broadcast.h), as
/// in squeeze-and-excitation's x * s.
bool per_channel_operand(const ir::Value* v, const ir::Value* out) {
  if (!v || !v->type.is_tensor() || v->type.dtype != DType::kFloat32 || !v->type.is_static() || !layout_shape(out))
    return false;
  return ops::per_channel_operand(v->type.static_shape(), out->type.static_shape());
}

/// A value computed in `g` and read only by nodes of `g`, not a graph
/// output: the values this pass may hold non-plain, given the shape.
bool held_in(const ir::Graph& g, const ir::Value* v) {
  if (v->is_constant() || !v->producer() || v->producer()->owner() != &g || g.is_graph_output(v)) return false;
  for (const auto& [user, idx] : v->uses())
    if (user->owner() != &g) return false;
  return true;
}

/// A node of LayoutRule::kChannelMove (Slice, Split, ChannelShuffle) whose
/// data could be held non-plain: input 0, every other float32 input (the data
/// ChannelShuffle concatenates; Slice's and Split's other inputs are index
/// tensors, read plain) and every output are float32 [N,C,H,W] of static
/// shape.
bool channel_move_holdable(const ir::Node* n) {
  if (n->inputs().empty() || !layout_shape(n->input(0)) || n->outputs().empty()) return false;
  for (const ir::Value* o : n->outputs())
    if (!layout_shape(o)) return false;
  for (const ir::Value* v : n->inputs())
    if (v && v->type.dtype == DType::kFloat32 && !layout_shape(v)) return false;
  return true;
}

/// A pool the pixel-vector kernel runs (pool.cc's PixelPoolKernel).
bool pool_eligible(const ir::Node* n) {
  if (n->op_type == "MaxPool" && n->outputs().size() > 1 && n->output(1) && !n->output(1)->name().empty())
    return false;  // Indices: the native kernel
  return n->op_type != "MaxPool" || n->get_int("storage_order", 0) == 0;
}

/// Which non-plain layout each value would take: values that layout-
/// following ops connect (a convolution's src, dst and Z; an elementwise
/// op's operands and results; a pool's input and output, unless the pool
/// shrinks H x W of whole 16-channel blocks (stage_edge: its kernel writes
/// either layout from either, so the stages on its two sides choose their
/// own); a Concat whose
/// channel counts are all multiples of 16; a Slice's, Split's or
/// ChannelShuffle's data) form one group, held nChw16c when every value in
/// it that the pass may hold non-plain (not a graph output) has C % 16 == 0,
/// no grouped convolution splits a 16-channel block (odd_group_channels) and
/// no channel move lacks an nChw16c kernel (their data then counts as
/// odd-channel elements), or it holds such channel Concats moving at least as
/// many elements as its odd-channel values hold (in nChw16c a Concat writes
/// its inputs in place, in nhwc it could not: GoogLeNet's 24-channel 5x5
/// branches and SqueezeNet's 1000-class head are the few), or the Winograd
/// convolutions it allows save more than its odd-channel values cost (the
/// constructor's `variants`; oneDNN has Winograd for nChw16c only), and
/// nhwc otherwise; a group so held nChw16c still goes nhwc where oneDNN's
/// brgemm convolutions and the pools save more there than its in-place
/// Concats and Winograd convolutions lose (nhwc_share, winograd_share and
/// the constants below; GoogLeNet's 14x14 and 7x7 stages). One layout per
/// group, because oneDNN 2.6 has no fast convolution with nChw16c on one
/// side and nhwc on the other (ref:any). (Measured: nhwc brgemm
/// convolutions run 2-3x faster than the plain gemm ones on 24- and
/// 72-channel ones, where nChw16c would pad, and within 0.63-1.01x of
/// nChw16c's direct ones on 16-multiple ones, fastest on small maps.)
class LayoutGroups {
 public:
  /// Share of a convolution's direct time oneDNN's Winograd kernel saves
  /// (measured here: it takes 0.37-0.82 of it on the shapes it is chosen for).
  static constexpr double kWinogradSaving = 0.3;
  /// Extra time, in units of its own direct time, of an odd-channel conv run
  /// plain between Reorders instead of nhwc (measured standalone: 24 and 72
  /// channels, oneDNN's plain gemm 2.3-4.2x its nhwc brgemm time).
  static constexpr double kPlainConvPenalty = 3.0;
  /// FLOP-equivalents of the Reorders of one odd-channel element (a read and
  /// a write of 4 bytes each way, ~20 GB/s, against ~450 GFLOP/s of conv).
  static constexpr double kReorderFlopsPerElement = 400.0;
  /// FLOP-equivalents of one tap of a pool on 16-float pixels (GoogLeNet's
  /// 3x3 MaxPools in nChw16c: 20-40 at 300 GFLOP/s of conv), and the share
  /// pixels of C floats save (nhwc: 0.41-0.58 of the time, 0.50 on
  /// ResNet-50's).
  static constexpr double kPoolFlopsPerTap = 30.0;
  static constexpr double kPoolNhwcSaving = 0.5;
  /// FLOP-equivalents of an nhwc Concat's copy of one output element
  /// (GoogLeNet's and SqueezeNet's: 0.23-0.28 ns per element).
  static constexpr double kConcatCopyFlopsPerElement = 80.0;

  /// A convolution's time in nhwc, in units of oneDNN 2.6's nChw16c direct
  /// kernel's. Where its nhwc kernel is a brgemm one (its implementation
  /// name says "brg"), measured per node in GoogLeNet and ResNet-50
  /// compiled whole each way (`gec profile`, 2 threads, this AVX-512 host):
  /// spatial kernels over at most 16x16 output pixels 0.63-0.77, 28x28
  /// 0.68-0.87, larger ones 0.86-1.01; 1x1 convolutions 0.67-0.97. Another
  /// fast nhwc kernel (a JIT one), and any grouped or depthwise conv (not
  /// measured): 1, no gain counted. None (a gemm or reference one, or no
  /// answer): the conv would run plain between Reorders, 1 +
  /// kPlainConvPenalty.
  static double nhwc_share(const LayoutQuery& query, const ir::Node* n, const Shape& ws) {
    if (n->get_int("group", 1) != 1) return 1.0;
    if (!query || ws.size() != 4 || !n->output(0)->type.is_static()) return 1.0 + kPlainConvPenalty;
    const Shape ys = n->output(0)->type.static_shape();
    if (ys.size() != 4) return 1.0 + kPlainConvPenalty;
    const std::string impl = query(*n, ops::Layout::kNhwc, ops::Layout::kNhwc);
    if (impl.find("brg") == std::string::npos)
      return fast_implementation(impl) && impl.find("gemm") == std::string::npos ? 1.0 : 1.0 + kPlainConvPenalty;
    const int64_t pixels = ys[2] * ys[3];
    if (ws[2] * ws[3] == 1) return pixels <= 32 * 32 ? 0.95 : 1.0;
    return pixels <= 16 * 16 ? 0.72 : pixels <= 32 * 32 ? 0.85 : 1.0;
  }
  /// A convolution's time in nChw16c, in the same units: 1 for the direct
  /// kernel, less for the Winograd one (0.37-0.67 of it from 28x28 output
  /// pixels up, 0.64-0.92 below; bench/results.md).
  static double winograd_share(const ir::Node* n, bool winograd) {
    if (!winograd) return 1.0;
    const Shape ys = n->output(0)->type.static_shape();
    return ys[2] * ys[3] >= 28 * 28 ? 0.6 : 0.75;
  }
  /// A pool at the edge of two stages (LayoutGroups joins its input and
  /// output to no common group): it shrinks H x W, its input has whole
  /// 16-channel blocks, and the native kernel runs it (pool_eligible).
  static bool stage_edge(const ir::Node* n) {
    const ir::Value* x = n->input(0);
    const ir::Value* y = n->outputs().empty() ? nullptr : n->output(0);
    if (!layout_shape(x) || !layout_shape(y) || !pool_eligible(n) || channels(x) % ops::kBlockedChannels != 0)
      return false;
    const Shape xs = x->type.static_shape(), ys = y->type.static_shape();
    return xs[0] == ys[0] && ys[2] * ys[3] < xs[2] * xs[3];
  }

  /// `variants`: the target's kernel variant choice (kernels::
  /// choose_variant), or empty to weigh no Winograd gains. `query`: the
  /// target's layout query; a Resize joins its input's and output's groups
  /// only where it has a non-plain kernel for it.
  LayoutGroups(const ir::Graph& g, const std::vector<ir::Node*>& nodes, const kernels::VariantChoice& variants,
               const LayoutQuery& query) {
    std::vector<const ir::Node*> convs;  // joined to their input's group
    std::vector<const ir::Node*> pools;
    std::vector<const ir::Node*> first_convs;  // 1-3 input channels: a plain src
    for (const ir::Node* n : nodes) {
      const ir::Value* out = n->outputs().empty() ? nullptr : n->output(0);
      switch (kind_of(n)) {
        case Kind::kConv:
          if (layout_shape(n->input(0)) && channels(n->input(0)) > 3) {
            unite(n->input(0), out);
            convs.push_back(n);
          } else if (layout_shape(n->input(0)) && layout_shape(out)) {
            first_convs.push_back(n);
          }
          if (n->has_input(3)) unite(n->input(3), out);
          if (odd_group_channels(n)) {
            odd_group_convs_.push_back(out);
            odd_group_srcs_.push_back(n->input(0));
          }
          break;
        case Kind::kUnaryPassThrough:
          unite(n->input(0), out);
          break;
        case Kind::kPool:
          // A pool that shrinks H x W of whole 16-channel blocks ends one
          // group and starts another (its kernel writes either layout from
          // either: the stages on each side of it choose their own).
          if (stage_edge(n)) {
            add(n->input(0));
            add(out);
          } else {
            unite(n->input(0), out);
          }
          pools.push_back(n);
          break;
        case Kind::kResize:
          if (layout_shape(n->input(0)) && layout_shape(out) &&
              fast_implementation(query(*n, ops::Layout::kNhwc, ops::Layout::kNhwc)))
            unite(n->input(0), out);
          break;
        case Kind::kBinaryPassThrough:
        case Kind::kElementwiseGroup:
          for (const ir::Value* v : n->inputs())
            if (v && !v->is_constant() && out && v->type == out->type) unite(v, out);
          for (const ir::Value* o : n->outputs()) unite(o, out);
          break;
        case Kind::kConcat: {
          bool all16 = layout_shape(out) && channels(out) % ops::kBlockedChannels == 0;
          for (const ir::Value* v : n->inputs())
            all16 = all16 && layout_shape(v) && channels(v) % ops::kBlockedChannels == 0;
          if (all16) {
            for (const ir::Value* v : n->inputs()) unite(v, out);
            if (n->get_int("axis", 0) == 1 || n->get_int("axis", 0) == -3) in_place_concats_.push_back(out);
          }
          break;
        }
        case Kind::kChannelMove:
          // Those without an nChw16c kernel (a ChannelShuffle, a Slice of
          // channels that are not whole 16-channel blocks) run plain
          // between Reorders in an nChw16c group: weighed like odd-channel
          // values below.
          if (channel_move_holdable(n)) {
            for (const ir::Value* v : n->inputs())
              if (layout_shape(v)) unite(v, out);
            for (const ir::Value* o : n->outputs()) unite(o, out);
            if (!fast_implementation(kernels::implementation_for_layout(*n, ops::Layout::kNChw16c,
                                                                        ops::Layout::kNChw16c)))
              channel_moves_.push_back(n);
          }
          break;
        case Kind::kGlobalPool:
        case Kind::kConvTranspose:
        case Kind::kTranspose:
        case Kind::kPlainOnly:
          break;
      }
    }
    // A group keeps nChw16c for its in-place Concats when they move at
    // least as many elements as its odd-channel values hold (those then run
    // plain, between Reorders); else nhwc, and the Concats copy. GoogLeNet:
    // 512-832-channel Concats against a few 24-channel branches; DeepLabV3's
    // MobileNetV3 backbone: one 1280 x 14 x 14 Concat against dozens of
    // 24-120-channel maps.
    // Only values the pass may hold non-plain count: a graph output (a
    // class head, say) stays plain whatever its channel count.
    std::unordered_map<const ir::Value*, int64_t> concat_elems, odd_elems;  // by root
    for (const ir::Value* v : in_place_concats_)
      if (parent_.count(v)) concat_elems[root(v)] += shape_numel(v->type.static_shape());
    for (const auto& [v, parent] : parent_)
      if (channels(v) % ops::kBlockedChannels != 0 && held_in(g, v))
        odd_elems[root(v)] += shape_numel(v->type.static_shape());
    // A grouped conv nChw16c cannot run counts like them, with its input and
    // output (plain, it would read and write both through Reorders).
    for (size_t i = 0; i < odd_group_convs_.size(); ++i) {
      const ir::Value* v = odd_group_convs_[i];
      if (parent_.count(v))
        odd_elems[root(v)] += shape_numel(v->type.static_shape()) + shape_numel(odd_group_srcs_[i]->type.static_shape());
    }
    // So do channel moves (Slice, Split, ChannelShuffle: nhwc or plain
    // only): in nChw16c their data goes through Reorders. ShuffleNet V2
    // x0.5's 48- to 192-channel stages, without an odd count, went nChw16c
    // and kept 26 Reorders around their shuffles.
    std::vector<const ir::Value*> moved;  // a value of each channel move's group
    for (const ir::Node* n : channel_moves_) {
      // (A Slice or Split of the batch dim joins no group: unite needs one N.)
      for (const ir::Value* v : n->inputs())
        if (layout_shape(v) && parent_.count(v) && held_in(g, v)) odd_elems[root(v)] += shape_numel(v->type.static_shape());
      for (const ir::Value* o : n->outputs())
        if (parent_.count(o) && held_in(g, o)) odd_elems[root(o)] += shape_numel(o->type.static_shape());
      moved.push_back(n->output(0));
    }
    // A group also keeps nChw16c when the Winograd convolutions it allows
    // (oneDNN has them for nChw16c only) save more than its odd-channel
    // values cost there: FCN-ResNet50's backbone and 2048 -> 512 3x3 head
    // against one 21-class 1x1 conv (nhwc, every 3x3 conv ran direct: the
    // head alone took 45 ms of 137). In FLOPs: Winograd saves about
    // kWinogradSaving of a conv's direct work; an odd-channel (or odd-group)
    // conv that runs plain instead of nhwc costs up to kPlainConvPenalty
    // times its work more, and each odd-channel element about
    // kReorderFlopsPerElement for its Reorders.
    // Time a group's convolutions would save in nhwc (FLOP-equivalents of
    // the nChw16c direct kernel, negative where they would lose): see
    // nhwc_share and winograd_share above.
    std::unordered_map<const ir::Value*, double> nhwc_gain;  // by root
    std::unordered_set<const ir::Value*> unweighed;          // roots the weighing leaves alone
    std::unordered_map<const ir::Value*, double> wino_flops, odd_conv_flops;  // by root
    for (const ir::Node* n : convs) {
      const ir::Value* x = n->input(0);
      const ir::Value* y = n->output(0);
      if (!parent_.count(y) || !n->input(1) || !n->input(1)->type.is_static()) continue;
      const Shape ws = n->input(1)->type.static_shape();
      double flops = 2.0 * static_cast<double>(shape_numel(y->type.static_shape()));
      for (size_t d = 1; d < ws.size(); ++d) flops *= static_cast<double>(ws[d]);
      const bool odd = (channels(x) % ops::kBlockedChannels != 0 && held_in(g, x)) ||
                       (channels(y) % ops::kBlockedChannels != 0 && held_in(g, y)) || odd_group_channels(n);
      if (odd) {
        odd_conv_flops[root(y)] += flops;
      } else if (channels(x) % ops::kBlockedChannels == 0 && held_in(g, y)) {
        // Only a conv that can run nChw16c -> nChw16c (a graph output stays plain).
        bool winograd = false;
        if (variants) {
          kernels::KernelConfig c = kernels::KernelConfig::for_node(*n);
          c.input_layouts.assign(n->inputs().size(), ops::Layout::kPlain);
          c.input_layouts[0] = ops::Layout::kNChw16c;
          if (n->has_input(3)) c.input_layouts[3] = ops::Layout::kNChw16c;
          c.output_layouts = {ops::Layout::kNChw16c};
          winograd = variants(*n, c) == "winograd";
          if (winograd) wino_flops[root(y)] += flops;
        }
        nhwc_gain[root(y)] += (winograd_share(n, winograd) - nhwc_share(query, n, ws)) * flops;
        // A grouped (not depthwise) conv of whole 16-channel groups: nhwc
        // unmeasured per node, and RegNetX-400MF (groups of 16) whole in
        // nhwc took 1.12x its nChw16c time: such a group stays as it is.
        const int64_t group = n->get_int("group", 1);
        if (group > 1 && !(group == channels(x) && group == channels(y))) unweighed.insert(root(y));
      }
    }
    // A group none of whose convolutions this target runs fast in nChw16c,
    // while some run fast in nhwc, goes nhwc whatever the weighing below
    // says: oneDNN 2.6 has nChw16c JIT convolutions for AVX-512 only, while
    // on AVX2 its jit:avx2 / jit_1x1:avx2 / jit_dw:avx2 kernels take nhwc
    // (an AVX2 EPYC: ResNet-50 in plain NCHW ran each convolution between
    // two internal reorders and its MaxPool on oneDNN's simple_nchw, 8.5
    // ms). A first convolution (1-3 input channels, a plain src) counts
    // with its output's group. (With AVX-512 a group's ordinary
    // convolutions have nChw16c kernels: an odd-group one among them is
    // weighed as before.)
    std::unordered_set<const ir::Value*> no16, has16;  // roots
    if (query) {
      for (const ir::Node* n : convs) {
        const ir::Value* y = n->output(0);
        if (!parent_.count(y)) continue;
        if (fast_implementation(query(*n, ops::Layout::kNChw16c, ops::Layout::kNChw16c)))
          has16.insert(root(y));
        else if (fast_nhwc(query(*n, ops::Layout::kNhwc, ops::Layout::kNhwc)))
          no16.insert(root(y));
      }
      for (const ir::Node* n : first_convs) {
        const ir::Value* y = n->output(0);
        if (!parent_.count(y)) continue;
        if (fast_implementation(query(*n, ops::Layout::kPlain, ops::Layout::kNChw16c)))
          has16.insert(root(y));
        else if (fast_nhwc(query(*n, ops::Layout::kPlain, ops::Layout::kNhwc)) ||
                 fast_nhwc(query(*n, ops::Layout::kNhwc, ops::Layout::kNhwc)))
          no16.insert(root(y));
      }
      for (const ir::Value* r : has16) no16.erase(r);
    }
    std::unordered_set<const ir::Value*> keep16;  // roots of groups whose Concats or Winograd convolutions win
    for (const auto& [r, n] : concat_elems)
      if (n >= odd_elems[r]) keep16.insert(r);
    for (const auto& [r, f] : wino_flops)
      if (kWinogradSaving * f >= kPlainConvPenalty * odd_conv_flops[r] +
                                     kReorderFlopsPerElement * static_cast<double>(odd_elems[r]))
        keep16.insert(r);
    for (const auto& [v, parent] : parent_)
      if (channels(v) % ops::kBlockedChannels != 0 && held_in(g, v) && !keep16.count(root(v)))
        channels_last_.insert(root(v));
    for (const ir::Value* v : odd_group_convs_)
      if (parent_.count(v) && !keep16.count(root(v))) channels_last_.insert(root(v));
    for (const ir::Value* v : moved)
      if (parent_.count(v) && odd_elems[root(v)] > 0 && !keep16.count(root(v))) channels_last_.insert(root(v));
    // A group left nChw16c takes nhwc after all where that saves time:
    // oneDNN's brgemm convolutions (nhwc) against its direct ones
    // (nChw16c; nhwc_share), the pools (pixels of C floats: about half the
    // time of 16-float ones, measured on GoogLeNet's and ResNet-50's), less
    // the Concats nhwc copies and nChw16c writes in place (odd-channel
    // values were weighed above: a group they left nChw16c keeps them
    // plain unless this flips it). GoogLeNet's 14x14 and
    // 7x7 Inception stages go nhwc (-1.0 ms of 11 in `gec profile`); its
    // 28x28 ones, ResNet-50 and SqueezeNet keep their Winograd
    // convolutions and in-place Concats in nChw16c.
    // (A pool at a stage edge is left out: it moves whole nhwc pixels only
    // when both of its sides end up nhwc.)
    for (const ir::Node* n : pools) {
      const ir::Value* y = n->output(0);
      if (stage_edge(n) || !parent_.count(n->input(0)) || !held_in(g, n->input(0)) || !held_in(g, y) ||
          !pool_eligible(n) || !layout_shape(y))
        continue;
      double taps = static_cast<double>(shape_numel(y->type.static_shape()));
      for (int64_t k : n->get_ints("kernel_shape")) taps *= static_cast<double>(k);
      nhwc_gain[root(n->input(0))] += kPoolFlopsPerTap * kPoolNhwcSaving * taps;
    }
    for (const auto& [r, n] : concat_elems) nhwc_gain[r] -= kConcatCopyFlopsPerElement * static_cast<double>(n);
    // A first convolution (1-3 input channels) reads a plain src into
    // nChw16c, but into nhwc only after a Reorder of it (3 channels: oneDNN's
    // brgemm kernel; fast_layouts) or, with 1 or 2, it runs plain and its
    // output is reordered.
    for (const ir::Node* n : first_convs) {
      const ir::Value *x = n->input(0), *y = n->output(0);
      // (No Reorder when x is itself held nhwc: its group decided so above.)
      if (!parent_.count(y) || !nhwc_gain.count(root(y)) || (parent_.count(x) && channels_last_.count(root(x))))
        continue;
      // One Reorder, where kReorderFlopsPerElement counts a round trip.
      const ir::Value* moved = channels(x) == 3 ? x : y;
      nhwc_gain[root(y)] -=
          0.5 * kReorderFlopsPerElement * static_cast<double>(shape_numel(moved->type.static_shape()));
    }
    for (const auto& [r, gain] : nhwc_gain)
      if (gain > 0 && !unweighed.count(r)) channels_last_.insert(r);
    channels_last_.insert(no16.begin(), no16.end());
  }

  /// nChw16c or nhwc for a value of layout_shape.
  ops::Layout of(const ir::Value* v) const {
    if (parent_.count(v)) return channels_last_.count(root(v)) ? ops::Layout::kNhwc : ops::Layout::kNChw16c;
    return channels(v) % ops::kBlockedChannels == 0 ? ops::Layout::kNChw16c : ops::Layout::kNhwc;
  }

 private:
  const ir::Value* root(const ir::Value* v) const {  // with path halving
    while (parent_.at(v) != v) {
      const ir::Value* up = parent_.at(parent_.at(v));
      parent_[v] = up;
      v = up;
    }
    return v;
  }
  /// A grouped, not depthwise, convolution whose groups are not whole
  /// 16-channel blocks (ResNeXt's 32 groups of 4 or 8 channels): nChw16c
  /// has only ref:any for it, plain only gemm (15-40 GFLOP/s measured
  /// standalone on ResNeXt-50's shapes), nhwc a JIT kernel 4-5x faster.
  static bool odd_group_channels(const ir::Node* n) {
    const ir::Value* x = n->input(0);
    const ir::Value* y = n->outputs().empty() ? nullptr : n->output(0);
    const int64_t group = n->get_int("group", 1);
    if (group <= 1 || !layout_shape(x) || !layout_shape(y)) return false;
    const int64_t ic = channels(x), oc = channels(y);
    if (group == ic && group == oc) return false;  // depthwise: blocked kernels of its own
    return (ic / group) % ops::kBlockedChannels != 0 || (oc / group) % ops::kBlockedChannels != 0;
  }
  void add(const ir::Value* v) { parent_.emplace(v, v); }
  void unite(const ir::Value* a, const ir::Value* b) {
    if (!layout_shape(a) || !layout_shape(b) || a->type.static_shape()[0] != b->type.static_shape()[0]) return;
    add(a);
    add(b);
    const ir::Value *ra = root(a), *rb = root(b);
    if (ra != rb) parent_[ra] = rb;
  }

  std::vector<const ir::Value*> in_place_concats_;  // outputs of channel Concats nChw16c can hold
  std::vector<const ir::Value*> odd_group_convs_;   // outputs of convolutions odd_group_channels
  std::vector<const ir::Node*> channel_moves_;      // channel_move_holdable nodes without an nChw16c kernel
  std::vector<const ir::Value*> odd_group_srcs_;    // and their inputs
  mutable std::unordered_map<const ir::Value*, const ir::Value*> parent_;
  std::unordered_set<const ir::Value*> channels_last_;  // roots of nhwc groups
};

/// A shape its group's layout holds with plain's bytes.
bool blockable_shape(const LayoutGroups& groups, const ir::Value* v) {
  return layout_shape(v) && ops::layout_fits_channels(groups.of(v), channels(v));
}

/// H = W = 1: every layout of ops/layout.h has plain's bytes; no reorder.
bool layout_free(const ir::Value* v) { return ops::same_bytes_in_every_layout(v->type.static_shape()); }

/// A value this pass may hold non-plain: computed in `g`, blockable shape,
/// not a graph output, read only by nodes of `g`.
bool candidate(const ir::Graph& g, const LayoutGroups& groups, const ir::Value* v) {
  return blockable_shape(groups, v) && held_in(g, v);
}

/// A convolution oneDNN may run with a non-plain dst: 2-D, and either a
/// first convolution (1-3 input channels, one group: plain src) or src and
/// dst in their group's layout, for nChw16c with input channels and groups
/// as the AVX-512 direct kernels take them (whole 16-channel blocks per
/// group, or depthwise); the layout query then has the last word.
bool conv_eligible(const ir::Graph& g, const LayoutGroups& groups, const ir::Node* n) {
  const ir::Value* x = n->input(0);
  const ir::Value* w = n->input(1);
  if (!candidate(g, groups, n->output(0)) || !x || !w || !x->type.is_static() || !w->type.is_static()) return false;
  if (x->type.dtype != DType::kFloat32 || x->type.static_shape().size() != 4 || w->type.static_shape().size() != 4)
    return false;
  const int64_t ic = x->type.static_shape()[1], oc = n->output(0)->type.static_shape()[1];
  const int64_t group = n->get_int("group", 1);
  if (group == 1 && ic >= 1 && ic <= 3) return true;  // plain src
  if (!blockable_shape(groups, x) || group < 1) return false;
  if (groups.of(x) == ops::Layout::kNhwc) return true;
  const bool depthwise = group == ic && group == oc;
  return depthwise || ((ic / group) % ops::kBlockedChannels == 0 && (oc / group) % ops::kBlockedChannels == 0);
}

/// The layouts (src, dst) in which the target runs this convolution non-
/// plain with an optimized implementation, or nullopt when it would only
/// have a reference (unoptimized) one: oneDNN 2.6 has nChw16c JIT
/// convolutions for AVX-512 only (on an AVX2 CPU every blocked conv became
/// ref:any, ~300x slower), none for some shapes (large dilations) on any
/// CPU, and none from a plain src into an nhwc dst (ref:any, measured
/// 0.2 s for mobilenet_v2's first conv). Such a conv stays plain, where
/// oneDNN has gemm-based code; so does one whose nhwc implementation would
/// be gemm-based too. A first convolution (1-3 input channels)
/// tries a plain src, then for an nhwc dst an nhwc src (a small Reorder of
/// the input; oneDNN's brgemm kernel takes 3 channels, not 1).
std::optional<std::pair<ops::Layout, ops::Layout>> fast_layouts(const LayoutQuery& query, const LayoutGroups& groups,
                                                               const ir::Node* n) {
  const ops::Layout dst = groups.of(n->output(0));
  std::vector<std::pair<ops::Layout, ops::Layout>> tries;
  if (channels(n->input(0)) > 3) {
    tries.push_back({dst, dst});
  } else {
    tries.push_back({ops::Layout::kPlain, dst});
    // The src is then held in its own group's layout: nhwc too, unless
    // that group keeps nChw16c (which cannot hold 1-3 channels).
    if (dst == ops::Layout::kNhwc && groups.of(n->input(0)) == ops::Layout::kNhwc) tries.push_back({dst, dst});
  }
  for (const auto& t : tries) {
    const std::string impl = query(*n, t.first, t.second);
    // nhwc pays only with a direct or brgemm kernel: oneDNN also has a gemm
    // one for nhwc (on CPUs without AVX-512), no faster than plain's.
    const bool gemm = t.second == ops::Layout::kNhwc && impl.find("gemm") != std::string::npos;
    if (!impl.empty() && impl != "unsupported" && !kernels::is_reference_implementation(impl) && !gemm) return t;
  }
  return std::nullopt;
}

class LayoutAssigner {
 public:
  LayoutAssigner(LayoutQuery query, kernels::VariantChoice variants)
      : query_(std::move(query)), variants_(std::move(variants)) {}

  LayoutAssignment run(ir::Graph& g) {
    g.topo_sort();
    nodes_ = g.node_list();
    groups_ = std::make_unique<LayoutGroups>(g, nodes_, variants_, query_);
    std::unordered_set<const ir::Node*> ruled_out;
    while (true) {
      forward(g, ruled_out);
      const size_t before = ruled_out.size();
      prune(ruled_out);
      if (ruled_out.size() == before) break;
    }
    return materialize(g);
  }

 private:
  bool blocked(const ir::Value* v) const { return v && blocked_.count(v); }

  /// (1): the layouts of every node, given the convolutions ruled out.
  void forward(const ir::Graph& g, const std::unordered_set<const ir::Node*>& ruled_out) {
    layouts_.clear();
    blocked_.clear();
    for (ir::Node* n : nodes_) {
      NodeLayout& l = layouts_[n];
      l.in.assign(n->inputs().size(), false);
      l.out.assign(n->outputs().size(), false);
      decide(g, n, ruled_out.count(n) > 0, l);
      for (size_t i = 0; i < l.out.size(); ++i)
        if (l.out[i]) blocked_.insert(n->output(i));
    }
  }

  void decide(const ir::Graph& g, const ir::Node* n, bool ruled_out, NodeLayout& l) const {
    const ir::Value* out = n->output(0);
    switch (kind_of(n)) {
      case Kind::kConv: {
        if (ruled_out || !conv_eligible(g, *groups_, n) || (n->has_input(3) && n->input(3)->is_constant())) return;
        const auto layouts = fast_layouts(query_, *groups_, n);
        if (!layouts) return;
        l.out[0] = true;
        l.in[0] = layouts->first != ops::Layout::kPlain;
        if (n->has_input(3)) l.in[3] = true;  // Z follows dst
        return;
      }
      case Kind::kUnaryPassThrough:
        for (size_t i = 1; i < n->inputs().size(); ++i)
          if (n->has_input(i) && !one_element_constant(n->input(i))) return;
        if (blocked(n->input(0)) && candidate(g, *groups_, out)) l.in[0] = l.out[0] = true;
        return;
      case Kind::kBinaryPassThrough:
      case Kind::kElementwiseGroup: {
        for (const ir::Value* o : n->outputs())
          if (!candidate(g, *groups_, o) || o->type.static_shape() != out->type.static_shape()) return;
        std::vector<bool> in(n->inputs().size(), false);
        for (size_t i = 0; i < in.size(); ++i) {
          const ir::Value* v = n->input(i);
          if (one_element_constant(v) || per_channel_operand(v, out)) continue;
          if (!blocked(v) || v->type.static_shape() != out->type.static_shape()) return;
          in[i] = true;
        }
        for (bool b : in)
          if (b) l.in = in, l.out.assign(l.out.size(), true);
        return;
      }
      case Kind::kPool:
        if (blocked(n->input(0)) && candidate(g, *groups_, out) && pool_eligible(n)) l.in[0] = l.out[0] = true;
        return;
      case Kind::kResize: {
        if (ruled_out || !blocked(n->input(0)) || !candidate(g, *groups_, out)) return;
        const ops::Layout layout = groups_->of(out);
        if (groups_->of(n->input(0)) != layout || !fast_implementation(query_(*n, layout, layout))) return;
        l.in[0] = l.out[0] = true;
        return;
      }
      case Kind::kGlobalPool:
        l.in[0] = blocked(n->input(0));  // output: same bytes either way, call it plain
        return;
      case Kind::kConvTranspose:  // an nhwc X is the MatMul's row-major src as it is
        l.in[0] = blocked(n->input(0)) && groups_->of(n->input(0)) == ops::Layout::kNhwc &&
                  fast_implementation(query_(*n, ops::Layout::kNhwc, ops::Layout::kPlain));
        return;
      case Kind::kTranspose: {  // a permutation of the held dims
        const ir::Value* x = n->input(0);
        if (n->inputs().size() != 1 || !layout_shape(x) || !layout_shape(out)) return;
        const Shape xs = x->type.static_shape();
        if (n->has_attr("perm") && n->get_ints("perm").size() != 4) return;
        const std::vector<int64_t> perm = ops::transpose_perm(n->get_ints("perm"), n->has_attr("perm"), 4);
        const ops::Layout in = blocked(x) ? groups_->of(x) : ops::Layout::kPlain;
        // The output held nhwc where its group is (prune rules that out
        // unless a consumer gains): a ConvNeXt-style Transpose back from
        // channels last is then one contiguous copy. Either side non-plain
        // only where the copy still moves rows (a gather of single
        // elements can cost more than a Reorder and a tiled transpose).
        const bool nhwc_out = !ruled_out && candidate(g, *groups_, out) && groups_->of(out) == ops::Layout::kNhwc;
        for (const auto& [i, o] : {std::pair{in, nhwc_out ? ops::Layout::kNhwc : ops::Layout::kPlain},
                                   std::pair{in, ops::Layout::kPlain},
                                   std::pair{ops::Layout::kPlain, nhwc_out ? ops::Layout::kNhwc : ops::Layout::kPlain}})
          if ((i != ops::Layout::kPlain || o != ops::Layout::kPlain) && ops::held_transpose_moves_rows(i, o, xs, perm)) {
            l.in[0] = i != ops::Layout::kPlain;
            l.out[0] = o != ops::Layout::kPlain;
            return;
          }
        return;
      }
      case Kind::kConcat: {
        int64_t axis = n->get_int("axis", 0);
        if (axis < 0) axis += 4;
        if (axis != 1 || !candidate(g, *groups_, out) || n->inputs().empty()) return;
        // nChw16c: each input's channel blocks are one range of the output
        // (the in-place Concat works unchanged). nhwc: the kernel copies
        // each pixel's channels, never in place (the planner is told), so
        // only where its output benefits (prune).
        const ops::Layout layout = groups_->of(out);
        if (layout == ops::Layout::kNhwc && ruled_out) return;
        // Blocked when the blocked inputs hold at least as many elements as
        // the plain ones, which are then reordered in: the Concat runs in
        // place and its output needs no Reorder back, where a plain Concat
        // would reorder every blocked input out and copy them all (GoogLeNet's
        // Inception-4 blocks: one plain 64-channel branch behind a 24-channel
        // conv among three blocked ones).
        int64_t blocked_elems = 0, plain_elems = 0;
        for (const ir::Value* v : n->inputs()) {
          if (!v || v->is_constant() || !layout_shape(v) || groups_->of(v) != layout ||
              !ops::layout_fits_channels(layout, channels(v)))
            return;
          if (blocked(v))
            blocked_elems += shape_numel(v->type.static_shape());
          else if (!layout_free(v))  // same bytes in both layouts: no Reorder
            plain_elems += shape_numel(v->type.static_shape());
        }
        if (blocked_elems == 0 || blocked_elems < plain_elems) return;
        l.in.assign(l.in.size(), true);
        l.out[0] = true;
        return;
      }
      case Kind::kChannelMove: {
        // In the group's layout when every data input arrives in it and
        // the target has a kernel for that (kernels::
        // implementation_for_layout, the target's own answer: the query
        // this pass is given may stand in for oneDNN's convolutions only).
        if (!channel_move_holdable(n)) return;
        const ops::Layout layout = groups_->of(out);
        if (!fast_implementation(kernels::implementation_for_layout(*n, layout, layout))) return;
        for (const ir::Value* o : n->outputs())
          if (!candidate(g, *groups_, o) || groups_->of(o) != layout) return;
        std::vector<bool> in(n->inputs().size(), false);  // all data inputs or none
        for (size_t i = 0; i < in.size(); ++i) {
          const ir::Value* v = n->input(i);
          if (!layout_shape(v)) continue;  // Slice's starts, ends, ...: plain
          if (!blocked(v) || groups_->of(v) != layout) return;
          in[i] = true;
        }
        l.in = in;
        l.out.assign(l.out.size(), true);
        return;
      }
      case Kind::kPlainOnly:
        return;
    }
  }

  /// (2): rules out every convolution whose blocked output no consumer
  /// gains from.
  void prune(std::unordered_set<const ir::Node*>& ruled_out) const {
    std::unordered_set<const ir::Value*> benefit;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
      for (const ir::Value* v : (*it)->outputs())
        if (blocked(v) && gains(v, benefit)) benefit.insert(v);
    for (ir::Node* n : nodes_) {
      const Kind k = kind_of(n);
      if ((k != Kind::kConv && k != Kind::kResize && k != Kind::kConcat && k != Kind::kTranspose) ||
          !layouts_.at(n).out[0] ||
          benefit.count(n->output(0)) ||
          (k == Kind::kConcat && groups_->of(n->output(0)) != ops::Layout::kNhwc))
        continue;
      // A Resize, a Transpose or an nhwc Concat whose output no consumer
      // gains from writes plain: the Resize's Reorder then moves its
      // (smaller, upsampling) input, and the plain Concat may run in place.
      if (k != Kind::kConv || (!src_arrives_blocked(n) && !depthwise(n) && !pays_for_its_reorders(n)))
        ruled_out.insert(n);
    }
  }

  /// A convolution with enough arithmetic per byte of its src and dst
  /// gains blocked even when both must be reordered: plain, it runs as
  /// oneDNN 2.6's gemm convolution (80-150 GFLOP/s here where its nhwc /
  /// nChw16c ones reach 180-200: about 4e-12 s saved per FLOP) or, for
  /// columns of at most 8 MiB, as a MatMul of X's columns, which copies X
  /// KH*KW times (two Reorders copy it twice); a Reorder moves
  /// about 11 GB/s (ppocr_v4_det's [1,96,160,160]: 1.7 ms), about 9e-11 s per
  /// byte: the break-even is near 20 FLOP per byte, the rule asks for 40.
  /// (ppocr_v4_det's 96 -> 24 channel 3x3 conv on 160x160 after a Concat of
  /// plain Resize outputs: 87 FLOP/byte, 13 ms plain; a 1x1 conv from 96 to
  /// 24 channels: 10 FLOP/byte, stays plain.)
  static bool pays_for_its_reorders(const ir::Node* n) {
    constexpr double kMinFlopsPerByte = 40;
    const ir::Value *x = n->input(0), *w = n->input(1), *y = n->output(0);
    if (!x || !w || !y || !x->type.is_static() || !w->type.is_static() || !y->type.is_static()) return false;
    const Shape xs = x->type.static_shape(), ys = y->type.static_shape();
    const double flops = node_flops(n->op_type, {xs, w->type.static_shape()}, {ys});  // the cost model's count
    const double bytes = 4.0 * static_cast<double>(shape_numel(xs) + shape_numel(ys));
    return bytes > 0 && flops / bytes >= kMinFlopsPerByte;
  }

  /// A depthwise convolution (group = C > 3) gains by itself even between
  /// two reorders: oneDNN 2.6 runs it plain as im2col + GEMM per channel
  /// (mobilenet_v2's 144-channel 56x56 one: 1.5 ms), blocked as its jit_dw
  /// kernel (about 0.1 ms), and each reorder of that tensor takes ~0.05 ms.
  static bool depthwise(const ir::Node* n) {
    const ir::Value* x = n->input(0);
    if (!x || !x->type.is_static() || x->type.static_shape().size() != 4) return false;
    const int64_t c = x->type.static_shape()[1];
    return c > 3 && n->get_int("group", 1) == c;
  }

  /// A blocked convolution reading its src blocked without a reorder: it
  /// gains by itself (a JIT kernel instead of the gemm one), and a plain one
  /// would need its src reordered instead of its dst.
  bool src_arrives_blocked(const ir::Node* n) const {
    const ir::Value* x = n->input(0);
    return layouts_.at(n).in[0] && (blocked(x) || layout_free(x));
  }

  bool gains(const ir::Value* v, const std::unordered_set<const ir::Value*>& benefit) const {
    for (const auto& [user, idx] : v->uses()) {
      const NodeLayout& l = layouts_.at(user);
      if (!l.in[static_cast<size_t>(idx)]) continue;
      const Kind k = kind_of(user);
      if (k == Kind::kConv || k == Kind::kGlobalPool || k == Kind::kConvTranspose || k == Kind::kTranspose)
        return true;
      for (size_t j = 0; j < l.out.size(); ++j)
        if (l.out[j] && benefit.count(user->output(j))) return true;
    }
    return false;
  }

  /// (3): the layouts of every node that has a blocked input or output,
  /// shared Reorders where a consumer wants the other layout.
  LayoutAssignment materialize(ir::Graph& g) {
    LayoutAssignment r;
    r.blocked_values = static_cast<int64_t>(blocked_.size());
    std::map<std::pair<ir::Value*, bool>, ir::Value*> reorders;  // (value, to blocked) -> reordered value
    for (ir::Node* n : nodes_) {
      const NodeLayout& l = layouts_.at(n);
      if (!l.any()) continue;
      auto codes = [&](const std::vector<bool>& b, const std::vector<ir::Value*>& values) {
        std::vector<ops::Layout> s;
        for (size_t i = 0; i < b.size(); ++i) s.push_back(b[i] ? groups_->of(values[i]) : ops::Layout::kPlain);
        return s;
      };
      r.nodes[n] = NodeLayouts{codes(l.in, n->inputs()), codes(l.out, n->outputs())};
      if (kind_of(n) == Kind::kConcat && l.out[0] && groups_->of(n->output(0)) == ops::Layout::kNhwc)
        r.copied_concats.insert(n);
      for (size_t i = 0; i < l.out.size(); ++i)
        if (l.out[i] && groups_->of(n->output(i)) == ops::Layout::kNhwc) ++r.channels_last_values;
    }
    for (ir::Node* n : nodes_) {
      const NodeLayout& l = layouts_.at(n);
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        ir::Value* v = n->input(i);
        if (!v || v->is_constant() || l.in[i] == blocked(v) || layout_free(v)) continue;
        ir::Value*& re = reorders[{v, l.in[i]}];
        if (!re) {
          re = add_reorder(g, v, groups_->of(v), l.in[i]);
          ++r.reorders;
        }
        n->set_input(i, re);
      }
    }
    if (!reorders.empty()) g.topo_sort();
    return r;
  }

  /// A Reorder of `v` between plain and `layout`, into `layout` when `to_layout`.
  static ir::Value* add_reorder(ir::Graph& g, ir::Value* v, ops::Layout layout, bool to_layout) {
    const char* from = ops::layout_name(to_layout ? ops::Layout::kPlain : layout);
    const char* to = ops::layout_name(to_layout ? layout : ops::Layout::kPlain);
    ir::Node* r = g.add_node(ops::kReorderOp, {v}, {g.unique_name(v->name() + "_" + to)},
                             g.unique_name("reorder_" + v->name()), ops::kGecDomain);
    r->set_attr(ir::Attribute::String("from", from));
    r->set_attr(ir::Attribute::String("to", to));
    r->output(0)->type = v->type;
    return r->output(0);
  }

  std::vector<ir::Node*> nodes_;
  std::unordered_map<const ir::Node*, NodeLayout> layouts_;
  std::unordered_set<const ir::Value*> blocked_;  // values held non-plain (in their group's layout)
  std::unique_ptr<LayoutGroups> groups_;
  LayoutQuery query_;
  kernels::VariantChoice variants_;
};

}  // namespace

LayoutAssignment assign_layouts(ir::Graph& g, LayoutQuery query, kernels::VariantChoice variants) {
  return LayoutAssigner(query ? std::move(query) : LayoutQuery(kernels::implementation_for_layout), std::move(variants))
      .run(g);
}

}  // namespace gec::schedule
