#pragma once
// The /multicanonical group of a multicanonical run's output: everything `analysis
// multicanonical` needs, so that the analysis reads nothing else.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/output/h5_id.hpp"

namespace lattica {

/// A finished multicanonical run: its Wang-Landau phase, the frozen weights and the production.
struct MulticanonicalRecord {
  std::string model;              ///< "ising", "potts", "on" or "phi4"
  int q = 2;                      ///< Potts states (2 otherwise)
  int n = 1;                      ///< O(n) components (1 otherwise)
  std::string coupling = "beta";  ///< what reweighting varies: "beta", or "kappa" for phi^4
  double coupling_value = 0;      ///< the model's coupling (canonical starting weights)
  /// O(n), phi^4: the window's lowest total energy and the bins' width (bin 0 lies below the
  /// window, the last bin above it); NaN for the exact bins of Ising and Potts.
  double bin_low = std::numeric_limits<double>::quiet_NaN();
  double bin_width = std::numeric_limits<double>::quiet_NaN();
  int64_t volume = 0;
  int64_t walkers = 0;
  // Wang-Landau
  double lnf_initial = 0, lnf_final = 0, flatness = 0, lnf_reached = 0;
  int stages = 0;
  bool converged = false;  ///< ln f fell below lnf_final within the sweep limit
  int64_t sweeps_per_iteration = 0, wang_landau_sweeps = 0;
  int64_t window_first_bin = 0, window_last_bin = 0;  ///< the bins sampled (multicanonical.window)
  std::string initial_weights;                        ///< "flat" or "canonical"
  std::vector<double> wang_landau_log_g;  ///< per bin, the initial estimate where never visited
  std::vector<int32_t> visited;           ///< per bin: visited during Wang-Landau (1) or not
  // refinement (multicanonical.refine_iterations; sim/engine/multicanonical/muca_recursion.hpp)
  int64_t refine_iterations = 0;   ///< iterations run (0: the production has Wang-Landau's weights)
  int64_t refine_sweeps = 0;       ///< sweeps of every walker per iteration
  double refine_prior_weight = 0;  ///< the weight of Wang-Landau's differences
  std::vector<double> refine_pair_weight;  ///< per bin: the weight of the pair it starts; empty
  // production with frozen weights
  std::vector<double> energy;      ///< per bin: its total energy E (O(n), phi^4: the centre)
  std::vector<double> log_weight;  ///< per bin: the frozen ln W(E)
  std::vector<int64_t> histogram;  ///< per bin: (walker, sweep) pairs of the production
  int64_t thermalization = 0, measure_every = 0;
  std::vector<int64_t> sweeps;        ///< per measurement: sweeps done by then
  std::vector<double> energy_series;  ///< [measurement][walker]: E
  std::vector<double> order_series;   ///< [measurement][walker]: WalkerEnsemble::orders()
  double histogram_seconds = 0, seconds = 0;
};

/// Writes /multicanonical under the file's root (replacing an earlier one).
void write_multicanonical(hid_t root, const MulticanonicalRecord& record);

}  // namespace lattica
