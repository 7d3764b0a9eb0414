// gec::Error helpers.
#include "gec/error.h"

namespace gec {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kInvalidModel: return "invalid model";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kCorruptFile: return "corrupt file";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "error";
}

void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

}  // namespace gec
