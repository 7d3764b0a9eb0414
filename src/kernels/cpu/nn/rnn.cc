// GRU (ONNX GRU-14) and simple RNN (ONNX RNN-14) on CPU: forward, reverse
// and bidirectional, optional B, sequence_lens and initial_h, layout 0 and 1,
// clip, the activation lists, and GRU's linear_before_reset.
//
// Same structure as lstm.cc: per direction the input projection of all steps
// is one product (X [T*B, I] x W^T [I, G*H], rnn_common.h ProductNt) plus
// Wb; each step adds H_{t-1} x R^T (+ Rb) and applies the cell:
//   RNN: H = f(x + h)
//   GRU (gates z, r, h in W, R, B): z = f(xz + hz), r = f(xr + hr),
//        n = g(xn + r*(hn))            when linear_before_reset != 0
//        n = g(xn + (r*H_{t-1}) Rn^T + Rbn)   otherwise (one more product)
//        H = (1 - z)*n + z*H_{t-1}
// Batch entries past their sequence_lens keep their state; Y is 0 there.
// A bidirectional layer on several threads runs its two directions at once,
// one thread each (rnn_common.h run_directions).
#include <dnnl.h>

#include <cmath>

#include "kernels/cpu/common/onednn_common.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/cpu/nn/rnn_common.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const ir::Node& n, bool gru)
      : desc_(n.describe()),
        gru_(gru),
        gates_n_(gru ? 3 : 1),
        layout_(n.get_int("layout", 0)),
        linear_before_reset_(gru && n.get_int("linear_before_reset", 0) != 0),
        clip_(n.get_float("clip", 0.f)) {
    const std::string dir = n.get_string("direction", "forward");
    num_dirs_ = dir == "bidirectional" ? 2 : 1;
    reverse_only_ = dir == "reverse";
    acts_ = gru ? parse_activations(n, num_dirs_, {"Sigmoid", "Tanh"}) : parse_activations(n, num_dirs_, {"Tanh"});
    for (DirectionState& st : dirs_) {
      st.input_product.name(desc_ + " X W^T");
      st.step_product.name(desc_ + " H R^T");
      st.reset_product.name(desc_ + " (r * H) Rn^T");
    }
  }

  void run(KernelContext& ctx) override {
    for (size_t i : {0, 1, 2}) require_f32(desc_, ctx.in(i).dtype);
    const Shape& xs = ctx.in(0).shape;
    seq_ = layout_ == 0 ? xs[0] : xs[1];
    batch_ = layout_ == 0 ? xs[1] : xs[0];
    input_ = xs[2];
    hidden_ = ctx.in(2).shape[2];  // the schema has checked R against hidden_size, W and X
    check_weights(ctx, gates_n_);
    read_lengths(ctx);
    if (y_out(ctx)) std::fill(y_out(ctx), y_out(ctx) + ctx.out(0).numel(), 0.f);
    // Each direction's input projection (the largest product) on all the
    // threads, then the recurrences, both directions at once where they can.
    for (int d = 0; d < num_dirs_; ++d) project_input(ctx, d, ctx.num_threads, dirs_[static_cast<size_t>(d)]);
    run_directions(num_dirs_, ctx.num_threads, [&](int d, int threads) {
      run_direction(ctx, d, reverse_only_ || d == 1, threads, dirs_[static_cast<size_t>(d)]);
    });
  }

  std::string impl_name() const override { return gru_ ? "native.gru+onednn_matmul" : "native.rnn+onednn_matmul"; }

 private:
  static float* y_out(const KernelContext& ctx) {
    return !ctx.outputs.empty() && ctx.outputs[0] && ctx.outputs[0]->data ? ctx.out(0).as<float>() : nullptr;
  }

  /// Guards the reads below when the kernel runs without the schema check:
  /// W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H].
  void check_weights(const KernelContext& ctx, int64_t gates) const {
    const int64_t gh = gates * hidden_;
    const bool ok = ctx.in(1).shape == Shape{num_dirs_, gh, input_} && ctx.in(2).shape == Shape{num_dirs_, gh, hidden_} &&
                    (!ctx.has_input(3) || ctx.in(3).shape == Shape{num_dirs_, 2 * gh});
    if (!ok) fail(ErrorCode::kInvalidArgument, desc_ + ": W, R or B does not match X and hidden size");
  }

  void read_lengths(const KernelContext& ctx) {
    lens_.assign(batch_, seq_);
    if (!ctx.has_input(4)) return;
    const TensorView& sl = ctx.in(4);
    if (sl.numel() != batch_) fail(ErrorCode::kInvalidArgument, desc_ + ": sequence_lens must have batch_size entries");
    for (int64_t b = 0; b < batch_; ++b) {
      const int64_t v = sl.dtype == DType::kInt64 ? sl.as<int64_t>()[b] : sl.as<int32_t>()[b];
      if (v < 0 || v > seq_) fail(ErrorCode::kInvalidArgument, desc_ + ": sequence_lens entry out of range");
      lens_[b] = v;
    }
  }

  int64_t state_off(int d, int64_t b) const {
    return (layout_ == 0 ? d * batch_ + b : b * num_dirs_ + d) * hidden_;
  }

  float clip(float v) const { return clip_ > 0 ? std::min(clip_, std::max(-clip_, v)) : v; }

  /// One direction's buffers, reused across runs.
  struct DirectionState {
    std::vector<float> xw, hr, rh, hn, h;
    std::vector<float> cell;  // gru_step's z, r and candidates
    ProductNt input_product, step_product, reset_product;  // X W^T, H R^T, (r * H) Rn^T
  };

  /// Direction `d`'s input projection X W^T + Wb for all (t, b), rows in
  /// X's own order, into st.xw, on `threads` threads.
  void project_input(KernelContext& ctx, int d, int threads, DirectionState& st) const {
    const int64_t G = gates_n_ * hidden_, T = seq_, B = batch_, I = input_;
    const float* x = ctx.in(0).as<float>();
    const float* w = ctx.in(1).as<float>() + d * G * I;
    const float* wb = ctx.has_input(3) ? ctx.in(3).as<float>() + d * 2 * G : nullptr;
    st.xw.resize(static_cast<size_t>(T * B * G));
    if (T * B > 0 && I > 0) st.input_product.run(T * B, G, I, x, w, 0.f, st.xw.data(), threads);
    else std::fill(st.xw.begin(), st.xw.end(), 0.f);
    if (wb)
      for (int64_t row = 0; row < T * B; ++row)
        for (int64_t k = 0; k < G; ++k) st.xw[static_cast<size_t>(row * G + k)] += wb[k];
  }

  /// Direction `d`'s steps on `threads` threads with its buffers `st`
  /// (st.xw from project_input).
  void run_direction(KernelContext& ctx, int d, bool reverse, int threads, DirectionState& st) {
    std::vector<float>&xw_ = st.xw, &hr_ = st.hr, &rh_ = st.rh, &hn_ = st.hn, &h_ = st.h;
    const int64_t H = hidden_, G = gates_n_ * H, T = seq_, B = batch_;
    const float* r = ctx.in(2).as<float>() + d * G * H;
    const float* wb = ctx.has_input(3) ? ctx.in(3).as<float>() + d * 2 * G : nullptr;
    const float* rb = wb ? wb + G : nullptr;
    h_.assign(static_cast<size_t>(B * H), 0.f);
    if (ctx.has_input(5))
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) h_[b * H + j] = ctx.in(5).as<float>()[state_off(d, b) + j];
    hr_.resize(static_cast<size_t>(B * G));
    rh_.resize(static_cast<size_t>(B * H));
    hn_.resize(static_cast<size_t>(B * H));
    const Activation* act = &acts_[(gru_ ? 2 : 1) * d];
    float* y = y_out(ctx);
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = reverse ? T - 1 - s : s;
      // hr = H_{t-1} R^T + Rb for all gates.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < G; ++k) hr_[b * G + k] = rb ? rb[k] : 0.f;
      if (H > 0) st.step_product.run(B, G, H, h_.data(), r, 1.f, hr_.data(), threads);
      if (gru_ && !linear_before_reset_) reset_projection(t, r, rb, act, threads, st);
      for (int64_t b = 0; b < B; ++b) {
        if (t >= lens_[b]) continue;
        const int64_t row = layout_ == 0 ? t * B + b : b * T + t;
        const float* xg = &xw_[row * G];
        const float* hg = &hr_[b * G];
        float* h = &h_[b * H];
        if (gru_) gru_step(xg, hg, &hn_[b * H], act, h, st.cell);
        else
          for (int64_t j = 0; j < H; ++j) h[j] = act[0](clip(xg[j] + hg[j]));
        if (y) {
          const int64_t yoff = layout_ == 0 ? ((t * num_dirs_ + d) * B + b) * H : ((b * T + t) * num_dirs_ + d) * H;
          std::copy(h, h + H, y + yoff);
        }
      }
    }
    if (ctx.outputs.size() > 1 && ctx.outputs[1] && ctx.outputs[1]->data)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) ctx.out(1).as<float>()[state_off(d, b) + j] = h_[b * H + j];
  }

  /// hn = (r * H_{t-1}) Rn^T + Rbn for every batch entry at step t
  /// (linear_before_reset = 0), with r = f(xr + hr).
  void reset_projection(int64_t t, const float* r, const float* rb, const Activation* act, int threads,
                        DirectionState& st) const {
    std::vector<float>&xw_ = st.xw, &hr_ = st.hr, &rh_ = st.rh, &hn_ = st.hn, &h_ = st.h;
    const int64_t H = hidden_, G = 3 * H, B = batch_, T = seq_;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t row = layout_ == 0 ? t * B + b : b * T + t;
      for (int64_t j = 0; j < H; ++j) {
        const float rr = act[0](clip(xw_[row * G + H + j] + hr_[b * G + H + j]));
        rh_[b * H + j] = rr * h_[b * H + j];
        hn_[b * H + j] = rb ? rb[2 * H + j] : 0.f;
      }
    }
    if (H > 0 && B > 0) st.reset_product.run(B, H, H, rh_.data(), r + 2 * H * H, 1.f, hn_.data(), threads);
  }

  /// One GRU cell update for one batch entry. xg, hg: pre-activations [z, r, n]
  /// from X and H; hn: the linear_before_reset = 0 candidate projection.
  /// The default cell (Sigmoid, Tanh; no clip) runs as vector passes: one
  /// sigmoid over z and r, one tanh over the candidates (elementwise_simd's
  /// loops, within a few ulp of libm) instead of three libm calls per unit.
  void gru_step(const float* xg, const float* hg, const float* hn, const Activation* act, float* h,
                std::vector<float>& cell_) const {
    const int64_t H = hidden_;
    if (act[0].kind == Activation::kSigmoid && act[1].kind == Activation::kTanh && clip_ <= 0.f) {
      cell_.resize(static_cast<size_t>(3 * H));
      float *zr = cell_.data(), *n = cell_.data() + 2 * H;
      // r only for linear_before_reset (otherwise reset_projection used it).
      const int64_t gates = linear_before_reset_ ? 2 * H : H;
      for (int64_t j = 0; j < gates; ++j) zr[j] = xg[j] + hg[j];
      simd::unary_f32(simd::UnOp::kSigmoid, zr, zr, gates);
      for (int64_t j = 0; j < H; ++j)
        n[j] = linear_before_reset_ ? xg[2 * H + j] + zr[H + j] * hg[2 * H + j] : xg[2 * H + j] + hn[j];
      simd::unary_f32(simd::UnOp::kTanh, n, n, H);
      for (int64_t j = 0; j < H; ++j) h[j] = (1.f - zr[j]) * n[j] + zr[j] * h[j];
      return;
    }
    for (int64_t j = 0; j < H; ++j) {
      const float z = act[0](clip(xg[j] + hg[j]));
      const float rr = act[0](clip(xg[H + j] + hg[H + j]));
      const float cand = linear_before_reset_ ? xg[2 * H + j] + rr * hg[2 * H + j] : xg[2 * H + j] + hn[j];
      const float n = act[1](clip(cand));
      h[j] = (1.f - z) * n + z * h[j];
    }
  }

  std::string desc_;
  bool gru_;
  int64_t gates_n_;
  int64_t layout_;
  bool linear_before_reset_;
  float clip_;
  int num_dirs_ = 1;
  bool reverse_only_ = false;
  std::vector<Activation> acts_;
  int64_t seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0;
  std::vector<int64_t> lens_;
  DirectionState dirs_[2];
};

KernelFactory recurrent_factory(bool gru) {
  return [gru](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
    for (size_t i = 0; i < dts.size(); ++i)
      if (i != 4) require_f32(n, dts[i]);
    return std::make_unique<RecurrentKernel>(n, gru);
  };
}

const bool kRecurrentRegistered = [] {
  register_kernel("", "GRU", recurrent_factory(true), __FILE__);
  register_kernel("", "RNN", recurrent_factory(false), __FILE__);
  return true;
}();

}  // namespace
}  // namespace gec::kernels::cpu
