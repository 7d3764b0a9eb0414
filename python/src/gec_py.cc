// gec._gec: the Python binding of GraphEngine's public API (include/gec/
// only). Its classes are private: python/gec/_api.py wraps and documents
// them as gec.CompiledModel and gec.Session.
//
//  - _CompiledModel wraps gec::CompiledModel (the .gom bytes and the report).
//  - _Session wraps gec::Session with an ONNX Runtime-like surface:
//    get_inputs() / get_outputs() metadata and run(output_names, feed).
//    C-contiguous, aligned numpy inputs of the declared dtype are passed to
//    the runtime in place; anything else of the right dtype is copied once.
//    Outputs are numpy arrays over the buffers gec produced them in (no
//    copy). The GIL is released while compiling, loading and running; a
//    mutex keeps runs of one Session from overlapping (the C++ Session does
//    not allow that).
//  - every gec::Error becomes the gec.errors class of its code, with .code.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gec/bench.h"
#include "gec/compiler.h"
#include "gec/dtype.h"
#include "gec/error.h"
#include "gec/runtime.h"
#include "gec/threading.h"
#include "gec/tensor.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

using gec::DType;
using gec::ErrorCode;
using gec::fail;

// Module-lifetime Python objects. Leaked on purpose: they must outlive every
// C++ static destructor, which may run after the interpreter is gone.
struct Globals {
  py::handle error_by_code[6];  // gec.errors.BY_CODE[ErrorCode(i)]
  py::handle error_code_enum;   // gec.errors.ErrorCode
  py::handle json_loads;
  py::handle node_arg_cls;      // gec._nodearg.NodeArg
  py::handle np_array;          // numpy.array
  py::handle np_dtypes[17];     // by DType code; empty where numpy has none
};
Globals* G = nullptr;

// ---- errors ---------------------------------------------------------------

void set_python_error(const gec::Error& e) {
  const int code = static_cast<int>(e.code());
  py::object cls = py::reinterpret_borrow<py::object>(G->error_by_code[code >= 0 && code < 6 ? code : 5]);
  py::object inst = cls(e.what(), py::reinterpret_borrow<py::object>(G->error_code_enum)(code));
  PyErr_SetObject(cls.ptr(), inst.ptr());
}

[[noreturn]] void invalid(const std::string& message) { fail(ErrorCode::kInvalidArgument, message); }

std::string py_type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// ---- dtypes ---------------------------------------------------------------

// ONNX's name of a tensor element type, as ONNX Runtime's NodeArg.type
// spells it ("tensor(float)").
const char* onnx_type_name(DType t) {
  if (t == DType::kFloat32) return "float";
  if (t == DType::kFloat64) return "double";
  return dtype_name(t);  // the other names are the same in both
}

// The numpy dtype of a gec dtype (object for strings); None for bfloat16
// and undefined, which numpy has no dtype for.
py::object numpy_dtype(DType t) {
  const int c = static_cast<int>(t);
  if (c < 0 || c >= 17 || !G->np_dtypes[c]) return py::none();
  return py::reinterpret_borrow<py::object>(G->np_dtypes[c]);
}

bool is_native_order(const py::dtype& d) {
  const char b = d.byteorder();
  return b == '=' || b == '|' || b == '<';  // little-endian hosts only (the .gom format says so)
}

// The gec dtype of a numpy dtype; kUndefined for those gec has no match for
// (and for non-native byte order). Strings ('U', 'S', 'O') map to kString.
DType gec_dtype(const py::dtype& d) {
  if (d.has_fields() || !is_native_order(d)) return DType::kUndefined;
  const ssize_t n = d.itemsize();
  switch (d.kind()) {
    case 'f': return n == 2 ? DType::kFloat16 : n == 4 ? DType::kFloat32 : n == 8 ? DType::kFloat64 : DType::kUndefined;
    case 'i':
      return n == 1 ? DType::kInt8 : n == 2 ? DType::kInt16 : n == 4 ? DType::kInt32 : n == 8 ? DType::kInt64
                                                                                            : DType::kUndefined;
    case 'u':
      return n == 1 ? DType::kUInt8 : n == 2 ? DType::kUInt16 : n == 4 ? DType::kUInt32 : n == 8 ? DType::kUInt64
                                                                                              : DType::kUndefined;
    case 'b': return n == 1 ? DType::kBool : DType::kUndefined;
    case 'c': return n == 8 ? DType::kComplex64 : n == 16 ? DType::kComplex128 : DType::kUndefined;
    case 'U': case 'S': case 'O': return DType::kString;
    default: return DType::kUndefined;
  }
}

std::string numpy_dtype_str(const py::dtype& d) { return py::str(static_cast<py::handle>(d)).cast<std::string>(); }

std::string shape_of(const py::array& a) {
  gec::Shape s(a.shape(), a.shape() + a.ndim());
  return gec::shape_str(s);
}

