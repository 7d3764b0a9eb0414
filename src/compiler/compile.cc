// The compile driver: runs the pipeline stages of DESIGN.md in order and
// records their wall time, the pass statistics and the memory plan in the
// compile report, which is also stored in the .gom METADATA partition.
#include <openssl/evp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "frontend/model_format.h"
#include "frontend/onnx/importer.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "gec/threading.h"
#include "kernels/kernel.h"
#include "memory/planner.h"
#include "model/reader.h"
#include "model/writer.h"
#include "ops/domain.h"
#include "passes/pass.h"
#include "passes/rewrite_rules.h"
#include "runtime/executor.h"
#include "schedule/schedule.h"
#include "support/mapped_file.h"

namespace gec {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string sha256_hex(const uint8_t* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, size, md, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string r;
  for (unsigned i = 0; i < len; ++i) {
    r += hex[md[i] >> 4];
    r += hex[md[i] & 15];
  }
  return r;
}

std::string dir_of(const std::string& path) {
  auto p = path.find_last_of('/');
  return p == std::string::npos ? "." : path.substr(0, p);
}

// kInvalidArgument for a level outside 0..3 or an unknown pass name.
void check_options(const CompileOptions& opts) {
  if (opts.opt_level < 0 || opts.opt_level > 3)
    fail(ErrorCode::kInvalidArgument, "optimization level must be 0..3, got " + std::to_string(opts.opt_level));
  for (const auto& name : opts.disabled_passes) {
    auto all = passes::all_pass_names();
    if (std::find(all.begin(), all.end(), name) == all.end())
      fail(ErrorCode::kInvalidArgument, passes::unknown_pass_message(name));
  }
}

// The pipeline over serialized ModelProto bytes; `source` names the model in
// messages and in the metadata, `model_dir` is where external data lives.
CompiledModel compile_bytes(const uint8_t* data, size_t size, const std::string& model_dir, const std::string& source,
                            const CompileOptions& opts, bool any_format = false);

}  // namespace

CompiledModel compile_onnx_file(const std::string& path, const CompileOptions& opts) {
  check_options(opts);
  if (opts.on_stage) opts.on_stage("parse", 0, 7);
  const auto file = MappedFile::open(path);  // parsed in place, not read into a copy
  return compile_bytes(file->data(), file->size(), dir_of(path), path, opts);
}

CompiledModel compile_file(const std::string& path, const CompileOptions& opts) {
  check_options(opts);
  if (opts.on_stage) opts.on_stage("parse", 0, 7);
  const auto file = MappedFile::open(path);
  return compile_bytes(file->data(), file->size(), dir_of(path), path, opts, /*any_format=*/true);
}

CompiledModel compile_any_bytes(const void* data, size_t size, const CompileOptions& opts, const std::string& model_dir,
                                const std::string& source_name) {
  check_options(opts);
  if (opts.on_stage) opts.on_stage("parse", 0, 7);
  return compile_bytes(static_cast<const uint8_t*>(data), size, model_dir.empty() ? "." : model_dir, source_name, opts,
                       /*any_format=*/true);
}

CompiledModel compile_onnx_bytes(const void* data, size_t size, const CompileOptions& opts,
                                 const std::string& external_data_dir, const std::string& source_name) {
  check_options(opts);
  if (opts.on_stage) opts.on_stage("parse", 0, 7);
  return compile_bytes(static_cast<const uint8_t*>(data), size, external_data_dir.empty() ? "." : external_data_dir,
                       source_name, opts);
}

