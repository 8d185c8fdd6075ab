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
    for (int a = 0; a <= 2 * d; ++a) {
      for (int up = 0; up < 2; ++up) {
        const int s = up ? 1 : -1;
        const double field = s * (2 * d - 2 * a) + h;  // n + h with a anti-aligned neighbours
        const double flip = field == 0 ? 15.0 / 16 : std::min(1.0, std::exp(-2 * beta * s * field));
        EXPECT_NEAR(probability(p.flip_threshold[0][up][a]), flip, 1e-9)
            << d << " " << a << " " << up;
      }
    }
  }
}

TEST(IsingTable, HeatBathProbabilities) {
  const double beta = 0.6, h = -0.4;
  const IsingParams p = make_ising_params(3, beta, h, 1);
  for (int a = 0; a <= 6; ++a) {
    for (int up = 0; up < 2; ++up) {
      const int s = up ? 1 : -1;
      const double field = s * (6 - 2 * a) + h;
      const double p_up =
          std::exp(beta * field) / (std::exp(beta * field) + std::exp(-beta * field));
      EXPECT_NEAR(probability(p.flip_threshold[1][up][a]), up ? 1 - p_up : p_up, 1e-9);
    }
  }
}

TEST(IsingTable, CertainMovesNeedNoRandomNumber) {
  // Metropolis at h = 0: a move that lowers the energy (a > d anti-aligned neighbours) is
  // accepted with certainty, for either spin; one that keeps it (a = d) with probability 15/16.
  const IsingParams p = make_ising_params(2, 0.44, 0.0, 1);
  for (int a = 3; a <= 4; ++a) {
    EXPECT_EQ(p.flip_threshold[0][0][a], kThresholdOne) << a;
    EXPECT_EQ(p.flip_threshold[0][1][a], kThresholdOne) << a;
  }
  EXPECT_EQ(p.flip_threshold[0][0][2], kThresholdOne / 16 * 15);
  EXPECT_EQ(p.flip_threshold[0][1][2], kThresholdOne / 16 * 15);
  // ising_new_spin returns the certain outcome without drawing a random word.
  LaneRandom random(SiteRandom(5, RngStream::site_update, 7, 123, update_step(456, 0, 0)), 3);
  EXPECT_EQ(ising_new_spin<2>(p, UpdateAlgorithm::metropolis, 1, -4, random), -1);
  EXPECT_EQ(ising_new_spin<2>(p, UpdateAlgorithm::metropolis, -1, 4, random), 1);
  EXPECT_EQ(ising_new_spin<2>(p, UpdateAlgorithm::metropolis, 1, -2, random), -1);
  EXPECT_EQ(random.blocks_drawn(), 0u);
}

TEST(IsingTable, InfiniteTemperature) {
  // The heat bath draws every spin afresh; Metropolis flips it with its dE = 0 acceptance, 15/16
  // (never for certain: that would make the chain deterministic), whatever the field.
  for (double h : {0.0, 0.7}) {
    const IsingParams p = make_ising_params(2, 0.0, h, 1);
    for (int up = 0; up < 2; ++up) {
      for (int a = 0; a <= 4; ++a) {
        EXPECT_EQ(p.flip_threshold[1][up][a], uint64_t(1) << 31) << h << a;
        EXPECT_EQ(p.flip_threshold[0][up][a], kThresholdOne / 16 * 15) << h << a;
      }
    }
  }
}

TEST(IsingTable, PossibleMovesStayUncertainAtAnyFiniteBeta) {
  // Rounding to 32 bits must not make a move the weights allow impossible (tiny e^-x at large
  // beta) or certain (e^-x within 2^-33 of 1 at tiny beta): that would split the chain.
  for (double beta : {1e-14, 1e-11, 30.0, 1e6}) {
    for (double h : {0.0, 0.3}) {
      const IsingParams p = make_ising_params(3, beta, h, 1);
      for (int up = 0; up < 2; ++up) {
        for (int a = 0; a <= 6; ++a) {
          const int s = up ? 1 : -1;
          const double uphill = (6 - 2 * a) + s * h;  // dE / 2 = s (n + h), s n = 2d - 2a
          EXPECT_GE(p.flip_threshold[1][up][a], 1u) << beta << " " << a;
          EXPECT_LT(p.flip_threshold[1][up][a], kThresholdOne) << beta << " " << a;
          if (uphill > 0) {
            EXPECT_GE(p.flip_threshold[0][up][a], 1u) << beta << " " << a;
            EXPECT_LT(p.flip_threshold[0][up][a], kThresholdOne) << beta << " " << a;
          }
        }
      }
    }
  }
}

// ---- the bit-sliced random words ----

/// The word u that LaneRandom compares, assembled from all 32 of the group's words.
uint32_t lane_word(const SiteRandom& group, int lane) {
  SiteRandom g = group;
  uint32_t u = 0;
  for (int bit = 31; bit >= 0; --bit) u |= ((g.next() >> lane) & 1u) << bit;
  return u;
}

TEST(LaneRandom, BelowIsTheIntegerComparisonOfTheAssembledWord) {
  int decided_in_first_block = 0, trials = 0;
  for (uint64_t group = 0; group < 64; ++group) {
    const SiteRandom stream(77, RngStream::site_update, 2, 1000 * group, update_step(9, 1, 0));
    for (int lane = 0; lane < 32; ++lane) {
      const uint32_t u = lane_word(stream, lane);
      // Thresholds around u (ties and neighbours) and across the range.
      for (uint32_t t : {u, u + 1, u - 1, 0u, 1u, 0x80000000u, 0xFFFFFFFFu, u ^ 0x10000u,
                         static_cast<uint32_t>(group * 0x9E3779B9u)}) {
        LaneRandom random(stream, lane);
        EXPECT_EQ(random.below(t), u < t) << group << " " << lane << " " << t;
        decided_in_first_block += random.blocks_drawn() == 1;
        ++trials;
      }
    }
  }
  // Most comparisons stop within the first 4 bits; ties (t = u) draw all 8 blocks.
  EXPECT_GT(decided_in_first_block, trials / 2);
}

TEST(LaneRandom, LanesAreIndependentUniformBits) {
  // Each lane's word is uniform: its top bit is set half the time, and distinct lanes of one
  // group disagree on it half the time.
  long long top = 0, disagree = 0, n = 0;
  for (uint64_t group = 0; group < 4000; ++group) {
    const SiteRandom stream(5, RngStream::site_update, 0, 64 * group, update_step(3, 0, 0));
    for (int lane = 0; lane < 32; ++lane) {
      const uint32_t u = lane_word(stream, lane);
      const uint32_t v = lane_word(stream, (lane + 1) % 32);
      top += u >> 31;
      disagree += (u ^ v) >> 31;
      ++n;
    }
  }
  const double sigma = std::sqrt(0.25 * n);
  EXPECT_LT(std::fabs(top - 0.5 * n), 5 * sigma);
  EXPECT_LT(std::fabs(disagree - 0.5 * n), 5 * sigma);
}

}  // namespace
}  // namespace lattica
