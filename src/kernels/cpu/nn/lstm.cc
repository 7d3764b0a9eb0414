// LSTM (ONNX LSTM-14) on CPU: forward, reverse and bidirectional, optional
// B, sequence_lens, initial_h, initial_c and peepholes P, layout 0 and 1,
// input_forget, clip, and the activation functions of the operator text.
//
// Per direction, the input projection of all steps is one product
// (X [T*B, I] x W^T [I, 4H], rnn_common.h ProductNt: a oneDNN MatMul, or dot
// products for a few rows) plus both biases; each step then adds
// H_{t-1} x R^T (a second product) and applies the gate equations
//   i = f(xi + hi + Pi*C),  f = f(xf + hf + Pf*C),  c = g(xc + hc),
//   C' = f*C + i*c,  o = f(xo + ho + Po*C'),  H' = o*h(C')
// with gate order i, o, f, c in W, R and B, as ONNX defines it. Batch
// entries whose sequence_lens is shorter keep their state and write zeros to
// Y after their last step (for reverse, they start at step len-1). The
// default cell (Sigmoid, Tanh, Tanh; no clip, input_forget or peepholes)
// runs its gate math as vector passes over the gates (step_vectors). A
// bidirectional LSTM on several threads runs its two directions at once,
// one thread each (run_directions): they are independent chains of small
// steps, which split over threads paid an OpenMP fork and join per step.
#include <dnnl.h>

#include <cmath>
#include <exception>

#include "kernels/cpu/common/onednn_common.h"
#include "kernels/cpu/elementwise/elementwise_simd.h"
#include "kernels/cpu/nn/rnn_common.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

class LstmKernel final : public Kernel {
 public:
  explicit LstmKernel(const ir::Node& n)
      : desc_(n.describe()),
        layout_(n.get_int("layout", 0)),
        input_forget_(n.get_int("input_forget", 0) != 0),
        clip_(n.get_float("clip", 0.f)) {
    const std::string dir = n.get_string("direction", "forward");
    num_dirs_ = dir == "bidirectional" ? 2 : 1;
    reverse_only_ = dir == "reverse";
    acts_ = parse_activations(n, num_dirs_, {"Sigmoid", "Tanh", "Tanh"});
    for (DirectionState& st : dirs_) {
      st.input_product.name(desc_ + " X W^T");
      st.step_product.name(desc_ + " H R^T");
    }
  }

  void run(KernelContext& ctx) override {
    for (size_t i : {0, 1, 2}) require_f32(desc_, ctx.in(i).dtype);
    const Shape& xs = ctx.in(0).shape;
    seq_ = layout_ == 0 ? xs[0] : xs[1];
    batch_ = layout_ == 0 ? xs[1] : xs[0];
    input_ = xs[2];
    hidden_ = ctx.in(2).shape[2];  // the schema has checked R against hidden_size, W and X
    check_weights(ctx, 4);
    read_lengths(ctx);
    if (!ctx.outputs.empty() && ctx.outputs[0] && ctx.outputs[0]->data)  // steps past sequence_lens stay 0
      std::fill(ctx.out(0).as<float>(), ctx.out(0).as<float>() + ctx.out(0).numel(), 0.f);
    // Each direction's input projection (the largest product) on all the
    // threads, then the recurrences, both directions at once where they can.
    for (int d = 0; d < num_dirs_; ++d) project_input(ctx, d, ctx.num_threads, dirs_[static_cast<size_t>(d)]);
    run_directions(num_dirs_, ctx.num_threads, [&](int d, int threads) {
      run_direction(ctx, d, reverse_only_ || d == 1, threads, dirs_[static_cast<size_t>(d)]);
    });
  }

  std::string impl_name() const override { return "native.lstm+onednn_matmul"; }

 private:
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

  /// Offset of state [dir, b, :] in initial_h/c, Y_h, Y_c for the layout.
  int64_t state_off(int d, int64_t b) const {
    return (layout_ == 0 ? d * batch_ + b : b * num_dirs_ + d) * hidden_;
  }

  /// One direction's buffers, reused across runs.
  struct DirectionState {
    std::vector<float> xw, gates, h, c;
    ProductNt input_product, step_product;  // X W^T, H R^T
  };

  /// Direction `d`'s input projection X W^T + Wb + Rb for all (t, b), rows
  /// in X's own order, into st.xw, on `threads` threads.
  void project_input(KernelContext& ctx, int d, int threads, DirectionState& st) {
    const int64_t G = 4 * hidden_, T = seq_, B = batch_, I = input_;
    const float* x = ctx.in(0).as<float>();
    const float* w = ctx.in(1).as<float>() + d * G * I;
    st.xw.resize(static_cast<size_t>(T * B * G));
    if (T * B > 0 && I > 0)
      st.input_product.run(T * B, G, I, x, w, 0.f, st.xw.data(), threads);
    else
      std::fill(st.xw.begin(), st.xw.end(), 0.f);
    if (ctx.has_input(3)) add_bias(ctx.in(3).as<float>() + d * 2 * G, st.xw);
  }

