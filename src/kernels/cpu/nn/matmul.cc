// MatMul (ONNX MatMul-13, numpy.matmul semantics) and Gemm (ONNX Gemm-13) on
// CPU through the oneDNN matmul primitive, or through our own GEMM
// (gemm_simd.h) in the "gemm" variant.
//
// The "gemm" variant: where oneDNN 2.6's float32 MatMul is its sgemm (CPUs
// without AVX-512), the compiler gives MatMul, FusedMatMul and Gemm the
// "gemm" variant (matmul_variant_choice, stored in the plan; --disable-pass
// native_gemm keeps oneDNN's). oneDNN's sgemm generates its kernels in the
// first call of a process: 23-33 ms and 4 MB, most of the first run of
// bert_like_encoder or oww_melspectrogram. gemm_simd is compiled ahead of
// time and ran these models' products as fast in-model (gec profile, AVX2
// EPYC, 2 threads: bert_like_encoder's [128,256] x [256,1024] + Gelu
// 0.83-0.85 ms against oneDNN's 0.82-0.83). A constant B is packed once
// into gemm_simd's panels (PackedB; the compiler stores the copy in the
// .gom, layout "gec.gemm/..."), so no product copies it; any other B is
// copied a block at a time in each product, as oneDNN's sgemm does. The
// variant computes the same values as oneDNN's up to rounding (both sum K
// in blocks), for every alpha, beta, transA, transB and C of Gemm.
//
// MatMul: 1-D operands are promoted ([K] -> [1,K] for A, [K,1] for B) and the
// batch dims of both are left-padded with 1s to one rank; oneDNN broadcasts
// size-1 batch dims itself. The output buffer is the promoted result with the
// unit dims dropped, so the same bytes serve both. Integer and float64 MatMul
// use a plain loop (rare in models; correctness over speed).
//
// When every batch dim of B is 1 (B 2-D, the usual weight), A's batch dims
// fold into M: [b1, .., M, K] x [K, N] is one [b1*..*M, K] x [K, N] GEMM
// (A and Y are row-major, so the bytes are the same). oneDNN would otherwise
// run it as b1*.. small products: a [128, 1, 256] x [256, 768] MatMul (M = 1)
// ran at ~84 GFLOP/s as 128 1x256 products.
//
// com.graphengine::FusedMatMul (ops/fused_matmul.h) is the same MatMul with
// an optional bias [N] and activation run by oneDNN in the primitive (bias
// argument, eltwise post-op), so neither needs its own pass over Y. Where
// oneDNN's MatMul is gemm-based (CPUs without AVX-512), it applies eltwise
// post-ops element by element after the product (a Gelu on [128, 1024]
// took 0.45 ms there, the product 0.65): the activation then runs as our
// own vectorized kernel in place on Y right after it (0.02-0.05 ms).
//
// Gemm: Y = alpha * op(A) op(B) + beta * C. Transposes are strided views of
// the inputs; C of one row with alpha = beta = 1 is the primitive's bias,
// any other C is first broadcast into Y, then the primitive adds alpha * AB
// on top with a sum post-op scaled by beta.
//
// A B that is a constant of the model (the weight of a Linear layer) is
// given to oneDNN as format_tag::any and packed once into the layout the
// primitive asks for (PackedWeights, shared by the run contexts of a model;
// the plain pages of a memory-mapped .gom are then returned). On AVX-512
// oneDNN 2.6's brgemm matmul asks for BA16a64b and reads its panels without
// the copy it otherwise makes of B in each run (standalone, 2 threads,
// [128,256] x [256,1024]: 327 -> 300 us). A B computed or fed in the
// graph (attention's Q x K^T) stays plain: it changes every run. Where the
// primitive asks for B plain (row-major: oneDNN's gemm-based MatMul, CPUs
// without AVX-512, in a plan without the "gemm" variant: -O0, -O1, a .gom
// compiled on an AVX-512 CPU) and B's rows are a multiple of 1 KiB apart, the packed
// copy gets 16 floats of padding after each row (padded_weights_md): rows
// 4 KiB apart fall on the same L1 cache sets, and the product ran half as
// fast ([128, 256] x [256, 1024]: 0.73-0.79 ms against 0.37 padded;
// BERT-base's [128, 768] x [768, 3072]: 7.9-8.7 against 4.0-4.3; measured
// standalone on an AVX2 EPYC, 2 threads).
#include <cmath>
#include <unordered_map>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/cpu/common/gemm_simd.h"
#include "kernels/cpu/common/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/domain.h"
#include "ops/fused_matmul.h"