// "float32[1,3,224,224]" from an IoInfo::str() "name: float32[1,3,224,224]".
std::string type_text(const gec::IoInfo& io) { return io.str().substr(io.name.size() + 2); }

// What an error message names: "input 'x'", "output 'y'", "input 'xs'[2]".
// Built only when a message is (run() makes one per input per call).
struct Where {
  const char* what;  // "input" or "output"
  const std::string* name;
  long elem = -1;  // sequence element index, or -1
  std::string str() const {
    return std::string(what) + " '" + *name + "'" + (elem >= 0 ? "[" + std::to_string(elem) + "]" : "");
  }
  Where at(long j) const { return Where{what, name, j}; }
};

// ---- numpy <-> gec tensors ------------------------------------------------

// A numpy array over a gec tensor's storage (no copy); the array keeps the
// tensor alive. String tensors become object arrays of str (a copy).
py::array to_numpy(gec::Tensor t, const Where& where) {
  if (t.dtype() == DType::kString) {
    py::array out(py::reinterpret_borrow<py::object>(G->np_dtypes[static_cast<int>(DType::kString)]),
                  std::vector<ssize_t>(t.shape().begin(), t.shape().end()));
    auto** slots = static_cast<PyObject**>(out.mutable_data());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const std::string& s = t.as<std::string>()[i];
      PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<ssize_t>(s.size()), "surrogateescape");
      if (!u) throw py::error_already_set();
      Py_XDECREF(slots[i]);
      slots[i] = u;
    }
    return out;
  }
  py::object dt = numpy_dtype(t.dtype());
  if (dt.is_none())
    fail(ErrorCode::kUnsupported,
         where.str() + " is " + gec::dtype_name(t.dtype()) + ", which numpy has no dtype for");
  std::vector<ssize_t> shape(t.shape().begin(), t.shape().end());
  void* data = t.data();
  auto* holder = new gec::Tensor(std::move(t));
  py::capsule owner(holder, [](void* p) { delete static_cast<gec::Tensor*>(p); });
  return py::array(py::reinterpret_borrow<py::dtype>(dt), shape, data, owner);
}

// A string tensor copied from a numpy array of str/bytes/objects.
gec::Tensor string_tensor(const py::array& a, const Where& where) {
  gec::Shape shape(a.shape(), a.shape() + a.ndim());
  gec::Tensor t(DType::kString, shape);
  py::object flat = a.attr("ravel")();  // C order
  ssize_t i = 0;
  for (py::handle item : flat) {
    if (PyUnicode_Check(item.ptr())) {
      t.as<std::string>()[i] = item.cast<std::string>();
    } else if (PyBytes_Check(item.ptr())) {
      t.as<std::string>()[i] = std::string(PyBytes_AsString(item.ptr()), PyBytes_Size(item.ptr()));
    } else {
      invalid(where.str() + ": element " + std::to_string(i) + " is " + py_type_name(item) + ", not str or bytes");
    }
    ++i;
  }
  return t;
}

// One input array ready for the runtime: `view` points into `keep` (the
// caller's array itself when it could be used in place) or into `owned`.
struct BoundTensor {
  gec::TensorView view;
  py::object keep;
  gec::Tensor owned;
};

constexpr int kNpyAligned = 0x0100;  // NPY_ARRAY_ALIGNED

// What numpy makes of a non-array (numpy.asarray through pybind11's
// array::ensure); empty when numpy cannot convert it.
py::array as_array(py::handle h) { return py::array::ensure(h); }

BoundTensor bind_tensor(py::handle value, const gec::IoInfo& io, const Where& where) {
  py::array a;
  if (py::isinstance<py::array>(value)) {
    a = py::reinterpret_borrow<py::array>(value);
  } else {
    // Lists, scalars, objects with __array__ (torch tensors): what numpy makes of them.
    a = as_array(value);
    if (!a) invalid(where.str() + ": expected a numpy array, got " + py_type_name(value));
  }
  const DType got = gec_dtype(a.dtype());
  if (got != io.dtype) {
    const py::object want = numpy_dtype(io.dtype);
    invalid(where.str() + ": expected " + type_text(io) + " (numpy " +
            (want.is_none() ? std::string("has no such dtype") : numpy_dtype_str(want.cast<py::dtype>())) +
            "), got a numpy array of dtype " + numpy_dtype_str(a.dtype()) + " and shape " + shape_of(a));
  }
  BoundTensor b;
  if (io.dtype == DType::kString) {
    b.owned = string_tensor(a, where);
    b.view = b.owned.view();
    return b;
  }
  const int flags = a.flags();
  if (!(flags & py::array::c_style) || !(flags & kNpyAligned)) {
    // One copy into a new C-contiguous (so aligned) array of the same dtype;
    // numpy's own errors (MemoryError) propagate.
    a = py::reinterpret_borrow<py::object>(G->np_array)(a, "copy"_a = true, "order"_a = "C").cast<py::array>();
  }
  b.view.data = const_cast<void*>(a.data());
  b.view.dtype = got;
  b.view.shape.assign(a.shape(), a.shape() + a.ndim());
  b.keep = a;
  return b;
}

