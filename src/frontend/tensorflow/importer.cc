// TensorFlow frontend entry points (importer.h): parse, choose inputs and
// outputs, order the nodes, refuse what cannot be converted (all at once),
// then convert node by node (converter.h, ops.cc).
#include "frontend/tensorflow/importer.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "frontend/model_format.h"
#include "frontend/tensorflow/converter.h"
#include "kernels/cpu/elementwise/elementwise_half.h"
#include "ops/op_schema.h"

namespace fs = std::filesystem;

namespace gec::frontend {
namespace {

using gec::tf::GraphDef;
using gec::tf::NodeDef;
using tf::Converter;

// v1 control flow and other ops that have no meaning in a frozen inference
// graph here: named in the error with what to do instead.
const std::set<std::string> kControlFlowOps = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                                               "RefSwitch", "RefMerge", "RefEnter", "RefExit"};

std::string node_of(const std::string& tensor) {
  std::string t = tensor;
  if (!t.empty() && t[0] == '^') t = t.substr(1);
  const size_t colon = t.rfind(':');
  return colon == std::string::npos ? t : t.substr(0, colon);
}

std::string as_tensor(const std::string& name) { return name.find(':') == std::string::npos ? name + ":0" : name; }

struct Import {
  const GraphDef& gd;
  const ImportOptions& opts;
  std::string where;
  std::map<std::string, const NodeDef*> by_name;
  std::vector<std::string> warnings;

  ImportResult run() {
    for (const NodeDef& n : gd.node()) {
      if (n.name().empty()) fail(ErrorCode::kInvalidModel, where + ": a node without a name");
      if (!by_name.emplace(n.name(), &n).second)
        fail(ErrorCode::kInvalidModel, where + ": two nodes are named '" + n.name() + "'");
    }
    if (gd.has_library() && gd.library().function_size() > 0)
      fail(ErrorCode::kUnsupported, where + ": the graph holds " + std::to_string(gd.library().function_size()) +
                                        " functions (tf.function bodies); freeze it without functions "
                                        "(convert_variables_to_constants_v2 inlines them)");
    const std::vector<std::string> outputs = choose_outputs();
    const std::vector<const NodeDef*> order = order_nodes(outputs);
    check_supported(order);
    for (const auto& [name, shape] : opts.input_shapes) {
      auto it = by_name.find(name);
      if (it == by_name.end() || it->second->op() != "Placeholder")
        fail(ErrorCode::kInvalidArgument, where + ": --input-shape names '" + name + "', which is not a Placeholder");
    }

    ImportResult r;
    r.format = "tensorflow";
    r.opset = 17;  // the canonical IR's op semantics
    r.producer = "TensorFlow GraphDef" + (gd.has_versions() ? " (producer " + std::to_string(gd.versions().producer()) + ")"
                                                            : std::string());
    r.onnx_nodes = static_cast<size_t>(gd.node_size());
    r.graph = std::make_unique<ir::Graph>();
    ir::Graph& g = *r.graph;
    g.name = "tensorflow";
    Converter c(g, by_name);
    for (const NodeDef* n : order) {
      c.begin_node(*n);
      if (n->op() == "Const") {
        auto it = n->attr().find("value");
        if (it == n->attr().end() || !it->second.has_tensor()) c.error("a Const without a tensor value");
        // Large splats (zeros, fills) stay a ConstantOfShape node: the
        // weights block never holds them, and folding leaves them alone.
        Tensor value;
        Shape shape;
        if (tf::splat_of(it->second.tensor(), c.describe(), tf::kMaxFoldGrowthBytes, &value, &shape))
          c.set_output(0, c.emit("ConstantOfShape", {c.const_i64(shape, "shape")}, {ir::Attribute::TensorAttr("value", value)}));
        else
          c.set_output(0, g.add_constant(n->name() + ":0", tf::tensor_of(it->second.tensor(), c.describe())));
      } else if (n->op() == "Placeholder") {
        c.set_output(0, placeholder(c, g, *n));
      } else if (n->op() == "NoOp") {
        continue;
      } else {
        (*tf::find_converter(n->op()))(c);
      }
    }
    for (const std::string& t : outputs) {
      ir::Value* v = c.logical_of(t);
      if (!v) fail(ErrorCode::kInvalidArgument, where + ": output '" + t + "' is not an output of node '" + node_of(t) + "'");
      // Each output its own value named for the tensor.
      if (v->name() != t || !v->producer() || g.is_graph_output(v)) {
        ir::Node* id = g.add_node("Identity", {v}, {g.find_value(t) ? g.unique_name(t) : t}, g.unique_name(t + "/output"));
        id->output(0)->type = v->type;
        v = id->output(0);
      }
      g.outputs().push_back(v);
    }
    g.remove_dead_values();
    g.topo_sort();
    g.verify();
    if (opts.check_support) check_ir_support(g);
    r.warnings = warnings;
    return r;
  }

