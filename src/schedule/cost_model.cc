// node_cost_us: see cost_model.h.
#include "schedule/cost_model.h"

#include <algorithm>

#include "gec/bench.h"
#include "schedule/execution_plan.h"

namespace gec::schedule {

double node_cost_us(const ir::Node& n, int threads) {
  threads = std::max(1, threads);
  double body_us = 0;
  for (const auto& a : n.attrs)
    if (a.kind == ir::Attribute::Kind::kGraph && a.g)
      for (const auto& sn : a.g->nodes()) body_us += node_cost_us(*sn, threads);
  double bytes = 0, numel_out = 0;
  bool known = true;
  std::vector<Shape> ins, outs;
  auto add = [&](const ir::Value* v, std::vector<Shape>& shapes) {
    if (!v || !v->type.is_tensor()) {
      shapes.emplace_back();
      return;
    }
    if (!v->type.is_static() || v->type.dtype == DType::kString) {
      known = false;
      shapes.emplace_back();
      return;
    }
    shapes.push_back(v->type.static_shape());
    bytes += static_cast<double>(shape_numel(shapes.back())) * static_cast<double>(dtype_size(v->type.dtype));
  };
  for (const ir::Value* v : n.inputs()) add(v, ins);
  for (const ir::Value* v : n.outputs()) {
    add(v, outs);
    if (!outs.back().empty() || (v && v->type.is_static())) numel_out += static_cast<double>(shape_numel(outs.back()));
  }
  if (!known) bytes = std::max(bytes, 64.0 * 1024);
  const double flops = known ? std::max(node_flops(n.op_type, ins, outs), numel_out) : numel_out;
  const double one = std::max(flops / kFlopsPerThreadPerUs, bytes / kBytesPerThreadPerUs);
  // Small nodes run on one thread (schedule::Step::threads).
  const bool small = known && bytes < kSingleThreadBytes && flops < kSingleThreadFlops;
  if (threads == 1 || small) return kNodeOverheadUs + one + body_us;
  return kNodeOverheadUs + kParallelRegionUs + one / (threads * kParallelEfficiency) + body_us;
}

}  // namespace gec::schedule
