// Structure factors measured by the CPU engine: the free field (phi^4 at lambda = 0) against
// the exact propagator mode by mode, and the Ising G(r) at one lattice spacing against the
// energy of the same configurations.

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/spectral/timeslice.hpp"
#include "sim/correlators.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

/// The engine's structure-factor tables after `measurements` measurements `every` sweeps apart.
StructureFactorTables measure(EngineSettings s, int64_t measurements, int64_t every,
                              std::vector<std::vector<double>>* series = nullptr) {
  s.structure_factor_every = 1;
  s.cpu_threads = 2;
  auto engine = make_cpu_engine(s);
  auto values = sample(*engine, 500, measurements, every);
  if (series) *series = std::move(values);
  StructureFactorSums sums;
  EXPECT_TRUE(engine->structure_factor(sums));
  EXPECT_EQ(sums.samples, measurements * s.replicas);
  return structure_factor_tables(sums);
}

// S(k) = <|phi(k)|^2> / V = 1 / M(k), M(k) = 2 - 4 kappa sum_mu cos k_mu, for every mode.
// `every` sweeps between measurements keep them nearly independent, so the naive errors are
// close to right.
void check_free_field(const std::vector<int64_t>& dims, double kappa,
                      std::vector<UpdateAlgorithm> sequence, int64_t every,
                      double langevin_step = 0.1) {
  EngineSettings s;
  s.model = ModelKind::phi4;
  s.dims = dims;
  s.kappa = kappa;
  s.lambda = 0.0;
  s.sequence = std::move(sequence);
  s.hits = 2;
  s.langevin_step = langevin_step;
  s.replicas = 2;
  s.seed = 99;
  const StructureFactorTables t = measure(s, 3000, every);
  const int d = static_cast<int>(dims.size());
  double chi2 = 0, worst = 0;
  for (size_t k = 0; k < t.s.size(); ++k) {
    int64_t rest = static_cast<int64_t>(k);
    double cos_sum = 0;
    for (int a = d - 1; a >= 0; --a) {
      const int64_t extent = t.spectrum_shape[a];
      cos_sum += std::cos(t.momenta[a][rest % extent]);
      rest /= extent;
    }
    const double z = (t.s[k] - 1 / (2 - 4 * kappa * cos_sum)) / t.s_error[k];
    chi2 += z * z;
    worst = std::max(worst, std::fabs(z));
  }
  const double dof = static_cast<double>(t.s.size());
  // Each mode within 5 sigma (hundreds of modes), and the z-scores' spread near 1.
  EXPECT_LT(worst, 5.0) << "d = " << d;
  EXPECT_LT(chi2 / dof, 1.6) << "d = " << d << ": mean z^2 over " << dof << " modes";
  EXPECT_GT(chi2 / dof, 0.6) << "d = " << d;
}

constexpr UpdateAlgorithm kMetropolis = UpdateAlgorithm::metropolis;
constexpr UpdateAlgorithm kOverrelaxation = UpdateAlgorithm::overrelaxation;

TEST(StructureFactor, FreeFieldPropagatorEveryModeTwoDimensions) {
  check_free_field({16, 12}, 0.2, {kMetropolis, kOverrelaxation}, 3);
}
TEST(StructureFactor, FreeFieldPropagatorEveryModeThreeDimensions) {
  check_free_field({8, 8, 6}, 0.13, {kMetropolis, kOverrelaxation}, 3);
}

// Fourier-accelerated Langevin treats the free part exactly, so at lambda = 0 even the
// unadjusted dynamics samples G(p) = 1/M(p) for any step, large steps included; every mode
// decorrelates by e^{-epsilon} per step (e^{-2 epsilon} in S(k)), so 2 steps at epsilon = 1
// apart are nearly independent.
TEST(StructureFactor, FreeFieldPropagatorEveryModeUnadjustedLangevinAnyStep) {
  check_free_field({16, 12}, 0.2, {UpdateAlgorithm::langevin}, 2, 1.0);
  check_free_field({8, 8, 6}, 0.13, {UpdateAlgorithm::langevin}, 1, 3.0);
}
TEST(StructureFactor, FreeFieldPropagatorEveryModeMala) {
  check_free_field({8, 6, 4, 4}, 0.1, {UpdateAlgorithm::mala}, 1, 2.0);
}

