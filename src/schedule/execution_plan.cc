// make_execution_plan: see schedule.h.
#include "gec/bench.h"
#include "gec/error.h"
#include "schedule/schedule.h"

namespace gec::schedule {

namespace {
// 1 when the node is small (static shapes, few bytes and FLOPs), else 0.
int32_t threads_for(const ir::Node& n) {
  int64_t bytes = 0;
  std::vector<Shape> ins, outs;
  for (const ir::Value* v : n.inputs()) {
    if (!v) {
      ins.emplace_back();
      continue;
    }
    if (!v->type.is_static() || v->type.dtype == DType::kString) return 0;
    ins.push_back(v->type.static_shape());
    bytes += shape_numel(ins.back()) * static_cast<int64_t>(dtype_size(v->type.dtype));
  }
  for (const ir::Value* v : n.outputs()) {
    if (!v || !v->type.is_static() || v->type.dtype == DType::kString) return 0;
    outs.push_back(v->type.static_shape());
    bytes += shape_numel(outs.back()) * static_cast<int64_t>(dtype_size(v->type.dtype));
  }
  for (const auto& a : n.attrs)
    if (a.kind == ir::Attribute::Kind::kGraph) return 0;  // control flow: its body decides
  return bytes < kSingleThreadBytes && node_flops(n.op_type, ins, outs) < kSingleThreadFlops ? 1 : 0;
}
}  // namespace

ExecutionPlan make_execution_plan(const ir::Graph& g, const LayoutAssignment& layouts,
                                  const GraphSchedule* streams, const kernels::VariantChoice& choose_variant) {
  ExecutionPlan plan;
  if (streams) GEC_CHECK(streams->steps.size() == g.nodes().size(), "stream plan does not fit the graph");
  ir::for_each_graph(g, [&](const ir::Graph& sg) {
    GraphSchedule& gs = plan.graphs.emplace_back();
    const bool main = &sg == &g && streams;
    if (main) {
      gs.streams = streams->streams;
      gs.events = streams->events;
    }
    int32_t index = 0;
    for (const auto& n : sg.nodes()) {
      Step s;
      s.node = index++;
      auto it = layouts.nodes.find(n.get());
      if (it != layouts.nodes.end()) {
        s.input_layouts = it->second.in;
        s.output_layouts = it->second.out;
      }
      if (choose_variant) s.variant = choose_variant(*n, kernel_config(*n, s));
      s.kernel = kernels::create_kernel(*n, kernel_config(*n, s))->impl_name();
      s.threads = threads_for(*n);
      if (main) {
        const Step& ss = streams->steps[static_cast<size_t>(s.node)];
        s.stream = ss.stream;
        s.wait_events = ss.wait_events;
        s.record_event = ss.record_event;
      }
      gs.steps.push_back(std::move(s));
    }
  });
  return plan;
}

}  // namespace gec::schedule
