// The TensorFlow frontend's conversion state and helpers (converter.h).
#include "frontend/tensorflow/converter.h"

#include <algorithm>
#include <cstring>

#include "kernels/kernel.h"
#include "ops/op_schema.h"

namespace gec::frontend::tf {

namespace {

const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
}  // namespace

DType dtype_of(int t) {
  using gec::tf::DataType;
  switch (t % 100) {  // *_REF types carry the same data
    case gec::tf::DT_FLOAT: return DType::kFloat32;
    case gec::tf::DT_DOUBLE: return DType::kFloat64;
    case gec::tf::DT_INT32: return DType::kInt32;
    case gec::tf::DT_UINT8: return DType::kUInt8;
    case gec::tf::DT_INT16: return DType::kInt16;
    case gec::tf::DT_INT8: return DType::kInt8;
    case gec::tf::DT_STRING: return DType::kString;
    case gec::tf::DT_COMPLEX64: return DType::kComplex64;
    case gec::tf::DT_INT64: return DType::kInt64;
    case gec::tf::DT_BOOL: return DType::kBool;
    case gec::tf::DT_BFLOAT16: return DType::kBFloat16;
    case gec::tf::DT_UINT16: return DType::kUInt16;
    case gec::tf::DT_COMPLEX128: return DType::kComplex128;
    case gec::tf::DT_HALF: return DType::kFloat16;
    case gec::tf::DT_UINT32: return DType::kUInt32;
    case gec::tf::DT_UINT64: return DType::kUInt64;
    default: return DType::kUndefined;
  }
}

namespace {

/// The dtype, shape and element count of a TensorProto, checked: a known
/// dtype, dims >= 0, at most kMaxConstantBytes.
DType proto_type(const gec::tf::TensorProto& t, const std::string& what, Shape* shape, int64_t* count) {
  const DType dt = dtype_of(t.dtype());
  if (dt == DType::kUndefined)
    fail(ErrorCode::kUnsupported, what + ": tensor of TensorFlow dtype " + gec::tf::DataType_Name(t.dtype()) +
                                      " is not supported");
  shape->clear();
  int64_t n = 1;
  for (const auto& d : t.tensor_shape().dim()) {
    if (d.size() < 0 || (d.size() > 0 && n > (int64_t{1} << 40) / d.size()))
      fail(ErrorCode::kInvalidModel, what + ": constant of bad shape");
    shape->push_back(d.size());
    n *= d.size();
  }
  // A string element costs its std::string and its bytes: the longest given
  // string stands for the repeated ones.
  int64_t esize = static_cast<int64_t>(dtype_size(dt));
  if (dt == DType::kString) {
    esize = 32;
    int64_t longest = 0;
    for (const auto& v : t.string_val()) longest = std::max<int64_t>(longest, static_cast<int64_t>(v.size()));
    esize += longest;
  }
  if (n > kMaxConstantBytes / esize)
    fail(ErrorCode::kUnsupported, what + ": a constant of " + dtype_name(dt) + shape_str(*shape) + " (" +
                                      std::to_string(n * esize) + " bytes) is larger than the " +
                                      std::to_string(kMaxConstantBytes) + " bytes supported");
  *count = n;
  return dt;
}

/// How many values the typed field of `dt` holds.
int64_t typed_values(const gec::tf::TensorProto& t, DType dt) {
  switch (dt) {
    case DType::kFloat32: return t.float_val_size();
    case DType::kFloat64: return t.double_val_size();
    case DType::kInt32: case DType::kInt16: case DType::kInt8: case DType::kUInt8: case DType::kUInt16:
      return t.int_val_size();
    case DType::kInt64: return t.int64_val_size();
    case DType::kUInt32: return t.uint32_val_size();
    case DType::kUInt64: return t.uint64_val_size();
    case DType::kBool: return t.bool_val_size();
    case DType::kFloat16: case DType::kBFloat16: return t.half_val_size();
    case DType::kString: return t.string_val_size();
    default: return 0;
  }
}

}  // namespace

bool splat_of(const gec::tf::TensorProto& t, const std::string& what, int64_t min_bytes, Tensor* value, Shape* shape) {
  int64_t n = 0;
  const DType dt = proto_type(t, what, shape, &n);
  if (dt == DType::kString || !t.tensor_content().empty() || typed_values(t, dt) > 1) return false;
  if (n * static_cast<int64_t>(dtype_size(dt)) <= min_bytes) return false;
  gec::tf::TensorProto one = t;
  one.clear_tensor_shape();
  one.mutable_tensor_shape()->add_dim()->set_size(1);
  *value = tensor_of(one, what);
  return true;
}

Tensor tensor_of(const gec::tf::TensorProto& t, const std::string& what) {
  Shape shape;
  int64_t n = 0;
  const DType dt = proto_type(t, what, &shape, &n);
  const size_t esize = dtype_size(dt);
  if (dt != DType::kString && !t.tensor_content().empty()) {
    if (t.tensor_content().size() != static_cast<size_t>(n) * esize)
      fail(ErrorCode::kInvalidModel, what + ": tensor_content has " + std::to_string(t.tensor_content().size()) +
                                         " bytes for " + dtype_name(dt) + shape_str(shape));
    Tensor r = Tensor::uninitialized(dt, shape);
    std::memcpy(r.data(), t.tensor_content().data(), r.bytes());
    return r;
  }
  Tensor r(dt, shape);  // zero-filled: TensorFlow's value for an empty field
  // A field holding fewer values than the shape: the last one repeats (the
  // usual case is one value for a whole splat constant).
  auto fill = [&](auto count, auto get) {
    const int64_t c = static_cast<int64_t>(count);
    if (c == 0) return;
    if (c > n) fail(ErrorCode::kInvalidModel, what + ": " + std::to_string(c) + " values for " + shape_str(shape));
    for (int64_t i = 0; i < n; ++i) get(i, std::min(i, c - 1));
  };
  switch (dt) {
    case DType::kFloat32: fill(t.float_val_size(), [&](int64_t i, int64_t k) { r.as<float>()[i] = t.float_val(k); }); break;
    case DType::kFloat64: fill(t.double_val_size(), [&](int64_t i, int64_t k) { r.as<double>()[i] = t.double_val(k); }); break;
    case DType::kInt32: fill(t.int_val_size(), [&](int64_t i, int64_t k) { r.as<int32_t>()[i] = t.int_val(k); }); break;
    case DType::kInt16: fill(t.int_val_size(), [&](int64_t i, int64_t k) { r.as<int16_t>()[i] = static_cast<int16_t>(t.int_val(k)); }); break;
    case DType::kInt8: fill(t.int_val_size(), [&](int64_t i, int64_t k) { r.as<int8_t>()[i] = static_cast<int8_t>(t.int_val(k)); }); break;
    case DType::kUInt8: fill(t.int_val_size(), [&](int64_t i, int64_t k) { r.as<uint8_t>()[i] = static_cast<uint8_t>(t.int_val(k)); }); break;
    case DType::kUInt16: fill(t.int_val_size(), [&](int64_t i, int64_t k) { r.as<uint16_t>()[i] = static_cast<uint16_t>(t.int_val(k)); }); break;
    case DType::kInt64: fill(t.int64_val_size(), [&](int64_t i, int64_t k) { r.as<int64_t>()[i] = t.int64_val(k); }); break;
    case DType::kUInt32: fill(t.uint32_val_size(), [&](int64_t i, int64_t k) { r.as<uint32_t>()[i] = t.uint32_val(k); }); break;
    case DType::kUInt64: fill(t.uint64_val_size(), [&](int64_t i, int64_t k) { r.as<uint64_t>()[i] = t.uint64_val(k); }); break;
    case DType::kBool: fill(t.bool_val_size(), [&](int64_t i, int64_t k) { r.as<uint8_t>()[i] = t.bool_val(k) ? 1 : 0; }); break;
    case DType::kFloat16:
    case DType::kBFloat16:
      fill(t.half_val_size(), [&](int64_t i, int64_t k) { r.as<uint16_t>()[i] = static_cast<uint16_t>(t.half_val(k)); });
      break;
    case DType::kString: fill(t.string_val_size(), [&](int64_t i, int64_t k) { r.as<std::string>()[i] = t.string_val(k); }); break;
    default:
      fail(ErrorCode::kUnsupported, what + ": constants of dtype " + dtype_name(dt) + " in typed fields are not supported");
  }
  return r;
}

// ---- the node being converted ---------------------------------------------------

void Converter::begin_node(const gec::tf::NodeDef& n) {
  node = &n;
  data_inputs_.clear();
  for (const std::string& in : n.input()) {
    if (!in.empty() && in[0] == '^') continue;  // control dependency: order only
    data_inputs_.push_back(in.find(':') == std::string::npos ? in + ":0" : in);
  }
}

std::string Converter::describe() const {
  return node ? "node '" + node->name() + "' (" + node->op() + ")" : "graph";
}

void Converter::error(const std::string& msg) const { fail(ErrorCode::kInvalidModel, describe() + ": " + msg); }
void Converter::unsupported(const std::string& msg) const { fail(ErrorCode::kUnsupported, describe() + ": " + msg); }

std::string Converter::tensor_name(size_t k) const { return node->name() + ":" + std::to_string(k); }

// ---- attributes -----------------------------------------------------------------------

bool Converter::has_attr(const std::string& n) const { return node->attr().count(n) > 0; }

int64_t Converter::attr_i(const std::string& n, int64_t def) const {
  auto it = node->attr().find(n);
  return it == node->attr().end() ? def : it->second.i();
}
float Converter::attr_f(const std::string& n, float def) const {
  auto it = node->attr().find(n);
  return it == node->attr().end() ? def : it->second.f();
}
bool Converter::attr_b(const std::string& n, bool def) const {
  auto it = node->attr().find(n);
  return it == node->attr().end() ? def : it->second.b();
}
std::string Converter::attr_s(const std::string& n, const std::string& def) const {
  auto it = node->attr().find(n);
  return it == node->attr().end() ? def : it->second.s();
}
std::vector<int64_t> Converter::attr_ints(const std::string& n) const {
  auto it = node->attr().find(n);
  if (it == node->attr().end()) return {};
  return {it->second.list().i().begin(), it->second.list().i().end()};
}
std::vector<std::string> Converter::attr_strings(const std::string& n) const {
  auto it = node->attr().find(n);
  if (it == node->attr().end()) return {};
  return {it->second.list().s().begin(), it->second.list().s().end()};
}
DType Converter::attr_type(const std::string& n, DType def) const {
  auto it = node->attr().find(n);
  if (it == node->attr().end()) return def;
  const DType d = dtype_of(it->second.type());
  if (d == DType::kUndefined) unsupported("attribute " + n + ": TensorFlow dtype " +
                                          gec::tf::DataType_Name(it->second.type()) + " is not supported");
  return d;
}
bool Converter::nhwc() const {
  const std::string f = attr_s("data_format", "NHWC");
  if (f == "NHWC" || f == "NDHWC") return true;
  if (f == "NCHW" || f == "NCDHW") return false;
  unsupported("data_format '" + f + "' is not supported");
}

// ---- inputs -------------------------------------------------------------------------------

Entry& Converter::entry(size_t i) {
  if (i >= data_inputs_.size()) error("has " + std::to_string(data_inputs_.size()) + " inputs, input " +
                                      std::to_string(i) + " is needed");
  auto it = tensors_.find(data_inputs_[i]);
  if (it == tensors_.end()) {
    // A node output that exists but was never bound (e.g. output 3 of a
    // two-output node) or an unknown node.
    const std::string& t = data_inputs_[i];
    const std::string src = t.substr(0, t.rfind(':'));
    if (!nodes_.count(src)) error("input '" + t + "' names no node of the graph");
    error("input '" + t + "' is not an output of node '" + src + "'");
  }
  return it->second;
}

ir::Value* Converter::to_nchw_value(Entry& e, const std::string& name) {
  if (e.nchw) return e.v;
  if (!e.converted) {
    if (rank_of(e.v) != 4) unsupported("input '" + name + "' must be 4-D for NHWC, got " + e.v->type.str());
    e.converted = transpose(e.v, kToNchw);
  }
  return e.converted;
}

ir::Value* Converter::to_logical_value(Entry& e, const std::string& name) {
  if (!e.nchw) return e.v;
  if (!e.converted) {
    e.converted = transpose(e.v, kToNhwc);
    if (!g_.find_value(name)) g_.rename_value(e.converted, name);
  }
  return e.converted;
}

ir::Value* Converter::in(size_t i) { return to_logical_value(entry(i), data_inputs_[i]); }
ir::Value* Converter::in_nchw(size_t i) { return to_nchw_value(entry(i), data_inputs_[i]); }
bool Converter::in_is_nchw(size_t i) { return entry(i).nchw; }

ir::Value* Converter::logical_of(const std::string& tensor) {
  auto it = tensors_.find(tensor);
  if (it == tensors_.end()) return nullptr;
  return to_logical_value(it->second, tensor);
}

const Tensor& Converter::const_in(size_t i, const char* what) {
  ir::Value* v = in(i);
  if (!v->is_constant()) unsupported(std::string(what) + " (input " + std::to_string(i) + ", '" + data_inputs_[i] +
                                     "') must be a constant");
  return *v->constant;
}

std::vector<int64_t> Converter::const_ints(size_t i, const char* what) {
  const Tensor& t = const_in(i, what);
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t k = 0; k < r.size(); ++k) {
    switch (t.dtype()) {
      case DType::kInt32: r[k] = t.as<int32_t>()[k]; break;
      case DType::kInt64: r[k] = t.as<int64_t>()[k]; break;
      default: unsupported(std::string(what) + " must be int32 or int64, got " + dtype_name(t.dtype()));
    }
  }
  return r;
}