  ir::Value* placeholder(Converter& c, ir::Graph& g, const NodeDef& n) {
    const DType dt = c.attr_type("dtype", DType::kFloat32);
    ir::TensorType type;
    type.dtype = dt;
    auto given = opts.input_shapes.find(n.name());
    auto sh = n.attr().find("shape");
    const bool known_rank = sh != n.attr().end() && sh->second.has_shape() && !sh->second.shape().unknown_rank();
    if (given != opts.input_shapes.end()) {
      if (known_rank) {
        const auto& dims = sh->second.shape().dim();
        bool fits = dims.size() == static_cast<int>(given->second.size());
        for (int i = 0; fits && i < dims.size(); ++i) fits = dims[i].size() < 0 || dims[i].size() == given->second[i];
        if (!fits)
          fail(ErrorCode::kInvalidArgument, where + ": --input-shape " + n.name() + ":" + shape_str(given->second) +
                                                " does not fit its declared shape");
      }
      type = ir::TensorType::of(dt, given->second);
    } else {
      if (!known_rank)
        fail(ErrorCode::kUnsupported, where + ": input '" + n.name() + "' has no shape; give it with --input-shape " +
                                          n.name() + ":D1,D2,...");
      Shape s;
      bool defaulted = false;
      for (const auto& d : sh->second.shape().dim()) {
        s.push_back(d.size() < 0 ? 1 : d.size());
        defaulted = defaulted || d.size() < 0;
      }
      if (defaulted)
        warnings.push_back("input '" + n.name() + "': unknown dims set to 1, shape " + shape_str(s) +
                           " (give --input-shape " + n.name() + ":... to choose)");
      type = ir::TensorType::of(dt, s);
    }
    ir::Value* v = g.add_value(n.name(), type);
    g.inputs().push_back(v);
    return v;
  }

  std::vector<std::string> choose_outputs() {
    std::vector<std::string> r;
    if (!opts.outputs.empty()) {
      for (const std::string& o : opts.outputs) {
        if (!by_name.count(node_of(o)))
          fail(ErrorCode::kInvalidArgument, where + ": --outputs names '" + o + "', no node of the graph");
        r.push_back(as_tensor(o));
      }
      return r;
    }
    std::set<std::string> consumed;
    for (const NodeDef& n : gd.node())
      for (const std::string& in : n.input())
        if (!in.empty() && in[0] != '^') consumed.insert(node_of(in));
    for (const NodeDef& n : gd.node()) {
      if (consumed.count(n.name()) || n.op() == "Const" || n.op() == "NoOp" || n.op() == "Placeholder" ||
          n.op() == "Assert")
        continue;
      r.push_back(n.name() + ":0");
    }
    if (r.empty()) fail(ErrorCode::kInvalidModel, where + ": the graph computes nothing (no node's output is unused "
                                                          "but Consts and Placeholders)");
    return r;
  }

