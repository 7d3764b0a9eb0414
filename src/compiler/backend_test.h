// The ONNX backend-test runner behind `gec test` (our counterpart of ONNX
// Runtime's onnx_test_runner): a test is a folder with model.onnx and
// test_data_set_N/{input_K.pb, output_K.pb}; we compile the model, run every
// data set and compare every output.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gec {

struct BackendTestOptions {
  std::vector<int> opt_levels = {2};  // each level compiles and runs separately
  double rtol = 1e-3;
  double atol = 1e-4;
  int num_threads = 0;                // 0 = all cores
  /// Compare only dtypes and shapes (tests of random ops such as Bernoulli).
  bool shape_only = false;
  /// After the compile with the model's declared (possibly symbolic) shapes,
  /// compile again per data set with its input tensors' shapes as
  /// input_shapes (as an offline compile for deployment would) and run that.
  bool static_shapes = false;
  /// Passes and rules to skip in every compile (CompileOptions::disabled_passes).
  std::vector<std::string> disabled_passes;
  /// CompileOptions::streams of every compile (0 = auto).
  int streams = 0;
};

/// What an expectations file says about one test.
enum class Expectation { kPass, kFail, kShapeOnly, kSkip };

/// An expectations file: one test per line, `<test name> <fail|shape-only|skip> <reason>`;
/// '#' starts a comment. A test not listed must pass. `fail`: it must fail
/// (so the file stays true when it starts passing); `shape-only`: outputs are
/// random, compare dtypes and shapes only; `skip`: not run at all.
/// Throws gec::Error(kInvalidArgument) naming the line for a malformed entry
/// or a missing reason.
struct Expectations {
  struct Entry {
    Expectation kind;
    std::string reason;
  };
  std::map<std::string, Entry> entries;
  static Expectations load(const std::string& path);
  Expectation lookup(const std::string& test) const;
};

struct BackendTestResult {
  std::string name;                   // folder name
  bool passed = false;
  std::string message;                // why it failed; empty on success
  double max_abs_error = 0;           // worst over outputs, data sets and levels
  int data_sets = 0;
  double compile_ms = 0;              // last level's compile time
};

/// Expands paths into test folders: a path holding model.onnx is a test;
/// otherwise its immediate subfolders holding model.onnx are (sorted by name).
/// Throws gec::Error(kIo) when a path does not exist or holds no test.
std::vector<std::string> collect_test_dirs(const std::vector<std::string>& paths);

/// The model of a test folder: model.onnx, model.pb (TensorFlow GraphDef) or
/// model.json (TensorFlow.js), the first that exists; "" when none does.
std::string model_file_of(const std::string& dir);

/// Runs one test folder. Never throws for a model problem: errors become a
/// failed result with the error's message.
BackendTestResult run_backend_test(const std::string& dir, const BackendTestOptions& opts);

}  // namespace gec
