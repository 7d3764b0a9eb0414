/* The GraphEngine C API: load an offline model (.gom), read its inputs and
 * outputs, run it on buffers the caller owns; and compile an ONNX model into
 * a .gom. Plain C (C99), no C++ types, so other languages can bind it
 * (ctypes, cffi, Go's cgo, Rust's bindgen, C#'s P/Invoke).
 *
 * Libraries: the gec_session_* / gec_result_* functions are in
 * libgec_runtime (pkg-config graphengine, CMake GraphEngine::gec_runtime);
 * gec_compile_* are in libgec_compiler (pkg-config graphengine-compiler,
 * CMake GraphEngine::gec_compiler), which links libonnx. A program that only
 * runs .gom files needs only the runtime.
 *
 * Errors: every function that can fail returns a gec_status; GEC_OK (0) is
 * success. On failure, gec_last_error_message() gives a one-line message
 * naming the file, input, node or op involved (the same text the C++ API's
 * gec::Error carries). The message is kept per thread and stays valid until
 * the next failing call on that thread. Out-parameters are left untouched
 * when a call fails. No function aborts or throws across this interface.
 *
 * Thread safety:
 *  - Different sessions are independent: run them from as many threads as
 *    you like.
 *  - One session runs up to max_concurrent_requests requests at once
 *    (default 1; gec_session_options_set_max_concurrent_requests), each in
 *    a run context of its own; the weights are shared. A call beyond that
 *    waits (set_wait_when_busy) or returns GEC_INVALID_ARGUMENT; it never
 *    computes a wrong result.
 *  - The metadata functions (gec_session_input_count, _info, ...) only read
 *    what the load computed: safe from any thread, also during a run.
 *  - Options objects, results and compile calls hold no shared state.
 *
 * Element types are ONNX's TensorProto.DataType codes (GEC_FLOAT32 = 1, ...;
 * gec/dtype.h). Tensors are dense and row-major (C order). String tensors,
 * and models with sequence or optional inputs or outputs, are refused by
 * the run functions (GEC_UNSUPPORTED): use the C++ API for those.
 */
#ifndef GEC_C_API_H_
#define GEC_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------- */

typedef enum gec_status {
  GEC_OK = 0,
  GEC_INVALID_ARGUMENT = 1, /* caller passed something wrong (input shape, dtype, buffer size, option) */
  GEC_INVALID_MODEL = 2,    /* the ONNX model is malformed or rejected by the checker */
  GEC_UNSUPPORTED = 3,      /* op, opset, dtype or feature not implemented */
  GEC_CORRUPT_FILE = 4,     /* .gom truncated, checksum mismatch, newer format */
  GEC_IO = 5,               /* a file cannot be read or written */
  GEC_INTERNAL = 6,         /* a bug in GraphEngine */
  GEC_OUT_OF_MEMORY = 7     /* an allocation failed */
} gec_status;

/* The message of the last failing call on this thread ("" if none). */
const char* gec_last_error_message(void);
/* "GEC_OK", "GEC_INVALID_ARGUMENT", ...; "GEC_UNKNOWN" for other values. */
const char* gec_status_name(gec_status status);
/* The library version, e.g. "0.1.0". */
const char* gec_version(void);

/* ---- element types and tensors ------------------------------------------ */

/* ONNX TensorProto.DataType codes. */
typedef enum gec_dtype {
  GEC_UNDEFINED = 0,
  GEC_FLOAT32 = 1,
  GEC_UINT8 = 2,
  GEC_INT8 = 3,
  GEC_UINT16 = 4,
  GEC_INT16 = 5,
  GEC_INT32 = 6,
  GEC_INT64 = 7,
  GEC_STRING = 8, /* not accepted by the C API */
  GEC_BOOL = 9,   /* one byte per element, 0 or 1 */
  GEC_FLOAT16 = 10,
  GEC_FLOAT64 = 11,
  GEC_UINT32 = 12,
  GEC_UINT64 = 13,
  GEC_COMPLEX64 = 14,
  GEC_COMPLEX128 = 15,
  GEC_BFLOAT16 = 16
} gec_dtype;