int64_t Converter::const_int(size_t i, const char* what) {
  const std::vector<int64_t> v = const_ints(i, what);
  if (v.size() != 1) error(std::string(what) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

Shape Converter::shape_of(const ir::Value* v) const {
  if (!v->type.is_static())
    unsupported("the shape of '" + v->name() + "' (" + v->type.str() +
                ") must be known at compile time; give the model's inputs fixed shapes with --input-shape");
  return v->type.static_shape();
}

int Converter::rank_of(const ir::Value* v) const {
  return v->type.has_shape ? static_cast<int>(v->type.dims.size()) : -1;
}

// ---- outputs ---------------------------------------------------------------------------

void Converter::set_output(size_t k, ir::Value* v, bool nchw) {
  const std::string name = tensor_name(k);
  // The value gets the tensor's name when it holds the tensor as TensorFlow
  // does (and the name is free); an NCHW copy is "<name>/nchw".
  const std::string want = nchw ? name + "/nchw" : name;
  if (v->producer() && v->name() != want && !g_.find_value(want) && !g_.is_graph_output(v)) g_.rename_value(v, want);
  tensors_[name] = Entry{v, nchw, nullptr};
}

// ---- emitting IR -----------------------------------------------------------------------

std::vector<ir::Value*> Converter::emit_n(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                                          std::vector<ir::Attribute> attrs, size_t num_outputs,
                                          const std::string& domain) {
  const std::string base = node ? node->name() + "/" + op_type : op_type;
  std::vector<std::string> outs;
  for (size_t k = 0; k < num_outputs; ++k) outs.push_back(g_.unique_name(base));
  ir::Node* n = g_.add_node(op_type, inputs, outs, g_.unique_name(base), domain);
  n->attrs = std::move(attrs);
  const ops::OpSchema* s = ops::find_schema(domain, op_type);
  if (!s) unsupported("needs op " + op_type + ", which this build does not have");
  // Types from the op's infer function, when every input's shape is known.
  ops::InferContext ctx;
  std::vector<TensorView> views;
  const bool ok = ops::infer_static_types(*n, ctx, views);
  bool all_const = true;
  int64_t in_bytes = 0;
  for (const ir::Value* v : inputs) {
    if (!v) continue;
    all_const = all_const && v->is_constant();
    if (v->is_constant()) in_bytes += static_cast<int64_t>(v->constant->bytes());
  }
  for (size_t k = 0; k < num_outputs; ++k) {
    ir::Value* o = n->output(k);
    if (ok && k < ctx.out_shapes.size()) {
      o->type = ir::TensorType::of(ctx.out_dtypes[k], ctx.out_shapes[k]);
    } else {
      o->type.dtype = inputs.empty() || !inputs[0] ? DType::kFloat32 : inputs[0]->type.dtype;
      o->type.has_shape = false;
    }
  }
  if (ok && all_const && s->deterministic && !inputs.empty()) {
    std::vector<Tensor> r;
    try {
      r = kernels::evaluate_node(*n, ctx.inputs, 1, nullptr, {}, in_bytes + kMaxFoldGrowthBytes);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported) throw;  // too large to fold: stays a node
    }
    if (r.size() == num_outputs) {
      std::vector<ir::Value*> consts;
      for (size_t k = 0; k < num_outputs; ++k) consts.push_back(g_.add_constant(g_.unique_name(base + "/const"), r[k]));
      g_.remove_node(n);
      return consts;
    }
  }
  return std::vector<ir::Value*>(n->outputs().begin(), n->outputs().end());
}

ir::Value* Converter::emit(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                           std::vector<ir::Attribute> attrs) {
  return emit_n(op_type, inputs, std::move(attrs), 1)[0];
}

ir::Value* Converter::constant(const Tensor& t, const std::string& hint) {
  return g_.add_constant(g_.unique_name((node ? node->name() + "/" : std::string()) + hint), t);
}

ir::Value* Converter::const_i64(const std::vector<int64_t>& v, const std::string& hint) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.as<int64_t>());
  return constant(t, hint);
}

