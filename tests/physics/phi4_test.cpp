// phi^4 on the CPU reference backend: the free field (lambda = 0) against the exact
// finite-lattice propagator in d = 2 and 3, with and without the linear term, and the large
// lambda limit against the exactly enumerated Ising model at beta = 2 kappa; the embedded
// cluster moves against the free field and, near the 3D critical point, against Metropolis.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/models/phi4.hpp"
#include "tests/support/exact_ising.hpp"
#include "tests/support/settings.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

using Sequence = std::vector<UpdateAlgorithm>;
constexpr UpdateAlgorithm kMetropolis = UpdateAlgorithm::metropolis;
constexpr UpdateAlgorithm kOverrelaxation = UpdateAlgorithm::overrelaxation;
constexpr UpdateAlgorithm kSwendsenWang = UpdateAlgorithm::swendsen_wang;
constexpr UpdateAlgorithm kWolff = UpdateAlgorithm::wolff;

/// The free field S = (1/2) phi M phi - h sum phi with M(p) = 2 - 4 kappa sum_mu cos p_mu on the
/// periodic lattice: <phi_x> = h / M(0), and the connected propagator G(x) = (1/V) sum_p
/// e^{ipx} / M(p). Returns <phi_x^2> and <phi_x phi_{x+e_0}> (summing every momentum).
struct FreeField {
  double phi;
  double phi2;
  double link;
};
FreeField free_field(const std::vector<int64_t>& dims, double kappa, double h) {
  const double two_pi = 6.283185307179586;
  int64_t volume = 1;
  for (int64_t l : dims) volume *= l;
  double g0 = 0, g1 = 0;
  for (int64_t i = 0; i < volume; ++i) {
    int64_t rest = i;
    double cos_sum = 0, cos_first = 0;
    for (int a = static_cast<int>(dims.size()) - 1; a >= 0; --a) {
      const double c = std::cos(two_pi * static_cast<double>(rest % dims[a]) / dims[a]);
      rest /= dims[a];
      cos_sum += c;
      if (a == 0) cos_first = c;
    }
    const double m = 2 - 4 * kappa * cos_sum;
    g0 += 1 / m;
    g1 += cos_first / m;
  }
  const double mean = h / (2 - 4 * kappa * static_cast<double>(dims.size()));
  return {mean, g0 / volume + mean * mean, g1 / volume + mean * mean};
}

void check_free_field(const EngineSettings& s, int64_t measurements, const std::string& what) {
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, measurements, 2);  // phi, |phi|, phi2, phi4, link, S
  const FreeField exact = free_field(s.dims, s.kappa, s.field);
  expect_z(series[0], exact.phi, what + ": <phi>");
  expect_z(series[2], exact.phi2, what + ": <phi^2>");
  expect_z(series[4], exact.link, what + ": <phi_x phi_x+mu>");
  // Gaussian: <phi^4> = 3 G(0)^2 for the connected part at h = 0.
  if (s.field == 0.0) expect_z(series[3], 3 * exact.phi2 * exact.phi2, what + ": <phi^4>");
}

TEST(Phi4Exact, FreeFieldTwoDimensions) {
  check_free_field(phi4_settings({8, 8}, 0.2, 0.0, 0.0, {kMetropolis}, 4), 4000,
                   "d = 2, 4-hit Metropolis");
  check_free_field(phi4_settings({8, 8}, 0.2, 0.0, 0.0, {kMetropolis, kOverrelaxation}, 1), 4000,
                   "d = 2, Metropolis + over-relaxation");
}

TEST(Phi4Exact, FreeFieldThreeDimensions) {
  check_free_field(phi4_settings({6, 6, 6}, 0.14, 0.0, 0.0, {kMetropolis, kOverrelaxation}, 2),
                   3000, "d = 3, Metropolis + over-relaxation");
  check_free_field(phi4_settings({4, 4, 4}, 0.12, 0.0, 0.0, {kMetropolis}, 3), 4000,
                   "d = 3, 3-hit Metropolis");
}

