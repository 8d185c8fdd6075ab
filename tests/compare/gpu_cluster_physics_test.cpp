// Cluster moves on the GPU against Kaufman's exact solution of the finite 2D Ising model
// (tests/support/kaufman.hpp) at the critical coupling: the energy per site to an error of
// 1e-4 or less, and the specific heat c = beta^2 V (<e^2> - <e>^2), for Swendsen-Wang and
// Wolff on the byte storage and Swendsen-Wang on the multi-spin-coded one, at L = 64 and 128.
//
// Many replicas (each an independent chain from a hot start) make the errors: the mean and the
// variance pool every replica's measurements, and their errors are jackknife errors over the
// replicas, so they hold whatever the autocorrelations. Each case measures every sweep until the
// energy's error is at most 1e-4 (checked every kChunk sweeps; stopping on the error biases
// nothing measurable), within a wall-clock cap, and prints the errors it reached, the sweeps and
// the time. Reaching 1e-4 takes about (c / beta^2) 2 tau_int(e) / 1e-8 site updates, some
// 1.5e10 for Swendsen-Wang (tau_int(e) about 5 sweeps at these sizes): 15 s at 1e9 updates/s.
//
// What a case can see: Swendsen-Wang or Wolff with a bond probability p' samples the Ising
// model at the beta' with 1 - exp(-2 beta') = p', so a relative error d in p moves beta by
// 0.71 d at beta_c and e by (c / beta^2) 0.71 d: four errors (4e-4) are d = 5e-5 at L = 64 and
// 4e-5 at L = 128. The specific heat's error is about 0.3 % of c.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/support/kaufman.hpp"
#include "tests/support/settings.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

constexpr double kEnergyErrorTarget = 1e-4;
constexpr int64_t kThermalization = 300;  ///< sweeps from the hot start (tau_int(e) ~ 5)
constexpr int64_t kChunk = 500;           ///< sweeps between checks of the error
constexpr double kWallCapSeconds = 120;   ///< per case, after which it reports what it reached

struct GpuClusterCase {
  const char* name;
  int64_t length;
  UpdateAlgorithm algorithm;
  int wolff_clusters;
  bool multispin;
  int replicas;
};

std::ostream& operator<<(std::ostream& os, const GpuClusterCase& c) { return os << c.name; }

class GpuClusterPhysics : public ::testing::TestWithParam<GpuClusterCase> {};

/// Adds every replica's measurements of observable 0 (the energy) to its Moments.
void add_energies(Engine& engine, double shift, std::vector<Moments>& replicas) {
  MeasurementBatch batch;
  engine.collect(batch);
  const size_t observables = engine.observable_names().size();
  for (int64_t k = 0; k < batch.count; ++k) {
    for (size_t r = 0; r < replicas.size(); ++r) {
      const double d =
          batch.values[(static_cast<size_t>(k) * replicas.size() + r) * observables] - shift;
      replicas[r].count += 1;
      replicas[r].sum += d;
      replicas[r].squares += d * d;
    }
  }
}

