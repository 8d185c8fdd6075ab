// Population annealing's resampling (kernels/ensemble/population_resampling.hpp) and its
// bookkeeping (sim/run/annealing.hpp): every replica gets R w_r / sum w copies on average,
// exactly for systematic resampling (averaged over its uniform) and within binomial errors for
// multinomial; the population keeps its size; the plan is keyed by (seed, step, population).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ensemble/population_resampling.hpp"
#include "sim/run/annealing.hpp"

namespace lattica {
namespace {

/// ln weights -dbeta E_r of a population with energies spread like a small lattice's.
std::vector<double> log_weights(int n, double dbeta) {
  std::vector<double> log_w;
  for (int r = 0; r < n; ++r) log_w.push_back(-dbeta * (-32.0 + 4.0 * ((r * 7) % 17)));
  return log_w;
}

std::vector<double> expected_copies(const std::vector<double>& log_w) {
  double sum = 0.0;
  for (double l : log_w) sum += std::exp(l);
  std::vector<double> tau;
  for (double l : log_w) tau.push_back(static_cast<double>(log_w.size()) * std::exp(l) / sum);
  return tau;
}

std::vector<int> copies(const std::vector<int32_t>& source, size_t n) {
  std::vector<int> count(n, 0);
  for (int32_t s : source) ++count[static_cast<size_t>(s)];
  return count;
}

TEST(PopulationResampling, SystematicGivesFloorOrCeilAndExactMeanOverItsUniform) {
  const std::vector<double> log_w = log_weights(37, 0.3);
  const std::vector<double> tau = expected_copies(log_w);
  const RelativeWeights weights = relative_weights(log_w.data(), 37);
  constexpr int kPoints = 1 << 14;  // midpoints of [0, 1): the mean over u to 2 / kPoints
  std::vector<double> mean(tau.size(), 0.0);
  std::vector<int32_t> source(tau.size());
  for (int j = 0; j < kPoints; ++j) {
    systematic_sources(weights, (j + 0.5) / kPoints, source.data());
    const std::vector<int> n = copies(source, tau.size());
    for (size_t r = 0; r < tau.size(); ++r) {
      ASSERT_TRUE(n[r] == std::floor(tau[r]) || n[r] == std::ceil(tau[r]))
          << "replica " << r << ": " << n[r] << " copies, expected " << tau[r];
      mean[r] += static_cast<double>(n[r]) / kPoints;
    }
  }
  for (size_t r = 0; r < tau.size(); ++r)
    EXPECT_NEAR(mean[r], tau[r], 2.0 / kPoints + 1e-12) << "replica " << r;
}

TEST(PopulationResampling, MultinomialMeanIsTheExpectedCopiesWithinBinomialErrors) {
  const std::vector<double> log_w = log_weights(23, 0.2);
  const std::vector<double> tau = expected_copies(log_w);
  const RelativeWeights weights = relative_weights(log_w.data(), 23);
  constexpr int kSteps = 20000;
  std::vector<double> mean(tau.size(), 0.0);
  std::vector<int32_t> source(tau.size());
  for (int step = 1; step <= kSteps; ++step) {
    multinomial_sources(weights, 77, static_cast<uint64_t>(step), 3, source.data());
    const std::vector<int> n = copies(source, tau.size());
    for (size_t r = 0; r < tau.size(); ++r) mean[r] += static_cast<double>(n[r]) / kSteps;
  }
  const double size = static_cast<double>(tau.size());
  for (size_t r = 0; r < tau.size(); ++r) {
    const double p = tau[r] / size;
    const double error = std::sqrt(size * p * (1 - p) / kSteps);
    EXPECT_LT(std::fabs(mean[r] - tau[r]), 5 * error) << "replica " << r;
  }
}

TEST(PopulationResampling, WeightsAreALogSumExpThatDoesNotOverflow) {
  const std::vector<double> log_w = {1000.0, 1000.0, 1000.0 + std::log(2.0)};
  const RelativeWeights w = relative_weights(log_w.data(), 3);
  EXPECT_NEAR(w.log_mean(), 1000.0 + std::log(4.0 / 3.0), 1e-12);
  EXPECT_NEAR(w.effective_size(), 16.0 / 6.0, 1e-12);
  // Equal weights: every replica once, in place, whatever the uniform.
  const std::vector<double> equal(5, -3.5);
  std::vector<int32_t> source(5);
  systematic_sources(relative_weights(equal.data(), 5), 0.999999, source.data());
  EXPECT_EQ(source, (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(PopulationResampling, PlanIsKeyedAndStaysWithinEachPopulation) {
  const std::vector<double> log_w = log_weights(48, 0.25);
  for (Resampling method : {Resampling::systematic, Resampling::multinomial}) {
    const ResamplingPlan a = plan_resampling(log_w, 4, method, 9, 5);
    EXPECT_EQ(a.source, plan_resampling(log_w, 4, method, 9, 5).source);
    EXPECT_NE(a.source, plan_resampling(log_w, 4, method, 9, 6).source);
    EXPECT_NE(a.source, plan_resampling(log_w, 4, method, 10, 5).source);
    ASSERT_EQ(a.source.size(), 48u);
    for (size_t i = 0; i < a.source.size(); ++i)
      EXPECT_EQ(a.source[i] / 12, static_cast<int32_t>(i / 12)) << "new replica " << i;
    ASSERT_EQ(a.log_mean.size(), 4u);
    const RelativeWeights second = relative_weights(log_w.data() + 12, 12);
    EXPECT_EQ(a.log_mean[1], second.log_mean());
  }
}

TEST(PopulationResampling, FamilyStatistics) {
  int64_t families = 0;
  double rho_t = 0.0;
  family_statistics({0, 1, 2, 3}, families, rho_t);
  EXPECT_EQ(families, 4);
  EXPECT_EQ(rho_t, 1.0);
  family_statistics({2, 2, 2, 2}, families, rho_t);
  EXPECT_EQ(families, 1);
  EXPECT_EQ(rho_t, 4.0);
  // Two populations of 4: {0, 0, 1, 1} gives 4 (1/4 + 1/4) = 2 and {5, 5, 5, 6} gives
  // 4 (9/16 + 1/16) = 2.5; their mean is 2.25.
  family_statistics({0, 0, 1, 1, 5, 5, 5, 6}, families, rho_t);
  EXPECT_EQ(families, 4);
  EXPECT_DOUBLE_EQ(rho_t, 2.25);
}

}  // namespace
}  // namespace lattica
