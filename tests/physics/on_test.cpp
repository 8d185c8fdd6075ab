// O(n) models (n = 2, 3, 4) on the CPU reference backend against closed forms: the infinite
// ring's bond energy, the finite XY ring's energy and helicity modulus, and the single-site
// conditional distribution exp(beta s . F) in a field, for every update algorithm.

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/models/on.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

using Sequence = std::vector<UpdateAlgorithm>;
constexpr UpdateAlgorithm kMetropolis = UpdateAlgorithm::metropolis;
constexpr UpdateAlgorithm kHeatBath = UpdateAlgorithm::heatbath;
constexpr UpdateAlgorithm kOverrelaxation = UpdateAlgorithm::overrelaxation;

/// <s . e> for one O(n) spin in exp(k s . e): I_{n/2}(k) / I_{n/2-1}(k).
double langevin_ratio(int n, double k) {
  return std::cyl_bessel_i(n / 2.0, k) / std::cyl_bessel_i(n / 2.0 - 1.0, k);
}

EngineSettings on_settings(int n, std::vector<int64_t> dims, double beta, Sequence sequence,
                           Precision precision = Precision::float64) {
  EngineSettings s;
  s.model = ModelKind::on;
  s.n = n;
  s.precision = precision;
  s.dims = std::move(dims);
  s.beta = beta;
  s.sequence = std::move(sequence);
  s.seed = 1618;
  s.cpu_threads = 1;
  return s;
}

TEST(OnExact, OracleHeisenbergRatioIsLangevinFunction) {
  for (double k : {0.3, 1.0, 4.0})
    EXPECT_NEAR(langevin_ratio(3, k), 1 / std::tanh(k) - 1 / k, 1e-12);
}

// A ring of 1024 spins: <s_i . s_{i+1}> of the infinite chain (corrections ~ A^L, far below
// the errors), for each n, algorithm and sequence.
TEST(OnExact, RingBondEnergyEveryAlgorithm) {
  const double beta = 1.3;
  const std::vector<std::pair<std::string, Sequence>> sequences{
      {"metropolis", {kMetropolis}},
      {"heatbath", {kHeatBath}},
      {"heatbath+2 overrelaxation", {kHeatBath, kOverrelaxation, kOverrelaxation}},
      {"metropolis(2 hits)+overrelaxation", {kMetropolis, kOverrelaxation}}};
  for (int n : {2, 3, 4}) {
    for (const auto& [name, sequence] : sequences) {
      EngineSettings s = on_settings(n, {1024}, beta, sequence);
      if (sequence.size() == 2) s.hits = 2;
      auto engine = make_cpu_engine(s);
      const auto series = sample(*engine, 500, 1000, 2);
      expect_z(series[0], -langevin_ratio(n, beta), "n = " + std::to_string(n) + ", " + name);
      if (sequence[0] == kMetropolis) {
        const StepTuning t = engine->step_tuning();
        EXPECT_TRUE(t.applies);
        EXPECT_NEAR(t.acceptance, 0.5, 0.1) << "n = " << n << ": tuned step " << t.step;
      }
    }
  }
}

TEST(OnExact, RingBondEnergyInSinglePrecision) {
  for (const auto& [n, sequence] :
       std::vector<std::pair<int, Sequence>>{{3, {kHeatBath}}, {2, {kMetropolis}}}) {
    auto engine = make_cpu_engine(on_settings(n, {1024}, 0.9, sequence, Precision::float32));
    const auto series = sample(*engine, 500, 1000, 2);
    expect_z(series[0], -langevin_ratio(n, 0.9), "float, n = " + std::to_string(n));
  }
}

// The XY ring of L spins with periodic boundaries: Z = sum_m I_m(beta)^L (Fourier series of
// exp(beta cos)). A twist phi per bond multiplies term m by exp(i m L phi), so the helicity
// modulus (1/L) d^2 F / d phi^2 is (L / beta) sum_m m^2 I_m^L / Z, and the energy per site is
// -sum_m I_m^(L-1) I_m' / Z with I_m' = (I_{m-1} + I_{m+1}) / 2.
TEST(OnExact, XyRingHelicityModulusAndEnergy) {
  const int length = 8;
  const double beta = 2.0;
  double z = 0, twist = 0, energy = 0;
  for (int m = -40; m <= 40; ++m) {
    const double i_m = std::cyl_bessel_i(std::abs(m), beta);
    const double weight = std::pow(i_m, length);
    const double derivative =
        (std::cyl_bessel_i(std::abs(m - 1), beta) + std::cyl_bessel_i(std::abs(m + 1), beta)) / 2;
    z += weight;
    twist += m * m * weight;
    energy -= std::pow(i_m, length - 1) * derivative;
  }
  const double helicity = length / beta * twist / z;
  energy /= z;
  ASSERT_GT(helicity, 0.2);  // a finite ring is stiff; the check is not vacuous
  for (const Sequence& sequence :
       {Sequence{kHeatBath, kOverrelaxation}, Sequence{kMetropolis, kOverrelaxation}}) {
    auto engine = make_cpu_engine(on_settings(2, {length}, beta, sequence));
    ASSERT_EQ(engine->observable_names()[4], "helicity_0");
    const auto series = sample(*engine, 1000, 100000, 1);
    expect_z(series[0], energy, "energy");
    expect_z(series[4], helicity, "helicity modulus");
  }
}

