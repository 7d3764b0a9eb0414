// Static shape inference: recomputes every value's type with our own op
// infer functions (ops/), in execution order, so that the memory planner can
// trust a static shape. ONNX shape inference (run by the frontend) is only a
// hint: where our inference cannot prove a shape (an input of dynamic shape, a
// shape that depends on a non-constant value, control flow), the value's dims
// become unknown, keeping the rank and dtype ONNX gave, and the runtime infers
// it per run. Values inside subgraphs are always left to run time.
//
// Shape inference and constant folding reach a fixed point together (folding
// makes inputs constant, which makes more shapes static, which lets Shape
// fold): constant_folding.cc calls infer_static_shapes() between its sweeps.
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

}  // namespace

int64_t infer_static_shapes(ir::Graph& g) {
  int64_t changed = 0;
  for (ir::Node* n : g.node_list()) {
    ops::InferContext ctx;
    std::vector<TensorView> views;
    const bool ok = ops::infer_static_types(*n, ctx, views);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      ir::Value* o = n->output(i);
      ir::TensorType before = o->type;
      if (ok) {
        o->type = ir::TensorType::of(ctx.out_dtypes[i], ctx.out_shapes[i]);
      } else {
        make_dynamic(o);
      }
      if (!(before == o->type)) ++changed;
    }
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
