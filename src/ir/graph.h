// GraphEngine's intermediate representation: an SSA dataflow graph.
//
// A Graph owns its Nodes and Values. Every Value has at most one producer (a
// Node, or none for graph inputs and constants) and a use list kept up to date
// by the mutation helpers below. Node order in `nodes()` is a topological
// order once `topo_sort()` has run; passes that insert nodes call it again.
// Subgraphs (If/Loop/Scan bodies) are Graphs held by an Attribute; their nodes
// may read Values of an enclosing graph directly ("outer scope").
//
// The IR knows nothing of ONNX protobuf or of kernels.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gec/dtype.h"
#include "gec/error.h"
#include "gec/tensor.h"

namespace gec::ir {

/// One dimension: a known size (>= 0) or a symbolic/unknown one (value -1,
/// `param` names it when the model did).
struct Dim {
  int64_t value = -1;
  std::string param;
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
};

/// The prefix of the dim symbols shape inference names itself (a dim no
/// model names, whose value is known only at run: "gec.dim/<value>/<axis>"),
/// so that the values an elementwise op computes from it carry the same
/// symbol; the public API shows such dims as unnamed.
inline constexpr char kInventedDimPrefix[] = "gec.dim/";
inline bool is_invented_dim_param(const std::string& p) { return p.rfind(kInventedDimPrefix, 0) == 0; }

/// A value's type: dtype + shape. `has_shape == false` means even the rank
/// is unknown. For a sequence or optional value (`kind` != kTensor), dtype
/// and dims describe its tensor elements (sequence elements may differ in
/// shape; ONNX shape inference then leaves dims unknown).
struct TensorType {
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<Dim> dims;
  ValueKind kind = ValueKind::kTensor;

  static TensorType of(DType dt, const Shape& s);
  bool is_tensor() const { return kind == ValueKind::kTensor; }
  /// A tensor whose rank and every dim are known (never true for sequences
  /// and optionals: those live outside the arena).
  bool is_static() const;
  Shape static_shape() const;  // requires is_static()
  std::string str() const;     // "float32[1,3,?,?]", "seq(float32[?])", "optional(seq(float32[*]))"
  bool operator==(const TensorType& o) const {
    return dtype == o.dtype && has_shape == o.has_shape && dims == o.dims && kind == o.kind;
  }
};

class Graph;
class Node;

/// A node attribute, typed as in ONNX AttributeProto.
struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
  std::string name;
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> t;
  std::shared_ptr<Graph> g;

  static Attribute Int(std::string n, int64_t v);
  static Attribute Float(std::string n, float v);
  static Attribute String(std::string n, std::string v);
  static Attribute Ints(std::string n, std::vector<int64_t> v);
  static Attribute Floats(std::string n, std::vector<float> v);
  static Attribute Strings(std::string n, std::vector<std::string> v);
  static Attribute TensorAttr(std::string n, Tensor v);
  static Attribute GraphAttr(std::string n, std::shared_ptr<Graph> v);
};

class Value {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  TensorType type;
  /// Constant data (initializers, folded values); null for computed values.
  std::shared_ptr<Tensor> constant;
  Node* producer() const { return producer_; }
  /// (node, input index) pairs reading this value, in any graph.
  const std::vector<std::pair<Node*, int>>& uses() const { return uses_; }
  Graph* owner() const { return owner_; }
  bool is_constant() const { return constant != nullptr; }

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  Node* producer_ = nullptr;
  std::vector<std::pair<Node*, int>> uses_;
  Graph* owner_ = nullptr;
};

class Node {
 public:
  std::string name;
  std::string op_type;
  std::string domain;  // "" is ai.onnx (ops/domain.h: canonical_domain); ops::kGecDomain for our own ops
  std::vector<Attribute> attrs;
  /// Names of the source ONNX nodes this node stands for (after fusion).
  std::vector<std::string> fused_from;

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  /// True when input i exists and is not an omitted optional input.
  bool has_input(size_t i) const { return input(i) != nullptr; }
  Graph* owner() const { return owner_; }

  /// Rewires input i (nullptr = omitted optional input); keeps use lists right.
  void set_input(size_t i, Value* v);
  void add_input(Value* v);

  // Attribute access. get_* with a default return it when absent; without a
  // default they throw gec::Error(kInvalidModel) naming the node.
  bool has_attr(const std::string& n) const;
  const Attribute* find_attr(const std::string& n) const;
  int64_t get_int(const std::string& n) const;
  int64_t get_int(const std::string& n, int64_t def) const;
  float get_float(const std::string& n, float def) const;
  std::string get_string(const std::string& n, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& n, std::vector<int64_t> def = {}) const;
  std::vector<float> get_floats(const std::string& n, std::vector<float> def = {}) const;
  const Tensor* get_tensor(const std::string& n) const;
  Graph* get_graph(const std::string& n) const;
  void set_attr(Attribute a);
  void remove_attr(const std::string& n);