  /// The nodes the outputs depend on through data inputs, producers first.
  /// Iterative depth-first search; a node met again while on the stack is a
  /// cycle.
  std::vector<const NodeDef*> order_nodes(const std::vector<std::string>& outputs) {
    std::vector<const NodeDef*> order;
    std::map<const NodeDef*, int> state;  // 1 on the stack, 2 done
    for (const std::string& o : outputs) {
      const NodeDef* root = by_name.at(node_of(o));
      std::vector<std::pair<const NodeDef*, int>> stack = {{root, 0}};
      if (state[root] == 2) continue;
      state[root] = 1;
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < n->input_size()) {
          const std::string& in = n->input(next++);
          if (in.empty() || in[0] == '^') continue;
          auto it = by_name.find(node_of(in));
          if (it == by_name.end())
            fail(ErrorCode::kInvalidModel, where + ": node '" + n->name() + "' (" + n->op() + ") reads '" + in +
                                               "', which names no node of the graph");
          const NodeDef* m = it->second;
          if (state[m] == 1)
            fail(ErrorCode::kInvalidModel, where + ": the graph has a cycle through node '" + m->name() + "' (" +
                                               m->op() + "); a frozen inference graph must be acyclic");
          if (state[m] == 0) {
            state[m] = 1;
            stack.push_back({m, 0});
          }
          continue;
        }
        state[n] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
    return order;
  }

  /// Every op without a converter, in one message (each op once).
  void check_supported(const std::vector<const NodeDef*>& order) {
    std::vector<std::string> ops;
    std::map<std::string, std::pair<std::string, int>> seen;
    for (const NodeDef* n : order) {
      if (n->op() == "Const" || n->op() == "Placeholder" || n->op() == "NoOp" || tf::find_converter(n->op())) continue;
      auto it = seen.find(n->op());
      if (it != seen.end()) {
        ++it->second.second;
        continue;
      }
      std::string why = kControlFlowOps.count(n->op())
                            ? " (TensorFlow 1 control flow: export the model with TensorFlow 2 control flow or "
                              "convert it to ONNX)"
                            : "";
      seen[n->op()] = {"node '" + n->name() + "' op " + n->op() + " (TensorFlow)" + why, 1};
      ops.push_back(n->op());
    }
    if (ops.empty()) return;
    std::vector<std::pair<std::string, int>> firsts;
    for (const std::string& op : ops) firsts.push_back(seen.at(op));
    fail(ErrorCode::kUnsupported,
         where + ": " + (ops.size() > 1 ? std::to_string(ops.size()) + " ops are not supported: " : "unsupported op: ") +
             join_unsupported(firsts) + ". `gec ops --tensorflow` lists the supported ones");
  }

