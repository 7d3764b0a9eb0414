// The runtime half of the C API (include/gec/c_api.h): sessions, metadata,
// runs, results. Each function wraps the C++ API (gec/runtime.h) in
// capi::guarded, so no exception crosses into C.
#include "gec/c_api.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "gec/dtype.h"
#include "gec/runtime.h"
#include "gec/tensor.h"
#include "runtime/c_api_internal.h"

using gec::ErrorCode;
using gec::fail;

struct gec_session_options {
  gec::SessionOptions opts;
};

// One model input or output, with the pointer arrays gec_io_info hands out.
struct CIoInfo {
  const gec::IoInfo* info = nullptr;
  std::vector<const char*> dim_params;
};

struct gec_session {
  std::unique_ptr<gec::Session> session;
  std::vector<CIoInfo> inputs, outputs;
};

struct gec_result {
  std::vector<gec::Tensor> outputs;
};

namespace gec::capi {
namespace {
thread_local std::string t_last_error;

std::vector<CIoInfo> c_infos(const std::vector<IoInfo>& infos) {
  std::vector<CIoInfo> out(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    out[i].info = &infos[i];
    for (size_t d = 0; d < infos[i].dims.size(); ++d)
      out[i].dim_params.push_back(d < infos[i].dim_params.size() ? infos[i].dim_params[d].c_str() : "");
  }
  return out;
}

gec_session* make_session(std::unique_ptr<Session> s) {
  auto* cs = new gec_session;
  cs->session = std::move(s);
  cs->inputs = c_infos(cs->session->inputs());
  cs->outputs = c_infos(cs->session->outputs());
  return cs;
}

void fill_info(const CIoInfo& c, gec_io_info* info) {
  info->name = c.info->name.c_str();
  info->kind = static_cast<int32_t>(c.info->kind);
  info->dtype = static_cast<int32_t>(c.info->dtype);
  info->has_shape = c.info->has_shape ? 1 : 0;
  info->rank = static_cast<int32_t>(c.info->dims.size());
  info->dims = c.info->dims.data();
  info->dim_params = c.dim_params.data();
}

// Checks a caller's gec_tensor and returns the view of it; `role` and the
// model's name for it ("input 'x'") go into the messages.
TensorView view_of(const gec_tensor& t, const std::string& role) {
  if (!dtype_is_valid(t.dtype) || t.dtype == GEC_UNDEFINED)
    fail(ErrorCode::kInvalidArgument, role + ": unknown dtype code " + std::to_string(t.dtype));
  if (t.dtype == GEC_STRING)
    fail(ErrorCode::kUnsupported, role + ": string tensors are not supported by the C API (use the C++ API)");
  constexpr int32_t kMaxRank = 64;
  if (t.rank < 0 || t.rank > kMaxRank)
    fail(ErrorCode::kInvalidArgument, role + ": rank " + std::to_string(t.rank) + " is outside 0.." +
                                          std::to_string(kMaxRank));
  if (t.rank > 0 && !t.dims) fail(ErrorCode::kInvalidArgument, role + ": dims is NULL with rank " +
                                                                     std::to_string(t.rank));
  TensorView v;
  v.dtype = static_cast<DType>(t.dtype);
  v.shape.assign(t.dims, t.dims + t.rank);
  const size_t esize = dtype_size(v.dtype);
  size_t need = esize;
  for (int64_t d : v.shape) {
    if (d < 0) fail(ErrorCode::kInvalidArgument, role + ": negative dim in " + shape_str(v.shape));
    if (d != 0 && need > std::numeric_limits<size_t>::max() / static_cast<size_t>(d))
      fail(ErrorCode::kInvalidArgument, role + ": shape " + shape_str(v.shape) + " overflows the address space");
    need *= static_cast<size_t>(d);
  }
  if (t.byte_size < need)
    fail(ErrorCode::kInvalidArgument, role + ": " + dtype_name(v.dtype) + shape_str(v.shape) + " needs " +
                                          std::to_string(need) + " bytes, the buffer has " +
                                          std::to_string(t.byte_size));
  if (need > 0 && !t.data) fail(ErrorCode::kInvalidArgument, role + ": data is NULL");
  v.data = t.data;
  return v;
}

std::vector<TensorView> input_views(const gec_session& s, const gec_tensor* inputs, size_t n) {
  if (n != s.inputs.size())
    fail(ErrorCode::kInvalidArgument, "the model has " + std::to_string(s.inputs.size()) + " inputs, " +
                                          std::to_string(n) + " were given");
  if (n > 0) require(inputs, "inputs");
  std::vector<TensorView> views;
  views.reserve(n);
  for (size_t i = 0; i < n; ++i) views.push_back(view_of(inputs[i], "input '" + s.inputs[i].info->name + "'"));
  return views;
}

void require_tensor_io(const gec_session& s) {
  for (const auto* list : {&s.inputs, &s.outputs})
    for (const CIoInfo& c : *list)
      if (c.info->kind != ValueKind::kTensor)
        fail(ErrorCode::kUnsupported, "'" + c.info->name + "' is a " + value_kind_name(c.info->kind) +
                                          "; the C API runs tensor-only models (use the C++ API)");
}
}  // namespace

gec_status set_error(gec_status status, const std::string& message) {
  t_last_error = message;
  return status;
}

gec_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return GEC_INVALID_ARGUMENT;
    case ErrorCode::kInvalidModel: return GEC_INVALID_MODEL;
    case ErrorCode::kUnsupported: return GEC_UNSUPPORTED;
    case ErrorCode::kCorruptFile: return GEC_CORRUPT_FILE;
    case ErrorCode::kIo: return GEC_IO;
    case ErrorCode::kInternal: return GEC_INTERNAL;
  }
  return GEC_INTERNAL;
}

}  // namespace gec::capi

