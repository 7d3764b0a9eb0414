// CPU kernel of com.graphengine::ScaledDotProductAttention (ops/attention.cc):
// softmax(scale * Q K^T (+ mask)) V, blocked over the query rows so the
// [S, T] score matrix never exists whole.
//
// Work items are (batch, block of kRows query rows), split across threads.
// For one item, the kRows x T scores go into a per-thread buffer (kRows * T
// floats: 128 KiB at T = 1024, in L2), the mask is applied row by row,
// softmax runs in place, and the rows times V give the block's output rows.
// The loops are the Highway ones of attention_simd.cc (vectors along T for
// the scores, along Dv for the output). Q, V and the output may be views
// with permuted leading axes (q_perm, v_perm, out_perm): rows are read and
// written at their strides, the heads' transposes never copied. Sums run in
// another order than two MatMuls and a Softmax would: results agree with
// the unfused ops within float32 rounding (tests/attention_test.cc states
// the tolerance).
#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/common/broadcast.h"
#include "kernels/cpu/common/strided_copy.h"
#include "kernels/kernel.h"
#include "ops/attention.h"
#include "ops/domain.h"

namespace gec::kernels::cpu {
namespace attention_simd {
void scores_block(const float* q, int64_t ldq, const float* kt, int64_t ldk, float* s, int64_t lds, int64_t rows,
                  int64_t D, int64_t T, float scale);
void softmax_rows(float* s, int64_t lds, int64_t rows, int64_t T);
void output_block(const float* p, int64_t ldp, const float* v, int64_t ldv, float* o, int64_t ldo, int64_t rows,
                  int64_t T, int64_t Dv);
}  // namespace attention_simd

namespace {

constexpr int64_t kRows = 32;

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(const ir::Node& n) : desc_(n.describe()) {
    scale_ = n.get_float("scale", 1.f);
    for (int i = 0; i < 3; ++i) {
      const char* name = kViewAttrs[i];
      has_perm_[i] = n.has_attr(name);
      if (has_perm_[i]) perm_attr_[i] = n.get_ints(name);
    }
    fill_ = n.get_float("fill", 0.f);
    const std::string kind = n.get_string("mask_kind", "none");
    if (kind != "none" && kind != "additive" && kind != "boolean")
      fail(ErrorCode::kInvalidModel, desc_ + ": mask_kind must be none, additive or boolean");
    kind_ = kind == "none" ? 0 : kind == "additive" ? 1 : 2;
  }

