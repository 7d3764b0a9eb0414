// Step thread tuning (step_threads.h).
#include "runtime/step_threads.h"

#include <algorithm>

namespace gec::runtime {

namespace {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

StepThreadTuner::StepThreadTuner(size_t steps)
    : steps_(steps),
      one_now_(steps, 0),
      timed_(steps, 0),
      survey_ms_(steps, 0.0),
      one_ms_(steps),
      all_ms_(steps),
      trial_ms_(steps) {}

bool StepThreadTuner::one_thread_faster(std::vector<double> one, std::vector<double> all) {
  if (one.empty() || all.empty()) return false;
  return median_of(std::move(one)) < median_of(std::move(all));
}

StepThreadTuner::Arm StepThreadTuner::begin_run(int threads, const std::vector<uint8_t>& eligible,
                                                Clock::time_point now) {
  Tuning& t = by_threads_[threads];
  current_ = &t;
  now_ = now;
  if (t.one.size() != steps_) t.one.assign(steps_, 0);
  if (t.settled && ++t.runs_since >= kRetuneRuns && now - t.decided >= kRetuneAfter) {
    t.settled = false;  // the machine may have changed: a new round
    t.arm = Arm::kSurvey;
    t.arm_runs = 0;
  }
  // The first run with a count makes its primitives and touches its pages
  // first: no step's time in it says what the step costs.
  arm_ = t.settled || t.runs_seen++ == 0 ? Arm::kSettled : t.arm;
  slot_ = t.arm_runs;
  for (size_t i = 0; i < steps_; ++i) {
    const bool ok = i < eligible.size() && eligible[i];
    const bool candidate = ok && t.candidate.size() == steps_ && t.candidate[i];
    switch (arm_) {
      case Arm::kSettled:
        one_now_[i] = ok && t.one[i];
        timed_[i] = 0;
        break;
      case Arm::kSurvey:
        one_now_[i] = 0;
        timed_[i] = ok;
        survey_ms_[i] = -1;
        break;
      case Arm::kOne:
      case Arm::kAll:
        one_now_[i] = candidate && arm_ == Arm::kOne;
        timed_[i] = candidate;
        break;
      case Arm::kTrial:
        one_now_[i] = candidate && t.trying[i];
        timed_[i] = candidate;
        break;
    }
  }
  return arm_;
}

void StepThreadTuner::record(size_t i, double ms) {
  if (i >= steps_ || !timed_[i]) return;
  const size_t k = static_cast<size_t>(slot_);
  switch (arm_) {
    case Arm::kSurvey: survey_ms_[i] = ms; break;
    case Arm::kOne: one_ms_[i][k] = ms; break;
    case Arm::kAll: all_ms_[i][k] = ms; break;
    case Arm::kTrial: trial_ms_[i][k] = ms; break;
    case Arm::kSettled: break;
  }
}

void StepThreadTuner::end_run(double wall_ms) {
  if (!current_) return;
  Tuning& t = *current_;
  current_ = nullptr;
  const size_t k = static_cast<size_t>(slot_);
  switch (arm_) {
    case Arm::kSettled:
      return;
    case Arm::kSurvey: {
      t.candidate.assign(steps_, 0);
      bool any = false;
      for (size_t i = 0; i < steps_; ++i) {
        t.candidate[i] = timed_[i] && survey_ms_[i] >= 0 && survey_ms_[i] < kMaxCandidateMs;
        any = any || t.candidate[i];
        // A step not timed in every run of an arm is left on its threads.
        one_ms_[i].fill(-1);
        all_ms_[i].fill(-1);
        trial_ms_[i].fill(-1);
      }
      t.trials = 0;
      if (!any) {
        settle(t, std::vector<uint8_t>(steps_, 0));
        return;
      }
      t.arm = Arm::kOne;
      t.arm_runs = 0;
      return;
    }
    case Arm::kOne:
    case Arm::kAll:
    case Arm::kTrial:
      if (arm_ == Arm::kOne) t.one_run_ms[k] = wall_ms;
      if (arm_ == Arm::kAll) t.all_run_ms[k] = wall_ms;
      if (arm_ == Arm::kTrial) t.trial_run_ms[k] = wall_ms;
      if (++t.arm_runs < kRunsPerArm) return;
      t.arm_runs = 0;
      if (arm_ == Arm::kOne) {
        t.arm = Arm::kAll;
      } else if (arm_ == Arm::kAll) {
        choose_trial(t);
      } else {
        judge_trial(t);
      }
      return;
  }
}

namespace {
// The k samples of one step, when every run of the arm recorded it.
bool complete(const std::array<double, StepThreadTuner::kRunsPerArm>& a) {
  return std::none_of(a.begin(), a.end(), [](double v) { return v < 0; });
}
}  // namespace

namespace {
double median_of(const std::array<double, StepThreadTuner::kRunsPerArm>& a) {
  return median_of(std::vector<double>(a.begin(), a.end()));
}
}  // namespace

void StepThreadTuner::choose_trial(Tuning& t) {
  // Another set than none must beat kAll by kMinGain: the medians of a few
  // runs differ by a few percent on their own.
  const double bar = median_of(t.all_run_ms) * (1 - kMinGain), one = median_of(t.one_run_ms);
  t.best = one < bar ? t.candidate : std::vector<uint8_t>(steps_, 0);
  t.best_ms = std::min(one, bar);
  t.trying.assign(steps_, 0);
  bool any = false, every = true;
  for (size_t i = 0; i < steps_; ++i) {
    if (!t.candidate[i]) continue;
    if (complete(one_ms_[i]) && complete(all_ms_[i]))
      t.trying[i] = one_thread_faster({one_ms_[i].begin(), one_ms_[i].end()}, {all_ms_[i].begin(), all_ms_[i].end()});
    any = any || t.trying[i];
    every = every && t.trying[i];
  }
  if (!any || every) {
    settle(t, t.best);
    return;
  }
  t.arm = Arm::kTrial;
  t.arm_runs = 0;
  t.trials = 1;
}

void StepThreadTuner::judge_trial(Tuning& t) {
  const double ms = median_of(t.trial_run_ms);
  if (ms < t.best_ms) {
    t.best = t.trying;
    t.best_ms = ms;
  }
  bool dropped = false, any = false;
  for (size_t i = 0; i < steps_; ++i) {
    if (!t.trying[i]) continue;
    if (!complete(trial_ms_[i]) ||
        !one_thread_faster({trial_ms_[i].begin(), trial_ms_[i].end()}, {all_ms_[i].begin(), all_ms_[i].end()})) {
      t.trying[i] = 0;
      dropped = true;
    }
    any = any || t.trying[i];
    trial_ms_[i].fill(-1);
  }
  if (!dropped || !any || t.trials >= kMaxTrials) {
    settle(t, t.best);
    return;
  }
  t.trials += 1;
  t.arm = Arm::kTrial;
  t.arm_runs = 0;
}

void StepThreadTuner::settle(Tuning& t, const std::vector<uint8_t>& one) {
  t.one = one;
  t.settled = true;
  t.runs_since = 0;
  t.decided = now_;
  t.arm = Arm::kSurvey;
  t.arm_runs = 0;
}

bool StepThreadTuner::settled(int threads) const {
  const auto it = by_threads_.find(threads);
  return it != by_threads_.end() && it->second.settled;
}

size_t StepThreadTuner::one_thread_steps(int threads) const {
  const auto it = by_threads_.find(threads);
  if (it == by_threads_.end() || !it->second.settled) return 0;
  return static_cast<size_t>(std::count(it->second.one.begin(), it->second.one.end(), 1));
}

}  // namespace gec::runtime
