#pragma once
// The run loop: thermalize, then sweep / measure / snapshot, appending to the output file.

#include <cstdint>
#include <string>

#include "sim/config.hpp"
#include "sim/engine.hpp"
#include "sim/output.hpp"

namespace lattica {

struct RunSummary {
  int64_t sweeps = 0;
  int64_t measurements = 0;
  int64_t snapshots = 0;
  double seconds = 0.0;
  double site_updates_per_ns = 0.0;  ///< every pass of the update sequence counts
};

/// Runs the chain described by config on engine, writing to output. progress: print a
/// live status line on stderr.
RunSummary run_chain(const Config& config, Engine& engine, OutputFile& output, bool progress);

}  // namespace lattica
