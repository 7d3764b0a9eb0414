// What the two halves of the C API (runtime/c_api.cc, compiler/c_api.cc)
// share: the per-thread error message and the guard that turns every C++
// exception into a gec_status.
#pragma once

#include <new>
#include <string>

#include "gec/c_api.h"
#include "gec/error.h"

namespace gec::capi {

/// Stores `message` as this thread's last error and returns `status`.
gec_status set_error(gec_status status, const std::string& message);

/// The C status of a gec::ErrorCode.
gec_status status_of(ErrorCode code);

/// Runs `f` (which returns nothing and reports failure by throwing) and
/// returns GEC_OK, or the status and message of what it threw.
template <typename F>
gec_status guarded(F&& f) noexcept {
  try {
    f();
    return GEC_OK;
  } catch (const Error& e) {
    return set_error(status_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return set_error(GEC_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return set_error(GEC_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(GEC_INTERNAL, "internal error: unknown exception");
  }
}

/// Throws gec::Error(kInvalidArgument) when `p` is null, naming `what`.
inline void require(const void* p, const char* what) {
  if (!p) fail(ErrorCode::kInvalidArgument, std::string(what) + " is NULL");
}

}  // namespace gec::capi
