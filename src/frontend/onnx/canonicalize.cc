// Rewrites of older ONNX operator forms into the canonical IR forms (see
// canonicalize.h and the operator changelog, onnx/docs/Changelog.md). Each
// rule says which op versions it applies to; `kRules` is the whole list.
//
// Ops not listed need no rewrite for opsets 7..17: their older versions are
// subsets of the newest one (Conv-1, MaxPool-8/10/11, AveragePool-7/10, Gemm-7/9,
// Reshape-5/13, Concat-4, Flatten-9, TopK-10/11, Clip-11/12, ...). Models of
// opsets 1..6 are screened node by node by the importer (old_form_check);
// the pre-7 forms it lets through are rewritten here: the binary ops'
// broadcast+axis, Gemm-6 broadcast, PRelu-6 per-channel slope, the Cast-1
// string `to`, Scan-8's batch axis.
#include "frontend/onnx/canonicalize.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "gec/error.h"
#include "ops/domain.h"

namespace gec::frontend {

using ir::Attribute;
using ir::Graph;
using ir::TensorType;
using ir::Value;

// ---- NodeDraft ------------------------------------------------------------------

const Attribute* NodeDraft::attr(const std::string& n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

void NodeDraft::drop_attr(const std::string& n) {
  attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [&](const Attribute& a) { return a.name == n; }),
              attrs.end());
}

void NodeDraft::set_attr(Attribute a) {
  drop_attr(a.name);
  attrs.push_back(std::move(a));
}

void NodeDraft::set_input(size_t i, Value* v) {
  if (i >= inputs.size()) inputs.resize(i + 1, nullptr);
  inputs[i] = v;
}

std::string NodeDraft::describe() const {
  std::string op = (domain.empty() ? "" : domain + "::") + op_type;
  if (since_version > 0) op += "-" + std::to_string(since_version);
  return "node '" + name + "' (" + op + ")";
}

namespace {

// ---- helpers ----------------------------------------------------------------------

[[noreturn]] void unsupported(const NodeDraft& d, const std::string& why) {
  fail(ErrorCode::kUnsupported, d.describe() + ": " + why);
}

ir::Node* emit_node(Graph& g, const std::string& op, const std::vector<Value*>& ins,
                    const std::vector<Value*>& outs, const std::string& name, std::vector<Attribute> attrs = {}) {
  ir::Node* n = g.add_node_with_outputs(op, ins, outs, name, "");
  n->attrs = std::move(attrs);
  return n;
}

// The draft as one node. Omitted outputs before the last present one become
// unnamed placeholder values, since IR nodes have no null outputs.
void emit_plain(Graph& g, NodeDraft& d) {
  std::vector<Value*> outs = d.outputs;
  while (!outs.empty() && outs.back() == nullptr) outs.pop_back();
  for (size_t i = 0; i < outs.size(); ++i)
    if (!outs[i]) outs[i] = g.add_value(d.name + "/unused_output" + std::to_string(i));
  ir::Node* n = g.add_node_with_outputs(d.op_type, d.inputs, outs, d.name, d.domain);
  n->attrs = std::move(d.attrs);
}

Value* const_i64(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.as<int64_t>());
  return g.add_constant(name, std::move(t));
}

// A scalar constant with the dtype of `like` (float32 when unknown). Old
// Clip/Pad forms only take float16/float/double; 16-bit floats go through a
// Cast from float32 that constant folding removes.
Value* scalar_like(Graph& g, const NodeDraft& d, const Value* like, float x, const std::string& name) {
  const DType dt = like && like->type.dtype != DType::kUndefined ? like->type.dtype : DType::kFloat32;
  if (dt == DType::kFloat64) {
    Tensor t(DType::kFloat64, {});
    *t.as<double>() = x;
    return g.add_constant(name, std::move(t));
  }
  Tensor t(DType::kFloat32, {});
  *t.as<float>() = x;
  Value* f = g.add_constant(name, std::move(t));
  if (dt == DType::kFloat32) return f;
  if (dt != DType::kFloat16 && dt != DType::kBFloat16)
    unsupported(d, std::string("old form with input dtype ") + dtype_name(dt));
  Value* c = g.add_value(name + "/cast", TensorType::of(dt, {}));
  emit_node(g, "Cast", {f}, {c}, d.name + "/cast_" + name.substr(name.rfind('/') + 1),
            {Attribute::Int("to", static_cast<int64_t>(dt))});
  return c;
}

// Moves an ints attribute into input `idx` as a 1-D int64 constant.
void ints_attr_to_input(Graph& g, NodeDraft& d, const std::string& attr, size_t idx) {
  const Attribute* a = d.attr(attr);
  if (!a) return;
  Value* v = const_i64(g, d.name + "/" + attr, a->ints);
  d.drop_attr(attr);
  d.set_input(idx, v);
}

// Fails when any output past `keep` is read; those outputs are then dropped.
void drop_outputs_after(NodeDraft& d, size_t keep, const std::string& what) {
  for (size_t i = keep; i < d.outputs.size(); ++i)
    if (d.outputs[i] && d.output_used[i]) unsupported(d, what + " (output " + std::to_string(i) + ") is not supported");
  if (d.outputs.size() > keep) {
    d.outputs.resize(keep);
    d.output_used.resize(keep);
  }
}