/* Bytes per element (0 for GEC_UNDEFINED, GEC_STRING and unknown codes). */
size_t gec_dtype_size(int32_t dtype);
/* numpy's name: "float32", "int64", ...; "undefined" for unknown codes. */
const char* gec_dtype_name(int32_t dtype);

/* A dense row-major tensor in memory the caller (or a gec_result) owns.
 * `dims` has `rank` entries (rank 0 is a scalar: one element; dims may then
 * be NULL). `byte_size` is the size of the buffer at `data` in bytes; it
 * must be at least the product of dims times gec_dtype_size(dtype), which
 * the run functions check before touching the buffer. */
typedef struct gec_tensor {
  void* data;
  int32_t dtype; /* a gec_dtype */
  int32_t rank;
  const int64_t* dims;
  size_t byte_size;
} gec_tensor;

/* ---- session options ---------------------------------------------------- */

typedef struct gec_session_options gec_session_options;

/* Defaults: num_threads 0 (the cores this process may use: its CPU
 * affinity and cgroup quota), no arena or weights limit beyond the
 * machine's memory, adapt_threads on. NULL when out of memory. */
gec_session_options* gec_session_options_create(void);
void gec_session_options_free(gec_session_options* options); /* NULL is fine */
/* Intra-op threads; 0 = the cores this process may use. At most 4 per core
 * of the machine, else GEC_INVALID_ARGUMENT when the session loads. */
gec_status gec_session_options_set_num_threads(gec_session_options* options, int num_threads);
/* Refuse models whose activation arena (bytes) is larger, and any value
 * allocated at run time (dynamic shapes) that would be larger; 0 = physical memory. */
gec_status gec_session_options_set_max_arena_bytes(gec_session_options* options, int64_t bytes);
/* Refuse models whose weights (bytes) are larger; 0 = no limit. */
gec_status gec_session_options_set_max_weights_bytes(gec_session_options* options, int64_t bytes);
/* 1 = run on fewer threads while other processes keep this process's CPUs
 * busy (checked every 200 ms at most), and small steps on one thread where
 * the runs measure that faster (SessionOptions::adapt_threads); 0 = always
 * num_threads, every step on the plan's count. */
gec_status gec_session_options_set_adapt_threads(gec_session_options* options, int enabled);

/* Requests one session may run at once (1..1024, default 1); num_threads 0
 * then gives each its share of the cores. */
gec_status gec_session_options_set_max_concurrent_requests(gec_session_options* options, int requests);
/* 1 = a run beyond max_concurrent_requests waits for a free context;
 * 0 (default) = it returns GEC_INVALID_ARGUMENT at once. */
gec_status gec_session_options_set_wait_when_busy(gec_session_options* options, int enabled);

/* ---- sessions ----------------------------------------------------------- */

typedef struct gec_session gec_session;

/* Memory-maps and checks a .gom file; `options` may be NULL (defaults).
 * Errors: GEC_IO (cannot open), GEC_CORRUPT_FILE (truncated, checksum,
 * newer format, inconsistent plan), GEC_INVALID_ARGUMENT (options, limits). */
gec_status gec_session_load(const char* gom_path, const gec_session_options* options, gec_session** out);
/* Same, from `size` bytes of a .gom in memory; they are copied, so the
 * caller may free them when the call returns. */
gec_status gec_session_load_from_memory(const void* data, size_t size, const gec_session_options* options,
                                        gec_session** out);
void gec_session_free(gec_session* session); /* NULL is fine; must not overlap a run */

/* One model input or output. Pointers stay valid as long as the session.
 * dims[i] == -1 where the size is known only at run time; dim_params[i]
 * then names it ("" when the model gave no name). For sequences and
 * optionals (kind != 0) dtype and dims describe the tensor elements. */
typedef struct gec_io_info {
  const char* name;
  int32_t kind; /* 0 tensor, 1 sequence, 2 optional(tensor), 3 optional(sequence) */
  int32_t dtype;
  int32_t has_shape; /* 0: rank unknown (dims empty) */
  int32_t rank;
  const int64_t* dims;
  const char* const* dim_params;
} gec_io_info;