namespace {

// Names and strings from the model (producer, node and value names) are
// bytes, not necessarily UTF-8; JSON output replaces invalid sequences with
// U+FFFD instead of throwing.
constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

/// The compile report's "fusion" object: kernels entering the first pass
/// that fuses or folds (after -O1's cleanup) and leaving the last pass,
/// FusedElementwise groups and the ops in them, rewrites per rule.
nlohmann::json fusion_report(const ir::Graph& g, const std::vector<passes::PassStats>& stats,
                             const nlohmann::json& rules) {
  static const std::set<std::string> cleanup = {"constant_folding", "noop_elimination", "cse",
                                                "dead_node_elimination", "shape_inference"};
  int64_t before = -1;
  for (const auto& s : stats)
    if (!cleanup.count(s.name)) {
      before = static_cast<int64_t>(s.nodes_before);
      break;
    }
  const int64_t after = static_cast<int64_t>(g.count_nodes_recursive());
  int64_t groups = 0, ops_in_groups = 0;
  ir::for_each_graph(g, [&](const ir::Graph& sg) {
    for (const auto& n : sg.nodes())
      if (n->domain == ops::kGecDomain && n->op_type == "FusedElementwise") {
        ++groups;
        ops_in_groups += static_cast<int64_t>(n->fused_from.size());
      }
  });
  // Every rule by name (0 when it did not fire or its pass did not run),
  // then the grouping passes' counts.
  nlohmann::json r = nlohmann::json::object();
  for (const passes::RewriteRule* rule : passes::all_rules()) r[rule->name] = rules.value(rule->name, 0);
  r["channel_shuffle_split"] = rules.value("channel_shuffle_split", 0);
  int64_t merged = 0;
  for (const auto& s : stats)
    if (s.name == "matmul_merge") merged += s.changes;
  r["matmul_merge"] = merged;
  r["autofusion"] = groups;
  return {{"groups", groups}, {"ops_in_groups", ops_in_groups}, {"kernels_before", before < 0 ? after : before},
          {"kernels_after", after}, {"rules", r}};
}

// Weights packed at compile time: the runtime's own kernels, made over the
// planned graph, pack every constant weight of a main-graph step whose
// shapes are known before a run the way their primitives want it on this
// machine at its default thread count; copies() then lists what the .gom
// stores. The model borrows the compiler's graph for that time and gives it
// back on destruction, after the executor is gone. Best effort: when the
// kernels cannot be made or packed here (e.g. no address space for the
// arena), `failure()` says why and there are no copies; the runtime then
// packs when it loads the model, as without this stage.
class WeightPacking {
 public:
  WeightPacking(std::unique_ptr<ir::Graph>& owner, const ir::ValueIndex& ids, const memory::MemoryPlan& plan,
                const schedule::ExecutionPlan& exec_plan)
      : owner_(owner) {
    try {
      model_.ids = ids;
      model_.memory_plan = plan;
      model_.execution_plan = exec_plan;
      model_.arena_bytes = plan.arena_bytes;
      // Address space only (reshape reads shapes, never data): no memory is
      // committed however large the arena.
      arena_bytes_ = static_cast<size_t>(std::max<int64_t>(plan.arena_bytes, 1));
      arena_ = ::mmap(nullptr, arena_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (arena_ == MAP_FAILED) {
        arena_ = nullptr;
        fail(ErrorCode::kUnsupported, "no address space for an arena of " + std::to_string(arena_bytes_) + " bytes");
      }
      model_.graph = std::move(owner);
      ir::for_each_graph(*model_.graph, [&](const ir::Graph& sub) { model_.graphs.push_back(&sub); });
      exec_ = std::make_unique<runtime::Executor>(model_, static_cast<uint8_t*>(arena_), available_cores(), false, 0,
                                                  &shared_);
      steps_ = exec_->prepare_weights();
    } catch (const std::exception& e) {
      failure_ = e.what();
      give_back();
    }
  }
  ~WeightPacking() {
    give_back();
    if (arena_) ::munmap(arena_, arena_bytes_);
  }
  WeightPacking(const WeightPacking&) = delete;
  WeightPacking& operator=(const WeightPacking&) = delete;

  /// Steps reshaped and packed.
  size_t steps() const { return steps_; }
  /// Why nothing was packed ("" when packing ran).
  const std::string& failure() const { return failure_; }
  /// The copies, each under a value whose constant data it was packed
  /// from: of the values sharing that data pointer, the one with the most
  /// bytes (the whole tensor rather than a view of its start), lowest id
  /// first; the reader keys the copy by that constant's data pointer.
  /// Sorted by value id, then layout (the same bytes in every compile).
  std::vector<model::PackedWeightBytes> copies() const {
    if (!failure_.empty()) return {};
    std::unordered_map<const void*, int32_t> value_of;
    for (int32_t id = 0; id < model_.ids.size(); ++id) {
      const ir::Value* v = model_.ids.value(id);
      if (!v->is_constant() || v->constant->dtype() == DType::kString) continue;
      auto [it, fresh] = value_of.emplace(v->constant->data(), id);
      if (!fresh && model_.ids.value(it->second)->constant->bytes() < v->constant->bytes()) it->second = id;
    }
    std::vector<model::PackedWeightBytes> out;
    for (const auto& [plain, p] : shared_.packed()) {
      auto it = value_of.find(plain);
      if (it != value_of.end()) out.push_back({it->second, p.layout, p.data, p.bytes});
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.value != b.value ? a.value < b.value : a.layout < b.layout; });
    return out;
  }

