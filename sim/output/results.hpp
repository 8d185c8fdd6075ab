#pragma once
// Results the output receives whole (replacing earlier ones at every checkpoint): the exact
// histograms and the tuned update steps.

#include <string>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/output/h5_id.hpp"

namespace lattica {

/// Writes /histograms/<name>/{values,counts} under `file` (replacing an earlier /histograms).
void write_histograms(hid_t file, const std::vector<ExactHistogram>& histograms);

/// Writes a 1-D dataset `name` of doubles or integers under `parent` (replacing one there),
/// with a description attribute.
template <class T>
void write_vector(hid_t parent, const char* name, const std::vector<T>& values,
                  const std::string& description);

/// Writes a dataset `name` of the given shape (row-major values) under `parent`, replacing one
/// there, with a description attribute. T: double, int64_t or int32_t. Empty values: the
/// dataset only, its values written later (a decomposed run's tables, a rank's rows at a time).
template <class T>
void write_array(hid_t parent, const char* name, const std::vector<T>& values,
                 const std::vector<hsize_t>& shape, const std::string& description);

/// Writes parallel tempering's statistics under `group`/statistics (replacing earlier ones):
/// acceptance per pair of rungs, round trips, the fraction of up-going replicas per rung and
/// the final permutation.
void write_tempering_statistics(hid_t group, const TemperingState& state);

/// Writes the feedback-optimised ladder under `group`: the ladder in use as the dataset
/// `coupling` (replacing the input's), and `group`/feedback/{up_fraction,ladders}, each feedback
/// step's f(k) and the ladder it made, [step, rung]. Precondition: state.ladder is not empty.
void write_tempering_feedback(hid_t group, const std::string& coupling,
                              const TemperingState& state);

/// Records the Metropolis and Langevin steps in use and their acceptances as attributes of
/// `root` (replacing earlier ones).
void write_step_tuning(hid_t root, const StepTuning& tuning);

}  // namespace lattica
