// Other processes' CPU use, from /proc/stat (cpu_monitor.h).
#include "runtime/cpu_monitor.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace gec::runtime {

int threads_left(double others, int cpus, int max_threads) {
  const int left = static_cast<int>(std::floor(cpus - std::max(0.0, others) + 0.5));
  return std::clamp(left, 1, std::max(1, max_threads));
}

double busy_seconds(const std::string& proc_stat, const std::vector<int>& cpus, double ticks_per_second) {
  if (ticks_per_second <= 0 || cpus.empty()) return -1;
  std::istringstream text(proc_stat);
  std::string line;
  double busy = 0;
  size_t found = 0;
  while (std::getline(text, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream s(line.substr(3));
    int id = -1;
    // user nice system idle iowait irq softirq steal
    double f[8] = {};
    if (!(s >> id) || std::find(cpus.begin(), cpus.end(), id) == cpus.end()) continue;
    bool ok = true;
    for (double& v : f) ok = ok && static_cast<bool>(s >> v);
    if (!ok) return -1;
    busy += f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
    ++found;
  }
  return found == cpus.size() ? busy / ticks_per_second : -1;
}

CpuMonitor::CpuMonitor(std::chrono::milliseconds interval)
    : interval_(interval), ticks_per_second_(static_cast<double>(::sysconf(_SC_CLK_TCK))) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus_.push_back(c);
}

bool CpuMonitor::sample(double* machine_busy, double* self_cpu) const {
  std::ifstream f("/proc/stat");
  if (!f) return false;
  std::stringstream text;
  text << f.rdbuf();
  *machine_busy = busy_seconds(text.str(), cpus_, ticks_per_second_);
  timespec ts{};
  if (*machine_busy < 0 || ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return false;
  *self_cpu = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  return true;
}

int CpuMonitor::threads_for_next_run(int max_threads) {
  auto in_force = [&] { return threads_ > 0 ? std::min(threads_, max_threads) : max_threads; };
  const Clock::time_point now = Clock::now();
  if (last_machine_ >= 0 && now - last_ < interval_) return in_force();
  double machine = 0, self = 0;
  if (!sample(&machine, &self)) return max_threads;
  const double wall = std::chrono::duration<double>(now - last_).count();
  if (last_machine_ >= 0 && wall < 1e-3) return in_force();
  if (last_machine_ >= 0) {
    // Other processes' cores: the machine's busy time less ours, per second.
    const double others = ((machine - last_machine_) - (self - last_self_)) / wall;
    const int t = threads_left(others, static_cast<int>(cpus_.size()), max_threads);
    // A change must hold for two intervals in a row: each one costs every
    // kernel a reshape, and one busy moment should not cause two.
    if (threads_ == 0) threads_ = t;
    else if (t == pending_) threads_ = t;
    pending_ = t;
  }
  last_ = now;
  last_machine_ = machine;
  last_self_ = self;
  return in_force();
}

}  // namespace gec::runtime
