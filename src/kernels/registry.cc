// Kernel registry and evaluate_node(): run a single node outside a session.
#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

#include "kernels/kernel.h"
#include "ops/op_schema.h"

namespace gec::kernels {

namespace {
struct Entry {
  KernelFactory factory;
  std::string where;  // the registering source file
};
std::map<std::pair<std::string, std::string>, Entry>& factories() {
  static std::map<std::pair<std::string, std::string>, Entry> m;
  return m;
}
}  // namespace

void register_kernel(const std::string& domain, const std::string& op_type, KernelFactory f,
                     const std::string& where) {
  const auto key = std::make_pair(ops::canonical_domain(domain), op_type);
  auto it = factories().find(key);
  if (it != factories().end())
    fail(ErrorCode::kInternal, "kernel for " + ops::domain_label(key.first) + "::" + op_type +
                                   " registered twice: in " + it->second.where + " and in " + where);
  factories()[key] = Entry{std::move(f), where};
}

namespace {
/// The target's answers per op that the compiler asks (LayoutQuery,
/// VariantChoice), one table per function type, keyed by (canonical domain,
/// op type); a later registration replaces an earlier one.
template <class F>
std::map<std::pair<std::string, std::string>, F>& op_table() {
  static std::map<std::pair<std::string, std::string>, F> m;
  return m;
}
template <class F>
void register_in_op_table(const std::string& domain, const std::string& op_type, F f) {
  op_table<F>()[{ops::canonical_domain(domain), op_type}] = std::move(f);
}
/// The entry registered for `n`'s op, or null.
template <class F>
const F* find_in_op_table(const ir::Node& n) {
  auto it = op_table<F>().find({ops::canonical_domain(n.domain), n.op_type});
  return it == op_table<F>().end() ? nullptr : &it->second;
}
}  // namespace

void register_layout_query(const std::string& domain, const std::string& op_type, LayoutQuery q) {
  register_in_op_table(domain, op_type, std::move(q));
}

std::string implementation_for_layout(const ir::Node& n, ops::Layout src, ops::Layout dst) {
  const LayoutQuery* q = find_in_op_table<LayoutQuery>(n);
  return q ? (*q)(n, src, dst) : std::string();
}

void register_variant_choice(const std::string& domain, const std::string& op_type, VariantChoice c) {
  register_in_op_table(domain, op_type, std::move(c));
}

std::string choose_variant(const ir::Node& n, const KernelConfig& config) {
  const VariantChoice* c = find_in_op_table<VariantChoice>(n);
  return c ? (*c)(n, config) : std::string();
}

const KernelFactory* find_kernel(const std::string& domain, const std::string& op_type) {
  auto it = factories().find({ops::canonical_domain(domain), op_type});
  return it == factories().end() ? nullptr : &it->second.factory;
}

KernelConfig KernelConfig::for_node(const ir::Node& node) {
  KernelConfig c;
  for (const ir::Value* v : node.inputs()) c.input_dtypes.push_back(v ? v->type.dtype : DType::kUndefined);
  return c;
}

std::unique_ptr<Kernel> create_kernel(const ir::Node& node, KernelConfig config) {
  if (config.input_dtypes.empty()) config.input_dtypes = KernelConfig::for_node(node).input_dtypes;
  const std::vector<DType>& dts = config.input_dtypes;
  const KernelFactory* f = find_kernel(node.domain, node.op_type);
  if (!f) {
    std::ostringstream m;
    m << "unsupported op: " << node.describe() << ", domain "
      << ops::domain_label(node.domain) << ", inputs ";
    for (size_t i = 0; i < dts.size(); ++i) m << (i ? ", " : "") << dtype_name(dts[i]);
    fail(ErrorCode::kUnsupported, m.str());
  }
  // Only ops with a variant choice read KernelConfig::variant: on any other
  // op a variant (from a crafted .gom) would be ignored, not honoured.
  if (!config.variant.empty() && !find_in_op_table<VariantChoice>(node))
    fail(ErrorCode::kInvalidModel, node.describe() + ": kernel variant '" + config.variant +
                                       "' given to an op that has none (only Conv, FusedConv, MatMul, FusedMatMul and Gemm have variants)");
  auto k = (*f)(node, config);
  GEC_CHECK(k != nullptr, "kernel factory returned null for " + node.describe());
  return k;
}

std::vector<Tensor> SubgraphRunner::run(const ir::Graph& g, const std::vector<const TensorView*>& inputs) {
  std::vector<AnyValue> in(inputs.size());
  std::vector<const AnyValue*> ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    // A non-owning tensor over the caller's view: valid for this call only.
    in[i] = AnyValue::of_tensor(Tensor(inputs[i]->dtype, inputs[i]->shape, inputs[i]->data, nullptr));
    ptrs[i] = &in[i];
  }
  std::vector<Tensor> outs;
  for (AnyValue& v : run_values(g, ptrs)) outs.push_back(convert_value_kind(v, ValueKind::kTensor, "subgraph output").tensor);
  return outs;
}

