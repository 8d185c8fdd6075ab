// The Kaufman oracle (tests/support/kaufman.hpp) against exact enumeration of small lattices,
// its derivatives against finite differences of its ln Z, and its large-lattice limits against
// Onsager's energy and the known finite-size behaviour at the critical point.

#include "tests/support/kaufman.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/exact_ising.hpp"

namespace lattica::test {
namespace {

// Every state of 4 x 4 (2^16), 2 x 4, 2 x 2 and of 4 x 6 (2^24, two cases: a second each):
// energy, specific heat from <e^2> - <e>^2, and ln Z from the probability of the bond sum's
// top level 2V (its two ground states), ln Z = ln 2 + 2 V K - ln P(2V). The enumeration's sums
// of 2^24 terms round at the 1e-10 level, which the variance's cancellation makes 1e-8 in c;
// 2^16 terms agree to 1e-12. Extents of 2 count each bond twice, in both.
TEST(KaufmanExact, MatchesEnumeration) {
  struct Case {
    std::vector<int64_t> dims;
    std::vector<double> betas;
    double tolerance;
  };
  const double kc = ising_critical_beta();
  const std::vector<double> betas{0.1, 0.3, kc, 0.5, 1.0, 2.0};
  const std::vector<Case> cases{{{4, 4}, betas, 1e-11}, {{2, 4}, betas, 1e-12},
                                {{4, 2}, betas, 1e-12}, {{2, 2}, betas, 1e-12},
                                {{4, 6}, {kc}, 1e-7},   {{6, 4}, {0.5}, 1e-7}};
  for (const Case& c : cases) {
    for (double beta : c.betas) {
      SCOPED_TRACE(std::to_string(c.dims[0]) + " x " + std::to_string(c.dims[1]) +
                   " at beta = " + std::to_string(beta));
      const ExactIsing exact = exact_ising(c.dims, beta, 0.0);
      const KaufmanIsing k = kaufman_ising(c.dims[0], c.dims[1], beta);
      const double volume = static_cast<double>(c.dims[0] * c.dims[1]);
      const double top = exact.bond_distribution.at(static_cast<int>(2 * volume));
      const double log_z = std::log(2.0) + 2 * volume * beta - std::log(top);
      EXPECT_NEAR(k.log_z, log_z, c.tolerance * log_z);
      EXPECT_NEAR(k.energy, exact.energy, c.tolerance);
      const double specific_heat =
          beta * beta * volume * (exact.energy_squared - exact.energy * exact.energy);
      EXPECT_NEAR(k.specific_heat, specific_heat, c.tolerance * 10);
    }
  }
}

// e = -(1/V) d ln Z / dK and c = K^2 / V d^2 ln Z / dK^2 in closed form, against Richardson-
// extrapolated central differences of ln Z (step 1e-4: truncation O(step^4 d^5 ln Z), below
// 1e-9 here, rounding about 1e-16 ln Z / step^2 in c).
TEST(KaufmanExact, DerivativesMatchFiniteDifferences) {
  const double step = 1e-4;
  for (int64_t length : {4, 16, 64, 128}) {
    for (double beta : {0.2, ising_critical_beta(), ising_critical_beta() + 0.003, 0.7}) {
      auto log_z = [&](double b) { return kaufman_ising(length, length, b).log_z; };
      const double f0 = log_z(beta);
      const double f1p = log_z(beta + step), f1m = log_z(beta - step);
      const double f2p = log_z(beta + 2 * step), f2m = log_z(beta - 2 * step);
      const double d1 = (8 * (f1p - f1m) - (f2p - f2m)) / (12 * step);
      const double d2 = (16 * (f1p + f1m) - (f2p + f2m) - 30 * f0) / (12 * step * step);
      const double volume = static_cast<double>(length * length);
      const KaufmanIsing k = kaufman_ising(length, length, beta);
      EXPECT_NEAR(k.energy, -d1 / volume, 1e-9) << "L = " << length << ", beta = " << beta;
      EXPECT_NEAR(k.specific_heat, beta * beta * d2 / volume, 1e-7)
          << "L = " << length << ", beta = " << beta;
    }
  }
}

// Away from the critical point the correlation length is about a lattice spacing, so L = 64
// has Onsager's infinite-lattice energy (the values of tests/physics/onsager_test.cpp) to
// rounding. At beta_c: e = -sqrt 2 + O(1/L) (here (e + sqrt 2) L = -0.622 from L = 16 to 4096
// to 0.3 %), and c = (8/pi) K_c^2 ln L + B_0 + O(ln L / L) with B_0 = 0.1381 (Ferdinand and
// Fisher 1969), approached from below.
TEST(KaufmanExact, InfiniteLatticeLimits) {
  EXPECT_NEAR(kaufman_ising(64, 64, 0.3).energy, -0.70449907083245, 1e-12);
  EXPECT_NEAR(kaufman_ising(64, 64, 0.6).energy, -1.9090861776841, 1e-12);
  const double kc = ising_critical_beta();
  EXPECT_NEAR(kc, 0.44068679350977151, 1e-15);
  const double slope = 8 / 3.14159265358979323846 * kc * kc;
  double previous = 0;
  for (int64_t length : {16, 32, 64, 128, 256, 1024, 4096}) {
    const KaufmanIsing k = kaufman_ising(length, length, kc);
    const double l = static_cast<double>(length);
    EXPECT_NEAR((k.energy + std::sqrt(2.0)) * l, -0.622, 2e-3) << "L = " << length;
    const double offset = k.specific_heat - slope * std::log(l);
    EXPECT_NEAR(offset, 0.1381, 0.012) << "L = " << length;
    EXPECT_GT(offset, previous) << "L = " << length;  // approaches B_0 from below
    previous = offset;
  }
  EXPECT_NEAR(previous, 0.1381, 1e-4);
}

TEST(KaufmanExact, RefusesOddExtents) {
  EXPECT_THROW(kaufman_ising(3, 4, 0.3), std::invalid_argument);
  EXPECT_THROW(kaufman_ising(4, 4, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace lattica::test
