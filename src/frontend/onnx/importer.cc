// ONNX model import: bytes -> checked, shape-inferred ModelProto -> ir::Graph.
//
// Steps, in order (each names the file or node when it fails):
//  1. parse the ModelProto;
//  2. opset check (ai.onnx 1..23) before the checker, so that a too-new model
//     is reported as unsupported rather than as malformed;
//  3. onnx::checker with the model folder (external data files must exist).
//     libonnx 1.12 knows opsets <= 17: for a newer model the checker and
//     shape inference (5.) see a copy in which the nodes they cannot judge
//     (opset_changes.h) are set aside in a placeholder domain, and the
//     shapes they infer are copied back;
//  4. ImportOptions::input_shapes written into the graph inputs;
//  5. window attributes (strides, dilations, kernel_shape, pads) checked,
//     since libonnx's shape inference divides by them unchecked; then
//     ONNX shape inference, non-strict: whatever it cannot infer stays
//     unknown (the IR's own infer functions run later);
//  6. graph by graph: initializers -> constants, inputs, then nodes in file
//     order; Constant nodes -> constants; other nodes -> canonicalize.cc.
//     Subgraphs see the enclosing graph's values as they were at their node;
//  7. topological sort, dead values dropped, IR verify, support check.
#include "frontend/onnx/importer.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/model_format.h"
#include "frontend/onnx/canonicalize.h"
#include "frontend/onnx/function_inline.h"
#include "frontend/onnx/opset_changes.h"
#include "frontend/onnx/tensor_proto.h"
#include "frontend/onnx/type_proto.h"
#include "ops/domain.h"
#include "gec/error.h"
#include "kernels/kernel.h"
#include "model/format.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "ops/op_schema.h"
#include "support/mapped_file.h"

