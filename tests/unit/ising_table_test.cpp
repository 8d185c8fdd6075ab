// The fixed-point transition tables against the textbook probabilities.

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/models/ising.hpp"

namespace lattica {
namespace {

double probability(uint64_t threshold) { return std::ldexp(static_cast<double>(threshold), -32); }

TEST(IsingTable, MetropolisProbabilities) {
  const double beta = 0.37, h = 0.21;
  for (int d = 1; d <= 4; ++d) {
    const IsingParams p = make_ising_params(d, beta, h, 1);
    for (int k = 0; k <= 2 * d; ++k) {
      const double field = 2 * k - 2 * d + h;
      for (int up = 0; up < 2; ++up) {
        const int s = up ? 1 : -1;
        const double flip = std::min(1.0, std::exp(-2 * beta * s * field));
        const double want_up = up ? 1 - flip : flip;
        EXPECT_NEAR(probability(p.up_threshold[0][up][k]), want_up, 1e-9)
            << d << " " << k << " " << up;
      }
    }
  }
}

TEST(IsingTable, HeatBathProbabilities) {
  const double beta = 0.6, h = -0.4;
  const IsingParams p = make_ising_params(3, beta, h, 1);
  for (int k = 0; k <= 6; ++k) {
    const double field = 2 * k - 6 + h;
    const double want = std::exp(beta * field) / (std::exp(beta * field) + std::exp(-beta * field));
    EXPECT_NEAR(probability(p.up_threshold[1][0][k]), want, 1e-9);
    EXPECT_EQ(p.up_threshold[1][0][k], p.up_threshold[1][1][k]);  // independent of the old spin
  }
}

TEST(IsingTable, CertainMovesNeedNoRandomNumber) {
  // Metropolis at h = 0: a move that does not raise the energy is accepted with certainty.
  const IsingParams p = make_ising_params(2, 0.44, 0.0, 1);
  for (int k = 0; k <= 2; ++k) EXPECT_EQ(p.up_threshold[0][1][k], 0u) << k;  // +1 in field <= 0 flips
  for (int k = 2; k <= 4; ++k)
    EXPECT_EQ(p.up_threshold[0][0][k], kThresholdOne) << k;  // -1 in field >= 0 flips
  // ising_new_spin returns the certain outcome without drawing a random word.
  SiteRandom random(5, RngStream::site_update, 7, 123, update_step(456, 0, 0));
  EXPECT_EQ(ising_new_spin<2>(p, UpdateAlgorithm::metropolis, 1, -4, random), -1);
  EXPECT_EQ(ising_new_spin<2>(p, UpdateAlgorithm::metropolis, -1, 4, random), 1);
  EXPECT_EQ(random.blocks_drawn(), 0u);
}

TEST(IsingTable, InfiniteTemperatureIsFairCoin) {
  const IsingParams p = make_ising_params(2, 0.0, 0.0, 1);
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(p.up_threshold[1][0][k], uint64_t(1) << 31);
}

}  // namespace
}  // namespace lattica
