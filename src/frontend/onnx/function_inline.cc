// ONNX function expansion: see function_inline.h.
//
// Renaming: the body's formal inputs become the caller's actual input names,
// its formal outputs the caller's output names, and every other value a
// fresh name; nothing in the body can then clash with the enclosing graph.
// Attribute references (AttributeProto.ref_attr_name) bind to the caller's
// attribute of that name, else to the schema's default value.
#include "frontend/onnx/function_inline.h"

#include <unordered_set>

#include "gec/error.h"
#include "ops/domain.h"

namespace gec::frontend {

namespace {

using NameMap = std::unordered_map<std::string, std::string>;

std::string renamed(const NameMap& map, const std::string& n) {
  if (n.empty()) return n;
  auto it = map.find(n);
  return it == map.end() ? n : it->second;
}

// Subgraphs in a body read body values by name: rename those reads too.
void rename_graph_reads(onnx::GraphProto& gp, const NameMap& map) {
  for (auto& n : *gp.mutable_node()) {
    for (auto& in : *n.mutable_input()) in = renamed(map, in);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_graph_reads(*a.mutable_g(), map);
      for (auto& sg : *a.mutable_graphs()) rename_graph_reads(sg, map);
    }
  }
  for (auto& o : *gp.mutable_output()) o.set_name(renamed(map, o.name()));
}

// Replaces attribute references by the caller's values or the defaults;
// returns false when the attribute should be dropped.
bool bind_attribute(onnx::AttributeProto& a, const onnx::NodeProto& call, const onnx::OpSchema& schema) {
  if (a.ref_attr_name().empty()) return true;
  const std::string ref = a.ref_attr_name();
  const std::string name = a.name();
  for (const auto& ca : call.attribute())
    if (ca.name() == ref) {
      a = ca;
      a.set_name(name);
      return true;
    }
  auto it = schema.attributes().find(ref);
  if (it == schema.attributes().end() || it->second.default_value.type() == onnx::AttributeProto::UNDEFINED)
    return false;
  a = it->second.default_value;
  a.set_name(name);
  return true;
}

bool build_body(const onnx::OpSchema& schema, const onnx::NodeProto& call,
                const std::vector<onnx::TypeProto>& input_types, onnx::FunctionProto& fn) {
  if (schema.HasFunction()) {
    const onnx::FunctionProto* f = schema.GetFunction();
    if (!f) return false;
    fn = *f;
    return true;
  }
  if (!schema.HasContextDependentFunction()) return false;
  // Builders read the input types without checking for null (SequenceMap's
  // crashes in libonnx 1.12): only build when every given input is typed.
  for (int i = 0; i < call.input_size(); ++i)
    if (!call.input(i).empty() &&
        (static_cast<size_t>(i) >= input_types.size() ||
         input_types[static_cast<size_t>(i)].value_case() == onnx::TypeProto::VALUE_NOT_SET))
      return false;
  onnx::FunctionBodyBuildContextImpl ctx(call, input_types);
  return schema.BuildContextDependentFunction(ctx, fn);
}

}  // namespace

bool expand_function(const onnx::OpSchema& schema, const onnx::NodeProto& call,
                     const std::vector<onnx::TypeProto>& input_types,
                     const std::function<std::string(const std::string&)>& fresh_name, ExpandedFunction& out) {
  onnx::FunctionProto fn;
  if (!build_body(schema, call, input_types, fn)) return false;

  NameMap map;
  for (int i = 0; i < fn.input_size(); ++i)
    map[fn.input(i)] = i < call.input_size() ? call.input(i) : std::string();
  std::unordered_set<std::string> formal_outputs;
  for (int i = 0; i < fn.output_size(); ++i) {
    formal_outputs.insert(fn.output(i));
    map[fn.output(i)] = i < call.output_size() ? call.output(i) : std::string();
  }
  // Fresh names for everything else the body defines (including formal
  // outputs the caller omitted, which the body may still compute and read).
  std::unordered_set<std::string> defined;
  for (const auto& n : fn.node())
    for (const auto& o : n.output()) {
      if (o.empty() || defined.count(o)) continue;
      defined.insert(o);
      if (formal_outputs.count(o) && !map[o].empty()) continue;
      const std::string fresh = fresh_name(call.name() + "/" + o);
      map[o] = fresh;
      out.internal_names.push_back(fresh);
    }
  for (int i = 0; i < call.output_size(); ++i)
    if (!call.output(i).empty() && (i >= fn.output_size() || !defined.count(fn.output(i))))
      fail(ErrorCode::kInvalidModel, "node '" + call.name() + "' (" + call.op_type() +
                                         "): its function body does not define output " + std::to_string(i));

  for (const auto& imp : fn.opset_import())
    out.opsets[ops::canonical_domain(imp.domain())] = imp.version();
  if (fn.opset_import_size() == 0) out.opsets[ops::canonical_domain(schema.domain())] = schema.SinceVersion();

  int index = 0;
  for (const auto& body_node : fn.node()) {
    onnx::NodeProto n = body_node;
    n.set_name(call.name() + "/" + (body_node.name().empty() ? body_node.op_type() + std::to_string(index)
                                                              : body_node.name()));
    ++index;
    for (auto& in : *n.mutable_input()) in = renamed(map, in);
    for (auto& o : *n.mutable_output()) o = renamed(map, o);
    auto* attrs = n.mutable_attribute();
    for (int i = 0; i < attrs->size();) {
      if (bind_attribute(*attrs->Mutable(i), call, schema)) {
        onnx::AttributeProto& a = *attrs->Mutable(i);
        if (a.has_g()) rename_graph_reads(*a.mutable_g(), map);
        for (auto& sg : *a.mutable_graphs()) rename_graph_reads(sg, map);
        ++i;
      } else {
        attrs->DeleteSubrange(i, 1);
      }
    }
    out.nodes.push_back(std::move(n));
  }
  return true;
}

}  // namespace gec::frontend
