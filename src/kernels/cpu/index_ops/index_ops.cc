// CPU kernels of the selection and scan ops (schemas in ops/index_ops.cc):
// TopK-11, CumSum-14, Unique-11, Compress-11, ReverseSequence-10,
// NonMaxSuppression-11. Native loops: these ops are rare and small in the
// models we run, so clarity wins over speed here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "kernels/cpu/common/dtype_dispatch.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {
namespace {

int64_t prod(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

int64_t norm_axis(int64_t axis, size_t rank, const ir::Node& node) {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    fail(ErrorCode::kInvalidArgument,
         node.describe() + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return a;
}

int64_t scalar_int(const TensorView& t, const ir::Node& node, const char* what) {
  if (t.numel() != 1) fail(ErrorCode::kInvalidArgument, node.describe() + ": " + what + " must have one element");
  if (t.dtype == DType::kInt64) return *t.as<int64_t>();
  if (t.dtype == DType::kInt32) return *t.as<int32_t>();
  fail(ErrorCode::kUnsupported, node.describe() + ": " + what + " of dtype " + dtype_name(t.dtype));
}

// Copies n elements (strings by value) from src[s..] to dst[d..].
void copy_elems(const TensorView& src, int64_t s, const TensorView& dst, int64_t d, int64_t n) {
  if (n <= 0) return;
  if (src.dtype == DType::kString) {
    std::copy_n(src.as<std::string>() + s, n, dst.as<std::string>() + d);
    return;
  }
  const size_t es = dtype_size(src.dtype);
  std::memcpy(static_cast<char*>(dst.data) + static_cast<size_t>(d) * es,
              static_cast<const char*>(src.data) + static_cast<size_t>(s) * es, static_cast<size_t>(n) * es);
}

// ---- TopK ----------------------------------------------------------------------------

// Orders by value (largest or smallest first); equal values keep the lower
// index first, as ONNX TopK-11 specifies. NaN counts as larger than any number.
template <typename T>
bool topk_before(T a, int64_t ia, T b, int64_t ib, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) {
      if (na && nb) return ia < ib;
      return largest ? na : nb;
    }
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const ir::Node& n)
      : node_(n), axis_(n.get_int("axis", -1)), largest_(n.get_int("largest", 1) != 0) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const size_t a = static_cast<size_t>(norm_axis(axis_, x.shape.size(), node_));
    const int64_t k = ctx.out(0).shape[a];
    const int64_t n = x.shape[a];
    const int64_t outer = prod(x.shape, 0, a), inner = prod(x.shape, a + 1, x.shape.size());
    int64_t* idx_out = ctx.outputs.size() > 1 ? ctx.out(1).as<int64_t>() : nullptr;
    dispatch_arith(x.dtype, node_.describe(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x.as<T>();
      T* dst = ctx.out(0).as<T>();
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
          const T* line = src + o * n * inner + in;
          std::iota(order.begin(), order.end(), int64_t{0});
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
            return topk_before<T>(line[i * inner], i, line[j * inner], j, largest_);
          });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = o * k * inner + j * inner + in;
            dst[at] = line[order[static_cast<size_t>(j)] * inner];
            if (idx_out) idx_out[at] = order[static_cast<size_t>(j)];
          }
        }
    });
  }

 private:
  const ir::Node& node_;
  int64_t axis_;
  bool largest_;
};

// ---- CumSum --------------------------------------------------------------------------

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const ir::Node& n)
      : node_(n), exclusive_(n.get_int("exclusive", 0) != 0), reverse_(n.get_int("reverse", 0) != 0) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const size_t a = static_cast<size_t>(norm_axis(scalar_int(ctx.in(1), node_, "axis"), x.shape.size(), node_));
    const int64_t n = x.shape[a];
    const int64_t outer = prod(x.shape, 0, a), inner = prod(x.shape, a + 1, x.shape.size());
    dispatch_arith(x.dtype, node_.describe(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x.as<T>();
      T* dst = ctx.out(0).as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
          T acc = T(0);
          for (int64_t s = 0; s < n; ++s) {
            const int64_t j = reverse_ ? n - 1 - s : s;
            const int64_t at = (o * n + j) * inner + in;
            if (exclusive_) {
              dst[at] = acc;
              acc = static_cast<T>(acc + src[at]);
            } else {
              acc = static_cast<T>(acc + src[at]);
              dst[at] = acc;
            }
          }
        }
    });
  }

 private:
  const ir::Node& node_;
  bool exclusive_, reverse_;
};

