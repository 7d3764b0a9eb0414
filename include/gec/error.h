// The one error type of GraphEngine. Every failure a user can cause (bad model,
// unsupported op, corrupted .gom, wrong input) is reported by throwing
// gec::Error with a code and a one-line message that names the node, op or file
// involved; the CLI maps it to exit status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace gec {

enum class ErrorCode {
  kInvalidArgument,  // caller passed something wrong (input shape, dtype, option)
  kInvalidModel,     // the ONNX model is malformed or rejected by the checker
  kUnsupported,      // op, opset, dtype or feature not implemented
  kCorruptFile,      // .gom truncated, checksum mismatch, newer format
  kIo,               // file cannot be read or written
  kInternal,         // a bug in GraphEngine
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

/// Throws gec::Error(code, message).
[[noreturn]] void fail(ErrorCode code, const std::string& message);

}  // namespace gec

/// Internal invariant check: throws ErrorCode::kInternal with file:line.
#define GEC_CHECK(cond, msg)                                                        \
  do {                                                                               \
    if (!(cond))                                                                     \
      ::gec::fail(::gec::ErrorCode::kInternal,                                      \
                  std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + \
                      (msg));                                                        \
  } while (0)
