// CPU kernels of the random generators (schemas in ops/random.cc). One
// std::mt19937_64 per kernel: seeded from the `seed` attribute when given
// (so a session repeats its sequence), else from std::random_device. The
// values can never match another engine's; only dtype, shape and the
// distribution's range are meaningful.
#include <cmath>
#include <random>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

std::mt19937_64 make_engine(const ir::Node& n) {
  if (const ir::Attribute* s = n.find_attr("seed")) return std::mt19937_64(static_cast<uint64_t>(std::llround(s->f)));
  return std::mt19937_64(std::random_device{}());
}

// Writes f() (a double) into every element of a float32/float64 output.
template <typename F>
void fill_float(const TensorView& out, const ir::Node& n, F&& f) {
  dispatch_float(out.dtype, n.describe(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out.as<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = static_cast<T>(f());
  });
}

// RandomNormal(Like): mean + scale * N(0, 1).
class NormalKernel final : public Kernel {
 public:
  explicit NormalKernel(const ir::Node& n)
      : node_(n), engine_(make_engine(n)), dist_(n.get_float("mean", 0.f), n.get_float("scale", 1.f)) {}
  void run(KernelContext& ctx) override { fill_float(ctx.out(0), node_, [&] { return dist_(engine_); }); }

 private:
  const ir::Node& node_;
  std::mt19937_64 engine_;
  std::normal_distribution<double> dist_;
};

// RandomUniform(Like): U[low, high).
class UniformKernel final : public Kernel {
 public:
  explicit UniformKernel(const ir::Node& n)
      : node_(n), engine_(make_engine(n)), dist_(n.get_float("low", 0.f), n.get_float("high", 1.f)) {}
  void run(KernelContext& ctx) override { fill_float(ctx.out(0), node_, [&] { return dist_(engine_); }); }

 private:
  const ir::Node& node_;
  std::mt19937_64 engine_;
  std::uniform_real_distribution<double> dist_;
};

// Bernoulli-15: out[i] = 1 with probability in[i], else 0, in the output dtype.
class BernoulliKernel final : public Kernel {
 public:
  explicit BernoulliKernel(const ir::Node& n) : node_(n), engine_(make_engine(n)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    std::vector<uint8_t> bits(static_cast<size_t>(x.numel()));
    dispatch_float(x.dtype, node_.describe(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = unit_(engine_) < static_cast<double>(x.as<T>()[i]);
    });
    const TensorView& out = ctx.out(0);
    if (out.dtype == DType::kBool) {
      std::copy(bits.begin(), bits.end(), out.as<uint8_t>());
      return;
    }
    dispatch_arith(out.dtype, node_.describe(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < bits.size(); ++i) out.as<T>()[i] = static_cast<T>(bits[i]);
    });
  }

 private:
  const ir::Node& node_;
  std::mt19937_64 engine_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

// Multinomial-7: per batch row, sample_size draws of a class index with
// probability softmax(row).
class MultinomialKernel final : public Kernel {
 public:
  explicit MultinomialKernel(const ir::Node& n) : node_(n), engine_(make_engine(n)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& out = ctx.out(0);
    const int64_t batch = x.shape[0], classes = x.shape[1], samples = out.shape[1];
    std::vector<double> w(static_cast<size_t>(classes));
    for (int64_t b = 0; b < batch; ++b) {
      dispatch_float(x.dtype, node_.describe(), [&](auto tag) {
        using T = decltype(tag);
        double mx = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, static_cast<double>(x.as<T>()[b * classes + c]));
        for (int64_t c = 0; c < classes; ++c)
          w[static_cast<size_t>(c)] = std::exp(static_cast<double>(x.as<T>()[b * classes + c]) - mx);
      });
      std::discrete_distribution<int64_t> dist(w.begin(), w.end());
      for (int64_t s = 0; s < samples; ++s) {
        const int64_t c = dist(engine_);
        if (out.dtype == DType::kInt32) out.as<int32_t>()[b * samples + s] = static_cast<int32_t>(c);
        else out.as<int64_t>()[b * samples + s] = c;
      }
    }
  }

 private:
  const ir::Node& node_;
  std::mt19937_64 engine_;
};

template <typename K>
KernelFactory factory() {
  return [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<K>(n);
  };
}

GEC_REGISTER_KERNEL("", "RandomNormal", factory<NormalKernel>());
GEC_REGISTER_KERNEL("", "RandomNormalLike", factory<NormalKernel>());
GEC_REGISTER_KERNEL("", "RandomUniform", factory<UniformKernel>());
GEC_REGISTER_KERNEL("", "RandomUniformLike", factory<UniformKernel>());
GEC_REGISTER_KERNEL("", "Bernoulli", factory<BernoulliKernel>());
GEC_REGISTER_KERNEL("", "Multinomial", factory<MultinomialKernel>());

}  // namespace
}  // namespace gec::kernels::cpu