bool is_empty_constant(const Value* v) { return v && v->is_constant() && v->constant->numel() == 0; }

// ---- rules ------------------------------------------------------------------------

// Squeeze-1/11, Unsqueeze-1/11, Reduce*-1/11/13, ReduceSum-1/11: `axes`
// attribute -> optional input 1 (int64), the Squeeze-13 / ReduceSum-13 form.
void axes_to_input(Graph& g, NodeDraft& d) { ints_attr_to_input(g, d, "axes", 1); }

// Split-2/11: `split` attribute -> input 1 (Split-13).
void split_to_input(Graph& g, NodeDraft& d) { ints_attr_to_input(g, d, "split", 1); }

// Slice-1: starts/ends/axes attributes -> inputs 1/2/3 (Slice-10); no steps.
void slice_attrs_to_inputs(Graph& g, NodeDraft& d) {
  ints_attr_to_input(g, d, "starts", 1);
  ints_attr_to_input(g, d, "ends", 2);
  ints_attr_to_input(g, d, "axes", 3);
}

// TopK-1: `k` attribute -> input 1, an int64 tensor of shape [1] (TopK-10).
void topk_k_to_input(Graph& g, NodeDraft& d) {
  const Attribute* k = d.attr("k");
  if (!k) return;
  Value* v = const_i64(g, d.name + "/k", {k->i});
  d.drop_attr("k");
  d.set_input(1, v);
}

// Clip-6: min/max attributes -> scalar inputs 1/2 (Clip-11). An absent
// attribute stays an omitted input, which means "no bound" in Clip-11 too.
void clip_attrs_to_inputs(Graph& g, NodeDraft& d) {
  for (size_t i = 0; i < 2; ++i) {
    const std::string n = i == 0 ? "min" : "max";
    const Attribute* a = d.attr(n);
    if (!a) continue;
    Value* v = scalar_like(g, d, d.input(0), a->f, d.name + "/" + n);
    d.drop_attr(n);
    d.set_input(1 + i, v);
  }
}

// Pad-2: `pads` attribute -> input 1, `value` -> scalar input 2 (Pad-11).
void pad_attrs_to_inputs(Graph& g, NodeDraft& d) {
  ints_attr_to_input(g, d, "pads", 1);
  const Attribute* value = d.attr("value");
  if (!value) return;
  const float x = value->f;
  d.drop_attr("value");
  const std::string mode = d.attr("mode") ? d.attr("mode")->s : "constant";
  if (mode == "constant") d.set_input(2, scalar_like(g, d, d.input(0), x, d.name + "/value"));
}

// Softmax/LogSoftmax/Hardmax-1/11 normalize over the input flattened to 2-D at
// `axis` (default 1). Opset 13 normalizes along one axis, so:
//   y = Reshape(Op-13(Flatten(x, axis), axis=-1), Shape(x)).
// When `axis` is known to be the last one, the two agree and no helpers are needed.
void flatten_softmax(Graph& g, NodeDraft& d) {
  const int64_t axis = d.attr("axis") ? d.attr("axis")->i : 1;
  Value* x = d.input(0);
  Value* y = d.outputs.empty() ? nullptr : d.outputs[0];
  const bool ranked = x && x->type.has_shape;
  const int64_t rank = ranked ? static_cast<int64_t>(x->type.dims.size()) : -1;
  if (!x || !y || (ranked && (axis == rank - 1 || axis == -1))) {
    d.set_attr(Attribute::Int("axis", -1));
    return emit_plain(g, d);
  }
  TensorType flat;
  flat.dtype = x->type.dtype;
  if (ranked) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t& p = i < a ? outer : inner;
      const ir::Dim& dim = x->type.dims[static_cast<size_t>(i)];
      p = (p < 0 || !dim.is_static()) ? -1 : p * dim.value;
    }
    flat.has_shape = true;
    flat.dims = {ir::Dim{outer, ""}, ir::Dim{inner, ""}};
  }
  Value* f = g.add_value(d.name + "/flat", flat);
  emit_node(g, "Flatten", {x}, {f}, d.name + "/flatten", {Attribute::Int("axis", axis)});
  Value* s = g.add_value(d.name + "/flat_out", flat);
  emit_node(g, d.op_type, {f}, {s}, d.name, {Attribute::Int("axis", -1)});
  TensorType shape_t;
  shape_t.dtype = DType::kInt64;
  if (ranked) shape_t = TensorType::of(DType::kInt64, {rank});
  Value* shp = g.add_value(d.name + "/shape", shape_t);
  emit_node(g, "Shape", {x}, {shp}, d.name + "/shape");
  emit_node(g, "Reshape", {s, shp}, {y}, d.name + "/reshape");
}