  /// "node 'conv1' (Conv)" for error messages; a fused node also names the
  /// model nodes it computes: "node 'y' (com.graphengine::FusedElementwise
  /// fused from 'a', 'm', 'y')".
  std::string describe() const;

 private:
  friend class Graph;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  Graph* owner_ = nullptr;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  /// The graph this one is a subgraph of (null for the main graph).
  Graph* parent = nullptr;

  /// Creates a value owned by this graph.
  Value* add_value(std::string name, TensorType type = {});
  /// Creates a value holding constant data.
  Value* add_constant(std::string name, Tensor data);
  /// Appends a node; outputs are created here with the given names.
  Node* add_node(std::string op_type, const std::vector<Value*>& inputs,
                 const std::vector<std::string>& output_names, std::string name = "",
                 std::string domain = "");
  /// Appends a node that defines existing (producer-less) values.
  Node* add_node_with_outputs(std::string op_type, const std::vector<Value*>& inputs,
                              const std::vector<Value*>& outputs, std::string name = "",
                              std::string domain = "");
  /// Removes a node; its outputs must have no uses (else kInternal error).
  void remove_node(Node* n);
  /// Points every use of `from` (in this graph and subgraphs) to `to`, and
  /// graph outputs too.
  void replace_all_uses(Value* from, Value* to);
  /// Drops values with no producer, no uses, not inputs/outputs.
  void remove_dead_values();
  /// Renames a value of this graph; kInternal error if the name is taken.
  void rename_value(Value* v, const std::string& name);

  const std::list<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  std::vector<Node*> node_list() const;
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*>& inputs() { return inputs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Finds a value of this graph by name (not outer scopes).
  Value* find_value(const std::string& name) const;
  bool is_graph_output(const Value* v) const;

  /// Reorders nodes topologically (stable); throws kInvalidModel on a cycle.
  void topo_sort();
  /// Puts the nodes in `order`, which must hold each of this graph's nodes
  /// once, producers before readers (kInternal otherwise).
  void set_order(const std::vector<Node*>& order);
  /// Values `n`'s subgraphs read from this graph (outer-scope reads): with
  /// its inputs, what orders `n` after other nodes. May repeat values.
  std::vector<const Value*> implicit_inputs(const Node& n) const;
  /// Checks SSA, acyclicity, use lists and that each input is defined in this
  /// graph or an enclosing one; throws gec::Error(kInternal) describing the
  /// first problem.
  void verify() const;
  /// A fresh name not used by any value in this graph, based on `base`.
  std::string unique_name(const std::string& base);

  /// Total nodes including those in subgraphs.
  size_t count_nodes_recursive() const;

 private:
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, Value*> by_name_;
  uint64_t name_counter_ = 0;
};

/// Calls f(graph) for g and every nested subgraph, parents first.
template <typename F>
void for_each_graph(Graph& g, F&& f) {
  f(g);
  for (auto& n : g.nodes())
    for (auto& a : n->attrs)
      if (a.kind == Attribute::Kind::kGraph && a.g) for_each_graph(*a.g, f);
}
template <typename F>
void for_each_graph(const Graph& g, F&& f) {
  f(g);
  for (auto& n : g.nodes())
    for (auto& a : n->attrs)
      if (a.kind == Attribute::Kind::kGraph && a.g) for_each_graph(static_cast<const Graph&>(*a.g), f);
}

/// Dense ids 0..size()-1 over every value of a model: the main graph's
/// values, then each subgraph's, in for_each_graph order (each graph's values
/// in creation order). The plans (memory::MemoryPlan) and the .gom refer to
/// values by these ids; the IR itself stores none. An index is valid while
/// the graph gains or loses no value.
class ValueIndex {
 public:
  ValueIndex() = default;
  explicit ValueIndex(const Graph& g);
  /// An index whose id i is values[i] (the .gom reader's order).
  static ValueIndex of_values(std::vector<Value*> values);
  int32_t size() const { return static_cast<int32_t>(values_.size()); }
  /// The id of `v`; gec::Error(kInternal) when `v` is not in the index.
  int32_t id(const Value* v) const;
  /// -1 for null (an omitted optional input), else id(v).
  int32_t id_or_none(const Value* v) const { return v ? id(v) : -1; }
  Value* value(int32_t id) const { return values_.at(static_cast<size_t>(id)); }
  const std::vector<Value*>& values() const { return values_; }

 private:
  std::vector<Value*> values_;
  std::unordered_map<const Value*, int32_t> ids_;
};

}  // namespace gec::ir
