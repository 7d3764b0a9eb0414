// oneDNN engine/stream singletons and descriptor helpers (see onednn_common.h).
#include "kernels/cpu/common/onednn_common.h"

#include <cstring>

namespace gec::kernels::cpu {

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& cpu_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

dnnl::memory::dims to_dims(const Shape& s) {
  if (s.empty()) return {1};
  return dnnl::memory::dims(s.begin(), s.end());
}

dnnl::memory::desc plain_md(const Shape& s, dnnl::memory::data_type dt) {
  dnnl::memory::dims d = to_dims(s);
  dnnl::memory::dims st(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * std::max<int64_t>(d[i + 1], 1);
  return dnnl::memory::desc(d, dt, st);
}

dnnl::memory::desc strided_md(const Shape& dims, const Shape& strides, dnnl::memory::data_type dt) {
  return dnnl::memory::desc(to_dims(dims), dt, dnnl::memory::dims(strides.begin(), strides.end()));
}

void require_f32(const std::string& node_desc, DType dt) {
  if (dt != DType::kFloat32 && dt != DType::kUndefined)
    fail(ErrorCode::kUnsupported,
         node_desc + ": dtype " + dtype_name(dt) + " is not supported (float32 only)");
}

void require_f32(const ir::Node& node, DType dt) { require_f32(node.describe(), dt); }

void rethrow_dnnl(const std::string& node_desc, const std::string& what, const dnnl::error& e) {
  fail(ErrorCode::kUnsupported,
       node_desc + ": oneDNN could not " + what + " (" + e.what() + ", status " +
           std::to_string(static_cast<int>(e.status)) + ")");
}

bool any_empty(const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes)
    if (shape_numel(s) == 0) return true;
  return false;
}

std::string packed_layout(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  const bool wino = to.data.format_kind == dnnl_format_kind_wino;
  std::string out = std::string(wino ? "onednn-wino/" : "onednn-blocked/") + std::to_string(DNNL_VERSION_MAJOR) +
                    "." + std::to_string(DNNL_VERSION_MINOR);
  const auto put = [&](int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const dnnl::memory::desc* d : {&from, &to}) {
    const dnnl_memory_desc_t& m = d->data;
    if (d == &to && wino) {  // Winograd weights: the transform's parameters place every element
      if (m.extra.flags != 0 || m.ndims < 0 || m.ndims > DNNL_MAX_NDIMS) return "";
      const dnnl_wino_desc_t& w = m.format_desc.wino_desc;
      put(m.ndims);
      put(m.data_type);
      for (int i = 0; i < m.ndims; ++i) put(m.dims[i]);
      for (int64_t v : {static_cast<int64_t>(w.wino_format), int64_t{w.r}, int64_t{w.alpha}, int64_t{w.ic},
                        int64_t{w.oc}, int64_t{w.ic_block}, int64_t{w.oc_block}, int64_t{w.ic2_block},
                        int64_t{w.oc2_block}, static_cast<int64_t>(w.size)})
        put(v);
      float scale = w.adj_scale;
      int32_t scale_bits = 0;
      std::memcpy(&scale_bits, &scale, sizeof scale_bits);
      put(scale_bits);
      continue;
    }
    if (m.format_kind != dnnl_blocked || m.extra.flags != 0 || m.ndims < 0 || m.ndims > DNNL_MAX_NDIMS) return "";
    const dnnl_blocking_desc_t& bd = m.format_desc.blocking;
    if (bd.inner_nblks < 0 || bd.inner_nblks > DNNL_MAX_NDIMS) return "";
    put(m.ndims);
    put(m.data_type);
    put(m.offset0);
    for (int i = 0; i < m.ndims; ++i) {
      put(m.dims[i]);
      put(m.padded_dims[i]);
      put(m.padded_offsets[i]);
      put(bd.strides[i]);
    }
    put(bd.inner_nblks);
    for (int i = 0; i < bd.inner_nblks; ++i) {
      put(bd.inner_blks[i]);
      put(bd.inner_idxs[i]);
    }
  }
  return out;
}

void PackedWeights::reset(const dnnl::memory::desc& user, const dnnl::memory::desc& wanted) {
  // The same layouts as before (a reshape for another thread count, or an
  // input shape that does not change the weights): keep the packed copy.
  if (user_ && user_.get_desc() == user && (plain_ ? user == wanted : packed_ && packed_.get_desc() == wanted)) return;
  plain_ = user == wanted;
  user_ = unbound_memory(user);
  packed_from_ = nullptr;
  shared_entry_.reset();
  reorder_ = dnnl::reorder();  // made at the first pack_into: a stored copy needs none
  if (!plain_) {
    packed_ = unbound_memory(wanted);  // a buffer of its own or shared bytes, at the first get()
    owned_ = false;
  }
}

namespace {
// A packed copy in a SharedWeights: the layout and the buffer holding it.
struct SharedPacked {
  dnnl::memory::desc user, desc;  // the layout packed from, and into
  dnnl::memory mem;
};
}  // namespace

void PackedWeights::pack_into(dnnl::memory& to) {
  if (!reorder_) {
    const dnnl::reorder::primitive_desc pd(user_, packed_, Scratchpad::attr());
    reorder_ = dnnl::reorder(pd);
    scratch_.set(pd.scratchpad_desc());
  }
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_FROM, user_}, {DNNL_ARG_TO, to}};
  scratch_.bind(args, nullptr);
  reorder_.execute(cpu_stream(), args);
  cpu_stream().wait();
}

