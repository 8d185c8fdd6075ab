#pragma once
// The run loop's live status line on stderr.

#include <chrono>
#include <cstdint>

namespace lattica {

/// A status line on stderr ("measuring 1200/12000 sweeps ..."), redrawn at most twice a second.
class Progress {
 public:
  /// enabled: draw at all (stderr is a terminal and the run is not quiet); total: sweeps of the
  /// run. The rate counts from now.
  Progress(bool enabled, int64_t total);

  /// True when a redraw is due; the caller then synchronizes the engine and calls show().
  bool due() const;

  /// Redraws the line: `done` sweeps of the total, in `phase` ("thermalizing", "measuring").
  void show(int64_t done, const char* phase);

  /// Clears the line, if one was drawn.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  int64_t total_;
  Clock::time_point start_, last_;
  bool shown_ = false;
};

}  // namespace lattica
