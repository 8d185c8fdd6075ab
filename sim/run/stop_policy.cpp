#include "sim/run/stop_policy.hpp"

#include <algorithm>
#include <cstdlib>

#include "sim/communicator.hpp"
#include "sim/config.hpp"
#include "sim/run/stop_signals.hpp"

namespace lattica {

namespace {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Seconds since the epoch when the run must have stopped: `walltime` seconds after `start`, or
/// Slurm's job end time, whichever comes first; 0 when neither applies.
double stop_deadline(double walltime, double start) {
  double deadline = walltime > 0 ? start + walltime : 0.0;
  if (const char* end = std::getenv("SLURM_JOB_END_TIME")) {
    char* rest = nullptr;
    const double slurm = std::strtod(end, &rest);
    if (rest != end && slurm > 0 && (deadline == 0.0 || slurm < deadline)) deadline = slurm;
  }
  return deadline;
}

}  // namespace

StopPolicy::StopPolicy(const Config& config, Communicator* ranks)
    : checkpoint_every_(config.checkpoint_every),
      checkpoint_minutes_(config.checkpoint_minutes),
      walltime_seconds_(config.walltime_seconds),
      checkpoints_(config.checkpoint_every > 0 || config.checkpoint_minutes > 0 ||
                   config.walltime_seconds > 0),
      ranks_(ranks) {}

void StopPolicy::start() {
  deadline_ = stop_deadline(walltime_seconds_, epoch_seconds());
  last_checkpoint_ = Clock::now();
}

void StopPolicy::step_took(double seconds) { slowest_step_ = std::max(slowest_step_, seconds); }

void StopPolicy::checkpoint_took(double seconds) {
  checkpoint_seconds_ = seconds;
  last_checkpoint_ = Clock::now();
}

StopDecision StopPolicy::decide(int64_t previous, int64_t done) {
  // Room for a few more steps and the final checkpoint, never less than the safety margin.
  const double reserve =
      std::max(kWalltimeMarginSeconds, 3 * slowest_step_ + 2 * checkpoint_seconds_);
  int64_t signal = received_stop_signal();
  bool out_of_time = deadline_ > 0 && epoch_seconds() + reserve >= deadline_;
  bool minutes_due = checkpoint_minutes_ > 0 &&
                     std::chrono::duration<double>(Clock::now() - last_checkpoint_).count() >=
                         60.0 * checkpoint_minutes_;
  if (ranks_ && ranks_->size() > 1) {
    // What one rank saw (a signal, its clock) decides for all, so all stop at the same sweep.
    signal = ranks_->max(signal);
    const int64_t clock = ranks_->max(2 * out_of_time + minutes_due);
    out_of_time = clock >= 2;
    minutes_due = clock % 2 == 1;
  }
  StopDecision decision;
  if (signal != 0 || out_of_time) {
    decision.stop_reason = signal != 0 ? signal_name(static_cast<int>(signal)) : "walltime";
    return decision;
  }
  const bool every_due =
      checkpoint_every_ > 0 && done / checkpoint_every_ != previous / checkpoint_every_;
  decision.checkpoint = every_due || minutes_due;
  return decision;
}

}  // namespace lattica