// ---- Unique --------------------------------------------------------------------------

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const ir::Node& n)
      : node_(n), has_axis_(n.has_attr("axis")), axis_(n.get_int("axis", 0)), sorted_(n.get_int("sorted", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    if (x.dtype == DType::kString) return run_typed<std::string>(ctx);
    if (x.dtype == DType::kBool) return run_typed<uint8_t>(ctx);
    dispatch_arith(x.dtype, node_.describe(), [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  // Slice i of x along the axis (the whole element when flattened), as a key.
  template <typename T>
  void run_typed(KernelContext& ctx) {
    const TensorView& x = ctx.in(0);
    const size_t a = has_axis_ ? static_cast<size_t>(norm_axis(axis_, x.shape.size(), node_)) : 0;
    const int64_t count = has_axis_ ? x.shape[a] : x.numel();
    const int64_t outer = has_axis_ ? prod(x.shape, 0, a) : 1;
    const int64_t inner = has_axis_ ? prod(x.shape, a + 1, x.shape.size()) : 1;
    const T* src = x.as<T>();
    std::vector<std::vector<T>> keys(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      auto& key = keys[static_cast<size_t>(i)];
      key.reserve(static_cast<size_t>(outer * inner));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) key.push_back(src[(o * count + i) * inner + in]);
    }
    // id = rank of first occurrence; then the output order (sorted or not).
    std::map<std::vector<T>, int64_t> id_of;
    std::vector<int64_t> first, counts, inverse_id(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      auto [it, inserted] = id_of.emplace(keys[static_cast<size_t>(i)], static_cast<int64_t>(first.size()));
      if (inserted) {
        first.push_back(i);
        counts.push_back(0);
      }
      counts[static_cast<size_t>(it->second)] += 1;
      inverse_id[static_cast<size_t>(i)] = it->second;
    }
    const int64_t u = static_cast<int64_t>(first.size());
    std::vector<int64_t> order;  // output position -> id
    if (sorted_) {
      for (const auto& kv : id_of) order.push_back(kv.second);
    } else {
      order.resize(static_cast<size_t>(u));
      std::iota(order.begin(), order.end(), int64_t{0});
    }
    std::vector<int64_t> pos_of(static_cast<size_t>(u));
    for (int64_t p = 0; p < u; ++p) pos_of[static_cast<size_t>(order[static_cast<size_t>(p)])] = p;

    Shape y_shape = has_axis_ ? x.shape : Shape{u};
    if (has_axis_) y_shape[a] = u;
    TensorView* y = ctx.allocate_output(0, x.dtype, y_shape);
    T* dst = y->as<T>();
    for (int64_t p = 0; p < u; ++p) {
      const auto& key = keys[static_cast<size_t>(first[static_cast<size_t>(order[static_cast<size_t>(p)])])];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in)
          dst[(o * u + p) * inner + in] = key[static_cast<size_t>(o * inner + in)];
    }
    auto emit = [&](size_t i, int64_t n, auto value_at) {
      if (i >= ctx.outputs.size()) return;
      TensorView* t = ctx.allocate_output(i, DType::kInt64, {n});
      for (int64_t j = 0; j < n; ++j) t->as<int64_t>()[j] = value_at(j);
    };
    emit(1, u, [&](int64_t p) { return first[static_cast<size_t>(order[static_cast<size_t>(p)])]; });
    emit(2, count, [&](int64_t i) { return pos_of[static_cast<size_t>(inverse_id[static_cast<size_t>(i)])]; });
    emit(3, u, [&](int64_t p) { return counts[static_cast<size_t>(order[static_cast<size_t>(p)])]; });
  }

  const ir::Node& node_;
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

// ---- Compress ------------------------------------------------------------------------

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const ir::Node& n) : node_(n), has_axis_(n.has_attr("axis")), axis_(n.get_int("axis", 0)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const TensorView& c = ctx.in(1);
    const size_t a = has_axis_ ? static_cast<size_t>(norm_axis(axis_, x.shape.size(), node_)) : 0;
    const int64_t len = has_axis_ ? x.shape[a] : x.numel();
    const int64_t outer = has_axis_ ? prod(x.shape, 0, a) : 1;
    const int64_t inner = has_axis_ ? prod(x.shape, a + 1, x.shape.size()) : 1;
    const int64_t kept = has_axis_ ? ctx.out(0).shape[a] : ctx.out(0).numel();
    const uint8_t* cond = c.as<uint8_t>();
    for (int64_t o = 0; o < outer; ++o) {
      int64_t j = 0;
      for (int64_t i = 0; i < std::min(len, c.numel()); ++i)
        if (cond[i]) copy_elems(x, (o * len + i) * inner, ctx.out(0), (o * kept + j++) * inner, inner);
    }
  }

 private:
  const ir::Node& node_;
  bool has_axis_;
  int64_t axis_;
};

// ---- ReverseSequence -----------------------------------------------------------------

