// Step thread tuning: whether a small step of a run is faster on one thread
// than on its worker's threads, measured on the machine the model runs on.
//
// Why measure: what a parallel region costs depends on the machine, not the
// model. On two vCPUs that share no cache (this project's AMD EPYC VM: a
// cache line's round trip between them takes 550-600 ns), a step that
// reads what the other thread wrote moves it across the chip:
// ShuffleNet V2 x0.5's 1x1 convolutions of 48 x 14 x 14 took 3 us on one
// thread and 8.6 us on two, its Channel Shuffles 2-4 us against 5-13 us,
// EfficientNet-B0's small Muls 7 us against 36 us, and the whole model
// 0.74 ms on one thread against 1.37 ms on two. On cores that share a cache
// the same steps gain from the second thread. The plan's static rule
// (schedule::kSingleThreadBytes / kSingleThreadFlops) keeps only the
// smallest steps on one thread; everything above it is decided here.
//
// How: the tuner measures in rounds. A round's first run (the survey,
// every step on its worker's threads) times each eligible step's kernel
// and keeps as candidates those under kMaxCandidateMs (a step of
// more work rarely loses its second thread, and trying it costs). Then
// kRunsPerArm runs with the candidates on one thread (kOne) and kRunsPerArm
// with them on their worker's threads (kAll); the candidates whose median
// alone is the lower form a trial of kRunsPerArm runs. A step alone reads
// what its neighbours wrote on the other thread (and they what it wrote),
// so after a trial the steps that lost their kAll time in it are dropped
// and the rest tried again (kMaxTrials trials in all). The round settles on
// the set whose runs' median is lowest (none, kOne's candidates or a
// trial), a set other than none only when it beats kAll by kMinGain. A run
// that makes primitives (the first of each arm: a switch makes them for the
// other count; a run after a change of count) or fails is made again, not
// counted. A round runs again once kRetuneRuns runs and kRetuneAfter have
// passed since the last, as the machine's state changes (the hypervisor
// moves the vCPUs; other work comes and goes), and at once when the settled
// runs drift kDrift above what the chosen set ran in its round.
// Decisions are kept per run thread count.
//
// Not thread-safe, except record(), which distinct steps may call at once.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace gec::runtime {

class StepThreadTuner {
 public:
  using Clock = std::chrono::steady_clock;
  /// What the steps of a run do: kSettled, the decisions; kSurvey, every
  /// eligible step on its worker's threads, timed (a round's first run);
  /// kOne / kAll, the candidates on one thread / on their worker's
  /// threads, timed; kTrial, the steps of the trial on one thread, the
  /// candidates timed.
  enum class Arm { kSettled, kSurvey, kOne, kAll, kTrial };
  static constexpr int kRunsPerArm = 5;
  /// A set of steps on one thread is kept only when its runs' median is
  /// this fraction below that of the runs with every step on its threads.
  static constexpr double kMinGain = 0.03;
  /// Steps slower than this (ms) on their worker's threads are not tried on
  /// one (the default of the constructor's `max_candidate_ms`).
  static constexpr double kMaxCandidateMs = 0.25;
  static constexpr int64_t kRetuneRuns = 1000;
  static constexpr std::chrono::seconds kRetuneAfter{30};
  /// Trials of a round (each kRunsPerArm runs) before it gives up.
  static constexpr int kMaxTrials = 2;
  /// The settled runs are watched kWatchRuns at a time: when their median
  /// is kDrift above the chosen set's median in its round, and at least
  /// kMinRunsBeforeWatch runs have passed since, a round starts at once (the
  /// vCPUs moved: a set chosen apart runs slower together, 1.2-1.5x seen).
  static constexpr int kWatchRuns = 9;
  static constexpr double kDrift = 0.2;
  static constexpr int64_t kMinRunsBeforeWatch = 50;
  using Samples = std::array<double, kRunsPerArm>;

  /// `steps`: the main graph's steps (indices 0 .. steps - 1). `watch`:
  /// whether the settled runs' times say something of the machine (off
  /// when a run's work follows its inputs: dynamic shapes, control flow).
  explicit StepThreadTuner(size_t steps, double max_candidate_ms = kMaxCandidateMs, bool watch = true);

