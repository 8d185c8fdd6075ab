#pragma once
// Results the output receives whole (replacing earlier ones at every checkpoint): the exact
// histograms and the tuned update steps.

#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/output/h5_id.hpp"

namespace lattica {

/// Writes /histograms/<name>/{values,counts} under `file` (replacing an earlier /histograms).
void write_histograms(hid_t file, const std::vector<ExactHistogram>& histograms);

/// Records the Metropolis and Langevin steps in use and their acceptances as attributes of
/// `root` (replacing earlier ones).
void write_step_tuning(hid_t root, const StepTuning& tuning);

}  // namespace lattica
