// OCR demo: runs the PaddleOCR v4 text recognizer, compiled by `gec compile`
// into an offline model, on a rendered text line and prints the text it reads.
//
// Usage: ocr_demo MODEL.gom INPUT.pb KEYS.txt [REFERENCE.pb]
//
// The model outputs per-step class probabilities [1, T, 6625]; CTC greedy
// decoding takes the argmax per step, drops repeats and class 0 (blank);
// class i is line i-1 of KEYS.txt and the last class is a space (PaddleOCR's
// convention). With REFERENCE.pb (ONNX Runtime's output), it also prints the
// largest difference from it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/onnx/tensor_proto.h"
#include "gec/runtime.h"
#include "support/compare.h"

static std::vector<std::string> read_keys(const std::string& path) {
  std::ifstream f(path);
  if (!f) gec::fail(gec::ErrorCode::kIo, path + ": cannot open");
  std::vector<std::string> keys;
  for (std::string line; std::getline(f, line);) keys.push_back(line);
  return keys;
}

static std::string ctc_decode(const gec::Tensor& probs, const std::vector<std::string>& keys, double* confidence) {
  const int64_t steps = probs.shape()[1], classes = probs.shape()[2];
  std::string text;
  int64_t prev = -1;
  double conf_sum = 0;
  int chars = 0;
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = probs.as<float>() + t * classes;
    const int64_t best = std::max_element(row, row + classes) - row;
    if (best != 0 && best != prev) {
      text += best == classes - 1 ? " " : (best - 1 < static_cast<int64_t>(keys.size()) ? keys[best - 1] : "?");
      conf_sum += row[best];
      ++chars;
    }
    prev = best;
  }
  *confidence = chars ? conf_sum / chars : 0;
  while (!text.empty() && text.back() == ' ') text.pop_back();  // the model often ends a line with the space class
  return text;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.gom INPUT.pb KEYS.txt [REFERENCE.pb]\n", argv[0]);
    return 2;
  }
  try {
    auto session = gec::Session::load(argv[1], {.num_threads = 2});
    gec::Tensor image = gec::frontend::read_tensor_proto_file(argv[2]);
    std::printf("input: a rendered text line, %s %s\n", gec::dtype_name(image.dtype()),
                gec::shape_str(image.shape()).c_str());
    std::vector<gec::Tensor> out = session->run({image.view()});
    double confidence = 0;
    std::string text = ctc_decode(out[0], read_keys(argv[3]), &confidence);
    std::printf("the model reads: \"%s\"  (mean character confidence %.3f)\n", text.c_str(), confidence);
    if (argc > 4) {
      gec::Tensor ref = gec::frontend::read_tensor_proto_file(argv[4]);
      double ref_conf = 0;
      std::string ref_text = ctc_decode(ref, read_keys(argv[3]), &ref_conf);
      gec::CompareResult c = gec::compare_tensors(out[0].view(), ref.view(), 1e-3, 1e-4);
      std::printf("ONNX Runtime reads: \"%s\"; max abs difference of the probabilities: %.3g (%s at rtol 1e-3, atol 1e-4)\n",
                  ref_text.c_str(), c.max_abs_error, c.ok ? "agrees" : "DISAGREES");
      if (!c.ok || text != ref_text) return 1;
    }
    return 0;
  } catch (const gec::Error& e) {
    std::fprintf(stderr, "ocr_demo: error: %s\n", e.what());
    return 2;
  }
}
