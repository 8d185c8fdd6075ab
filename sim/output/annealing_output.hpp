#pragma once
// Population annealing's output: the series /annealing, one row per step of the schedule
// (sim/run/annealing.hpp), with population averages always and every replica's data only
// when asked for (annealing.replica_output), since a population can hold 65536 replicas.

#include <string>
#include <vector>

#include "sim/output.hpp"
#include "sim/run/annealing.hpp"

namespace lattica {

/// What the rows hold and the group's attributes.
struct AnnealingLayout {
  std::vector<std::string> observables;  ///< Engine::observable_names()
  int replicas = 1;
  int populations = 1;
  bool replica_output = false;
  int64_t sweeps_per_step = 0;
  std::string resampling;
  double log_z0 = 0.0;  ///< ln Z at beta = 0, the whole lattice
  int64_t volume = 0;
};

/// Writes /annealing into an output file.
class AnnealingOutput {
 public:
  /// Creates /annealing in `file` (which must outlive this) with its attributes.
  AnnealingOutput(OutputFile& file, AnnealingLayout layout);
  /// Appends one step's row.
  void append(const AnnealingStep& step);

 private:
  OutputFile& file_;
  AnnealingLayout layout_;
  RecordSeries* series_;
};

}  // namespace lattica
