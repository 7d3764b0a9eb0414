// The CPU quota of a process's control groups (Linux cgroup v1 and v2), for
// gec::available_cores().
#pragma once

#include <string>

namespace gec {

/// The smallest CPU quota, in cores (quota / period, e.g. 1.5), set on the
/// cgroup path that `proc_cgroup` (the format of /proc/self/cgroup) names,
/// on that group and every ancestor, read under `cgroup_root` (normally
/// /sys/fs/cgroup): cgroup v2's cpu.max ("max 100000" = none,
/// "150000 100000" = 1.5) and v1's cpu.cfs_quota_us / cpu.cfs_period_us
/// (quota -1 = none) under the hierarchy that has the cpu controller.
/// Negative when no quota is set or nothing can be read.
double cgroup_cpu_limit(const std::string& proc_cgroup, const std::string& cgroup_root);

}  // namespace gec