// One spin with fixed neighbours and a field: repeated updates must sample exp(beta s . F).
// With x = s . F / |F| and k = beta |F|: <x> = A_n(k), <x^2> = 1 - (n - 1) A_n(k) / k, and a
// direction orthogonal to F averages to zero.
template <int N>
void check_conditional(const Sequence& sequence, int hits) {
  using Model = OnModel<double, N>;
  using Spin = typename Model::Spin;
  constexpr int D = 2;
  const double beta = 0.8, h = 0.7;
  OnParams p{99, beta, h, 0.9, hits, D};
  Spin nb[2 * D];
  for (int k = 0; k < 2 * D; ++k) {
    SiteRandom r(5, RngStream::test, 0, static_cast<uint64_t>(k), 0);
    nb[k] = Model::uniform_direction(r);
  }
  const Spin f = Model::template local_field<D>(p, nb);
  const double f_norm = std::sqrt(Model::dot(f, f));
  const double k = beta * f_norm;
  Spin orthogonal{};  // a unit vector orthogonal to F
  orthogonal.c[0] = -f.c[1] / std::hypot(f.c[0], f.c[1]);
  orthogonal.c[1] = f.c[0] / std::hypot(f.c[0], f.c[1]);

  Spin s{};
  s.c[0] = 1;
  const int samples = 200000;
  std::vector<double> x(samples), x2(samples), y(samples);
  for (int t = 0; t < samples; ++t) {
    for (size_t pass = 0; pass < sequence.size(); ++pass) {
      SiteRandom random(2024, RngStream::site_update, 0, 77,
                        update_step(static_cast<uint64_t>(t), static_cast<uint32_t>(pass), 0));
      int accepted = 0;
      s = Model::template update<D>(p, sequence[pass], s, nb, random, accepted);
    }
    const double along = Model::dot(s, f) / f_norm;
    x[t] = along;
    x2[t] = along * along;
    y[t] = Model::dot(s, orthogonal);
  }
  const double a = langevin_ratio(N, k);
  const std::string what = "n = " + std::to_string(N) + ", passes " +
                           std::to_string(sequence.size()) + ", first " +
                           std::to_string(static_cast<int>(sequence[0]));
  expect_z(x, a, what + ": <x>");
  expect_z(x2, 1 - (N - 1) * a / k, what + ": <x^2>");
  expect_z(y, 0.0, what + ": orthogonal component");
}

TEST(OnExact, SingleSiteConditionalInFieldEveryAlgorithm) {
  for (const Sequence& sequence :
       {Sequence{kMetropolis}, Sequence{kHeatBath}, Sequence{kHeatBath, kOverrelaxation},
        Sequence{kMetropolis, kOverrelaxation}}) {
    check_conditional<2>(sequence, 1);
    check_conditional<3>(sequence, 1);
    check_conditional<4>(sequence, 3);
  }
}

// Over-relaxation keeps the energy and is its own inverse.
TEST(OnExact, OverrelaxationIsAnEnergyPreservingInvolution) {
  using Model = OnModel<double, 3>;
  OnParams p{1, 1.0, 0.4, 1.0, 1, 1};
  Model::Spin nb[2] = {{{0.6, 0.8, 0.0}}, {{0.0, 0.6, -0.8}}};
  Model::Spin s{{0.48, -0.6, 0.64}};
  const Model::Spin f = Model::local_field<1>(p, nb);
  SiteRandom unused(1, RngStream::test, 0, 0, 0);
  int accepted = 0;
  const Model::Spin once = Model::update<1>(p, kOverrelaxation, s, nb, unused, accepted);
  const Model::Spin twice = Model::update<1>(p, kOverrelaxation, once, nb, unused, accepted);
  EXPECT_NEAR(Model::dot(once, f), Model::dot(s, f), 1e-14);
  EXPECT_GT(std::fabs(once.c[0] - s.c[0]), 0.1);  // it moved
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(twice.c[c], s.c[c], 1e-14);
  EXPECT_EQ(unused.blocks_drawn(), 0u);
}

}  // namespace
}  // namespace lattica::test