// BatchNormalization-7/9/14/15: the inference form (one output). spatial=0
// (BN-7 per activation statistics) is refused; the running mean/var outputs
// of BN-7/9 exist only in training. BN-14/15 with training_mode=1 become our
// com.graphengine::BatchNormalizationTraining (same inputs; outputs Y,
// running_mean?, running_var?; attrs epsilon, momentum), which normalizes
// with the batch statistics.
void batchnorm_inference(Graph& g, NodeDraft& d) {
  if (const Attribute* s = d.attr("spatial"); s && s->i == 0) unsupported(d, "spatial=0 is not supported");
  if (const Attribute* t = d.attr("training_mode"); t && t->i != 0) {
    d.drop_attr("training_mode");
    d.op_type = "BatchNormalizationTraining";
    d.domain = ops::kGecDomain;
    return emit_plain(g, d);
  }
  for (const char* a : {"spatial", "training_mode", "momentum", "is_test", "consumed_inputs"}) d.drop_attr(a);
  drop_outputs_after(d, 1, "training statistics");
  emit_plain(g, d);
}

// Dropout-7/10/12/13 at inference: y = x; a read mask is all true, built as
// ConstantOfShape(Shape(x), value=true). A Dropout-12/13 whose training_mode
// is not a constant false (a constant true, or a graph input) stays a
// Dropout node (data, ratio?, training_mode?; attr seed): its kernel reads
// training_mode at run time.
void dropout_to_identity(Graph& g, NodeDraft& d) {
  if (Value* training = d.input(2)) {
    const bool known_false = training->is_constant() && training->constant->numel() == 1 &&
                             training->constant->as<uint8_t>()[0] == 0;
    if (!known_false) return emit_plain(g, d);
  }
  Value* x = d.input(0);
  if (!d.outputs.empty() && d.outputs[0]) emit_node(g, "Identity", {x}, {d.outputs[0]}, d.name);
  if (d.outputs.size() < 2 || !d.outputs[1] || !d.output_used[1]) return;
  TensorType shape_t;
  shape_t.dtype = DType::kInt64;
  if (x->type.has_shape) shape_t = TensorType::of(DType::kInt64, {static_cast<int64_t>(x->type.dims.size())});
  Value* shp = g.add_value(d.name + "/mask_shape", shape_t);
  emit_node(g, "Shape", {x}, {shp}, d.name + "/mask_shape");
  Tensor one(DType::kBool, {1});
  one.as<uint8_t>()[0] = 1;
  emit_node(g, "ConstantOfShape", {shp}, {d.outputs[1]}, d.name + "/mask",
            {Attribute::TensorAttr("value", std::move(one))});
}

// Upsample-7/9/10 and Resize-10 -> Resize-13(X, roi=none, scales) with
// asymmetric coordinates; nearest mode floors, as those versions did.
void upsample_to_resize(Graph& g, NodeDraft& d) {
  const std::string mode = d.attr("mode") ? d.attr("mode")->s : "nearest";
  if (mode != "nearest" && mode != "linear") unsupported(d, "mode '" + mode + "' is not supported");
  Value* scales = d.input(1);
  if (const Attribute* s = d.attr("scales")) {  // Upsample-7
    Tensor t(DType::kFloat32, {static_cast<int64_t>(s->floats.size())});
    std::copy(s->floats.begin(), s->floats.end(), t.as<float>());
    scales = g.add_constant(d.name + "/scales", std::move(t));
  }
  d.op_type = "Resize";
  d.inputs = {d.input(0), nullptr, scales};
  d.attrs = {Attribute::String("mode", mode),
             Attribute::String("coordinate_transformation_mode", "asymmetric")};
  if (mode == "nearest") d.attrs.push_back(Attribute::String("nearest_mode", "floor"));
  emit_plain(g, d);
}

// Resize-11/13: an empty constant roi or scales means "not given"; make it
// an omitted input, as the canonical form spells absence.
void resize_empty_inputs(Graph& g, NodeDraft& d) {
  for (size_t i : {size_t{1}, size_t{2}})
    if (is_empty_constant(d.input(i))) d.set_input(i, nullptr);
  emit_plain(g, d);
}

// Cast-1 spelled `to` as a string ("FLOAT"); Cast-6+ uses the dtype code.
void cast_string_to(Graph& g, NodeDraft& d) {
  if (const Attribute* to = d.attr("to"); to && to->kind == Attribute::Kind::kString) {
    std::string lower = to->s;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const DType dt = dtype_from_name(lower);
    if (dt == DType::kUndefined) unsupported(d, "unknown Cast target '" + to->s + "'");
    d.set_attr(Attribute::Int("to", static_cast<int64_t>(dt)));
  }
  emit_plain(g, d);
}

// Scatter-9 is ScatterElements-11 under its old name.
void scatter_to_scatter_elements(Graph& g, NodeDraft& d) {
  d.op_type = "ScatterElements";
  emit_plain(g, d);
}

// Scan-8 has a leading batch axis on states and scan inputs and an optional
// sequence_lens input 0; `directions` is Scan-9's scan_input_directions.
// GraphEngine's canonical spelling keeps input 0 and adds batch_major = 1
// (the Scan kernel runs one Scan-9 per batch row). sequence_lens itself is
// refused by the kernel unless omitted.
void scan8_batch_major(Graph&, NodeDraft& d) {
  if (const Attribute* dirs = d.attr("directions")) {
    Attribute a = *dirs;
    a.name = "scan_input_directions";
    d.drop_attr("directions");
    d.set_attr(std::move(a));
  }
  d.set_attr(Attribute::Int("batch_major", 1));
}

