// Schemas of the signal-processing ops of opset 17: DFT-17, STFT-17,
// HannWindow-17, HammingWindow-17, BlackmanWindow-17, MelWeightMatrix-17.
// Complex tensors are real tensors with a trailing dim of 2 (re, im), as
// these ops define them; output sizes that come from input values (window
// size, dft_length, frame_length) need those values at compile time.
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

int64_t scalar_int(const InferContext& ctx, size_t i) {
  const std::vector<int64_t> v = ctx.ints_value(i);
  if (v.size() != 1) ctx.error("input " + std::to_string(i) + " must be a scalar");
  return v[0];
}

DType output_datatype(const InferContext& ctx) {
  const int64_t t = ctx.node->get_int("output_datatype", 1);
  if (!dtype_is_valid(static_cast<int32_t>(t)) || t == 0) ctx.error("output_datatype " + std::to_string(t) + " is not a dtype");
  return static_cast<DType>(t);
}

// DFT-17: input [batch, n_1, ..., n_k, 1|2]; the transformed axis (attr, default
// 1) becomes dft_length (or floor(dft_length/2)+1 when onesided); last dim 2.
void infer_dft(InferContext& ctx) {
  Shape s = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(s.size());
  if (r < 3 || (s.back() != 1 && s.back() != 2)) ctx.error("input must be [batch, ..., 1|2], got " + shape_str(s));
  int64_t axis = ctx.node->get_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 1 || axis >= r - 1) ctx.error("axis " + std::to_string(axis) + " is out of range");
  int64_t n = s[axis];
  if (ctx.has_input(1) && shape_numel(ctx.shape(1)) > 0) n = scalar_int(ctx, 1);
  if (n < 1) ctx.error("dft_length must be positive");
  const bool onesided = ctx.node->get_int("onesided", 0) != 0;
  if (onesided && ctx.node->get_int("inverse", 0) != 0) ctx.error("onesided inverse DFT is not defined");
  s[axis] = onesided ? n / 2 + 1 : n;
  s.back() = 2;
  ctx.set_output(0, ctx.dtype(0), s);
}

// STFT-17: signal [batch, length, 1|2], frame_step, window?, frame_length?
// -> [batch, frames, bins, 2].
void infer_stft(InferContext& ctx) {
  const Shape& s = ctx.shape(0);
  if (s.size() != 3 || (s[2] != 1 && s[2] != 2)) ctx.error("signal must be [batch, length, 1|2], got " + shape_str(s));
  const int64_t step = scalar_int(ctx, 1);
  int64_t len = -1;
  if (ctx.has_input(3)) len = scalar_int(ctx, 3);
  else if (ctx.has_input(2)) len = ctx.shape(2).empty() ? -1 : ctx.shape(2)[0];
  if (len < 1) ctx.error("frame_length or window is required");
  if (ctx.has_input(2) && (ctx.shape(2).size() != 1 || ctx.shape(2)[0] != len)) ctx.error("window length differs from frame_length");
  if (step < 1 || len > s[1]) ctx.error("frame_step must be >= 1 and frame_length <= signal length");
  const bool onesided = ctx.node->get_int("onesided", 1) != 0;
  const int64_t frames = (s[1] - len) / step + 1;
  ctx.set_output(0, ctx.dtype(0), Shape{s[0], frames, onesided ? len / 2 + 1 : len, 2});
}

void infer_window(InferContext& ctx) {
  const int64_t n = scalar_int(ctx, 0);
  if (n < 0) ctx.error("size must be >= 0");
  ctx.set_output(0, output_datatype(ctx), Shape{n});
}

void infer_mel(InferContext& ctx) {
  const int64_t bins = scalar_int(ctx, 0), dft = scalar_int(ctx, 1);
  if (bins < 1 || dft < 1) ctx.error("num_mel_bins and dft_length must be positive");
  ctx.set_output(0, output_datatype(ctx), Shape{dft / 2 + 1, bins});
}

}  // namespace

GEC_REGISTER_OP({.domain = "", .op_type = "DFT", .infer = infer_dft, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "STFT", .infer = infer_stft, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "HannWindow", .infer = infer_window, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "HammingWindow", .infer = infer_window, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "BlackmanWindow", .infer = infer_window, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "MelWeightMatrix", .infer = infer_mel, .traits = traits(PatternKind::kOpaque)});

}  // namespace gec::ops
