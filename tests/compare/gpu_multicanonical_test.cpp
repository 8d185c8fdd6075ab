// Multicanonical walkers on the GPU (one thread per walker) against the CPU loop over walkers:
// the same spins, bins, order parameters and histograms, bit for bit, and the same whole run;
// for phi^4 (no library functions in its moves) the same bit for bit too, and for O(n) (whose
// Gaussian proposals take log, sin and cos from each side's library) the same to rounding.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/engine/multicanonical/wang_landau.hpp"
#include "sim/run/multicanonical_run.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/muca_resume.hpp"

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
  const std::vector<double> w = rippled_weights(d * volume + 1);
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(s), gpu = make_cuda_walkers(s);
  cpu->set_weights(w, MucaWindow{0, d * volume});
  gpu->set_weights(w, MucaWindow{0, d * volume});
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
  s.dims = {6, 10};  // a row of 5 sites per colour: groups of 32 span rows, the last is short
  expect_same_walkers(s);
  s.dims = {5, 6};  // an odd extent: one lane sweeps
  expect_same_walkers(s);
  s.dims = {70};  // 1D: rows of 35 sites per colour
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

/// The whole run of c on the CPU and the GPU: the same Wang-Landau phase, refinement (its
/// weights and accumulators) and production.
void expect_same_run(const Config& c) {
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(walker_settings(c));
  std::unique_ptr<WalkerEnsemble> gpu = make_cuda_walkers(walker_settings(c));
  const MulticanonicalRecord a = run_multicanonical(c, *cpu, true);
  const MulticanonicalRecord b = run_multicanonical(c, *gpu, true);
  test::expect_same_record(a, b);
}

/// Continuous walkers of `s` with rippled weights over its bins (NaN outside the window) on
/// both backends, for sweeps 3 .. 22: the same histograms, bins and spins bit for bit
/// (`exact`), or energies, orders and spins within `tolerance` (relative to their scale) for
/// all but 1 % of the walkers: where the libraries' sin and cos differ by an ulp, a test that
/// lands within rounding of its threshold parts a walker's two chains for good (2 of 999 O(3)
/// walkers in 20 sweeps), while a move that differs between the backends parts them all.
void expect_close_continuous_walkers(const WalkerSettings& s, bool exact, double tolerance) {
  const int32_t count = s.energy_bins.count;
  std::vector<double> w = rippled_weights(count + 2);
  w.front() = w.back() = std::nan("");
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(s), gpu = make_cuda_walkers(s);
  cpu->set_weights(w, MucaWindow{1, count});
  gpu->set_weights(w, MucaWindow{1, count});
  if (exact) {  // O(n)'s hot start draws Gaussians too: the same to rounding, checked below
    EXPECT_EQ(cpu->spins(), gpu->spins()) << "initial state";
  }
  uint64_t sweep = 3;
  for (int64_t n : {1, 7, 12}) {
    const std::vector<uint64_t> hc = cpu->sweep(sweep, n), hg = gpu->sweep(sweep, n);
    sweep += n;
    if (exact) {
      EXPECT_EQ(hc, hg) << "histogram, sweep " << sweep;
      EXPECT_EQ(cpu->energies(), gpu->energies()) << "sweep " << sweep;
      EXPECT_EQ(cpu->orders(), gpu->orders()) << "sweep " << sweep;
      continue;
    }
    const std::vector<double> ec = cpu->energies(), eg = gpu->energies();
    const std::vector<double> oc = cpu->orders(), og = gpu->orders();
    const double scale = std::fabs(s.energy_bins.low);  // the energies' and orders' size
    int far = 0;
    for (size_t i = 0; i < ec.size(); ++i) {
      far += std::fabs(ec[i] - eg[i]) > tolerance * scale ||
             std::fabs(oc[i] - og[i]) > tolerance * scale;
    }
    EXPECT_LE(far, static_cast<int>(ec.size()) / 100) << "walkers apart after sweep " << sweep;
  }
  if (exact) {
    EXPECT_EQ(cpu->spins(), gpu->spins());
  }
}

/// Settings of continuous walkers on a 6^2 lattice, window [-2, 0.5] per site in 40 bins.
WalkerSettings continuous_settings(const std::string& model, bool single_precision) {
  WalkerSettings s;
  s.seed = 31;
  s.model = model;
  s.n = 3;
  s.lambda = 0.8;
  s.step = 0.9;
  s.hits = 2;
  s.single_precision = single_precision;
  s.dims = {6, 6};
  s.walkers = 999;  // not a multiple of the block size
  s.energy_bins = MucaEnergyBins{-2.0 * 36, 2.5 * 36 / 40, 40};
  return s;
}