dnnl::memory& PackedWeights::get(const void* data, const KernelContext& ctx, size_t input) {
  try {
    return get_or_pack(data, ctx, input);
  } catch (const dnnl::error& e) {
    rethrow_dnnl(ctx.node ? ctx.node->describe() : "a kernel", "pack the weights of input " + std::to_string(input), e);
  }
}

dnnl::memory& PackedWeights::get_or_pack(const void* data, const KernelContext& ctx, size_t input) {
  bind(user_, data);
  if (plain_) return user_;
  SharedWeights* shared = shared_weights_for(ctx, input);
  if (ctx.node && !constant_input(*ctx.node, input)) packed_from_ = nullptr;  // computed or fed: pack again
  if (data != packed_from_ && shared) {
    const dnnl::memory::desc wanted = packed_.get_desc(), from = user_.get_desc();
    const std::string layout = packed_layout(from, wanted);
    static const char kKind = 0;  // SharedPacked entries
    shared_entry_ = shared->find_or_make(
        data, &kKind,
        [&](const void* e) {
          const auto* p = static_cast<const SharedPacked*>(e);
          return p->desc == wanted && p->user == from;
        },
        [&](const SharedWeights::Packed& stored) -> std::shared_ptr<const void> {
          // The offline model's copy, when it is packed the way this primitive wants.
          if (layout.empty() || stored.layout != layout || stored.bytes != wanted.get_size()) return nullptr;
          auto p = std::make_shared<SharedPacked>();
          p->desc = wanted;
          p->user = from;
          // Read-only mapped bytes: oneDNN only reads DNNL_ARG_WEIGHTS.
          p->mem = dnnl::memory(wanted, cpu_engine(), const_cast<void*>(stored.data));
          return p;
        },
        [&]() {
          auto p = std::make_shared<SharedPacked>();
          p->desc = wanted;
          p->user = from;
          p->mem = dnnl::memory(wanted, cpu_engine());
          // Zeros first: a layout with gaps (rows padded, blocks past the
          // dims) leaves bytes the reorder does not write, and the compiler
          // stores the whole copy (the same bytes in every compile).
          std::memset(p->mem.get_data_handle(), 0, wanted.get_size());
          pack_into(p->mem);
          shared->release_plain(data, from.get_size());
          SharedWeights::Entry e{p, {layout, p->mem.get_data_handle(), wanted.get_size()}};
          return e;
        });
    // Our own memory object over the shared bytes: nothing mutable is shared.
    packed_ = dnnl::memory(wanted, cpu_engine(), static_cast<const SharedPacked*>(shared_entry_.get())->mem.get_data_handle());
    owned_ = false;
    packed_from_ = data;
  }
  if (data != packed_from_) {
    if (!owned_) {
      packed_ = dnnl::memory(packed_.get_desc(), cpu_engine());  // owns its buffer
      owned_ = true;
      shared_entry_.reset();
    }
    pack_into(packed_);
    packed_from_ = data;
  }
  return packed_;
}

void PackedWeights::pack_constant(const KernelContext& ctx, size_t input) {
  if (user_ && ctx.node && constant_input(*ctx.node, input) && ctx.has_input(input) && ctx.in(input).data)
    get(ctx.in(input).data, ctx, input);
}

dnnl::primitive_attr Scratchpad::attr(dnnl::primitive_attr a) {
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void Scratchpad::set(const dnnl::memory::desc& md) {
  md_ = md;
  mem_ = md.get_size() > 0 ? unbound_memory(md) : dnnl::memory();
}

void Scratchpad::bind(std::unordered_map<int, dnnl::memory>& args, ScratchBuffer* run) {
  if (md_.get_size() == 0) {
    args.erase(DNNL_ARG_SCRATCHPAD);
    return;
  }
  mem_.set_data_handle((run ? run : &own_)->get(md_.get_size()));
  args[DNNL_ARG_SCRATCHPAD] = mem_;
}

void* Scratchpad::bind_with(std::unordered_map<int, dnnl::memory>& args, ScratchBuffer* run, size_t extra) {
  const size_t own = (md_.get_size() + 63) / 64 * 64;
  auto* base = static_cast<uint8_t*>((run ? run : &own_)->get(own + extra));
  if (md_.get_size() == 0) {
    args.erase(DNNL_ARG_SCRATCHPAD);
  } else {
    mem_.set_data_handle(base);
    args[DNNL_ARG_SCRATCHPAD] = mem_;
  }
  return base + own;
}

}  // namespace gec::kernels::cpu
