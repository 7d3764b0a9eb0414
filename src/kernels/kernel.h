// The target-independent kernel interface. A target (kernels/cpu/ today)
// registers one factory per (domain, op_type); the runtime creates one Kernel
// per node when a session loads and calls run() for every execution.
//
// Two phases, as in DESIGN.md:
//  - construction / prepare(): read attributes, create oneDNN primitives, pack
//    weights. Shapes may change between runs on the dynamic path, so kernels
//    whose setup depends on shapes cache it keyed by the input shapes.
//  - run(): the hot path. Output tensors are already allocated with their
//    final shapes (from the op's infer function), except for ops whose schema
//    says shape_from_kernel: those call ctx.allocate_output().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"
#include "ir/graph.h"

namespace gec::kernels {

/// Runs a subgraph (If/Loop/Scan bodies) on behalf of a control-flow kernel.
/// Outer-scope values are visible to the subgraph through the executor.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  /// Binds `inputs` to g.inputs(), runs g, returns copies of g.outputs().
  virtual std::vector<Tensor> run(const ir::Graph& g,
                                  const std::vector<const TensorView*>& inputs) = 0;
};

struct KernelContext {
  /// One per node input; null for an omitted optional input.
  std::vector<const TensorView*> inputs;
  /// One per node output; shape and data set before run() unless the op is
  /// shape_from_kernel.
  std::vector<TensorView*> outputs;
  int num_threads = 1;
  SubgraphRunner* subgraphs = nullptr;
  /// For shape_from_kernel ops: allocates output i with the given shape and
  /// returns it (also stored in outputs[i]).
  std::function<TensorView*(size_t, DType, const Shape&)> allocate_output;

  const TensorView& in(size_t i) const { return *inputs[i]; }
  TensorView& out(size_t i) const { return *outputs[i]; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Optional set-up with static input types known at load (data may be null).
  virtual void prepare(const KernelContext&) {}
  virtual void run(KernelContext& ctx) = 0;
  /// Implementation name shown by `gec profile` (e.g. "onednn.conv").
  virtual std::string impl_name() const { return "native"; }
};

/// Creates a kernel for `node`. Attributes are read here; unsupported
/// attribute values or dtypes throw gec::Error(kUnsupported) naming the node.
/// `input_dtypes` are the node's input dtypes (kUndefined for absent inputs).
using KernelFactory =
    std::function<std::unique_ptr<Kernel>(const ir::Node& node, const std::vector<DType>& input_dtypes)>;

void register_kernel(const std::string& domain, const std::string& op_type, KernelFactory f);
/// Null when no kernel is registered for the op.
const KernelFactory* find_kernel(const std::string& domain, const std::string& op_type);

struct KernelRegistrar {
  KernelRegistrar(const char* domain, const char* op_type, KernelFactory f) {
    register_kernel(domain, op_type, std::move(f));
  }
};
#define GEC_K_CONCAT2(a, b) a##b
#define GEC_K_CONCAT(a, b) GEC_K_CONCAT2(a, b)
/// GEC_REGISTER_KERNEL("", "Relu", factory) at file scope.
#define GEC_REGISTER_KERNEL(domain, op, factory) \
  static ::gec::kernels::KernelRegistrar GEC_K_CONCAT(gec_kernel_reg_, __LINE__)(domain, op, factory)

/// Creates the kernel for a node, or throws gec::Error(kUnsupported):
/// "unsupported op: node 'n' op Foo (domain ai.onnx, opset N), inputs float32, int64".
std::unique_ptr<Kernel> create_kernel(const ir::Node& node);

/// Runs one node outside any session: infers output shapes from the inputs,
/// allocates, creates the kernel and runs it. Used by constant folding and by
/// kernel tests. `inputs` has one entry per node input (null = omitted).
std::vector<Tensor> evaluate_node(const ir::Node& node, const std::vector<const TensorView*>& inputs,
                                  int num_threads = 1, SubgraphRunner* subgraphs = nullptr);

}  // namespace gec::kernels