namespace gec::kernels::cpu {
namespace {

using dnnl::memory;

/// Shapes of a numpy matmul after promotion: a = [..., M, K], b = [..., K, N],
/// batch dims left-padded to the same rank, out = broadcast batch + [M, N].
struct MatmulDims {
  Shape a, b, out;
  int64_t m = 0, k = 0, n = 0;
};

MatmulDims promote(const Shape& as, const Shape& bs) {
  MatmulDims d;
  d.a = as;
  d.b = bs;
  if (d.a.size() == 1) d.a.insert(d.a.begin(), 1);
  if (d.b.size() == 1) d.b.push_back(1);
  const size_t r = std::max(d.a.size(), d.b.size());
  d.a.insert(d.a.begin(), r - d.a.size(), 1);
  d.b.insert(d.b.begin(), r - d.b.size(), 1);
  d.out.resize(r);
  for (size_t i = 0; i + 2 < r; ++i) d.out[i] = d.a[i] == 1 ? d.b[i] : d.a[i];
  d.m = d.a[r - 2];
  d.k = d.a[r - 1];
  d.n = d.b[r - 1];
  d.out[r - 2] = d.m;
  d.out[r - 1] = d.n;
  return d;
}

/// `d` with A's batch dims folded into M when B has no batch (every batch
/// dim 1): a = [1, .., 1, B*M, K], out = [1, .., 1, B*M, N]. Unchanged when
/// B has a real batch dim or A has none to fold.
MatmulDims fold_batch_into_m(MatmulDims d) {
  const size_t r = d.out.size();
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (d.b[i] != 1) return d;
    batch *= d.a[i];
  }
  if (batch == 1) return d;
  for (size_t i = 0; i + 2 < r; ++i) d.a[i] = d.out[i] = 1;
  d.m *= batch;
  d.a[r - 2] = d.out[r - 2] = d.m;
  return d;
}

/// `d` as 2-D [M,K] x [K,N] when every batch dim is 1 (oneDNN 2.6 answers
/// format_tag::any for a 3-D B of batch 1 with the plain layout, for a 2-D B
/// with its packed one).
MatmulDims drop_unit_batch(MatmulDims d) {
  for (size_t i = 0; i + 2 < d.out.size(); ++i)
    if (d.out[i] != 1 || d.a[i] != 1 || d.b[i] != 1) return d;
  d.a = {d.m, d.k};
  d.b = {d.k, d.n};
  d.out = {d.m, d.n};
  return d;
}

/// Reference loop for non-float32 dtypes: out[b,i,j] = sum_k a[b',i,k] * b[b'',k,j].
template <typename T>
void matmul_loop(const MatmulDims& d, const T* a, const T* b, T* y) {
  const size_t r = d.out.size();
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < r; ++i) batches *= d.out[i];
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, aoff = 0, boff = 0, astride = d.m * d.k, bstride = d.k * d.n;
    for (int i = static_cast<int>(r) - 3; i >= 0; --i) {
      const int64_t idx = rem % d.out[i];
      rem /= d.out[i];
      if (d.a[i] != 1) aoff += idx * astride;
      if (d.b[i] != 1) boff += idx * bstride;
      astride *= d.a[i];
      bstride *= d.b[i];
    }
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        T acc{};
        for (int64_t k = 0; k < d.k; ++k) acc += a[aoff + i * d.k + k] * b[boff + k * d.n + j];
        y[bi * d.m * d.n + i * d.n + j] = acc;
      }
  }
}

using ops::MatMulActivation;

/// True where oneDNN 2.6 runs a float32 MatMul on its sgemm (a CPU without
/// AVX-512: its brgemm MatMul needs avx512_core).
bool onednn_matmul_is_gemm_based() {
  static const bool gemm_based = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return !(isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
             isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx);
  }();
  return gemm_based;
}