TEST(Phi4Exact, FreeFieldWithLinearTerm) {
  check_free_field(phi4_settings({8, 8}, 0.15, 0.0, 0.3, {kMetropolis, kOverrelaxation}, 2), 4000,
                   "d = 2, h = 0.3");
  check_free_field(phi4_settings({6, 6, 6}, 0.1, 0.0, -0.2, {kMetropolis}, 2), 3000,
                   "d = 3, h = -0.2");
}

TEST(Phi4Exact, FreeFieldInSinglePrecision) {
  check_free_field(
      phi4_settings({8, 8}, 0.2, 0.0, 0.1, {kMetropolis, kOverrelaxation}, 2, Precision::float32),
      4000, "float, d = 2");
}

// Embedded Ising clusters on the signs of phi (flips of same-sign clusters, bonds
// 1 - exp(-4 kappa phi phi'), ghost bonds 1 - exp(-2 h phi)) after Metropolis: the free field
// is exact for them too, with and without the linear term. Metropolis makes most of the moves
// here, so the cluster moves' errors show diluted: errors of 0.5 % in <phi^2>, 1.3 % in the link
// and 3e-3 in <phi> at d = 2, 1.5-3 % at 4^3 (near kappa_c = 1/6, 16 clusters a pass). A bond
// factor 4.4 kappa (10 % off) gives z of 4-5 in each case, 4.04 kappa is not seen; ghost bonds
// 10 % too likely give z = 6.5 in <phi> at d = 2, h = 0.3 (Swendsen-Wang), not seen at 4^3
// (Wolff: its seed clusters of the field's sign mostly stay; tests/physics/on_test.cpp's ring in
// a field sees the ghost bonds under Wolff).
TEST(Phi4Exact, FreeFieldWithClusterMoves) {
  check_free_field(phi4_settings({8, 8}, 0.2, 0.0, 0.0, {kMetropolis, kSwendsenWang}, 2), 4000,
                   "d = 2, Metropolis + Swendsen-Wang");
  check_free_field(phi4_settings({8, 8}, 0.15, 0.0, 0.3, {kMetropolis, kSwendsenWang}, 2), 4000,
                   "d = 2, h = 0.3, Metropolis + Swendsen-Wang");
  EngineSettings s = phi4_settings({4, 4, 4}, 0.14, 0.0, -0.2, {kMetropolis, kWolff}, 1);
  s.wolff_clusters = 16;
  check_free_field(s, 4000, "d = 3, h = -0.2, Metropolis + Wolff");
}

/// phi^4 observables' series: phi, |phi|, phi2, phi4, link, action and m^2.
std::vector<std::vector<double>> phi4_series(const EngineSettings& s, int64_t measurements,
                                             int64_t every) {
  auto engine = make_cpu_engine(s);
  auto series = sample(*engine, 2000, measurements, every);
  series.resize(6);
  series.push_back(map(series[0], [](double m) { return m * m; }));
  return series;
}

