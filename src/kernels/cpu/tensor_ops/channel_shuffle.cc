// com.graphengine::ChannelShuffle (ops/channel_shuffle.cc): the channel
// concatenation of the inputs, channel c of it written to channel
// (c % (C / group)) * group + c / (C / group) of Y, Y being the outputs side
// by side on dim 1 (attribute split: one output per entry).
//   plain: every (n, c) moves one contiguous run of the spatial dims;
//   nhwc (4-D, every input and output [N][H][W][C_i] in memory): every
//   pixel scatters its channels through one table, so a ShuffleNet block's
//   Concat, shuffle and the Slices after it stay in the convolutions' nhwc
//   (LayoutRule::kChannelMove) instead of going through plain and back.
// Threads split (n, c) pairs (plain) or pixels (nhwc).
#include <algorithm>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/layout.h"

namespace gec::kernels::cpu {
namespace {

class ChannelShuffleKernel final : public Kernel {
 public:
  ChannelShuffleKernel(const ir::Node& n, const KernelConfig& config)
      : what_(n.describe()),
        group_(n.get_int("group", 0)),
        split_(n.has_attr("split")),
        layout_(config.output_layout(0)) {
    for (size_t i = 0; i < n.inputs().size(); ++i)
      if (config.input_layout(i) != layout_)
        fail(ErrorCode::kInvalidModel,
             what_ + ": every input must have the output's layout " + ops::layout_name(layout_));
    for (size_t j = 1; j < n.outputs().size(); ++j)
      if (config.output_layout(j) != layout_)
        fail(ErrorCode::kInvalidModel, what_ + ": every output must have one layout");
    if (layout_ != ops::Layout::kPlain && layout_ != ops::Layout::kNhwc)
      fail(ErrorCode::kInvalidModel, what_ + ": runs plain or nhwc, not " + ops::layout_name(layout_));
  }

