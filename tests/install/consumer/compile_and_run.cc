// Compiles an ONNX model with the C++ API (gec/compiler.h), runs it with the
// C++ runtime API and with the C API on the same inputs, and checks both
// give the same bits. Usage: compile_and_run MODEL.onnx OUT.gom. Exit 0 on
// success, 1 with a message otherwise.
#include <gec/c_api.h>
#include <gec/compiler.h>
#include <gec/runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_and_run MODEL.onnx OUT.gom\n");
    return 1;
  }
  try {
    gec::CompileOptions copts;
    copts.opt_level = 3;
    gec::CompiledModel m = gec::compile_onnx_file(argv[1], copts);
    gec::save_gom(m, argv[2]);
    gec::SessionOptions sopts;
    sopts.num_threads = 1;
    auto session = gec::Session::load(argv[2], sopts);
    std::vector<gec::Tensor> in_storage;
    std::vector<gec::TensorView> in_views;
    std::vector<gec_tensor> c_inputs;
    for (const gec::IoInfo& io : session->inputs()) {
      gec::Shape shape = io.dims;
      for (int64_t& d : shape) if (d < 0) d = 1;
      gec::Tensor t(io.dtype, shape);
      if (io.dtype == gec::DType::kFloat32)
        for (int64_t k = 0; k < t.numel(); ++k) t.as<float>()[k] = static_cast<float>(k % 7) * 0.25f - 0.5f;
      in_storage.push_back(t);
    }
    for (const gec::Tensor& t : in_storage) {
      in_views.push_back(t.view());
      c_inputs.push_back(gec_tensor{t.data(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.shape().size()),
                                    t.shape().data(), t.bytes()});
    }
    std::vector<gec::Tensor> cpp_out = session->run(in_views);

    gec_session* s = nullptr;
    if (gec_session_load(argv[2], nullptr, &s) != GEC_OK) {
      std::fprintf(stderr, "compile_and_run: C load: %s\n", gec_last_error_message());
      return 1;
    }
    gec_result* r = nullptr;
    if (gec_session_run_alloc(s, c_inputs.data(), c_inputs.size(), &r) != GEC_OK) {
      std::fprintf(stderr, "compile_and_run: C run: %s\n", gec_last_error_message());
      return 1;
    }
    for (size_t i = 0; i < cpp_out.size(); ++i) {
      gec_tensor t{};
      gec_result_get(r, i, &t);
      if (t.byte_size != cpp_out[i].bytes() || std::memcmp(t.data, cpp_out[i].data(), t.byte_size) != 0) {
        std::fprintf(stderr, "compile_and_run: output %zu differs between the C and C++ APIs\n", i);
        return 1;
      }
      std::printf("output %s: %s, C and C++ APIs agree\n", session->outputs()[i].name.c_str(),
                  gec::shape_str(cpp_out[i].shape()).c_str());
    }
    gec_result_free(r);
    gec_session_free(s);
  } catch (const gec::Error& e) {
    std::fprintf(stderr, "compile_and_run: %s: %s\n", gec::error_code_name(e.code()), e.what());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
