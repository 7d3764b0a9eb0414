// Pieces shared by the recurrent kernels (LSTM-14 in lstm.cc, GRU-14 and
// RNN-14 in rnn.cc): the activation functions the ONNX RNN family lets a
// model choose, parsed from activations / activation_alpha / activation_beta,
// their products X W^T and H R^T (ProductNt), and the two directions of a
// bidirectional layer at once (run_directions).
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "gec/error.h"
#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/dot_simd.h"
#include "kernels/cpu/common/onednn_common.h"
#include "ir/graph.h"
#include "support/omp_threads.h"

namespace gec::kernels::cpu {

/// Products with at most this many rows run as dot products (ProductNt).
inline constexpr int64_t kDotProductRows = 4;
/// ... on several threads from this many multiply-adds: an OpenMP fork and
/// join costs 5-7 us on this VM's 2 cores, and one thread does about 50K
/// multiply-adds a microsecond (a bidirectional LSTM of hidden size 128, one
/// sequence: its [1,128] x [128,512] steps, 64K multiply-adds, took longer
/// split over 2 threads than on one).
inline constexpr int64_t kSplitDotMacs = int64_t{1} << 19;

/// C[M,N] = A[M,K] x B[N,K]^T + beta * C, row-major with leading dims K, K
/// and N, for one product site of a recurrent kernel (a direction's input
/// projection, its step's H R^T, ...). Up to kDotProductRows rows (a step of
/// one or a few sequences, as in streaming speech models) as dot products
/// of A's and B's rows (dot_simd.h, on the CPU's widest vectors), split over
/// N on `threads` threads from kSplitDotMacs multiply-adds: they spare a
/// library call's per-call overhead. More rows through a oneDNN MatMul
/// (brgemm where the CPU has AVX-512) made on the site's first product of
/// each shape and kept; oneDNN's sgemm, which ran them before, generated its
/// kernels on its first multi-threaded call in a process (40-43 ms here: a
/// GRU keyword model's first run took 50 ms on 2 threads, 7 on one), and ran
/// [80,512] x [512,2048]^T in 0.88 ms against the MatMul's 0.59 (2 threads).
/// (Without AVX-512 oneDNN 2.6's MatMul is itself sgemm-based: the first
/// call's cost stays there.) The MatMul is made and run under `threads`
/// OpenMP threads (oneDNN sizes it by the count it is made with), its
/// scratchpad oneDNN's own. Errors: gec::Error (kInternal) naming `who`
/// when oneDNN refuses the product.
class ProductNt {
 public:
  /// `who`: the node and product, for errors (e.g. "LSTM 'rnn1' X W^T").
  void name(std::string who) { who_ = std::move(who); }

  void run(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c, int threads) {
    if (m <= kDotProductRows) {
      const int nt = threads > 1 && m * n * k >= kSplitDotMacs ? threads : 1;
      parallel_for(nt, nt, [&](int64_t t) {
        const int64_t j0 = n * t / nt, j1 = n * (t + 1) / nt;
        dot_simd::dots_nt(m, j1 - j0, k, a, b + j0 * k, beta, c + j0, n);
      });
      return;
    }
    uint32_t beta_bits = 0;
    std::memcpy(&beta_bits, &beta, sizeof beta_bits);
    threads = std::max(threads, 1);
    const std::array<int64_t, 5> key{m, n, k, static_cast<int64_t>(beta_bits), threads};
    if (!made_ || key != key_) make(m, n, k, beta, threads, key);
    bind(a_, a);
    bind(b_, b);
    bind(c_, c);
    const ScopedOmpThreads count(threads);  // given back also when oneDNN throws
    try {
      mm_.execute(cpu_stream(), {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
      cpu_stream().wait();
    } catch (const dnnl::error& e) {
      fail(ErrorCode::kInternal, who_ + ": oneDNN MatMul failed: " + e.what());
    }
  }

 private:
  /// The MatMul for A [m,k], B^T (B [n,k] read transposed), C [m,n] (+ beta
  /// C as a sum post-op), sized for `threads` OpenMP threads.
  void make(int64_t m, int64_t n, int64_t k, float beta, int threads, const std::array<int64_t, 5>& key) {
    using dims = dnnl::memory::dims;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::desc ad(dims{m, k}, f32, dims{k, 1}), bd(dims{k, n}, f32, dims{1, k}),
        cd(dims{m, n}, f32, dims{n, 1});
    dnnl::primitive_attr attr;
    if (beta != 0.f) {
      dnnl::post_ops po;
      po.append_sum(beta);
      attr.set_post_ops(po);
    }
    try {
      const ScopedOmpThreads count(threads);  // oneDNN sizes a primitive by the creating thread's count
      mm_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, bd, cd), attr, cpu_engine()));
    } catch (const dnnl::error& e) {
      made_ = false;
      fail(ErrorCode::kInternal, who_ + ": oneDNN has no MatMul for [" + std::to_string(m) + "," + std::to_string(k) +
                                     "] x [" + std::to_string(k) + "," + std::to_string(n) + "]: " + e.what());
    }
    a_ = unbound_memory(ad);
    b_ = unbound_memory(bd);
    c_ = unbound_memory(cd);
    key_ = key;
    made_ = true;
  }

