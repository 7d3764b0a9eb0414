// Window geometry shared by the schemas of Conv, ConvTranspose, MaxPool and
// AveragePool (src/ops/nn.cc) and by their CPU kernels, so that the output
// shape a kernel is handed and the padding it computes can never disagree.
//
// Semantics: ONNX Conv-11, ConvTranspose-11, MaxPool-12, AveragePool-11
// ("auto_pad" and output shape formulas in the operator text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// Attributes of a sliding-window op, each with one entry per spatial dim
/// (pads: begins then ends, as in ONNX).
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
  // ConvTranspose only.
  std::vector<int64_t> output_padding, output_shape;
};

/// Reads kernel_shape, strides, dilations, pads, auto_pad, ceil_mode,
/// output_padding and output_shape as written (absent lists stay empty).
/// Throws gec::Error(kInvalidModel) naming the node on an unknown auto_pad.
WindowAttrs read_window_attrs(const ir::Node& node);

/// True when `a` (as read: absent lists are defaults) has no padding of any
/// kind (auto_pad NOTSET or VALID, every pad 0) and every dilation 1: each
/// window cell reads X at stride * output index + kernel offset, inside X.
inline bool unpadded_undilated(const WindowAttrs& a) {
  if (a.auto_pad != AutoPad::kNotSet && a.auto_pad != AutoPad::kValid) return false;
  for (int64_t p : a.pads)
    if (p != 0) return false;
  for (int64_t d : a.dilations)
    if (d != 1) return false;
  return true;
}

/// Fills defaults for `spatial` spatial dims (kernel from `weights_kernel`
/// when kernel_shape is absent, as Conv allows; strides/dilations 1, pads 0)
/// and validates lengths and signs. `who` names the node in errors
/// (gec::Error kInvalidModel).
WindowAttrs resolve_window_attrs(WindowAttrs a, size_t spatial, const std::vector<int64_t>* weights_kernel,
                                 const std::string& who);

/// Output spatial dims and the padding actually used, per spatial dim.
/// pad_end is the ONNX end padding (explicit, or derived from auto_pad);
/// kernels that need the padding matching the output exactly use
/// effective_pad_end().
struct WindowGeom {
  std::vector<int64_t> out, pad_begin, pad_end;
};

/// Conv / pooling: out = floor-or-ceil((in + pb + pe - ((k-1)*d+1)) / s) + 1,
/// SAME_*: out = ceil(in / s) with the total padding split as the text says.
WindowGeom window_geometry(const std::string& who, const WindowAttrs& a, const Shape& in_spatial);

/// ConvTranspose-11: out = s*(in-1) + output_padding + ((k-1)*d+1) - pb - pe,
/// or output_shape / SAME_* (out = in*s) with derived pads.
WindowGeom conv_transpose_geometry(const std::string& who, const WindowAttrs& a,
                                   const Shape& in_spatial);

/// End padding that makes a window op produce exactly `out` from `in`:
/// (out-1)*s + ((k-1)*d+1) - in - pb. Smaller than the ONNX end padding when
/// the floor drops a partial window, larger under ceil_mode.
int64_t effective_pad_end(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb);

}  // namespace gec::ops
