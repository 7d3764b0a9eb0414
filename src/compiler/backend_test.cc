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

std::vector<std::string> collect_test_dirs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!fs::exists(p))
      fail(ErrorCode::kIo, p + ": no such file or directory" +
                               std::string(p.find("shared") != std::string::npos
                                               ? " (the shared models and cases are expected in ../shared next to the repository)"
                                               : ""));
    if (fs::exists(fs::path(p) / "model.onnx")) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> sub;
    for (const auto& e : fs::directory_iterator(p))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) sub.push_back(e.path().string());
    if (sub.empty()) fail(ErrorCode::kIo, p + ": holds no test folder (model.onnx + test_data_set_N/)");
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

// Reads prefix_0.pb, prefix_1.pb, ... until one is missing.
std::vector<std::pair<std::string, Tensor>> read_numbered(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<std::string, Tensor>> r;
  for (int k = 0;; ++k) {
    fs::path p = fs::path(dir) / (prefix + "_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    std::string name;
    Tensor t = frontend::read_tensor_proto_file(p.string(), &name);
    r.emplace_back(name, std::move(t));
  }
  return r;
}

// ONNX 1.12's test data stores bfloat16 tensors with data_type UINT16 (the
// bits are bfloat16). Where the model declares bfloat16, read them as such.
TensorView as_declared(TensorView v, DType declared) {
  if (declared == DType::kBFloat16 && v.dtype == DType::kUInt16) v.dtype = DType::kBFloat16;
  return v;
}

// Orders the data set's inputs as the session expects: by name when every
// file names a model input, else by position.
std::vector<TensorView> order_inputs(const Session& s, const std::vector<std::pair<std::string, Tensor>>& files) {
  std::vector<TensorView> views;
  bool by_name = files.size() == s.inputs().size();
  for (const auto& [name, t] : files) {
    bool found = false;
    for (const auto& io : s.inputs()) found |= io.name == name;
    by_name &= found;
  }
  for (size_t i = 0; i < s.inputs().size(); ++i) {
    const Tensor* t = nullptr;
    if (by_name) {
      for (const auto& [name, f] : files)
        if (name == s.inputs()[i].name) t = &f;
    } else if (i < files.size()) {
      t = &files[i].second;
    }
    if (!t) fail(ErrorCode::kInvalidArgument, "no data for input '" + s.inputs()[i].name + "'");
    views.push_back(as_declared(t->view(), s.inputs()[i].dtype));
  }
  return views;
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
      auto t0 = std::chrono::steady_clock::now();
      CompiledModel cm = compile_onnx_file((fs::path(dir) / "model.onnx").string(), co);
      res.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      SessionOptions so;
      so.num_threads = opts.num_threads;
      auto session = Session::load_from_bytes(cm.gom, so);
      res.data_sets = 0;
      for (const auto& set : sets) {
        auto inputs = read_numbered(set, "input");
        auto expected = read_numbered(set, "output");
        auto outs = session->run(order_inputs(*session, inputs));
        if (expected.size() != outs.size())
          fail(ErrorCode::kInvalidArgument, "the model has " + std::to_string(outs.size()) + " outputs, the data set " +
                                                std::to_string(expected.size()));
        for (size_t k = 0; k < outs.size(); ++k) {
          const TensorView want = as_declared(expected[k].second.view(), outs[k].dtype());
          CompareResult c;
          if (opts.shape_only) {
            c.ok = outs[k].dtype() == want.dtype && outs[k].shape() == want.shape;
            if (!c.ok) c.message = std::string("expected ") + dtype_name(want.dtype) + shape_str(want.shape) + ", got " +
                                   dtype_name(outs[k].dtype()) + shape_str(outs[k].shape());
          } else {
            c = compare_tensors(outs[k].view(), want, opts.rtol, opts.atol);
          }
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
