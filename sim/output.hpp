#pragma once
// HDF5 output in schema "lattica/1": root attributes, extendable observable series, snapshots.
// The parts: sim/output/ (HDF5 toolkit, record series, correlators, results, working copies,
// recovery).

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/checkpoint.hpp"
#include "sim/correlators.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output/correlator_output.hpp"
#include "sim/output/h5_id.hpp"
#include "sim/output/multicanonical_output.hpp"
#include "sim/output/record_series.hpp"

namespace lattica {

/// Everything the root of the file records about how it was made.
struct RunMetadata {
  std::string input_toml;
  std::string resolved_toml;
  std::string input_path;
  std::vector<int64_t> dims;
  std::string model;
  int q = 0;              ///< Potts states; 0 for other models
  int n = 0;              ///< O(n) components; 0 for other models
  std::string precision;  ///< continuous models: "float" or "double"
  std::string algorithm;  ///< the update sequence, passes joined by ", "
  double beta = 0.0;      ///< written for every model but phi^4
  double kappa = 0.0;     ///< phi^4
  double lambda = 0.0;    ///< phi^4
  double field = 0.0;
  int hits = 0;  ///< continuous models: Metropolis proposals per site and pass
  SnapshotFormat snapshot{ElementType::int8, 1, "spins +1/-1 (int8)"};
  /// A decomposed run's box extents, which snapshot chunks follow; empty: the whole lattice.
  std::vector<int64_t> snapshot_box;
  int64_t structure_factor_every = 0;  ///< 0: no /correlators/structure_factor
  int64_t timeslice_every = 0;         ///< 0: no /correlators/timeslice
  int timeslice_momenta = 1;
  uint64_t seed = 0;
  std::string backend;
  std::string device;
  int replicas = 1;
  /// output.observables = "means": /observables holds the mean over the replicas (tempered: over
  /// the ladders, per rung), and /kept_replicas the series of the first kept_replicas of them.
  bool observable_means = false;
  int kept_replicas = 0;
  int64_t point_index = -1;  ///< -1: not part of a sweep
  std::string swept;         ///< "key = value" lines of a sweep point
  /// Parallel tempering (rungs > 0): the couplings of every rung by name ("beta", "h", ...),
  /// the names of those the ladder varies, and the sweeps between exchange rounds.
  int rungs = 0;
  std::vector<std::pair<std::string, std::vector<double>>> rung_couplings;
  std::vector<std::string> tempered;
  int64_t exchange_every = 1;
  int feedback = 0;  ///< tempering.feedback: steps of the feedback-optimised ladder
};

class OutputFile {
 public:
  /// Creates the file; refuses an existing one unless overwrite is set.
  OutputFile(const std::string& path, bool overwrite, const RunMetadata& metadata,
             const std::vector<std::string>& observables,
             const std::vector<std::string>& descriptions);

  /// Continues the file of a checkpointed run in a working copy (working_copy_path): every
  /// extendable dataset is cut back to the checkpoint's lengths (rows written after the
  /// checkpoint are written again by the resumed run), and the input attributes are replaced by
  /// the resumed run's. The copy replaces the file at publish(), before the resumed run's first
  /// checkpoint; until then the file is untouched, and a resume that fails before it (a disk
  /// still full, an error) leaves the file as it was and removes the copy.
  OutputFile(const std::string& path, const RunMetadata& metadata,
             const std::vector<std::string>& observables, const OutputLengths& lengths);

  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Removes a working copy that was never published.
  ~OutputFile();

  /// Makes a resumed run's working copy the output file (flushed to disk, then renamed over
  /// it); nothing for a new file or once done. Call after flush() and before a checkpoint that
  /// counts on the rows written since.
  void publish();

  /// Records that the run did every sweep it was asked for (root attribute finished = 1).
  void mark_finished();

  /// The committed lengths of the extendable datasets (for checkpoints).
  OutputLengths lengths() const {
    return {observables_.length(), snapshots_.length(), structure_factor_.series().length(),
            timeslices_.series().length()};
  }

  /// Appends measurements: sweeps[k] and values[(k * replicas + r) * n_observables + o].
  void append_measurements(const std::vector<int64_t>& sweeps, const std::vector<double>& values);

  /// Appends one lexicographic configuration per replica (replicas * volume sites in the
  /// metadata's snapshot format) taken after `sweep` sweeps.
  void append_snapshot(int64_t sweep, const void* configuration);

  /// Appends a frame taken after `sweep` sweeps whose configuration write_snapshot_block() then
  /// writes a box at a time (a decomposed run's, so no rank holds the whole lattice).
  void begin_snapshot(int64_t sweep);
  /// Writes the sites x_a = origin[a] + i_a, i_a < extents[a] (a box; the last axis whole) of
  /// every replica into the frame begun last: `box` replica-major, lexicographic over the box, in
  /// the snapshot format (bit-packed: 8 sites of the last axis a byte).
  void write_snapshot_block(const std::vector<int64_t>& origin, const std::vector<int64_t>& extents,
                            const void* box);