// Per configuration, G(e_0) + G(e_1) = (1/V) sum_x s_x (s_{x+e0} + s_{x+e1}) = -e (h = 0), so
// the averages over the same measurements agree to rounding.
TEST(StructureFactor, IsingNearestNeighbourCorrelationIsTheEnergy) {
  EngineSettings s;
  s.dims = {32, 24};
  s.beta = 0.4;
  s.sequence = {UpdateAlgorithm::heatbath};
  s.seed = 3;
  std::vector<std::vector<double>> series;
  const StructureFactorTables t = measure(s, 400, 1, &series);
  double energy = 0;
  for (double e : series[0]) energy += e;
  energy /= static_cast<double>(series[0].size());
  EXPECT_NEAR(t.g[24] + t.g[1], -energy, 1e-12);  // r = e_0 is index L_1, r = e_1 index 1
  EXPECT_NEAR(t.g[0], 1.0, 1e-12);                // s^2 = 1
  EXPECT_GT(t.xi2, 0.5);
}

// The free field's time-slice correlator, C(dt, p) = (1/T) sum_{k_t} cos(k_t dt) / M(p, k_t)
// with M = 2 - 4 kappa (cos k_t + sum_a cos p_a), for every dt and projected momentum.
TEST(Timeslice, FreeFieldCorrelatorEveryMomentum) {
  EngineSettings s;
  s.model = ModelKind::phi4;
  s.dims = {6, 6, 16};
  s.kappa = 0.13;
  s.lambda = 0.0;
  s.sequence = {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation};
  s.hits = 2;
  s.seed = 17;
  s.cpu_threads = 2;
  s.timeslice_every = 1;
  s.timeslice_momenta_per_axis = 2;
  auto engine = make_cpu_engine(s);
  const std::vector<int64_t> momenta = timeslice_momenta(3, 2);  // [n_p][2]
  const size_t count = momenta.size() / 2, time = 16;
  std::vector<std::vector<double>> series(time * count);
  engine->initialize();
  for (int64_t t = 0; t < 300; t += 10) engine->thermalization_sweep(t, 10);
  MeasurementBatch batch;
  for (int m = 0; m < 3000; ++m) {
    engine->sweep(300 + 2 * m, 2);
    engine->measure();
    if (engine->queued() == kSampleBatch || m == 2999) {
      engine->collect(batch);
      ASSERT_EQ(batch.timeslice_values.size(), batch.timeslice_rows.size() * time * count);
      for (size_t i = 0; i < batch.timeslice_values.size(); ++i)
        series[i % (time * count)].push_back(batch.timeslice_values[i]);
    }
  }
  const double two_pi = 6.283185307179586;
  for (size_t j = 0; j < count; ++j) {
    const double cos_p =
        std::cos(two_pi * momenta[2 * j] / 6) + std::cos(two_pi * momenta[2 * j + 1] / 6);
    for (size_t dt = 0; dt < time; ++dt) {
      double exact = 0;
      for (size_t k = 0; k < time; ++k) {
        const double kt = two_pi * k / time;
        exact += std::cos(kt * dt) / (2 - 4 * s.kappa * (std::cos(kt) + cos_p)) / time;
      }
      const Estimate e = binned_estimate(series[dt * count + j]);
      EXPECT_LT(std::fabs(z_score(e, exact)), 4.5)
          << "p index " << j << ", dt " << dt << ": " << e.mean << " +- " << e.error << " vs "
          << exact;
    }
  }
}

}  // namespace
}  // namespace lattica::test