namespace onnx::checker {
// Defined and exported by libonnx 1.12 (checker.cc) but not declared in its
// header; the only overload that takes a model folder for external data.
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace gec::frontend {

namespace {

constexpr int64_t kMinOpset = 1;
// Below this opset a model is accepted node by node (old_form_check()).
constexpr int64_t kFirstCanonicalOpset = 7;

using ir::Graph;
using ir::TensorType;
using ir::Value;

using ops::canonical_domain;
using ops::domain_label;

// "unsupported op: node 'n' op Foo (domain ai.onnx, opset 13), inputs float32[1,3], int64[2]"
std::string unsupported_message(const std::string& name, const std::string& op, const std::string& domain,
                                int64_t opset, const std::vector<Value*>& inputs) {
  std::string m = "unsupported op: node '" + name + "' op " + op + " (domain " + domain_label(domain) + ", opset " +
                  std::to_string(opset) + "), inputs ";
  if (inputs.empty()) m += "(none)";
  for (size_t i = 0; i < inputs.size(); ++i)
    m += (i ? ", " : "") + (inputs[i] ? inputs[i]->type.str() : std::string("(omitted)"));
  return m;
}

// ---- types --------------------------------------------------------------------------

using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;

TypeMap collect_types(const onnx::GraphProto& gp) {
  TypeMap m;
  for (const auto& vi : gp.input()) m[vi.name()] = &vi.type();
  for (const auto& vi : gp.output()) m[vi.name()] = &vi.type();
  for (const auto& vi : gp.value_info()) m[vi.name()] = &vi.type();
  return m;
}

// ---- whole-model scans ----------------------------------------------------------------

// Calls f on every graph of the model: the main graph, then subgraphs depth first.
void walk_graphs(onnx::GraphProto& gp, const std::function<void(onnx::GraphProto&)>& f) {
  f(gp);
  for (auto& n : *gp.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) walk_graphs(*a.mutable_g(), f);
      for (auto& sg : *a.mutable_graphs()) walk_graphs(sg, f);
    }
}

struct ModelFacts {
  size_t nodes = 0;
  std::unordered_set<std::string> read_names;  // node inputs and graph outputs, any graph
  std::unordered_set<std::string> node_names;  // names given in the file
};

ModelFacts scan_model(onnx::GraphProto& main) {
  ModelFacts f;
  walk_graphs(main, [&](onnx::GraphProto& gp) {
    for (const auto& o : gp.output()) f.read_names.insert(o.name());
    for (const auto& n : gp.node()) {
      ++f.nodes;
      if (!n.name().empty()) f.node_names.insert(n.name());
      for (const auto& in : n.input()) f.read_names.insert(in);
    }
  });
  return f;
}

// ---- the steps before the IR ----------------------------------------------------------

onnx::ModelProto parse_model(const void* data, size_t size, const std::string& where) {
  onnx::ModelProto m;
  if (size > static_cast<size_t>(INT_MAX))
    fail(ErrorCode::kUnsupported, where + ": the model is " + std::to_string(size) +
                                      " bytes; ONNX files over 2 GiB must keep weights as external data");
  // Each level of subgraph nesting (If/Loop/Scan body) is three nested
  // messages (AttributeProto, GraphProto, NodeProto); protobuf's default
  // limit of 100 would stop at about 30 levels. Allow 64, as the .gom does.
  google::protobuf::io::CodedInputStream in(static_cast<const uint8_t*>(data), static_cast<int>(size));
  constexpr int kRecursionLimit = 3 * 64 + 16;
  in.SetRecursionLimit(kRecursionLimit);
  if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    fail(ErrorCode::kInvalidModel, where + ": not a valid ONNX model (protobuf parsing failed after " +
                                       std::to_string(size) + " bytes: truncated, not a ModelProto, or messages "
                                       "nested deeper than " + std::to_string(kRecursionLimit) +
                                       " levels, e.g. subgraphs more than 64 deep)");
  if (!m.has_graph())
    fail(ErrorCode::kInvalidModel, where + ": not a valid ONNX model (no graph)");
  return m;
}

// Returns the ai.onnx opset; kUnsupported outside kMinOpset..kMaxOpset.
int64_t check_opset(const onnx::ModelProto& m, const std::string& where) {
  int64_t opset = -1;
  // One version per domain (ONNX IR: opset_import lists each domain once).
  // Found by fuzzing: a model importing ai.onnx twice (14 and 23) made
  // libonnx 1.12's shape inference crash.
  std::map<std::string, int64_t> seen;
  for (const auto& imp : m.opset_import()) {
    const std::string dom = canonical_domain(imp.domain());
    auto [it, fresh] = seen.emplace(dom, imp.version());
    if (!fresh)
      fail(ErrorCode::kInvalidModel, where + ": opset_import lists domain " + (dom.empty() ? "ai.onnx" : dom) +
                                         " twice (versions " + std::to_string(it->second) + " and " +
                                         std::to_string(imp.version()) + ")");
  }
  for (const auto& imp : m.opset_import())
    if (canonical_domain(imp.domain()).empty()) opset = imp.version();
  if (opset < 0) fail(ErrorCode::kInvalidModel, where + ": not a valid ONNX model (no opset_import for ai.onnx)");
  if (opset < kMinOpset || opset > kMaxOpset)
    fail(ErrorCode::kUnsupported, where + ": model uses ai.onnx opset " + std::to_string(opset) + "; supported " +
                                      std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset));
  return opset;
}

// The checker's message on one line (it appends the offending node's proto text).
std::string one_line(const std::string& s) {
  std::string r;
  for (char c : s) {
    const char ch = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    if (ch == ' ' && (r.empty() || r.back() == ' ')) continue;
    r += ch;
  }
  while (!r.empty() && r.back() == ' ') r.pop_back();
  return r;
}

void run_checker(const onnx::ModelProto& m, const std::string& model_dir, const std::string& where) {
  onnx::checker::CheckerContext ctx;
  ctx.set_model_dir(model_dir.empty() ? "./" : model_dir + "/");
  try {
    onnx::checker::check_model(m, ctx);
  } catch (const std::exception& e) {
    fail(ErrorCode::kInvalidModel, where + ": rejected by the ONNX checker: " + one_line(e.what()));
  }
}

void infer_shapes(onnx::ModelProto& m);

// The domain that hides, from libonnx's checker and shape inference, the
// nodes of an opset > 17 model they cannot judge.
constexpr const char* kUncheckedDomain = "com.graphengine.unchecked";

std::vector<onnx::GraphProto*> all_graphs(onnx::GraphProto& main) {
  std::vector<onnx::GraphProto*> gs;
  walk_graphs(main, [&](onnx::GraphProto& gp) { gs.push_back(&gp); });
  return gs;
}

// Opsets 18..23: libonnx's checker and shape inference run on a copy where
// every ai.onnx node libonnx_can_check() refuses is in kUncheckedDomain (the
// checker accepts unknown ops of a declared custom domain; shape inference
// leaves their outputs unknown, for the IR's infer functions). The shapes
// inferred on the copy go back into `m`: value_info and the graph outputs'
// missing types, graph by graph (the copy has the same graphs in the same
// order). Our own checks cover the nodes set aside: every input defined
// before use (import_node), the arity of the new ops we import
// (check_new_op_arity), removed attributes refused by their canonicalize
// rules, dtypes and attribute values by each op's infer function.
void check_and_infer_new_opset(onnx::ModelProto& m, const std::string& model_dir, const std::string& where,
                               int64_t opset) {
  onnx::ModelProto old = m;
  // IR 9..11 (opsets 19..23) added types the IR checks itself (float8,
  // int4, float4: refused as unsupported dtypes).
  if (old.ir_version() > onnx::IR_VERSION) old.set_ir_version(onnx::IR_VERSION);
  bool hid = false;
  walk_graphs(*old.mutable_graph(), [&](onnx::GraphProto& gp) {
    for (auto& n : *gp.mutable_node())
      if (canonical_domain(n.domain()).empty() && !libonnx_can_check(n, opset)) {
        n.set_domain(kUncheckedDomain);
        hid = true;
      }
  });
  if (hid) {
    auto* imp = old.add_opset_import();
    imp->set_domain(kUncheckedDomain);
    imp->set_version(1);
  }
  run_checker(old, model_dir, where);
  infer_shapes(old);
  const std::vector<onnx::GraphProto*> from = all_graphs(*old.mutable_graph()), to = all_graphs(*m.mutable_graph());
  if (from.size() != to.size()) fail(ErrorCode::kInternal, where + ": graph count changed in the checker's copy");
  for (size_t i = 0; i < from.size(); ++i) {
    *to[i]->mutable_value_info() = from[i]->value_info();
    for (int k = 0; k < to[i]->output_size() && k < from[i]->output_size(); ++k)
      if (!to[i]->output(k).has_type() && from[i]->output(k).has_type())
        *to[i]->mutable_output(k)->mutable_type() = from[i]->output(k).type();
  }
}

std::string type_str(const onnx::ValueInfoProto& vi) {
  return type_from_proto(vi.type(), "input '" + vi.name() + "'").str();
}

void apply_input_shapes(onnx::GraphProto& gp, const std::map<std::string, Shape>& shapes) {
  std::unordered_set<std::string> inits;
  for (const auto& t : gp.initializer()) inits.insert(t.name());
  for (const auto& [name, shape] : shapes) {
    onnx::ValueInfoProto* in = nullptr;
    std::string known;
    for (auto& vi : *gp.mutable_input()) {
      if (inits.count(vi.name())) continue;
      known += (known.empty() ? "" : ", ") + vi.name();
      if (vi.name() == name) in = &vi;
    }
    const std::string what = "input shape " + name + ":" + shape_str(shape);
    if (!in) fail(ErrorCode::kInvalidArgument, what + ": the model has no input '" + name + "' (inputs: " + known + ")");
    if (!in->type().has_tensor_type()) fail(ErrorCode::kInvalidArgument, what + ": input '" + name + "' is not a tensor");
    for (int64_t d : shape)
      if (d < 0) fail(ErrorCode::kInvalidArgument, what + ": dims must be >= 0");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    if (tt->has_shape()) {
      const auto& dims = tt->shape().dim();
      bool ok = dims.size() == static_cast<int>(shape.size());
      for (int i = 0; ok && i < dims.size(); ++i)
        ok = !dims[i].has_dim_value() || dims[i].dim_value() == shape[static_cast<size_t>(i)];
      if (!ok) fail(ErrorCode::kInvalidArgument, what + ": conflicts with the model's declaration " + type_str(*in));
    }
    auto* s = tt->mutable_shape();
    s->clear_dim();
    for (int64_t d : shape) s->add_dim()->set_dim_value(d);
  }
}

// The sliding-window ops of ai.onnx (strides, dilations, kernel_shape, pads).
bool is_window_op(const onnx::NodeProto& n) {
  static const std::set<std::string> kWindowOps = {"Conv",    "ConvInteger", "QLinearConv", "ConvTranspose",
                                                   "MaxPool", "AveragePool", "LpPool",      "MaxUnpool"};
  return canonical_domain(n.domain()).empty() && kWindowOps.count(n.op_type()) > 0;
}

// libonnx 1.12's shape inference divides by strides and multiplies kernel
// and dilation values without checking them (a stride of 0 is SIGFPE), so the
// window attributes of every sliding-window node, subgraphs and model-local
// functions included, are validated before it runs. Limits follow the ONNX
// operator text (strides, dilations, kernel_shape positive; pads
// non-negative); above 2^31-1 no input could be windowed meaningfully and
// the arithmetic would overflow.
void check_window_attrs(const onnx::NodeProto& n, size_t index, const std::string& where) {
  if (!is_window_op(n)) return;
  constexpr int64_t kMaxWindowValue = 2147483647;
  for (const auto& a : n.attribute()) {
    const std::string& an = a.name();
    int64_t min = 1;
    if (an == "pads") min = 0;
    else if (an != "strides" && an != "dilations" && an != "kernel_shape") continue;
    for (int64_t v : a.ints()) {
      if (v >= min && v <= kMaxWindowValue) continue;
      std::vector<int64_t> vals(a.ints().begin(), a.ints().end());
      const std::string who = n.name().empty() ? "node #" + std::to_string(index) : "node '" + n.name() + "'";
      fail(ErrorCode::kInvalidModel, where + ": " + who + " (" + n.op_type() + "): attribute " + an + " = " +
                                         shape_str(vals) + " must be " + (min ? "positive" : "non-negative") +
                                         " and at most 2^31-1");
    }
  }
}

// The ranks a window op's X and W must agree with before libonnx's
// convPoolShapeInference reads them (found by fuzzing: a Conv of a rank-2
// graph input with 4 pads made it crash): X of rank >= 3, W of X's rank, and
// pads / strides / dilations / kernel_shape sized for X's spatial dims. Ranks
// are known here for graph inputs and initializers only.
void check_window_ranks(const onnx::GraphProto& gp, const std::string& where) {
  std::unordered_map<std::string, int64_t> rank;
  for (const auto& vi : gp.input())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      rank[vi.name()] = vi.type().tensor_type().shape().dim_size();
  for (const auto& t : gp.initializer()) rank[t.name()] = t.dims_size();
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& n = gp.node(i);
    if (!is_window_op(n) || n.input_size() == 0) continue;
    auto it = rank.find(n.input(0));
    if (it == rank.end()) continue;
    const int64_t r = it->second;
    const std::string who = where + ": " + (n.name().empty() ? "node #" + std::to_string(i) : "node '" + n.name() + "'") +
                            " (" + n.op_type() + ")";
    if (r < 3) fail(ErrorCode::kInvalidModel, who + ": input X has rank " + std::to_string(r) + ", needs N x C x D1 ... (rank >= 3)");
    const size_t w = n.op_type() == "QLinearConv" ? 3 : 1;
    if (n.op_type().find("Conv") != std::string::npos && n.input_size() > static_cast<int>(w)) {
      auto wt = rank.find(n.input(static_cast<int>(w)));
      if (wt != rank.end() && wt->second != r)
        fail(ErrorCode::kInvalidModel, who + ": W has rank " + std::to_string(wt->second) + ", X rank " + std::to_string(r));
    }
    for (const auto& a : n.attribute()) {
      const int64_t want = a.name() == "pads" ? 2 * (r - 2)
                           : (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape") ? r - 2
                                                                                                               : -1;
      if (want >= 0 && a.ints_size() != want)
        fail(ErrorCode::kInvalidModel, who + ": attribute " + a.name() + " has " + std::to_string(a.ints_size()) +
                                           " values, X of rank " + std::to_string(r) + " needs " + std::to_string(want));
    }
  }
}

void check_window_attrs(onnx::ModelProto& m, const std::string& where) {
  auto check_nodes = [&](const auto& nodes) {
    for (int i = 0; i < nodes.size(); ++i) check_window_attrs(nodes.Get(i), static_cast<size_t>(i), where);
  };
  walk_graphs(*m.mutable_graph(), [&](onnx::GraphProto& gp) {
    check_nodes(gp.node());
    check_window_ranks(gp, where);
  });
  for (auto& fn : *m.mutable_functions()) {
    check_nodes(fn.node());
    for (auto& n : *fn.mutable_node())
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) walk_graphs(*a.mutable_g(), [&](onnx::GraphProto& gp) { check_nodes(gp.node()); });
        for (auto& sg : *a.mutable_graphs()) walk_graphs(sg, [&](onnx::GraphProto& gp) { check_nodes(gp.node()); });
      }
  }
}

