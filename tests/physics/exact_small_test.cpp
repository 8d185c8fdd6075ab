// Tiny lattices on the CPU reference backend against exact enumeration of all 2^V states:
// mean energy, magnetization, <m^2> and the full distribution of the bond sum.

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/support/exact_ising.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct SmallCase {
  std::vector<int64_t> dims;
  double beta;
  double h;
  UpdateAlgorithm algorithm;
};

void check_against_exact(const SmallCase& c, int64_t measurements = 200000) {
  EngineSettings s;
  s.dims = c.dims;
  s.beta = c.beta;
  s.field = c.h;
  s.sequence = {c.algorithm};
  s.seed = 4243;
  s.cpu_threads = 1;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 1000, measurements, 1);
  const ExactIsing exact = exact_ising(c.dims, c.beta, c.h);
  const double volume = static_cast<double>(engine->volume());

  const Estimate e = binned_estimate(series[0]);
  EXPECT_LT(std::fabs(z_score(e, exact.energy)), 4.0)
      << "energy " << e.mean << " +- " << e.error << " exact " << exact.energy;
  const Estimate m = binned_estimate(series[1]);
  EXPECT_LT(std::fabs(z_score(m, exact.magnetization)), 4.0)
      << "m " << m.mean << " +- " << m.error << " exact " << exact.magnetization;
  const Estimate m2 = binned_estimate(map(series[1], [](double x) { return x * x; }));
  EXPECT_LT(std::fabs(z_score(m2, exact.magnetization_squared)), 4.0)
      << "m^2 " << m2.mean << " +- " << m2.error << " exact " << exact.magnetization_squared;

  // Histogram of the bond sum B = -(E + h M): every level with probability above 0.2 %.
  std::vector<int> bonds(series[0].size());
  for (size_t k = 0; k < bonds.size(); ++k) {
    bonds[k] = static_cast<int>(std::llround(-series[0][k] * volume - c.h * series[1][k] * volume));
  }
  int levels = 0;
  for (const auto& [level, probability] : exact.bond_distribution) {
    if (probability < 2e-3) continue;
    std::vector<double> indicator(bonds.size());
    for (size_t k = 0; k < bonds.size(); ++k) indicator[k] = bonds[k] == level ? 1.0 : 0.0;
    const Estimate f = binned_estimate(indicator);
    EXPECT_LT(std::fabs(z_score(f, probability)), 4.0)
        << "P(B = " << level << ") " << f.mean << " +- " << f.error << " exact " << probability;
    ++levels;
  }
  EXPECT_GE(levels, 3);
}

TEST(ExactSmall, Ising2dL4Metropolis) {
  check_against_exact({{4, 4}, 0.4, 0.0, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising2dL4HeatBath) {
  check_against_exact({{4, 4}, 0.4, 0.0, UpdateAlgorithm::heatbath});
}
TEST(ExactSmall, Ising2dL4MetropolisInField) {
  check_against_exact({{4, 4}, 0.3, 0.2, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising2dL4HeatBathInField) {
  check_against_exact({{4, 4}, 0.3, -0.15, UpdateAlgorithm::heatbath});
}
TEST(ExactSmall, Ising2dRectangular6x2) {
  check_against_exact({{6, 2}, 0.5, 0.0, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising3d4x2x2Metropolis) {
  check_against_exact({{4, 2, 2}, 0.2, 0.0, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising3d4x2x2HeatBath) {
  check_against_exact({{4, 2, 2}, 0.2, 0.05, UpdateAlgorithm::heatbath});
}
TEST(ExactSmall, Ising3d2x2x2Metropolis) {
  check_against_exact({{2, 2, 2}, 0.25, 0.0, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising4d2x2x2x2Metropolis) {
  check_against_exact({{2, 2, 2, 2}, 0.12, 0.0, UpdateAlgorithm::metropolis});
}
TEST(ExactSmall, Ising4d2x2x2x2HeatBath) {
  check_against_exact({{2, 2, 2, 2}, 0.12, 0.1, UpdateAlgorithm::heatbath});
}

TEST(ExactSmall, OracleInfiniteTemperatureLimit) {
  // The oracle itself: at beta = 0 every state is equally likely, so <E> = 0 and <m^2> = 1/V.
  const ExactIsing ex = exact_ising({4, 4}, 0.0, 0.0);
  EXPECT_NEAR(ex.energy, 0.0, 1e-12);
  EXPECT_NEAR(ex.magnetization_squared, 1.0 / 16, 1e-12);
}

}  // namespace
}  // namespace lattica::test
