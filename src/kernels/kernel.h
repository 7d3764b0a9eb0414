// The target-independent kernel interface. A target (kernels/cpu/ today)
// registers one factory per (domain, op_type); the compiler creates each
// node's kernel once to choose it (its implementation name goes into the
// execution plan), and the runtime creates one Kernel per plan step when a
// session loads, refusing a build whose kernel is not the one planned.
//
// Lifecycle, as in DESIGN.md:
//  - create (the factory): read attributes and the KernelConfig (dtypes,
//    layouts, variant); shape-independent set-up.
//  - reshape(ctx): shape-dependent set-up (e.g. oneDNN primitive creation)
//    for the input and output shapes now in ctx. The executor calls it before
//    the first run and again only when an input shape changed (dynamic
//    shapes); kernels keep no shape-keyed caches of their own.
//  - run(ctx): the hot path. Output tensors are already allocated with their
//    final shapes (from the op's infer function), except for ops whose schema
//    says shape_from_kernel: those call ctx.allocate_output().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <mutex>
#include <vector>

#include "gec/error.h"
#include "gec/tensor.h"
#include "ir/graph.h"
#include "ops/layout.h"
#include "support/page_block.h"

namespace gec::kernels {

/// Where the runtime keeps a sequence or optional value (null until its
/// producer has run). Values are immutable, so slots share them.
using ValueSlot = std::shared_ptr<const AnyValue>;

/// Runs a subgraph (If/Loop/Scan/SequenceMap bodies) on behalf of a
/// control-flow kernel. Outer-scope values are visible to the subgraph
/// through the executor.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  /// Binds inputs[i] (null = leave unbound) to g.inputs()[i] as a tensor or
  /// as a sequence/optional, by its kind; runs g; returns one value per
  /// g.outputs() (tensors copied out, so they outlive the next run).
  virtual std::vector<AnyValue> run_values(const ir::Graph& g, const std::vector<const AnyValue*>& inputs) = 0;
  /// run_values for tensor-only bodies (Scan): the views are read in place
  /// during the call.
  std::vector<Tensor> run(const ir::Graph& g, const std::vector<const TensorView*>& inputs);
};

/// Scratch memory one run lends its kernels: the steps of a stream execute
/// one at a time, so one buffer (as large as the largest request) serves
/// them all. Each Executor (one per run in flight) owns one per stream.
/// A step may instead get a buffer over bytes of the arena that no live
/// value holds while it runs (Executor: arena gaps), which serves the
/// requests that fit and passes larger ones on to the stream's buffer.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  /// Requests of up to `bytes` get `region` (64-byte aligned, not owned);
  /// larger ones go to `fallback`.
  ScratchBuffer(void* region, size_t bytes, ScratchBuffer* fallback)
      : region_(region), region_bytes_(bytes), fallback_(fallback) {}
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  /// At least `bytes` of 64-byte aligned memory, valid until the next get()
  /// with a larger size (which may move it).
  void* get(size_t bytes);
  /// The bytes a region buffer serves without its fallback (0 for a
  /// buffer of its own).
  size_t region_bytes() const { return region_bytes_; }
  /// The bytes this buffer has mapped of its own (0 for a region buffer).
  size_t own_bytes() const { return block_.size(); }

 private:
  // Pages present when mapped (support/page_block.h): a deconvolution's
  // columns or a Winograd conv's transforms are megabytes written whole.
  PageBlock block_;
  void* region_ = nullptr;
  size_t region_bytes_ = 0;
  ScratchBuffer* fallback_ = nullptr;
};

/// What kernels prepare once from constant data and share between every run
/// context of one loaded model (SessionOptions::max_concurrent_requests): a
/// copy of a weight tensor packed into the layout a primitive asked for. An
/// entry is immutable once made and lives as long as the loaded model or a
/// kernel holding it. Thread-safe.
///
/// Packed copies can also come from the offline model: the compiler packs
/// each constant weight for the kernel that reads it and stores the result
/// in the .gom (model/format.h, "packed weights"); the session offers those
/// bytes here (add_stored) and a kernel adopts them when their layout is the
/// one it wants, so neither the load nor the first run packs it.
class SharedWeights {
 public:
  /// A packed copy's description: `layout` is the target's description of
  /// the layout packed from and into (opaque bytes, compared for equality
  /// only; "" = not storable), `data` its `bytes` bytes.
  struct Packed {
    std::string layout;
    const void* data = nullptr;
    size_t bytes = 0;
  };
  /// An entry as make() returns it: the kernel's object, and its packed
  /// bytes for the offline model (layout "" when they cannot be stored).
  struct Entry {
    std::shared_ptr<const void> object;
    Packed packed;
    const void* kind = nullptr;  // the find_or_make `kind` it was made under
  };

