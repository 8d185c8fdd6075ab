#pragma once
// Wang-Landau estimation of ln g(E) over exact energy bins, with all walkers feeding one
// histogram, and the multicanonical acceptance table made from log weights. Host code only:
// the arithmetic is done once, in a fixed order, so every backend gets the same weights.

#include <cstdint>
#include <vector>

namespace lattica {

/// The bins first .. last (inclusive) that a run samples: its energy window.
struct MucaWindow {
  int64_t first = 0, last = 0;
  bool contains(int64_t k) const { return k >= first && k <= last; }
};

struct WangLandauSettings {
  double lnf_initial = 1.0;  ///< ln f of the first stage
  double lnf_final = 1e-6;   ///< stop once ln f falls below it
  double flatness = 0.8;     ///< flat: every visited bin's count >= flatness x their mean
};

/// What a Wang-Landau estimate continues from (a checkpoint's).
struct WangLandauState {
  double lnf = 0;
  int stages = 0;
  std::vector<double> log_g;
  std::vector<uint64_t> stage_counts;
  std::vector<uint8_t> visited;
};

/// The Wang-Landau schedule. After each iteration (all walkers' sweeps with fixed weights),
/// add() raises ln g(E) of every bin of the window by ln f x (its visits / the mean visits of
/// the bins visited in that iteration): the mean visited bin rises by ln f, whatever the number
/// of walkers. (Raising ln g by ln f per visit, as one walker does, would make 10^4 walkers
/// move the weights 10^4 times as far in one iteration, too far for them to follow.) Once the
/// stage's histogram is flat over every bin of the window visited so far in the run, ln f is
/// halved and a new stage starts. Visits outside the window are ignored.
class WangLandau {
 public:
  /// initial_log_g: one value per bin, the starting estimate (zeros: flat weights).
  WangLandau(const std::vector<double>& initial_log_g, MucaWindow window,
             const WangLandauSettings& settings);

  /// Continues from `state` (one entry per bin in each vector).
  WangLandau(WangLandauState state, MucaWindow window, const WangLandauSettings& settings);

  /// Everything add() changes, to continue from later.
  WangLandauState state() const { return {lnf_, stages_, log_g_, stage_counts_, visited_}; }

  /// Adds one iteration's visit counts (one per bin); returns whether it ended a stage.
  bool add(const std::vector<uint64_t>& counts);

  /// Whether ln f has fallen below its final value.
  bool done() const { return lnf_ < settings_.lnf_final; }
  double lnf() const { return lnf_; }
  int stages() const { return stages_; }
  /// ln g per bin, up to a constant; the initial estimate where never visited.
  const std::vector<double>& log_g() const { return log_g_; }
  /// Whether each bin was ever visited (1) or not (0).
  const std::vector<uint8_t>& visited() const { return visited_; }

 private:
  bool flat() const;

  WangLandauSettings settings_;
  MucaWindow window_;
  double lnf_;
  int stages_ = 0;
  std::vector<double> log_g_;
  std::vector<uint64_t> stage_counts_;
  std::vector<uint8_t> visited_;
};

/// The multicanonical log weights -ln g over the window, shifted so that the largest is 0;
/// NaN outside it.
std::vector<double> muca_log_weights(const std::vector<double>& log_g, MucaWindow window);

/// The acceptance table for kernels/ensemble/multicanonical.hpp on a lattice of dimension d:
/// entry [k * (4d + 1) + dk + 2d] is, for k and k + dk in the window, min(1, exp(lnW[k + dk] -
/// lnW[k])) times 2^32 (metropolis_threshold: 15/16 for equal weights), and 0 for a move from
/// the window to a bin outside it. A walker outside the window (a start, not a sample) only
/// approaches it: moves that do not take it further away are certain, the others refused.
std::vector<uint64_t> muca_thresholds(const std::vector<double>& log_weight, MucaWindow window,
                                      int d);

}  // namespace lattica
