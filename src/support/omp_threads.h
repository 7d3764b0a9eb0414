// The calling thread's OpenMP thread count, set for a scope and given back.
#pragma once

#include <omp.h>

namespace gec {

/// For its scope: the calling thread's OpenMP count (omp_set_num_threads,
/// which oneDNN reads when it makes and runs a primitive) is `n`, and the
/// count it had before comes back when the scope ends, also by an
/// exception. `ScopedOmpThreads keep(omp_get_max_threads())` only gives
/// back what the scope's code changes.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int n) : before_(omp_get_max_threads()) {
    if (n != before_) omp_set_num_threads(n);
  }
  ~ScopedOmpThreads() {
    if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
  }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  const int before_;
};

}  // namespace gec