  /// Starts a run on `threads` threads, of whose steps those with
  /// `eligible`[i] set may run on one thread (more than one thread of
  /// budget, not fixed to one by the plan, shapes known at compile time).
  /// Returns the run's arm.
  Arm begin_run(int threads, const std::vector<uint8_t>& eligible, Clock::time_point now = Clock::now());
  /// Whether step i runs on one thread in the current run.
  bool one_thread(size_t i) const { return one_now_[i] != 0; }
  /// Whether the current run times step i's kernel (record it).
  bool timed(size_t i) const { return timed_[i] != 0; }
  /// The kernel time, in ms, of step i in the current run. Distinct steps
  /// may be recorded from several threads at once.
  void record(size_t i, double ms);
  /// Ends the run begun last, which took `wall_ms`. `measured` false: the
  /// run says nothing of the steps' costs (it failed, or made primitives:
  /// the first run of each arm, a run after a change of count) and is made
  /// again in the same arm. Allocates nothing.
  void end_run(double wall_ms, bool measured) noexcept;
  /// Steps the settled decisions for `threads` put on one thread (0 when
  /// none made yet).
  size_t one_thread_steps(int threads) const;
  /// Whether the decisions for `threads` are made and no round is under way
  /// (false before the first run with that count).
  bool settled(int threads) const;
  /// Whether a run with `threads` has begun.
  bool started(int threads) const { return by_threads_.count(threads) != 0; }

  /// The decision rule: one thread when the median of `one` is below the
  /// median of `all` (both non-empty).
  static bool one_thread_faster(std::vector<double> one, std::vector<double> all);

 private:
  /// One thread count's decisions and its current round's samples (ms;
  /// -1 where not measured).
  struct Tuning {
    std::vector<uint8_t> one;        // the decisions (settled)
    std::vector<uint8_t> candidate;  // of the current round
    std::vector<uint8_t> trying;     // the steps the trial puts on one thread
    std::vector<uint8_t> best;       // the fastest set of the round so far
    double best_ms = 0;              // its runs' median
    double all_ms_median = 0;        // kAll's runs' median
    double settled_ms = 0;           // the settled set's median in its round (0: nothing to watch)
    std::array<double, kWatchRuns> watch{};
    int watched = 0;                 // settled runs in `watch`
    bool settled = false;
    int64_t runs_since = 0;          // settled runs since the last round
    Clock::time_point decided{};
    Arm arm = Arm::kSurvey;          // the round's next arm
    int arm_runs = 0;                // measured runs done in `arm`
    int trials = 0;                  // kTrial arms run in this round
    Samples one_run_ms{}, all_run_ms{}, trial_run_ms{};
    std::vector<double> survey_ms;
    std::vector<Samples> one_ms, all_ms, trial_ms;
  };
  /// Sizes `t` for this model's steps (once per thread count).
  void prepare(Tuning& t) const;
  /// Starts a round: candidates and samples cleared.
  void start_round(Tuning& t) const;
  /// After kAll: the faster of kAll and kOne is the best so far; the
  /// candidates faster alone (kOne against kAll, step by step) become the
  /// trial, unless that is every candidate (kOne itself) or none.
  void choose_trial(Tuning& t);
  /// After a trial: the best so far when its runs' median beats it; then,
  /// in any case, drops the steps that lost their kAll time in it (a step
  /// alone reads what the steps beside it wrote on other threads) and
  /// tries what is left, kMaxTrials at most, then settles on the best.
  void judge_trial(Tuning& t);
  /// Settles on `one`, whose runs' median in the round was `ms` (0: none
  /// measured, nothing to watch).
  void settle(Tuning& t, const std::vector<uint8_t>& one, double ms);

  size_t steps_;
  double max_candidate_ms_;
  bool watch_;
  std::map<int, Tuning> by_threads_;
  Tuning* current_ = nullptr;
  Clock::time_point now_{};  // begin_run's
  Arm arm_ = Arm::kSettled;
  int slot_ = 0;  // the run's sample index within its arm
  std::vector<uint8_t> one_now_, timed_, none_;
};

}  // namespace gec::runtime