// ---- options --------------------------------------------------------------

struct CompileArgs {
  py::object opt_level, input_shapes, disabled_passes, verify_each_pass, dump_graph_dir, streams;
  bool any() const {
    for (const py::object* o :
         {&opt_level, &input_shapes, &disabled_passes, &verify_each_pass, &dump_graph_dir, &streams})
      if (!o->is_none()) return true;
    return false;
  }
};

gec::CompileOptions compile_options(const CompileArgs& a) {
  gec::CompileOptions o;
  if (!a.opt_level.is_none()) {
    if (!PyLong_Check(a.opt_level.ptr()) || PyBool_Check(a.opt_level.ptr()))
      invalid("opt_level must be an int 0..3, got " + py_type_name(a.opt_level));
    o.opt_level = a.opt_level.cast<int>();
  }
  if (!a.input_shapes.is_none()) {
    if (!PyDict_Check(a.input_shapes.ptr()))
      invalid("input_shapes must be a dict {input name: sequence of dims}, got " + py_type_name(a.input_shapes));
    for (auto [k, v] : a.input_shapes.cast<py::dict>()) {
      if (!PyUnicode_Check(k.ptr())) invalid("input_shapes: keys must be input names (str), got " + py_type_name(k));
      const std::string name = k.cast<std::string>();
      gec::Shape s;
      if (!PySequence_Check(v.ptr()) || PyUnicode_Check(v.ptr()))
        invalid("input_shapes['" + name + "'] must be a sequence of dims, got " + py_type_name(v));
      for (py::handle d : v) {
        if (!PyLong_Check(d.ptr()) || PyBool_Check(d.ptr()))
          invalid("input_shapes['" + name + "']: dims must be ints, got " + py_type_name(d));
        const long long x = d.cast<long long>();
        if (x < 0) invalid("input_shapes['" + name + "']: dims must be >= 0, got " + std::to_string(x));
        s.push_back(x);
      }
      o.input_shapes[name] = s;
    }
  }
  if (!a.disabled_passes.is_none()) {
    if (PyUnicode_Check(a.disabled_passes.ptr()) || !PySequence_Check(a.disabled_passes.ptr()))
      invalid("disabled_passes must be a list of pass names, got " + py_type_name(a.disabled_passes));
    for (py::handle p : a.disabled_passes) {
      if (!PyUnicode_Check(p.ptr())) invalid("disabled_passes: pass names must be str, got " + py_type_name(p));
      o.disabled_passes.push_back(p.cast<std::string>());
    }
  }
  if (!a.verify_each_pass.is_none()) o.verify_each_pass = a.verify_each_pass.cast<bool>();
  if (!a.dump_graph_dir.is_none()) o.dump_graph_dir = py::str(a.dump_graph_dir).cast<std::string>();
  if (!a.streams.is_none()) {
    // "auto" (CompileOptions::streams = 0) or an int 1..64, as the CLI.
    if (PyUnicode_Check(a.streams.ptr())) {
      if (a.streams.cast<std::string>() != "auto")
        invalid("streams must be 'auto' or an int 1..64, got '" + a.streams.cast<std::string>() + "'");
    } else if (!PyLong_Check(a.streams.ptr()) || PyBool_Check(a.streams.ptr())) {
      invalid("streams must be 'auto' or an int 1..64, got " + py_type_name(a.streams));
    } else {
      int overflow = 0;
      const long long n = PyLong_AsLongLongAndOverflow(a.streams.ptr(), &overflow);
      if (overflow != 0 || n < 1 || n > 64)
        invalid("streams must be 'auto' or an int 1..64, got " + py::str(a.streams).cast<std::string>());
      o.streams = static_cast<int>(n);
    }
  }
  return o;
}

// ---- models: paths, bytes, compiled models --------------------------------

struct PyCompiledModel {
  gec::CompiledModel m;
  py::object report_cache;
};

