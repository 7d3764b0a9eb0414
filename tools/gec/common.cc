// Helpers shared by the gec subcommands.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontend/onnx/tensor_proto.h"
#include "support/npy.h"
#include "tools/gec/cli.h"

namespace fs = std::filesystem;

namespace gec::cli {

void CompileFlags::add_to(CLI::App* app) {
  compile_only.push_back(
      app->add_option("-O", opt_level, "optimization level 0..3 (-O0 none, -O1 cleanup, -O2 fusion, -O3 all)")
          ->check(number_in(0, 3))
          ->capture_default_str());
  compile_only.push_back(
      app->add_option("--input-shape", input_shapes, "fix an input's dynamic dims, e.g. x:1,3,224,224 (repeatable)"));
  compile_only.push_back(
      app->add_option("--disable-pass", disable_passes,
                      "skip a pass, a single rewrite rule or a stage (layout_propagation, pack_weights, winograd, direct_conv, "
                      "nhwc_conv, taps_conv, im2col_conv, native_gemm) by "
                      "name (one per flag, repeatable)")
          ->expected(1)
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll));
  compile_only.push_back(app->add_option("--outputs", outputs,
                                         "TensorFlow models: the tensors to output (NODE or NODE:K, comma-separated; "
                                         "default: every node output nobody reads)")
                             ->delimiter(','));
  compile_only.push_back(app->add_option("--extra-outputs", extra_outputs,
                                         "also output these values (NAME,NAME,...; * = every value a node computes)")
                             ->delimiter(','));
  compile_only.push_back(app->add_option("--streams", streams,
                                         "streams to spread the graph over: auto (from its width and the cores), "
                                         "1 (one sequential step list) .. 64; a run uses at most one worker per thread")
                             ->capture_default_str());
  app->add_option("--max-weights-bytes", max_weights_bytes, "refuse a model with more bytes of weights (0 = no limit)")
      ->check(non_negative_int64());
  app->add_option("--max-arena-bytes", max_arena_bytes,
                  "refuse a model whose activation arena is larger (0 = none at compile, this machine's memory at load)")
      ->check(non_negative_int64());
}

std::pair<std::string, Shape> parse_shape_spec(const std::string& spec, const std::string& flag) {
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0)
    fail(ErrorCode::kInvalidArgument, flag + " '" + spec + "': expected NAME:D1,D2,...");
  Shape s;
  std::string dims = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= dims.size() && !dims.empty()) {
    size_t comma = dims.find(',', pos);
    std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      size_t used = 0;
      long long v = std::stoll(d, &used);
      if (used != d.size() || v < 0) throw std::invalid_argument(d);
      s.push_back(v);
    } catch (const std::exception&) {
      fail(ErrorCode::kInvalidArgument, flag + " '" + spec + "': '" + d + "' is not a dimension");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {spec.substr(0, colon), s};
}

