#pragma once
// Many independent multicanonical walkers of one Ising or Potts lattice, on one backend
// (kernels/ensemble/multicanonical.hpp holds the per-site physics). The driver sets the
// acceptance table, sweeps, and reads back histograms of the walkers' energy bins.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lattica {

/// What a walker ensemble is built from.
struct WalkerSettings {
  uint64_t seed = 0;
  int q = 2;  ///< 2 for Ising
  std::vector<int64_t> dims;
  int64_t walkers = 1;
  bool hot = true;  ///< hot (uniform states) or cold (state 0) start
  int threads = 0;  ///< CPU threads, 0 = OpenMP's default
  int cuda_device = 0;
};

class WalkerEnsemble {
 public:
  virtual ~WalkerEnsemble() = default;

  /// Acceptance thresholds: [k * (4d + 1) + dk + 2d] for bins k = 0 .. dV (muca_thresholds()).
  virtual void set_thresholds(const std::vector<uint64_t>& thresholds) = 0;

  /// Runs sweeps first .. first + sweeps - 1 of every walker; returns, per bin, how many
  /// (walker, sweep) pairs ended a sweep in it. The sum is over integers: exact in any order.
  virtual std::vector<uint64_t> sweep(uint64_t first, int64_t sweeps) = 0;

  /// Every walker's bin (satisfied bonds) now.
  virtual std::vector<int32_t> bins() const = 0;
  /// Every walker's order parameter now (muca_order()).
  virtual std::vector<int32_t> orders() const = 0;
  /// The spins, [site * walkers + walker] (for checkpoints and tests).
  virtual std::vector<uint8_t> spins() const = 0;
  /// Replaces every walker's spins (as spins() gives them) and counts their bins anew.
  virtual void set_spins(const std::vector<uint8_t>& spins) = 0;

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