  /// Sets what release_plain() does; call before any kernel runs. `release`
  /// (data, bytes) may drop the resident pages of a constant whose packed
  /// copy now serves every reader (the session passes one that returns the
  /// whole pages of a memory-mapped .gom to the page cache: the mapping is
  /// read-only and never written, so a later read faults the same bytes back
  /// in from the file and it is safe for any reader; on writable memory
  /// MADV_DONTNEED would lose data, which is why only the mapping qualifies).
  void set_release(std::function<void(const void*, size_t)> release) { release_ = std::move(release); }
  /// Offers a packed copy of the constant at `plain` that the offline model
  /// stores (read-only bytes that outlive this object). Call before any
  /// kernel runs.
  void add_stored(const void* plain, Packed p);
  /// The entry for constant data at `data` of this `kind` (an address
  /// naming the kind of object, one per packing kernel family: entries of
  /// other kinds for the same data are never shown to `matches`) that
  /// `matches` accepts (one data pointer may be packed in several layouts);
  /// else a stored copy that `adopt` turns into an entry (it returns null
  /// for a copy in another layout); else the one `make` returns, stored.
  /// Each entry is made once: make() and adopt() for one `data` run one at a
  /// time, while other data pointers are packed on other threads at once.
  std::shared_ptr<const void> find_or_make(const void* data, const void* kind,
                                           const std::function<bool(const void*)>& matches,
                                           const std::function<std::shared_ptr<const void>(const Packed&)>& adopt,
                                           const std::function<Entry()>& make);
  /// Entries held.
  size_t size() const;
  /// Entries made from a stored copy (adopted, not packed).
  size_t adopted() const;
  /// Every entry's plain data pointer and packed bytes, the storable ones
  /// only (layout not ""), in no particular order; what the compiler writes
  /// into the .gom.
  std::vector<std::pair<const void*, Packed>> packed() const;
  /// Called by a kernel once it has packed the `bytes` bytes of constant data
  /// at `data` and will read only the packed copy (see set_release).
  void release_plain(const void* data, size_t bytes) const {
    if (release_) release_(data, bytes);
  }

 private:
  struct Slot {
    std::mutex making;  // held while an entry for this pointer is made
    std::vector<Entry> entries;
    std::vector<Packed> stored;
  };
  mutable std::mutex mutex_;  // guards slots_ and every Slot's vectors
  std::unordered_map<const void*, std::shared_ptr<Slot>> slots_;
  size_t adopted_ = 0;
  std::function<void(const void*, size_t)> release_;
};

struct KernelContext {
  /// The node being run (for error messages); null outside a session.
  const ir::Node* node = nullptr;
  /// One per node input; null for an omitted optional input.
  std::vector<const TensorView*> inputs;
  /// One per node output; shape and data set before run() unless the op is
  /// shape_from_kernel.
  std::vector<TensorView*> outputs;
  int num_threads = 1;
  SubgraphRunner* subgraphs = nullptr;
  /// The run's scratch memory (null outside a session: kernels then use
  /// their own).
  ScratchBuffer* scratch = nullptr;
  /// Prepared weights shared by the run contexts of one model (null outside
  /// a session: kernels then keep their own).
  SharedWeights* shared_weights = nullptr;
  /// For shape_from_kernel ops: allocates output i with the given shape and
  /// returns it (also stored in outputs[i]).
  std::function<TensorView*(size_t, DType, const Shape&)> allocate_output;

  /// Sequence and optional values, parallel to inputs / outputs: the slot of
  /// each present input and output (null for omitted inputs; empty when the
  /// kernel runs outside a session). Tensor values leave their slots unset.
  std::vector<const ValueSlot*> value_inputs;
  std::vector<ValueSlot*> value_outputs;

