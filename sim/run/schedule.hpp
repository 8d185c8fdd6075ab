#pragma once
// Which sweeps the run loop stops at and what happens there: the end of a thermalization
// block, a measurement, a snapshot, or a bounded step for a look at the clock.

#include <cstdint>

namespace lattica {

struct Config;

/// The run's events by sweep count, from the configuration alone: thermalization in tuning
/// blocks, then measurements every run.measure_every sweeps and snapshots every
/// output.snapshot_every sweeps. A new kind of event (a replica exchange every k sweeps) is a
/// new cadence here, so that next_stop() lands on it, acted on by the run loop.
class Schedule {
 public:
  explicit Schedule(const Config& config);

  /// Sweeps of the whole run.
  int64_t total() const { return total_; }

  /// Whether the sweeps that start after `done` sweeps are thermalization sweeps.
  bool thermalizing(int64_t done) const { return done < thermalization_; }

  /// The phase to show after `done` sweeps: "thermalizing" or "measuring".
  const char* phase(int64_t done) const;

  /// Where the step that starts after `done` sweeps ends: the next event, at most
  /// kMaxSweepsPerStep sweeps on (bounded steps keep signals, clock and status line live);
  /// thermalization steps end on tuning-block boundaries, so that a resumed run tunes in the
  /// same blocks. Precondition: done < total().
  int64_t next_stop(int64_t done) const;

  /// Whether a measurement is taken after `done` sweeps.
  bool measures_at(int64_t done) const;

  /// Whether a snapshot is taken after `done` sweeps (the final one aside).
  bool snapshot_at(int64_t done) const;

  /// Thermalization sweeps between two adjustments of the Metropolis step.
  static constexpr int64_t kTuningBlock = 10;
  /// Most sweeps between two looks at the clock, the signals and the progress line.
  static constexpr int64_t kMaxSweepsPerStep = 64;

 private:
  /// The first multiple of `every` measurement-phase sweeps after `done` sweeps, as a count.
  int64_t next_multiple(int64_t done, int64_t every) const;

  int64_t thermalization_;
  int64_t total_;
  int64_t measure_every_;
  int64_t snapshot_every_;
};

}  // namespace lattica