// Non-strict ONNX shape inference. Data propagation lets shapes computed by
// Shape/Gather/Concat chains reach Reshape; when it trips over a node, the
// plain pass still runs.
void infer_shapes(onnx::ModelProto& m) {
  for (bool propagate : {true, false}) {
    try {
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, propagate));
      return;
    } catch (const std::exception&) {
      // keep what was inferred; try once more without data propagation
    }
  }
}

// Opsets 1..6: a node whose op version is still the current one at opset 7
// means what it means there (Elu-6, GlobalAveragePool-1, Softplus-1, ...).
// Listed ops differ from their opset-7 versions only in ways canonicalize.cc
// rewrites (broadcast/axis of the binary ops, Gemm's broadcast, PRelu's
// per-channel slope), in consumed_inputs (dropped), or in the default of an
// attribute they lacked (AveragePool-1 = count_include_pad 0). Dropout and
// BatchNormalization before 7 are inference only with is_test = 1.
// Everything else is refused.
void old_form_check(NodeDraft& d) {
  static const std::set<std::string> kEquivalent = {
      "Abs",  "Ceil", "Elu",  "Exp",     "Floor", "HardSigmoid", "LeakyRelu", "Log",   "Neg",  "Reciprocal",
      "Relu", "Selu", "Sigmoid", "Sqrt", "Tanh",  "InstanceNormalization", "Add", "Sub", "Mul",  "Div",
      "Pow",  "Gemm", "PRelu", "AveragePool", "Sum", "Max", "Min", "Mean"};
  const onnx::OpSchema* at7 = onnx::OpSchemaRegistry::Schema(d.op_type, static_cast<int>(kFirstCanonicalOpset), "");
  if (at7 && at7->SinceVersion() == d.since_version) return;
  if (d.op_type == "Dropout" || d.op_type == "BatchNormalization") {
    const ir::Attribute* is_test = d.attr("is_test");
    if (!is_test || is_test->i == 0)
      fail(ErrorCode::kUnsupported, d.describe() + ": is_test = 0 is training mode, which is not supported");
    d.drop_attr("is_test");
    d.drop_attr("consumed_inputs");
    return;
  }
  if (kEquivalent.count(d.op_type)) {
    d.drop_attr("consumed_inputs");
    return;
  }
  fail(ErrorCode::kUnsupported, d.describe() + ": this form (ai.onnx opset " + std::to_string(d.opset) +
                                    ") changed at opset 7 and is not supported; re-export with opset >= 7");
}

