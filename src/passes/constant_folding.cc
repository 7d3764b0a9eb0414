// Constant folding: a node whose inputs are all constants is evaluated at
// compile time with the same CPU kernels that run models
// (kernels::evaluate_node), and its outputs become constants. Shape and Size
// fold as soon as their input's shape is static, whatever its data, which is
// what turns exported shape arithmetic (Shape -> Gather -> Concat -> Reshape)
// into constants.
//
// Nodes in bodies (If / Loop / Scan) fold the same way when every input is
// a constant (of the body or of an enclosing graph); Shape and Size there
// only of a constant (a body's declared shapes are not checked at run).
//
// Guards: nondeterministic ops and ops whose output shape needs the kernel
// (If, Loop, ...) never fold; neither do nodes that produce a graph output
// (its name and producer stay); and a node whose folded outputs would be larger than
// both kMaxFoldedBytes and its inputs stays a node, so that folding never
// bloats the offline model (an Expand or ConstantOfShape that grows data).
#include "kernels/kernel.h"
#include "ops/op_schema.h"
#include "passes/pass.h"

namespace gec::passes {
namespace {

constexpr int64_t kMaxFoldedBytes = 64 * 1024;

bool is_shape_query(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size") && n.input(0) &&
         n.input(0)->type.is_static();
}

/// `body`: g is an If / Loop / Scan body, whose values' declared shapes
/// nothing checks at run time (a loop-carried value may grow between
/// iterations): there a Shape or Size folds only from a constant.
bool foldable(const ir::Graph& g, const ir::Node& n, bool body) {
  const ops::OpSchema* s = ops::find_schema(n.domain, n.op_type);
  if (!s || !s->deterministic || s->shape_from_kernel) return false;
  for (const auto& a : n.attrs)
    if (a.kind == ir::Attribute::Kind::kGraph) return false;
  for (const ir::Value* o : n.outputs())
    if (g.is_graph_output(o)) return false;
  if (is_shape_query(n) && !body) return true;
  for (const ir::Value* in : n.inputs())
    if (in && !in->is_constant()) return false;
  return true;
}

int64_t fold(ir::Graph& g, bool body) {
  int64_t folded = 0;
  for (ir::Node* n : g.node_list()) {
    if (!foldable(g, *n, body)) continue;
    std::vector<TensorView> views(n->inputs().size());
    std::vector<const TensorView*> ptrs;
    int64_t in_bytes = 0;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const ir::Value* in = n->input(i);
      if (!in) { ptrs.push_back(nullptr); continue; }
      if (in->is_constant()) views[i] = in->constant->view();
      else views[i] = TensorView{nullptr, in->type.dtype, in->type.static_shape()};  // Shape/Size only
      in_bytes += static_cast<int64_t>(views[i].bytes());
      ptrs.push_back(&views[i]);
    }
    std::vector<Tensor> outs;
    try {
      // Too large to fold: more than kMaxFoldedBytes and more than the
      // inputs (refused before anything is allocated).
      outs = kernels::evaluate_node(*n, ptrs, 1, nullptr, {}, std::max<int64_t>(kMaxFoldedBytes, in_bytes));
    } catch (const Error&) {
      continue;  // leave it to run time, where the error (if any) names the inputs
    } catch (const ops::NeedsValue&) {
      continue;
    }
    int64_t out_bytes = 0;
    for (const Tensor& t : outs) out_bytes += static_cast<int64_t>(t.bytes());
    if (out_bytes > kMaxFoldedBytes && out_bytes > in_bytes) continue;  // (evaluate_node refused it already)
    for (size_t i = 0; i < outs.size(); ++i) {
      ir::Value* old = n->output(i);
      ir::Value* c = g.add_constant(g.unique_name(old->name()), std::move(outs[i]));
      g.replace_all_uses(old, c);
    }
    for (size_t i = 0; i < n->inputs().size(); ++i) n->set_input(i, nullptr);
    g.remove_node(n);
    ++folded;
  }
  g.remove_dead_values();
  return folded;
}

class ConstantFolding final : public Pass {
 public:
  const char* name() const override { return "constant_folding"; }
  int64_t run(ir::Graph& g) override {
    int64_t total = 0;
    for (;;) {  // fixed point with shape inference
      infer_static_shapes(g);
      const int64_t n = fold(g, false);
      if (n == 0) break;
      total += n;
    }
    // Bodies (If branches, Loop and Scan bodies): their values' shapes are
    // left to run time, but a node fed only constants (a weight sliced or
    // concatenated from the outer graph's initializers, as exported LSTMs
    // do) is the same in every run; folded, it stops running per call.
    ir::for_each_graph(g, [&](ir::Graph& sg) {
      if (&sg == &g) return;
      for (int64_t n; (n = fold(sg, true)) > 0;) total += n;
    });
    return total;
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace gec::passes
