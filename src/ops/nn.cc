// Schemas (type and shape inference) of the dense neural-network ops:
// Conv-11, ConvTranspose-11, MatMul-13, Gemm-13, MaxPool-12, AveragePool-11,
// GlobalAveragePool-1, GlobalMaxPool-1, BatchNormalization-15 (inference
// form), Softmax-13, LogSoftmax-13, Hardmax-13, Resize-13, LSTM-14, GRU-14, RNN-14,
// LayerNormalization-17, InstanceNormalization-6, LRN-13, RotaryEmbedding-23.
// Window geometry lives in nn_shape.cc so the kernels compute the same.
#include <cmath>

#include "ops/nn_shape.h"
#include "ops/fused_matmul.h"
#include "ops/op_schema.h"

namespace gec::ops {
namespace {

void require_rank_at_least(const InferContext& ctx, size_t i, size_t r) {
  if (ctx.shape(i).size() < r)
    ctx.error("input " + std::to_string(i) + " has rank " + std::to_string(ctx.shape(i).size()) +
              ", expected at least " + std::to_string(r));
}

/// Input `i`, when present, must have shape `want` (error names `what`).
void require_shape(const InferContext& ctx, size_t i, const Shape& want, const std::string& what) {
  if (ctx.has_input(i) && ctx.shape(i) != want)
    ctx.error(what + " has shape " + shape_str(ctx.shape(i)) + ", expected " + shape_str(want));
}

/// Conv/ConvTranspose weights: spatial dims positive and equal to an explicit
/// kernel_shape attribute; returns them.
std::vector<int64_t> weight_kernel(const InferContext& ctx, const Shape& w) {
  std::vector<int64_t> wk(w.begin() + 2, w.end());
  for (int64_t k : wk)
    if (k < 1) ctx.error("W " + shape_str(w) + " has a non-positive kernel dim");
  if (ctx.node->has_attr("kernel_shape") && ctx.node->get_ints("kernel_shape") != wk)
    ctx.error("kernel_shape attribute does not match W " + shape_str(w));
  return wk;
}

/// ONNX Conv-11: X [N, C, D...], W [M, C/group, k...], B [M]; group divides C and M.
void infer_conv(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 3);
  const Shape& x = ctx.shape(0);
  const Shape& w = ctx.shape(1);
  if (w.size() != x.size()) ctx.error("X " + shape_str(x) + " and W " + shape_str(w) + " differ in rank");
  const int64_t group = ctx.node->get_int("group", 1);
  if (group < 1 || x[1] % group != 0 || x[1] != w[1] * group || w[0] % group != 0)
    ctx.error("channels of X " + shape_str(x) + " and W " + shape_str(w) + " do not match group " +
              std::to_string(group));
  require_shape(ctx, 2, Shape{w[0]}, "B");
  std::vector<int64_t> wk = weight_kernel(ctx, w);
  WindowAttrs a = resolve_window_attrs(read_window_attrs(*ctx.node), x.size() - 2, &wk, ctx.node->describe());
  WindowGeom g = window_geometry(ctx.node->describe(), a, Shape(x.begin() + 2, x.end()));
  Shape out{x[0], w[0]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

/// ONNX ConvTranspose-11: X [N, C, D...], W [C, M/group, k...], B [M]; group divides C.
void infer_conv_transpose(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 3);
  const Shape& x = ctx.shape(0);
  const Shape& w = ctx.shape(1);
  if (w.size() != x.size()) ctx.error("X " + shape_str(x) + " and W " + shape_str(w) + " differ in rank");
  const int64_t group = ctx.node->get_int("group", 1);
  if (group < 1 || x[1] != w[0] || w[0] % group != 0)
    ctx.error("channels of X " + shape_str(x) + " and W " + shape_str(w) + " do not match group " +
              std::to_string(group));
  require_shape(ctx, 2, Shape{w[1] * group}, "B");
  std::vector<int64_t> wk = weight_kernel(ctx, w);
  WindowAttrs a = resolve_window_attrs(read_window_attrs(*ctx.node), x.size() - 2, &wk, ctx.node->describe());
  WindowGeom g = conv_transpose_geometry(ctx.node->describe(), a, Shape(x.begin() + 2, x.end()));
  Shape out{x[0], w[1] * group};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.set_output(0, ctx.dtype(0), out);
}

// numpy.matmul: 1-D operands are promoted ([K] -> [1,K] / [K,1]) and the
// promoted dim removed from the result; batch dims broadcast.
void infer_matmul(InferContext& ctx) {
  Shape a = ctx.shape(0), b = ctx.shape(1);
  if (a.empty() || b.empty()) ctx.error("MatMul operands must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    ctx.error("inner dims of " + shape_str(ctx.shape(0)) + " and " + shape_str(ctx.shape(1)) + " differ");
  Shape out = broadcast_shapes(ctx, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  ctx.set_output(0, ctx.dtype(0), out);
}

// com.graphengine::FusedMatMul(A, B [, bias]) {activation}: act(MatMul(A, B)
// + bias), made by the pass matmul_epilogue_fusion. B is [K, N] (2-D), bias
// [N]; activation "" (none), Relu, Tanh, Sigmoid, Gelu (erf) or GeluTanh
// (ONNX Gelu-20's two forms). float32 only.
void infer_fused_matmul(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && ctx.dtype(i) != DType::kFloat32) ctx.error("inputs must be float32");
  if (ctx.shape(0).size() < 2 || ctx.shape(1).size() != 2) ctx.error("A must have rank >= 2 and B rank 2");
  if (ctx.has_input(2) && ctx.shape(2) != Shape{ctx.shape(1)[1]})
    ctx.error("bias must be [" + std::to_string(ctx.shape(1)[1]) + "], got " + shape_str(ctx.shape(2)));
  const std::string act = ctx.node->get_string("activation", "");
  if (!matmul_activation(act)) ctx.error("activation '" + act + "' is not one of Relu, Tanh, Sigmoid, Gelu, GeluTanh");
  infer_matmul(ctx);
}

// com.graphengine::SkipLayerNormalization(X, Skip, Scale [, B]) {axis,
// epsilon}: LayerNormalization-17 of X + Skip (same shape, float32), made by
// transformer_fusion's residual_layernorm rule. One output, Y.
void infer_skip_layernorm(InferContext& ctx) {
  if (ctx.num_inputs() < 3 || !ctx.has_input(1) || !ctx.has_input(2)) ctx.error("needs X, Skip and Scale");
  if (ctx.shape(1) != ctx.shape(0) || ctx.dtype(0) != DType::kFloat32 || ctx.dtype(1) != DType::kFloat32)
    ctx.error("X and Skip must be float32 of one shape");
  const Shape& x = ctx.shape(0);
  const int64_t axis = normalize_axis(ctx, ctx.node->get_int("axis", -1), static_cast<int64_t>(x.size()));
  const Shape norm(x.begin() + axis, x.end());
  for (size_t i : {2, 3}) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.shape(i);
    bool ok = s.size() <= norm.size();
    for (size_t k = 0; ok && k < s.size(); ++k) ok = s[k] == norm[norm.size() - s.size() + k] || s[k] == 1;
    if (!ok) ctx.error("Scale/B " + shape_str(s) + " does not broadcast to the normalized shape " + shape_str(norm));
  }
  ctx.set_output(0, DType::kFloat32, x);
}

void infer_gemm(InferContext& ctx) {
  const Shape& a = ctx.shape(0);
  const Shape& b = ctx.shape(1);
  if (a.size() != 2 || b.size() != 2) ctx.error("Gemm A and B must be 2-D");
  const bool ta = ctx.node->get_int("transA", 0) != 0, tb = ctx.node->get_int("transB", 0) != 0;
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb) ctx.error("inner dims of A " + shape_str(a) + " and B " + shape_str(b) + " differ");
  if (ctx.has_input(2)) {
    Shape bc = broadcast_shapes(ctx, Shape{m, n}, ctx.shape(2));
    if (bc != Shape{m, n}) ctx.error("C " + shape_str(ctx.shape(2)) + " does not broadcast to [M,N]");
  }
  ctx.set_output(0, ctx.dtype(0), Shape{m, n});
}

void infer_pool(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 3);
  const Shape& x = ctx.shape(0);
  WindowAttrs a = resolve_window_attrs(read_window_attrs(*ctx.node), x.size() - 2, nullptr, ctx.node->describe());
  WindowGeom g = window_geometry(ctx.node->describe(), a, Shape(x.begin() + 2, x.end()));
  Shape out{x[0], x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.set_output(0, ctx.dtype(0), out);
  if (ctx.node->outputs().size() > 1) ctx.set_output(1, DType::kInt64, out);
}

void infer_global_pool(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 3);
  Shape out = ctx.shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  ctx.set_output(0, ctx.dtype(0), out);
}