// ---- ONNX graph -> IR ----------------------------------------------------------------

struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Value*> names;
  Value* find(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->names.find(n);
      if (it != s->names.end()) return it->second;
    }
    return nullptr;
  }
};

class GraphImporter {
 public:
  GraphImporter(std::string model_dir, std::unordered_map<std::string, int64_t> opsets, ModelFacts facts)
      : model_dir_(std::move(model_dir)), opsets_(std::move(opsets)), facts_(std::move(facts)) {
    for (const auto& [dom, op] : ops::registered_ops()) known_domains_.insert(dom);
    known_domains_.insert("");
  }

  void import_graph(onnx::GraphProto& gp, Graph& g, const Scope* outer);

 private:
  void import_node(onnx::NodeProto& n, Graph& g, Scope& scope,
                   std::unordered_map<std::string, Value*>& pending);
  void import_constant(const onnx::NodeProto& n, const std::string& name, Value* out);
  bool try_expand_function(const onnx::NodeProto& n, const NodeDraft& d, Graph& g, Scope& scope,
                           std::unordered_map<std::string, Value*>& pending);
  ir::Attribute convert_attr(onnx::AttributeProto& a, const NodeDraft& d, Graph& g, const Scope& scope);
  std::string node_name(const onnx::NodeProto& n);
  int since_version(const std::string& op, const std::string& domain) const;