ir::Value* Converter::scalar_f32(float v, const std::string& hint) { return scalar_of(DType::kFloat32, v, hint); }

ir::Value* Converter::scalar_of(DType dt, double v, const std::string& hint) {
  Tensor t(dt, {});
  switch (dt) {
    case DType::kFloat32: t.as<float>()[0] = static_cast<float>(v); break;
    case DType::kFloat64: t.as<double>()[0] = v; break;
    case DType::kInt32: t.as<int32_t>()[0] = static_cast<int32_t>(v); break;
    case DType::kInt64: t.as<int64_t>()[0] = static_cast<int64_t>(v); break;
    case DType::kInt8: t.as<int8_t>()[0] = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.as<uint8_t>()[0] = static_cast<uint8_t>(v); break;
    case DType::kInt16: t.as<int16_t>()[0] = static_cast<int16_t>(v); break;
    case DType::kUInt16: t.as<uint16_t>()[0] = static_cast<uint16_t>(v); break;
    default: unsupported(std::string("a constant of dtype ") + dtype_name(dt) + " is needed here");
  }
  return constant(t, hint);
}

ir::Value* Converter::transpose(ir::Value* v, const std::vector<int64_t>& perm) {
  return emit("Transpose", {v}, {ir::Attribute::Ints("perm", perm)});
}