  std::string who_ = "a recurrent product";
  bool made_ = false;
  std::array<int64_t, 5> key_{};  // m, n, k, beta's bits, threads of mm_
  dnnl::matmul mm_;
  dnnl::memory a_, b_, c_;
};

/// Runs `direction(d, threads)` for d in [0, num_dirs): a bidirectional
/// layer on several threads runs both directions at once, one thread each
/// (independent chains: each keeps its own state and writes its own half of
/// Y, Y_h and Y_c), else one after the other on all `threads`. An error in
/// either direction is raised after both have ended.
template <class F>
void run_directions(int num_dirs, int threads, F&& direction) {
  if (num_dirs != 2 || threads < 2) {
    for (int d = 0; d < num_dirs; ++d) direction(d, threads);
    return;
  }
  std::exception_ptr error[2];
  parallel_for(2, 2, [&](int64_t d) {
    try {
      direction(static_cast<int>(d), 1);
    } catch (...) {
      error[d] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : error)
    if (e) std::rethrow_exception(e);
}

/// One activation function with its alpha/beta (ONNX RNN activation list).
struct Activation {
  enum Kind { kSigmoid, kTanh, kRelu, kHardSigmoid, kLeakyRelu, kThresholdedRelu, kScaledTanh, kAffine, kElu,
              kSoftsign, kSoftplus } kind = kSigmoid;
  float alpha = 0, beta = 0;

  float operator()(float x) const {
    switch (kind) {
      case kSigmoid: return 1.f / (1.f + std::exp(-x));
      case kTanh: return std::tanh(x);
      case kRelu: return x > 0 ? x : 0.f;
      case kHardSigmoid: return std::min(1.f, std::max(0.f, alpha * x + beta));
      case kLeakyRelu: return x >= 0 ? x : alpha * x;
      case kThresholdedRelu: return x > alpha ? x : 0.f;
      case kScaledTanh: return alpha * std::tanh(beta * x);
      case kAffine: return alpha * x + beta;
      case kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1.f);
      case kSoftsign: return x / (1.f + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

/// Parses activations/activation_alpha/activation_beta; alphas and betas are
/// consumed in order by the activations that take them.
inline std::vector<Activation> parse_activations(const ir::Node& n, int num_dirs,
                                                 const std::vector<std::string>& defaults) {
  std::vector<std::string> names = n.has_attr("activations") ? n.find_attr("activations")->strings
                                                             : std::vector<std::string>{};
  if (names.empty())
    for (int d = 0; d < num_dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  const int per_dir = static_cast<int>(defaults.size());
  if (static_cast<int>(names.size()) != per_dir * num_dirs)
    fail(ErrorCode::kInvalidModel, n.describe() + ": expected " + std::to_string(per_dir * num_dirs) + " activations");
  const std::vector<float> alphas = n.get_floats("activation_alpha"), betas = n.get_floats("activation_beta");
  size_t ai = 0, bi = 0;
  auto next = [](const std::vector<float>& v, size_t& i, float def) { return i < v.size() ? v[i++] : def; };
  std::vector<Activation> r;
  for (const std::string& s : names) {
    Activation a;
    if (s == "Sigmoid") a.kind = Activation::kSigmoid;
    else if (s == "Tanh") a.kind = Activation::kTanh;
    else if (s == "Relu") a.kind = Activation::kRelu;
    else if (s == "HardSigmoid") a = {Activation::kHardSigmoid, next(alphas, ai, 0.2f), next(betas, bi, 0.5f)};
    else if (s == "LeakyRelu") a = {Activation::kLeakyRelu, next(alphas, ai, 0.01f), 0};
    else if (s == "ThresholdedRelu") a = {Activation::kThresholdedRelu, next(alphas, ai, 1.f), 0};
    else if (s == "ScaledTanh") a = {Activation::kScaledTanh, next(alphas, ai, 1.f), next(betas, bi, 1.f)};
    else if (s == "Affine") a = {Activation::kAffine, next(alphas, ai, 1.f), next(betas, bi, 0.f)};
    else if (s == "Elu") a = {Activation::kElu, next(alphas, ai, 1.f), 0};
    else if (s == "Softsign") a.kind = Activation::kSoftsign;
    else if (s == "Softplus") a.kind = Activation::kSoftplus;
    else fail(ErrorCode::kUnsupported, n.describe() + ": activation '" + s + "' is not supported");
    r.push_back(a);
  }
  return r;
}

}  // namespace gec::kernels::cpu
