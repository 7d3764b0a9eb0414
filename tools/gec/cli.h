// Shared pieces of the `gec` command-line tool. Each subcommand lives in its
// own file and registers itself on the CLI11 app; the logic they call lives in
// the libraries (include/gec, src/), not here.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "gec/threading.h"

namespace gec::cli {

/// The check of a numeric option in [lo, hi] (NaN is outside). Unlike
/// CLI11 2.1's CLI::Range its errors print the bounds as written (60000,
/// not 60000.000000) and tell a value that is no number from one out of
/// range: "'abc' is not a number", "Value 70000 not in range 0 to 60000",
/// also for integers beyond the option's type ("Value 3000000000 not in
/// range 0 to 2147483647").
template <class T>
CLI::Validator number_in(T lo, T hi) {
  const auto text = [](T v) {
    std::ostringstream o;
    o << v;
    return o.str();
  };
  constexpr bool kWhole = std::is_integral_v<T>;
  const std::string range = text(lo) + " to " + text(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& in) -> std::string {
        // As a long double first: a number too large for T is out of range
        // (CLI11 2.1 fails to parse it, or saturates an int64), not "no number".
        long double wide = 0;
        size_t used = 0;
        try {
          wide = std::stold(in, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != in.size()) return "'" + in + "' is not a number";
        if (kWhole && std::isfinite(wide) && wide != std::floor(wide)) return "'" + in + "' is not a whole number";
        if (!(wide >= static_cast<long double>(lo) && wide <= static_cast<long double>(hi)))
          return "Value " + in + " not in range " + range;
        T v{};
        if (!CLI::detail::lexical_cast(in, v)) return "'" + in + "' is not " + (kWhole ? "a whole number" : "a number");
        return std::string();
      },
      std::string(kWhole ? "INT" : "FLOAT") + " in [" + text(lo) + " - " + text(hi) + "]");
}

/// Checks of non-negative integer options whose error names the integer
/// range (CLI11 2.1's NonNegativeNumber prints the whole double range).
inline CLI::Validator non_negative_int() { return number_in(0, std::numeric_limits<int>::max()); }
inline CLI::Validator non_negative_int64() { return number_in(int64_t{0}, std::numeric_limits<int64_t>::max()); }
/// --threads: 0 to max_num_threads(), as SessionOptions::num_threads takes it.
inline CLI::Validator thread_count() { return number_in(0, max_num_threads()); }
/// --rtol / --atol: a non-negative float.
inline CLI::Validator tolerance() { return number_in(0.0, std::numeric_limits<double>::max()); }
/// The help text of --threads.
inline constexpr const char* kThreadsHelp =
    "intra-op threads (0 = the cores this process may use; at most 4 x the machine's cores)";

/// A subcommand: adds its options to `app` and returns the action to run.
using Action = std::function<int()>;
struct Command {
  CLI::App* app;
  Action action;
};

Command add_compile(CLI::App& root);
Command add_run(CLI::App& root);
Command add_inspect(CLI::App& root);
Command add_test(CLI::App& root);
Command add_bench(CLI::App& root);
Command add_profile(CLI::App& root);
Command add_compare(CLI::App& root);
Command add_ops(CLI::App& root);

/// Options shared by commands that compile: -O, --input-shape, --disable-pass,
/// and the size limits --max-weights-bytes / --max-arena-bytes (also applied
/// when a .gom is loaded).
struct CompileFlags {
  int opt_level = 2;
  std::vector<std::string> input_shapes;  // "name:1,3,224,224"
  std::vector<std::string> disable_passes;
  std::vector<std::string> extra_outputs;  // NAME,... or *
  std::vector<std::string> outputs;        // TensorFlow: NODE[:K],...
  int64_t max_weights_bytes = 0, max_arena_bytes = 0;
  std::string streams = "auto";  // "auto" or 1..64
  /// The options that only mean something when compiling (-O,
  /// --input-shape, --disable-pass): open_model refuses them for a .gom.
  std::vector<CLI::Option*> compile_only;
  void add_to(CLI::App* app);
  CompileOptions to_options() const;
};

/// Parses "NAME:D1,D2,..." (dims >= 0; "NAME:" is a scalar); `flag` names
/// the option in the kInvalidArgument message.
std::pair<std::string, Shape> parse_shape_spec(const std::string& spec, const std::string& flag);

/// True when the file starts with the .gom magic (kIo when unreadable).
bool is_gom_file(const std::string& path);

/// Loads a .gom, or compiles a model (ONNX, TensorFlow) in memory first.
std::unique_ptr<Session> open_model(const std::string& path, const CompileFlags& flags,
                                    const SessionOptions& so);

/// Reads the inputs given by --input-dir (input_K.pb) and --input NAME=FILE
/// (.pb or .npy) in the session's input order. A sequence or optional input
/// is read from an ONNX SequenceProto / OptionalProto .pb file.
std::vector<AnyValue> read_inputs(const Session& s, const std::string& input_dir,
                                  const std::vector<std::string>& named);

/// The tensors of `values`; kInvalidArgument naming `command` and the input
/// when one is a sequence or optional (bench and profile time tensor models).
std::vector<Tensor> tensor_inputs(const Session& s, const std::vector<AnyValue>& values, const std::string& command);

/// `--spin on|off`: how idle threads wait (gec/threading.h). main() reads
/// it before parsing, when it sets OpenMP's environment; this registers it
/// for validation and --help.
void add_spin_option(CLI::App* app);

/// True when `s` ends with `suffix` (".onnx", ".npy").
bool ends_with(const std::string& s, const std::string& suffix);

/// True when stderr is a terminal (progress bars).
bool stderr_is_tty();

}  // namespace gec::cli
