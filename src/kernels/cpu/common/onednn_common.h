// Shared plumbing for the oneDNN-backed CPU kernels: the process-wide CPU
// engine, a per-thread stream, plain (row-major) memory descriptors built from
// gec Shapes, and the error conversion that turns a oneDNN refusal into a
// gec::Error naming the node.
//
// Layout convention at the kernel boundary: every tensor is dense row-major
// ("abcd..."), exactly as the arena holds it; only weights may be reordered
// into a oneDNN-chosen layout, and those live in kernel-owned buffers.
#pragma once

#include <dnnl.hpp>

#include <string>
#include <unordered_map>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace gec::kernels::cpu {

using kernels::ScratchBuffer;

/// The one CPU engine of the process (oneDNN engine kind cpu, index 0).
dnnl::engine& cpu_engine();

/// A stream on cpu_engine(), one per calling thread (streams may run kernels
/// concurrently, and a dnnl::stream is not meant to be shared across threads).
dnnl::stream& cpu_stream();

/// Shape -> oneDNN dims; a rank-0 shape becomes {1}.
dnnl::memory::dims to_dims(const Shape& s);

/// Dense row-major f32 descriptor of `s` (rank 0 is treated as [1]).
dnnl::memory::desc plain_md(const Shape& s, dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

/// Descriptor with explicit element strides (for transposed or permuted views).
dnnl::memory::desc strided_md(const Shape& dims, const Shape& strides,
                              dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

/// Throws gec::Error(kUnsupported) "<node>: dtype <dt> is not supported (float32 only)"
/// unless dt is float32 (kUndefined passes: the dtype is checked again at run).
void require_f32(const ir::Node& node, DType dt);

/// Same check at run time, with the node description captured by the factory.
void require_f32(const std::string& node_desc, DType dt);

/// Converts a dnnl::error raised while creating or running a primitive into a
/// gec::Error(kUnsupported) naming the node and what was being built.
[[noreturn]] void rethrow_dnnl(const std::string& node_desc, const std::string& what,
                               const dnnl::error& e);

/// True when any tensor in `shapes` has zero elements (oneDNN refuses those).
bool any_empty(const std::vector<Shape>& shapes);

/// A primitive's scratchpad, in oneDNN's user mode. In its default
/// ("library") mode oneDNN gives every primitive a buffer shared by all
/// primitives the creating thread made (Debian's build has no
/// DNNL_ENABLE_CONCURRENT_EXEC), so two runs in flight on one Session, whose
/// kernels one thread created, would write the same scratch memory. In user
/// mode the memory comes from the run (KernelContext::scratch: one buffer
/// per run context), or from this object outside a session.
class Scratchpad {
 public:
  Scratchpad() = default;
  Scratchpad(const Scratchpad&) = delete;
  Scratchpad& operator=(const Scratchpad&) = delete;
  /// `a` with scratchpad_mode::user: every primitive_desc is made with it.
  static dnnl::primitive_attr attr(dnnl::primitive_attr a = {});
  /// Remembers the scratchpad the primitive needs (pd.scratchpad_desc()).
  void set(const dnnl::memory::desc& md);
  /// Sets args[DNNL_ARG_SCRATCHPAD] to memory from `run` (the run's buffer),
  /// or from this object's own when null (outside a session).
  void bind(std::unordered_map<int, dnnl::memory>& args, ScratchBuffer* run);
  /// As bind(), and returns `extra` bytes of 64-byte aligned memory after
  /// the scratchpad in the same buffer, for a kernel's temporary data in
  /// this run (a run's buffer serves one step at a time, so steps share it
  /// instead of each holding its own).
  void* bind_with(std::unordered_map<int, dnnl::memory>& args, ScratchBuffer* run, size_t extra);

 private:
  dnnl::memory::desc md_;
  dnnl::memory mem_;
  ScratchBuffer own_;
};

/// A description of packing from layout `from` into `to`, for
/// SharedWeights::Packed::layout: the oneDNN version and every field of both
/// blocked descriptors that places an element (dims, padding, strides,
/// inner blocks), so equal strings mean byte-identical packed copies; for
/// Winograd weights (`to` of format kind wino) "onednn-wino/<version>" and
/// every parameter of the transformed layout instead. "" when a descriptor
/// is of another kind or has extra flags.
std::string packed_layout(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

/// Weights held in the layout a primitive asked for (format_tag::any). The
/// reorder runs only when the user's weight pointer changes (weights are
/// constants in practice, so once per session); when the primitive accepts
/// the plain layout the user's buffer is used directly. Given a model's
/// SharedWeights (a weight that is a constant of the model), the packed copy
/// is made once for all run contexts and shared read-only; a copy the
/// offline model stores for it (SharedWeights::add_stored) is adopted
/// instead when packed_layout() says it is the wanted layout.
class PackedWeights {
 public:
  /// Sets the user (plain) and wanted layouts; forgets any packed copy.
  void reset(const dnnl::memory::desc& user, const dnnl::memory::desc& wanted);
  /// The memory to bind as DNNL_ARG_WEIGHTS for input `input` of the node
  /// ctx runs, at `data`. A constant of the model is packed once, into
  /// ctx.shared_weights in a session; any other input of a node in a session
  /// is packed in every run (its bytes may change under the same pointer).
  /// Outside a session (ctx.node null) the copy is kept while `data` stays.
  /// Errors: gec::Error(kUnsupported) naming the node when oneDNN cannot
  /// make or run the reorder.
  dnnl::memory& get(const void* data, const KernelContext& ctx, size_t input);
  /// As get() for input `input` of ctx's node, when reset() has run and
  /// the input is a constant of the model in a session; else nothing.
  void pack_constant(const KernelContext& ctx, size_t input);

 private:
  /// get() without the error translation.
  dnnl::memory& get_or_pack(const void* data, const KernelContext& ctx, size_t input);
  /// Runs the reorder from the bound user weights into `to`.
  void pack_into(dnnl::memory& to);
  dnnl::memory user_, packed_;
  std::shared_ptr<const void> shared_entry_;  // keeps a shared packed copy alive
  dnnl::reorder reorder_;
  bool plain_ = true;
  bool owned_ = false;  // packed_ has a buffer of its own
  const void* packed_from_ = nullptr;
  Scratchpad scratch_;
};

/// True when input `i` of `n` is a constant of the model (its bytes never
/// change and every run context sees the same ones).
inline bool constant_input(const ir::Node& n, size_t i) {
  return i < n.inputs().size() && n.input(i) && n.input(i)->constant;
}

/// ctx.shared_weights when input `i` of the node is a constant of the model,
/// else null.
inline SharedWeights* shared_weights_for(const KernelContext& ctx, size_t i) {
  return ctx.node && constant_input(*ctx.node, i) ? ctx.shared_weights : nullptr;
}

/// True for the implementation name of oneDNN's brgemm-based primitives
/// ("brg:avx512_core", "brgconv..."): what the MatMul forms of our kernels
/// require, as oneDNN's other MatMuls (gemm-based) would not pay.
inline bool is_brgemm_implementation(const std::string& impl) { return impl.rfind("brg", 0) == 0; }

/// f32 descriptor of `s` with format_tag::any: the primitive chooses the
/// layout (read it back from the primitive descriptor).
inline dnnl::memory::desc any_md(const Shape& s) {
  return dnnl::memory::desc(to_dims(s), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

/// Binds `m` to `data` (const_cast: oneDNN takes void* for inputs too).
inline void bind(dnnl::memory& m, const void* data) { m.set_data_handle(const_cast<void*>(data)); }

/// A memory object on cpu_engine() with no buffer yet (bind() sets it per run).
inline dnnl::memory unbound_memory(const dnnl::memory::desc& md) {
  return dnnl::memory(md, cpu_engine(), DNNL_MEMORY_NONE);
}

}  // namespace gec::kernels::cpu
