// Other processes' CPU use, from /proc/stat, and this process's threads'
// run delay, from /proc/self/task/*/schedstat (cpu_monitor.h).
#include "runtime/cpu_monitor.h"

#include <dirent.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace gec::runtime {

int threads_left(double others, int cpus, int max_threads) {
  const int left = static_cast<int>(std::floor(cpus - std::max(0.0, others) + 0.5));
  return std::clamp(left, 1, std::max(1, max_threads));
}

double schedstat_run_delay(const std::string& schedstat) {
  std::istringstream s(schedstat);
  unsigned long long run = 0, delay = 0, slices = 0;
  if (!(s >> run >> delay >> slices)) return -1;
  return 1e-9 * static_cast<double>(delay);
}

int threads_left_from_waiting(double waiting, int threads) {
  return threads_left(2.0 * waiting, threads, threads);  // our threads as the CPUs, 2w of them taken
}

int procs_running(const std::string& proc_stat) {
  std::istringstream text(proc_stat);
  std::string line;
  while (std::getline(text, line)) {
    if (line.rfind("procs_running ", 0) != 0) continue;
    std::istringstream s(line.substr(14));
    long n = -1;
    return s >> n && n >= 0 && n < (1L << 30) ? static_cast<int>(n) : -1;
  }
  return -1;
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

CpuMonitor::CpuMonitor(std::chrono::milliseconds interval, std::chrono::microseconds first_signal,
                       bool runnable_signal)
    : interval_(interval),
      first_signal_(first_signal),
      runnable_signal_(runnable_signal),
      ticks_per_second_(static_cast<double>(::sysconf(_SC_CLK_TCK))) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus_.push_back(c);
}

int CpuMonitor::runnable_threads(int max_threads) const {
  // procs_running counts the whole machine's run queues: it speaks for this
  // process's CPUs only when they are all of them.
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (online <= 0 || static_cast<long>(cpus_.size()) != online) return max_threads;
  int threads = max_threads;
  // A quiet machine answers at the first read; a busy one is read again.
  for (int i = 0; i < kRunnableReads && (i == 0 || threads < max_threads); ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::ifstream f("/proc/stat");
    std::stringstream text;
    text << f.rdbuf();
    const int n = procs_running(text.str());
    if (n < 0) return max_threads;
    // Less the thread that reads; the fewest runnable of the reads counts.
    threads = std::max(threads_left(n - 1, static_cast<int>(cpus_.size()), max_threads), i ? threads : 0);
  }
  return threads;
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

double CpuMonitor::own_run_delay() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return -1;
  double total = 0;
  bool any = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    std::string text;
    if (!std::getline(f, text)) continue;  // a thread that has just ended
    const double d = schedstat_run_delay(text);
    if (d < 0) continue;
    total += d;
    any = true;
  }
  ::closedir(dir);
  return any ? total : -1;
}

int CpuMonitor::first_signal_threads(Clock::time_point now, int max_threads) {
  if (last_delay_ >= 0 && now - last_delay_at_ < first_signal_) return early_threads_;
  const double delay = own_run_delay();
  if (delay < 0) return early_threads_;
  if (last_delay_ >= 0) {
    const double wall = std::chrono::duration<double>(now - last_delay_at_).count();
    if (wall <= 0) return early_threads_;
    // A thread that ended between two samples takes its delay with it.
    const double waiting = std::max(0.0, delay - last_delay_) / wall;
    // The count the runs of this span used (the check may be timing all of
    // them while the first signal suggests fewer); the answer only lowers.
    const int in_use = chosen_ > 0 ? std::min(chosen_, max_threads) : max_threads;
    const int left = threads_left_from_waiting(waiting, in_use);
    early_threads_ = early_threads_ > 0 ? std::min(early_threads_, left) : left;
  }
  last_delay_ = delay;
  last_delay_at_ = now;
  return early_threads_;
}

int CpuMonitor::contention(int max_threads) {
  // The first call, before any span is measured: the run queues now.
  if (runnable_signal_ && last_machine_ < 0 && last_delay_ < 0 && early_threads_ == 0)
    early_threads_ = runnable_threads(max_threads);
  const Clock::time_point now = Clock::now();
  auto in_force = [&] {
    if (threads_ > 0) return std::min(threads_, max_threads);
    const int early = first_signal_threads(now, max_threads);
    return early > 0 ? std::min(early, max_threads) : max_threads;
  };
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

double CpuMonitor::Arm::median() const {
  std::vector<double> v = runs;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

int CpuMonitor::use(int threads) {
  chosen_ = threads;
  return threads;
}

int CpuMonitor::threads_for_next_run(int max_threads) {
  const int fewer = contention(max_threads);
  if (fewer >= max_threads) {
    fewer_ = all_ = 0;
    return use(max_threads);
  }
  if (fewer != fewer_ || max_threads != all_) {  // new counts: measure both again
    fewer_ = fewer;
    all_ = max_threads;
    fewer_arm_ = all_arm_ = Arm{};
  }
  if (fewer_arm_.runs.size() < kSamples) return use(fewer_);
  if (all_arm_.runs.size() < kSamples) return use(all_);
  const bool fewer_wins = fewer_arm_.median() <= all_arm_.median();
  Arm& loser = fewer_wins ? all_arm_ : fewer_arm_;
  if (loser.runs_since >= kRunsBetweenChecks &&
      Clock::now() - loser.last_run >= std::chrono::seconds(kSecondsBetweenChecks)) {
    loser.runs.clear();
    return use(fewer_wins ? all_ : fewer_);
  }
  return use(fewer_wins ? fewer_ : all_);
}

void CpuMonitor::record_run(int threads, Clock::duration wall, bool reshaped) {
  if (fewer_ == 0 || reshaped) return;  // a reshaping run times primitive creation too
  Arm* arm = threads == fewer_ ? &fewer_arm_ : threads == all_ ? &all_arm_ : nullptr;
  if (!arm) return;
  arm->runs.push_back(std::chrono::duration<double>(wall).count());
  if (arm->runs.size() > kSamples) arm->runs.erase(arm->runs.begin());
  arm->last_run = Clock::now();
  arm->runs_since = 0;
  Arm& other = arm == &fewer_arm_ ? all_arm_ : fewer_arm_;
  ++other.runs_since;
}

}  // namespace gec::runtime
