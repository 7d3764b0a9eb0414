// Common subexpression elimination. Two nodes compute the same values when
// they have the same key: (domain, op type, attributes compared exactly, the
// same input values in the same order). The later node's outputs are
// replaced by the earlier one's and it is removed. Attributes compare exactly:
// floats bitwise (so -0.0 != 0.0 and NaN == the same NaN), tensors by dtype,
// shape and bytes; a node with a subgraph attribute never matches (comparing
// bodies is not worth it), and neither does a nondeterministic op
// (schema->deterministic == false: RandomNormal, RandomUniform, Bernoulli,
// Multinomial, ...) or a Dropout in training mode: two draws are two values.
//
// Identical small constants (same dtype, shape and bytes, at most
// kMaxDedupBytes) are merged first, so that nodes reading two copies of one
// constant match. Graph outputs are never replaced. Runs in each graph
// (subgraphs too) over nodes in topological order, so one sweep finds chains.
#include <cstring>
#include <unordered_map>

#include "ops/op_schema.h"
#include "passes/pass.h"
#include "passes/rewrite_util.h"

namespace gec::passes {
namespace {

constexpr size_t kMaxDedupBytes = 4096;

void append_bytes(std::string& k, const void* p, size_t n) {
  k.append(static_cast<const char*>(p), n);
}

template <typename T>
void append(std::string& k, const T& x) {
  append_bytes(k, &x, sizeof(T));
}

void append_str(std::string& k, const std::string& s) {
  append(k, s.size());
  k += s;
}

void append_tensor(std::string& k, const Tensor& t) {
  append(k, static_cast<int32_t>(t.dtype()));
  append(k, t.shape().size());
  for (int64_t d : t.shape()) append(k, d);
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) append_str(k, t.as<std::string>()[i]);
  } else {
    append_bytes(k, t.data(), t.bytes());
  }
}

/// The attribute part of a key; false when the node has a subgraph.
bool append_attr(std::string& k, const ir::Attribute& a) {
  using K = ir::Attribute::Kind;
  append_str(k, a.name);
  append(k, static_cast<int>(a.kind));
  switch (a.kind) {
    case K::kInt: append(k, a.i); break;
    case K::kFloat: append(k, a.f); break;  // the bit pattern
    case K::kString: append_str(k, a.s); break;
    case K::kInts: append(k, a.ints.size()); append_bytes(k, a.ints.data(), a.ints.size() * 8); break;
    case K::kFloats: append(k, a.floats.size()); append_bytes(k, a.floats.data(), a.floats.size() * 4); break;
    case K::kStrings: append(k, a.strings.size()); for (auto& s : a.strings) append_str(k, s); break;
    case K::kTensor: if (!a.t) return false; append_tensor(k, *a.t); break;
    case K::kGraph: return false;
  }
  return true;
}

bool is_training_dropout(const ir::Node& n) {
  if (!is_op(&n, "Dropout") || !n.has_input(2)) return false;
  const ir::Value* t = n.input(2);
  if (!t->is_constant() || t->constant->numel() != 1) return true;  // unknown: assume training
  return *t->constant->as<uint8_t>() != 0;
}

/// The node's key, or nullopt when it must never be merged.
std::optional<std::string> key_of(const ir::Node& n) {
  const ops::OpSchema* s = ops::find_schema(n.domain, n.op_type);
  if (!s || !s->deterministic || is_training_dropout(n)) return std::nullopt;
  std::string k;
  append_str(k, n.domain);
  append_str(k, n.op_type);
  std::vector<const ir::Attribute*> attrs;
  for (const auto& a : n.attrs) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](auto* a, auto* b) { return a->name < b->name; });
  append(k, attrs.size());
  for (const auto* a : attrs)
    if (!append_attr(k, *a)) return std::nullopt;
  append(k, n.inputs().size());
  for (const ir::Value* v : n.inputs()) append(k, v);  // the value's identity
  append(k, n.outputs().size());
  // Output types too: two input-less Optional() nodes differ only in the
  // type their outputs were given.
  for (const ir::Value* v : n.outputs()) {
    append(k, static_cast<int32_t>(v->type.kind));
    append(k, static_cast<int32_t>(v->type.dtype));
  }
  return k;
}

bool is_input(const ir::Graph& g, const ir::Value* v) {
  return std::find(g.inputs().begin(), g.inputs().end(), v) != g.inputs().end();
}

int64_t dedup_constants(ir::Graph& g) {
  int64_t merged = 0;
  std::unordered_map<std::string, ir::Value*> seen;
  std::vector<ir::Value*> values;
  for (const auto& v : g.values()) values.push_back(v.get());
  for (ir::Value* v : values) {
    if (!v->is_constant() || v->constant->bytes() > kMaxDedupBytes || is_input(g, v) ||
        g.is_graph_output(v))
      continue;
    std::string k;
    append_tensor(k, *v->constant);
    auto [it, fresh] = seen.emplace(k, v);
    if (fresh || v->uses().empty()) continue;
    g.replace_all_uses(v, it->second);
    ++merged;
  }
  return merged;
}

int64_t eliminate(ir::Graph& g) {
  int64_t merged = dedup_constants(g);
  std::unordered_map<std::string, ir::Node*> seen;
  for (ir::Node* n : g.node_list()) {
    for (auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) merged += eliminate(*a.g);
    auto k = key_of(*n);
    if (!k) continue;
    auto [it, fresh] = seen.emplace(*k, n);
    if (fresh) continue;
    bool is_output = false;
    for (ir::Value* o : n->outputs()) is_output |= g.is_graph_output(o);
    if (is_output) continue;  // its name and value stay; later copies still match `it`
    for (size_t i = 0; i < n->outputs().size(); ++i)
      g.replace_all_uses(n->output(i), it->second->output(i));
    g.remove_node(n);
    ++merged;
  }
  g.remove_dead_values();
  return merged;
}

class Cse final : public Pass {
 public:
  const char* name() const override { return "cse"; }
  int64_t run(ir::Graph& g) override {
    g.topo_sort();
    return eliminate(g);
  }
};

}  // namespace

std::unique_ptr<Pass> make_cse() { return std::make_unique<Cse>(); }

}  // namespace gec::passes
