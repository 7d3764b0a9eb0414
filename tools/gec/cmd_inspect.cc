// gec inspect MODEL.gom: header, partitions, inputs/outputs, nodes, memory
// plan (numbers from the compile report in METADATA; --memory-svg draws it;
// --steps lists the execution plan's steps with kernels, layouts and where
// each output lives).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "memory/plan_svg.h"
#include "model/reader.h"
#include "tools/gec/cli.h"

namespace gec::cli {
namespace {

const char* storage_name(memory::Storage s) {
  switch (s) {
    case memory::Storage::kArena: return "arena";
    case memory::Storage::kWeight: return "weight";
    case memory::Storage::kGraphInput: return "input";
    case memory::Storage::kDynamic: return "dynamic";
    default: return "unplanned";
  }
}

std::string layouts(const std::vector<ops::Layout>& l) {
  std::string r;
  for (ops::Layout x : l) r += std::string(r.empty() ? "" : ",") + ops::layout_name(x);
  return r.empty() ? "plain" : r;
}

// One line per step of the main graph: index, node, op, kernel, layouts
// (inputs -> outputs), then each output's placement.
void print_steps(const model::LoadedModel& m) {
  const std::vector<ir::Node*> nodes = m.graph->node_list();
  std::printf("execution plan (main graph, %zu steps):\n", m.execution_plan.graphs[0].steps.size());
  std::printf("  %5s  %-36s %-18s %-22s %-24s %s\n", "step", "node", "op", "kernel", "layouts in -> out", "outputs");
  int i = 0;
  for (const schedule::Step& st : m.execution_plan.graphs[0].steps) {
    const ir::Node& n = *nodes[static_cast<size_t>(st.node)];
    std::string outs;
    for (const ir::Value* o : n.outputs()) {
      const int32_t id = m.ids.id(o);
      const memory::Placement& p = m.memory_plan.at(id);
      outs += (outs.empty() ? "" : ", ") + o->name() + " " + storage_name(p.storage);
      if (p.storage == memory::Storage::kArena) outs += "@" + std::to_string(p.offset);
      if (m.memory_plan.concat_done(id)) outs += " (in place: skipped)";
    }
    const std::string lay = st.input_layouts.empty() && st.output_layouts.empty()
                                ? "plain"
                                : layouts(st.input_layouts) + " -> " + layouts(st.output_layouts);
    std::printf("  %5d  %-36s %-18s %-22s %-24s %s\n", i++, n.name.c_str(), n.op_type.c_str(), st.kernel.c_str(),
                lay.c_str(), outs.c_str());
  }
}

}  // namespace

Command add_inspect(CLI::App& root) {
  auto path = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>();
  auto steps = std::make_shared<bool>(false);
  CLI::App* app = root.add_subcommand("inspect", "show what a .gom offline model holds");
  app->add_option("model", *path, "MODEL.gom")->required();
  app->add_option("--memory-svg", *svg, "draw the arena plan (x: step, y: offset) into this SVG file");
  app->add_flag("--steps", *steps, "list the main graph's execution plan: kernel, layouts, output placement per step");
  return {app, [path, svg, steps]() {
            model::GomSummary s = model::inspect_gom_file(*path);
            std::printf("%s: GraphEngine offline model, format version %u, %llu bytes, checksum %s\n",
                        path->c_str(), s.format_version, static_cast<unsigned long long>(s.file_size),
                        s.checksum_ok ? "ok" : "MISMATCH");
            std::printf("partitions:\n");
            for (const auto& p : s.partitions)
              std::printf("  %-10s offset %10llu  size %10llu  xxh64 %016llx %s\n", p.kind.c_str(),
                          static_cast<unsigned long long>(p.offset), static_cast<unsigned long long>(p.size),
                          static_cast<unsigned long long>(p.xxh64), p.checksum_ok ? "ok" : "MISMATCH");
            auto session = Session::load(*path);  // validates fully
            std::printf("inputs:\n");
            for (const auto& io : session->inputs()) std::printf("  %s\n", io.str().c_str());
            std::printf("outputs:\n");
            for (const auto& io : session->outputs()) std::printf("  %s\n", io.str().c_str());
            std::printf("nodes: %lld (%lld graphs), values: %lld, constants: %lld, source opset %d\n",
                        static_cast<long long>(s.node_count), static_cast<long long>(s.graph_count),
                        static_cast<long long>(s.value_count), static_cast<long long>(s.constant_count), s.opset);
            std::printf("arena: %lld bytes, weights: %lld bytes\n", static_cast<long long>(s.arena_bytes),
                        static_cast<long long>(s.weights_bytes));
            if (!s.metadata_json.empty()) {
              auto meta = nlohmann::json::parse(s.metadata_json, nullptr, false);
              if (!meta.is_discarded()) {
                std::printf("compiled by %s %s from %s (sha256 %s)\n", meta.value("compiler", "?").c_str(),
                            meta.value("compiler_version", "?").c_str(), meta.value("source_model", "?").c_str(),
                            meta.value("source_sha256", "?").c_str());
                if (meta.contains("report") && meta["report"].contains("memory")) {
                  const auto& m = meta["report"]["memory"];
                  std::printf("memory plan: no reuse %lld bytes, arena %lld, lower bound %lld, weights %lld, "
                              "reuse rate %.1f%%\n",
                              m.value("no_reuse_bytes", 0LL), m.value("arena_bytes", 0LL),
                              m.value("lower_bound_bytes", 0LL), m.value("weights_bytes", 0LL),
                              100 * m.value("reuse_rate", 0.0));
                  std::printf("  %lld aliases, %lld in place, %lld concats in place, %lld dynamic values, "
                              "strategy %s\n",
                              m.value("aliases", 0LL), m.value("in_place", 0LL), m.value("concats_in_place", 0LL),
                              m.value("dynamic_values", 0LL), m.value("strategy", std::string("?")).c_str());
                }
              }
            }
            if (*steps) print_steps(model::read_gom_file(*path));
            if (!svg->empty()) {
              model::LoadedModel lm = model::read_gom_file(*path);
              std::ofstream f(*svg);
              f << memory::plan_svg(*lm.graph, lm.ids, lm.memory_plan);
              if (!f) fail(ErrorCode::kIo, *svg + ": cannot write");
              std::printf("memory plan drawn in %s\n", svg->c_str());
            }
            return 0;
          }};
}

}  // namespace gec::cli