// Add/Sub/Mul/Div-6 and Pow-1 (opset <= 6 models): with broadcast=1 and an
// `axis`, B's dims line up with A's starting at that axis, so B gets trailing
// 1-dims (Unsqueeze) to make numpy broadcasting (opset 7) mean the same.
// Without `axis` (suffix matching) or without broadcast (equal shapes) numpy
// broadcasting already agrees.
void legacy_broadcast(Graph& g, NodeDraft& d) {
  const Attribute* bc = d.attr("broadcast");
  const Attribute* axis = d.attr("axis");
  Value* a = d.input(0);
  Value* b = d.input(1);
  if (bc && bc->i != 0 && axis && a && b) {
    if (!a->type.has_shape || !b->type.has_shape) unsupported(d, "broadcast with an axis needs inputs of known rank");
    const int64_t ra = static_cast<int64_t>(a->type.dims.size());
    const int64_t rb = static_cast<int64_t>(b->type.dims.size());
    const int64_t ax = axis->i < 0 ? axis->i + ra : axis->i;
    const int64_t trailing = ra - ax - rb;
    if (ax < 0 || trailing < 0) unsupported(d, "broadcast axis does not fit the input ranks");
    if (trailing > 0) {
      std::vector<int64_t> axes;
      for (int64_t i = 0; i < trailing; ++i) axes.push_back(rb + i);
      TensorType t;
      t.dtype = b->type.dtype;
      Value* aligned = g.add_value(d.name + "/b_aligned", t);
      emit_node(g, "Unsqueeze", {b, const_i64(g, d.name + "/b_axes", axes)}, {aligned}, d.name + "/align_b");
      d.set_input(1, aligned);
    }
  }
  for (const char* n : {"broadcast", "axis", "consumed_inputs"}) d.drop_attr(n);
}

// Gemm-6: `broadcast` only allowed C to broadcast, as Gemm-7 always does.
void drop_gemm_broadcast(Graph&, NodeDraft& d) { d.drop_attr("broadcast"); }

