// IR -> ONNX ModelProto (see exporter.h).
#include "frontend/onnx/exporter.h"

#include <fstream>
#include <set>

#include "frontend/onnx/tensor_proto.h"
#include "frontend/onnx/type_proto.h"
#include "gec/error.h"
#include "onnx/onnx_pb.h"
#include "ops/domain.h"

namespace gec::frontend {
namespace {


void set_type(const ir::Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name());
  type_to_proto(v.type, vi->mutable_type());  // left empty when not inferred yet
}

void export_graph(const ir::Graph& g, onnx::GraphProto* gp, std::set<std::string>& domains);

void export_attr(const ir::Attribute& a, onnx::AttributeProto* ap, std::set<std::string>& domains) {
  using K = ir::Attribute::Kind;
  ap->set_name(a.name);
  switch (a.kind) {
    case K::kInt: ap->set_type(onnx::AttributeProto::INT); ap->set_i(a.i); break;
    case K::kFloat: ap->set_type(onnx::AttributeProto::FLOAT); ap->set_f(a.f); break;
    case K::kString: ap->set_type(onnx::AttributeProto::STRING); ap->set_s(a.s); break;
    case K::kInts:
      ap->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : a.ints) ap->add_ints(x);
      break;
    case K::kFloats:
      ap->set_type(onnx::AttributeProto::FLOATS);
      for (float x : a.floats) ap->add_floats(x);
      break;
    case K::kStrings:
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& x : a.strings) ap->add_strings(x);
      break;
    case K::kTensor:
      ap->set_type(onnx::AttributeProto::TENSOR);
      if (a.t) tensor_to_proto(a.t->view(), a.name, ap->mutable_t());
      break;
    case K::kGraph:
      ap->set_type(onnx::AttributeProto::GRAPH);
      if (a.g) export_graph(*a.g, ap->mutable_g(), domains);
      break;
  }
}

// The IR's Reduce* ops take axes as input 1 (the opset-18 form); at opset 17,
// which libonnx checks, only ReduceSum does. A constant axes input goes back
// into the attribute so that the dump passes the ONNX checker.
bool reduce_axes_as_attribute(const ir::Node& n) {
  if (!n.domain.empty() || n.op_type.rfind("Reduce", 0) != 0 || n.op_type == "ReduceSum") return false;
  const ir::Value* axes = n.input(1);
  return axes && axes->is_constant() && n.inputs().size() == 2 &&
         (axes->constant->dtype() == DType::kInt64 || axes->constant->dtype() == DType::kInt32);
}

void export_node(const ir::Node& n, onnx::NodeProto* np, std::set<std::string>& domains) {
  np->set_name(n.name);
  np->set_op_type(n.op_type);
  if (!n.domain.empty()) {
    np->set_domain(n.domain);
    domains.insert(n.domain);
  }
  const bool axes_to_attr = reduce_axes_as_attribute(n);
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    if (axes_to_attr && i == 1) break;
    np->add_input(n.input(i) ? n.input(i)->name() : "");
  }
  for (const ir::Value* out : n.outputs()) np->add_output(out ? out->name() : "");
  for (const auto& a : n.attrs) export_attr(a, np->add_attribute(), domains);
  if (axes_to_attr) {
    const Tensor& t = *n.input(1)->constant;
    ir::Attribute axes = ir::Attribute::Ints("axes", {});
    for (int64_t i = 0; i < t.numel(); ++i)
      axes.ints.push_back(t.dtype() == DType::kInt32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i]);
    export_attr(axes, np->add_attribute(), domains);
  }
  if (!n.fused_from.empty()) {
    auto* doc = np->mutable_doc_string();
    *doc = "fused from:";
    for (const auto& s : n.fused_from) *doc += " " + s;
  }
}

void export_graph(const ir::Graph& g, onnx::GraphProto* gp, std::set<std::string>& domains) {
  gp->set_name(g.name.empty() ? "graph" : g.name);
  std::set<const ir::Value*> io(g.inputs().begin(), g.inputs().end());
  io.insert(g.outputs().begin(), g.outputs().end());
  for (const ir::Value* v : g.inputs()) set_type(*v, gp->add_input());
  for (const ir::Value* v : g.outputs()) set_type(*v, gp->add_output());
  for (const auto& v : g.values()) {
    if (v->is_constant()) {
      tensor_to_proto(v->constant->view(), v->name(), gp->add_initializer());
    } else if (!io.count(v.get()) && v->producer() && v->type.dtype != DType::kUndefined) {
      set_type(*v, gp->add_value_info());
    }
  }
  for (const auto& n : g.nodes()) export_node(*n, gp->add_node(), domains);
}

}  // namespace

void export_onnx(const ir::Graph& g, onnx::ModelProto* model) {
  model->Clear();
  model->set_ir_version(8);
  model->set_producer_name("GraphEngine");
  std::set<std::string> domains;
  export_graph(g, model->mutable_graph(), domains);
  auto* onnx_opset = model->add_opset_import();
  onnx_opset->set_domain("");
  onnx_opset->set_version(17);
  domains.insert(ops::kGecDomain);  // always listed: harmless, and stable across dumps
  for (const auto& d : domains) {
    auto* op = model->add_opset_import();
    op->set_domain(d);
    op->set_version(1);
  }
}

std::string export_onnx_bytes(const ir::Graph& g) {
  onnx::ModelProto m;
  export_onnx(g, &m);
  std::string bytes;
  GEC_CHECK(m.SerializeToString(&bytes), "ONNX export: the model does not serialize (over 2 GiB?)");
  return bytes;
}

void export_onnx_file(const ir::Graph& g, const std::string& path) {
  const std::string bytes = export_onnx_bytes(g);
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) fail(ErrorCode::kIo, "cannot write ONNX graph dump '" + path + "'");
}

}  // namespace gec::frontend
