#pragma once
// When the run loop stops early and when it writes a checkpoint.

#include <chrono>
#include <cstdint>
#include <string>

namespace lattica {

class Communicator;
struct Config;

/// What the run loop does after a step.
struct StopDecision {
  std::string stop_reason;  ///< empty: go on; else why it stops ("SIGTERM", "walltime", ...)
  bool checkpoint = false;  ///< going on: write a checkpoint first
};

/// Stops the run for a stop signal, or while the walltime (run.walltime after the start, or
/// Slurm's SLURM_JOB_END_TIME, whichever is first) still leaves room for a few more steps and a
/// checkpoint; else asks for a checkpoint every run.checkpoint_every sweeps and
/// run.checkpoint_minutes minutes. On a decomposed run what one rank saw decides for all, so
/// that all stop and checkpoint at the same sweep.
class StopPolicy {
 public:
  /// ranks: those of a decomposed run, or null when alone.
  StopPolicy(const Config& config, Communicator* ranks);

  /// Starts the walltime and checkpoint clocks: call once the chain is ready to sweep.
  void start();

  /// Whether the run checkpoints at all (run.checkpoint_every, run.checkpoint_minutes or
  /// run.walltime): it then also ends with a checkpoint, so that it can be extended.
  bool checkpoints() const { return checkpoints_; }

  /// Whether decide() counts on each step's real duration: the caller then synchronizes the
  /// engine at the end of each step and reports it with step_took().
  bool times_steps() const { return deadline_ > 0; }

  /// Records the seconds one step of the loop took.
  void step_took(double seconds);

  /// Records the seconds a checkpoint took, which just ended.
  void checkpoint_took(double seconds);

  /// What to do after the step from `previous` to `done` sweeps. Collective on a decomposed
  /// run: every rank calls it after every step.
  StopDecision decide(int64_t previous, int64_t done);

 private:
  using Clock = std::chrono::steady_clock;
  int64_t checkpoint_every_;
  double checkpoint_minutes_;
  double walltime_seconds_;
  bool checkpoints_;
  Communicator* ranks_;
  double deadline_ = 0;  ///< seconds since the epoch; 0: none
  Clock::time_point last_checkpoint_;
  double slowest_step_ = 0;        ///< seconds
  double checkpoint_seconds_ = 0;  ///< of the last checkpoint
};

}  // namespace lattica