TEST(GpuMulticanonical, Phi4WalkersMatchTheCpuBitForBit) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  expect_close_continuous_walkers(continuous_settings("phi4", false), true, 0);
  expect_close_continuous_walkers(continuous_settings("phi4", true), true, 0);
}

TEST(GpuMulticanonical, OnWalkersMatchTheCpuToRounding) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  expect_close_continuous_walkers(continuous_settings("on", false), false, 1e-9);
  expect_close_continuous_walkers(continuous_settings("on", true), false, 1e-4);
}

/// A short q = 10 Potts run of 6^2 sites: Wang-Landau to ln f = 0.01, 20 measurements.
Config potts10_config(uint64_t seed, int64_t walkers) {
  Config c;
  c.model_kind = "potts";
  c.q = 10;
  c.dims = {6, 6};
  c.seed = seed;
  c.start = "hot";
  c.multicanonical = true;
  c.muca_walkers = walkers;
  c.muca_sweeps_per_iteration = 5;
  c.muca_lnf_initial = 0.1;
  c.muca_lnf_final = 0.01;
  c.muca_max_sweeps = 20000;
  c.thermalization = 10;
  c.measurements = 20;
  c.measure_every = 3;
  return c;
}

TEST(GpuMulticanonical, WholePhi4RunMatchesTheCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  Config c = potts10_config(13, 2048);
  c.model_kind = "phi4";
  c.kappa = 0.3;
  c.lambda = 1.0;
  c.precision = "float";
  c.muca_window = {-3.0, 1.0};
  c.muca_bins = 64;
  c.muca_initial_weights = "canonical";
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(walker_settings(c));
  std::unique_ptr<WalkerEnsemble> gpu = make_cuda_walkers(walker_settings(c));
  test::expect_same_record(run_multicanonical(c, *cpu, true), run_multicanonical(c, *gpu, true));
}

TEST(GpuMulticanonical, WholeRunMatchesTheCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  Config c = potts10_config(11, 4096);
  expect_same_run(c);
  // A window that the hot walkers start below (they approach it), from canonical weights.
  c.muca_window = {-1.9, -0.8};
  c.muca_initial_weights = "canonical";
  c.beta = 1.4;
  expect_same_run(c);
}

TEST(GpuMulticanonical, WholeRefinedRunMatchesTheCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  Config c = potts10_config(14, 2048);
  c.muca_window = {-1.9, -0.8};
  c.muca_initial_weights = "canonical";
  c.beta = 1.4;
  c.muca_refine_iterations = 3;
  c.muca_refine_sweeps = 40;
  expect_same_run(c);
  // Stopped on the CPU after the refinement's first iteration, continued on the GPU.
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(walker_settings(c));
  const MulticanonicalRecord straight = run_multicanonical(c, *cpu, true);
  std::unique_ptr<WalkerEnsemble> first = make_cpu_walkers(walker_settings(c));
  const MulticanonicalCheckpoint at =
      test::stop_at(c, *first, static_cast<uint64_t>(straight.wang_landau_sweeps) + 1);
  EXPECT_EQ(at.phase, 3);
  std::unique_ptr<WalkerEnsemble> gpu = make_cuda_walkers(walker_settings(c));
  bool stopped = true;
  test::expect_same_record(straight, run_multicanonical(c, *gpu, true, &at, {}, &stopped));
  EXPECT_FALSE(stopped);
}

// A CPU run's checkpoint, taken in Wang-Landau and in production, continued on the GPU's
// walkers: the uninterrupted CPU run bit for bit (set_spins and the counts on the device).
TEST(GpuMulticanonical, CpuCheckpointContinuedOnTheGpuIsTheSameRun) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const Config c = potts10_config(12, 2048);
  std::unique_ptr<WalkerEnsemble> cpu = make_cpu_walkers(walker_settings(c));
  const MulticanonicalRecord straight = run_multicanonical(c, *cpu, true);
  const auto wang_landau = static_cast<uint64_t>(straight.wang_landau_sweeps);
  for (uint64_t sweep : {wang_landau / 2, wang_landau + 10 + 30}) {
    std::unique_ptr<WalkerEnsemble> first = make_cpu_walkers(walker_settings(c));
    const MulticanonicalCheckpoint at = test::stop_at(c, *first, sweep);
    std::unique_ptr<WalkerEnsemble> gpu = make_cuda_walkers(walker_settings(c));
    bool stopped = true;
    test::expect_same_record(straight, run_multicanonical(c, *gpu, true, &at, {}, &stopped));
    EXPECT_FALSE(stopped);
  }
}

}  // namespace
}  // namespace lattica