/// B [K, N] held with its rows kRowPadFloats floats longer: the layout a
/// constant B takes when `chosen` (what the primitive asked for) is plain
/// row-major and rows of N floats are a multiple of kAliasingRowBytes
/// apart; else `chosen`.
constexpr int64_t kAliasingRowBytes = 1024, kRowPadFloats = 16;
memory::desc padded_weights_md(const memory::desc& chosen, int64_t k, int64_t n) {
  if (chosen != plain_md({k, n}) || (n * int64_t{sizeof(float)}) % kAliasingRowBytes != 0) return chosen;
  return strided_md({k, n}, {n + kRowPadFloats, 1});
}

/// A FusedMatMul activation as a oneDNN eltwise algorithm; false for none.
bool activation_alg(MatMulActivation act, dnnl::algorithm* alg) {
  switch (act) {
    case MatMulActivation::kNone: return false;
    case MatMulActivation::kRelu: *alg = dnnl::algorithm::eltwise_relu; return true;
    case MatMulActivation::kTanh: *alg = dnnl::algorithm::eltwise_tanh; return true;
    case MatMulActivation::kSigmoid: *alg = dnnl::algorithm::eltwise_logistic; return true;
    case MatMulActivation::kGelu: *alg = dnnl::algorithm::eltwise_gelu_erf; return true;
    case MatMulActivation::kGeluTanh: *alg = dnnl::algorithm::eltwise_gelu_tanh; return true;
    case MatMulActivation::kSwish: *alg = dnnl::algorithm::eltwise_swish; return true;  // alpha 1 (below)
  }
  return false;
}