void infer_batchnorm(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 2);
  const int64_t c = ctx.shape(0)[1];
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i) {
    if (!ctx.has_input(i)) ctx.error(std::string(kNames[i]) + " is required");
    require_shape(ctx, i, Shape{c}, kNames[i]);
  }
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

void infer_softmax(InferContext& ctx) {
  const int64_t r = static_cast<int64_t>(ctx.shape(0).size());
  normalize_axis(ctx, ctx.node->get_int("axis", -1), r);
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

// Resize-13: sizes wins when given; otherwise out = floor(in * scale).
void infer_resize(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const bool has_scales = ctx.has_input(2) && shape_numel(ctx.shape(2)) > 0;
  const bool has_sizes = ctx.has_input(3) && shape_numel(ctx.shape(3)) > 0;
  Shape out(x.size());
  if (has_sizes) {
    std::vector<int64_t> s = ctx.ints_value(3);
    if (s.size() != x.size()) ctx.error("sizes has " + std::to_string(s.size()) + " entries for rank " + std::to_string(x.size()));
    out.assign(s.begin(), s.end());
  } else if (has_scales) {
    const TensorView& sv = ctx.value(2);
    if (sv.dtype != DType::kFloat32) ctx.error("scales must be float32");
    if (sv.numel() != static_cast<int64_t>(x.size()))
      ctx.error("scales has " + std::to_string(sv.numel()) + " entries for rank " + std::to_string(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float sc = sv.as<float>()[i];
      if (!(sc > 0)) ctx.error("scales must be positive");
      const double d = std::floor(static_cast<double>(x[i]) * sc);
      if (!(d < 9.0e15)) ctx.error("scales give an output dim of " + std::to_string(d) + ", too large");
      out[i] = static_cast<int64_t>(d);
    }
  } else {
    ctx.error("one of scales and sizes is required");
  }
  ctx.set_output(0, ctx.dtype(0), out);
}

/// LSTM-14 (4 gates, outputs Y, Y_h, Y_c), GRU-14 (3 gates) and RNN-14 (1
/// gate; both Y, Y_h). With D = num_directions, G = gates, H = hidden:
/// X [T, N, I] (layout 1: [N, T, I]), W [D, G*H, I], R [D, G*H, H],
/// B [D, 2*G*H], sequence_lens [N] (int32/int64), initial_h/initial_c [D, N, H]
/// (layout 1: [N, D, H]), P [D, 3*H] (LSTM). H comes from R and must equal the
/// hidden_size attribute when that is given; the kernels read H from R.
void infer_recurrent(InferContext& ctx, int64_t gates) {
  for (size_t i : {0, 1, 2})
    if (!ctx.has_input(i)) ctx.error(std::string(i == 0 ? "X" : i == 1 ? "W" : "R") + " is required");
  const Shape& x = ctx.shape(0);
  const Shape& w = ctx.shape(1);
  const Shape& r = ctx.shape(2);
  if (x.size() != 3 || w.size() != 3 || r.size() != 3)
    ctx.error("X " + shape_str(x) + ", W " + shape_str(w) + " and R " + shape_str(r) + " must be 3-D");
  const int64_t layout = ctx.node->get_int("layout", 0);
  if (layout != 0 && layout != 1) ctx.error("layout must be 0 or 1, got " + std::to_string(layout));
  const std::string dir = ctx.node->get_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") ctx.error("unknown direction '" + dir + "'");
  const int64_t nd = dir == "bidirectional" ? 2 : 1;
  const int64_t h = r[2];
  if (ctx.node->has_attr("hidden_size") && ctx.node->get_int("hidden_size") != h)
    ctx.error("hidden_size " + std::to_string(ctx.node->get_int("hidden_size")) + " does not match R " + shape_str(r));
  const int64_t seq = layout == 0 ? x[0] : x[1], batch = layout == 0 ? x[1] : x[0];
  const std::string dirs = " for " + std::to_string(nd) + " direction(s), hidden " + std::to_string(h);
  if (w != Shape{nd, gates * h, x[2]})
    ctx.error("W " + shape_str(w) + " does not match X " + shape_str(x) + dirs);
  if (r != Shape{nd, gates * h, h}) ctx.error("R " + shape_str(r) + " does not match" + dirs);
  require_shape(ctx, 3, Shape{nd, 2 * gates * h}, "B");
  if (ctx.has_input(4)) {
    require_shape(ctx, 4, Shape{batch}, "sequence_lens");
    if (ctx.dtype(4) != DType::kInt32 && ctx.dtype(4) != DType::kInt64) ctx.error("sequence_lens must be int32");
  }
  const Shape hs = layout == 0 ? Shape{nd, batch, h} : Shape{batch, nd, h};
  require_shape(ctx, 5, hs, "initial_h");
  if (gates == 4) {
    require_shape(ctx, 6, hs, "initial_c");
    require_shape(ctx, 7, Shape{nd, 3 * h}, "P");
  }
  const DType dt = ctx.dtype(0);
  for (size_t i : {1, 2, 3, 5, 6, 7})
    if (ctx.has_input(i) && (gates == 4 || i < 6) && ctx.dtype(i) != dt)
      ctx.error("input " + std::to_string(i) + " has dtype " + dtype_name(ctx.dtype(i)) + ", X has " + dtype_name(dt));
  const size_t nout = ctx.node->outputs().size();
  if (nout > 0) ctx.set_output(0, dt, layout == 0 ? Shape{seq, nd, batch, h} : Shape{batch, seq, nd, h});
  if (nout > 1) ctx.set_output(1, dt, hs);
  if (nout > 2 && gates == 4) ctx.set_output(2, dt, hs);
}

void infer_lstm(InferContext& ctx) { infer_recurrent(ctx, 4); }
void infer_gru(InferContext& ctx) { infer_recurrent(ctx, 3); }
void infer_rnn(InferContext& ctx) { infer_recurrent(ctx, 1); }

/// LayerNormalization-17: X of rank r, axis in [-r, r); Scale (required) and
/// B unidirectionally broadcastable to the normalized shape X[axis:].
void infer_layernorm(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t r = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(ctx, ctx.node->get_int("axis", -1), r);
  if (!ctx.has_input(1)) ctx.error("Scale is required");
  const Shape norm(x.begin() + axis, x.end());
  for (size_t i : {1, 2}) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.shape(i);
    bool ok = s.size() <= norm.size();
    for (size_t k = 0; ok && k < s.size(); ++k) {
      const int64_t d = norm[norm.size() - s.size() + k];
      ok = s[k] == d || s[k] == 1;
    }
    if (!ok)
      ctx.error(std::string(i == 1 ? "Scale " : "B ") + shape_str(s) + " does not broadcast to the normalized shape " +
                shape_str(norm));
  }
  ctx.set_output(0, ctx.dtype(0), x);
  Shape stat = x;
  for (int64_t i = axis; i < r; ++i) stat[i] = 1;
  const DType st = static_cast<DType>(ctx.node->get_int("stash_type", 1));
  for (size_t i = 1; i < ctx.node->outputs().size() && i < 3; ++i) ctx.set_output(i, st, stat);
}

/// InstanceNormalization-6: input [N, C, D...], scale [C], B [C].
void infer_instancenorm(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 3);
  const int64_t c = ctx.shape(0)[1];
  for (size_t i : {1, 2}) {
    if (!ctx.has_input(i)) ctx.error(std::string(i == 1 ? "scale" : "B") + " is required");
    require_shape(ctx, i, Shape{c}, i == 1 ? "scale" : "B");
  }
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

/// LRN-13: X [N, C, D...]; size (required) >= 1; alpha, beta, bias finite.
void infer_lrn(InferContext& ctx) {
  require_rank_at_least(ctx, 0, 2);
  if (!ctx.node->has_attr("size")) ctx.error("attribute size is required");
  const int64_t size = ctx.node->get_int("size");
  if (size < 1) ctx.error("size must be >= 1, got " + std::to_string(size));
  for (const char* a : {"alpha", "beta", "bias"})
    if (!std::isfinite(ctx.node->get_float(a, 1.f))) ctx.error(std::string(a) + " must be finite");
  ctx.set_output(0, ctx.dtype(0), ctx.shape(0));
}

/// RotaryEmbedding-23: X [B, S, hidden] (num_heads required) or [B, H, S, D];
/// cos_cache and sin_cache [max_position, rot/2] with position_ids [B, S],
/// or [B, S, rot/2] without; rot = rotary_embedding_dim (0: the head size),
/// even and at most the head size. The output has X's type.
void infer_rotary_embedding(InferContext& ctx) {
  const Shape& x = ctx.shape(0);
  const int64_t heads_attr = ctx.node->get_int("num_heads", 0);
  if (x.size() != 3 && x.size() != 4) ctx.error("X must be [B,S,hidden] or [B,H,S,D], got " + shape_str(x));
  int64_t b = x[0], seq = 0, head = 0;
  if (x.size() == 3) {
    if (heads_attr <= 0) ctx.error("num_heads is required (> 0) for a 3-D X");
    if (x[2] % heads_attr != 0)
      ctx.error("hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads " + std::to_string(heads_attr));
    seq = x[1];
    head = x[2] / heads_attr;
  } else {
    if (heads_attr > 0 && heads_attr != x[1])
      ctx.error("num_heads " + std::to_string(heads_attr) + " differs from X's dim 1 (" + std::to_string(x[1]) + ")");
    seq = x[2];
    head = x[3];
  }
  int64_t rot = ctx.node->get_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  if (rot < 0 || rot > head || rot % 2 != 0)
    ctx.error("rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " +
              std::to_string(head));
  const Shape& cs = ctx.shape(1);
  if (ctx.shape(2) != cs) ctx.error("cos_cache " + shape_str(cs) + " and sin_cache " + shape_str(ctx.shape(2)) +
                                    " differ");
  if (ctx.dtype(1) != ctx.dtype(0) || ctx.dtype(2) != ctx.dtype(0)) ctx.error("the caches must have X's dtype");
  if (ctx.has_input(3)) {
    if (ctx.shape(3) != Shape{b, seq}) ctx.error("position_ids must be [B,S] = " + shape_str({b, seq}) + ", got " +
                                                 shape_str(ctx.shape(3)));
    if (cs.size() != 2 || cs[1] != rot / 2)
      ctx.error("with position_ids the caches must be [max_position, " + std::to_string(rot / 2) + "], got " +
                shape_str(cs));
  } else if (cs != Shape{b, seq, rot / 2}) {
    ctx.error("without position_ids the caches must be " + shape_str({b, seq, rot / 2}) + ", got " + shape_str(cs));
  }
  ctx.set_output(0, ctx.dtype(0), x);
}

}  // namespace

