// Explicit padding folded into the window op after it:
//
//   Conv(Pad(x, p, 0), W, B)        -> Conv(x, W, B)   pads += p's spatial pads
//   MaxPool(Pad(x, p, -inf))        -> MaxPool(x)      pads += p's spatial pads
//   AveragePool(Pad(x, p, 0))       -> AveragePool(x)  pads += p, count_include_pad = 1
//
// Why: exporters that pad separately (TensorFlow's explicit Pad before a
// VALID conv, ONNX graphs converted through TensorFlow, asymmetric "SAME"
// padding) leave a Pad that writes a padded copy of every feature map, and
// its plain layout cuts the blocked (nChw16c) chain around it; oneDNN's
// convolution and pooling pad on the fly. PyTorch exports avg_pool2d with
// count_include_pad=True (Inception's pool branches) as Pad + AveragePool:
// the zeros the Pad writes are counted in every window's divisor, which is
// what AveragePool-11's count_include_pad = 1 does with its own pads.
// Guards: constant mode; pads a constant with one begin/end pair per dim of
// the input, zero on N and C, none negative; no axes input; the pad value
// absent or the constant 0 (Conv: zero padding) or -inf (MaxPool: ONNX
// pooling pads with -inf); the Pad output read only by the window op; the
// window op has no auto_pad, and MaxPool has one output (indices would
// address the padded map); a pool ends with each window still overlapping
// the input (pads below the kernel size, as oneDNN requires). AveragePool:
// ceil_mode 0 (a partial window at the end would count only part of the
// padding), and count_include_pad 1 or no pads of its own (so that its own
// padding, if any, was already counted).
#include <cmath>
#include <limits>

#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

/// The window op a Pad is folded into.
enum class Window { kConv, kMaxPool, kAveragePool };

/// The spatial pads (begins, then ends) of a Pad that `op` can absorb, or nullopt.
std::optional<std::vector<int64_t>> absorbable(const ir::Graph& g, const ir::Node* pad, Window op) {
  const bool max_pool = op == Window::kMaxPool;
  if (!pad || pad->owner() != &g || pad->get_string("mode", "constant") != "constant") return std::nullopt;
  if (pad->inputs().size() > 3 && pad->input(3)) return std::nullopt;  // axes
  const ir::Value* x = pad->input(0);
  if (!x || !x->type.has_shape) return std::nullopt;
  const size_t r = x->type.dims.size();
  if (r < 3) return std::nullopt;
  auto p = const_ints(pad->input(1));
  if (!p || p->size() != 2 * r) return std::nullopt;
  for (int64_t v : *p)
    if (v < 0) return std::nullopt;
  if ((*p)[0] || (*p)[1] || (*p)[r] || (*p)[r + 1]) return std::nullopt;  // N and C
  const ir::Value* value = pad->inputs().size() > 2 ? pad->input(2) : nullptr;
  if (value) {
    auto f = const_floats(value);
    if (!f || f->size() != 1) return std::nullopt;
    const float want = max_pool ? -std::numeric_limits<float>::infinity() : 0.f;
    if ((*f)[0] != want) return std::nullopt;
  } else if (max_pool) {
    return std::nullopt;  // zero padding is not MaxPool's
  }
  if (x->type.dtype != DType::kFloat32) return std::nullopt;
  std::vector<int64_t> s;
  for (size_t d = 2; d < r; ++d) s.push_back((*p)[d]);
  for (size_t d = 2; d < r; ++d) s.push_back((*p)[r + d]);
  return s;
}

std::optional<Match> match(const ir::Graph& g, ir::Node* op, Window kind) {
  const bool pool = kind != Window::kConv;
  if (!op->input(0) || op->get_string("auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
  if (kind == Window::kMaxPool && op->outputs().size() > 1 && op->output(1)) return std::nullopt;
  ir::Node* pad = sole_producer(g, op->input(0), "Pad");
  auto extra = absorbable(g, pad, kind);
  if (!extra) return std::nullopt;
  const size_t sp = extra->size() / 2;
  std::vector<int64_t> pads = op->get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (pads.size() != 2 * sp) return std::nullopt;
  if (kind == Window::kAveragePool) {
    if (op->get_int("ceil_mode", 0) != 0) return std::nullopt;
    bool own_pads = false;
    for (int64_t v : pads) own_pads = own_pads || v != 0;
    if (own_pads && op->get_int("count_include_pad", 0) == 0) return std::nullopt;
  }
  for (size_t i = 0; i < pads.size(); ++i) pads[i] += (*extra)[i];
  if (pool) {
    const std::vector<int64_t> k = op->get_ints("kernel_shape");
    if (k.size() != sp) return std::nullopt;
    for (size_t i = 0; i < sp; ++i)
      if (pads[i] >= k[i] || pads[sp + i] >= k[i]) return std::nullopt;
  }
  return Match{op, {pad, op}, {pad->input(0)}, pads};
}

/// A copy of the window op reading the unpadded input, with the summed pads.
ir::Value* rewrite(ir::Graph& g, const Match& m) {
  const ir::Node* op = m.nodes[1];
  std::vector<ir::Value*> inputs(op->inputs().begin(), op->inputs().end());
  inputs[0] = m.values[0];
  ir::Node* n = copy_node(g, op, inputs);
  n->set_attr(ir::Attribute::Ints("pads", std::any_cast<const std::vector<int64_t>&>(m.data)));
  if (op->op_type == "AveragePool") n->set_attr(ir::Attribute::Int("count_include_pad", 1));
  return n->output(0);
}

}  // namespace

std::vector<RewriteRule> pad_folding_rules() {
  return {{"pad_conv", {"Conv"}, "Conv(Pad(x, p, 0), W, B) -> Conv(x, W, B) with pads + p",
           [](const ir::Graph& g, ir::Node* n) { return match(g, n, Window::kConv); }, rewrite},
          {"pad_maxpool", {"MaxPool"}, "MaxPool(Pad(x, p, -inf)) -> MaxPool(x) with pads + p",
           [](const ir::Graph& g, ir::Node* n) { return match(g, n, Window::kMaxPool); }, rewrite},
          {"pad_avgpool", {"AveragePool"},
           "AveragePool(Pad(x, p, 0)) -> AveragePool(x) with pads + p, count_include_pad = 1",
           [](const ir::Graph& g, ir::Node* n) { return match(g, n, Window::kAveragePool); }, rewrite}};
}

std::unique_ptr<Pass> make_pad_folding() { return make_rule_pass("pad_folding", pad_folding_rules()); }

}  // namespace gec::passes