bool is_path(py::handle h) {
  return PyUnicode_Check(h.ptr()) || PyObject_HasAttrString(h.ptr(), "__fspath__");
}
std::string fspath(py::handle h) {
  py::object p = py::reinterpret_steal<py::object>(PyOS_FSPath(h.ptr()));
  if (!p) throw py::error_already_set();
  if (PyBytes_Check(p.ptr())) return p.cast<py::bytes>().cast<std::string>();
  return p.cast<std::string>();
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// True when the file begins with the .gom magic (false when it cannot be read:
// the loader or compiler then reports why).
bool file_looks_like_gom(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[8] = {};
  if (!f.read(head, sizeof head)) return false;
  return gec::looks_like_gom(head, sizeof head);
}

gec::CompiledModel compile_any(py::handle model, const gec::CompileOptions& opts) {
  if (is_path(model)) {
    const std::string path = fspath(model);
    py::gil_scoped_release nogil;
    return gec::compile_file(path, opts);
  }
  if (PyObject_CheckBuffer(model.ptr())) {
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(model).request();
    const size_t size = static_cast<size_t>(info.size * info.itemsize);
    if (gec::looks_like_gom(info.ptr, size))
      invalid("compile: these bytes are a compiled .gom model already; pass them to gec.Session");
    py::gil_scoped_release nogil;
    return gec::compile_any_bytes(info.ptr, size, opts);
  }
  invalid("compile: the model must be a path (str or os.PathLike) or the bytes of an ONNX or TensorFlow model, got " +
          py_type_name(model));
}

// ---- metadata ----------------------------------------------------------------

// A gec.NodeArg (python/gec/_nodearg.py) describing `io`.
py::object node_arg(const gec::IoInfo& io) {
  const std::string t = std::string("tensor(") + onnx_type_name(io.dtype) + ")";
  std::string type, kind;
  switch (io.kind) {
    case gec::ValueKind::kTensor: type = t; kind = "tensor"; break;
    case gec::ValueKind::kSequence: type = "seq(" + t + ")"; kind = "sequence"; break;
    case gec::ValueKind::kOptionalTensor: type = "optional(" + t + ")"; kind = "optional"; break;
    case gec::ValueKind::kOptionalSequence: type = "optional(seq(" + t + "))"; kind = "optional"; break;
  }
  py::object shape = py::none();
  if (io.has_shape) {
    py::list dims;
    for (size_t i = 0; i < io.dims.size(); ++i) {
      if (io.dims[i] >= 0) dims.append(io.dims[i]);
      else if (i < io.dim_params.size() && !io.dim_params[i].empty()) dims.append(io.dim_params[i]);
      else dims.append(py::none());
    }
    shape = dims;
  }
  return py::reinterpret_borrow<py::object>(G->node_arg_cls)(io.name, type, shape, numpy_dtype(io.dtype), kind);
}

// ---- Session ------------------------------------------------------------------

class PySession {
 public:
  // Where the model came from, to open a profiling twin.
  std::shared_ptr<const std::vector<uint8_t>> gom;  // null when loaded from gom_path
  std::string gom_path;
  gec::SessionOptions so;
  std::unique_ptr<gec::Session> s;
  std::string compile_report;  // JSON, when compiled in memory
  double load_ms = 0;
  std::vector<py::object> inputs_meta, outputs_meta;
  std::unordered_map<std::string, size_t> in_index, out_index;
  bool tensor_io = true;
  std::vector<uintptr_t> last_in_ptrs, last_out_ptrs;
  std::mutex mu;

  void finish_load() {
    for (const auto* list : {&s->inputs(), &s->outputs()})
      for (const gec::IoInfo& io : *list)
        if (io.kind != gec::ValueKind::kTensor) tensor_io = false;
    for (size_t i = 0; i < s->inputs().size(); ++i) {
      in_index.emplace(s->inputs()[i].name, i);
      inputs_meta.push_back(node_arg(s->inputs()[i]));
    }
    for (size_t i = 0; i < s->outputs().size(); ++i) {
      out_index.emplace(s->outputs()[i].name, i);
      outputs_meta.push_back(node_arg(s->outputs()[i]));
    }
  }

  std::string inputs_text() const {
    std::string r;
    for (const auto& io : s->inputs()) r += (r.empty() ? "" : ", ") + io.str();
    return r.empty() ? "none" : r;
  }
  std::string outputs_text() const {
    std::string r;
    for (const auto& io : s->outputs()) r += (r.empty() ? "" : ", ") + io.name;
    return r;
  }

  // feed {name: value} -> one handle per model input, in order.
  std::vector<py::handle> order_feed(py::handle feed, const char* where) const {
    if (!PyDict_Check(feed.ptr()))
      invalid(std::string(where) + ": the inputs must be a dict {input name: numpy array}, got " + py_type_name(feed));
    std::vector<py::handle> slot(s->inputs().size());
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(feed)) {
      if (!PyUnicode_Check(k.ptr()))
        invalid(std::string(where) + ": input names must be str, got " + py_type_name(k));
      const std::string name = k.cast<std::string>();
      auto it = in_index.find(name);
      if (it == in_index.end())
        invalid(std::string(where) + ": the model has no input '" + name + "' (inputs: " + inputs_text() + ")");
      slot[it->second] = v;
    }
    std::string missing;
    for (size_t i = 0; i < slot.size(); ++i)
      if (!slot[i]) missing += (missing.empty() ? "" : ", ") + s->inputs()[i].str();
    if (!missing.empty()) invalid(std::string(where) + ": missing input(s) " + missing);
    return slot;
  }

  // An input of a model with sequence or optional values: a tensor input
  // shares the array (kept alive in `keep` for the run, as run_values reads
  // tensor inputs in place); sequences (a list of arrays) and optionals (an
  // array or None) are copied into gec tensors.
  gec::AnyValue bind_value(py::handle v, const gec::IoInfo& io, const Where& where,
                           std::vector<BoundTensor>& keep) const {
    const std::string what = where.str();
    auto tensor_of = [&](py::handle x, const Where& w) {
      BoundTensor b = bind_tensor(x, io, w);
      return b.owned.defined() ? b.owned : gec::Tensor::copy_of(b.view);
    };
    switch (io.kind) {
      case gec::ValueKind::kTensor: {
        keep.push_back(bind_tensor(v, io, where));
        const BoundTensor& b = keep.back();
        if (b.owned.defined()) return gec::AnyValue::of_tensor(b.owned);
        return gec::AnyValue::of_tensor(gec::Tensor(b.view.dtype, b.view.shape, b.view.data, nullptr));
      }
      case gec::ValueKind::kOptionalTensor:
        if (v.is_none()) return gec::AnyValue::none(io.kind, io.dtype);
        return gec::AnyValue::optional_of(gec::AnyValue::of_tensor(tensor_of(v, where)));
      case gec::ValueKind::kSequence:
      case gec::ValueKind::kOptionalSequence: {
        if (v.is_none()) {
          if (io.kind == gec::ValueKind::kSequence) invalid(what + ": expected " + type_text(io) + ", got None");
          return gec::AnyValue::none(io.kind, io.dtype);
        }
        if (!PyList_Check(v.ptr()) && !PyTuple_Check(v.ptr()))
          invalid(what + ": expected " + type_text(io) + " as a list of numpy arrays, got " + py_type_name(v));
        std::vector<gec::Tensor> elems;
        long j = 0;
        for (py::handle e : v) {
          BoundTensor b = bind_tensor(e, io, where.at(j++));
          elems.push_back(b.owned.defined() ? b.owned : gec::Tensor::copy_of(b.view));
        }
        gec::AnyValue seq = gec::AnyValue::sequence(io.dtype, std::move(elems));
        return io.kind == gec::ValueKind::kSequence ? seq : gec::AnyValue::optional_of(seq);
      }
    }
    invalid(what + ": unknown value kind");
  }

  py::object value_to_python(const gec::AnyValue& v, const Where& where) const {
    // Elements of sequences may share storage with inputs or constants: copied.
    if (v.kind == gec::ValueKind::kTensor) return to_numpy(v.tensor, where);
    if (!v.has_value) return py::none();
    if (!v.is_sequence_like()) return to_numpy(gec::Tensor::copy_of(v.tensor.view()), where);
    py::list l;
    for (size_t j = 0; j < v.elements.size(); ++j)
      l.append(to_numpy(gec::Tensor::copy_of(v.elements[j].view()), where.at(static_cast<long>(j))));
    return l;
  }

  // Output indices for `output_names` (None or empty: all, in order).
  std::vector<size_t> output_indices(py::handle output_names) const {
    std::vector<size_t> idx;
    if (output_names.is_none() || (PySequence_Check(output_names.ptr()) && PySequence_Size(output_names.ptr()) == 0)) {
      for (size_t i = 0; i < s->outputs().size(); ++i) idx.push_back(i);
      return idx;
    }
    if (PyUnicode_Check(output_names.ptr()) || !PySequence_Check(output_names.ptr()))
      invalid("run: output_names must be a list of output names or None, got " + py_type_name(output_names));
    for (py::handle n : output_names) {
      if (!PyUnicode_Check(n.ptr())) invalid("run: output names must be str, got " + py_type_name(n));
      const std::string name = n.cast<std::string>();
      auto it = out_index.find(name);
      if (it == out_index.end())
        invalid("run: the model has no output '" + name + "' (outputs: " + outputs_text() + ")");
      idx.push_back(it->second);
    }
    return idx;
  }

  py::list run(py::handle output_names, py::handle feed, py::handle run_options) {
    if (!run_options.is_none()) invalid("run: run_options is not supported (pass None)");
    const std::vector<size_t> want = output_indices(output_names);
    const std::vector<py::handle> slot = order_feed(feed, "run");
    const auto& ins = s->inputs();
    const auto& outs = s->outputs();
    py::list result;
    if (tensor_io) {
      std::vector<BoundTensor> bound;
      bound.reserve(ins.size());
      std::vector<gec::TensorView> views;
      views.reserve(ins.size());
      for (size_t i = 0; i < ins.size(); ++i) {
        bound.push_back(bind_tensor(slot[i], ins[i], Where{"input", &ins[i].name}));
        views.push_back(bound.back().view);
      }
      // Session::run produces outputs of a static shape straight into
      // storage it recycles once their arrays are gone.
      std::vector<gec::Tensor> results;
      {
        py::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(mu);
        results = s->run(views);
      }
      last_in_ptrs.clear();
      for (const auto& v : views) last_in_ptrs.push_back(reinterpret_cast<uintptr_t>(v.data));
      last_out_ptrs.clear();
      for (const auto& t : results) last_out_ptrs.push_back(reinterpret_cast<uintptr_t>(t.data()));
      // An output asked for twice is one array twice (as in ONNX Runtime, where they are equal).
      std::vector<py::object> arrays(outs.size());
      for (size_t i : want) {
        if (!arrays[i]) arrays[i] = to_numpy(std::move(results[i]), Where{"output", &outs[i].name});
        result.append(arrays[i]);
      }
      return result;
    }
    std::vector<BoundTensor> keep;  // outlives `values` and `got`
    std::vector<gec::AnyValue> values;
    for (size_t i = 0; i < ins.size(); ++i)
      values.push_back(bind_value(slot[i], ins[i], Where{"input", &ins[i].name}, keep));
    std::vector<gec::AnyValue> got;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu);
      got = s->run_values(values);
    }
    last_in_ptrs.clear();  // tensor inputs' buffers; 0 for sequences and optionals (copied)
    for (const auto& v : values)
      last_in_ptrs.push_back(v.kind == gec::ValueKind::kTensor ? reinterpret_cast<uintptr_t>(v.tensor.data()) : 0);
    last_out_ptrs.clear();
    for (size_t i : want) result.append(value_to_python(got[i], Where{"output", &outs[i].name}));
    return result;
  }

  // Inputs for bench/profile: the feed's arrays, or generated ones.
  struct Inputs {
    std::vector<BoundTensor> bound;
    std::vector<gec::Tensor> generated;
    std::vector<gec::TensorView> views;
  };
  Inputs bench_inputs(py::handle feed, const char* where) const {
    Inputs r;
    for (const auto& io : s->inputs())
      if (io.kind != gec::ValueKind::kTensor)
        invalid(std::string(where) + " times models with tensor inputs; input '" + io.str() + "' is not a tensor");
    if (feed.is_none()) {
      r.generated = gec::generate_inputs(*s);
      for (const auto& t : r.generated) r.views.push_back(t.view());
      return r;
    }
    const std::vector<py::handle> slot = order_feed(feed, where);
    for (size_t i = 0; i < slot.size(); ++i) {
      r.bound.push_back(bind_tensor(slot[i], s->inputs()[i], Where{"input", &s->inputs()[i].name}));
      r.views.push_back(r.bound.back().view);
    }
    return r;
  }
};

