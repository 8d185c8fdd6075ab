#pragma once
// The run loop's progress on stderr: a live line on a terminal, whole lines in a batch log.

#include <chrono>
#include <cstdint>

namespace lattica {

/// How progress is shown on stderr.
enum class ProgressStyle {
  none,      ///< not at all (--quiet; a batch job's ranks other than 0)
  terminal,  ///< one status line redrawn in place, at most twice a second
  log,       ///< a whole line every run.progress_minutes and on SIGUSR2 (stderr is a file)
};

/// The style for this process: terminal when stderr is one, else log on rank 0 (`root`) only.
ProgressStyle progress_style(bool quiet, bool root);

/// Progress of a run ("measuring 1200/12000 sweeps ..."), drawn in the chosen style.
class Progress {
 public:
  /// total: sweeps of the run; log_minutes: minutes between log lines (0: only on request).
  Progress(ProgressStyle style, int64_t total, double log_minutes);

  /// The run starts (or resumes) at `sweep`: the rate counts from here and now.
  void start(int64_t sweep);

  /// True when a line is due; the caller then synchronizes the engine and calls show().
  bool due() const;

  /// Shows `done` sweeps of the total, in `phase` ("thermalizing", "measuring"); a log line
  /// also names the sweep of the last checkpoint (negative: none yet).
  void show(int64_t done, const char* phase, int64_t last_checkpoint);

  /// Clears the terminal line, if one was drawn.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  ProgressStyle style_;
  int64_t total_;
  std::chrono::duration<double> log_interval_;
  int64_t first_ = 0;
  Clock::time_point start_, last_;
  bool shown_ = false;
};

}  // namespace lattica