using gec::capi::guarded;
using gec::capi::require;

extern "C" {

const char* gec_last_error_message(void) { return gec::capi::t_last_error.c_str(); }

const char* gec_status_name(gec_status status) {
  switch (status) {
    case GEC_OK: return "GEC_OK";
    case GEC_INVALID_ARGUMENT: return "GEC_INVALID_ARGUMENT";
    case GEC_INVALID_MODEL: return "GEC_INVALID_MODEL";
    case GEC_UNSUPPORTED: return "GEC_UNSUPPORTED";
    case GEC_CORRUPT_FILE: return "GEC_CORRUPT_FILE";
    case GEC_IO: return "GEC_IO";
    case GEC_INTERNAL: return "GEC_INTERNAL";
    case GEC_OUT_OF_MEMORY: return "GEC_OUT_OF_MEMORY";
  }
  return "GEC_UNKNOWN";
}

const char* gec_version(void) { return gec::version(); }

size_t gec_dtype_size(int32_t dtype) {
  if (!gec::dtype_is_valid(dtype) || dtype == GEC_STRING) return 0;
  return gec::dtype_size(static_cast<gec::DType>(dtype));
}

const char* gec_dtype_name(int32_t dtype) {
  if (!gec::dtype_is_valid(dtype)) return "undefined";
  return gec::dtype_name(static_cast<gec::DType>(dtype));
}

gec_session_options* gec_session_options_create(void) { return new (std::nothrow) gec_session_options; }
void gec_session_options_free(gec_session_options* options) { delete options; }

gec_status gec_session_options_set_num_threads(gec_session_options* options, int num_threads) {
  return guarded([&] {
    require(options, "options");
    if (num_threads < 0) fail(ErrorCode::kInvalidArgument, "num_threads must be >= 0 (0 = all available cores)");
    options->opts.num_threads = num_threads;
  });
}

gec_status gec_session_options_set_max_arena_bytes(gec_session_options* options, int64_t bytes) {
  return guarded([&] {
    require(options, "options");
    if (bytes < 0) fail(ErrorCode::kInvalidArgument, "max_arena_bytes must be >= 0 (0 = physical memory)");
    options->opts.max_arena_bytes = bytes;
  });
}

gec_status gec_session_options_set_max_weights_bytes(gec_session_options* options, int64_t bytes) {
  return guarded([&] {
    require(options, "options");
    if (bytes < 0) fail(ErrorCode::kInvalidArgument, "max_weights_bytes must be >= 0 (0 = no limit)");
    options->opts.max_weights_bytes = bytes;
  });
}

gec_status gec_session_options_set_adapt_threads(gec_session_options* options, int enabled) {
  return guarded([&] {
    require(options, "options");
    options->opts.adapt_threads = enabled != 0;
  });
}

gec_status gec_session_options_set_max_concurrent_requests(gec_session_options* options, int requests) {
  return guarded([&] {
    require(options, "options");
    if (requests < 1 || requests > 1024)
      fail(ErrorCode::kInvalidArgument, "max_concurrent_requests " + std::to_string(requests) + " is outside 1..1024");
    options->opts.max_concurrent_requests = requests;
  });
}

gec_status gec_session_options_set_wait_when_busy(gec_session_options* options, int enabled) {
  return guarded([&] {
    require(options, "options");
    options->opts.wait_when_busy = enabled != 0;
  });
}

gec_status gec_session_load(const char* gom_path, const gec_session_options* options, gec_session** out) {
  return guarded([&] {
    require(gom_path, "gom_path");
    require(out, "out");
    auto s = gec::Session::load(gom_path, options ? options->opts : gec::SessionOptions{});
    *out = gec::capi::make_session(std::move(s));
  });
}

gec_status gec_session_load_from_memory(const void* data, size_t size, const gec_session_options* options,
                                        gec_session** out) {
  return guarded([&] {
    if (size > 0) require(data, "data");
    require(out, "out");
    const auto* p = static_cast<const uint8_t*>(data);
    auto bytes = std::make_shared<const std::vector<uint8_t>>(p, p + size);
    auto s = gec::Session::load_from_bytes(bytes, options ? options->opts : gec::SessionOptions{});
    *out = gec::capi::make_session(std::move(s));
  });
}

void gec_session_free(gec_session* session) { delete session; }

size_t gec_session_input_count(const gec_session* session) { return session ? session->inputs.size() : 0; }
size_t gec_session_output_count(const gec_session* session) { return session ? session->outputs.size() : 0; }

gec_status gec_session_input_info(const gec_session* session, size_t index, gec_io_info* info) {
  return guarded([&] {
    require(session, "session");
    require(info, "info");
    if (index >= session->inputs.size())
      fail(ErrorCode::kInvalidArgument, "input index " + std::to_string(index) + " >= input count " +
                                            std::to_string(session->inputs.size()));
    gec::capi::fill_info(session->inputs[index], info);
  });
}

gec_status gec_session_output_info(const gec_session* session, size_t index, gec_io_info* info) {
  return guarded([&] {
    require(session, "session");
    require(info, "info");
    if (index >= session->outputs.size())
      fail(ErrorCode::kInvalidArgument, "output index " + std::to_string(index) + " >= output count " +
                                            std::to_string(session->outputs.size()));
    gec::capi::fill_info(session->outputs[index], info);
  });
}

int64_t gec_session_arena_bytes(const gec_session* session) { return session ? session->session->arena_bytes() : 0; }
int64_t gec_session_weights_bytes(const gec_session* session) {
  return session ? session->session->weights_bytes() : 0;
}
int gec_session_num_threads(const gec_session* session) { return session ? session->session->num_threads() : 0; }

gec_status gec_session_run(gec_session* session, const gec_tensor* inputs, size_t num_inputs,
                           const gec_tensor* outputs, size_t num_outputs) {
  return guarded([&] {
    require(session, "session");
    gec::capi::require_tensor_io(*session);
    std::vector<gec::TensorView> in = gec::capi::input_views(*session, inputs, num_inputs);
    if (num_outputs != session->outputs.size())
      fail(ErrorCode::kInvalidArgument, "the model has " + std::to_string(session->outputs.size()) +
                                            " outputs, " + std::to_string(num_outputs) + " buffers were given");
    if (num_outputs > 0) require(outputs, "outputs");
    std::vector<gec::TensorView> out;
    out.reserve(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i)
      out.push_back(gec::capi::view_of(outputs[i], "output '" + session->outputs[i].info->name + "'"));
    session->session->run(in, out);
  });
}

gec_status gec_session_run_alloc(gec_session* session, const gec_tensor* inputs, size_t num_inputs,
                                 gec_result** out) {
  return guarded([&] {
    require(session, "session");
    require(out, "out");
    gec::capi::require_tensor_io(*session);
    std::vector<gec::TensorView> in = gec::capi::input_views(*session, inputs, num_inputs);
    auto r = std::make_unique<gec_result>();
    r->outputs = session->session->run(in);
    *out = r.release();
  });
}

size_t gec_result_count(const gec_result* result) { return result ? result->outputs.size() : 0; }

gec_status gec_result_get(const gec_result* result, size_t index, gec_tensor* tensor) {
  return guarded([&] {
    require(result, "result");
    require(tensor, "tensor");
    if (index >= result->outputs.size())
      fail(ErrorCode::kInvalidArgument, "output index " + std::to_string(index) + " >= output count " +
                                            std::to_string(result->outputs.size()));
    const gec::Tensor& t = result->outputs[index];
    tensor->data = t.data();
    tensor->dtype = static_cast<int32_t>(t.dtype());
    tensor->rank = static_cast<int32_t>(t.shape().size());
    tensor->dims = t.shape().data();
    tensor->byte_size = t.bytes();
  });
}

void gec_result_free(gec_result* result) { delete result; }

void gec_string_free(char* s) { std::free(s); }

}  // extern "C"