// Loads or compiles `model` into a session (GIL released for the work).
std::unique_ptr<PySession> open_session(py::handle model, int threads, bool profile, const CompileArgs& ca,
                                         bool adapt_threads = true) {
  if (threads < 0) invalid("Session: threads must be >= 0 (0 = all cores), got " + std::to_string(threads));
  auto ps = std::make_unique<PySession>();
  ps->so.num_threads = threads;
  ps->so.profile = profile;
  ps->so.adapt_threads = adapt_threads;
  const auto t0 = std::chrono::steady_clock::now();
  const auto no_compile_options = [&](const std::string& what) {
    if (ca.any())
      invalid("Session: compile options (opt_level, input_shapes, disabled_passes, ...) apply to ONNX models; " +
              what + " is compiled already");
  };
  if (py::isinstance<PyCompiledModel>(model)) {
    no_compile_options("this gec.CompiledModel");
    ps->gom = model.cast<PyCompiledModel&>().m.gom;
  } else if (is_path(model)) {
    const std::string path = fspath(model);
    if (ends_with(path, ".gom") || (!ends_with(path, ".onnx") && file_looks_like_gom(path))) {
      no_compile_options("'" + path + "'");
      ps->gom_path = path;
    } else {
      gec::CompiledModel m = compile_any(model, compile_options(ca));
      ps->gom = m.gom;
      ps->compile_report = m.report_json;
    }
  } else if (PyObject_CheckBuffer(model.ptr())) {
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(model).request();
    const size_t size = static_cast<size_t>(info.size * info.itemsize);
    if (gec::looks_like_gom(info.ptr, size)) {
      no_compile_options("a .gom in memory");
      const auto* p = static_cast<const uint8_t*>(info.ptr);
      ps->gom = std::make_shared<const std::vector<uint8_t>>(p, p + size);  // the runtime keeps its own bytes
    } else {
      gec::CompiledModel m = compile_any(model, compile_options(ca));
      ps->gom = m.gom;
      ps->compile_report = m.report_json;
    }
  } else {
    invalid("Session: the model must be a path (str or os.PathLike), the bytes of an ONNX or .gom model, or a "
            "gec.CompiledModel, got " + py_type_name(model));
  }
  {
    py::gil_scoped_release nogil;
    ps->s = ps->gom ? gec::Session::load_from_bytes(ps->gom, ps->so) : gec::Session::load(ps->gom_path, ps->so);
  }
  ps->load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ps->finish_load();
  return ps;
}

