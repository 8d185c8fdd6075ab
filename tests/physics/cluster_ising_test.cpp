// Cluster moves (Swendsen-Wang, Wolff) for the 2D Ising model at the critical coupling on the
// CPU reference backend, against Kaufman's exact solution of the finite periodic lattice
// (tests/support/kaufman.hpp): the energy per site and the specific heat
// c = beta^2 V (<e^2> - <e>^2) from the energy series, with binned (jackknife) errors.
//
// What they can see: with a bond probability p' instead of p = 1 - exp(-2 beta) both moves
// sample the model at the beta' with 1 - exp(-2 beta') = p', so a relative error d in p moves
// beta by 0.71 d and e by (c / beta^2) 0.71 d (c / beta^2 = 7.7 at L = 16, 9.5 at 32): with
// energy errors of 0.8-1.5e-3, four errors are d of about 1e-3. The specific heat's errors are
// about 1 %. Clusters labelled wrongly (a missed or extra union) break detailed balance.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "tests/support/kaufman.hpp"
#include "tests/support/settings.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct ClusterCase {
  const char* name;
  int64_t length;
  UpdateAlgorithm algorithm;
  int wolff_clusters;
  int64_t measurements;  ///< one per sweep
};

void check_against_kaufman(const ClusterCase& c) {
  SCOPED_TRACE(c.name);
  const double beta = ising_critical_beta();
  EngineSettings s = ising2d_cluster_settings(c.length, beta, c.algorithm, c.wolff_clusters);
  s.seed = 0x5a17 + static_cast<uint64_t>(c.length);
  s.cpu_threads = 1;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, c.measurements, 1);
  const KaufmanIsing exact = kaufman_ising(c.length, c.length, beta);
  const double volume = static_cast<double>(c.length * c.length);

  const MeanAndVariance e = binned_mean_and_variance(series[0]);
  const Estimate heat{beta * beta * volume * e.variance.mean,
                      beta * beta * volume * e.variance.error};
  const Estimate m2 = binned_estimate(map(series[1], [](double m) { return m * m; }));
  std::printf(
      "[ kaufman  ] %s: e = %.6f +- %.6f (exact %.6f, z = %.2f), c = %.4f +- %.4f (exact "
      "%.4f, z = %.2f), <m^2> = %.3f\n",
      c.name, e.mean.mean, e.mean.error, exact.energy, z_score(e.mean, exact.energy), heat.mean,
      heat.error, exact.specific_heat, z_score(heat, exact.specific_heat), m2.mean);
  EXPECT_LT(std::fabs(z_score(e.mean, exact.energy)), 4.0)
      << "energy " << e.mean.mean << " +- " << e.mean.error << ", exact " << exact.energy;
  EXPECT_LT(std::fabs(z_score(heat, exact.specific_heat)), 4.0)
      << "specific heat " << heat.mean << " +- " << heat.error << ", exact " << exact.specific_heat;
  EXPECT_LT(e.mean.error, 2e-3) << "the test would be too weak";
  EXPECT_LT(heat.error, 0.03 * exact.specific_heat) << "the test would be too weak";
}

TEST(ClusterKaufman, SwendsenWang16) {
  check_against_kaufman({"SW 16^2", 16, UpdateAlgorithm::swendsen_wang, 1, 100000});
}
TEST(ClusterKaufman, SwendsenWang32) {
  check_against_kaufman({"SW 32^2", 32, UpdateAlgorithm::swendsen_wang, 1, 60000});
}
// Wolff: a pass of wolff_clusters single clusters, each of <|C|> = <m^2> V sites on average
// (0.55 V at 16^2 and 0.46 V at 32^2), so a pass flips about the whole lattice.
TEST(ClusterKaufman, Wolff16) {
  check_against_kaufman({"Wolff 16^2", 16, UpdateAlgorithm::wolff, 2, 40000});
}
TEST(ClusterKaufman, Wolff32) {
  check_against_kaufman({"Wolff 32^2", 32, UpdateAlgorithm::wolff, 3, 40000});
}

}  // namespace
}  // namespace lattica::test