TEST_P(GpuClusterPhysics, EnergyAndSpecificHeatMatchKaufman) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const GpuClusterCase& c = GetParam();
  const double beta = ising_critical_beta();
  EngineSettings s = ising2d_cluster_settings(c.length, beta, c.algorithm, c.wolff_clusters);
  s.multispin = c.multispin;
  s.replicas = c.replicas;
  // Wolff from a hot start equilibrates slowly: the clusters of a random configuration hold a
  // few sites, so 300 passes of 3 left L = 128 far from equilibrium (e off by 14 errors on an
  // H100). From all +1 the first cluster percolates at beta_c and the chain relaxes at once.
  s.start = c.algorithm == UpdateAlgorithm::wolff ? InitialState::cold : InitialState::hot;
  s.seed = 0x6b61756dULL + static_cast<uint64_t>(c.length) * 7 + (c.multispin ? 1 : 0);
  ASSERT_EQ(uses_packed_ising(s), c.multispin);
  auto engine = make_cuda_engine(s);
  const KaufmanIsing exact = kaufman_ising(c.length, c.length, beta);
  const double volume = static_cast<double>(c.length * c.length);

  const auto start = std::chrono::steady_clock::now();
  engine->initialize();
  engine->sweep(0, kThermalization);
  uint64_t sweep = kThermalization;
  std::vector<Moments> replicas(static_cast<size_t>(c.replicas));
  MeanAndVariance e{};
  double seconds = 0;
  while (true) {
    for (int64_t m = 0; m < kChunk; ++m) {
      engine->sweep_and_measure(sweep++, 1);
      if (engine->queued() == s.measurement_capacity) add_energies(*engine, exact.energy, replicas);
    }
    add_energies(*engine, exact.energy, replicas);
    e = jackknife_moments(replicas, exact.energy);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (e.mean.error <= kEnergyErrorTarget || seconds > kWallCapSeconds) break;
  }
  const Estimate heat{beta * beta * volume * e.variance.mean,
                      beta * beta * volume * e.variance.error};
  const double updates = static_cast<double>(sweep) * c.replicas * volume *
                         (c.algorithm == UpdateAlgorithm::wolff ? c.wolff_clusters : 1);
  std::printf(
      "[ kaufman  ] %s: e = %.7f +- %.7f (exact %.7f, z = %.2f), c = %.4f +- %.4f (exact "
      "%.4f, z = %.2f); %d replicas x %llu sweeps in %.1f s (%.2f site labellings/ns)\n",
      c.name, e.mean.mean, e.mean.error, exact.energy, z_score(e.mean, exact.energy), heat.mean,
      heat.error, exact.specific_heat, z_score(heat, exact.specific_heat), c.replicas,
      static_cast<unsigned long long>(sweep - kThermalization), seconds, updates / seconds * 1e-9);
  EXPECT_LT(std::fabs(z_score(e.mean, exact.energy)), 4.0)
      << "energy " << e.mean.mean << " +- " << e.mean.error << ", exact " << exact.energy;
  EXPECT_LT(std::fabs(z_score(heat, exact.specific_heat)), 4.0)
      << "specific heat " << heat.mean << " +- " << heat.error << ", exact " << exact.specific_heat;
  EXPECT_LE(e.mean.error, kEnergyErrorTarget)
      << "the energy's error did not reach its target within " << kWallCapSeconds << " s";
}

// Replicas x V = 2^21 sites for Swendsen-Wang; fewer replicas for Wolff, whose pass takes
// wolff_clusters whole-lattice labellings (a cluster holds <m^2> V sites on average, about
// 1.09 L^-1/4 V: 0.39 V at L = 64 and 0.32 V at 128, so a pass of 3 flips about V sites).
INSTANTIATE_TEST_SUITE_P(
    Critical2d, GpuClusterPhysics,
    ::testing::Values(
        GpuClusterCase{"SwendsenWang64", 64, UpdateAlgorithm::swendsen_wang, 1, false, 512},
        GpuClusterCase{"SwendsenWang128", 128, UpdateAlgorithm::swendsen_wang, 1, false, 128},
        GpuClusterCase{"Wolff64", 64, UpdateAlgorithm::wolff, 3, false, 256},
        GpuClusterCase{"Wolff128", 128, UpdateAlgorithm::wolff, 3, false, 64},
        GpuClusterCase{"SwendsenWangMultispin64", 64, UpdateAlgorithm::swendsen_wang, 1, true, 512},
        GpuClusterCase{"SwendsenWangMultispin128", 128, UpdateAlgorithm::swendsen_wang, 1, true,
                       128}),
    [](const ::testing::TestParamInfo<GpuClusterCase>& info) { return info.param.name; });

}  // namespace
}  // namespace lattica::test