  std::string model_dir_;
  std::unordered_map<std::string, int64_t> opsets_;
  ModelFacts facts_;
  std::set<std::string> known_domains_;
  size_t node_index_ = 0;
  std::unordered_set<std::string> fresh_names_;  // names made up for function bodies
};

void GraphImporter::import_graph(onnx::GraphProto& gp, Graph& g, const Scope* outer) {
  g.name = gp.name();
  int depth = 0;  // the main graph is 0, as the .gom reader counts
  for (const Scope* s = outer; s; s = s->parent) ++depth;
  if (depth > model::kMaxGraphDepth)
    fail(ErrorCode::kUnsupported, "graph '" + gp.name() + "': subgraphs nested " + std::to_string(depth) +
                                      " deep; at most " + std::to_string(model::kMaxGraphDepth) + " are supported");
  if (gp.sparse_initializer_size() > 0)
    fail(ErrorCode::kUnsupported, "graph '" + gp.name() + "': sparse initializers are not supported");
  const TypeMap types = collect_types(gp);
  Scope scope{outer, {}};
  for (auto& init : *gp.mutable_initializer()) {
    scope.names[init.name()] = g.add_constant(init.name(), take_tensor_from_proto(&init, model_dir_));
  }
  for (const auto& in : gp.input()) {
    if (scope.names.count(in.name())) continue;  // an initializer: a constant with a default (IR >= 4)
    Value* v = g.add_value(in.name(), type_from_proto(in.type(), "graph input '" + in.name() + "'"));
    g.inputs().push_back(v);
    scope.names[in.name()] = v;
  }
  // Node outputs are created up front so that they keep their ONNX names even
  // when a rewrite's helper value would have wanted the same name.
  std::unordered_map<std::string, Value*> pending;
  for (const auto& n : gp.node())
    for (const auto& o : n.output()) {
      if (o.empty() || pending.count(o)) continue;
      auto t = types.find(o);
      pending[o] = g.add_value(o, t == types.end() ? TensorType{} : type_from_proto(*t->second, "value '" + o + "'"));
    }
  for (auto& n : *gp.mutable_node()) import_node(n, g, scope, pending);
  for (const auto& o : gp.output()) {
    Value* v = scope.find(o.name());
    if (!v) fail(ErrorCode::kInvalidModel, "graph '" + gp.name() + "': output '" + o.name() + "' is never defined");
    g.outputs().push_back(v);
  }
}