TensorView* KernelContext::copy_to_output(size_t i, const TensorView& src) const {
  TensorView* o = allocate_output(i, src.dtype, src.shape);
  copy_tensor_data(src, *o);
  return o;
}

void KernelContext::missing(bool input, size_t i) const {
  fail(ErrorCode::kInvalidModel, (node ? node->describe() + ": " : std::string()) + (input ? "input " : "output ") +
                                     std::to_string(i) + " is required but the node has none");
}

const AnyValue& KernelContext::value_in(size_t i) const {
  const ValueSlot* slot = i < value_inputs.size() ? value_inputs[i] : nullptr;
  if (!slot || !*slot)
    fail(ErrorCode::kInvalidModel, (node ? node->describe() + ": input " : "input ") + std::to_string(i) +
                                       " holds no sequence or optional value");
  return **slot;
}

void KernelContext::set_value_out(size_t i, AnyValue v) const {
  if (i >= value_outputs.size() || !value_outputs[i])
    fail(ErrorCode::kInvalidModel, (node ? node->describe() + ": output " : "output ") + std::to_string(i) +
                                       " has no value slot");
  *value_outputs[i] = std::make_shared<const AnyValue>(std::move(v));
}

AnyValue convert_value_kind(const AnyValue& v, ValueKind want, const std::string& what) {
  if (v.kind == want) return v;
  if (is_optional(v.kind) && !v.has_value)
    fail(ErrorCode::kInvalidArgument, what + ": an optional is None where a " + value_kind_name(want) + " is needed");
  if (want == ValueKind::kTensor && v.kind == ValueKind::kOptionalTensor) return AnyValue::of_tensor(v.tensor);
  if (want == ValueKind::kSequence && v.kind == ValueKind::kOptionalSequence)
    return AnyValue::sequence(v.elem_dtype, v.elements);
  if ((want == ValueKind::kOptionalTensor && v.kind == ValueKind::kTensor) ||
      (want == ValueKind::kOptionalSequence && v.kind == ValueKind::kSequence))
    return AnyValue::optional_of(v);
  fail(ErrorCode::kInvalidArgument,
       what + ": a " + std::string(value_kind_name(v.kind)) + " where a " + value_kind_name(want) + " is needed");
}

namespace {
/// Bytes of a tensor of `dt` and `shape`; INT64_MAX when that overflows.
int64_t bytes_of(DType dt, const Shape& shape) {
  int64_t n = std::max<int64_t>(1, static_cast<int64_t>(dtype_size(dt)));
  for (int64_t d : shape) {
    if (d < 0) return INT64_MAX;
    if (d > 0 && n > INT64_MAX / d) return INT64_MAX;
    n *= d;
  }
  return n;
}
}  // namespace