std::optional<MatMulActivation> matmul_activation(const std::string& name) {
  using A = MatMulActivation;
  for (A a : {A::kNone, A::kRelu, A::kTanh, A::kSigmoid, A::kGelu, A::kGeluTanh, A::kSwish})
    if (name == matmul_activation_name(a)) return a;
  return std::nullopt;
}

const char* matmul_activation_name(MatMulActivation a) {
  switch (a) {
    case MatMulActivation::kNone: return "";
    case MatMulActivation::kRelu: return "Relu";
    case MatMulActivation::kTanh: return "Tanh";
    case MatMulActivation::kSigmoid: return "Sigmoid";
    case MatMulActivation::kGelu: return "Gelu";
    case MatMulActivation::kGeluTanh: return "GeluTanh";
    case MatMulActivation::kSwish: return "Swish";
  }
  return "";
}

std::optional<MatMulActivation> matmul_activation_of(const ir::Node& n) {
  if (n.outputs().size() != 1) return std::nullopt;
  if (n.domain.empty()) {
    if (n.op_type == "Relu") return MatMulActivation::kRelu;
    if (n.op_type == "Tanh") return MatMulActivation::kTanh;
    if (n.op_type == "Sigmoid") return MatMulActivation::kSigmoid;
    return std::nullopt;
  }
  if (n.domain == kGecDomain && n.op_type == "Gelu") {
    const std::string a = n.get_string("approximate", "none");
    if (a == "none") return MatMulActivation::kGelu;
    if (a == "tanh") return MatMulActivation::kGeluTanh;
  }
  if (n.domain == kGecDomain && n.op_type == "Swish" && n.get_float("alpha", 1.f) == 1.f) return MatMulActivation::kSwish;
  return std::nullopt;
}