ir::Value* Converter::cast(ir::Value* v, DType to) {
  if (v->type.dtype == to) return v;
  return emit("Cast", {v}, {ir::Attribute::Int("to", static_cast<int64_t>(to))});
}

ir::Value* Converter::to_i64(ir::Value* v) { return cast(v, DType::kInt64); }

// ---- layout helpers ---------------------------------------------------------------------

int64_t Converter::nhwc_axis_to_nchw(int64_t axis) {
  if (axis < 0) axis += 4;
  static const int64_t kMap[4] = {0, 2, 3, 1};
  return axis >= 0 && axis < 4 ? kMap[axis] : axis;
}

bool Converter::broadcast_inputs(const std::vector<size_t>& idx, std::vector<ir::Value*>& out) {
  out.clear();
  bool any_nchw = false, fits = true;
  for (size_t i : idx) {
    Entry& e = entry(i);
    any_nchw = any_nchw || e.nchw;
    if (!e.nchw) {
      const int r = rank_of(e.v);
      fits = fits && r >= 0 && r <= 4 && (r < 4 || true);
    }
  }
  if (!any_nchw || !fits) {
    for (size_t i : idx) out.push_back(in(i));
    return false;
  }
  for (size_t i : idx) {
    Entry& e = entry(i);
    if (e.nchw) {
      out.push_back(e.v);
      continue;
    }
    const int r = rank_of(e.v);
    if (r == 0) {
      out.push_back(e.v);
      continue;
    }
    if (r == 4) {
      out.push_back(in_nchw(i));
      continue;
    }
    // Rank 1..3 broadcasts against the trailing dims of NHWC: make it 4-D
    // with leading 1s, then permute as the data is.
    Shape s = shape_of(e.v);
    Shape s4(4 - s.size(), 1);
    s4.insert(s4.end(), s.begin(), s.end());
    ir::Value* r4 = emit("Reshape", {e.v, const_i64(s4, "shape4")});
    out.push_back(transpose(r4, kToNchw));
  }
  return true;
}

}  // namespace gec::frontend::tf