  void run(KernelContext& ctx) override {
    // Y is the outputs side by side on dim 1 (one output without split).
    const size_t outs = ctx.outputs.size();
    if (outs == 0) fail(ErrorCode::kInvalidModel, what_ + ": has no output");
    Shape ys = ctx.out(0).shape;
    if (ys.size() < 2) fail(ErrorCode::kInvalidModel, what_ + ": outputs must have rank >= 2");
    std::vector<int64_t> offset(outs + 1, 0);  // output j holds Y's channels [offset[j], offset[j + 1])
    for (size_t j = 0; j < outs; ++j) {
      if (ctx.out(j).dtype != ctx.out(0).dtype) fail(ErrorCode::kInvalidModel, what_ + ": output dtypes differ");
      const Shape& sj = ctx.out(j).shape;
      bool same = sj.size() == ys.size();
      for (size_t d = 0; same && d < sj.size(); ++d) same = d == 1 || sj[d] == ys[d];
      if (!same) fail(ErrorCode::kInvalidModel, what_ + ": output shapes differ outside dim 1");
      offset[j + 1] = offset[j] + sj[1];
    }
    ys[1] = offset[outs];
    const int64_t c = ys[1];
    int64_t in_channels = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const Shape& si = ctx.in(i).shape;
      bool same = si.size() == ys.size();
      for (size_t d = 0; same && d < si.size(); ++d) same = d == 1 || si[d] == ys[d];
      if (!same) fail(ErrorCode::kInvalidModel, what_ + ": input " + std::to_string(i) + " " + shape_str(si) +
                                                    " does not fit the outputs outside dim 1");
      in_channels += si[1];
    }
    if (in_channels != c)
      fail(ErrorCode::kInvalidModel, what_ + ": the inputs have " + std::to_string(in_channels) +
                                         " channels, the outputs " + std::to_string(c));
    if (group_ < 1 || c % group_ != 0)
      fail(ErrorCode::kInvalidModel, what_ + ": group " + std::to_string(group_) + " does not divide " +
                                         std::to_string(c) + " channels");
    if (layout_ == ops::Layout::kNhwc && ys.size() != 4)
      fail(ErrorCode::kInvalidModel, what_ + ": planned in layout nhwc, which needs 4-D tensors");
    const int64_t per_group = c / group_;
    // Per channel k of the concatenation: its output and channel there.
    std::vector<std::pair<size_t, int64_t>> dst(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      const int64_t t = (k % per_group) * group_ + k / per_group;  // Y's channel
      const size_t j = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), t) - offset.begin()) - 1;
      dst[static_cast<size_t>(k)] = {j, t - offset[j]};
    }
    int64_t inner = 1;
    for (size_t d = 2; d < ys.size(); ++d) inner *= ys[d];
    const int64_t batch = ys[0];
    if (batch * c * inner == 0) return;
    dispatch_by_size(ctx.out(0).dtype, what_, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> y(outs);
      for (size_t j = 0; j < outs; ++j) y[j] = ctx.out(j).as<T>();
      const auto width = [&](size_t j) { return offset[j + 1] - offset[j]; };
      if (layout_ == ops::Layout::kNhwc && group_ == 2 && ctx.inputs.size() == 2 &&
          ctx.in(0).shape[1] == per_group && (outs == 1 || (outs == 2 && width(0) == per_group && per_group % 2 == 0))) {
        // ShuffleNet's case: two branches of C/2 channels interleaved, a
        // loop the compiler vectorizes (unpack shuffles); split in halves,
        // each half of Y interleaves the halves of the branches.
        const T* a = ctx.in(0).as<const T>();
        const T* b2 = ctx.in(1).as<const T>();
        const int64_t run = per_group / static_cast<int64_t>(outs);  // channels of each branch per output
        parallel_chunks(batch * inner, batch * inner * c, ctx.num_threads, [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p)
            for (size_t j = 0; j < outs; ++j) {
              T* __restrict out = y[j] + p * width(j);
              const T* __restrict x0 = a + p * per_group + static_cast<int64_t>(j) * run;
              const T* __restrict x1 = b2 + p * per_group + static_cast<int64_t>(j) * run;
              for (int64_t i = 0; i < run; ++i) {
                out[2 * i] = x0[i];
                out[2 * i + 1] = x1[i];
              }
            }
        });
        return;
      }
      if (layout_ == ops::Layout::kNhwc) {
        parallel_chunks(batch * inner, batch * inner * c, ctx.num_threads, [&](int64_t b, int64_t e) {
          std::vector<T*> row(outs);  // this pixel's channels in each output
          for (int64_t p = b; p < e; ++p) {
            for (size_t j = 0; j < outs; ++j) row[j] = y[j] + p * width(j);
            const std::pair<size_t, int64_t>* to = dst.data();
            for (size_t i = 0; i < ctx.inputs.size(); ++i) {
              const int64_t ci = ctx.in(i).shape[1];
              const T* in = ctx.in(i).as<const T>() + p * ci;
              for (int64_t k = 0; k < ci; ++k) row[to[k].first][to[k].second] = in[k];
              to += ci;
            }
          }
        });
        return;
      }
      // Plain: (n, k) pairs, k over the concatenation's channels.
      std::vector<std::pair<const T*, int64_t>> src;  // per concatenated channel: input base, its channel count
      for (size_t i = 0; i < ctx.inputs.size(); ++i)
        for (int64_t k = 0; k < ctx.in(i).shape[1]; ++k)
          src.push_back({ctx.in(i).as<const T>() + k * inner, ctx.in(i).shape[1]});
      parallel_chunks(batch * c, batch * c * inner, ctx.num_threads, [&](int64_t b, int64_t e) {
        for (int64_t w = b; w < e; ++w) {
          const int64_t n = w / c, k = w % c;
          const auto& [base, ci] = src[static_cast<size_t>(k)];
          const auto [j, ch] = dst[static_cast<size_t>(k)];
          std::copy_n(base + n * ci * inner, inner, y[j] + (n * width(j) + ch) * inner);
        }
      });
    });
  }
  // Split outputs are a meaning older builds lack: its own name, so that
  // they refuse such a plan ("recompile the model").
  std::string impl_name() const override { return split_ ? "native.channel_shuffle.split" : "native.channel_shuffle"; }

 private:
  std::string what_;
  int64_t group_;
  bool split_;
  ops::Layout layout_;
};

/// LayoutQuery for ChannelShuffle (kernels::implementation_for_layout): the
/// kernel's name for nhwc, "" for nChw16c (no kernel) and plain.
std::string channel_shuffle_layout_query(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  if (src != dst || src != ops::Layout::kNhwc) return "";
  return n.has_attr("split") ? "native.channel_shuffle.split" : "native.channel_shuffle";
}

const bool kChannelShuffleLayoutQuery = [] {
  register_layout_query(ops::kGecDomain, "ChannelShuffle", channel_shuffle_layout_query);
  return true;
}();

GEC_REGISTER_KERNEL(ops::kGecDomain, "ChannelShuffle", [](const ir::Node& n, const KernelConfig& config) {
  return std::make_unique<ChannelShuffleKernel>(n, config);
});

}  // namespace
}  // namespace gec::kernels::cpu