  /// Whether the chunks of a new frame get their place in the file when it is appended (files
  /// made since snapshots are written collectively), which close_for_frame() needs.
  bool snapshot_chunks_placed_early() const;
  /// For a decomposed run's frame that every rank writes (parallel HDF5): appends the frame after
  /// `sweep` sweeps (its sweep; the configuration's chunks placed, not written), then closes the
  /// file, every object in it first, so that the ranks can open it over MPI-IO and write their
  /// boxes (write_snapshot_frame_collectively). Returns the path of the file (a resumed run's
  /// working copy until published). Precondition: snapshot_chunks_placed_early().
  std::string close_for_frame(int64_t sweep);
  /// Opens the file again after close_for_frame() and the ranks' writes, with every series as it
  /// was. The frame's committed_length is raised by the next flush(), as for a frame written by
  /// write_snapshot_block().
  void reopen_after_frame();

  /// Appends per-measurement structure-factor values: sweeps[j] and values[(j * R + r) * 2 +
  /// {0, 1}] = S(0), S(k_min), with xi_2 from them.
  void append_structure_factor_series(const std::vector<int64_t>& sweeps,
                                      const std::vector<double>& values);

  /// Appends per-measurement time-slice correlators: sweeps[j] and values[((j * R + r) * T +
  /// dt) * n_p + p].
  void append_timeslices(const std::vector<int64_t>& sweeps, const std::vector<double>& values);

  /// Appends per-measurement tempering rows: the rung of every replica slot
  /// (rungs[k * replicas + slot]) and the log weights (MeasurementBatch::log_weights).
  void append_tempering(const std::vector<int64_t>& sweeps, const std::vector<int32_t>& rungs,
                        const std::vector<double>& log_weights);

  /// Creates a further series `name` at the root (population annealing's /annealing), which
  /// flush() commits and close() closes with the others. Precondition: a new file.
  RecordSeries& create_series(const char* name, const std::vector<Column>& columns);

  /// Writes parallel tempering's statistics under /tempering/statistics (replacing earlier ones).
  void write_tempering(const TemperingState& state);

  /// Writes the averaged structure factor and two-point function (replacing earlier ones).
  /// Decomposed, `tables` are rank 0's rows, and write_structure_factor_rows() adds the others.
  void write_structure_factor(const StructureFactorTables& tables);
  void write_structure_factor_rows(const StructureFactorTables& rows);

  /// Records the Metropolis step used after thermalization and its measured acceptance.
  void write_step_tuning(const StepTuning& tuning);

  /// Writes exact histograms as /histograms/<name>/{values,counts} (replacing earlier ones).
  void write_histograms(const std::vector<ExactHistogram>& histograms);

  /// Writes a multicanonical run's /multicanonical group (replacing an earlier one).
  void write_multicanonical(const MulticanonicalRecord& record);

  /// Pushes everything to disk and records the committed lengths.
  void flush();

  /// Flushes, closes and publishes the file.
  void close();

 private:
  /// The resume constructor's work on the working copy.
  void reopen(const RunMetadata& m, const std::vector<std::string>& observables,
              const OutputLengths& lengths);
  std::string path_;
  std::string working_path_;  ///< a resumed run's copy until publish(); empty otherwise
  std::vector<int64_t> dims_;
  int replicas_ = 1;
  size_t observable_count_ = 0;
  H5Id file_;
  RecordSeries observables_;  ///< /observables: one column per observable, then the sweeps
  RecordSeries snapshots_;    ///< /snapshots: configuration, sweep
  StructureFactorOutput structure_factor_;
  TimesliceOutput timeslices_;
  int rungs_ = 0;
  std::string tuned_coupling_;     ///< the ladder the feedback moves ("beta", ...), or empty
  RecordSeries tempering_;         ///< /tempering (tempered runs): replica_rung, log_weight, sweep
  bool observable_means_ = false;  ///< /observables holds means (RunMetadata::observable_means)
  int kept_columns_ = 0;           ///< columns of /kept_replicas: kept replicas (x rungs)
  RecordSeries kept_;              ///< /kept_replicas, when columns are kept beside the means
  std::deque<RecordSeries> further_;  ///< create_series()'s
};

/// The working copy of an output file that a resume or a recovery writes before it replaces
/// the file.
std::string working_copy_path(const std::string& output_path);

/// Whether the file is an output whose run did all its sweeps (finished = 1); false for
/// anything else, including a file HDF5 cannot open.
bool output_finished(const std::string& path);

/// Makes an output file left by a crash, a full disk or a copy cut short readable again: pads
/// it to the length its superblock records (HDF5 refuses to open a shorter file), keeps of each
/// series only committed rows whose every byte was in the file (lowering committed_length where
/// the file was cut short) and removes other datasets whose bytes were not, so that no padding
/// passes for data. Works on a working copy that replaces the file only when all went well;
/// "nothing to repair" (an empty result) leaves the file untouched. Returns what it did, one
/// line per change. Throws InputError when the file does not start with an HDF5 superblock
/// (an empty file, another format) and HdfError when it cannot be repaired; the file is then
/// untouched.
std::vector<std::string> recover_output(const std::string& path);

/// UTC time now, ISO 8601 ("2026-11-21T10:00:00Z").
std::string utc_now_iso8601();

}  // namespace lattica