/// The activation's formula (ONNX operator texts; Gelu-20 for both forms).
float activation_value(MatMulActivation act, float x) {
  switch (act) {
    case MatMulActivation::kNone: return x;
    case MatMulActivation::kRelu: return x < 0.f ? 0.f : x;
    case MatMulActivation::kTanh: return std::tanh(x);
    case MatMulActivation::kSigmoid: return 1.f / (1.f + std::exp(-x));
    case MatMulActivation::kGelu: return 0.5f * x * (1.f + std::erf(x * 0.70710678f));
    case MatMulActivation::kGeluTanh: return 0.5f * x * (1.f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case MatMulActivation::kSwish: return x / (1.f + std::exp(-x));
  }
  return x;
}

/// The "gemm" variant, chosen at compile time (matmul_variant_choice):
/// gemm_simd runs the products; "" is oneDNN's MatMul. Errors:
/// gec::Error(kInvalidModel) naming the node for any other variant.
bool native_variant(const ir::Node& n, const std::string& variant) {
  if (variant.empty() || variant == "gemm") return !variant.empty();
  fail(ErrorCode::kInvalidModel, n.describe() + ": kernel variant '" + variant + "' is not one of MatMul's ('gemm')");
}

/// VariantChoice of MatMul, FusedMatMul and Gemm: "gemm" for float32
/// products where oneDNN's MatMul would be its sgemm (file comment).
std::string matmul_variant_choice(const ir::Node&, const kernels::KernelConfig& config) {
  for (size_t i = 0; i < std::min<size_t>(2, config.input_dtypes.size()); ++i)
    if (config.input_dtypes[i] != DType::kFloat32) return "";
  return onednn_matmul_is_gemm_based() ? "gemm" : "";
}

/// B of the "gemm" variant packed for gemm_simd (gemm_simd::pack_b) when
/// it is a constant of the model: packed once for every run context of the
/// model (ctx.shared_weights), or read in place from the offline model where
/// the compiler stored it in that layout; B's plain pages are then released.
/// Outside a session the copy is this object's own, packed again when B
/// moves.
class PackedB {
 public:
  /// The packed copy of input `input` of ctx's node for `p` (k, n, B).
  const float* get(const KernelContext& ctx, size_t input, const gemm_simd::Product& p) {
    const TensorView& b = ctx.in(input);
    if (data_ && from_ == b.data) return data_;
    const std::string layout = gemm_simd::packed_b_layout(p);
    const size_t floats = gemm_simd::packed_b_floats(p.k, p.n), bytes = floats * sizeof(float);
    SharedWeights* shared = shared_weights_for(ctx, input);
    if (!shared) {
      own_.resize(floats);
      gemm_simd::pack_b(p, own_.data());
      from_ = b.data;
      return data_ = own_.data();
    }
    struct Entry {
      std::string layout;
      std::vector<float> own;       // packed here, or
      const float* data = nullptr;  // the offline model's stored copy
    };
    static const char kKind = 0;  // Entry objects
    shared_ = shared->find_or_make(
        b.data, &kKind, [&](const void* e) { return static_cast<const Entry*>(e)->layout == layout; },
        [&](const SharedWeights::Packed& stored) -> std::shared_ptr<const void> {
          if (stored.layout != layout || stored.bytes != bytes ||
              reinterpret_cast<uintptr_t>(stored.data) % alignof(float) != 0)
            return nullptr;
          auto e = std::make_shared<Entry>();
          e->layout = layout;
          e->data = static_cast<const float*>(stored.data);
          return e;
        },
        [&]() {
          auto e = std::make_shared<Entry>();
          e->layout = layout;
          e->own.resize(floats);
          gemm_simd::pack_b(p, e->own.data());
          e->data = e->own.data();
          shared->release_plain(b.data, b.bytes());
          return SharedWeights::Entry{e, {layout, e->data, bytes}};
        });
    from_ = b.data;
    return data_ = static_cast<const Entry*>(shared_.get())->data;
  }

 private:
  std::shared_ptr<const void> shared_;  // keeps a shared copy alive
  std::vector<float> own_;
  const void* from_ = nullptr;
  const float* data_ = nullptr;
};

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const ir::Node& n, const std::string& variant) : desc_(n.describe()) {
    if (n.op_type == "FusedMatMul") {
      fused_ = true;
      const std::string name = n.get_string("activation", "");
      const auto act = ops::matmul_activation(name);
      if (!act) fail(ErrorCode::kInvalidModel, desc_ + ": activation '" + name + "' is not one of Relu, Tanh, Sigmoid, Gelu, GeluTanh");
      act_ = *act;
      has_act_ = activation_alg(act_, &alg_);
      has_bias_ = n.has_input(2);
    }
    constant_b_ = constant_input(n, 1);
    native_ = native_variant(n, variant);
  }

  void reshape(const KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView& b = ctx.in(1);
    if (a.dtype != b.dtype) fail(ErrorCode::kInvalidArgument, desc_ + ": A and B dtypes differ");
    if (a.dtype == DType::kFloat32 && ctx.out(0).numel() > 0) build(a.shape, b.shape);
  }

  void run(KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView& b = ctx.in(1);
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    if (a.dtype != DType::kFloat32) {
      if (fused_) fail(ErrorCode::kUnsupported, desc_ + ": FusedMatMul takes float32 only");
      MatmulDims d = promote(a.shape, b.shape);
      dispatch_arith(a.dtype, desc_, [&](auto t) {
        using T = decltype(t);
        matmul_loop<T>(d, a.as<T>(), b.as<T>(), y.as<T>());
      });
      return;
    }
    if (dims_.k == 0) {  // Y = act(0 + bias)
      float* o = y.as<float>();
      const float* bias = has_bias_ ? ctx.in(2).as<float>() : nullptr;
      for (int64_t i = 0; i < y.numel(); ++i) o[i] = activation_value(act_, bias ? bias[i % dims_.n] : 0.f);
      return;
    }
    if (native_) {
      run_native(a.as<float>(), b.as<float>(), packed_b(ctx), has_bias_ ? ctx.in(2).as<float>() : nullptr,
                 y.as<float>(), ctx.num_threads);
    } else {
      bind(src_, a.data);
      args_[DNNL_ARG_WEIGHTS] = weights_.get(b.data, ctx, 1);
      bind(dst_, y.data);
      if (has_bias_) bind(bias_, ctx.in(2).data);
      scratch_.bind(args_, ctx.scratch);
      mm_.execute(cpu_stream(), args_);
      cpu_stream().wait();
    }
    if (act_kernel_) {
      act_ctx_.inputs = {&y};  // in place: the unary kernels read element i before writing it
      act_ctx_.outputs = {&y};
      act_ctx_.num_threads = ctx.num_threads;
      act_kernel_->run(act_ctx_);
    }
  }

  void pack_constants(const KernelContext& ctx) override {
    if (ctx.in(0).dtype != DType::kFloat32 || ctx.out(0).numel() == 0 || dims_.k == 0) return;
    if (native_) {
      if (ctx.in(1).data) packed_b(ctx);
      return;
    }
    weights_.pack_constant(ctx, 1);
  }

  std::string impl_name() const override {
    if (native_) return fused_ ? "native.gemm+fused" : "native.gemm";
    return fused_ ? "onednn.matmul+fused" : "onednn.matmul";
  }
  /// oneDNN's primitive is made in reshape; the gemm variant packs a
  /// constant B there (pack_constants) and has nothing to make otherwise.
  bool costly_reshape() const override { return !native_ || constant_b_; }

 private:
  void build(const Shape& as, const Shape& bs) {
    dims_ = drop_unit_batch(fold_batch_into_m(promote(as, bs)));
    if (dims_.k == 0) return;
    if (native_) {
      plan_batches();
      if (has_act_ && !act_kernel_) make_activation_kernel();
      return;
    }
    const memory::desc src = plain_md(dims_.a), user_wei = plain_md(dims_.b), dst = plain_md(dims_.out);
    const memory::desc wei = constant_b_ ? any_md(dims_.b) : user_wei;
    Shape bias_shape(dims_.out.size(), 1);
    bias_shape.back() = dims_.n;
    const memory::desc bias = plain_md(bias_shape);
    dnnl::primitive_attr attr = Scratchpad::attr();
    if (has_act_) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, alg_, act_ == MatMulActivation::kSwish ? 1.f : 0.f, 0.f);  // swish's alpha
      attr.set_post_ops(po);
    }
    try {
      dnnl::matmul::desc md = has_bias_ ? dnnl::matmul::desc(src, wei, bias, dst) : dnnl::matmul::desc(src, wei, dst);
      dnnl::matmul::primitive_desc pd(md, attr, cpu_engine());
      if (constant_b_ && dims_.b.size() == 2) {
        const memory::desc padded = padded_weights_md(pd.weights_desc(), dims_.k, dims_.n);
        if (padded != pd.weights_desc()) {
          md = has_bias_ ? dnnl::matmul::desc(src, padded, bias, dst) : dnnl::matmul::desc(src, padded, dst);
          pd = dnnl::matmul::primitive_desc(md, attr, cpu_engine());
        }
      }
      if (has_act_ && std::string(pd.impl_info_str()).find("gemm") != std::string::npos) {
        pd = dnnl::matmul::primitive_desc(md, Scratchpad::attr(), cpu_engine());
        if (!act_kernel_) make_activation_kernel();
      } else {
        act_kernel_.reset();
      }
      mm_ = dnnl::matmul(pd);
      scratch_.set(pd.scratchpad_desc());
      weights_.reset(user_wei, pd.weights_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a matmul for " + shape_str(as) + " x " + shape_str(bs), e);
    }
    src_ = unbound_memory(src);
    dst_ = unbound_memory(dst);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};  // shares the handles bind() sets
    if (has_bias_) {
      bias_ = unbound_memory(bias);
      args_[DNNL_ARG_BIAS] = bias_;
    }
  }

  /// Element offsets of A, B and Y for each product of the broadcast batch
  /// (numpy.matmul: a batch dim of size 1 repeats), in Y's batch order.
  void plan_batches() {
    const size_t r = dims_.out.size();
    int64_t batches = 1;
    for (size_t i = 0; i + 2 < r; ++i) batches *= dims_.out[i];
    a_off_.assign(static_cast<size_t>(batches), 0);
    b_off_.assign(static_cast<size_t>(batches), 0);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t rem = bi, astride = dims_.m * dims_.k, bstride = dims_.k * dims_.n;
      for (int i = static_cast<int>(r) - 3; i >= 0; --i) {
        const int64_t idx = rem % dims_.out[i];
        rem /= dims_.out[i];
        if (dims_.a[i] != 1) a_off_[bi] += idx * astride;
        if (dims_.b[i] != 1) b_off_[bi] += idx * bstride;
        astride *= dims_.a[i];
        bstride *= dims_.b[i];
      }
    }
  }

  /// B packed for gemm_simd when it is a constant of the model without
  /// batch dims (a Linear layer's weight); else null (B read in place).
  const float* packed_b(const KernelContext& ctx) {
    if (!constant_b_ || dims_.b.size() != 2) return nullptr;
    gemm_simd::Product p;
    p.k = dims_.k;
    p.n = dims_.n;
    p.b = ctx.in(1).as<float>();
    p.ldb = dims_.n;
    return packed_b_.get(ctx, 1, p);
  }

  /// Y = A B (+ bias) with gemm_simd (B from `b`, or `b_packed` when not
  /// null): one product per batch, the batch split between threads when it
  /// has at least as many products, else each product split.
  void run_native(const float* a, const float* b, const float* b_packed, const float* bias, float* y,
                  int threads) const {
    const int64_t batches = static_cast<int64_t>(a_off_.size());
    const auto product = [&](int64_t bi, int nt) {
      gemm_simd::Product p;
      p.m = dims_.m;
      p.n = dims_.n;
      p.k = dims_.k;
      p.a = a + a_off_[bi];
      p.lda = dims_.k;
      p.b = b + b_off_[bi];
      p.ldb = dims_.n;
      p.b_packed = b_packed;
      p.bias = bias;
      p.c = y + bi * dims_.m * dims_.n;
      p.ldc = dims_.n;
      gemm_simd::gemm(p, nt);
    };
    if (batches >= threads && batches > 1) {
      const int nt = batches * dims_.m * dims_.n * dims_.k >= (int64_t{1} << 19) ? threads : 1;
      parallel_for(batches, nt, [&](int64_t bi) { product(bi, 1); });
    } else {
      for (int64_t bi = 0; bi < batches; ++bi) product(bi, threads);
    }
  }

  /// The activation as its own kernel (ai.onnx Relu / Tanh / Sigmoid,
  /// com.graphengine::Gelu / Swish), run in place on Y after a gemm-based
  /// product.
  void make_activation_kernel() {
    static const struct {
      MatMulActivation act;
      const char *op, *domain;
    } kOps[] = {{MatMulActivation::kRelu, "Relu", ""},          {MatMulActivation::kTanh, "Tanh", ""},
                {MatMulActivation::kSigmoid, "Sigmoid", ""},    {MatMulActivation::kGelu, "Gelu", ops::kGecDomain},
                {MatMulActivation::kGeluTanh, "Gelu", ops::kGecDomain}, {MatMulActivation::kSwish, "Swish", ops::kGecDomain}};
    for (const auto& o : kOps)
      if (o.act == act_) {
        ir::Value* y = act_graph_.add_value("y", ir::TensorType{DType::kFloat32, false, {}});
        ir::Node* n = act_graph_.add_node(o.op, {y}, {"activation"}, "activation", o.domain);
        if (act_ == MatMulActivation::kGeluTanh) n->set_attr(ir::Attribute::String("approximate", "tanh"));
        if (act_ == MatMulActivation::kSwish) n->set_attr(ir::Attribute::Float("alpha", 1.f));
        act_kernel_ = create_kernel(*n);
        return;
      }
    fail(ErrorCode::kInternal, desc_ + ": no kernel for activation " + ops::matmul_activation_name(act_));
  }

  std::string desc_;
  ir::Graph act_graph_;                  // the activation's node (make_activation_kernel)
  std::unique_ptr<Kernel> act_kernel_;   // run after the product, or null: oneDNN's post-op runs it
  KernelContext act_ctx_;
  bool fused_ = false, has_bias_ = false, has_act_ = false, constant_b_ = false;
  bool native_ = false;                  // gemm_simd runs the product, not mm_
  PackedB packed_b_;                     // a constant B for gemm_simd
  std::vector<int64_t> a_off_, b_off_;   // per product of the batch (plan_batches)
  MatMulActivation act_ = MatMulActivation::kNone;
  dnnl::algorithm alg_ = dnnl::algorithm::eltwise_relu;
  memory bias_;
  MatmulDims dims_;
  dnnl::matmul mm_;
  Scratchpad scratch_;
  PackedWeights weights_;
  memory src_, dst_;
  std::unordered_map<int, memory> args_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const ir::Node& n, const std::string& variant)
      : desc_(n.describe()),
        alpha_(n.get_float("alpha", 1.f)),
        beta_(n.get_float("beta", 1.f)),
        trans_a_(n.get_int("transA", 0) != 0),
        trans_b_(n.get_int("transB", 0) != 0),
        constant_b_(constant_input(n, 1)),
        native_(native_variant(n, variant)) {}

  void reshape(const KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView& b = ctx.in(1);
    require_f32(desc_, a.dtype);
    require_f32(desc_, b.dtype);
    const bool use_c = ctx.has_input(2) && beta_ != 0.f;
    const int64_t k = trans_a_ ? a.shape[0] : a.shape[1];
    // C of one row ([N] or [1, N]) with alpha = beta = 1 (a Linear layer's
    // bias) goes to the primitive as its bias: no broadcast of C into Y first.
    const int64_t n = trans_b_ ? b.shape[0] : b.shape[1];
    c_as_bias_ = use_c && alpha_ == 1.f && beta_ == 1.f && ctx.in(2).numel() == n &&
                 (ctx.in(2).shape == Shape{n} || ctx.in(2).shape == Shape{1, n});
    if (ctx.out(0).numel() > 0 && k > 0 && !native_) build(a.shape, b.shape, use_c);
  }

  void run(KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const TensorView* c = ctx.has_input(2) ? ctx.inputs[2] : nullptr;
    TensorView& y = ctx.out(0);
    if (y.numel() == 0) return;
    const bool use_c = c && beta_ != 0.f;
    const int64_t k = trans_a_ ? a.shape[0] : a.shape[1];
    if (use_c && (k == 0 || !c_as_bias_)) broadcast_c(*c, y);
    if (k == 0) {  // Y = beta * C
      float* out = y.as<float>();
      for (int64_t i = 0; i < y.numel(); ++i) out[i] = use_c ? beta_ * out[i] : 0.f;
      return;
    }
    if (native_) {  // Y = beta C (broadcast above) scaled here, then Y += alpha op(A) op(B)
      gemm_simd::Product p;
      p.m = y.shape[0];
      p.n = y.shape[1];
      p.k = k;
      p.a = a.as<float>();
      p.lda = a.shape[1];
      p.a_transposed = trans_a_;
      p.b = ctx.in(1).as<float>();
      p.ldb = ctx.in(1).shape[1];
      p.b_transposed = trans_b_;
      if (constant_b_) p.b_packed = packed_b_.get(ctx, 1, p);
      p.bias = use_c && c_as_bias_ ? c->as<float>() : nullptr;
      p.c = y.as<float>();
      p.ldc = p.n;
      p.alpha = alpha_;
      p.accumulate = use_c && !c_as_bias_;
      if (p.accumulate && beta_ != 1.f) {
        float* out = y.as<float>();
        for (int64_t i = 0; i < y.numel(); ++i) out[i] *= beta_;
      }
      gemm_simd::gemm(p, ctx.num_threads);
      return;
    }
    bind(src_, a.data);
    args_[DNNL_ARG_WEIGHTS] = weights_.get(ctx.in(1).data, ctx, 1);
    if (c_as_bias_) bind(bias_, c->data);
    bind(dst_, y.data);
    scratch_.bind(args_, ctx.scratch);
    mm_.execute(cpu_stream(), args_);
    cpu_stream().wait();
  }

  void pack_constants(const KernelContext& ctx) override {
    const TensorView& a = ctx.in(0);
    const int64_t k = trans_a_ ? a.shape[0] : a.shape[1];
    if (ctx.out(0).numel() == 0 || k == 0) return;
    if (!native_) {
      weights_.pack_constant(ctx, 1);
    } else if (constant_b_ && ctx.in(1).data) {
      const TensorView& b = ctx.in(1);
      gemm_simd::Product p;
      p.k = k;
      p.n = trans_b_ ? b.shape[0] : b.shape[1];
      p.b = b.as<float>();
      p.ldb = b.shape[1];
      p.b_transposed = trans_b_;
      packed_b_.get(ctx, 1, p);
    }
  }

  std::string impl_name() const override { return native_ ? "native.gemm" : "onednn.matmul"; }
  bool costly_reshape() const override { return !native_ || constant_b_; }  // as MatMul's

 private:
  void build(const Shape& as, const Shape& bs, bool use_c) {
    const int64_t m = trans_a_ ? as[1] : as[0], k = trans_a_ ? as[0] : as[1];
    const int64_t n = trans_b_ ? bs[0] : bs[1];
    const memory::desc src = trans_a_ ? strided_md({m, k}, {1, m}) : plain_md({m, k});
    const memory::desc user_wei = trans_b_ ? strided_md({k, n}, {1, k}) : plain_md({k, n});
    const memory::desc wei = constant_b_ ? any_md({k, n}) : user_wei;
    const memory::desc dst = plain_md({m, n});
    dnnl::primitive_attr attr = Scratchpad::attr();
    if (alpha_ != 1.f) attr.set_output_scales(0, {alpha_});
    if (use_c && !c_as_bias_) {
      dnnl::post_ops po;
      po.append_sum(beta_);
      attr.set_post_ops(po);
    }
    const memory::desc bias = plain_md({1, n});
    try {
      dnnl::matmul::primitive_desc pd(
          c_as_bias_ ? dnnl::matmul::desc(src, wei, bias, dst) : dnnl::matmul::desc(src, wei, dst), attr, cpu_engine());
      if (constant_b_) {
        const memory::desc padded = padded_weights_md(pd.weights_desc(), k, n);
        if (padded != pd.weights_desc())
          pd = dnnl::matmul::primitive_desc(
              c_as_bias_ ? dnnl::matmul::desc(src, padded, bias, dst) : dnnl::matmul::desc(src, padded, dst), attr,
              cpu_engine());
      }
      mm_ = dnnl::matmul(pd);
      scratch_.set(pd.scratchpad_desc());
      weights_.reset(user_wei, pd.weights_desc());
    } catch (const dnnl::error& e) {
      rethrow_dnnl(desc_, "create a matmul for A " + shape_str(as) + ", B " + shape_str(bs), e);
    }
    src_ = unbound_memory(src);
    dst_ = unbound_memory(dst);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};  // shares the handles bind() sets
    if (c_as_bias_) {
      bias_ = unbound_memory(bias);
      args_[DNNL_ARG_BIAS] = bias_;
    }
  }

  /// Y[i,j] = C broadcast (C is [], [1], [N], [1,N], [M,1], [M,N]).
  static void broadcast_c(const TensorView& c, TensorView& y) {
    const int64_t m = y.shape[0], n = y.shape[1];
    Shape cs = c.shape;
    cs.insert(cs.begin(), 2 - std::min<size_t>(cs.size(), 2), 1);
    const int64_t rs = cs[0] == 1 ? 0 : cs[1], cstr = cs[1] == 1 ? 0 : 1;
    const float* src = c.as<float>();
    float* out = y.as<float>();
    for (int64_t i = 0; i < m; ++i) {
      if (cstr == 1) {
        std::copy_n(src + i * rs, n, out + i * n);  // a row of C (memmove's vector loop)
        continue;
      }
      for (int64_t j = 0; j < n; ++j) out[i * n + j] = src[i * rs + j * cstr];
    }
  }

  std::string desc_;
  float alpha_, beta_;
  bool trans_a_, trans_b_, constant_b_;
  bool native_;             // gemm_simd runs the product, not mm_
  PackedB packed_b_;        // a constant B for gemm_simd
  bool c_as_bias_ = false;  // C is the primitive's bias (reshape)
  dnnl::matmul mm_;
  Scratchpad scratch_;
  PackedWeights weights_;
  memory src_, dst_, bias_;
  std::unordered_map<int, memory> args_;
};

const bool kVariantChoices = [] {
  register_variant_choice("", "MatMul", matmul_variant_choice);
  register_variant_choice(ops::kGecDomain, "FusedMatMul", matmul_variant_choice);
  register_variant_choice("", "Gemm", matmul_variant_choice);
  return true;
}();

GEC_REGISTER_KERNEL("", "MatMul", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  return std::make_unique<MatMulKernel>(n, config_.variant);
});
GEC_REGISTER_KERNEL(ops::kGecDomain, "FusedMatMul", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  for (DType d : config_.input_dtypes) require_f32(n, d);
  return std::make_unique<MatMulKernel>(n, config_.variant);
});
GEC_REGISTER_KERNEL("", "Gemm", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
  for (DType d : dts) require_f32(n, d);
  return std::make_unique<GemmKernel>(n, config_.variant);
});

}  // namespace
}  // namespace gec::kernels::cpu
