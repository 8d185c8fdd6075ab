#pragma once
// Wang-Landau estimation of ln g(E) over exact energy bins, with all walkers feeding one
// histogram, and the multicanonical acceptance table made from log weights. Host code only:
// the arithmetic is done once, in a fixed order, so every backend gets the same weights.

#include <cstdint>
#include <vector>

namespace lattica {

struct WangLandauSettings {
  double lnf_initial = 1.0;  ///< ln f of the first stage
  double lnf_final = 1e-6;   ///< stop once ln f falls below it
  double flatness = 0.8;     ///< flat: every visited bin's count >= flatness x their mean
};

/// The Wang-Landau schedule. After each iteration (all walkers' sweeps with fixed weights),
/// add() raises ln g(E) by ln f per visit; once the stage's histogram is flat over every bin
/// visited so far in the run, ln f is halved and a new stage starts.
class WangLandau {
 public:
  WangLandau(int64_t bins, const WangLandauSettings& settings);

  /// Adds one iteration's visit counts (one per bin); returns whether it ended a stage.
  bool add(const std::vector<uint64_t>& counts);

  /// Whether ln f has fallen below its final value.
  bool done() const { return lnf_ < settings_.lnf_final; }
  double lnf() const { return lnf_; }
  int stages() const { return stages_; }
  /// ln g per bin, up to a constant; 0 where never visited.
  const std::vector<double>& log_g() const { return log_g_; }
  /// Whether each bin was ever visited (1) or not (0).
  const std::vector<uint8_t>& visited() const { return visited_; }

 private:
  bool flat() const;

  WangLandauSettings settings_;
  double lnf_;
  int stages_ = 0;
  std::vector<double> log_g_;
  std::vector<uint64_t> stage_counts_;
  std::vector<uint8_t> visited_;
};

/// The multicanonical log weights -ln g, shifted so that the largest is 0.
std::vector<double> muca_log_weights(const std::vector<double>& log_g);

/// The acceptance table for kernels/ensemble/multicanonical.hpp on a lattice of dimension d:
/// entry [k * (4d + 1) + dk + 2d] is min(1, exp(lnW[k + dk] - lnW[k])) times 2^32
/// (metropolis_threshold: 15/16 for equal weights), 0 for a bin outside 0 .. bins - 1.
std::vector<uint64_t> muca_thresholds(const std::vector<double>& log_weight, int d);

}  // namespace lattica