size_t gec_session_input_count(const gec_session* session);
size_t gec_session_output_count(const gec_session* session);
/* GEC_INVALID_ARGUMENT when index >= the count. */
gec_status gec_session_input_info(const gec_session* session, size_t index, gec_io_info* info);
gec_status gec_session_output_info(const gec_session* session, size_t index, gec_io_info* info);
/* Activation arena planned at compile time, and constant data, in bytes. */
int64_t gec_session_arena_bytes(const gec_session* session);
int64_t gec_session_weights_bytes(const gec_session* session);
/* Intra-op threads runs use (num_threads with 0 resolved). */
int gec_session_num_threads(const gec_session* session);

/* Runs the model on caller buffers. inputs[i] follows the input order and
 * is read in place; outputs[i] must have the dtype and the shape the model
 * produces for these inputs (for static shapes: gec_session_output_info),
 * else GEC_INVALID_ARGUMENT naming the output and both shapes. Static-shape
 * outputs are computed directly in the caller's buffers, which must not
 * overlap each other or an input. Errors: GEC_INVALID_ARGUMENT (counts,
 * dtypes, shapes, buffer sizes, a run already in progress on this session,
 * bad input values such as a Gather index out of range, naming the node),
 * GEC_UNSUPPORTED (string tensors, sequence/optional values),
 * GEC_OUT_OF_MEMORY. */
gec_status gec_session_run(gec_session* session, const gec_tensor* inputs, size_t num_inputs,
                           const gec_tensor* outputs, size_t num_outputs);

/* Outputs the library allocated (for outputs whose shape is not known
 * before the run). */
typedef struct gec_result gec_result;

/* Runs the model and returns its outputs in a new gec_result (free it with
 * gec_result_free). Errors as gec_session_run. */
gec_status gec_session_run_alloc(gec_session* session, const gec_tensor* inputs, size_t num_inputs,
                                 gec_result** out);
size_t gec_result_count(const gec_result* result);
/* A view of output `index`: data, dtype, rank, dims and byte_size, valid
 * until gec_result_free. GEC_INVALID_ARGUMENT when index >= the count. */
gec_status gec_result_get(const gec_result* result, size_t index, gec_tensor* tensor);
void gec_result_free(gec_result* result); /* NULL is fine */

/* ---- compiling (libgec_compiler) ---------------------------------------- */

typedef struct gec_compile_options gec_compile_options;

/* Defaults: opt_level 2, no shapes fixed. NULL when out of memory. */
gec_compile_options* gec_compile_options_create(void);
void gec_compile_options_free(gec_compile_options* options); /* NULL is fine */
/* 0: no optimization; 1: cleanup; 2: + fusion; 3: everything. Else
 * GEC_INVALID_ARGUMENT. */
gec_status gec_compile_options_set_opt_level(gec_compile_options* options, int level);
/* Streams to spread the main graph over: 0 = auto (the default), 1 = one
 * sequential step list, up to 64; else GEC_INVALID_ARGUMENT. */
gec_status gec_compile_options_set_streams(gec_compile_options* options, int streams);
/* Fixes the shape of an input with dynamic dims (`rank` dims). */
gec_status gec_compile_options_set_input_shape(gec_compile_options* options, const char* input_name,
                                               const int64_t* dims, int32_t rank);
/* Skips a pass by name (`gec compile --list-passes`). */
gec_status gec_compile_options_disable_pass(gec_compile_options* options, const char* pass_name);

/* Compiles the ONNX model at `onnx_path` into a .gom at `gom_path`
 * (written atomically). `options` may be NULL. If `report_json` is not
 * NULL it receives the compile report (JSON, docs/reports.md), to be freed
 * with gec_string_free. Errors: GEC_IO, GEC_INVALID_MODEL, GEC_UNSUPPORTED
 * (naming every unsupported op), GEC_INVALID_ARGUMENT (options). */
gec_status gec_compile_file(const char* onnx_path, const char* gom_path, const gec_compile_options* options,
                            char** report_json);
void gec_string_free(char* s); /* NULL is fine */

#ifdef __cplusplus
}
#endif

#endif /* GEC_C_API_H_ */
