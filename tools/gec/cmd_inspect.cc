// gec inspect MODEL.gom: header, partitions, inputs/outputs, nodes, memory
// plan (numbers from the compile report in METADATA; --memory-svg draws it;
// --steps lists the execution plan's steps with kernels, layouts and where
// each output lives).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "memory/plan_svg.h"
#include "model/reader.h"
#include "ops/domain.h"
#include "ops/layout.h"
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
// (inputs -> outputs), then each output's placement. A plan on several
// streams is listed stream by stream, each step with the events it waits for
// (and the steps recording them) and the event it records.
void print_steps(const model::LoadedModel& m) {
  const std::vector<ir::Node*> nodes = m.graph->node_list();
  const schedule::GraphSchedule& gs = m.execution_plan.graphs[0];
  std::printf("execution plan (main graph, %zu steps, %d stream%s, %d event%s):\n", gs.steps.size(), gs.streams,
              gs.streams == 1 ? "" : "s", gs.events, gs.events == 1 ? "" : "s");
  std::vector<int> recorder(static_cast<size_t>(gs.events), -1);
  for (size_t i = 0; i < gs.steps.size(); ++i)
    if (gs.steps[i].record_event >= 0) recorder[static_cast<size_t>(gs.steps[i].record_event)] = static_cast<int>(i);
  for (int32_t stream = 0; stream < gs.streams; ++stream) {
    if (gs.streams > 1) {
      size_t count = 0;
      for (const schedule::Step& st : gs.steps) count += st.stream == stream;
      std::printf("stream %d (%zu steps):\n", stream, count);
    }
    std::printf("  %5s  %-36s %-26s %-28s %-7s %-24s %s\n", "step", "node", "op", "kernel", "threads",
                "layouts in -> out", "outputs");
    int i = -1;
    for (const schedule::Step& st : gs.steps) {
      ++i;
      if (st.stream != stream) continue;
      const ir::Node& n = *nodes[static_cast<size_t>(st.node)];
      std::string outs;
      for (const ir::Value* o : n.outputs()) {
        const int32_t id = m.ids.id(o);
        const memory::Placement& p = m.memory_plan.at(id);
        outs += (outs.empty() ? "" : ", ") + o->name() + " " + storage_name(p.storage);
        if (p.storage == memory::Storage::kArena) outs += "@" + std::to_string(p.offset);
        if (m.memory_plan.concat_done(id)) outs += " (in place: skipped)";
      }
      for (int32_t e : st.wait_events)
        outs += "; waits e" + std::to_string(e) + " (step " + std::to_string(recorder[static_cast<size_t>(e)]) + ")";
      if (st.record_event >= 0) outs += "; records e" + std::to_string(st.record_event);
      // A Reorder's tensors are plain to the plan; its attributes say what it moves between.
      const bool reorder = n.domain == ops::kGecDomain && n.op_type == ops::kReorderOp;
      const std::string lay = reorder ? n.get_string("from", "?") + " -> " + n.get_string("to", "?")
                              : st.input_layouts.empty() && st.output_layouts.empty()
                                  ? "plain"
                                  : layouts(st.input_layouts) + " -> " + layouts(st.output_layouts);
      std::printf("  %5d  %-36s %-26s %-28s %-7s %-24s %s\n", i, n.name.c_str(), n.op_type.c_str(), st.kernel.c_str(),
                  st.threads == 1 ? "1" : "all", lay.c_str(), outs.c_str());
    }
  }
}

// METADATA is JSON the compiler wrote, but the file may come from anywhere:
// every field is read only if it is there with the expected type ("?" or 0
// otherwise), so odd METADATA never stops inspect.
std::string text_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "?";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "?";
}
double number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}
const nlohmann::json& object_at(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

void print_metadata(const std::string& text) {
  const auto meta = nlohmann::json::parse(text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) {
    std::printf("metadata: not a JSON object (%zu bytes)\n", text.size());
    return;
  }
  std::printf("compiled by %s %s from %s (sha256 %s)\n", text_at(meta, "compiler").c_str(),
              text_at(meta, "compiler_version").c_str(), text_at(meta, "source_model").c_str(),
              text_at(meta, "source_sha256").c_str());
  const nlohmann::json& o = object_at(meta, "options");
  if (!o.empty()) {
    std::string line = "compile options: -O" + (o.contains("opt_level") ? o["opt_level"].dump() : std::string("?"));
    if (o.contains("input_shapes") && o["input_shapes"].is_object())
      for (const auto& [name, dims] : o["input_shapes"].items()) {
        std::string d;
        if (dims.is_array())
          for (const auto& v : dims) d += (d.empty() ? "" : ",") + v.dump();
        line += " --input-shape " + name + ":" + d;
      }
    if (o.contains("disabled_passes") && o["disabled_passes"].is_array())
      for (const auto& p : o["disabled_passes"])
        if (p.is_string()) line += " --disable-pass " + p.get<std::string>();
    if (o.contains("streams") && o["streams"].is_number_integer())
      line += " --streams " + (o["streams"].get<int64_t>() == 0 ? std::string("auto") : o["streams"].dump());
    std::printf("%s\n", line.c_str());
  }
  const nlohmann::json& st = object_at(object_at(meta, "report"), "streams");
  if (!st.empty())
    std::printf("streams: %.0f (%s); events %.0f of %.0f cross-stream edges after pruning; estimated %.3f ms, "
                "critical path %.3f ms, one stream %.3f ms; arena %.0f bytes, %.0f on one stream\n",
                number_at(st, "count"), text_at(st, "choice").c_str(), number_at(st, "events"),
                number_at(st, "events_before_pruning"), number_at(st, "estimate_ms"),
                number_at(st, "critical_path_ms_estimate"), number_at(st, "one_stream_estimate_ms"),
                number_at(st, "arena_bytes"), number_at(st, "one_stream_arena_bytes"));
  const nlohmann::json& m = object_at(object_at(meta, "report"), "memory");
  if (m.empty()) return;
  std::printf("memory plan: no reuse %.0f bytes, arena %.0f, lower bound %.0f, weights %.0f, reuse rate %.1f%%\n",
              number_at(m, "no_reuse_bytes"), number_at(m, "arena_bytes"), number_at(m, "lower_bound_bytes"),
              number_at(m, "weights_bytes"), 100 * number_at(m, "reuse_rate"));
  std::printf("  %.0f aliases, %.0f in place, %.0f concats in place, %.0f dynamic values, strategy %s\n",
              number_at(m, "aliases"), number_at(m, "in_place"), number_at(m, "concats_in_place"),
              number_at(m, "dynamic_values"), text_at(m, "strategy").c_str());
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
              std::printf("  %-13s offset %10llu  size %10llu  xxh64 %016llx %s\n", p.kind.c_str(),
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
            std::printf("arena: %lld bytes, weights: %lld bytes", static_cast<long long>(s.arena_bytes),
                        static_cast<long long>(s.weights_bytes));
            if (s.packed_weight_count > 0)
              std::printf(" (with %lld weight copies packed for the CPU the file was compiled on, %lld bytes; "
                          "`gec bench` shows whether this machine reads them)",
                          static_cast<long long>(s.packed_weight_count), static_cast<long long>(s.packed_weight_bytes));
            else
              std::printf(" (no weight copies packed at compile time)");
            std::printf("\n");
            if (!s.metadata_json.empty()) print_metadata(s.metadata_json);
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
