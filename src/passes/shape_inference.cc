// Static shape inference: recomputes every value's type with our own op
// infer functions (ops/), in execution order, so that the memory planner can
// trust a static shape. ONNX shape inference (run by the frontend) is only a
// hint: where our inference cannot prove a shape (an input of dynamic shape, a
// shape that depends on a non-constant value, control flow), the value's dims
// become unknown, keeping the rank and dtype ONNX gave, and the runtime infers
// it per run. Values inside subgraphs are always left to run time.
//
// Dims that stay unknown get symbols (ONNX's dim_param convention): the
// model's own where ONNX shape inference gave them, else one named here after
// the value and axis (ir::kInventedDimPrefix). An op the fused elementwise
// kernel runs (ops::elementwise_instruction) gives its output the numpy
// broadcast of its inputs' dims, symbols included, so that automatic fusion
// can prove a chain of such ops after a convolution of dynamic input size to
// be of one shape (equal symbols are equal dims; an unnamed unknown dim
// equals nothing). The same idea as ONNX Runtime's symbolic shape inference,
// restricted to what fusion needs.
//
// Shape inference and constant folding reach a fixed point together (folding
// makes inputs constant, which makes more shapes static, which lets Shape
// fold): constant_folding.cc calls infer_static_shapes() between its sweeps.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "ops/fused_elementwise.h"
#include "ops/op_schema.h"
#include "passes/pass.h"

namespace gec::passes {
namespace {

// Unknown dims; a scalar ONNX declared but we cannot prove becomes of
// unknown rank, or it would still look static and get an arena slot (e.g.
// SequenceAt whose element turns out to be [40]).
void make_dynamic(ir::Value* v) {
  for (ir::Dim& d : v->type.dims) d.value = -1;
  if (v->type.dims.empty()) v->type.has_shape = false;
}

void forget_subgraph_shapes(ir::Graph& g) {
  for (auto& n : g.nodes())
    for (auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g)
        ir::for_each_graph(*a.g, [](ir::Graph& sg) {
          for (const auto& v : sg.values())
            if (!v->is_constant()) make_dynamic(v.get());
        });
}

/// `name` with the characters the textual IR does not take in a symbol
/// written as -XX (hex), '-' included: distinct names stay distinct.
std::string symbol_safe(const std::string& name) {
  static const char kHex[] = "0123456789abcdef";
  std::string r;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '.' || c == '/') {
      r += c;
    } else {
      r += '-';
      r += kHex[u >> 4];
      r += kHex[u & 15];
    }
  }
  return r;
}

/// Dims of the numpy broadcast of `n`'s tensor inputs, symbols kept: per
/// axis the one dim that is not 1, a static dim over a symbol (the symbol can
/// only be 1 or equal), unknown when two differ otherwise or an unnamed dim
/// meets anything but 1 or a static dim. nullopt when an input's rank is
/// unknown.
std::optional<std::vector<ir::Dim>> broadcast_dims(const ir::Node& n) {
  size_t rank = 0;
  for (const ir::Value* in : n.inputs()) {
    if (!in) continue;
    if (!in->type.has_shape || !in->type.is_tensor()) return std::nullopt;
    rank = std::max(rank, in->type.dims.size());
  }
  std::vector<ir::Dim> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    ir::Dim r{1, ""};
    bool known = true;
    for (const ir::Value* in : n.inputs()) {
      if (!in) continue;
      const std::vector<ir::Dim>& dims = in->type.dims;
      if (dims.size() + k < rank) continue;  // a missing leading axis broadcasts as 1
      const ir::Dim& d = dims[dims.size() + k - rank];
      if (d.is_static() && d.value == 1) continue;
      if (r.is_static() && r.value == 1) {
        r = d;
      } else if (r.is_static() && !d.is_static()) {
        // a symbol or unknown dim next to a static one > 1: the static one
      } else if (d.is_static() && !r.is_static()) {
        r = d;
      } else if (!(d == r) || d.param.empty()) {
        known = false;
      }
    }
    out[k] = known && (r.is_static() || !r.param.empty()) ? r : ir::Dim{-1, ""};
  }
  return out;
}

/// The unknown dims of `n`'s outputs that inference could not make static:
/// a broadcast's dims where `n` is elementwise, and every dim still unnamed
/// a symbol of its own.
void name_unknown_dims(const ir::Node& n) {
  std::optional<std::vector<ir::Dim>> bcast;
  if (n.outputs().size() == 1 && ops::elementwise_instruction(n)) bcast = broadcast_dims(n);
  for (ir::Value* o : n.outputs()) {
    if (!o || !o->type.has_shape || !o->type.is_tensor()) continue;
    std::vector<ir::Dim>& dims = o->type.dims;
    if (bcast && bcast->size() == dims.size())
      for (size_t k = 0; k < dims.size(); ++k)
        if (!dims[k].is_static() && ((*bcast)[k].is_static() || !(*bcast)[k].param.empty())) dims[k] = (*bcast)[k];
    for (size_t k = 0; k < dims.size(); ++k)
      if (!dims[k].is_static() && dims[k].param.empty())
        dims[k].param = ir::kInventedDimPrefix + symbol_safe(o->name()) + "/" + std::to_string(k);
  }
}

}  // namespace

int64_t infer_static_shapes(ir::Graph& g) {
  int64_t changed = 0;
  for (ir::Node* n : g.node_list()) {
    ops::InferContext ctx;
    std::vector<TensorView> views;
    const bool ok = ops::infer_static_types(*n, ctx, views);
    std::vector<ir::TensorType> before;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      ir::Value* o = n->output(i);
      before.push_back(o->type);
      if (ok) {
        o->type = ir::TensorType::of(ctx.out_dtypes[i], ctx.out_shapes[i]);
      } else {
        make_dynamic(o);
      }
    }
    if (!ok) name_unknown_dims(*n);
    for (size_t i = 0; i < n->outputs().size(); ++i)
      if (!(before[i] == n->output(i)->type)) ++changed;
  }
  forget_subgraph_shapes(g);
  return changed;
}

namespace {

class ShapeInference final : public Pass {
 public:
  const char* name() const override { return "shape_inference"; }
  int64_t run(ir::Graph& g) override { return infer_static_shapes(g); }
};

}  // namespace

std::unique_ptr<Pass> make_shape_inference() { return std::make_unique<ShapeInference>(); }

}  // namespace gec::passes