  /// Input i; gec::Error(kInvalidModel) naming the node when the node has no
  /// input i (a malformed model must not make a kernel read past its inputs).
  const TensorView& in(size_t i) const {
    if (i >= inputs.size() || !inputs[i]) missing(true, i);
    return *inputs[i];
  }
  /// For shape_from_kernel ops: allocates output i as `src`'s dtype and
  /// shape and copies `src` into it.
  TensorView* copy_to_output(size_t i, const TensorView& src) const;
  /// Input i as a sequence or optional; gec::Error(kInternal) when it holds
  /// none (the graph fed a tensor where the op takes a sequence).
  const AnyValue& value_in(size_t i) const;
  /// Stores output i, a sequence or optional value.
  void set_value_out(size_t i, AnyValue v) const;
  /// Output i; gec::Error(kInvalidModel) naming the node when it has none.
  TensorView& out(size_t i) const {
    if (i >= outputs.size() || !outputs[i]) missing(false, i);
    return *outputs[i];
  }
  [[noreturn]] void missing(bool input, size_t i) const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Shape-dependent set-up for the shapes of ctx's inputs and outputs
  /// (their data may be unset). Called before the first run() and after any
  /// input shape changes; never between two runs with the same shapes.
  virtual void reshape(const KernelContext&) {}
  virtual void run(KernelContext& ctx) = 0;
  /// After reshape(), packs the weights the kernel reads from constants of
  /// the model into ctx.shared_weights, as its first run() would; called
  /// ahead of the first run (on helper threads) and by the compiler, which
  /// stores the packed copies in the .gom. Default: nothing to pack.
  virtual void pack_constants(const KernelContext&) {}
  /// Implementation name (e.g. "onednn.conv"): what the execution plan
  /// records at compile time and `gec profile` shows.
  virtual std::string impl_name() const { return "native"; }
  /// Whether reshape() (with pack_constants()) is worth running ahead of the
  /// first run, on helper threads while the model loads
  /// (Executor::prepare_ahead): it makes oneDNN primitives, or packs or
  /// transforms weights. Default: a kernel whose implementation is oneDNN's
  /// ("onednn." names); kernels whose own reshape packs say so themselves.
  virtual bool costly_reshape() const { return impl_name().rfind("onednn.", 0) == 0; }
};

/// What, besides the node, selects and configures a kernel: the node's input
/// dtypes, the layout of each input and output (chosen by the schedule stage;
/// empty = all plain), and an implementation variant ("" = the kernel's
/// default; Conv and FusedConv take "winograd", "winograd_nhwc", "direct", "nhwc", "taps" or
/// "im2col_nhwc", MatMul, FusedMatMul and Gemm "gemm", chosen at compile time by
/// choose_variant, and Conv "post_op" or "kernel" for where the activation runs,
/// used by tests and measurements; tokens joined by '+').
struct KernelConfig {
  std::vector<DType> input_dtypes;  // kUndefined for absent inputs
  std::vector<ops::Layout> input_layouts, output_layouts;
  std::string variant;

  ops::Layout input_layout(size_t i) const { return i < input_layouts.size() ? input_layouts[i] : ops::Layout::kPlain; }
  ops::Layout output_layout(size_t i) const {
    return i < output_layouts.size() ? output_layouts[i] : ops::Layout::kPlain;
  }
  /// The dtypes of `node`'s inputs, everything else default.
  static KernelConfig for_node(const ir::Node& node);
};

/// Creates a kernel for `node`. Attributes are read here; unsupported
/// attribute values, dtypes, layouts or variants throw gec::Error
/// (kUnsupported / kInvalidModel) naming the node.
using KernelFactory = std::function<std::unique_ptr<Kernel>(const ir::Node& node, const KernelConfig& config)>;

/// Registers the kernel of (domain, op_type); `where` names the registering
/// file. A second registration of the same op is gec::Error(kInternal) naming
/// both files (at static initialisation: the program stops with that message).
void register_kernel(const std::string& domain, const std::string& op_type, KernelFactory f,
                     const std::string& where);
/// Null when no kernel is registered for the op ("" and "ai.onnx" are one domain).
const KernelFactory* find_kernel(const std::string& domain, const std::string& op_type);

