#pragma once
// The run loop: thermalize, then sweep / measure / snapshot, appending to the output file.

#include <cstdint>
#include <string>

#include "sim/checkpoint.hpp"
#include "sim/config.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/stop_signals.hpp"

namespace lattica {

struct RunSummary {
  int64_t sweeps = 0;
  int64_t measurements = 0;
  int64_t snapshots = 0;
  int64_t streamed_snapshots = 0;     ///< of them, a decomposed run's, written at once:
  bool collective_snapshots = false;  ///< by every rank (parallel HDF5), or through rank 0
  double snapshot_seconds = 0.0;      ///< the seconds these took
  double seconds = 0.0;
  double site_updates_per_ns = 0.0;  ///< every pass of the update sequence counts
  int64_t first_sweep = 0;           ///< where this invocation started (resumed runs: > 0)
  int64_t checkpoints = 0;           ///< checkpoints written
  bool stopped = false;              ///< stopped early by a signal or the walltime
  std::string stop_reason;           ///< e.g. "SIGTERM", "walltime"
};

/// Runs the chain described by config on engine, writing to output, from the start or from a
/// checkpoint (`resume`). Checkpoints go to checkpoint_path(config.output_path) every
/// run.checkpoint_every sweeps and run.checkpoint_minutes minutes, at the end when either is
/// set or run.walltime is, and before stopping for a signal or the walltime (Slurm's
/// SLURM_JOB_END_TIME counts as one too). progress: how progress is shown on stderr.
/// A decomposed run calls this on every rank with its engine: `output` is rank 0's file and null
/// elsewhere, and `ranks` makes every rank stop and checkpoint at the same sweep. (A RunLoop,
/// sim/run/run_loop.hpp, does the work.)
RunSummary run_chain(const Config& config, Engine& engine, OutputFile* output,
                     ProgressStyle progress, const Checkpoint* resume = nullptr,
                     Communicator* ranks = nullptr);

}  // namespace lattica
