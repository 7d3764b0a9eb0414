/* Loads a .gom, prints its inputs and outputs, runs it on generated float
 * inputs (dynamic dims set to 1) both into caller buffers and into
 * library-owned outputs, and checks the two agree bit for bit. With a
 * second argument "softmax", also checks every output row sums to 1.
 * Exit 0 on success, 1 with a message otherwise. */
#include <gec/c_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, gec_status st) {
  fprintf(stderr, "run_gom: %s: %s: %s\n", what, gec_status_name(st), gec_last_error_message());
  return 1;
}

#define MAX_IO 16
#define MAX_RANK 8

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: run_gom MODEL.gom [softmax]\n");
    return 1;
  }
  gec_session_options* opts = gec_session_options_create();
  gec_session_options_set_num_threads(opts, 1);
  gec_session* s = NULL;
  gec_status st = gec_session_load(argv[1], opts, &s);
  gec_session_options_free(opts);
  if (st != GEC_OK) return fail("load", st);
  size_t n_in = gec_session_input_count(s), n_out = gec_session_output_count(s);
  if (n_in > MAX_IO || n_out > MAX_IO) return fail("too many inputs or outputs for this program", GEC_OK);
  printf("GraphEngine %s, %zu inputs, %zu outputs, arena %lld bytes\n", gec_version(), n_in, n_out,
         (long long)gec_session_arena_bytes(s));

  gec_tensor inputs[MAX_IO];
  int64_t in_dims[MAX_IO][MAX_RANK];
  for (size_t i = 0; i < n_in; ++i) {
    gec_io_info info;
    if ((st = gec_session_input_info(s, i, &info)) != GEC_OK) return fail("input_info", st);
    if (info.dtype != GEC_FLOAT32 || info.rank > MAX_RANK) return fail("this program feeds float32 inputs only", GEC_OK);
    size_t n = 1;
    for (int d = 0; d < info.rank; ++d) {
      in_dims[i][d] = info.dims[d] < 0 ? 1 : info.dims[d];
      n *= (size_t)in_dims[i][d];
    }
    float* data = malloc(n * sizeof(float));
    for (size_t k = 0; k < n; ++k) data[k] = (float)((int)(k % 17) - 8) * 0.125f;
    inputs[i] = (gec_tensor){data, GEC_FLOAT32, info.rank, in_dims[i], n * sizeof(float)};
    printf("input %s: %s, rank %d\n", info.name, gec_dtype_name(info.dtype), info.rank);
  }

  gec_result* r = NULL;
  if ((st = gec_session_run_alloc(s, inputs, n_in, &r)) != GEC_OK) return fail("run_alloc", st);
  gec_tensor outputs[MAX_IO];
  void* buffers[MAX_IO];
  for (size_t i = 0; i < n_out; ++i) {
    gec_tensor t;
    if ((st = gec_result_get(r, i, &t)) != GEC_OK) return fail("result_get", st);
    buffers[i] = malloc(t.byte_size ? t.byte_size : 1);
    outputs[i] = t;
    outputs[i].data = buffers[i];
  }
  if ((st = gec_session_run(s, inputs, n_in, outputs, n_out)) != GEC_OK) return fail("run", st);
  for (size_t i = 0; i < n_out; ++i) {
    gec_tensor t;
    gec_io_info info;
    gec_result_get(r, i, &t);
    gec_session_output_info(s, i, &info);
    if (memcmp(t.data, outputs[i].data, t.byte_size) != 0) return fail("the two runs differ", GEC_OK);
    printf("output %s: %s, %zu bytes, same in both runs\n", info.name, gec_dtype_name(t.dtype), t.byte_size);
    if (argc > 2 && strcmp(argv[2], "softmax") == 0 && t.dtype == GEC_FLOAT32 && t.rank >= 1) {
      size_t cols = (size_t)t.dims[t.rank - 1], rows = t.byte_size / sizeof(float) / cols;
      const float* y = t.data;
      for (size_t row = 0; row < rows; ++row) {
        double sum = 0;
        for (size_t c = 0; c < cols; ++c) sum += y[row * cols + c];
        if (fabs(sum - 1.0) > 1e-5) {
          fprintf(stderr, "run_gom: row %zu of %s sums to %f, not 1\n", row, info.name, sum);
          return 1;
        }
      }
      printf("output %s: %zu rows sum to 1\n", info.name, rows);
    }
  }
  /* A wrong call is a status and a message, not a crash. */
  st = gec_session_run(s, inputs, 0, outputs, n_out);
  if (st != GEC_INVALID_ARGUMENT || strlen(gec_last_error_message()) == 0) return fail("a bad call was accepted", st);
  printf("bad call: %s: %s\n", gec_status_name(st), gec_last_error_message());
  gec_result_free(r);
  for (size_t i = 0; i < n_out; ++i) free(buffers[i]);
  for (size_t i = 0; i < n_in; ++i) free(inputs[i].data);
  gec_session_free(s);
  printf("ok\n");
  return 0;
}
