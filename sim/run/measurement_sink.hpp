#pragma once
// The run loop's measurements on their way from the engine to the output file.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica {

class BackgroundWriter;
class Communicator;
class OutputFile;
struct Config;
struct StructureFactorSums;

/// Rows of one per-measurement series: the sweep of each row and its values, a fixed number
/// per row.
struct SweepRows {
  std::vector<int64_t> sweeps;
  std::vector<double> values;
};

/// Measurements waiting to be written. A new kind of per-measurement result (MeasurementBatch)
/// is a new member here, filled in MeasurementSink::collect() and written with the others.
struct PendingMeasurements {
  /// The sweeps of every measurement recorded and the observables of those collected so far
  /// (the engine holds the others).
  SweepRows observables;
  SweepRows structure_factor;  ///< the measurements that took it: S(0), S(k_min) per replica
  SweepRows timeslices;        ///< the measurements that took time-slice correlators
  /// Tempered runs, per collected measurement: MeasurementBatch::replica_rungs, log_weights.
  std::vector<int32_t> replica_rungs;
  std::vector<double> log_weights;
};

/// Collects the measurements the engine queued, refuses non-finite ones, and hands them to the
/// background writer to append to the output (null: a rank that writes nothing, which still
/// takes part in every collective step of the engine). Also writes the results the engine
/// accumulates (histograms, structure factor, step tuning) on request; `ranks`: those of a
/// decomposed run (null or one alone otherwise), whose structure factor tables are made and
/// written rank by rank.
class MeasurementSink {
 public:
  MeasurementSink(const Config& config, Engine& engine, OutputFile* output,
                  BackgroundWriter& writer, Communicator* ranks);

  /// The engine queued a measurement taken after `sweep` sweeps: collects when the engine's
  /// queue is full, writes when run.flush_every measurements are pending.
  void record(int64_t sweep);

  /// Collects what the engine still holds and queues every pending measurement's write (with a
  /// flush of the file after it).
  void write();

  /// Waits for every queued write, then writes the results accumulated so far (replacing
  /// earlier ones). Call after write() for results that cover every measurement.
  void write_results();

 private:
  /// Moves the engine's queued measurements into pending_; throws at a non-finite value.
  void collect();
  /// The tables of the structure factor from every rank's sums of its rows, written by rank 0
  /// one rank's rows at a time (collective in a decomposed run).
  void write_structure_factor(const StructureFactorSums& sums);

  Engine& engine_;
  OutputFile* output_;
  BackgroundWriter& writer_;
  Communicator* ranks_;
  std::vector<std::string> observable_names_;
  bool langevin_;         ///< the sequence has a Langevin pass (named in the non-finite message)
  bool per_mode_tables_;  ///< measure.structure_factor_tables = "full"
  int64_t capacity_;
  int64_t flush_every_;
  PendingMeasurements pending_;
  MeasurementBatch batch_;
};

}  // namespace lattica
