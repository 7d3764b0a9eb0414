// gec inspect MODEL.gom: header, partitions, inputs/outputs, nodes, memory
// plan (numbers from the compile report in METADATA; --memory-svg draws it).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "memory/plan_svg.h"
#include "model/reader.h"
#include "tools/gec/cli.h"

namespace gec::cli {

Command add_inspect(CLI::App& root) {
  auto path = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>();
  CLI::App* app = root.add_subcommand("inspect", "show what a .gom offline model holds");
  app->add_option("model", *path, "MODEL.gom")->required();
  app->add_option("--memory-svg", *svg, "draw the arena plan (x: step, y: offset) into this SVG file");
  return {app, [path, svg]() {
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
