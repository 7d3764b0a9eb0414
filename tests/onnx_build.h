// Building small ONNX models in tests with the ONNX protobuf API.
#pragma once

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace gec::testing::onnx_build {

inline constexpr int kFloat = onnx::TensorProto::FLOAT;
inline constexpr int kInt64 = onnx::TensorProto::INT64;
inline constexpr int kBool = onnx::TensorProto::BOOL;

// dims: "1,3,N,224": numbers are fixed dims, other words symbolic.
inline void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::string& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  std::stringstream ss(dims);
  std::string d;
  while (std::getline(ss, d, ',')) {
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
}

// A sequence(tensor) or optional(tensor) type; dims as in set_type.
inline void set_sequence_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::string& dims) {
  onnx::ValueInfoProto tmp;
  set_type(&tmp, name, elem, dims);
  vi->set_name(name);
  *vi->mutable_type()->mutable_sequence_type()->mutable_elem_type() = tmp.type();
}
inline void set_optional_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::string& dims) {
  onnx::ValueInfoProto tmp;
  set_type(&tmp, name, elem, dims);
  vi->set_name(name);
  *vi->mutable_type()->mutable_optional_type()->mutable_elem_type() = tmp.type();
}

inline void add_input(onnx::GraphProto* g, const std::string& name, int elem, const std::string& dims) {
  set_type(g->add_input(), name, elem, dims);
}
inline void add_output(onnx::GraphProto* g, const std::string& name, int elem, const std::string& dims) {
  set_type(g->add_output(), name, elem, dims);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                          const std::vector<std::string>& outs, const std::string& name = "") {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
inline void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) { attr(n, name, onnx::AttributeProto::INT)->set_i(v); }
inline void attr_f(onnx::NodeProto* n, const std::string& name, float v) { attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v); }
inline void attr_s(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// An initializer with hand-written float data in float_data.
inline void add_float_init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& data) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(kFloat);
  for (int64_t d : dims) t->add_dims(d);
  for (float x : data) t->add_float_data(x);
}
inline void add_int64_init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& data) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(kInt64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : data) t->add_int64_data(x);
}

inline onnx::ModelProto new_model(int64_t opset, int64_t ir_version = 7) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("gec-test");
  m.set_producer_version("0.1");
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

/// x[1,16,S,S] -> Conv 3x3 (16 -> 16, pads 1, nodes "conv" and "relu") ->
/// Relu -> y, opset 13: big enough at S = 28 for the executor to open a
/// parallel region, small enough at S = 2 to run on one thread.
inline onnx::ModelProto conv_relu_model(int64_t s) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  const std::string d = "1,16," + std::to_string(s) + "," + std::to_string(s);
  add_input(g, "x", kFloat, d);
  add_output(g, "y", kFloat, d);
  std::vector<float> w(16 * 16 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 9) - 4) / 36.f;
  add_float_init(g, "w", {16, 16, 3, 3}, w);
  attr_ints(add_node(g, "Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, {"y"}, "relu");
  return m;
}

}  // namespace gec::testing::onnx_build