class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const ir::Node& n)
      : node_(n), batch_axis_(n.get_int("batch_axis", 1)), time_axis_(n.get_int("time_axis", 0)) {}
  void run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(0);
    const int64_t batches = x.shape[static_cast<size_t>(batch_axis_)];
    const int64_t steps = x.shape[static_cast<size_t>(time_axis_)];
    const int64_t inner = prod(x.shape, 2, x.shape.size());
    auto at = [&](int64_t t, int64_t b) { return (time_axis_ == 0 ? t * batches + b : b * steps + t) * inner; };
    const TensorView& lens = ctx.in(1);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t len = lens.dtype == DType::kInt32 ? lens.as<int32_t>()[b] : lens.as<int64_t>()[b];
      if (len < 0 || len > steps)
        fail(ErrorCode::kInvalidArgument, node_.describe() + ": sequence_lens[" + std::to_string(b) + "] = " +
                                              std::to_string(len) + " is out of range [0, " +
                                              std::to_string(steps) + "]");
      for (int64_t t = 0; t < steps; ++t) copy_elems(x, at(t < len ? len - 1 - t : t, b), ctx.out(0), at(t, b), inner);
    }
  }

 private:
  const ir::Node& node_;
  int64_t batch_axis_, time_axis_;
};

// ---- NonMaxSuppression ---------------------------------------------------------------

struct Box {
  float y1, x1, y2, x2;
};

// Corners with y1 <= y2 and x1 <= x2 from either box encoding.
Box read_box(const float* p, bool center) {
  if (center) {
    const float xc = p[0], yc = p[1], w = p[2], h = p[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

float iou(const Box& a, const Box& b) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0.f;
  const float inter = ih * iw;
  const float uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni > 0 ? inter / uni : 0.f;
}

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(const ir::Node& n) : node_(n), center_(n.get_int("center_point_box", 0) != 0) {}
  void run(KernelContext& ctx) override {
    const TensorView& boxes = ctx.in(0);
    const TensorView& scores = ctx.in(1);
    if (boxes.dtype != DType::kFloat32 || scores.dtype != DType::kFloat32)
      fail(ErrorCode::kUnsupported, node_.describe() + ": only float32 boxes and scores are supported");
    if (boxes.shape.size() != 3 || boxes.shape[2] != 4 || scores.shape.size() != 3 ||
        scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
      fail(ErrorCode::kInvalidArgument, node_.describe() + ": boxes " + shape_str(boxes.shape) + " and scores " +
                                            shape_str(scores.shape) + " do not match");
    const int64_t max_out = ctx.has_input(2) && ctx.in(2).numel() > 0 ? *ctx.in(2).as<int64_t>() : 0;
    const float iou_th = ctx.has_input(3) && ctx.in(3).numel() > 0 ? *ctx.in(3).as<float>() : 0.f;
    const bool has_score_th = ctx.has_input(4) && ctx.in(4).numel() > 0;
    const float score_th = has_score_th ? *ctx.in(4).as<float>() : 0.f;
    const int64_t nb = boxes.shape[0], nc = scores.shape[1], n = boxes.shape[1];
    std::vector<int64_t> selected;  // triples
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t c = 0; c < nc && max_out > 0; ++c) {
        const float* s = scores.as<float>() + (b * nc + c) * n;
        std::vector<int64_t> cand;
        for (int64_t i = 0; i < n; ++i)
          if (!has_score_th || s[i] > score_th) cand.push_back(i);
        std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
        std::vector<Box> kept;
        for (int64_t i : cand) {
          const Box bx = read_box(boxes.as<float>() + (b * n + i) * 4, center_);
          bool ok = true;
          for (const Box& k : kept) ok = ok && !(iou(bx, k) > iou_th);
          if (!ok) continue;
          kept.push_back(bx);
          selected.insert(selected.end(), {b, c, i});
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
        }
      }
    const int64_t count = static_cast<int64_t>(selected.size() / 3);
    TensorView* out = ctx.allocate_output(0, DType::kInt64, {count, 3});
    std::copy(selected.begin(), selected.end(), out->as<int64_t>());
  }

 private:
  const ir::Node& node_;
  bool center_;
};

template <typename K>
KernelFactory factory() {
  return [](const ir::Node& n, const KernelConfig&) -> std::unique_ptr<Kernel> {
    return std::make_unique<K>(n);
  };
}

GEC_REGISTER_KERNEL("", "TopK", factory<TopKKernel>());
GEC_REGISTER_KERNEL("", "CumSum", factory<CumSumKernel>());
GEC_REGISTER_KERNEL("", "Unique", factory<UniqueKernel>());
GEC_REGISTER_KERNEL("", "Compress", factory<CompressKernel>());
GEC_REGISTER_KERNEL("", "ReverseSequence", factory<ReverseSequenceKernel>());
GEC_REGISTER_KERNEL("", "NonMaxSuppression", factory<NmsKernel>());

}  // namespace
}  // namespace gec::kernels::cpu