  void reshape(const KernelContext& ctx) override {
    // Q, V and the output as views (q_perm, v_perm, out_perm: ops/attention.h)
    // of the input and output tensors.
    const size_t r = ctx.in(0).shape.size();
    std::string why;
    const auto perm = [&](int i) {
      return why.empty() ? ops::attention_view_perm(has_perm_[i] ? &perm_attr_[i] : nullptr, kViewAttrs[i], r, &why)
                         : std::vector<int64_t>();
    };
    const std::vector<int64_t> qp = perm(0), vp = perm(1), op = perm(2);
    const Shape& kt = ctx.in(1).shape;
    if (!why.empty() || r < 2 || ctx.in(2).shape.size() != r || kt.size() != r || ctx.out(0).shape.size() != r)
      fail(ErrorCode::kInvalidModel, desc_ + ": " + (why.empty() ? "Q, Kt, V and the output differ in rank" : why));
    const Shape q = ops::permute_shape(ctx.in(0).shape, qp);
    const Shape v = ops::permute_shape(ctx.in(2).shape, vp);
    batch_ = 1;
    for (size_t i = 0; i + 2 < r; ++i) batch_ *= q[i];
    s_ = q[r - 2];
    d_ = q[r - 1];
    t_ = kt[r - 1];
    dv_ = v[r - 1];
    Shape o(q.begin(), q.end() - 1);
    o.push_back(dv_);
    if (kt[r - 2] != d_ || v[r - 2] != t_ || ops::permute_shape(o, op) != ctx.out(0).shape)
      fail(ErrorCode::kInvalidArgument, desc_ + ": Q " + shape_str(q) + ", Kt " + shape_str(kt) + ", V " +
                                            shape_str(v) + " and the output " + shape_str(ctx.out(0).shape) +
                                            " do not fit");
    for (size_t i = 0; i + 2 < r; ++i)
      if (kt[i] != q[i] || v[i] != q[i])
        fail(ErrorCode::kInvalidArgument, desc_ + ": Q, Kt and V must have the same batch dims");
    if (ctx.out(0).numel() == 0) {  // nothing to compute (run() returns at once): no per-batch tables
      q_at_.clear(), v_at_.clear(), o_at_.clear(), mask_batch_.clear();
      return;
    }
    // Element strides of each logical dim in its tensor: a view's dim k is
    // the tensor's dim perm[k] (the output's dim k is Y's dim j with
    // out_perm[j] = k).
    const auto view_strides = [](const Shape& tensor, const std::vector<int64_t>& perm, bool inverse) {
      const std::vector<int64_t> dense = dense_strides(tensor);
      std::vector<int64_t> st(tensor.size());
      for (size_t k = 0; k < perm.size(); ++k) {
        if (inverse) st[static_cast<size_t>(perm[k])] = dense[k];
        else st[k] = dense[static_cast<size_t>(perm[k])];
      }
      return st;
    };
    const std::vector<int64_t> qs = view_strides(ctx.in(0).shape, qp, false),
                               vs = view_strides(ctx.in(2).shape, vp, false),
                               os = view_strides(ctx.out(0).shape, op, true);
    ldq_ = qs[r - 2], ldv_ = vs[r - 2], ldo_ = os[r - 2];
    q_at_.assign(static_cast<size_t>(batch_), 0);
    v_at_.assign(static_cast<size_t>(batch_), 0);
    o_at_.assign(static_cast<size_t>(batch_), 0);
    for (int64_t b = 0; b < batch_; ++b) {
      int64_t rem = b;
      for (size_t k = r - 2; k-- > 0;) {
        const int64_t i = rem % q[k];
        rem /= q[k];
        q_at_[static_cast<size_t>(b)] += i * qs[k];
        v_at_[static_cast<size_t>(b)] += i * vs[k];
        o_at_[static_cast<size_t>(b)] += i * os[k];
      }
    }
    mask_row_ = mask_col_ = 0;
    mask_batch_.clear();
    if (kind_ == 0 || ctx.out(0).numel() == 0 || t_ == 0) return;
    mask_batch_.assign(static_cast<size_t>(batch_), 0);
    // The mask right-aligned to the scores [batch..., S, T]: element strides
    // per scores dim, 0 where it broadcasts.
    const Shape& m = ctx.in(3).shape;
    Shape scores(q.begin(), q.end() - 1);
    scores.push_back(t_);
    std::vector<int64_t> stride(r, 0);
    int64_t run = 1;
    for (size_t k = r; k-- > 0;) {
      const size_t lead = r - m.size();
      const int64_t dim = k < lead ? 1 : m[k - lead];
      stride[k] = dim == 1 ? 0 : run;
      run *= dim;
    }
    mask_row_ = stride[r - 2];
    mask_col_ = stride[r - 1];
    for (int64_t b = 0; b < batch_; ++b) {
      int64_t rem = b, off = 0;
      for (size_t k = r - 2; k-- > 0;) {
        off += (rem % scores[k]) * stride[k];
        rem /= scores[k];
      }
      mask_batch_[static_cast<size_t>(b)] = off;
    }
  }