 private:
  void give_back() {
    exec_.reset();
    if (model_.graph) owner_ = std::move(model_.graph);
  }
  std::unique_ptr<ir::Graph>& owner_;
  model::LoadedModel model_;
  kernels::SharedWeights shared_;
  void* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  std::unique_ptr<runtime::Executor> exec_;
  size_t steps_ = 0;
  std::string failure_;
};

// CompileOptions::extra_outputs: the named (or, for "*", every) tensor a
// main-graph node computes becomes a graph output, in node order, after the
// model's own outputs. Names are marked right after import (the passes keep
// them); "*" after the passes (the values of the optimized graph).
void add_extra_outputs(ir::Graph& g, const std::vector<std::string>& names) {
  std::unordered_set<const ir::Value*> out(g.outputs().begin(), g.outputs().end());
  auto add = [&](ir::Value* v) {
    if (out.insert(v).second) g.outputs().push_back(v);
  };
  const bool all = std::find(names.begin(), names.end(), "*") != names.end();
  if (all) {
    for (const auto& n : g.nodes())
      for (ir::Value* v : n->outputs())
        if (v && v->type.is_tensor() && !v->name().empty()) add(v);
    return;
  }
  for (const std::string& name : names) {
    ir::Value* v = g.find_value(name);
    if (!v || !v->producer() || v->owner() != &g)
      fail(ErrorCode::kInvalidArgument, "extra output '" + name + "': no node of the main graph computes a value of "
                                        "that name");
    if (!v->type.is_tensor())
      fail(ErrorCode::kInvalidArgument, "extra output '" + name + "' is a " + v->type.str() + ", not a tensor");
    add(v);
  }
}

CompiledModel compile_bytes(const uint8_t* data, size_t size, const std::string& model_dir, const std::string& path,
                            const CompileOptions& opts, bool any_format) {
  nlohmann::json report;
  auto& stages = report["stages"];

  auto t = Clock::now();
  frontend::ImportOptions io;
  io.input_shapes = opts.input_shapes;
  io.source_name = path;
  io.outputs = opts.outputs;
  const frontend::ModelFormat format = frontend::detect_format(data, size);
  if (!any_format && format != frontend::ModelFormat::kOnnx)
    fail(ErrorCode::kInvalidArgument, path + " is a " + frontend::format_name(format) +
                                          ", not an ONNX model: compile it with compile_file()");
  frontend::ImportResult imported = frontend::import_any(data, size, model_dir, io);
  report["frontend"] = imported.format;
  if (!imported.warnings.empty()) report["warnings"] = imported.warnings;
  ir::Graph& g = *imported.graph;
  const bool every_value =
      std::find(opts.extra_outputs.begin(), opts.extra_outputs.end(), "*") != opts.extra_outputs.end();
  if (!opts.extra_outputs.empty() && !every_value) add_extra_outputs(g, opts.extra_outputs);
  stages["parse"] = ms_since(t);

  t = Clock::now();
  if (opts.on_stage) opts.on_stage("optimize", 1, 7);
  std::vector<passes::PassStats> stats = passes::make_pipeline(opts.opt_level).run(g, opts);
  stages["optimize"] = ms_since(t);
  report["passes"] = nlohmann::json::array();
  report["rules"] = nlohmann::json::object();
  for (const auto& s : stats) {
    report["passes"].push_back({{"name", s.name}, {"ms", s.ms}, {"nodes_before", s.nodes_before},
                                {"nodes_after", s.nodes_after}, {"changes", s.changes}});
    if (!s.rules.empty()) report["passes"].back()["rules"] = s.rules;
    for (const auto& [rule, count] : s.rules) report["rules"][rule] = report["rules"].value(rule, 0) + count;
  }
  report["fusion"] = fusion_report(g, stats, report["rules"]);
  if (every_value) add_extra_outputs(g, {"*"});  // what the optimized graph computes
  report["nodes"] = {{"onnx", imported.onnx_nodes}, {"final", g.count_nodes_recursive()}};

  // Schedule: layouts (with the Reorders they need), then the order.
  t = Clock::now();
  if (opts.on_stage) opts.on_stage("schedule", 2, 7);
  schedule::LayoutAssignment layouts;
  // A compile stage runs at -O2 and up unless --disable-pass names it.
  const auto enabled = [&](const char* stage) {
    return opts.opt_level >= 2 && std::find(opts.disabled_passes.begin(), opts.disabled_passes.end(), stage) ==
                                      opts.disabled_passes.end();
  };
  const bool layouts_on = enabled("layout_propagation");
  // Kernel variants (-O2 and up, each unless --disable-pass names its
  // stage): Winograd convolutions where oneDNN's pay, or our own in nhwc
  // where oneDNN has none (kernels/cpu/nn/conv.cc; the layout assignment
  // weighs oneDNN's too), ... A variant turned off leaves
  // its convolutions on oneDNN's default kernel, never on another variant.
  const bool winograd_on = enabled("winograd"), direct_on = enabled("direct_conv"), nhwc_on = enabled("nhwc_conv"),
             taps_on = enabled("taps_conv"), im2col_on = enabled("im2col_conv"), gemm_on = enabled("native_gemm");
  // ... small convolutions on our own loops instead of a oneDNN primitive
  // made at load (the "direct" variant, conv.cc's direct_pays), and strided
  // nChw16c convolutions in oneDNN's nhwc kernel between reorders (the
  // "nhwc" variant, nhwc_pays), and atrous convolutions mostly over their
  // zero padding as one product per tap that reaches inside X (the "taps"
  // variant, conv.cc's taps_shape_pays; the layout query names it
  // native.taps, which keeps such a convolution nhwc), and strided (or
  // small-map) nhwc convolutions as gathered columns and one GEMM where oneDNN's nhwc
  // kernel is not brgemm (the "im2col_nhwc" variant, im2col_nhwc_pays), and
  // float32 MatMul and Gemm on our own GEMM where oneDNN's would be its
  // sgemm (the "gemm" variant, kernels/cpu/nn/matmul.cc).
  kernels::VariantChoice choose_variant;
  if (winograd_on || direct_on || nhwc_on || taps_on || im2col_on || gemm_on)
    choose_variant = [winograd_on, direct_on, nhwc_on, taps_on, im2col_on, gemm_on](const ir::Node& n,
                                                                                   const kernels::KernelConfig& c) {
      const std::string v = kernels::choose_variant(n, c);
      return ((v == "winograd" || v == "winograd_nhwc") && !winograd_on) || (v == "direct" && !direct_on) ||
                     (v == "nhwc" && !nhwc_on) || (v == "taps" && !taps_on) || (v == "im2col_nhwc" && !im2col_on) ||
                     (v == "gemm" && !gemm_on)
                 ? std::string()
                 : v;
    };
  // Without the taps variant such a convolution has oneDNN's gemm kernel in
  // nhwc too: the layout assignment weighs that (and keeps it plain).
  kernels::LayoutQuery layout_query;
  if (!taps_on)
    layout_query = [](const ir::Node& n, ops::Layout src, ops::Layout dst) {
      const std::string impl = kernels::implementation_for_layout(n, src, dst);
      return impl == "native.taps" ? std::string("gemm (the taps variant disabled)") : impl;
    };
  if (layouts_on) {
    const size_t before = g.count_nodes_recursive();
    layouts = schedule::assign_layouts(g, layout_query, choose_variant);
    report["layout"] = {{"blocked_values", layouts.blocked_values},
                        {"channels_last_values", layouts.channels_last_values},
                        {"reorders", layouts.reorders},
                        {"nodes_before", before}, {"nodes_after", g.count_nodes_recursive()}};
    report["nodes"]["final"] = g.count_nodes_recursive();
  }
  g.topo_sort();
  // Streams: below -O2, auto means one (a plan in the model's own order).
  schedule::StreamOptions stream_opts;
  stream_opts.streams = opts.streams == 0 && opts.opt_level < 2 ? 1 : opts.streams;
  int64_t one_stream_arena = -1;
  if (stream_opts.streams != 1)
    one_stream_arena = memory::plan_memory(g, ir::ValueIndex(g), nullptr, &layouts.copied_concats).arena_bytes;
  const schedule::StreamAssignment streams = schedule::assign_streams(g, stream_opts);
  if (opts.verify_each_pass) g.verify();
  // The dump after the passes' (input + one per pass run) shows the Reorders.
  if (!opts.dump_graph_dir.empty() && layouts_on)
    passes::dump_graph(g, opts.dump_graph_dir, static_cast<int>(stats.size()) + 1, "layout_propagation");
  stages["schedule"] = ms_since(t);

  t = Clock::now();
  if (opts.on_stage) opts.on_stage("memory", 3, 7);
  const ir::ValueIndex ids(g);
  const schedule::Concurrency order = [&] {
    try {
      return schedule::Concurrency(streams.schedule);
    } catch (const Error& e) {  // our own schedule: a compiler bug, not a corrupt file
      fail(ErrorCode::kInternal, e.what());
    }
  }();
  const memory::MemoryPlan plan = memory::plan_memory(g, ids, &order, &layouts.copied_concats);
  const memory::MemoryStats& ms = plan.stats;
  // Always verified (not only in debug builds or under verify_each_pass): it
  // only visits pairs of values that share bytes, a few ms on large models,
  // and a wrong plan would corrupt results silently. On several streams it
  // also proves every read waits for its producer.
  memory::verify_plan(g, ids, plan, &order);
  stages["memory"] = ms_since(t);
  if (opts.max_weights_bytes > 0 && ms.weights_bytes > opts.max_weights_bytes)
    fail(ErrorCode::kUnsupported, path + ": " + std::to_string(ms.weights_bytes) + " bytes of weights, more than the " +
                                      std::to_string(opts.max_weights_bytes) + " allowed (--max-weights-bytes)");
  if (opts.max_arena_bytes > 0 && ms.arena_bytes > opts.max_arena_bytes)
    fail(ErrorCode::kUnsupported, path + ": an activation arena of " + std::to_string(ms.arena_bytes) +
                                      " bytes, more than the " + std::to_string(opts.max_arena_bytes) +
                                      " allowed (--max-arena-bytes)");
  report["memory"] = {{"no_reuse_bytes", ms.no_reuse_bytes}, {"arena_bytes", ms.arena_bytes},
                      {"lower_bound_bytes", ms.lower_bound_bytes}, {"weights_bytes", ms.weights_bytes},
                      {"reuse_rate", ms.reuse_rate}, {"dynamic_values", ms.dynamic_values},
                      {"aliases", ms.aliases}, {"in_place", ms.in_place},
                      {"concats_in_place", ms.concats_in_place}, {"strategy", ms.strategy}};
  int64_t waits = 0;
  for (const schedule::Step& st : streams.schedule.steps) waits += static_cast<int64_t>(st.wait_events.size());
  report["streams"] = {{"count", streams.schedule.streams},
                       {"choice", streams.choice},
                       {"events_before_pruning", streams.events_before_pruning},
                       {"events", waits},
                       {"events_recorded", streams.schedule.events},
                       {"critical_path_ms_estimate", streams.critical_path_ms},
                       {"estimate_ms", streams.estimate_ms},
                       {"one_stream_estimate_ms", streams.sequential_estimate_ms},
                       {"arena_bytes", ms.arena_bytes},
                       {"one_stream_arena_bytes", one_stream_arena >= 0 ? one_stream_arena : ms.arena_bytes}};

  // Lower: each node's kernel, created once with its layouts (proving op,
  // attributes, dtypes and layouts are supported), recorded per step.
  t = Clock::now();
  if (opts.on_stage) opts.on_stage("lower", 4, 7);
  const schedule::ExecutionPlan exec_plan = schedule::make_execution_plan(g, layouts, &streams.schedule, choose_variant);
  stages["lower"] = ms_since(t);
  if (choose_variant) {
    nlohmann::json variants = nlohmann::json::object();
    for (const schedule::GraphSchedule& gs : exec_plan.graphs)
      for (const schedule::Step& st : gs.steps)
        if (!st.variant.empty()) variants[st.variant] = variants.value(st.variant, 0) + 1;
    variants["winograd"] = variants.value("winograd", 0);
    variants["direct"] = variants.value("direct", 0);
    variants["nhwc"] = variants.value("nhwc", 0);
    variants["winograd_nhwc"] = variants.value("winograd_nhwc", 0);
    variants["taps"] = variants.value("taps", 0);
    variants["im2col_nhwc"] = variants.value("im2col_nhwc", 0);
    variants["gemm"] = variants.value("gemm", 0);
    report["kernel_variants"] = variants;
  }

  // Pack weights (-O2 and up, unless --disable-pass pack_weights): the
  // .gom stores the packed copies after the plain constants.
  std::vector<model::PackedWeightBytes> packed;
  std::unique_ptr<WeightPacking> packing;  // holds the bytes `packed` points at until the write
  if (enabled("pack_weights")) {
    t = Clock::now();
    if (opts.on_stage) opts.on_stage("pack weights", 5, 7);
    packing = std::make_unique<WeightPacking>(imported.graph, ids, plan, exec_plan);
    packed = packing->copies();
    int64_t packed_bytes = 0;
    for (const auto& c : packed) packed_bytes += static_cast<int64_t>(c.bytes);
    report["packed_weights"] = {{"steps_prepared", packing->steps()}, {"weights", packed.size()}, {"bytes", packed_bytes}};
    if (!packing->failure().empty()) {
      report["packed_weights"]["failure"] = packing->failure();
      report["warnings"].push_back("weights not packed at compile time (" + packing->failure() +
                                   "): the load packs them");
    }
    stages["pack_weights"] = ms_since(t);
  }

  nlohmann::json meta;
  meta["compiler"] = "GraphEngine";
  meta["compiler_version"] = version();
  meta["source_model"] = path;
  meta["source_sha256"] = sha256_hex(data, size);
  meta["source_opset"] = imported.opset;
  meta["source_producer"] = imported.producer;
  meta["options"] = {{"opt_level", opts.opt_level}, {"disabled_passes", opts.disabled_passes},
                     {"streams", opts.streams}};
  if (!opts.extra_outputs.empty()) meta["options"]["extra_outputs"] = opts.extra_outputs;
  for (const auto& [name, shape] : opts.input_shapes) meta["options"]["input_shapes"][name] = shape;

  t = Clock::now();
  if (opts.on_stage) opts.on_stage("serialize", 6, 7);
  meta["report"] = report;
  CompiledModel out;
  auto gom = model::write_gom(g, ids, plan, exec_plan, static_cast<int32_t>(imported.opset),
                             meta.dump(-1, ' ', false, kReplaceInvalidUtf8), packed);
  packing.reset();  // the packed copies were read into `gom`
  stages["serialize"] = ms_since(t);
  report["stages"] = stages;
  report["gom_bytes"] = gom.size();
  out.gom = std::make_shared<const std::vector<uint8_t>>(std::move(gom));
  out.report_json = report.dump(2, ' ', false, kReplaceInvalidUtf8);
  return out;
}
}  // namespace

void save_gom(const CompiledModel& m, const std::string& path) {
  const std::string tmp = path + ".tmp";
  try {
    model::write_file(tmp, *m.gom);  // checks the open, the write, the flush and the close
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(ErrorCode::kIo, "cannot move the temporary file '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
}

}  // namespace gec
