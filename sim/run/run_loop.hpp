#pragma once
// The run loop: thermalize, then sweep / measure / snapshot, appending to the output file, with
// checkpoints and early stops.

#include <cstdint>

#include "sim/background_writer.hpp"
#include "sim/run.hpp"
#include "sim/run/measurement_sink.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/schedule.hpp"
#include "sim/run/snapshot_sink.hpp"
#include "sim/run/stop_policy.hpp"

namespace lattica {

/// One run of a chain (see run_chain). The loop advances the engine from event to event of the
/// Schedule; after each step it records what the step measured (MeasurementSink), takes the
/// snapshots due (SnapshotSink), and asks the StopPolicy whether to stop or checkpoint. Output
/// goes through one BackgroundWriter, so the engine keeps sweeping while HDF5 writes.
/// A new per-sweep step (a replica exchange every k sweeps) is a Schedule event acted on in
/// record_events(); a new kind of measurement goes through the MeasurementSink.
class RunLoop {
 public:
  /// output: rank 0's file, null on the other ranks of a decomposed run (`ranks`; null alone).
  /// progress: how progress is shown on stderr.
  RunLoop(const Config& config, Engine& engine, OutputFile* output, ProgressStyle progress,
          Communicator* ranks);
  RunLoop(const RunLoop&) = delete;
  RunLoop& operator=(const RunLoop&) = delete;

  /// Runs the chain from its start, or from `resume`, to its end or an early stop. Call once.
  RunSummary run(const Checkpoint* resume);

 private:
  /// Sets the chain's state: the configuration at sweep 0, or the checkpoint's.
  void begin(const Checkpoint* resume);
  /// Runs the engine from sweep_ to the next stop of the schedule.
  void advance();
  /// Records the events of the schedule at sweep_: a measurement, a snapshot.
  void record_events();
  void snapshot(int64_t sweep);
  /// Writes everything pending, the results so far and the checkpoint (rank 0's file, or
  /// decomposed, every rank's part and rank 0's manifest).
  void checkpoint();
  /// The end: a checkpoint when stopped, else the last measurements, the final snapshot and a
  /// checkpoint or the results; then waits for every write.
  void finish();

  const Config& config_;
  Engine& engine_;
  OutputFile* output_;
  Schedule schedule_;
  BackgroundWriter writer_;  ///< before the sinks, which queue jobs on it
  MeasurementSink measurements_;
  SnapshotSink snapshots_;
  StopPolicy stop_;
  Progress progress_;
  int64_t sweep_ = 0;  ///< sweeps done
  int64_t last_snapshot_ = -1;
  int64_t last_checkpoint_ = -1;  ///< sweep of the last checkpoint (resumed from or written)
  RunSummary summary_;
  Communicator* ranks_;  ///< the ranks of a decomposed run; null or one alone
};

}  // namespace lattica