std::string GraphImporter::node_name(const onnx::NodeProto& n) {
  const size_t index = node_index_++;
  if (!n.name().empty()) return n.name();
  std::string name = n.op_type() + "_" + std::to_string(index);
  while (facts_.node_names.count(name)) name += "_";
  return name;
}

int GraphImporter::since_version(const std::string& op, const std::string& domain) const {
  auto it = opsets_.find(domain);
  if (it == opsets_.end()) return 0;
  if (domain.empty() && it->second > kLibonnxMaxOpset) {
    if (const int v = post17_since_version(op, it->second)) return v;
  }
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(it->second), domain);
  return s ? s->SinceVersion() : 0;
}

void GraphImporter::import_node(onnx::NodeProto& n, Graph& g, Scope& scope,
                                std::unordered_map<std::string, Value*>& pending) {
  NodeDraft d;
  d.name = node_name(n);
  d.op_type = n.op_type();
  d.domain = canonical_domain(n.domain());
  d.opset = opsets_.count(d.domain) ? opsets_.at(d.domain) : 0;
  d.since_version = since_version(d.op_type, d.domain);
  for (const auto& in : n.input()) {
    Value* v = in.empty() ? nullptr : scope.find(in);
    if (!in.empty() && !v)
      fail(ErrorCode::kInvalidModel, d.describe() + ": input '" + in + "' is not defined before the node");
    d.inputs.push_back(v);
  }
  if (d.domain.empty() && d.opset > kLibonnxMaxOpset) {
    const std::string wrong = check_new_op_arity(n);
    if (!wrong.empty()) fail(ErrorCode::kInvalidModel, d.describe() + ": " + wrong);
  }
  if (!known_domains_.count(d.domain))
    fail(ErrorCode::kUnsupported, unsupported_message(d.name, d.op_type, d.domain, d.opset, d.inputs) +
                                      "; GraphEngine has no ops in this domain");
  auto take_output = [&](const std::string& o) -> Value* {
    if (o.empty()) return nullptr;
    Value* v = pending.at(o);
    scope.names[o] = v;
    return v;
  };
  if (d.domain.empty() && d.op_type == "Constant") {
    import_constant(n, d.name, take_output(n.output(0)));
    return;
  }
  if (try_expand_function(n, d, g, scope, pending)) return;
  for (auto& a : *n.mutable_attribute()) {
    // Optional's `type` (a TypeProto) is its output's type, which the IR
    // value already carries (type_proto.h); no other op takes a type.
    if (a.type() == onnx::AttributeProto::TYPE_PROTO && d.op_type == "Optional" && d.domain.empty()) continue;
    d.attrs.push_back(convert_attr(a, d, g, scope));
  }
  for (const auto& o : n.output()) {
    d.outputs.push_back(take_output(o));
    d.output_used.push_back(!o.empty() && facts_.read_names.count(o) > 0);
  }
  if (d.domain.empty() && d.opset < kFirstCanonicalOpset) old_form_check(d);
  emit_canonical(g, d);
}