  /// Direction `d`'s steps on `threads` threads with its buffers `st`
  /// (st.xw from project_input).
  void run_direction(KernelContext& ctx, int d, bool reverse, int threads, DirectionState& st) {
    std::vector<float>&xw_ = st.xw, &gates_ = st.gates, &h_ = st.h, &c_ = st.c;
    const int64_t H = hidden_, G = 4 * H, T = seq_, B = batch_;
    const float* r = ctx.in(2).as<float>() + d * G * H;
    const float* p = ctx.has_input(7) ? ctx.in(7).as<float>() + d * 3 * H : nullptr;
    // State, batch-major [B, H].
    h_.assign(static_cast<size_t>(B * H), 0.f);
    c_.assign(static_cast<size_t>(B * H), 0.f);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < H; ++j) {
        if (ctx.has_input(5)) h_[b * H + j] = ctx.in(5).as<float>()[state_off(d, b) + j];
        if (ctx.has_input(6)) c_[b * H + j] = ctx.in(6).as<float>()[state_off(d, b) + j];
      }
    gates_.resize(static_cast<size_t>(B * G));
    const Activation* act = &acts_[3 * d];
    float* y = !ctx.outputs.empty() && ctx.outputs[0] ? ctx.out(0).as<float>() : nullptr;
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = reverse ? T - 1 - s : s;
      for (int64_t b = 0; b < B; ++b) {
        const int64_t row = layout_ == 0 ? t * B + b : b * T + t;
        std::copy(&xw_[row * G], &xw_[row * G] + G, &gates_[b * G]);
      }
      if (H > 0) st.step_product.run(B, G, H, h_.data(), r, 1.f, gates_.data(), threads);
      for (int64_t b = 0; b < B; ++b) {
        if (t >= lens_[b]) continue;  // past this sequence's end: keep state, Y stays 0
        step(&gates_[b * G], p, act, &h_[b * H], &c_[b * H]);
        if (y) {
          const int64_t yoff = layout_ == 0 ? ((t * num_dirs_ + d) * B + b) * H : ((b * T + t) * num_dirs_ + d) * H;
          std::copy(&h_[b * H], &h_[b * H] + H, y + yoff);
        }
      }
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < H; ++j) {
        if (ctx.outputs.size() > 1 && ctx.outputs[1] && ctx.outputs[1]->data) ctx.out(1).as<float>()[state_off(d, b) + j] = h_[b * H + j];
        if (ctx.outputs.size() > 2 && ctx.outputs[2] && ctx.outputs[2]->data) ctx.out(2).as<float>()[state_off(d, b) + j] = c_[b * H + j];
      }
  }

  void add_bias(const float* bias, std::vector<float>& xw_) const {
    const int64_t G = 4 * hidden_;
    for (int64_t row = 0; row < seq_ * batch_; ++row)
      for (int64_t k = 0; k < G; ++k) xw_[row * G + k] += bias[k] + bias[G + k];
  }

  float clip(float v) const { return clip_ > 0 ? std::min(clip_, std::max(-clip_, v)) : v; }

  /// True when a direction's activations are the defaults (Sigmoid, Tanh,
  /// Tanh) and neither clip nor input_forget applies: step_vectors can run.
  bool default_cell(const Activation* act) const {
    return act[0].kind == Activation::kSigmoid && act[1].kind == Activation::kTanh &&
           act[2].kind == Activation::kTanh && clip_ <= 0.f && !input_forget_;
  }

  /// step for the default cell without peepholes, on the Sigmoid and Tanh
  /// kernels' vector loops (elementwise_simd.h, within a few ulp of libm):
  /// i, o, f are the first 3H pre-activations, one sigmoid pass; c one tanh
  /// pass; then C' = f*C + i*c and H' = o * tanh(C'), tanh(C') in c's slot
  /// of `g` (no longer needed). `g` is overwritten.
  /// The scalar loop called libm's expf / tanhf five times per unit
  /// (silero_vad_v5's LSTM node, 128 units: 0.021-0.027 -> 0.018 ms).
  void step_vectors(float* g, float* h, float* c) {
    const int64_t H = hidden_;
    simd::unary_f32(simd::UnOp::kSigmoid, g, g, 3 * H);
    simd::unary_f32(simd::UnOp::kTanh, g + 3 * H, g + 3 * H, H);
    const float *it = g, *ot = g + H, *ft = g + 2 * H;
    float* ct = g + 3 * H;
    for (int64_t j = 0; j < H; ++j) c[j] = ft[j] * c[j] + it[j] * ct[j];
    simd::unary_f32(simd::UnOp::kTanh, c, ct, H);
    for (int64_t j = 0; j < H; ++j) h[j] = ot[j] * ct[j];
  }

  /// One cell update for one batch entry; g = pre-activations [i, o, f, c].
  void step(float* g, const float* p, const Activation* act, float* h, float* c) {
    if (!p && default_cell(act)) return step_vectors(g, h, c);
    const int64_t H = hidden_;
    for (int64_t j = 0; j < H; ++j) {
      const float cprev = c[j];
      const float it = act[0](clip(g[j] + (p ? p[j] * cprev : 0.f)));
      const float ft = input_forget_ ? 1.f - it : act[0](clip(g[2 * H + j] + (p ? p[2 * H + j] * cprev : 0.f)));
      const float ct = act[1](clip(g[3 * H + j]));
      const float cnew = ft * cprev + it * ct;
      const float ot = act[0](clip(g[H + j] + (p ? p[H + j] * cnew : 0.f)));
      c[j] = cnew;
      h[j] = ot * act[2](cnew);
    }
  }

  std::string desc_;
  int64_t layout_;
  bool input_forget_;
  float clip_;
  int num_dirs_ = 1;
  bool reverse_only_ = false;
  std::vector<Activation> acts_;
  int64_t seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0;
  std::vector<int64_t> lens_;
  DirectionState dirs_[2];
};

GEC_REGISTER_KERNEL("", "LSTM", [](const ir::Node& n, const KernelConfig& config_) -> std::unique_ptr<Kernel> {
  const std::vector<DType>& dts = config_.input_dtypes;
  for (size_t i = 0; i < dts.size(); ++i)
    if (i != 4) require_f32(n, dts[i]);
  return std::make_unique<LstmKernel>(n);
});

}  // namespace
}  // namespace gec::kernels::cpu