// PRelu-1/6: a 1-D slope of C values is per channel (axis 1); PRelu-7
// broadcasts numpy-style, so the slope becomes [C, 1, ..., 1].
void prelu_channel_slope(Graph& g, NodeDraft& d) {
  d.drop_attr("consumed_inputs");
  Value* x = d.input(0);
  Value* slope = d.input(1);
  if (!x || !slope || !x->type.has_shape || !slope->type.has_shape) return;
  const auto& xd = x->type.dims;
  const auto& sd = slope->type.dims;
  if (sd.size() != 1 || xd.size() < 3 || !sd[0].is_static() || sd[0].value <= 1) return;
  std::vector<int64_t> axes;
  for (size_t i = 1; i + 1 < xd.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  TensorType t;
  t.dtype = slope->type.dtype;
  Value* aligned = g.add_value(d.name + "/slope_aligned", t);
  emit_node(g, "Unsqueeze", {slope, const_i64(g, d.name + "/slope_axes", axes)}, {aligned}, d.name + "/align_slope");
  d.set_input(1, aligned);
}


// ---- opsets 18..23 (the newer forms into the canonical ones) -----------------------

int64_t rank_of(const NodeDraft& d, const Value* v, const std::string& why) {
  if (!v || !v->type.has_shape) unsupported(d, why + " needs the input's rank, which is unknown");
  return static_cast<int64_t>(v->type.dims.size());
}

int64_t norm_axis(const NodeDraft& d, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(ErrorCode::kInvalidModel, d.describe() + ": axis " + std::to_string(axis) + " is out of range for rank " +
                                       std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> const_ints(const NodeDraft& d, const Value* v, const std::string& what) {
  if (!v || !v->is_constant()) unsupported(d, what + " must be a constant");
  const Tensor& t = *v->constant;
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i) {
    if (t.dtype() == DType::kInt64) r[i] = t.as<int64_t>()[i];
    else if (t.dtype() == DType::kInt32) r[i] = t.as<int32_t>()[i];
    else fail(ErrorCode::kInvalidModel, d.describe() + ": " + what + " must be int64");
  }
  return r;
}

std::vector<float> const_floats(const NodeDraft& d, const Value* v, const std::string& what) {
  if (!v || !v->is_constant() || v->constant->dtype() != DType::kFloat32)
    unsupported(d, what + " must be a float32 constant");
  const Tensor& t = *v->constant;
  return std::vector<float>(t.as<float>(), t.as<float>() + t.numel());
}

Value* const_f32(Graph& g, const std::string& name, const Shape& shape, const std::vector<float>& v) {
  Tensor t(DType::kFloat32, shape);
  std::copy(v.begin(), v.end(), t.as<float>());
  return g.add_constant(name, std::move(t));
}

// Split-18: `num_outputs` instead of the `split` input. Equal parts of
// ceil(n / num_outputs), the last one smaller; with n unknown, the
// canonical Split's equal parts (its kernel refuses an uneven n).
void split_num_outputs(Graph& g, NodeDraft& d) {
  const Attribute* a = d.attr("num_outputs");
  if (!a) return;
  const int64_t k = a->i;
  if (k < 1 || k != static_cast<int64_t>(d.outputs.size()))
    fail(ErrorCode::kInvalidModel, d.describe() + ": num_outputs " + std::to_string(k) + " must be the number of outputs (" +
                                       std::to_string(d.outputs.size()) + ")");
  if (d.input(1)) fail(ErrorCode::kInvalidModel, d.describe() + ": num_outputs and the split input are exclusive");
  d.drop_attr("num_outputs");
  const Value* x = d.input(0);
  if (!x || !x->type.has_shape) return;
  const Attribute* ax = d.attr("axis");
  const int64_t axis = norm_axis(d, ax ? ax->i : 0, static_cast<int64_t>(x->type.dims.size()));
  const ir::Dim& dim = x->type.dims[static_cast<size_t>(axis)];
  if (!dim.is_static()) return;
  const int64_t n = dim.value, chunk = (n + k - 1) / k, last = n - chunk * (k - 1);
  if (last <= 0)
    fail(ErrorCode::kInvalidModel, d.describe() + ": a dim of " + std::to_string(n) + " cannot be split into " +
                                       std::to_string(k) + " parts of " + std::to_string(chunk));
  std::vector<int64_t> sizes(static_cast<size_t>(k), chunk);
  sizes.back() = last;
  d.set_input(1, const_i64(g, d.name + "/split", sizes));
}

// Resize-18/19: `axes` (scales / sizes / roi for some axes only) becomes
// full-rank inputs; keep_aspect_ratio_policy not_larger / not_smaller turns
// constant sizes on a static input into the sizes it means plus the one
// scale it implies (both inputs given); antialias stays for linear and
// cubic (the kernel widens its filter when downsampling) and goes otherwise
// (the operator text: it applies to those two modes only).
void resize_18(Graph& g, NodeDraft& d) {
  const Attribute* aa = d.attr("antialias");
  const Attribute* mode = d.attr("mode");
  const bool filtered = mode && (mode->s == "linear" || mode->s == "cubic");
  if (aa && (aa->i == 0 || !filtered)) d.drop_attr("antialias");
  else if (aa && aa->i != 1)
    fail(ErrorCode::kInvalidModel, d.describe() + ": antialias must be 0 or 1, got " + std::to_string(aa->i));
  const Attribute* pol = d.attr("keep_aspect_ratio_policy");
  const std::string policy = pol ? pol->s : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail(ErrorCode::kInvalidModel, d.describe() + ": keep_aspect_ratio_policy '" + policy + "' is not one of stretch, "
                                                  "not_larger, not_smaller");
  const Attribute* ax = d.attr("axes");
  if (!ax && policy == "stretch") {
    d.drop_attr("keep_aspect_ratio_policy");
    return;
  }
  Value* x = d.input(0);
  const int64_t r = rank_of(d, x, ax ? "axes" : "keep_aspect_ratio_policy");
  std::vector<int64_t> axes;
  if (ax) {
    for (int64_t a : ax->ints) axes.push_back(norm_axis(d, a, r));
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  auto given = [&](size_t i) { return d.input(i) && !is_empty_constant(d.input(i)); };
  if (given(2)) {  // scales
    // keep_aspect_ratio_policy "is not applicable when the scales input is used" (Resize-18): ignored.
    const std::vector<float> sc = const_floats(d, d.input(2), "scales with axes");
    if (sc.size() != axes.size()) fail(ErrorCode::kInvalidModel, d.describe() + ": scales and axes differ in length");
    std::vector<float> full(static_cast<size_t>(r), 1.f);
    for (size_t i = 0; i < axes.size(); ++i) full[static_cast<size_t>(axes[i])] = sc[i];
    d.set_input(2, const_f32(g, d.name + "/scales", {r}, full));
  } else if (given(3)) {  // sizes
    const std::vector<int64_t> sz = const_ints(d, d.input(3), "sizes with axes or keep_aspect_ratio_policy");
    if (sz.size() != axes.size()) fail(ErrorCode::kInvalidModel, d.describe() + ": sizes and axes differ in length");
    std::vector<int64_t> in(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) {
      const ir::Dim& dim = x->type.dims[static_cast<size_t>(i)];
      if (!dim.is_static()) unsupported(d, "axes / keep_aspect_ratio_policy on an input of unknown dims");
      in[static_cast<size_t>(i)] = dim.value;
    }
    std::vector<int64_t> full = in;
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) full[static_cast<size_t>(axes[i])] = sz[i];
    } else {
      double scale = policy == "not_larger" ? 1e300 : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double s = static_cast<double>(sz[i]) / static_cast<double>(in[static_cast<size_t>(axes[i])]);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      std::vector<float> scales(static_cast<size_t>(r), 1.f);
      for (int64_t a : axes) {  // round_int: halfway cases up
        const double size = std::floor(scale * static_cast<double>(in[static_cast<size_t>(a)]) + 0.5);
        if (!(size >= 1 && size < 9.0e15))  // (found by fuzzing: sizes of 1e19 overflowed the cast)
          fail(ErrorCode::kInvalidModel, d.describe() + ": sizes with keep_aspect_ratio_policy give an output dim of " +
                                             std::to_string(size));
        full[static_cast<size_t>(a)] = static_cast<int64_t>(size);
        scales[static_cast<size_t>(a)] = static_cast<float>(scale);
      }
      // The coordinates use the one scale (as ONNX's reference and ONNX
      // Runtime do), not sizes / input: the IR's Resize takes both inputs
      // then, sizes for the output and scales for the coordinates.
      d.set_input(2, const_f32(g, d.name + "/scales", {r}, scales));
    }
    d.set_input(3, const_i64(g, d.name + "/sizes", full));
  }
  if (ax && given(1)) {  // roi: [starts..., ends...] for the axes
    const std::vector<float> roi = const_floats(d, d.input(1), "roi with axes");
    if (roi.size() != 2 * axes.size()) fail(ErrorCode::kInvalidModel, d.describe() + ": roi must hold 2 x len(axes) values");
    std::vector<float> full(static_cast<size_t>(2 * r), 0.f);
    for (int64_t i = 0; i < r; ++i) full[static_cast<size_t>(r + i)] = 1.f;
    for (size_t i = 0; i < axes.size(); ++i) {
      full[static_cast<size_t>(axes[i])] = roi[i];
      full[static_cast<size_t>(r + axes[i])] = roi[axes.size() + i];
    }
    d.set_input(1, const_f32(g, d.name + "/roi", {2 * r}, full));
  }
  d.drop_attr("axes");
  d.drop_attr("keep_aspect_ratio_policy");
}

// Reduce*-18: `axes` is input 1; the attribute of the older versions is no
// longer part of the op. libonnx checks such a node against the older schema,
// which accepts it, so it is refused here (it would be ignored otherwise).
void reduce_18_no_axes_attr(Graph&, NodeDraft& d) {
  if (d.attr("axes"))
    fail(ErrorCode::kInvalidModel, d.describe() + ": attribute axes was removed at opset 18 (axes is input 1)");
}

// Cast-19 / CastLike-19: `saturate` only concerns float8 targets, which
// are not supported (the dtype check says so).
void drop_saturate(Graph&, NodeDraft& d) { d.drop_attr("saturate"); }

// QuantizeLinear / DequantizeLinear 19 and 21: `saturate` (float8 only),
// `block_size` (blocked quantization: not supported), QuantizeLinear-21's
// `output_dtype` (a zero point of that dtype when none is given).
void quantize_19(Graph& g, NodeDraft& d) {
  d.drop_attr("saturate");
  if (const Attribute* b = d.attr("block_size"); b && b->i != 0)
    unsupported(d, "block_size " + std::to_string(b->i) + " (blocked quantization) is not supported");
  d.drop_attr("block_size");
  const Attribute* od = d.attr("output_dtype");
  if (!od) return;
  const DType dt = static_cast<DType>(od->i);
  d.drop_attr("output_dtype");
  if (od->i == 0) return;
  if (Value* zp = d.input(2)) {
    if (zp->type.dtype != DType::kUndefined && zp->type.dtype != dt)
      fail(ErrorCode::kInvalidModel, d.describe() + ": output_dtype and the zero point's dtype differ");
    return;
  }
  if (dt != DType::kUInt8 && dt != DType::kInt8) unsupported(d, std::string("output_dtype ") + dtype_name(dt));
  Tensor z(dt, {});
  z.as<uint8_t>()[0] = 0;
  d.set_input(2, g.add_constant(d.name + "/zero_point", std::move(z)));
}

// DFT-20: `axis` is input 2 (default -2) instead of an attribute.
void dft_20(Graph&, NodeDraft& d) {
  if (d.attr("axis"))
    fail(ErrorCode::kInvalidModel, d.describe() + ": attribute axis was removed at opset 20 (axis is input 2)");
  int64_t axis = -2;
  if (d.input(2)) {
    const std::vector<int64_t> a = const_ints(d, d.input(2), "axis (DFT-20 input 2)");
    if (a.size() != 1) fail(ErrorCode::kInvalidModel, d.describe() + ": axis must be a scalar");
    axis = a[0];
  }
  d.inputs.resize(std::min<size_t>(d.inputs.size(), 2));
  d.set_attr(Attribute::Int("axis", axis));
}

// Gelu-20 is the IR's com.graphengine Gelu (same `approximate`).
void gelu_20(Graph&, NodeDraft& d) { d.domain = ops::kGecDomain; }

// GridSample-20 renamed the 4-D modes (bilinear -> linear, bicubic ->
// cubic) and allows N-D inputs; only 4-D is supported.
void gridsample_20(Graph&, NodeDraft& d) {
  if (const Attribute* m = d.attr("mode")) {
    if (m->s == "linear") d.set_attr(Attribute::String("mode", "bilinear"));
    else if (m->s == "cubic") d.set_attr(Attribute::String("mode", "bicubic"));
  } else {
    d.set_attr(Attribute::String("mode", "bilinear"));  // the default is "linear" at 20
  }
  if (d.input(0) && d.input(0)->type.has_shape && d.input(0)->type.dims.size() != 4)
    unsupported(d, "a " + std::to_string(d.input(0)->type.dims.size()) + "-D input (GridSample-20 N-D) is not supported");
}

// AveragePool-19 and LpPool-18 gained dilations and ceil_mode; the IR's
// pools take both.
// GroupNormalization-18/21: X [N, C, ...] normalized over each group of C /
// num_groups channels (with everything after them), then scale and bias per
// channel (21) or per group (18: repeated over the group's channels):
// Reshape to [N, G, -1] -> InstanceNormalization (unit scale, zero bias) ->
// Reshape back -> Mul, Add.
void group_normalization(Graph& g, NodeDraft& d) {
  if (d.outputs.empty() || !d.outputs[0]) fail(ErrorCode::kInvalidModel, d.describe() + ": output Y is required");
  Value* x = d.input(0);
  const Attribute* ng = d.attr("num_groups");
  if (!ng) fail(ErrorCode::kInvalidModel, d.describe() + ": attribute num_groups is required");
  const int64_t groups = ng->i;
  const Attribute* ep = d.attr("epsilon");
  const float eps = ep ? ep->f : 1e-5f;
  const int64_t r = rank_of(d, x, "GroupNormalization");
  if (r < 2 || !x->type.dims[1].is_static()) unsupported(d, "an input without a static channel dim");
  const int64_t c = x->type.dims[1].value;
  if (groups < 1 || c % groups != 0)
    fail(ErrorCode::kInvalidModel, d.describe() + ": " + std::to_string(c) + " channels do not split into " +
                                       std::to_string(groups) + " groups");
  const bool per_group = d.since_version < 21;
  std::vector<float> scale = const_floats(d, d.input(1), "scale"), bias = const_floats(d, d.input(2), "bias");
  const size_t want = static_cast<size_t>(per_group ? groups : c);
  if (scale.size() != want || bias.size() != want)
    fail(ErrorCode::kInvalidModel, d.describe() + ": scale and bias must have " + std::to_string(want) + " values");
  if (per_group) {
    std::vector<float> s2, b2;
    for (int64_t ch = 0; ch < c; ++ch) {
      s2.push_back(scale[static_cast<size_t>(ch / (c / groups))]);
      b2.push_back(bias[static_cast<size_t>(ch / (c / groups))]);
    }
    scale = s2;
    bias = b2;
  }
  if (x->type.dtype != DType::kUndefined && x->type.dtype != DType::kFloat32) unsupported(d, "a non-float32 input");
  Shape bshape(static_cast<size_t>(r - 1), 1);
  bshape[0] = c;
  const std::string p = d.name + "/";
  TensorType ft;
  ft.dtype = DType::kFloat32;
  Value* grouped = g.add_value(p + "grouped", ft);
  emit_node(g, "Reshape", {x, const_i64(g, p + "group_shape", {0, groups, -1})}, {grouped}, p + "to_groups");
  Value* normed = g.add_value(p + "normalized", ft);
  emit_node(g, "InstanceNormalization",
            {grouped, const_f32(g, p + "ones", {groups}, std::vector<float>(static_cast<size_t>(groups), 1.f)),
             const_f32(g, p + "zeros", {groups}, std::vector<float>(static_cast<size_t>(groups), 0.f))},
            {normed}, p + "normalize", {Attribute::Float("epsilon", eps)});
  Value* shape = g.add_value(p + "shape", TensorType::of(DType::kInt64, {r}));
  emit_node(g, "Shape", {x}, {shape}, p + "input_shape");
  Value* back = g.add_value(p + "ungrouped", ft);
  emit_node(g, "Reshape", {normed, shape}, {back}, p + "from_groups");
  Value* scaled = g.add_value(p + "scaled", ft);
  emit_node(g, "Mul", {back, const_f32(g, p + "scale", bshape, scale)}, {scaled}, p + "scale_mul");
  emit_node(g, "Add", {scaled, const_f32(g, p + "bias", bshape, bias)}, {d.outputs.at(0)}, d.name);
}

// RMSNormalization-23: Y = X / sqrt(mean(X^2 over axes axis..r-1) + epsilon) * scale.
void rms_normalization(Graph& g, NodeDraft& d) {
  if (d.outputs.empty() || !d.outputs[0]) fail(ErrorCode::kInvalidModel, d.describe() + ": output Y is required");
  Value* x = d.input(0);
  Value* scale = d.input(1);
  if (!scale) fail(ErrorCode::kInvalidModel, d.describe() + ": input scale is required");
  const int64_t r = rank_of(d, x, "RMSNormalization");
  const Attribute* ax = d.attr("axis");
  const int64_t axis = norm_axis(d, ax ? ax->i : -1, r);
  const Attribute* ep = d.attr("epsilon");
  const float eps = ep ? ep->f : 1e-5f;
  if (x->type.dtype != DType::kUndefined && x->type.dtype != DType::kFloat32) unsupported(d, "a non-float32 input");
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < r; ++i) axes.push_back(i);
  const std::string p = d.name + "/";
  TensorType ft;
  ft.dtype = DType::kFloat32;
  auto value = [&](const std::string& n) { return g.add_value(p + n, ft); };
  Value* sq = value("square");
  emit_node(g, "Mul", {x, x}, {sq}, p + "square_mul");
  Value* mean = value("mean_square");
  emit_node(g, "ReduceMean", {sq, const_i64(g, p + "axes", axes)}, {mean}, p + "mean", {Attribute::Int("keepdims", 1)});
  Value* shifted = value("plus_epsilon");
  emit_node(g, "Add", {mean, const_f32(g, p + "epsilon", {}, {eps})}, {shifted}, p + "add_epsilon");
  Value* rms = value("rms");
  emit_node(g, "Sqrt", {shifted}, {rms}, p + "sqrt");
  Value* normed = value("normalized");
  emit_node(g, "Div", {x, rms}, {normed}, p + "divide");
  emit_node(g, "Mul", {normed, scale}, {d.outputs.at(0)}, d.name);
}

