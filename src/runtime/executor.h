// The executor: runs a loaded graph's nodes in their stored order over one
// frame of tensor views indexed by value id.
//
// Values planned in the arena (static shape) are bound once at load; values of
// dynamic shape get their shape from the op's infer function at run time and
// live in per-value buffers that grow and are reused across runs. Subgraphs
// (If/Loop/Scan bodies) run in the same frame: their value ids are distinct
// from the parent's, and outer-scope reads simply find the parent's binding.
#pragma once

#include <chrono>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gec/runtime.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "ops/op_schema.h"

namespace gec::runtime {

class Executor final : public kernels::SubgraphRunner {
 public:
  /// `graph` must outlive the executor; value ids must be dense (number_values).
  /// Creates one kernel per node of every graph. `arena` holds arena_bytes.
  Executor(ir::Graph& graph, int32_t num_values, uint8_t* arena, int num_threads, bool profile);

  /// Binds the main graph inputs (views must stay valid during run()).
  void bind_input(size_t i, const TensorView& v);
  /// Runs the main graph.
  void run();
  /// Current view of a main graph output after run().
  const TensorView& output(size_t i) const;

  std::vector<Tensor> run(const ir::Graph& g, const std::vector<const TensorView*>& inputs) override;

  std::vector<NodeProfile> profile() const;
  void reset_profile();

 private:
  struct Step {
    ir::Node* node = nullptr;
    const ops::OpSchema* schema = nullptr;
    std::unique_ptr<kernels::Kernel> kernel;
    std::vector<int32_t> in_ids, out_ids;
    bool needs_infer = false;  // some output has a run-time shape
    kernels::KernelContext ctx;
    NodeProfile prof;
  };
  struct GraphPlan {
    std::vector<Step> steps;
  };

  void build(ir::Graph& g);
  void run_graph(GraphPlan& plan);
  void run_step(Step& s);
  TensorView* allocate_dynamic(int32_t id, DType dt, const Shape& shape);

  std::vector<TensorView> frame_;
  std::vector<Tensor> dynamic_;  // grow-only storage per dynamic value id
  std::vector<ir::Value*> values_;
  std::unordered_map<const ir::Graph*, GraphPlan> plans_;
  ir::Graph& main_;
  uint8_t* arena_;
  int num_threads_;
  bool profile_;
};

}  // namespace gec::runtime
