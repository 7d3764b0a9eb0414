// Kernel taps that only ever read padding, cropped from the convolution:
//
//   Conv(x, W[M, C/g, K...], B)  -> Conv(x, W[:, :, k0..k1, ...], B)
//                                   pads and dilations adjusted, same output
//
// Why: a dilated convolution whose dilation reaches past the input (DeepLab's
// atrous spatial pyramid: 3x3 taps at dilation 24 and 36 on a 14x14 map)
// reads zero padding with every tap but the centre; it is a 1x1 convolution
// that oneDNN would run at nine times its FLOPs. The same holds for any
// window larger than its padded input allows (a 7x7 conv on a 3x3 map).
// Semantics: ONNX Conv-11. Along a spatial axis with input size `in`, output
// size `out`, stride s, dilation d and begin padding pb, output o reads input
// o*s - pb + k*d with tap k; tap k is live when that is inside [0, in) for
// some o. Taps outside [k0, k1] (the first and last live ones) contribute
// exact zeros and are dropped: the cropped Conv has kernel k1-k0+1, begin
// padding pb - k0*d, the end padding that keeps `out`, and dilation 1 when
// one tap is left. The sums are the same minus zero terms, up to rounding
// (the smaller conv may get another oneDNN implementation, summing in
// another order); a non-finite weight on a cropped tap would have made
// NaN (0 * inf) where the cropped conv gives a number.
// Guards: float32 constant W; X with a static shape; the new pads not
// negative; something to crop on at least one axis; every axis keeps a live
// tap (a conv of padding alone is left as it is). auto_pad is resolved to
// explicit pads.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/nn_shape.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

/// The cropped geometry of one Conv: per spatial axis the first live tap,
/// the new kernel size, pads and dilation.
struct Crop {
  std::vector<int64_t> first, kernel, pads, dilations;
};

/// True when tap k of an axis reads input inside [0, in) for some output o.
bool tap_live(int64_t k, int64_t in, int64_t out, int64_t s, int64_t d, int64_t pb) {
  const int64_t c = k * d - pb;  // input read by output 0
  // The first o with o*s + c >= 0.
  const int64_t o = c >= 0 ? 0 : (-c + s - 1) / s;
  return o < out && o * s + c < in;
}

std::optional<Match> match(const ir::Graph&, ir::Node* conv) {
  if (conv->inputs().size() < 2 || !conv->input(0) || !conv->input(1)) return std::nullopt;
  const ir::Value* w = conv->input(1);
  if (!w->constant || w->constant->dtype() != DType::kFloat32) return std::nullopt;
  auto xs = static_shape(conv->input(0));
  const Shape& ws = w->constant->shape();
  if (!xs || xs->size() < 3 || ws.size() != xs->size()) return std::nullopt;
  const size_t sp = xs->size() - 2;
  const std::string who = "Conv '" + conv->name + "'";
  const std::vector<int64_t> wk(ws.begin() + 2, ws.end());
  ops::WindowAttrs a = ops::resolve_window_attrs(ops::read_window_attrs(*conv), sp, &wk, who);
  if (a.kernel != wk) return std::nullopt;  // kernel_shape disagrees with W: the kernel's error to raise
  const Shape in(xs->begin() + 2, xs->end());
  const ops::WindowGeom geom = ops::window_geometry(who, a, in);
  Crop crop;
  crop.pads.assign(2 * sp, 0);
  bool cropped = false;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t k = a.kernel[i], s = a.strides[i], d = a.dilations[i], pb = geom.pad_begin[i];
    const int64_t out = geom.out[i];
    if (out <= 0 || s <= 0 || d <= 0) return std::nullopt;
    int64_t k0 = 0, k1 = k - 1;
    while (k0 < k && !tap_live(k0, in[i], out, s, d, pb)) ++k0;
    if (k0 == k) return std::nullopt;  // no live tap on this axis
    while (!tap_live(k1, in[i], out, s, d, pb)) --k1;
    const int64_t kn = k1 - k0 + 1;
    if (kn == k) {  // nothing to crop here: keep the axis as it was, with its own end padding
      crop.first.push_back(0);
      crop.kernel.push_back(k);
      crop.pads[i] = pb;
      crop.pads[sp + i] = geom.pad_end[i];
      crop.dilations.push_back(d);
      continue;
    }
    const int64_t dn = kn == 1 ? 1 : d;
    const int64_t pbn = pb - k0 * d;
    // The end padding that keeps `out` (a floor may leave the last inputs unread: then 0 will do).
    const int64_t pen = std::max<int64_t>(0, ops::effective_pad_end(in[i], out, kn, s, dn, pbn));
    if (pbn < 0) return std::nullopt;  // an input crop, which pads cannot say
    if ((in[i] + pbn + pen - ((kn - 1) * dn + 1)) / s + 1 != out) return std::nullopt;
    cropped = true;
    crop.first.push_back(k0);
    crop.kernel.push_back(kn);
    crop.pads[i] = pbn;
    crop.pads[sp + i] = pen;
    crop.dilations.push_back(dn);
  }
  if (!cropped) return std::nullopt;
  return Match{conv, {conv}, {}, std::move(crop)};
}

ir::Value* rewrite(ir::Graph& g, const Match& m) {
  ir::Node* conv = m.nodes[0];
  const Crop& crop = std::any_cast<const Crop&>(m.data);
  const Tensor& w = *conv->input(1)->constant;
  const Shape& ws = w.shape();
  Shape ns(ws.begin(), ws.begin() + 2);
  for (int64_t k : crop.kernel) ns.push_back(k);
  int64_t count = 1;
  for (int64_t v : ns) count *= v;
  std::vector<float> data(static_cast<size_t>(count));
  const float* src = w.as<float>();
  // Row-major walk over the new weights, reading the same tap of the old.
  std::vector<int64_t> idx(ns.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t off = 0;
    for (size_t j = 0; j < ns.size(); ++j) {
      const int64_t at = j < 2 ? idx[j] : idx[j] + crop.first[j - 2];
      off = off * ws[j] + at;
    }
    data[static_cast<size_t>(flat)] = src[off];
    for (size_t j = ns.size(); j-- > 0;) {
      if (++idx[j] < ns[j]) break;
      idx[j] = 0;
    }
  }
  // A new Conv (the driver replaces the pattern's output; W may be shared).
  std::vector<ir::Value*> inputs(conv->inputs().begin(), conv->inputs().end());
  inputs[1] = add_f32_constant(g, conv->input(1)->name() + "_cropped", ns, data);
  ir::Node* n = copy_node(g, conv, inputs);
  n->set_attr(ir::Attribute::Ints("kernel_shape", crop.kernel));
  n->set_attr(ir::Attribute::Ints("pads", crop.pads));
  n->set_attr(ir::Attribute::Ints("dilations", crop.dilations));
  n->set_attr(ir::Attribute::String("auto_pad", "NOTSET"));
  return n->output(0);
}

}  // namespace

std::vector<RewriteRule> conv_kernel_cropping_rules() {
  return {{"conv_kernel_crop", {"Conv"},
           "Conv(x, W) -> Conv(x, W[taps that read x]) with pads and dilations adjusted", match, rewrite}};
}

std::unique_ptr<Pass> make_conv_kernel_cropping() {
  return make_rule_pass("conv_kernel_cropping", conv_kernel_cropping_rules());
}

}  // namespace gec::passes