// Near the 3D critical point (lambda = 1.1, kappa = 0.1875; kappa_c(1.1) = 0.18754 in the
// literature), L = 8: Metropolis with Swendsen-Wang or Wolff passes samples what Metropolis
// alone does, for every observable (z of the difference with both runs' binned errors below 4),
// at h = 0 and in a field h = 0.05 (ghost bonds). At h = 0 the signed m is compared with 0
// instead: Metropolis alone rarely crosses between the signs (its error there would not hold).
// Metropolis alone is slow here (tau_int of m^2 some hundreds of sweeps), which sets the errors
// of the differences: at h = 0 about 0.15 % of <phi^2>, 0.7 % of the link and the action,
// 1.5 % of <|m|> and 2.5 % of <m^2>; at h = 0.05 about 0.3 % of <m> and <m^2>, 0.4 % of the link.
// A bond factor 4.04 kappa (1 % off) gives z of 6-7 at h = 0 for both, 4-5.5 at h = 0.05 for
// Swendsen-Wang; ghost bonds 10 % too likely give z = 3.8 for Swendsen-Wang. At h = 0.05 Wolff
// sees neither: its seed cluster in the magnetised state is mostly bonded to the ghost and stays.
TEST(Phi4Critical, ClusterMovesAgreeWithMetropolis) {
  const std::vector<std::string> names{"m", "|m|", "phi^2", "phi^4", "link", "action", "m^2"};
  for (double h : {0.0, 0.05}) {
    const auto reference =
        phi4_series(phi4_settings({8, 8, 8}, 0.1875, 1.1, h, {kMetropolis}, 3), 20000, 5);
    for (UpdateAlgorithm cluster : {kSwendsenWang, kWolff}) {
      EngineSettings s = phi4_settings({8, 8, 8}, 0.1875, 1.1, h, {kMetropolis, cluster}, 3);
      s.wolff_clusters = 3;
      const auto series = phi4_series(s, 20000, 1);
      for (size_t o = 0; o < series.size(); ++o) {
        const Estimate b = binned_estimate(series[o]);
        const Estimate a = h == 0 && o == 0 ? Estimate{0.0, 0.0} : binned_estimate(reference[o]);
        const double z = (b.mean - a.mean) / std::hypot(a.error, b.error);
        const std::string what = std::string(cluster == kWolff ? "Wolff" : "Swendsen-Wang") +
                                 ", h = " + std::to_string(h).substr(0, 4) + ", " + names[o];
        std::printf("[ estimate ] %s: %.5f +- %.5f, Metropolis %.5f +- %.5f (z = %.2f)\n",
                    what.c_str(), b.mean, b.error, a.mean, a.error, z);
        EXPECT_LT(std::fabs(z), 4.0) << what;
      }
    }
  }
}

// At large lambda the field sits at +-1 and S -> -2 kappa sum phi phi': the Ising model at
// beta = 2 kappa (corrections O(1/lambda) ~ 1e-4, below the errors). Over-relaxation supplies
// the flips that small Metropolis steps cannot make.
TEST(Phi4Exact, LargeLambdaIsIsing) {
  const std::vector<int64_t> dims{4, 4};
  const double kappa = 0.2, lambda = 1e4;
  const ExactIsing ising = exact_ising(dims, 2 * kappa, 0.0);
  auto engine =
      make_cpu_engine(phi4_settings(dims, kappa, lambda, 0.0, {kMetropolis, kOverrelaxation}, 1));
  const auto series = sample(*engine, 1000, 100000, 1);
  expect_z(series[4], -ising.energy / 2, "<phi phi'> vs Ising <s s'>");
  expect_z(map(series[0], [](double m) { return m * m; }), ising.magnetization_squared,
           "<m^2> vs Ising");
  expect_z(series[1], ising.abs_magnetization, "<|m|> vs Ising");
}

// The accept/reject over-relaxation is exact but not ergodic alone; with lambda = 0 its
// reflection keeps the action and is always accepted.
TEST(Phi4Exact, OverrelaxationReflectionAtLambdaZeroKeepsTheAction) {
  using Model = Phi4Model<double>;
  const Phi4Params p{3, 0.2, 0.0, 0.1, 1.0, 1, 2};
  const double nb[4] = {0.3, -1.2, 0.8, 0.05};
  double sum = 0;
  for (double x : nb) sum += x;
  const double b = 2 * p.kappa * sum + p.field;
  int accepted = 0;
  for (double phi : {-2.0, 0.0, 0.4, 1.7}) {
    SiteRandom random(1, RngStream::test, 0, 0, 0);
    const double reflected = Model::update<2>(p, kOverrelaxation, phi, nb, random, accepted);
    EXPECT_NEAR(reflected, b - phi, 1e-15);
    EXPECT_NEAR(Model::site_action(reflected, b, 0.0), Model::site_action(phi, b, 0.0), 1e-12);
  }
}

}  // namespace
}  // namespace lattica::test