  void run(KernelContext& ctx) override {
    const float* q = ctx.in(0).as<float>();
    const float* kt = ctx.in(1).as<float>();
    const float* v = ctx.in(2).as<float>();
    float* out = ctx.out(0).as<float>();
    if (ctx.out(0).numel() == 0) return;
    const void* mask = kind_ ? ctx.in(3).data : nullptr;
    const int64_t blocks = (s_ + kRows - 1) / kRows, items = batch_ * blocks;
    const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ctx.num_threads, items)));
    const size_t per_thread = static_cast<size_t>(kRows * t_);
    if (scores_.size() < per_thread * static_cast<size_t>(nt)) scores_.assign(per_thread * static_cast<size_t>(nt), 0.f);
    parallel_for(items, nt, [&](int64_t it) {
      const int64_t b = it / blocks, r0 = (it % blocks) * kRows, rows = std::min(kRows, s_ - r0);
      // The slot of this thread of the region (0 on the plain loop of nt == 1,
      // whatever team the caller may be in).
      float* s = scores_.data() + per_thread * static_cast<size_t>(nt > 1 ? omp_get_thread_num() : 0);
      const size_t bi = static_cast<size_t>(b);
      attention_simd::scores_block(q + q_at_[bi] + r0 * ldq_, ldq_, kt + b * d_ * t_, t_, s, t_, rows, d_, t_,
                                   scale_);
      if (kind_) apply_mask(mask, b, r0, rows, s);
      attention_simd::softmax_rows(s, t_, rows, t_);
      attention_simd::output_block(s, t_, v + v_at_[bi], ldv_, out + o_at_[bi] + r0 * ldo_, ldo_, rows, t_, dv_);
    });
  }

  // With operand views the name says so: a build without them refuses the
  // plan (kernel name check at load) instead of ignoring the attributes.
  std::string impl_name() const override {
    return has_perm_[0] || has_perm_[1] || has_perm_[2] ? "native.attention.views" : "native.attention";
  }

 private:
  void apply_mask(const void* mask, int64_t b, int64_t r0, int64_t rows, float* s) const {
    for (int64_t r = 0; r < rows; ++r) {
      float* row = s + r * t_;
      const int64_t base = mask_batch_[static_cast<size_t>(b)] + (r0 + r) * mask_row_;
      if (kind_ == 1) {
        const float* m = static_cast<const float*>(mask) + base;
        if (mask_col_ == 0) {
          const float a = m[0];
          for (int64_t t = 0; t < t_; ++t) row[t] += a;
        } else {
#pragma omp simd
          for (int64_t t = 0; t < t_; ++t) row[t] += m[t];
        }
      } else {
        const uint8_t* m = static_cast<const uint8_t*>(mask) + base;
        const float f = fill_;
        if (mask_col_ == 0) {
          if (m[0]) std::fill(row, row + t_, f);
        } else {
#pragma omp simd
          for (int64_t t = 0; t < t_; ++t) row[t] = m[t] ? f : row[t];
        }
      }
    }
  }

  static constexpr const char* kViewAttrs[3] = {"q_perm", "v_perm", "out_perm"};
  bool has_perm_[3] = {false, false, false};
  std::vector<int64_t> perm_attr_[3];
  std::string desc_;
  float scale_ = 1.f, fill_ = 0.f;
  int kind_ = 0;  // 0 none, 1 additive, 2 boolean
  int64_t batch_ = 0, s_ = 0, d_ = 0, t_ = 0, dv_ = 0;
  // Q, V and the output per batch index (element offsets) and their row strides.
  std::vector<int64_t> q_at_, v_at_, o_at_;
  int64_t ldq_ = 0, ldv_ = 0, ldo_ = 0;
  std::vector<int64_t> mask_batch_;
  int64_t mask_row_ = 0, mask_col_ = 0;
  std::vector<float> scores_;
};

GEC_REGISTER_KERNEL(ops::kGecDomain, "ScaledDotProductAttention",
                    [](const ir::Node& n, const KernelConfig& config) -> std::unique_ptr<Kernel> {
                      for (size_t i = 0; i < 3 && i < config.input_dtypes.size(); ++i)
                        if (config.input_dtypes[i] != DType::kFloat32)
                          fail(ErrorCode::kUnsupported, n.describe() + ": Q, Kt and V must be float32");
                      return std::make_unique<AttentionKernel>(n);
                    });

}  // namespace
}  // namespace gec::kernels::cpu
