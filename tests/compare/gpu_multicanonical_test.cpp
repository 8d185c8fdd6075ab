// Multicanonical walkers on the GPU (one thread per walker) against the CPU loop over walkers:
// the same spins, bins, order parameters and histograms, bit for bit, and the same whole run.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/engine/multicanonical/wang_landau.hpp"
#include "sim/run/multicanonical_run.hpp"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

/// Log weights that make every kind of move likely somewhere: a slope and a ripple.
std::vector<double> rippled_weights(int64_t bins) {
  std::vector<double> w(static_cast<size_t>(bins));
  for (int64_t k = 0; k < bins; ++k) w[k] = 1.3 * k + 2.0 * std::sin(0.37 * k);
  return w;
}

void expect_same_walkers(const WalkerSettings& s) {
  const int d = static_cast<int>(s.dims.size());
  int64_t volume = 1;
  for (int64_t l : s.dims) volume *= l;
  const std::vector<uint64_t> t =
      muca_thresholds(rippled_weights(d * volume + 1), MucaWindow{0, d * volume}, d);
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(s), gpu = make_cuda_walkers(s);
  cpu->set_thresholds(t);
  gpu->set_thresholds(t);
  EXPECT_EQ(cpu->spins(), gpu->spins()) << "initial state";
  uint64_t sweep = 3;
  for (int64_t n : {1, 7, 12}) {
    EXPECT_EQ(cpu->sweep(sweep, n), gpu->sweep(sweep, n)) << "histogram, sweep " << sweep;
    sweep += n;
    EXPECT_EQ(cpu->bins(), gpu->bins()) << "sweep " << sweep;
    EXPECT_EQ(cpu->orders(), gpu->orders()) << "sweep " << sweep;
  }
  EXPECT_EQ(cpu->spins(), gpu->spins());
}

TEST(GpuMulticanonical, PottsWalkersMatchTheCpuBitForBit) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  WalkerSettings s;
  s.seed = 77;
  s.q = 10;
  s.dims = {8, 8};
  s.walkers = 1000;  // not a multiple of the block size
  expect_same_walkers(s);
}

TEST(GpuMulticanonical, IsingWalkersMatchTheCpuBitForBit) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  WalkerSettings s;
  s.seed = 9;
  s.q = 2;
  s.dims = {4, 6, 4};
  s.walkers = 333;
  s.hot = false;
  expect_same_walkers(s);
}

/// The whole run of c on the CPU and the GPU: the same Wang-Landau phase and production.
void expect_same_run(const Config& c) {
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(walker_settings(c));
  std::unique_ptr<WalkerEnsemble> gpu = make_cuda_walkers(walker_settings(c));
  const MulticanonicalRecord a = run_multicanonical(c, *cpu, true);
  const MulticanonicalRecord b = run_multicanonical(c, *gpu, true);
  EXPECT_EQ(a.wang_landau_sweeps, b.wang_landau_sweeps);
  EXPECT_EQ(a.wang_landau_log_g, b.wang_landau_log_g);
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.energy_series, b.energy_series);
  EXPECT_EQ(a.order_series, b.order_series);
}

TEST(GpuMulticanonical, WholeRunMatchesTheCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  Config c;
  c.model_kind = "potts";
  c.q = 10;
  c.dims = {6, 6};
  c.seed = 11;
  c.start = "hot";
  c.multicanonical = true;
  c.muca_walkers = 4096;
  c.muca_sweeps_per_iteration = 5;
  c.muca_lnf_initial = 0.1;
  c.muca_lnf_final = 0.01;
  c.muca_max_sweeps = 20000;
  c.thermalization = 10;
  c.measurements = 20;
  c.measure_every = 3;
  expect_same_run(c);
  // A window that the hot walkers start below (they approach it), from canonical weights.
  c.muca_window = {-1.9, -0.8};
  c.muca_initial_weights = "canonical";
  c.beta = 1.4;
  expect_same_run(c);
}

}  // namespace
}  // namespace lattica