std::vector<Tensor> evaluate_node(const ir::Node& node, const std::vector<const TensorView*>& inputs,
                                  int num_threads, SubgraphRunner* subgraphs, const KernelConfig& config,
                                  int64_t max_output_bytes) {
  int64_t taken = 0;
  auto take = [&](DType dt, const Shape& s) {
    if (max_output_bytes <= 0) return;
    const int64_t b = bytes_of(dt, s);
    taken = b > INT64_MAX - taken ? INT64_MAX : taken + b;
    if (taken > max_output_bytes)
      fail(ErrorCode::kUnsupported, node.describe() + ": outputs would take more than " +
                                        std::to_string(max_output_bytes) + " bytes");
  };
  const ops::OpSchema* schema = ops::find_schema(node.domain, node.op_type);
  if (!schema) fail(ErrorCode::kUnsupported, "no schema for " + node.describe());
  std::vector<Tensor> outs(node.outputs().size());
  std::vector<TensorView> out_views(outs.size());
  KernelContext ctx;
  ctx.inputs = inputs;
  ctx.num_threads = num_threads;
  ctx.subgraphs = subgraphs;
  for (auto& v : out_views) ctx.outputs.push_back(&v);
  if (!schema->shape_from_kernel) {
    ops::InferContext ic;
    ic.node = &node;
    ic.inputs = inputs;
    schema->infer(ic);
    GEC_CHECK(ic.out_shapes.size() >= outs.size(), node.describe() + ": infer set too few outputs");
    for (size_t i = 0; i < outs.size(); ++i) take(ic.out_dtypes[i], ic.out_shapes[i]);
    for (size_t i = 0; i < outs.size(); ++i) {
      outs[i] = Tensor(ic.out_dtypes[i], ic.out_shapes[i]);
      out_views[i] = outs[i].view();
    }
  }
  ctx.allocate_output = [&](size_t i, DType dt, const Shape& s) -> TensorView* {
    take(dt, s);
    outs[i] = Tensor(dt, s);
    out_views[i] = outs[i].view();
    return &out_views[i];
  };
  auto kernel = create_kernel(node, config);
  kernel->reshape(ctx);
  kernel->run(ctx);
  return outs;
}

void SharedWeights::add_stored(const void* plain, Packed p) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Slot>& slot = slots_[plain];
  if (!slot) slot = std::make_shared<Slot>();
  slot->stored.push_back(std::move(p));
}

std::shared_ptr<const void> SharedWeights::find_or_make(
    const void* data, const void* kind, const std::function<bool(const void*)>& matches,
    const std::function<std::shared_ptr<const void>(const Packed&)>& adopt, const std::function<Entry()>& make) {
  std::shared_ptr<Slot> slot;
  const auto find = [&]() -> std::shared_ptr<const void> {
    for (const Entry& e : slot->entries)
      if (e.kind == kind && matches(e.object.get())) return e.object;
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot>& s = slots_[data];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
    if (auto hit = find()) return hit;
  }
  // One maker per pointer; packing other pointers goes on meanwhile.
  std::lock_guard<std::mutex> making(slot->making);
  std::vector<Packed> stored;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto hit = find()) return hit;  // made while we waited
    stored = slot->stored;
  }
  Entry e;
  for (const Packed& p : stored)
    if ((e.object = adopt(p))) {
      e.packed = p;
      break;
    }
  const bool was_stored = e.object != nullptr;
  if (!was_stored) e = make();
  e.kind = kind;
  std::lock_guard<std::mutex> lock(mutex_);
  adopted_ += was_stored ? 1 : 0;
  slot->entries.push_back(e);
  return e.object;
}

size_t SharedWeights::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [data, slot] : slots_) n += slot->entries.size();
  return n;
}

size_t SharedWeights::adopted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return adopted_;
}

std::vector<std::pair<const void*, SharedWeights::Packed>> SharedWeights::packed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<const void*, Packed>> out;
  for (const auto& [data, slot] : slots_)
    for (const Entry& e : slot->entries)
      if (!e.packed.layout.empty()) out.emplace_back(data, e.packed);
  return out;
}

void* ScratchBuffer::get(size_t bytes) {
  if (region_) return bytes <= region_bytes_ ? region_ : fallback_->get(bytes);
  if (bytes > block_.size()) block_.grow(bytes);  // the pages it has are kept, only the new ones populated
  return block_.data();
}

}  // namespace gec::kernels