GEC_REGISTER_OP({.domain = "", .op_type = "Conv", .infer = infer_conv, .traits = traits(PatternKind::kOutEwiseFusable).with_layout(LayoutRule::kConv).with_precision(PrecisionPolicy::kMayLower)});
GEC_REGISTER_OP({.domain = "", .op_type = "ConvTranspose", .infer = infer_conv_transpose, .traits = traits(PatternKind::kOutEwiseFusable).with_layout(LayoutRule::kConvTranspose).with_precision(PrecisionPolicy::kMayLower)});
GEC_REGISTER_OP({.domain = "", .op_type = "MatMul", .infer = infer_matmul, .traits = traits(PatternKind::kOutEwiseFusable).with_precision(PrecisionPolicy::kMayLower)});
GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "SkipLayerNormalization", .infer = infer_skip_layernorm, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = kGecDomain, .op_type = "FusedMatMul", .infer = infer_fused_matmul, .traits = traits(PatternKind::kOutEwiseFusable).with_precision(PrecisionPolicy::kMayLower)});
GEC_REGISTER_OP({.domain = "", .op_type = "Gemm", .infer = infer_gemm, .traits = traits(PatternKind::kOutEwiseFusable).with_precision(PrecisionPolicy::kMayLower)});
GEC_REGISTER_OP({.domain = "", .op_type = "MaxPool", .infer = infer_pool, .traits = traits(PatternKind::kOpaque).with_layout(LayoutRule::kPool)});
GEC_REGISTER_OP({.domain = "", .op_type = "AveragePool", .infer = infer_pool, .traits = traits(PatternKind::kOpaque).with_layout(LayoutRule::kPool)});
GEC_REGISTER_OP({.domain = "", .op_type = "GlobalAveragePool", .infer = infer_global_pool, .traits = traits(PatternKind::kReduction).with_layout(LayoutRule::kGlobalPool)});
GEC_REGISTER_OP({.domain = "", .op_type = "GlobalMaxPool", .infer = infer_global_pool, .traits = traits(PatternKind::kReduction).with_layout(LayoutRule::kGlobalPool)});
GEC_REGISTER_OP({.domain = "", .op_type = "BatchNormalization", .infer = infer_batchnorm, .traits = traits(PatternKind::kBroadcast).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "Softmax", .infer = infer_softmax, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "LogSoftmax", .infer = infer_softmax, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "Hardmax", .infer = infer_softmax, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "Resize", .infer = infer_resize, .traits = traits(PatternKind::kOpaque).with_layout(LayoutRule::kResize)});
GEC_REGISTER_OP({.domain = "", .op_type = "LSTM", .infer = infer_lstm, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "GRU", .infer = infer_gru, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RNN", .infer = infer_rnn, .traits = traits(PatternKind::kOpaque)});
GEC_REGISTER_OP({.domain = "", .op_type = "RotaryEmbedding", .infer = infer_rotary_embedding, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "LayerNormalization", .infer = infer_layernorm, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "InstanceNormalization", .infer = infer_instancenorm, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});
GEC_REGISTER_OP({.domain = "", .op_type = "LRN", .infer = infer_lrn, .traits = traits(PatternKind::kOpaque).with_precision(PrecisionPolicy::kAlwaysFp32)});

}  // namespace gec::ops
