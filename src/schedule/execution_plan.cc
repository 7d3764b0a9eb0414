// make_execution_plan: see schedule.h.
#include "schedule/schedule.h"

namespace gec::schedule {

ExecutionPlan make_execution_plan(const ir::Graph& g, const LayoutAssignment& layouts) {
  ExecutionPlan plan;
  ir::for_each_graph(g, [&](const ir::Graph& sg) {
    GraphSchedule& gs = plan.graphs.emplace_back();
    int32_t index = 0;
    for (const auto& n : sg.nodes()) {
      Step s;
      s.node = index++;
      auto it = layouts.nodes.find(n.get());
      if (it != layouts.nodes.end()) {
        s.input_layouts = it->second.in;
        s.output_layouts = it->second.out;
      }
      s.kernel = kernels::create_kernel(*n, kernel_config(*n, s))->impl_name();
      gs.steps.push_back(std::move(s));
    }
  });
  return plan;
}

}  // namespace gec::schedule
