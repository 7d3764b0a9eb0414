// OpenMP wait policy and the cores a process may use (gec/threading.h).
#include "gec/threading.h"
#include "gec/runtime.h"

#include "runtime/cgroup.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gec {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

bool prepare_openmp_environment(SpinPolicy policy) {
  if (env("OMP_WAIT_POLICY") || env("GOMP_SPINCOUNT")) return false;
  if (policy == SpinPolicy::kOn) return false;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  return true;
}

bool openmp_started() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/libgomp.so") != std::string::npos) return true;
  return false;
}

std::string openmp_wait_policy() {
  const char* count = env("GOMP_SPINCOUNT");
  const char* policy = env("OMP_WAIT_POLICY");
  std::string p = policy ? policy : "";
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
  // libgomp: GOMP_SPINCOUNT wins over the policy's own spin count.
  if (count) return std::string("bounded spin (GOMP_SPINCOUNT=") + count + ")";
  if (p == "passive") return "passive";
  if (p == "active") return "active (libgomp spins for minutes)";
  return "libgomp default (spin 300000)";
}

int max_num_threads() {
  return kMaxThreadsPerCore * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cores <= 0) cores = 1;
  const double limit = cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup");
  if (limit > 0) cores = std::min(cores, std::max(1, static_cast<int>(std::ceil(limit - 1e-9))));
  return cores;
}

}  // namespace gec