// A rule applies to `op` when the op's since-version is in [from, below).
// Rules that only move attributes fall through to the next rule of the op,
// then to emit_plain().
struct Rule {
  const char* op;
  int below;
  void (*fn)(Graph&, NodeDraft&);
  bool emits;  // the rule appends the nodes itself
  int from = 0;
};

constexpr int kAll = 1000;

const Rule kRules[] = {
    // opsets 18..23 first: the kAll rules below emit
    {"Split", kAll, split_num_outputs, false, 18},
    {"ReduceMean", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceMax", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceMin", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceProd", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceL1", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceL2", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceLogSum", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceLogSumExp", kAll, reduce_18_no_axes_attr, false, 18},
    {"ReduceSumSquare", kAll, reduce_18_no_axes_attr, false, 18},
    {"Resize", kAll, resize_18, false, 18},  // before resize_empty_inputs
    {"Cast", kAll, drop_saturate, false, 19},
    {"CastLike", kAll, drop_saturate, false, 19},
    {"QuantizeLinear", kAll, quantize_19, false, 19},
    {"DequantizeLinear", kAll, quantize_19, false, 19},
    {"DFT", kAll, dft_20, false, 20},
    {"Gelu", kAll, gelu_20, false, 20},
    {"GridSample", kAll, gridsample_20, false, 20},
    {"GroupNormalization", kAll, group_normalization, true, 18},
    {"RMSNormalization", kAll, rms_normalization, true, 23},
    {"Add", 7, legacy_broadcast, false},
    {"Sub", 7, legacy_broadcast, false},
    {"Mul", 7, legacy_broadcast, false},
    {"Div", 7, legacy_broadcast, false},
    {"Pow", 7, legacy_broadcast, false},
    {"Gemm", 7, drop_gemm_broadcast, false},
    {"PRelu", 7, prelu_channel_slope, false},
    {"Squeeze", 13, axes_to_input, false},
    {"Unsqueeze", 13, axes_to_input, false},
    {"ReduceSum", 13, axes_to_input, false},
    {"ReduceMean", 18, axes_to_input, false},
    {"ReduceMax", 18, axes_to_input, false},
    {"ReduceMin", 18, axes_to_input, false},
    {"ReduceProd", 18, axes_to_input, false},
    {"ReduceL1", 18, axes_to_input, false},
    {"ReduceL2", 18, axes_to_input, false},
    {"ReduceLogSum", 18, axes_to_input, false},
    {"ReduceLogSumExp", 18, axes_to_input, false},
    {"ReduceSumSquare", 18, axes_to_input, false},
    {"Split", 13, split_to_input, false},
    {"Slice", 10, slice_attrs_to_inputs, false},
    {"TopK", 10, topk_k_to_input, false},
    {"Clip", 11, clip_attrs_to_inputs, false},
    {"Pad", 11, pad_attrs_to_inputs, false},
    {"Softmax", 13, flatten_softmax, true},
    {"LogSoftmax", 13, flatten_softmax, true},
    {"Hardmax", 13, flatten_softmax, true},
    {"BatchNormalization", kAll, batchnorm_inference, true},
    {"Dropout", kAll, dropout_to_identity, true},
    {"Upsample", kAll, upsample_to_resize, true},
    {"Resize", 11, upsample_to_resize, true},
    {"Resize", kAll, resize_empty_inputs, true},
    {"Cast", kAll, cast_string_to, true},
    {"Scatter", kAll, scatter_to_scatter_elements, true},
    {"Scan", 9, scan8_batch_major, false},
};

}  // namespace

std::vector<std::string> ops_rewritten_on_import() {
  // The rules above that turn an op into other ops (or another domain's).
  return {"GroupNormalization", "RMSNormalization", "Gelu", "Upsample", "Scatter"};
}

void emit_canonical(Graph& g, NodeDraft& d) {
  if (d.output_used.size() < d.outputs.size()) d.output_used.resize(d.outputs.size(), true);
  if (d.domain.empty() && d.since_version > 0) {
    for (const Rule& r : kRules) {
      if (d.op_type != r.op || d.since_version >= r.below || d.since_version < r.from) continue;
      r.fn(g, d);
      if (r.emits) return;
    }
  }
  emit_plain(g, d);
}

}  // namespace gec::frontend
