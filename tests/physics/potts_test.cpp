// The q-state Potts model on the CPU reference backend against exact enumeration, the q = 2
// Potts model against the Ising model at beta_Potts = 2 beta_Ising, and the 1D Ising ring
// against its closed form.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/exact_ising.hpp"
#include "tests/support/exact_potts.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

EngineSettings potts(std::vector<int64_t> dims, int q, double beta, double h, UpdateAlgorithm a) {
  EngineSettings s;
  s.model = ModelKind::potts;
  s.q = q;
  s.dims = std::move(dims);
  s.beta = beta;
  s.field = h;
  s.sequence = {a};
  s.seed = 2718;
  s.cpu_threads = 1;
  return s;
}

void check_potts_exact(const EngineSettings& s) {
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 1000, 200000, 1);  // energy, |M|, Re M, Im M
  const ExactPotts exact = exact_potts(s.dims, s.q, s.beta, s.field);
  const double v = static_cast<double>(engine->volume());
  expect_z(series[0], exact.energy, "energy");
  expect_z(map(series[1], [](double m) { return m * m; }), exact.magnetization_squared, "|M|^2");
  expect_z(series[2], exact.magnetization_re, "Re M");
  // Every reasonably likely value of the bond sum B = -(E + h N_0) ... at h = 0, B = -E V.
  if (s.field == 0.0) {
    int levels = 0;
    for (const auto& [bonds, p] : exact.bond_distribution) {
      if (p < 2e-3) continue;
      const auto indicator = map(
          series[0], [&, b = bonds](double e) { return std::llround(-e * v) == b ? 1.0 : 0.0; });
      expect_z(indicator, p, ("P(B = " + std::to_string(bonds) + ")").c_str());
      ++levels;
    }
    EXPECT_GE(levels, 3);
  }
}

TEST(PottsExact, Q3Square4x2Metropolis) {
  check_potts_exact(potts({4, 2}, 3, 0.8, 0.0, UpdateAlgorithm::metropolis));
}
TEST(PottsExact, Q3Square4x2HeatBath) {
  check_potts_exact(potts({4, 2}, 3, 0.8, 0.0, UpdateAlgorithm::heatbath));
}
TEST(PottsExact, Q3Square6x2InFieldBothAlgorithms) {
  check_potts_exact(potts({6, 2}, 3, 0.6, 0.3, UpdateAlgorithm::metropolis));
  check_potts_exact(potts({6, 2}, 3, 0.6, -0.2, UpdateAlgorithm::heatbath));
}
TEST(PottsExact, Q3Cube2x2x2) {
  check_potts_exact(potts({2, 2, 2}, 3, 0.5, 0.0, UpdateAlgorithm::heatbath));
  check_potts_exact(potts({2, 2, 2}, 3, 0.5, 0.0, UpdateAlgorithm::metropolis));
}
TEST(PottsExact, Q5Ring8HeatBath) {
  check_potts_exact(potts({8}, 5, 1.2, 0.1, UpdateAlgorithm::heatbath));
}

TEST(PottsExact, OracleQ2EqualsIsingOracle) {
  // delta(s, s') = (1 + sigma sigma') / 2: e_Potts = (e_Ising - d) / 2 at beta_P = 2 beta_I.
  const ExactPotts p = exact_potts({4, 2}, 2, 0.8, 0.0);
  const ExactIsing i = exact_ising({4, 2}, 0.4, 0.0);
  EXPECT_NEAR(p.energy, (i.energy - 2) / 2, 1e-12);
  EXPECT_NEAR(p.magnetization_squared, i.magnetization_squared, 1e-12);
}

TEST(PottsIsing, Q2AtTwiceBetaIsOnsagerIsing) {
  // 2D, L = 64, beta_Ising = 0.3: Onsager's energy per site through e_P = (e_I - 2) / 2.
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    EngineSettings s = potts({64, 64}, 2, 0.6, 0.0, a);
    s.cpu_threads = 0;
    auto engine = make_cpu_engine(s);
    const auto series = sample(*engine, 2000, 20000, 1);
    expect_z(series[0], (-0.70449907083245 - 2) / 2, "q = 2 energy at beta_P = 0.6");
  }
}

TEST(IsingRing, ClosedFormFiniteRing) {
  // 1D Ising ring of L sites at h = 0: <E>/L = -(t + t^(L-1)) / (1 + t^L), t = tanh(beta).
  EngineSettings s;
  s.dims = {16};
  s.beta = 0.7;
  s.sequence = {UpdateAlgorithm::heatbath};
  s.seed = 5;
  s.cpu_threads = 1;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 1000, 200000, 1);
  const double t = std::tanh(0.7);
  expect_z(series[0], -(t + std::pow(t, 15)) / (1 + std::pow(t, 16)), "1D ring energy");
  const ExactIsing exact = exact_ising({16}, 0.7, 0.0);
  expect_z(map(series[1], [](double m) { return m * m; }), exact.magnetization_squared, "m^2");
}

TEST(IsingRing, MetropolisAtZeroFieldAgainstEnumeration) {
  // With dE = 0 moves accepted for certain, checkerboard Metropolis moved the walls of a ring
  // deterministically and conserved their drift: not ergodic. Accepted with 15/16, it is.
  EngineSettings s;
  s.dims = {12};
  s.beta = 0.6;
  s.seed = 8;
  s.cpu_threads = 1;
  for (int q : {0, 2}) {  // Ising, then Potts with q = 2 (energy (E_Ising - 2 V / 2) / 2 per site)
    if (q) {
      s.model = ModelKind::potts;
      s.q = q;
      s.beta = 1.2;  // beta_Potts = 2 beta_Ising
    }
    auto engine = make_cpu_engine(s);
    const auto series = sample(*engine, 1000, 200000, 1);
    const ExactIsing exact = exact_ising({12}, 0.6, 0.0);
    expect_z(series[0], q ? (exact.energy - 1.0) / 2 : exact.energy, "1D ring energy, h = 0");
    if (!q)
      expect_z(map(series[1], [](double m) { return m * m; }), exact.magnetization_squared, "m^2");
  }
}

TEST(IsingRing, MetropolisInFieldAgainstEnumeration) {
  EngineSettings s;
  s.dims = {12};
  s.beta = 0.6;
  s.field = 0.25;
  s.seed = 6;
  s.cpu_threads = 1;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 1000, 200000, 1);
  const ExactIsing exact = exact_ising({12}, 0.6, 0.25);
  expect_z(series[0], exact.energy, "1D ring energy in a field");
  expect_z(series[1], exact.magnetization, "1D ring magnetization in a field");
}

TEST(PottsThreads, ChainDoesNotDependOnThreads) {
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    EngineSettings s = potts({24, 18, 6}, 7, 0.9, 0.05, a);
    std::vector<std::vector<double>> reference;
    std::vector<int8_t> reference_config;
    for (int threads : {1, 2, 3}) {
      s.cpu_threads = threads;
      auto engine = make_cpu_engine(s);
      const auto series = sample(*engine, 10, 20, 3);
      std::vector<int8_t> config(static_cast<size_t>(engine->volume()));
      engine->configuration(config.data());
      if (threads == 1) {
        reference = series;
        reference_config = config;
      } else {
        EXPECT_EQ(series, reference) << threads << " threads";
        EXPECT_EQ(config, reference_config) << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace lattica::test
