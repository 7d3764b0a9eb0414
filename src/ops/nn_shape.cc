// Window geometry for Conv / ConvTranspose / pooling (see nn_shape.h).
#include "ops/nn_shape.h"

#include "gec/error.h"

namespace gec::ops {

namespace {

[[noreturn]] void bad(const std::string& who, const std::string& msg) {
  fail(ErrorCode::kInvalidModel, who + ": " + msg);
}

void default_len(std::vector<int64_t>& v, const char* name, size_t len, int64_t def, const std::string& who) {
  if (v.empty()) v.assign(len, def);
  if (v.size() != len)
    bad(who, std::string("attribute ") + name + " has " + std::to_string(v.size()) +
                 " entries, expected " + std::to_string(len));
}

// Window arithmetic on attribute values: an overflow means a malformed model
// (kernel_shape or dilations near 2^62), never a wrapped dim.
int64_t mul_ck(const std::string& who, int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) bad(who, std::string(what) + " overflows int64");
  return r;
}

int64_t add_ck(const std::string& who, int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) bad(who, std::string(what) + " overflows int64");
  return r;
}

// Extent of a dilated window, (k-1)*d+1.
int64_t window_extent(const std::string& who, int64_t k, int64_t d) {
  return add_ck(who, mul_ck(who, k - 1, d, "(kernel-1)*dilation"), 1, "dilated kernel extent");
}

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

WindowAttrs read_window_attrs(const ir::Node& n) {
  WindowAttrs a;
  a.kernel = n.get_ints("kernel_shape");
  a.strides = n.get_ints("strides");
  a.dilations = n.get_ints("dilations");
  a.pads = n.get_ints("pads");
  a.output_padding = n.get_ints("output_padding");
  a.output_shape = n.get_ints("output_shape");
  a.ceil_mode = n.get_int("ceil_mode", 0) != 0;
  const std::string ap = n.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) a.auto_pad = AutoPad::kNotSet;
  else if (ap == "SAME_UPPER") a.auto_pad = AutoPad::kSameUpper;
  else if (ap == "SAME_LOWER") a.auto_pad = AutoPad::kSameLower;
  else if (ap == "VALID") a.auto_pad = AutoPad::kValid;
  else bad(n.describe(), "unknown auto_pad '" + ap + "'");
  return a;
}

WindowAttrs resolve_window_attrs(WindowAttrs a, size_t sp, const std::vector<int64_t>* wk,
                                 const std::string& who) {
  if (a.kernel.empty()) {
    if (!wk) bad(who, "attribute kernel_shape is required");
    a.kernel = *wk;
  }
  if (a.kernel.size() != sp)
    bad(who, "kernel_shape has " + std::to_string(a.kernel.size()) + " entries for " +
                 std::to_string(sp) + " spatial dims");
  default_len(a.strides, "strides", sp, 1, who);
  default_len(a.dilations, "dilations", sp, 1, who);
  default_len(a.pads, "pads", 2 * sp, 0, who);
  default_len(a.output_padding, "output_padding", sp, 0, who);
  if (a.output_shape.size() == sp + 2)  // some exporters write N and C too
    a.output_shape.erase(a.output_shape.begin(), a.output_shape.begin() + 2);
  if (!a.output_shape.empty() && a.output_shape.size() != sp) bad(who, "output_shape has the wrong length");
  for (size_t i = 0; i < sp; ++i) {
    if (a.kernel[i] < 1 || a.strides[i] < 1 || a.dilations[i] < 1)
      bad(who, "kernel_shape, strides and dilations must be positive");
    if (a.pads[i] < 0 || a.pads[i + sp] < 0) bad(who, "pads must be non-negative");
    if (a.output_padding[i] < 0) bad(who, "output_padding must be non-negative");
  }
  return a;
}

WindowGeom window_geometry(const std::string& n, const WindowAttrs& a, const Shape& in) {
  const size_t sp = in.size();
  WindowGeom g;
  g.out.resize(sp);
  g.pad_begin.resize(sp);
  g.pad_end.resize(sp);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t kr = window_extent(n, a.kernel[i], a.dilations[i]), s = a.strides[i];
    switch (a.auto_pad) {
      case AutoPad::kNotSet:
      case AutoPad::kValid: {
        const int64_t pb = a.auto_pad == AutoPad::kValid ? 0 : a.pads[i];
        const int64_t pe = a.auto_pad == AutoPad::kValid ? 0 : a.pads[i + sp];
        const int64_t span = add_ck(n, add_ck(n, in[i], pb, "padded input"), pe - kr, "padded input");
        if (span < 0)
          bad(n, "window of size " + std::to_string(kr) + " does not fit input dim " +
                     std::to_string(in[i]) + " with its padding");
        g.out[i] = (a.ceil_mode ? ceil_div(span, s) : floor_div(span, s)) + 1;
        g.pad_begin[i] = pb;
        g.pad_end[i] = pe;
        break;
      }
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        g.out[i] = ceil_div(in[i], s);
        const int64_t total =
            std::max<int64_t>(0, add_ck(n, mul_ck(n, g.out[i] - 1, s, "stride product"), kr - in[i], "SAME padding"));
        const int64_t small = total / 2, large = total - total / 2;
        g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? small : large;
        g.pad_end[i] = total - g.pad_begin[i];
        break;
      }
    }
  }
  return g;
}

WindowGeom conv_transpose_geometry(const std::string& n, const WindowAttrs& a, const Shape& in) {
  const size_t sp = in.size();
  WindowGeom g;
  g.out.resize(sp);
  g.pad_begin.resize(sp);
  g.pad_end.resize(sp);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t kr = window_extent(n, a.kernel[i], a.dilations[i]), s = a.strides[i];
    const int64_t full = add_ck(n, add_ck(n, mul_ck(n, s, in[i] - 1, "stride*(in-1)"), a.output_padding[i], "output size"),
                                kr, "output size");
    const bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
    if (!a.output_shape.empty() || same) {
      g.out[i] = !a.output_shape.empty() ? a.output_shape[i] : mul_ck(n, in[i], s, "input*stride");
      if (g.out[i] < 0) bad(n, "output_shape has a negative entry");
      const int64_t total = full - g.out[i];
      // ConvTranspose-11 text: SAME_UPPER puts the smaller half first; every
      // other mode (NOTSET with output_shape, SAME_LOWER) the larger half.
      // The halves use floor division as the reference does, so a negative
      // total (output_shape past the full output, as with output_padding)
      // becomes negative end padding: zero-filled cells at the end.
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
    } else {
      const bool valid = a.auto_pad == AutoPad::kValid;
      g.pad_begin[i] = valid ? 0 : a.pads[i];
      g.pad_end[i] = valid ? 0 : a.pads[i + sp];
      g.out[i] = full - add_ck(n, g.pad_begin[i], g.pad_end[i], "pads");
      if (g.out[i] < 0) bad(n, "pads are larger than the output");
    }
  }
  return g;
}

int64_t effective_pad_end(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb) {
  return (out - 1) * s + (k - 1) * d + 1 - in - pb;
}

}  // namespace gec::ops
