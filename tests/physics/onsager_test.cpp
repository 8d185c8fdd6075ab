// 2D Ising at L = 64 on the CPU reference backend against the exact infinite-lattice values:
// Onsager's energy per site and Yang's spontaneous magnetization (design.md section 9).
// At these couplings the correlation length is about one lattice spacing, so finite-size
// corrections at L = 64 are far below the statistical errors.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

constexpr double kOnsagerEnergyBeta03 = -0.70449907083245;
constexpr double kOnsagerEnergyBeta06 = -1.9090861776841;
constexpr double kYangMagnetizationBeta06 = 0.9736086674403;

std::vector<std::vector<double>> run_l64(double beta, UpdateAlgorithm algorithm,
                                         InitialState start) {
  EngineSettings s;
  s.dims = {64, 64};
  s.beta = beta;
  s.sequence = {algorithm};
  s.start = start;
  s.seed = 977;
  auto engine = make_cpu_engine(s);
  return sample(*engine, 2000, 20000, 1);
}

void expect_close(const std::vector<double>& series, double exact, const char* what) {
  const Estimate e = binned_estimate(series);
  EXPECT_LT(std::fabs(z_score(e, exact)), 4.0)
      << what << ": " << e.mean << " +- " << e.error << ", exact " << exact;
  EXPECT_LT(e.error, 2e-3) << what << ": the test would be too weak";
}

TEST(Onsager, HighTemperatureMetropolis) {
  const auto s = run_l64(0.3, UpdateAlgorithm::metropolis, InitialState::hot);
  expect_close(s[0], kOnsagerEnergyBeta03, "energy at beta 0.3");
}

TEST(Onsager, HighTemperatureHeatBath) {
  const auto s = run_l64(0.3, UpdateAlgorithm::heatbath, InitialState::hot);
  expect_close(s[0], kOnsagerEnergyBeta03, "energy at beta 0.3");
}

TEST(Onsager, LowTemperatureMetropolis) {
  const auto s = run_l64(0.6, UpdateAlgorithm::metropolis, InitialState::cold);
  expect_close(s[0], kOnsagerEnergyBeta06, "energy at beta 0.6");
  expect_close(map(s[1], [](double m) { return std::fabs(m); }), kYangMagnetizationBeta06,
               "|m| at beta 0.6");
}

TEST(Onsager, LowTemperatureHeatBath) {
  const auto s = run_l64(0.6, UpdateAlgorithm::heatbath, InitialState::cold);
  expect_close(s[0], kOnsagerEnergyBeta06, "energy at beta 0.6");
  expect_close(map(s[1], [](double m) { return std::fabs(m); }), kYangMagnetizationBeta06,
               "|m| at beta 0.6");
}

}  // namespace
}  // namespace lattica::test
