// Helpers for the NN kernel tests: attribute shorthands and a kernel that is
// kept across runs and reshaped, as the executor does, only when an input
// shape changes (to exercise the create -> reshape -> run lifecycle).
#pragma once

#include "ops/layout.h"
#include "test_util.h"

namespace gec::testing {

/// `t` [N, C, H, W] (C % 16 == 0) as nChw16c bytes: [N][C/16][H][W][16].
inline Tensor to_nchw16c(const Tensor& t) {
  const Shape& s = t.shape();
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  Tensor b(DType::kFloat32, s);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p)
        b.as<float>()[((n * (C / 16) + c / 16) * HW + p) * 16 + c % 16] = t.as<float>()[(n * C + c) * HW + p];
  return b;
}

/// `t` [N, C, H, W] (plain) as the bytes of `l`: nhwc [N][H][W][C] or
/// nChw16c (C % 16 == 0); plain as it is.
inline Tensor to_layout(const Tensor& t, ops::Layout l) {
  if (l == ops::Layout::kNChw16c) return to_nchw16c(t);
  if (l == ops::Layout::kPlain) return t;
  const Shape& s = t.shape();
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  Tensor b(DType::kFloat32, s);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p) b.as<float>()[(n * HW + p) * C + c] = t.as<float>()[(n * C + c) * HW + p];
  return b;
}

/// n floats of a deterministic sawtooth: ((i * mul) % mod - mod / 2) * scale,
/// so weights, inputs and states of a test get different non-zero values of
/// both signs without a random generator.
inline std::vector<float> sawtooth(int64_t n, int mul, int mod, double scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((static_cast<int>((i * mul) % mod) - mod / 2) * scale);
  return v;
}

inline ir::Attribute ai(const std::string& n, int64_t v) { return ir::Attribute::Int(n, v); }
inline ir::Attribute af(const std::string& n, float v) { return ir::Attribute::Float(n, v); }
inline ir::Attribute as(const std::string& n, const std::string& v) { return ir::Attribute::String(n, v); }
inline ir::Attribute ais(const std::string& n, std::vector<int64_t> v) { return ir::Attribute::Ints(n, std::move(v)); }
inline ir::Attribute afs(const std::string& n, std::vector<float> v) { return ir::Attribute::Floats(n, std::move(v)); }

/// One node and its kernel, run repeatedly with outputs of given shapes.
class KernelHarness {
 public:
  KernelHarness(const std::string& op, size_t num_inputs, std::vector<ir::Attribute> attrs) {
    std::vector<ir::Value*> ins;
    for (size_t i = 0; i < num_inputs; ++i)
      ins.push_back(g_.add_value("in" + std::to_string(i), ir::TensorType{DType::kFloat32, false, {}}));
    node_ = g_.add_node(op, ins, {"out0"}, "h_" + op);
    node_->attrs = std::move(attrs);
    kernel_ = kernels::create_kernel(*node_);
  }
  Tensor run(const std::vector<Tensor>& inputs, const Shape& out_shape) {
    std::vector<TensorView> views;
    for (const Tensor& t : inputs) views.push_back(t.view());
    kernels::KernelContext ctx;
    for (auto& v : views) ctx.inputs.push_back(v.data ? &v : nullptr);
    Tensor out(DType::kFloat32, out_shape);
    TensorView ov = out.view();
    ctx.outputs.push_back(&ov);
    ctx.num_threads = 2;
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs) shapes.push_back(t.shape());
    if (!reshaped_ || shapes != shapes_) {
      kernel_->reshape(ctx);
      shapes_ = shapes;
      reshaped_ = true;
    }
    kernel_->run(ctx);
    return out;
  }

 private:
  ir::Graph g_;
  ir::Node* node_;
  std::unique_ptr<kernels::Kernel> kernel_;
  std::vector<Shape> shapes_;
  bool reshaped_ = false;
};

}  // namespace gec::testing
