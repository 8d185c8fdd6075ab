#pragma once
// Many replicas from hot starts on 4x4 at the 2D critical coupling against exact enumeration,
// on either backend. Checkerboard Metropolis that accepted dE = 0 moves for certain trapped 36
// of every 65536 hot starts in two-state cycles at E = 0 (tests/physics/ergodicity_test.cpp):
// a bias of +8.6e-4 in the energy per site, and +5.5e-4 in P(E = 0), that no number of sweeps
// removes. Errors come from the spread of replica means (independent chains).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/support/exact_ising.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {

constexpr double kBetaC2d = 0.44068679350977151;

inline EngineSettings hot_start_4x4(UpdateAlgorithm algorithm, int replicas) {
  EngineSettings s;
  s.dims = {4, 4};
  s.beta = kBetaC2d;
  s.sequence = {algorithm};
  s.replicas = replicas;
  s.seed = 0x4a4a;
  s.measurement_capacity = kSampleBatch;
  return s;
}

/// Runs the engine (made from hot_start_4x4) and expects the exact energy per site and the
/// exact probability of E = 0 within 4 errors, the energy's error below `max_energy_error`.
inline void expect_exact_hot_start(Engine& engine, int64_t measurements, double max_energy_error) {
  const double volume = 16;
  const std::vector<ReplicaAverage> a = replica_averages(
      engine, 100, measurements,
      {[](const double* o) { return o[0]; },
       [&](const double* o) { return std::llround(o[0] * volume) == 0 ? 1.0 : 0.0; }});
  const ExactIsing exact = exact_ising({4, 4}, kBetaC2d, 0.0);
  const double exact_e0 = exact.bond_distribution.at(0);
  std::printf(
      "[ estimate ] %d replicas x %lld measurements: e = %.7f +- %.7f (exact %.7f, "
      "z = %+.2f); P(E = 0) = %.6f +- %.6f (exact %.6f, z = %+.2f)\n",
      engine.replicas(), static_cast<long long>(measurements), a[0].mean, a[0].error, exact.energy,
      (a[0].mean - exact.energy) / a[0].error, a[1].mean, a[1].error, exact_e0,
      (a[1].mean - exact_e0) / a[1].error);
  EXPECT_LT(a[0].error, max_energy_error) << "too few samples";
  EXPECT_LT(std::fabs(a[0].mean - exact.energy), 4 * a[0].error)
      << "energy " << a[0].mean << " +- " << a[0].error << " from " << a[0].samples
      << " samples of " << engine.replicas() << " replicas, exact " << exact.energy;
  EXPECT_LT(std::fabs(a[1].mean - exact_e0), 4 * a[1].error)
      << "P(E = 0) " << a[1].mean << " +- " << a[1].error << ", exact " << exact_e0;
}

}  // namespace lattica::test
