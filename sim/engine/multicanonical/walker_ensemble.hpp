#pragma once
// Many independent multicanonical walkers of one lattice, on one backend: Ising and Potts in
// exact energy bins (kernels/ensemble/multicanonical.hpp), O(n) and phi^4 in binned energies
// (kernels/ensemble/multicanonical_continuous.hpp). The driver sets the weights, sweeps, and
// reads back histograms of the walkers' energy bins.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/ensemble/multicanonical.hpp"        // MucaEnergyBins
#include "sim/engine/multicanonical/wang_landau.hpp"  // MucaWindow

namespace lattica {

/// What a walker ensemble is built from.
struct WalkerSettings {
  uint64_t seed = 0;
  std::string model = "ising";    ///< "ising", "potts", "on" or "phi4"
  int q = 2;                      ///< Potts states (2 for Ising)
  int n = 3;                      ///< O(n) components
  bool single_precision = false;  ///< O(n), phi^4: float spins (else double)
  double step = 1.0;              ///< O(n), phi^4: the Metropolis step
  int hits = 1;                   ///< O(n), phi^4: proposals per site
  double lambda = 0.0;            ///< phi^4's quartic coupling
  MucaEnergyBins energy_bins;     ///< O(n), phi^4: the bins of the window
  std::vector<int64_t> dims;
  int64_t walkers = 1;
  bool hot = true;  ///< hot or cold start
  int threads = 0;  ///< CPU threads, 0 = OpenMP's default
  int cuda_device = 0;

  bool continuous() const { return model == "on" || model == "phi4"; }
};

class WalkerEnsemble {
 public:
  virtual ~WalkerEnsemble() = default;

  /// The weights the walkers sample: ln W per bin (NaN outside the window) and the window.
  virtual void set_weights(const std::vector<double>& log_weight, MucaWindow window) = 0;

  /// Runs sweeps first .. first + sweeps - 1 of every walker; returns, per bin, how many
  /// (walker, sweep) pairs ended a sweep in it. The sum is over integers: exact in any order.
  virtual std::vector<uint64_t> sweep(uint64_t first, int64_t sweeps) = 0;

  /// The bins of the last sweep() call: entry [s * walkers + w] is walker w's bin after its
  /// sweep first + s (what that call's histogram counted). Empty before the first call.
  virtual std::vector<int32_t> trace() const = 0;

  /// Every walker's bin now.
  virtual std::vector<int32_t> bins() const = 0;
  /// Every walker's total energy now.
  virtual std::vector<double> energies() const = 0;
  /// Every walker's order parameter now: Ising sum_x s_x, Potts the sites in the most common
  /// state, O(n) |sum_x s_x|, phi^4 sum_x phi_x.
  virtual std::vector<double> orders() const = 0;
  /// The spins' bytes (for checkpoints and tests): Ising and Potts [walker * V + site], a warp's
  /// lanes reading consecutive sites; O(n) and phi^4 [site * walkers + walker], consecutive
  /// threads reading consecutive walkers.
  virtual std::vector<uint8_t> spins() const = 0;
  /// Replaces every walker's spins (as spins() gives them) and counts their energies anew.
  virtual void set_spins(const std::vector<uint8_t>& spins) = 0;

  /// The element type and components of one site's spin, for the output's (empty) snapshots.
  virtual SnapshotFormat snapshot_format() const = 0;

  virtual std::string backend_name() const = 0;
  virtual std::string device_name() const = 0;
  /// Seconds spent in histograms since construction (waits for the device).
  virtual double histogram_seconds() const = 0;
};

/// The CPU backend's walkers.
std::unique_ptr<WalkerEnsemble> make_cpu_walkers(const WalkerSettings& settings);
/// The CUDA backend's walkers; throws CudaError without a device.
std::unique_ptr<WalkerEnsemble> make_cuda_walkers(const WalkerSettings& settings);

}  // namespace lattica
