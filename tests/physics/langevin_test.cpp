// Fourier-accelerated Langevin for phi^4 on the CPU reference backend: at lambda = 0 the free
// part is exact (every mode relaxes at the same rate, MALA accepts every proposal); at
// lambda > 0 MALA agrees with the Metropolis sampler while the unadjusted dynamics at the same
// step is measurably biased. The free field's S(k) mode by mode is in structure_factor_test.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/settings.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

/// phi^4 with Langevin passes of step epsilon (not tuned), on two threads.
EngineSettings phi4(std::vector<int64_t> dims, double kappa, double lambda, double h,
                    std::vector<UpdateAlgorithm> sequence, double epsilon) {
  EngineSettings s = phi4_settings(std::move(dims), kappa, lambda, h, std::move(sequence));
  s.langevin_step = epsilon;
  s.tune_step = false;
  s.seed = 2718;
  s.cpu_threads = 2;
  return s;
}

/// Lag-1 autocorrelation of a series.
double lag_one_autocorrelation(const std::vector<double>& x) {
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double c0 = 0, c1 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    c0 += (x[i] - mean) * (x[i] - mean);
    if (i + 1 < x.size()) c1 += (x[i] - mean) * (x[i + 1] - mean);
  }
  return c1 / c0;
}

// The magnetisation is the k = 0 mode, the slowest of the free field (M(0) = 0.4 against up
// to 3.6): plain Langevin would correlate it as e^{-M(0) epsilon} = 0.82 per step, the
// accelerated dynamics as e^{-epsilon} = 0.61 like every other mode, and exactly so (an AR(1)
// process; the estimate's error is sqrt((1 - rho^2) / N) = 0.006). Its mean is h / M(0).
TEST(FourierLangevin, ZeroModeRelaxesAtTheCommonRate) {
  const double epsilon = 0.5, h = 0.1;
  for (UpdateAlgorithm a : {UpdateAlgorithm::langevin, UpdateAlgorithm::mala}) {
    auto engine = make_cpu_engine(phi4({16, 12}, 0.2, 0.0, h, {a}, epsilon));
    const auto series = sample(*engine, 100, 20000, 1);
    EXPECT_NEAR(lag_one_autocorrelation(series[0]), std::exp(-epsilon), 0.025);
    expect_z(series[0], h / 0.4, "<phi> = h / M(0)");
  }
}

// At lambda = 0 the Gaussian terms of the acceptance cancel exactly: every MALA proposal is
// accepted (log alpha is 0 up to rounding), whatever the step.
TEST(FourierLangevin, MalaAcceptsEveryFreeFieldProposal) {
  for (double epsilon : {0.05, 1.0, 20.0}) {
    auto engine =
        make_cpu_engine(phi4({8, 6, 4}, 0.12, 0.0, -0.3, {UpdateAlgorithm::mala}, epsilon));
    engine->initialize();
    engine->thermalization_sweep(0, 50);
    const StepTuning t = engine->step_tuning();
    EXPECT_TRUE(t.langevin && t.adjusted);
    EXPECT_EQ(t.langevin_acceptance, 1.0) << "epsilon " << epsilon;
    EXPECT_EQ(t.langevin_shift, 0.0);
    EXPECT_EQ(t.langevin_step, epsilon);  // tuning is off
  }
}

struct Means {
  std::vector<Estimate> values;  ///< abs_phi, phi2, link, action; replicas pooled
};

Means run(const EngineSettings& s, int64_t measurements) {
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, measurements, 1);
  Means m;
  for (int o : {1, 2, 4, 5}) {
    double mean = 0, variance = 0;
    for (int r = 0; r < s.replicas; ++r) {
      const Estimate e = binned_estimate(series[r * 6 + o]);
      mean += e.mean / s.replicas;
      variance += e.error * e.error / (s.replicas * s.replicas);
    }
    m.values.push_back({mean, std::sqrt(variance)});
  }
  return m;
}

// At lambda = 0.5, kappa = 0.25 on 8 x 8, epsilon = 0.2: MALA (acceptance about 0.7) agrees
// with Metropolis in every observable; the unadjusted dynamics at the same step is off by tens
// of standard errors (measured: <phi^2> 0.549 against 0.574), which the accept/reject removes.
TEST(FourierLangevin, MalaAgreesWithMetropolisWhereUnadjustedIsBiased) {
  const char* names[] = {"|m|", "phi^2", "link", "action"};
  EngineSettings metropolis = phi4({8, 8}, 0.25, 0.5, 0.0, {UpdateAlgorithm::metropolis}, 0.2);
  metropolis.replicas = 4;
  metropolis.tune_step = true;
  EngineSettings mala = metropolis, unadjusted = metropolis;
  mala.sequence = {UpdateAlgorithm::mala};
  mala.tune_step = false;
  unadjusted.sequence = {UpdateAlgorithm::langevin};
  unadjusted.tune_step = false;
  const Means reference = run(metropolis, 20000);
  const Means adjusted = run(mala, 20000);
  const Means biased = run(unadjusted, 20000);
  double largest_bias = 0;
  for (size_t o = 0; o < reference.values.size(); ++o) {
    const Estimate& r = reference.values[o];
    const auto z = [&](const Estimate& e) {
      return (e.mean - r.mean) / std::hypot(e.error, r.error);
    };
    EXPECT_LT(std::fabs(z(adjusted.values[o])), 4.5)
        << names[o] << ": MALA " << adjusted.values[o].mean << " +- " << adjusted.values[o].error
        << ", Metropolis " << r.mean << " +- " << r.error;
    largest_bias = std::max(largest_bias, std::fabs(z(biased.values[o])));
  }
  EXPECT_GT(largest_bias, 8.0) << "the unadjusted Langevin bias at epsilon = 0.2";
}

// A step too large for the unadjusted dynamics makes it diverge. The engine reports the
// measurements as they are; sim's run loop refuses the first that is not finite, naming the
// observable and the sweep, before it reaches the output (tests/cli/input_limits_test.cpp).
TEST(FourierLangevin, DivergenceShowsInTheMeasurements) {
  auto engine = make_cpu_engine(phi4({8, 8}, 0.25, 0.5, 0.0, {UpdateAlgorithm::langevin}, 5.0));
  bool diverged = false;
  for (const std::vector<double>& series : sample(*engine, 20, 200, 1)) {
    for (double x : series) diverged |= !std::isfinite(x);
  }
  EXPECT_TRUE(diverged);
}

}  // namespace
}  // namespace lattica::test
