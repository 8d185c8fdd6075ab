#pragma once
// Checkpoints: the state a run needs to continue exactly (the engine's state, the run loop's
// position and the output file's committed lengths), in a small binary file that is replaced
// atomically (written to a temporary name, flushed to disk, renamed), so the file on disk is
// always a whole checkpoint, the old one or the new one.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica {

/// A checkpoint that cannot be written or read (disk full, unwritable, corrupt): exit 3.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Rows of each extendable dataset of the output file at the checkpoint.
struct OutputLengths {
  int64_t measurements = 0;
  int64_t snapshots = 0;
  int64_t structure_factor_series = 0;
  int64_t timeslices = 0;
};

/// A decomposed run's checkpoint (sim/checkpoint_parts.hpp): each rank's box of the
/// configuration in its own file, part-R.h5 in folder `generation` of the checkpoint's parts
/// folder; the checkpoint file itself (the manifest) holds the rest.
struct CheckpointParts {
  std::string generation;     ///< empty: a single-file checkpoint, the configuration inside it
  std::vector<int64_t> dims;  ///< the lattice
  std::vector<int> grid;      ///< boxes per axis; part R is the box of rank R (Decomposition)
  int32_t replicas = 0;
  uint64_t site_bytes = 0;
};

struct Checkpoint {
  std::string chain_config;  ///< the input keys that determine the chain (config.hpp)
  int64_t sweep = 0;         ///< sweeps completed
  int64_t last_snapshot = -1;
  OutputLengths output;
  EngineState engine;  ///< with parts: no configuration, until read_checkpoint_region() adds it
  CheckpointParts parts;
};

/// A multicanonical run's checkpoint (sim/run/multicanonical_run.cpp): where its phases are, the
/// Wang-Landau state, the frozen weights and the production so far, and every walker's spins.
/// Written at the end of a Wang-Landau or refinement iteration, of a thermalization chunk or of a
/// measurement.
struct MulticanonicalCheckpoint {
  std::string chain_config;  ///< the input keys that determine the chain (config.hpp)
  uint64_t sweep = 0;        ///< sweeps every walker has done
  int32_t phase = 0;         ///< 0 Wang-Landau, 3 refinement, 1 thermalization, 2 production
  int64_t phase_done = 0;    ///< the phase's sweeps (Wang-Landau, thermalization) or measurements
  int64_t wang_landau_sweeps = 0;  ///< Wang-Landau's sweeps (all of them once past it)
  // Wang-Landau (WangLandauState)
  double lnf = 0;
  int32_t stages = 0;
  std::vector<double> log_g;
  std::vector<uint64_t> stage_counts;
  std::vector<uint8_t> visited;
  // the refinement (MucaRecursionState) after the iterations done; empty vectors without one
  int64_t refine_iterations = 0;
  std::vector<double> refine_pair_weight, refine_pair_sum;
  // past Wang-Landau: the log weights (in refinement: of its next iteration); in production
  // its sums so far
  std::vector<double> log_weight;
  std::vector<int64_t> histogram, sweeps;
  std::vector<double> energy_series, order_series;
  std::vector<uint8_t> spins;  ///< the bytes of the spins (WalkerEnsemble::spins())
};

/// The checkpoint file of an output file.
std::string checkpoint_path(const std::string& output_path);

/// Replaces the file at path by c atomically; throws CheckpointError with the cause.
void write_checkpoint(const std::string& path, const Checkpoint& c);

/// Reads a checkpoint written by write_checkpoint; throws CheckpointError when the file is
/// missing, truncated, corrupt (checksum), of another format version, or holds what no run
/// writes (negative counts, a snapshot after its sweep, histograms that do not add up, ...).
Checkpoint read_checkpoint(const std::string& path);

/// The same for a multicanonical run's checkpoint (another format version: neither reader
/// takes the other's file).
void write_multicanonical_checkpoint(const std::string& path, const MulticanonicalCheckpoint& c);
MulticanonicalCheckpoint read_multicanonical_checkpoint(const std::string& path);

}  // namespace lattica