CompileOptions CompileFlags::to_options() const {
  CompileOptions o;
  o.opt_level = opt_level;
  o.disabled_passes = disable_passes;
  o.extra_outputs = extra_outputs;
  o.outputs = outputs;
  o.max_weights_bytes = max_weights_bytes;
  o.max_arena_bytes = max_arena_bytes;
  if (streams != "auto") {
    try {
      size_t used = 0;
      const int n = std::stoi(streams, &used);
      if (used != streams.size() || n < 1 || n > 64) throw std::invalid_argument(streams);
      o.streams = n;
    } catch (const std::exception&) {
      fail(ErrorCode::kInvalidArgument, "--streams '" + streams + "': expected auto or a count from 1 to 64");
    }
  }
  for (const auto& spec : input_shapes) {
    auto [name, shape] = parse_shape_spec(spec, "--input-shape");
    o.input_shapes[name] = shape;
  }
  return o;
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool is_gom_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(ErrorCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  char head[8] = {};
  f.read(head, sizeof head);
  return looks_like_gom(head, static_cast<size_t>(f.gcount()));
}

std::unique_ptr<Session> open_model(const std::string& path, const CompileFlags& flags, const SessionOptions& options) {
  SessionOptions so = options;
  so.max_arena_bytes = flags.max_arena_bytes;
  so.max_weights_bytes = flags.max_weights_bytes;
  if (!is_gom_file(path)) return Session::load_from_bytes(compile_file(path, flags.to_options()).gom, so);
  for (const CLI::Option* o : flags.compile_only)
    if (o->count() > 0)
      fail(ErrorCode::kInvalidArgument, o->get_name() + " applies when compiling a model (.onnx, .pb, model.json); " +
                                            path + " is an offline model, compiled with its own options (gec inspect "
                                            "shows them): recompile it with gec compile, or give the model");
  return Session::load(path, so);
}

// The most bytes an input file may have: the declared tensor's data plus
// 1 MiB of proto or .npy header when its shape is static and numeric,
// protobuf's 2 GiB message limit otherwise. A file that is not regular
// (/dev/zero, a FIFO) is refused by the readers.
static uint64_t input_file_limit(const IoInfo& io) {
  if (io.kind != ValueKind::kTensor || !io.has_shape || io.dtype == DType::kString || dtype_size(io.dtype) == 0)
    return frontend::kMaxProtoFileBytes;
  uint64_t n = dtype_size(io.dtype);
  for (int64_t d : io.dims) {
    if (d < 0) return frontend::kMaxProtoFileBytes;
    if (d > 0 && n > (uint64_t{1} << 50) / static_cast<uint64_t>(d)) return frontend::kMaxProtoFileBytes;
    n *= static_cast<uint64_t>(d);
  }
  return std::min(n + (uint64_t{1} << 20), frontend::kMaxProtoFileBytes);
}

// A .npy file (tensors only) or an ONNX proto file of the input's kind.
static AnyValue read_value_file(const std::string& file, const IoInfo& io, std::string* name, uint64_t limit = 0) {
  if (limit == 0) limit = input_file_limit(io);
  if (!ends_with(file, ".npy")) return frontend::read_value_proto_file(file, io.kind, name, limit);
  if (io.kind != ValueKind::kTensor)
    fail(ErrorCode::kInvalidArgument, file + ": input '" + io.str() +
                                          "' is not a tensor; give it as an ONNX SequenceProto/OptionalProto .pb file");
  return AnyValue::of_tensor(read_npy(file, limit));
}

std::vector<AnyValue> read_inputs(const Session& s, const std::string& input_dir, const std::vector<std::string>& named) {
  const auto& ios = s.inputs();
  std::vector<AnyValue> inputs(ios.size());
  std::vector<bool> given(ios.size(), false);
  auto known_inputs = [&] {
    std::string known;
    for (const auto& io : ios) known += (known.empty() ? "" : ", ") + io.name;
    return known;
  };
  if (!input_dir.empty()) {
    if (!fs::is_directory(input_dir))
      fail(ErrorCode::kIo, input_dir + (fs::exists(input_dir) ? ": not a directory" : ": no such directory"));
    uint64_t widest = 0;  // the largest size any input allows
    for (const IoInfo& io : ios) widest = std::max(widest, input_file_limit(io));
    // Every input_K.pb is matched by the name it holds; a file without a name
    // goes by position K (said on stderr). A name the compiled model does not
    // take is an error, not a file silently left unread.
    for (size_t k = 0;; ++k) {
      fs::path p = fs::path(input_dir) / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      const std::string file = p.string();
      std::string name;
      // The kind of the input the file is for decides which proto to read;
      // peek at the name with the positional input's kind first, under the
      // largest size any input allows (the matched one's is checked below).
      const IoInfo& guess = ios[std::min(k, ios.empty() ? size_t{0} : ios.size() - 1)];
      AnyValue v = ios.empty() ? AnyValue() : read_value_file(file, guess, &name, widest);
      size_t slot = ios.size();
      for (size_t j = 0; j < ios.size(); ++j)
        if (!name.empty() && ios[j].name == name) slot = j;
      if (slot == ios.size()) {
        if (!name.empty())
          fail(ErrorCode::kInvalidArgument,
               file + " holds '" + name + "', which is not an input of the compiled model (inputs: " + known_inputs() +
                   "). An initializer the ONNX graph also lists as an input (an overridable default, IR >= 4) is "
                   "compiled in as a constant and cannot be overridden.");
        if (k >= ios.size())
          fail(ErrorCode::kInvalidArgument, file + ": the model takes " + std::to_string(ios.size()) + " input(s) (" +
                                                known_inputs() + "), this is file " + std::to_string(k + 1));
        slot = k;
        std::fprintf(stderr, "gec: %s has no name; using it for input %zu '%s' by position\n", file.c_str(), k,
                     ios[k].name.c_str());
      }
      if (given[slot]) fail(ErrorCode::kInvalidArgument, file + ": input '" + ios[slot].name + "' is given twice");
      if (&ios[slot] != &guess) v = read_value_file(file, ios[slot], nullptr);  // its kind and size limit
      inputs[slot] = std::move(v);
      given[slot] = true;
    }
  }
  for (const auto& spec : named) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) fail(ErrorCode::kInvalidArgument, "--input '" + spec + "': expected NAME=FILE");
    const std::string name = spec.substr(0, eq);
    size_t slot = ios.size();
    for (size_t j = 0; j < ios.size(); ++j)
      if (ios[j].name == name) slot = j;
    if (slot == ios.size())
      fail(ErrorCode::kInvalidArgument, "--input: the model has no input '" + name + "' (inputs: " + known_inputs() + ")");
    inputs[slot] = read_value_file(spec.substr(eq + 1), ios[slot], nullptr);
    given[slot] = true;
  }
  for (size_t j = 0; j < ios.size(); ++j)
    if (!given[j])
      fail(ErrorCode::kInvalidArgument, "missing input '" + ios[j].name + "' (" + ios[j].str() +
                                            "): give --input-dir with input_" + std::to_string(j) +
                                            ".pb or --input " + ios[j].name + "=FILE");
  return inputs;
}

std::vector<Tensor> tensor_inputs(const Session& s, const std::vector<AnyValue>& values, const std::string& command) {
  std::vector<Tensor> r;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind != ValueKind::kTensor)
      fail(ErrorCode::kInvalidArgument, "gec " + command + " runs models with tensor inputs; input '" +
                                            s.inputs()[i].str() + "' is not a tensor (use gec run)");
    r.push_back(values[i].tensor);
  }
  return r;
}

void add_spin_option(CLI::App* app) {
  static std::string ignored;  // applied by main() before OpenMP started
  app->add_option("--spin", ignored,
                  "idle threads spin a few ms before sleeping (on, the default: fastest) or sleep at once "
                  "(off: least CPU); OMP_WAIT_POLICY / GOMP_SPINCOUNT in the environment win")
      ->check(CLI::IsMember({"on", "off"}));
}

bool stderr_is_tty() { return isatty(2) != 0; }

}  // namespace gec::cli