  /// The emitted IR ops must have kernels (e.g. a dtype path aside, every op
  /// a converter emits does; this guards a build without one).
  void check_ir_support(const ir::Graph& g) {
    for (const auto& n : g.nodes())
      if (!ops::find_schema(n->domain, n->op_type))
        fail(ErrorCode::kUnsupported, where + ": " + n->describe() + " has no schema in this build");
  }
};

ImportResult import_graph(const GraphDef& gd, const ImportOptions& options, const std::string& where) {
  Import imp{gd, options, where, {}, {}};
  return imp.run();
}

// ---- TensorFlow.js ---------------------------------------------------------------------

/// Reads the weight shards and attaches each weight to its Const node.
void attach_tfjs_weights(GraphDef& gd, const nlohmann::json& manifest, const std::string& dir, const std::string& where) {
  std::map<std::string, NodeDef*> consts;
  for (NodeDef& n : *gd.mutable_node()) consts[n.name()] = &n;
  if (!manifest.is_array()) fail(ErrorCode::kInvalidModel, where + ": weightsManifest must be an array");
  for (const auto& group : manifest) {
    if (!group.contains("paths") || !group["paths"].is_array() || !group.contains("weights") ||
        !group["weights"].is_array())
      fail(ErrorCode::kInvalidModel, where + ": a weightsManifest group needs 'paths' and 'weights' arrays");
    std::string bytes;
    for (const auto& p : group["paths"]) {
      if (!p.is_string()) fail(ErrorCode::kInvalidModel, where + ": a shard path is not a string");
      const std::string rel = p.get<std::string>();
      if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
        fail(ErrorCode::kInvalidModel, where + ": shard path '" + rel + "' must stay inside the model's folder");
      const fs::path file = fs::path(dir) / rel;
      std::ifstream f(file, std::ios::binary);
      if (!f || !fs::is_regular_file(file))
        fail(ErrorCode::kIo, where + ": weight shard '" + rel + "' cannot be read (" + file.string() + ")");
      bytes.append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    size_t off = 0;
    for (const auto& w : group["weights"]) {
      const std::string name = w.value("name", "");
      const std::string dtype = w.value("dtype", "float32");
      Shape shape;
      int64_t n = 1;
      if (!w.contains("shape") || !w["shape"].is_array()) fail(ErrorCode::kInvalidModel, where + ": weight '" + name + "' has no shape");
      for (const auto& d : w["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 || (d.get<int64_t>() > 0 && n > (int64_t{1} << 40) / d.get<int64_t>()))
          fail(ErrorCode::kInvalidModel, where + ": weight '" + name + "' has a bad shape");
        shape.push_back(d.get<int64_t>());
        n *= shape.back();
      }
      // Stored element type: the quantization's, else the weight's own.
      std::string stored = dtype;
      double scale = 1, min = 0;
      const bool quantized = w.contains("quantization") && w["quantization"].is_object();
      if (quantized) {
        const auto& q = w["quantization"];
        stored = q.value("dtype", "");
        scale = q.value("scale", 1.0);
        min = q.value("min", 0.0);
        if (stored != "uint8" && stored != "uint16" && stored != "float16")
          fail(ErrorCode::kUnsupported, where + ": weight '" + name + "': quantization dtype '" + stored +
                                            "' is not supported (uint8, uint16, float16 are)");
        if (dtype != "float32" && stored != "float16")
          fail(ErrorCode::kUnsupported, where + ": weight '" + name + "': quantized " + dtype + " weights are not supported");
      }
      // Unquantized weights: float32, int32 or bool only (a float16 / uint8
      // dtype without quantization would not fit the tensor made below).
      if (!quantized && dtype != "float32" && dtype != "int32" && dtype != "bool")
        fail(ErrorCode::kUnsupported, where + ": weight '" + name + "' of dtype '" + dtype +
                                          "' without quantization is not supported (float32, int32, bool are)");
      const size_t esize = stored == "uint8" || stored == "bool" ? 1 : stored == "uint16" || stored == "float16" ? 2 : 4;
      if (stored != "float32" && stored != "int32" && stored != "bool" && esize == 4)
        fail(ErrorCode::kUnsupported, where + ": weight '" + name + "' of dtype '" + stored + "' is not supported");
      const size_t need = static_cast<size_t>(n) * esize;
      if (off + need > bytes.size())
        fail(ErrorCode::kIo, where + ": the weight shards end before weight '" + name + "' (" + std::to_string(need) +
                                 " bytes at offset " + std::to_string(off) + ", shards hold " +
                                 std::to_string(bytes.size()) + ")");
      const char* p = bytes.data() + off;
      off += need;
      Tensor t;
      if (!quantized) {
        const DType dt = dtype == "float32" ? DType::kFloat32 : dtype == "int32" ? DType::kInt32 : DType::kBool;
        t = Tensor::uninitialized(dt, shape);
        GEC_CHECK(t.bytes() == need, "tfjs weight size");
        std::memcpy(t.data(), p, need);
      } else {
        t = Tensor::uninitialized(DType::kFloat32, shape);
        float* o = t.as<float>();
        for (int64_t i = 0; i < n; ++i) {
          if (stored == "uint8") o[i] = static_cast<float>(static_cast<uint8_t>(p[i]) * scale + min);
          else if (stored == "uint16") {
            uint16_t q;
            std::memcpy(&q, p + 2 * i, 2);
            o[i] = static_cast<float>(q * scale + min);
          } else {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            o[i] = kernels::cpu::half_to_float(h);
          }
        }
      }
      auto it = consts.find(name);
      if (it == consts.end())
        fail(ErrorCode::kInvalidModel, where + ": weight '" + name + "' names no node of the modelTopology");
      if (it->second->op() != "Const")
        fail(ErrorCode::kInvalidModel, where + ": weight '" + name + "' names node of op " + it->second->op() +
                                           ", not a Const");
      // Store as tensor_content on the Const node.
      gec::tf::TensorProto* tp = (*it->second->mutable_attr())["value"].mutable_tensor();
      tp->Clear();
      tp->set_dtype(t.dtype() == DType::kFloat32 ? gec::tf::DT_FLOAT : t.dtype() == DType::kInt32 ? gec::tf::DT_INT32
                                                                                                    : gec::tf::DT_BOOL);
      for (int64_t d : shape) tp->mutable_tensor_shape()->add_dim()->set_size(d);
      tp->set_tensor_content(std::string(static_cast<const char*>(t.data()), t.bytes()));
      (*it->second->mutable_attr())["dtype"].set_type(tp->dtype());
    }
  }
}

}  // namespace

ImportResult import_tf_graphdef(const void* data, size_t size, const ImportOptions& options) {
  const std::string where = options.source_name.empty() ? "TensorFlow model in memory" : options.source_name;
  GraphDef gd;
  if (size > static_cast<size_t>(INT32_MAX) || !gd.ParseFromArray(data, static_cast<int>(size)))
    fail(ErrorCode::kInvalidModel, where + ": not a valid TensorFlow GraphDef (the protobuf does not parse: "
                                           "truncated or another format)");
  return import_graph(gd, options, where);
}

namespace {
ImportResult tfjs_from_json(const nlohmann::json& j, const std::string& model_dir, const ImportOptions& options,
                            const std::string& where);
}  // namespace

ImportResult import_tfjs_model(const std::string& model_json, const std::string& model_dir, const ImportOptions& options) {
  const std::string where = options.source_name.empty() ? "TensorFlow.js model" : options.source_name;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(model_json);
  } catch (const std::exception& e) {
    fail(ErrorCode::kInvalidModel, where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  // A field of the wrong JSON type (nlohmann's type_error) is a malformed
  // model, not an internal error.
  try {
    return tfjs_from_json(j, model_dir, options, where);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::kInvalidModel, where + ": a model.json field has the wrong type (" + std::string(e.what()) + ")");
  }
}

namespace {

ImportResult tfjs_from_json(const nlohmann::json& j, const std::string& model_dir, const ImportOptions& options,
                            const std::string& where) {
  if (!j.is_object() || !j.contains("modelTopology") || !j["modelTopology"].is_object())
    fail(ErrorCode::kInvalidModel, where + ": a TensorFlow.js graph model needs a 'modelTopology' object");
  if (j.value("format", "graph-model") == "layers-model")
    fail(ErrorCode::kUnsupported, where + ": a tfjs layers model (Keras topology) is not supported; convert it to a "
                                          "graph model (tensorflowjs_converter --output_format tfjs_graph_model)");
  const nlohmann::json& topo = j["modelTopology"];
  GraphDef gd;
  google::protobuf::util::JsonParseOptions po;
  po.ignore_unknown_fields = true;
  nlohmann::json topo_copy = topo;
  topo_copy.erase("library");  // function bodies: refused below when present
  const auto st = google::protobuf::util::JsonStringToMessage(topo_copy.dump(), &gd, po);
  if (!st.ok())
    fail(ErrorCode::kInvalidModel, where + ": modelTopology is not a GraphDef: " + std::string(st.message()));
  if (topo.contains("library") && topo["library"].is_object() && topo["library"].contains("function") &&
      topo["library"]["function"].is_array() && !topo["library"]["function"].empty())
    fail(ErrorCode::kUnsupported, where + ": the graph holds functions (control flow); this frontend reads graphs "
                                          "without them");
  attach_tfjs_weights(gd, j.value("weightsManifest", nlohmann::json::array()), model_dir, where);
  ImportResult r = import_graph(gd, options, where);
  r.format = "tfjs";
  r.producer = "TensorFlow.js " + j.value("convertedBy", j.value("generatedBy", std::string("graph model")));
  return r;
}

}  // namespace

std::vector<std::string> tensorflow_ops() { return tf::supported_ops(); }

}  // namespace gec::frontend