/// The element dtypes the CPU kernel of (domain, op_type) takes for its main
/// data input (input 0: ONNX's type constraint "T"; for a few ops input 0 is
/// a shape, a size, a condition or a trip count and the entry says so), as
/// `gec ops` lists them; null when the op has no kernel. A hand-kept table
/// (kernels/cpu/dtype_support.cc) that tests/op_dtypes_test.cc checks: every
/// kernel has an entry, and every ONNX conformance model that passes feeds
/// its ops only dtypes the table lists.
const std::vector<DType>* input0_dtypes(const std::string& domain, const std::string& op_type);

struct KernelRegistrar {
  KernelRegistrar(const char* domain, const char* op_type, KernelFactory f, const char* where) {
    register_kernel(domain, op_type, std::move(f), where);
  }
};
#define GEC_K_CONCAT2(a, b) a##b
#define GEC_K_CONCAT(a, b) GEC_K_CONCAT2(a, b)
/// GEC_REGISTER_KERNEL("", "Relu", factory) at file scope.
#define GEC_REGISTER_KERNEL(domain, op, factory) \
  static ::gec::kernels::KernelRegistrar GEC_K_CONCAT(gec_kernel_reg_, __LINE__)(domain, op, factory, __FILE__)

/// Asks the target which implementation it would run for `n` (its static
/// input and output types) with input 0 in layout `src` and output 0 in
/// layout `dst` (ops/layout.h): e.g. oneDNN's "jit:avx512_core",
/// "brgconv:avx512_core" or "ref:any". Returns "" when the op registered no
/// query or the types are not static. Errors: none (a descriptor the library
/// refuses gives "unsupported").
using LayoutQuery = std::function<std::string(const ir::Node& n, ops::Layout src, ops::Layout dst)>;
void register_layout_query(const std::string& domain, const std::string& op_type, LayoutQuery q);
std::string implementation_for_layout(const ir::Node& n, ops::Layout src, ops::Layout dst);
/// Chooses, at compile time, the implementation variant (KernelConfig::
/// variant) a node's kernel runs with its planned layouts (`config`), from
/// its static types and what the target offers for them: e.g. "winograd"
/// for a 3x3 convolution where oneDNN's Winograd kernel beats its direct
/// one. Returns "" (the kernel's default) when the op registered no chooser
/// or nothing better applies. The execution plan stores the answer
/// (schedule/execution_plan.cc). Errors: none.
using VariantChoice = std::function<std::string(const ir::Node& n, const KernelConfig& config)>;
void register_variant_choice(const std::string& domain, const std::string& op_type, VariantChoice c);
std::string choose_variant(const ir::Node& n, const KernelConfig& config);
/// True for an implementation name of a reference (unoptimized) kernel.
inline bool is_reference_implementation(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

/// `v` as a value of kind `want`: an optional's held value, a tensor or
/// sequence wrapped as an optional, or `v` itself. Errors: kInvalidArgument
/// naming `what` when `v` is None and a value is needed, or the kinds do
/// not fit (a tensor where a sequence is wanted).
AnyValue convert_value_kind(const AnyValue& v, ValueKind want, const std::string& what);

/// Creates the kernel for a node, or throws gec::Error(kUnsupported):
/// "unsupported op: node 'n' op Foo (domain ai.onnx, opset N), inputs float32, int64".
/// `config.input_dtypes` is filled from the node when left empty.
std::unique_ptr<Kernel> create_kernel(const ir::Node& node, KernelConfig config = {});

/// Runs one node outside any session: infers output shapes from the inputs,
/// allocates, creates the kernel, reshapes and runs it. Used by constant
/// folding and by kernel tests. `inputs` has one entry per node input (null =
/// omitted). With `max_output_bytes` > 0, outputs that would take more
/// bytes together are not allocated: gec::Error(kUnsupported) instead
/// (constant folding's size limit, checked before the memory is taken).
std::vector<Tensor> evaluate_node(const ir::Node& node, const std::vector<const TensorView*>& inputs,
                                  int num_threads = 1, SubgraphRunner* subgraphs = nullptr,
                                  const KernelConfig& config = {}, int64_t max_output_bytes = 0);

}  // namespace gec::kernels
