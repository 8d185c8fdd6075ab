// Population annealing on the CPU reference backend against exact enumeration: the free energy
// beta F per site and <e> at every step of the schedule, for 4 x 4 Ising and 4 x 2 Potts
// (q = 3; the checkerboard needs even extents, so not 3 x 3), with both resampling methods.
// Errors come from independent populations of one run; the populations are large enough that
// the O(1/R) bias of population annealing stays well below them, so a wrong weight, copy or
// free-energy increment shows. Runs are reproducible bit for bit.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "sim/run/annealing.hpp"
#include "tests/support/annealing_rows.hpp"
#include "tests/support/exact_ising.hpp"
#include "tests/support/exact_potts.hpp"

namespace lattica::test {
namespace {

/// ln Z / V at beta (h = 0) from the bond distribution at beta = 0 (the density of states
/// over states^V): ln Z = V ln(states) + ln sum_B P_0(B) e^{beta B}.
double exact_log_z_per_site(const std::map<int, double>& p0, double states, double volume,
                            double beta) {
  double sum = 0.0;
  for (const auto& [bonds, p] : p0) sum += p * std::exp(beta * bonds);
  return std::log(states) + std::log(sum) / volume;
}

struct Case {
  const char* name;
  ModelKind model;
  int q;
  std::vector<int64_t> dims;
  Resampling resampling;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

EngineSettings engine_settings(const Case& c, int replicas) {
  EngineSettings s;
  s.model = c.model;
  s.q = c.q;
  s.dims = c.dims;
  s.replicas = replicas;
  s.sequence = {UpdateAlgorithm::metropolis};
  s.seed = 0x5a17;
  s.cpu_threads = 1;
  s.measurement_capacity = 1;
  return s;
}

/// The schedule 0, 0.05, ..., 0.7 (past the 2D Ising and q = 3 Potts transitions).
AnnealingSettings annealing(const Case& c, int populations) {
  AnnealingSettings a;
  for (int k = 0; k <= 14; ++k) a.betas.push_back(0.05 * k);
  a.sweeps = 5;
  a.populations = populations;
  a.resampling = c.resampling;
  a.seed = 0x5a17;
  a.log_z0_per_site = c.model == ModelKind::ising ? std::log(2.0) : std::log(3.0);
  return a;
}

class AnnealingExact : public ::testing::TestWithParam<Case> {};

TEST_P(AnnealingExact, FreeEnergyAndEnergyAtEveryStep) {
  const Case& c = GetParam();
  constexpr int kPopulations = 16, kSize = 512;
  auto engine = make_cpu_engine(engine_settings(c, kPopulations * kSize));
  const AnnealingSettings a = annealing(c, kPopulations);
  const double volume = static_cast<double>(engine->volume());
  const bool ising = c.model == ModelKind::ising;
  const std::map<int, double> p0 = ising ? exact_ising(c.dims, 0.0, 0.0).bond_distribution
                                         : exact_potts(c.dims, c.q, 0.0, 0.0).bond_distribution;
  const size_t observables = engine->observable_names().size();
  double worst_f = 0.0, worst_e = 0.0;
  run_population_annealing(*engine, a, [&](const AnnealingStep& step) {
    // beta F per site: the populations' estimates and their standard error.
    std::vector<double> f, e(kPopulations, 0.0);
    for (double log_z : step.log_z) f.push_back(-log_z / volume);
    for (int r = 0; r < kPopulations * kSize; ++r)
      e[static_cast<size_t>(r / kSize)] +=
          (*step.values)[static_cast<size_t>(r) * observables] / kSize;
    const auto mean_and_error = [](const std::vector<double>& x) {
      double m = 0.0, v = 0.0;
      for (double y : x) m += y / x.size();
      for (double y : x) v += (y - m) * (y - m) / (x.size() - 1);
      return std::pair<double, double>{m, std::sqrt(v / x.size())};
    };
    const auto [f_mean, f_error] = mean_and_error(f);
    const auto [e_mean, e_error] = mean_and_error(e);
    EXPECT_DOUBLE_EQ(f_mean, step.beta_free_energy);
    const double exact_f = -exact_log_z_per_site(p0, ising ? 2.0 : 3.0, volume, step.beta);
    const double exact_e = ising ? exact_ising(c.dims, step.beta, 0.0).energy
                                 : exact_potts(c.dims, c.q, step.beta, 0.0).energy;
    if (step.step == 0) {
      EXPECT_NEAR(f_mean, exact_f, 1e-14);  // ln Z_0 = V ln(states)
    } else {
      ASSERT_GT(f_error, 0.0);
      const double z = (f_mean - exact_f) / f_error;
      worst_f = std::max(worst_f, std::fabs(z));
      EXPECT_LT(std::fabs(z), 4.5) << "beta " << step.beta << ": beta F per site " << f_mean
                                   << " +- " << f_error << ", exact " << exact_f;
    }
    const double z = (e_mean - exact_e) / e_error;
    worst_e = std::max(worst_e, std::fabs(z));
    EXPECT_LT(std::fabs(z), 4.5) << "beta " << step.beta << ": <e> " << e_mean << " +- " << e_error
                                 << ", exact " << exact_e;
    EXPECT_GE(step.families, 1);
    EXPECT_GE(step.rho_t, 1.0);
  });
  std::printf("%s: largest |z| of beta F %.2f, of <e> %.2f over the schedule\n", c.name, worst_f,
              worst_e);
}

INSTANTIATE_TEST_SUITE_P(
    Models, AnnealingExact,
    ::testing::Values(
        Case{"ising4x4_systematic", ModelKind::ising, 2, {4, 4}, Resampling::systematic},
        Case{"ising4x4_multinomial", ModelKind::ising, 2, {4, 4}, Resampling::multinomial},
        Case{"potts3_4x2_systematic", ModelKind::potts, 3, {4, 2}, Resampling::systematic}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Annealing, ReproducibleAndIndependentOfThreads) {
  const Case c{"ising", ModelKind::ising, 2, {8, 8}, Resampling::systematic};
  EngineSettings s = engine_settings(c, 64);
  AnnealingSettings a = annealing(c, 2);
  a.sweeps = 2;
  auto one = make_cpu_engine(s);
  const auto reference = annealing_rows(*one, a);
  s.cpu_threads = 3;
  auto three = make_cpu_engine(s);
  EXPECT_EQ(annealing_rows(*three, a), reference);
  a.seed += 1;
  auto other = make_cpu_engine(s);
  EXPECT_NE(annealing_rows(*other, a), reference);
}

// The multi-spin-coded Ising storage copies words of 32 spins: the same run as bytes.
TEST(Annealing, PackedAndByteStorageGiveOneRun) {
  const Case c{"ising", ModelKind::ising, 2, {4, 64}, Resampling::multinomial};
  EngineSettings s = engine_settings(c, 16);
  AnnealingSettings a = annealing(c, 2);
  a.sweeps = 2;
  ASSERT_TRUE(uses_packed_ising(s));
  auto packed = make_cpu_engine(s);
  const auto reference = annealing_rows(*packed, a);
  s.multispin = false;
  auto bytes = make_cpu_engine(s);
  EXPECT_EQ(annealing_rows(*bytes, a), reference);
}

TEST(Annealing, RefusesWhatItCannotAnneal) {
  const Case c{"ising", ModelKind::ising, 2, {4, 4}, Resampling::systematic};
  auto engine = make_cpu_engine(engine_settings(c, 6));
  EXPECT_THROW(run_population_annealing(*engine, annealing(c, 4), [](const AnnealingStep&) {}),
               InputError);  // 6 replicas are not 4 populations
  EngineSettings tempered = engine_settings(c, 2);
  tempered.tempering.beta = {0.1, 0.2};
  auto ladder = make_cpu_engine(tempered);
  EXPECT_THROW(run_population_annealing(*ladder, annealing(c, 1), [](const AnnealingStep&) {}),
               InputError);
}

}  // namespace
}  // namespace lattica::test
