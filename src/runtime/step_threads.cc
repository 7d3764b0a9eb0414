// Step thread tuning (step_threads.h).
#include "runtime/step_threads.h"

#include <algorithm>

namespace gec::runtime {

namespace {
// Median of a non-empty copy (an array: without allocating).
template <typename Values>
double median_of(Values v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
// Whether every run of an arm recorded the step.
bool complete(const StepThreadTuner::Samples& a) {
  return std::none_of(a.begin(), a.end(), [](double v) { return v < 0; });
}
bool faster_alone(const StepThreadTuner::Samples& one, const StepThreadTuner::Samples& all) {
  return complete(one) && complete(all) && median_of(one) < median_of(all);
}
}  // namespace

StepThreadTuner::StepThreadTuner(size_t steps, double max_candidate_ms, bool watch)
    : steps_(steps),
      max_candidate_ms_(max_candidate_ms),
      watch_(watch),
      one_now_(steps, 0),
      timed_(steps, 0),
      none_(steps, 0) {}

bool StepThreadTuner::one_thread_faster(std::vector<double> one, std::vector<double> all) {
  return !one.empty() && !all.empty() && median_of(std::move(one)) < median_of(std::move(all));
}

void StepThreadTuner::prepare(Tuning& t) const {
  if (t.trial_ms.size() == steps_) return;  // the last one sized below
  t.one.assign(steps_, 0);
  t.candidate.assign(steps_, 0);
  t.trying.assign(steps_, 0);
  t.best.assign(steps_, 0);
  t.survey_ms.assign(steps_, -1);
  Samples none;
  none.fill(-1);
  t.one_ms.assign(steps_, none);
  t.all_ms.assign(steps_, none);
  t.trial_ms.assign(steps_, none);
}

void StepThreadTuner::start_round(Tuning& t) const {
  t.settled = false;
  t.arm = Arm::kSurvey;
  t.arm_runs = 0;
  t.trials = 0;
  std::fill(t.candidate.begin(), t.candidate.end(), 0);
  std::fill(t.survey_ms.begin(), t.survey_ms.end(), -1);
  for (size_t i = 0; i < steps_; ++i) {
    t.one_ms[i].fill(-1);
    t.all_ms[i].fill(-1);
    t.trial_ms[i].fill(-1);
  }
}

StepThreadTuner::Arm StepThreadTuner::begin_run(int threads, const std::vector<uint8_t>& eligible,
                                                Clock::time_point now) {
  const bool fresh = !by_threads_.count(threads);
  Tuning& t = by_threads_[threads];
  prepare(t);
  if (fresh) start_round(t);
  current_ = &t;
  now_ = now;
  // The machine may have changed since the last round.
  if (t.settled && ++t.runs_since >= kRetuneRuns && now - t.decided >= kRetuneAfter) start_round(t);
  arm_ = t.settled ? Arm::kSettled : t.arm;
  slot_ = t.arm_runs;
  for (size_t i = 0; i < steps_; ++i) {
    const bool ok = i < eligible.size() && eligible[i];
    const bool candidate = ok && t.candidate[i];
    switch (arm_) {
      case Arm::kSettled:
        one_now_[i] = ok && t.one[i];
        timed_[i] = 0;
        break;
      case Arm::kSurvey:
        one_now_[i] = 0;
        timed_[i] = ok;
        t.survey_ms[i] = -1;
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
  if (!current_ || i >= steps_ || !timed_[i]) return;
  Tuning& t = *current_;
  const size_t k = static_cast<size_t>(slot_);
  switch (arm_) {
    case Arm::kSurvey: t.survey_ms[i] = ms; break;
    case Arm::kOne: t.one_ms[i][k] = ms; break;
    case Arm::kAll: t.all_ms[i][k] = ms; break;
    case Arm::kTrial: t.trial_ms[i][k] = ms; break;
    case Arm::kSettled: break;
  }
}

void StepThreadTuner::end_run(double wall_ms, bool measured) noexcept {
  if (!current_) return;
  Tuning& t = *current_;
  current_ = nullptr;
  if (!measured) return;  // made again in its arm
  if (arm_ == Arm::kSettled) {
    if (!watch_ || t.settled_ms <= 0) return;
    t.watch[static_cast<size_t>(t.watched++)] = wall_ms;
    if (t.watched < kWatchRuns) return;
    t.watched = 0;
    const double now_ms = median_of(t.watch);
    if (t.runs_since >= kMinRunsBeforeWatch && now_ms > t.settled_ms * (1 + kDrift)) return start_round(t);
    // A round measured in a slow moment would hide a later drift.
    t.settled_ms = std::min(t.settled_ms, now_ms);
    return;
  }
  const size_t k = static_cast<size_t>(slot_);
  if (arm_ == Arm::kSurvey) {
    bool any = false;
    for (size_t i = 0; i < steps_; ++i) {
      t.candidate[i] = timed_[i] && t.survey_ms[i] >= 0 && t.survey_ms[i] < max_candidate_ms_;
      any = any || t.candidate[i];
    }
    if (!any) return settle(t, none_, 0);
    t.arm = Arm::kOne;
    t.arm_runs = 0;
    return;
  }
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
}

void StepThreadTuner::choose_trial(Tuning& t) {
  // Another set than none must beat kAll by kMinGain: the medians of a few
  // runs differ by a few percent on their own.
  const double all = median_of(t.all_run_ms), bar = all * (1 - kMinGain), one = median_of(t.one_run_ms);
  t.best = one < bar ? t.candidate : none_;
  t.best_ms = std::min(one, bar);
  t.all_ms_median = all;
  bool any = false, every = true;
  for (size_t i = 0; i < steps_; ++i) {
    t.trying[i] = t.candidate[i] && faster_alone(t.one_ms[i], t.all_ms[i]);
    if (!t.candidate[i]) continue;
    any = any || t.trying[i];
    every = every && t.trying[i];
  }
  if (!any || every) return settle(t, t.best, t.best == none_ ? all : t.best_ms);
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
    if (t.trying[i] && !faster_alone(t.trial_ms[i], t.all_ms[i])) {
      t.trying[i] = 0;
      dropped = true;
    }
    any = any || t.trying[i];
    t.trial_ms[i].fill(-1);
  }
  if (!dropped || !any || t.trials >= kMaxTrials)
    return settle(t, t.best, t.best == none_ ? t.all_ms_median : t.best_ms);
  t.trials += 1;
  t.arm = Arm::kTrial;
  t.arm_runs = 0;
}

void StepThreadTuner::settle(Tuning& t, const std::vector<uint8_t>& one, double ms) {
  t.one = one;  // same size: no allocation
  t.settled_ms = ms;
  t.watched = 0;
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
