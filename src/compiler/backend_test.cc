// Backend-test runner; see backend_test.h.
#include "compiler/backend_test.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "support/compare.h"

namespace fs = std::filesystem;

namespace gec {

std::string model_file_of(const std::string& dir) {
  for (const char* name : {"model.onnx", "model.pb", "model.json"})
    if (fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

std::vector<std::string> collect_test_dirs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!fs::exists(p))
      fail(ErrorCode::kIo, p + ": no such file or directory" +
                               std::string(p.find("shared") != std::string::npos
                                               ? " (the shared models and cases are expected in ../shared next to the repository)"
                                               : ""));
    if (!fs::is_directory(p))
      fail(ErrorCode::kInvalidArgument, p + ": not a folder; gec test takes folders in the ONNX backend-test layout "
                                            "(model.onnx + test_data_set_N/) or folders of them");
    if (!model_file_of(p).empty()) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> sub;
    for (const auto& e : fs::directory_iterator(p))
      if (e.is_directory() && !model_file_of(e.path().string()).empty()) sub.push_back(e.path().string());
    if (sub.empty())
      fail(ErrorCode::kIo, p + ": holds no test folder (model.onnx, model.pb or model.json + test_data_set_N/)");
    std::sort(sub.begin(), sub.end());
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

Expectations Expectations::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail(ErrorCode::kIo, path + ": cannot open the expectations file");
  Expectations e;
  std::string line;
  for (int no = 1; std::getline(f, line); ++no) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    std::istringstream ss(line);
    std::string name, kind, reason;
    if (!(ss >> name)) continue;
    ss >> kind;
    std::getline(ss, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    Expectation k;
    if (kind == "fail") k = Expectation::kFail;
    else if (kind == "shape-only") k = Expectation::kShapeOnly;
    else if (kind == "skip") k = Expectation::kSkip;
    else fail(ErrorCode::kInvalidArgument, path + ":" + std::to_string(no) + ": expected 'fail', 'shape-only' or 'skip' after the test name");
    if (reason.empty()) fail(ErrorCode::kInvalidArgument, path + ":" + std::to_string(no) + ": every entry needs a reason");
    e.entries[name] = {k, reason};
  }
  return e;
}

Expectation Expectations::lookup(const std::string& test) const {
  auto it = entries.find(test);
  return it == entries.end() ? Expectation::kPass : it->second.kind;
}

namespace {

std::vector<std::string> data_set_dirs(const std::string& dir) {
  std::vector<std::string> r;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      r.push_back(e.path().string());
  std::sort(r.begin(), r.end());
  return r;
}

// Reads prefix_0.pb, prefix_1.pb, ... until one is missing; file k holds a
// value of kinds[k] (tensor past the end of kinds).
std::vector<std::pair<std::string, AnyValue>> read_numbered(const std::string& dir, const std::string& prefix,
                                                            const std::vector<ValueKind>& kinds) {
  std::vector<std::pair<std::string, AnyValue>> r;
  for (size_t k = 0;; ++k) {
    fs::path p = fs::path(dir) / (prefix + "_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    std::string name;
    AnyValue v = frontend::read_value_proto_file(p.string(), k < kinds.size() ? kinds[k] : ValueKind::kTensor, &name);
    r.emplace_back(name, std::move(v));
  }
  return r;
}

std::vector<ValueKind> kinds_of(const std::vector<IoInfo>& ios) {
  std::vector<ValueKind> r;
  for (const IoInfo& io : ios) r.push_back(io.kind);
  return r;
}

// ONNX 1.12's test data stores bfloat16 tensors with data_type UINT16 (the
// bits are bfloat16). Where the model declares bfloat16, read them as such.
Tensor as_declared(Tensor t, DType declared) {
  if (declared == DType::kBFloat16 && t.dtype() == DType::kUInt16)
    return Tensor(DType::kBFloat16, t.shape(), t.data(), std::make_shared<Tensor>(t));
  return t;
}

AnyValue as_declared(AnyValue v, DType declared) {
  v.tensor = as_declared(std::move(v.tensor), declared);
  for (Tensor& e : v.elements) e = as_declared(std::move(e), declared);
  if (declared == DType::kBFloat16 && v.elem_dtype == DType::kUInt16) v.elem_dtype = declared;
  return v;
}

// Orders the data set's inputs as the session expects: by name when every
// file names a model input, else by position.
std::vector<AnyValue> order_inputs(const Session& s, const std::vector<std::pair<std::string, AnyValue>>& files) {
  std::vector<AnyValue> values;
  bool by_name = files.size() == s.inputs().size();
  for (const auto& [name, t] : files) {
    bool found = false;
    for (const auto& io : s.inputs()) found |= io.name == name;
    by_name &= found;
  }
  for (size_t i = 0; i < s.inputs().size(); ++i) {
    const AnyValue* v = nullptr;
    if (by_name) {
      for (const auto& [name, f] : files)
        if (name == s.inputs()[i].name) v = &f;
    } else if (i < files.size()) {
      v = &files[i].second;
    }
    if (!v) fail(ErrorCode::kInvalidArgument, "no data for input '" + s.inputs()[i].name + "'");
    values.push_back(as_declared(*v, s.inputs()[i].dtype));
  }
  return values;
}

CompareResult compare_one(const Tensor& got, const Tensor& want_file, const BackendTestOptions& opts) {
  const Tensor want = as_declared(want_file, got.dtype());
  if (!opts.shape_only) return compare_tensors(got.view(), want.view(), opts.rtol, opts.atol);
  CompareResult c;
  c.ok = got.dtype() == want.dtype() && got.shape() == want.shape();
  if (!c.ok)
    c.message = std::string("expected ") + dtype_name(want.dtype()) + shape_str(want.shape()) + ", got " +
                dtype_name(got.dtype()) + shape_str(got.shape());
  return c;
}

// Compares values of any kind: sequences element by element, optionals by
// presence and then by their held values.
CompareResult compare_values(const AnyValue& got, const AnyValue& want, const BackendTestOptions& opts) {
  CompareResult c;
  const auto mismatch = [&](const std::string& m) {
    c.ok = false;
    c.message = m;
    return c;
  };
  if (got.kind != want.kind) return mismatch("expected a " + std::string(value_kind_name(want.kind)) + ", got " + got.str());
  const bool optional = is_optional(got.kind);
  if (optional && got.has_value != want.has_value) return mismatch("expected " + want.str() + ", got " + got.str());
  if (optional && !got.has_value) return c;
  if (!got.is_sequence_like()) return compare_one(got.tensor, want.tensor, opts);
  if (got.elements.size() != want.elements.size())
    return mismatch("expected " + std::to_string(want.elements.size()) + " sequence elements, got " +
                    std::to_string(got.elements.size()));
  for (size_t i = 0; i < got.elements.size(); ++i) {
    CompareResult e = compare_one(got.elements[i], want.elements[i], opts);
    c.max_abs_error = std::max(c.max_abs_error, e.max_abs_error);
    if (!e.ok) return mismatch("element " + std::to_string(i) + ": " + e.message);
  }
  return c;
}

}  // namespace

BackendTestResult run_backend_test(const std::string& dir, const BackendTestOptions& opts) {
  BackendTestResult res;
  res.name = fs::path(dir).filename().string();
  try {
    const auto sets = data_set_dirs(dir);
    if (sets.empty()) fail(ErrorCode::kIo, dir + ": no test_data_set_N folder");
    for (int level : opts.opt_levels) {
      CompileOptions co;
      co.opt_level = level;
      co.disabled_passes = opts.disabled_passes;
      co.streams = opts.streams;
      auto t0 = std::chrono::steady_clock::now();
      CompiledModel cm = compile_file(model_file_of(dir), co);
      res.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      SessionOptions so;
      so.num_threads = opts.num_threads;
      auto session = Session::load_from_bytes(cm.gom, so);
      res.data_sets = 0;
      for (const auto& set : sets) {
        auto inputs = read_numbered(set, "input", kinds_of(session->inputs()));
        auto expected = read_numbered(set, "output", kinds_of(session->outputs()));
        std::vector<AnyValue> ordered = order_inputs(*session, inputs);
        if (opts.static_shapes) {
          CompileOptions sc = co;
          for (size_t i = 0; i < ordered.size(); ++i)
            if (ordered[i].kind == ValueKind::kTensor) sc.input_shapes[session->inputs()[i].name] = ordered[i].tensor.shape();
          session = Session::load_from_bytes(compile_file(model_file_of(dir), sc).gom, so);
        }
        auto outs = session->run_values(ordered);
        if (expected.size() != outs.size())
          fail(ErrorCode::kInvalidArgument, "the model has " + std::to_string(outs.size()) + " outputs, the data set " +
                                                std::to_string(expected.size()));
        // Outputs by name when every reference file names a model output
        // (TensorFlow references follow the signature's order, not the
        // graph's), else by position.
        std::vector<size_t> ref_of(outs.size());
        bool by_name = true;
        for (size_t k = 0; k < outs.size(); ++k) {
          ref_of[k] = k;
          bool found = false;
          for (size_t e = 0; e < expected.size(); ++e)
            if (expected[e].first == session->outputs()[k].name) ref_of[k] = e, found = true;
          by_name = by_name && found;
        }
        if (!by_name)
          for (size_t k = 0; k < outs.size(); ++k) ref_of[k] = k;
        for (size_t k = 0; k < outs.size(); ++k) {
          CompareResult c = compare_values(outs[k], expected[ref_of[k]].second, opts);
          res.max_abs_error = std::max(res.max_abs_error, c.max_abs_error);
          if (!c.ok) {
            std::ostringstream m;
            m << "-O" << level << " " << fs::path(set).filename().string() << " output '"
              << session->outputs()[k].name << "': " << c.message;
            res.message = m.str();
            return res;
          }
        }
        ++res.data_sets;
      }
    }
    res.passed = true;
  } catch (const Error& e) {
    res.message = std::string(error_code_name(e.code())) + ": " + e.what();
  } catch (const std::exception& e) {
    res.message = std::string("internal error: ") + e.what();
  }
  return res;
}

}  // namespace gec
