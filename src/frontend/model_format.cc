#include "frontend/model_format.h"

#include "frontend/tensorflow/importer.h"
#include "gec/error.h"
#include "gec/runtime.h"
#include "support/mapped_file.h"

namespace gec::frontend {

std::string join_unsupported(const std::vector<std::pair<std::string, int>>& ops) {
  std::string msg;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& [first, count] = ops[i];
    msg += (i ? "; " : "") + first;
    if (count > 1) msg += " (and " + std::to_string(count - 1) + " more node" + (count > 2 ? "s" : "") + ")";
  }
  return msg;
}

ModelFormat detect_format(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  while (i < size && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
  if (i < size && p[i] == '{') return ModelFormat::kTfjs;
  if (size > 0 && p[0] == 0x0a) return ModelFormat::kTfGraphDef;
  return ModelFormat::kOnnx;
}

const char* format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::kOnnx: return "ONNX";
    case ModelFormat::kTfGraphDef: return "TensorFlow GraphDef";
    case ModelFormat::kTfjs: return "TensorFlow.js graph model";
  }
  return "?";
}

ImportResult import_any(const void* data, size_t size, const std::string& model_dir, const ImportOptions& options) {
  // An offline model given where a source model is expected (`gec compile
  // x.gom`): say so, rather than that it is not valid ONNX.
  if (looks_like_gom(data, size))
    fail(ErrorCode::kInvalidModel, "'" + options.source_name +
                                       "' is a GraphEngine offline model (.gom), compiled already: run it (gec run, "
                                       "gec bench, gec profile) or load it, and compile the ONNX or TensorFlow "
                                       "model it came from instead");
  switch (detect_format(data, size)) {
    case ModelFormat::kTfjs:
      return import_tfjs_model(std::string(static_cast<const char*>(data), size), model_dir, options);
    case ModelFormat::kTfGraphDef: return import_tf_graphdef(data, size, options);
    case ModelFormat::kOnnx: break;
  }
  return import_onnx_bytes(data, size, model_dir, options);
}

ImportResult import_any_file(const std::string& path, ImportOptions options) {
  const auto file = MappedFile::open(path);
  if (options.source_name.empty()) options.source_name = path;
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return import_any(file->data(), file->size(), dir, options);
}

}  // namespace gec::frontend