// An op GraphEngine cannot run but ONNX defines as a function is replaced by
// its body (function_inline.h), imported node by node at the body's opsets.
bool GraphImporter::try_expand_function(const onnx::NodeProto& n, const NodeDraft& d, Graph& g, Scope& scope,
                                        std::unordered_map<std::string, Value*>& pending) {
  if (ops::find_schema(d.domain, d.op_type) && kernels::find_kernel(d.domain, d.op_type)) return false;
  if (d.opset <= 0) return false;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(d.op_type, static_cast<int>(d.opset), d.domain);
  if (!schema || (!schema->HasFunction() && !schema->HasContextDependentFunction())) return false;
  onnx::NodeProto call = n;
  call.set_name(d.name);
  std::vector<onnx::TypeProto> input_types;
  for (Value* v : d.inputs) {
    input_types.emplace_back();
    if (v) type_to_proto(v->type, &input_types.back());
  }
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    while (fresh_names_.count(name) || pending.count(name) || scope.find(name) || facts_.read_names.count(name) ||
           facts_.node_names.count(name))
      name += "_";
    fresh_names_.insert(name);
    return name;
  };
  ExpandedFunction body;
  if (!expand_function(*schema, call, input_types, fresh, body)) return false;
  for (const std::string& name : body.internal_names) pending[name] = g.add_value(name);
  for (const auto& bn : body.nodes)
    for (const auto& in : bn.input())
      if (!in.empty()) facts_.read_names.insert(in);
  auto saved = opsets_;
  for (const auto& [dom, ver] : body.opsets) opsets_[dom] = ver;
  for (auto& bn : body.nodes) import_node(bn, g, scope, pending);
  opsets_ = std::move(saved);
  return true;
}

// Constant-1/9/11/12/13: exactly one of value, value_float(s), value_int(s),
// value_string(s); sparse_value is not supported.
void GraphImporter::import_constant(const onnx::NodeProto& n, const std::string& name, Value* out) {
  if (n.attribute_size() != 1 || !out)
    fail(ErrorCode::kInvalidModel, "node '" + name + "' (Constant): needs exactly one value attribute and one output");
  const onnx::AttributeProto& a = n.attribute(0);
  auto vec = [](DType dt, int64_t size) { return Tensor(dt, Shape{size}); };
  Tensor t;
  if (a.name() == "value") {
    t = tensor_from_proto(a.t(), model_dir_);
  } else if (a.name() == "value_float") {
    t = Tensor(DType::kFloat32, {});
    *t.as<float>() = a.f();
  } else if (a.name() == "value_floats") {
    t = vec(DType::kFloat32, a.floats_size());
    std::copy(a.floats().begin(), a.floats().end(), t.as<float>());
  } else if (a.name() == "value_int") {
    t = Tensor(DType::kInt64, {});
    *t.as<int64_t>() = a.i();
  } else if (a.name() == "value_ints") {
    t = vec(DType::kInt64, a.ints_size());
    std::copy(a.ints().begin(), a.ints().end(), t.as<int64_t>());
  } else if (a.name() == "value_string") {
    t = Tensor(DType::kString, {});
    *t.as<std::string>() = a.s();
  } else if (a.name() == "value_strings") {
    t = vec(DType::kString, a.strings_size());
    std::copy(a.strings().begin(), a.strings().end(), t.as<std::string>());
  } else {
    fail(ErrorCode::kUnsupported, "node '" + name + "' (Constant): attribute '" + a.name() + "' is not supported");
  }
  out->type = TensorType::of(t.dtype(), t.shape());
  out->constant = std::make_shared<Tensor>(std::move(t));
}

ir::Attribute GraphImporter::convert_attr(onnx::AttributeProto& a, const NodeDraft& d, Graph& g,
                                          const Scope& scope) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT: return ir::Attribute::Float(a.name(), a.f());
    case A::INT: return ir::Attribute::Int(a.name(), a.i());
    case A::STRING: return ir::Attribute::String(a.name(), a.s());
    case A::FLOATS: return ir::Attribute::Floats(a.name(), {a.floats().begin(), a.floats().end()});
    case A::INTS: return ir::Attribute::Ints(a.name(), {a.ints().begin(), a.ints().end()});
    case A::STRINGS: return ir::Attribute::Strings(a.name(), {a.strings().begin(), a.strings().end()});
    case A::TENSOR: return ir::Attribute::TensorAttr(a.name(), tensor_from_proto(a.t(), model_dir_));
    case A::GRAPH: {
      auto sub = std::make_shared<Graph>();
      sub->parent = &g;
      import_graph(*a.mutable_g(), *sub, &scope);
      return ir::Attribute::GraphAttr(a.name(), std::move(sub));
    }
    default:
      fail(ErrorCode::kUnsupported, d.describe() + ": attribute '" + a.name() + "' of type " +
                                        A::AttributeType_Name(a.type()) + " is not supported");
  }
}

// ---- after import -----------------------------------------------------------------

