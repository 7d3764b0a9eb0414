// The compiler half of the C API (include/gec/c_api.h): compile options and
// gec_compile_file, wrapping gec/compiler.h. Lives in libgec_compiler, so a
// program that only runs .gom files links no ONNX.
#include <cstdlib>
#include <cstring>
#include <string>

#include "gec/c_api.h"
#include "gec/compiler.h"
#include "runtime/c_api_internal.h"

using gec::ErrorCode;
using gec::fail;
using gec::capi::guarded;
using gec::capi::require;

struct gec_compile_options {
  gec::CompileOptions opts;
};

extern "C" {

gec_compile_options* gec_compile_options_create(void) { return new (std::nothrow) gec_compile_options; }
void gec_compile_options_free(gec_compile_options* options) { delete options; }

gec_status gec_compile_options_set_opt_level(gec_compile_options* options, int level) {
  return guarded([&] {
    require(options, "options");
    if (level < 0 || level > 3)
      fail(ErrorCode::kInvalidArgument, "opt_level " + std::to_string(level) + " is outside 0..3");
    options->opts.opt_level = level;
  });
}

gec_status gec_compile_options_set_streams(gec_compile_options* options, int streams) {
  return guarded([&] {
    require(options, "options");
    if (streams < 0 || streams > 64)
      fail(ErrorCode::kInvalidArgument, "streams " + std::to_string(streams) + " is outside 0..64");
    options->opts.streams = streams;
  });
}

gec_status gec_compile_options_set_input_shape(gec_compile_options* options, const char* input_name,
                                               const int64_t* dims, int32_t rank) {
  return guarded([&] {
    require(options, "options");
    require(input_name, "input_name");
    if (rank < 0 || rank > 64) fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + " is outside 0..64");
    if (rank > 0) require(dims, "dims");
    gec::Shape s(dims, dims + rank);
    for (int64_t d : s)
      if (d < 0) fail(ErrorCode::kInvalidArgument, std::string("input '") + input_name + "': negative dim in " +
                                                        gec::shape_str(s));
    options->opts.input_shapes[input_name] = s;
  });
}

gec_status gec_compile_options_disable_pass(gec_compile_options* options, const char* pass_name) {
  return guarded([&] {
    require(options, "options");
    require(pass_name, "pass_name");
    options->opts.disabled_passes.emplace_back(pass_name);
  });
}

gec_status gec_compile_file(const char* onnx_path, const char* gom_path, const gec_compile_options* options,
                            char** report_json) {
  return guarded([&] {
    require(onnx_path, "onnx_path");
    require(gom_path, "gom_path");
    gec::CompiledModel m = gec::compile_file(onnx_path, options ? options->opts : gec::CompileOptions{});
    gec::save_gom(m, gom_path);
    if (report_json) {
      char* s = static_cast<char*>(std::malloc(m.report_json.size() + 1));
      if (!s) throw std::bad_alloc();
      std::memcpy(s, m.report_json.c_str(), m.report_json.size() + 1);
      *report_json = s;
    }
  });
}

}  // extern "C"