// A second session over the same model with profiling on.
std::unique_ptr<PySession> profiling_twin(const PySession& src) {
  auto ps = std::make_unique<PySession>();
  ps->gom = src.gom;
  ps->gom_path = src.gom_path;
  ps->so = src.so;
  ps->so.profile = true;
  {
    py::gil_scoped_release nogil;
    ps->s = ps->gom ? gec::Session::load_from_bytes(ps->gom, ps->so) : gec::Session::load(ps->gom_path, ps->so);
  }
  ps->load_ms = src.load_ms;
  ps->finish_load();
  return ps;
}

// Appends how to give real inputs when a run on generated ones failed.
template <typename F>
auto with_generated_hint(bool generated, F f) {
  try {
    return f();
  } catch (const gec::Error& e) {
    if (!generated || e.code() == ErrorCode::kInternal) throw;
    throw gec::Error(e.code(), std::string(e.what()) +
                                   " (on generated inputs, every dynamic dim set to 1: pass inputs={name: array}, "
                                   "or fix the dims with input_shapes={name: dims})");
  }
}

py::object json_loads(const std::string& s) {
  return py::reinterpret_borrow<py::object>(G->json_loads)(s);
}

}  // namespace

PYBIND11_MODULE(_gec, m) {
  m.doc() = "GraphEngine's C++ API (include/gec) for Python; use the package `gec`, which re-exports it.";
  G = new Globals();
  {
    py::module_ errors = py::module_::import("gec.errors");
    py::object by_code = errors.attr("BY_CODE");
    py::object enum_cls = errors.attr("ErrorCode");
    G->error_code_enum = enum_cls.release();
    for (int i = 0; i < 6; ++i) {
      py::object code = py::reinterpret_borrow<py::object>(G->error_code_enum)(i);
      G->error_by_code[i] = by_code[code].cast<py::object>().release();
    }
    G->json_loads = py::object(py::module_::import("json").attr("loads")).release();
    G->node_arg_cls = py::object(py::module_::import("gec._nodearg").attr("NodeArg")).release();
    py::module_ np = py::module_::import("numpy");
    G->np_array = py::object(np.attr("array")).release();
    const std::pair<DType, const char*> names[] = {
        {DType::kFloat32, "float32"}, {DType::kUInt8, "uint8"},       {DType::kInt8, "int8"},
        {DType::kUInt16, "uint16"},   {DType::kInt16, "int16"},       {DType::kInt32, "int32"},
        {DType::kInt64, "int64"},     {DType::kString, "object"},     {DType::kBool, "bool"},
        {DType::kFloat16, "float16"}, {DType::kFloat64, "float64"},   {DType::kUInt32, "uint32"},
        {DType::kUInt64, "uint64"},   {DType::kComplex64, "complex64"}, {DType::kComplex128, "complex128"}};
    for (auto& [t, name] : names) G->np_dtypes[static_cast<int>(t)] = np.attr("dtype")(name).release();
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gec::Error& e) {
      set_python_error(e);
    }
  });

  m.def("version", &gec::version, "The gec version string, e.g. '0.1.0'.");
  m.def("openmp_wait_policy", &gec::openmp_wait_policy,
        "How idle OpenMP threads wait, from the environment: 'libgomp default (spin 300000)', "
        "'passive', 'bounded spin (GOMP_SPINCOUNT=N)', ...");

  // The classes below are private: the package wraps them (python/gec/_api.py),
  // which also documents them. A pybind11 object made with __new__ and no
  // __init__ would reach these methods with an unconstructed C++ object; the
  // public classes cannot be made so.
  py::class_<PyCompiledModel>(m, "_CompiledModel", py::buffer_protocol(), "Private: see gec.CompiledModel.")
      .def_buffer([](PyCompiledModel& c) {
        return py::buffer_info(const_cast<uint8_t*>(c.m.gom->data()), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<ssize_t>(c.m.gom->size())}, {1}, /*readonly=*/true);
      })
      .def("__len__", [](const PyCompiledModel& c) { return c.m.gom->size(); })
      .def("to_bytes", [](const PyCompiledModel& c) {
        return py::bytes(reinterpret_cast<const char*>(c.m.gom->data()), c.m.gom->size());
      })
      .def_property_readonly("report", [](PyCompiledModel& c) {
        if (!c.report_cache) c.report_cache = json_loads(c.m.report_json);
        return c.report_cache;
      })
      .def_property_readonly("report_json", [](const PyCompiledModel& c) { return c.m.report_json; })
      .def("save", [](const PyCompiledModel& c, py::object path) {
        const std::string p = fspath(path);
        py::gil_scoped_release nogil;
        gec::save_gom(c.m, p);
      });

  m.def("_compile", [](py::object model, py::object opt_level, py::object input_shapes, py::object disabled_passes,
                       py::object verify_each_pass, py::object dump_graph_dir, py::object streams) {
        CompileArgs ca{opt_level, input_shapes, disabled_passes, verify_each_pass, dump_graph_dir, streams};
        auto c = std::make_unique<PyCompiledModel>();
        c->m = compile_any(model, compile_options(ca));
        return c;
      }, "Private: see gec.compile.");

  py::class_<PySession>(m, "_Session", "Private: see gec.Session.")
      .def(py::init([](py::object model, int threads, py::object opt_level, py::object input_shapes,
                       py::object disabled_passes, py::object verify_each_pass, py::object dump_graph_dir,
                       py::object streams, bool profile, bool adapt_threads) {
        CompileArgs ca{opt_level, input_shapes, disabled_passes, verify_each_pass, dump_graph_dir, streams};
        return open_session(model, threads, profile, ca, adapt_threads);
      }))
      .def("get_inputs", [](const PySession& s) {
        py::list l;
        for (auto& o : s.inputs_meta) l.append(o);
        return l;
      })
      .def("get_outputs", [](const PySession& s) {
        py::list l;
        for (auto& o : s.outputs_meta) l.append(o);
        return l;
      })
      .def("run", &PySession::run, py::arg("output_names"), py::arg("input_feed"), py::arg("run_options") = py::none())
      .def_property_readonly("threads", [](const PySession& s) { return s.s->num_threads(); })
      .def_property_readonly("load_ms", [](const PySession& s) { return s.load_ms; })
      .def_property_readonly("arena_bytes", [](const PySession& s) { return s.s->arena_bytes(); })
      .def_property_readonly("streams", [](const PySession& s) { return s.s->streams(); })
      .def_property_readonly("weights_bytes", [](const PySession& s) { return s.s->weights_bytes(); })
      .def_property_readonly("packed_weights",
                             [](const PySession& s) {
                               const gec::Session::PackedWeightCounts c = s.s->packed_weights();
                               py::dict d;
                               d["stored"] = c.stored;
                               d["adopted"] = c.adopted;
                               d["packed"] = c.packed;
                               d["stored_bytes"] = c.stored_bytes;
                               return d;
                             })
      .def_property_readonly("node_count", [](const PySession& s) { return s.s->node_count(); })
      .def_property_readonly("compile_report", [](const PySession& s) -> py::object {
        if (s.compile_report.empty()) return py::none();
        return json_loads(s.compile_report);
      })
      .def("last_input_pointers", [](const PySession& s) { return s.last_in_ptrs; })
      .def("last_output_pointers", [](const PySession& s) { return s.last_out_ptrs; })
      .def("text", [](const PySession& s) { return "inputs: " + s.inputs_text() + "; outputs: " + s.outputs_text(); });

  m.def("_bench", [](PySession& ps, py::object inputs, int warmup, int iterations) {
    if (iterations < 1) invalid("bench: iterations must be >= 1, got " + std::to_string(iterations));
    if (warmup < 0) invalid("bench: warmup must be >= 0, got " + std::to_string(warmup));
    PySession::Inputs in = ps.bench_inputs(inputs, "bench");
    gec::BenchOptions bo;
    bo.warmup = warmup;
    bo.iterations = iterations;
    gec::BenchResult r;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(ps.mu);
      r = with_generated_hint(inputs.is_none(), [&] { return gec::bench(*ps.s, in.views, bo); });
    }
    r.load_ms = ps.load_ms;
    return r.json();
  });
  m.def("_profile", [](PySession& src, py::object inputs, int iterations) {
    if (iterations < 1) invalid("profile: iterations must be >= 1, got " + std::to_string(iterations));
    std::unique_ptr<PySession> twin;
    PySession* ps = &src;
    if (!src.so.profile) {
      twin = profiling_twin(src);
      ps = twin.get();
    }
    PySession::Inputs in = ps->bench_inputs(inputs, "profile");
    gec::ProfileOptions po;
    po.iterations = iterations;
    gec::ProfileResult r;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(ps->mu);
      r = with_generated_hint(inputs.is_none(), [&] { return gec::profile(*ps->s, in.views, po); });
    }
    return py::make_tuple(r.json(), r.trace_json());
  });
}