// Every op of the model that has no schema or kernel here, in one error: the
// first node of each (domain, op) with its inputs, and how many nodes use it.
void check_support(Graph& main, const std::unordered_map<std::string, int64_t>& opsets) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> seen;  // first message, nodes
  ir::for_each_graph(main, [&](Graph& g) {
    for (const auto& n : g.nodes()) {
      if (ops::find_schema(n->domain, n->op_type) && kernels::find_kernel(n->domain, n->op_type)) continue;
      const auto key = std::make_pair(n->domain, n->op_type);
      auto it = seen.find(key);
      if (it != seen.end()) {
        ++it->second.second;
        continue;
      }
      auto op = opsets.find(n->domain);
      seen[key] = {unsupported_message(n->name, n->op_type, n->domain, op == opsets.end() ? 0 : op->second,
                                       n->inputs()),
                   1};
      order.push_back(key);
    }
  });
  if (order.empty()) return;
  std::vector<std::pair<std::string, int>> firsts;
  for (const auto& key : order) firsts.push_back(seen.at(key));
  fail(ErrorCode::kUnsupported,
       (order.size() > 1 ? std::to_string(order.size()) + " ops are not supported: " : "") + join_unsupported(firsts));
}

ImportResult import_model(onnx::ModelProto m, const std::string& model_dir, const std::string& where,
                          const ImportOptions& options) {
  if (!options.outputs.empty())
    fail(ErrorCode::kInvalidArgument, where + ": choosing outputs (--outputs) applies to TensorFlow models; an ONNX "
                                              "model names its own (add values with --extra-outputs)");
  ImportResult r;
  r.opset = check_opset(m, where);
  if (r.opset <= kLibonnxMaxOpset) {
    run_checker(m, model_dir, where);
    apply_input_shapes(*m.mutable_graph(), options.input_shapes);
    check_window_attrs(m, where);
    infer_shapes(m);
  } else {
    apply_input_shapes(*m.mutable_graph(), options.input_shapes);
    check_window_attrs(m, where);
    check_and_infer_new_opset(m, model_dir, where, r.opset);
  }
  r.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  std::unordered_map<std::string, int64_t> opsets;
  for (const auto& imp : m.opset_import()) opsets[canonical_domain(imp.domain())] = imp.version();
  ModelFacts facts = scan_model(*m.mutable_graph());
  r.onnx_nodes = facts.nodes;
  r.graph = std::make_unique<Graph>();
  GraphImporter(model_dir, opsets, std::move(facts)).import_graph(*m.mutable_graph(), *r.graph, nullptr);
  ir::for_each_graph(*r.graph, [](Graph& g) {
    g.topo_sort();
    g.remove_dead_values();
  });
  r.graph->verify();
  if (options.check_support) check_support(*r.graph, opsets);
  ops::check_value_kinds(*r.graph, /*fix_untyped=*/true);
  return r;
}

std::string folder_of(const std::string& path) {
  const size_t pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  return pos == 0 ? "/" : path.substr(0, pos);
}

}  // namespace

ImportResult import_onnx_file(const std::string& path, const ImportOptions& options) {
  const auto file = MappedFile::open(path);
  const std::string where = options.source_name.empty() ? path : options.source_name;
  return import_model(parse_model(file->data(), file->size(), where), folder_of(path), where, options);
}

ImportResult import_onnx_bytes(const void* data, size_t size, const std::string& model_dir,
                               const ImportOptions& options) {
  const std::string where = !options.source_name.empty() ? options.source_name
                            : "model in memory (folder " + (model_dir.empty() ? std::string(".") : model_dir) + ")";
  return import_model(parse_model(data, size, where), model_dir, where, options);
}

ImportResult import_onnx_bytes(const std::string& bytes, const std::string& model_dir, const ImportOptions& options) {
  return import_onnx_bytes(bytes.data(), bytes.size(), model_dir, options);
}

std::pair<int64_t, int64_t> onnx_opset_range(const std::string& op_type) {
  for (int64_t v = 1; v <= kLibonnxMaxOpset; ++v)
    if (const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(v), "")) {
      // A deprecated version (Upsample-10, Scatter-11) ends the range: the
      // checker refuses the op from there on.
      for (int64_t w = v; w <= kLibonnxMaxOpset; ++w) {
        const onnx::OpSchema* at = onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(w), "");
        if (at && at->Deprecated()) return {s->SinceVersion(), at->SinceVersion() - 1};
      }
      return {s->SinceVersion(), kMaxOpset};
    }
  for (int64_t v = kLibonnxMaxOpset + 1; v <= kMaxOpset; ++v)
    if (post17_since_version(op_type, v) == v && new_after_17(op_type)) return {v, kMaxOpset};
  return {0, 0};
}

}  // namespace gec::frontend
