// The CPU quota of this process's control groups (cgroup.h).
#include "runtime/cgroup.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gec {
namespace {

/// First line of a small kernel file ("" if unreadable).
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

/// CPU quota in cores (quota / period) of one cgroup directory, or a
/// negative number when it sets none. v2: cpu.max "max 100000" or
/// "200000 100000"; v1: cpu.cfs_quota_us (-1 = none) and cpu.cfs_period_us.
double cgroup_quota(const std::string& dir, bool v2) {
  if (v2) {
    std::istringstream s(first_line(dir + "/cpu.max"));
    std::string quota;
    double period = 0;
    if (!(s >> quota >> period) || quota == "max" || period <= 0) return -1;
    const double q = std::strtod(quota.c_str(), nullptr);
    return q > 0 ? q / period : -1;
  }
  const double q = std::strtod(first_line(dir + "/cpu.cfs_quota_us").c_str(), nullptr);
  const double p = std::strtod(first_line(dir + "/cpu.cfs_period_us").c_str(), nullptr);
  return q > 0 && p > 0 ? q / p : -1;
}

}  // namespace

double cgroup_cpu_limit(const std::string& proc_cgroup, const std::string& cgroup_root) {
  std::ifstream f(proc_cgroup);
  std::string line;
  double best = -1;
  auto consider = [&](const std::string& root, std::string path, bool v2) {
    // Inside a container the path may name the host's hierarchy; the
    // container's own limit is then at the mount root, which is walked last.
    while (true) {
      const double q = cgroup_quota(root + path, v2);
      if (q > 0 && (best < 0 || q < best)) best = q;
      if (path.empty() || path == "/") break;
      const size_t slash = path.find_last_of('/');
      path = slash == std::string::npos ? "" : path.substr(0, slash);
    }
  };
  while (std::getline(f, line)) {
    // "hierarchy-id:controllers:path"; v2 is "0::path".
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty()) {
      consider(cgroup_root, path, true);
    } else {
      std::istringstream cs(controllers);
      std::string c;
      bool cpu = false;
      while (std::getline(cs, c, ',')) cpu = cpu || c == "cpu";
      if (cpu) consider(cgroup_root + "/" + controllers, path, false);
    }
  }
  return best;
}

}  // namespace gec
