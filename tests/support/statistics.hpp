#pragma once
// Error estimates for correlated Monte Carlo series, and the z-score tests built on them.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica::test {

/// Mean and its standard error from `bins` equal consecutive blocks (binning analysis).
/// With blocks much longer than the autocorrelation time the block means are independent.
struct Estimate {
  double mean;
  double error;
};
Estimate binned_estimate(const std::vector<double>& series, int bins = 50);

/// Sums of a quantity x over one group of measurements (a bin of one chain's series, or one
/// replica's series), taken about a fixed shift so that the variance keeps its digits.
struct Moments {
  double count = 0;
  double sum = 0;      ///< of x - shift
  double squares = 0;  ///< of (x - shift)^2
};

/// The mean and the variance <x^2> - <x>^2 of x over all groups with jackknife errors (each
/// group left out in turn), for independent groups: bins much longer than the autocorrelation
/// time, or replicas. The variance's estimate is the pooled one, biased by O(tau / N) only.
struct MeanAndVariance {
  Estimate mean;
  Estimate variance;
};
MeanAndVariance jackknife_moments(const std::vector<Moments>& groups, double shift);

/// A series' Moments in `bins` equal consecutive blocks about its first value (the shift);
/// returns that shift.
double binned_moments(const std::vector<double>& series, int bins, std::vector<Moments>& out);

/// The mean and variance of a series from `bins` blocks (jackknife_moments).
MeanAndVariance binned_mean_and_variance(const std::vector<double>& series, int bins = 50);

/// (estimate - exact) / error.
double z_score(const Estimate& e, double exact);

/// Expects the series' mean within 4 binned standard errors of an exact value.
void expect_z(const std::vector<double>& series, double exact, const std::string& what);

/// Measurements an engine made for sample() must be able to queue (its measurement_capacity).
constexpr int64_t kSampleBatch = 1024;

/// Runs `measurements` measurements, `every` sweeps apart, after `thermalization` sweeps (which
/// tune a continuous model's Metropolis step as sim does), and
/// returns one series per replica and observable: series[r * observables + o].
std::vector<std::vector<double>> sample(Engine& engine, int64_t thermalization,
                                        int64_t measurements, int64_t every);

/// Sweeps [first, last) of an initialized engine, measuring every 5 sweeps with sweep() then
/// measure() (sample() uses sweep_and_measure()), then collects and appends the observables to
/// values (for runs split between engines, as checkpoints do).
void advance_measuring(Engine& engine, int64_t first, int64_t last, std::vector<double>& values);

/// Every replica's configuration in lexicographic order, as raw bytes of the engine's
/// snapshot format (for exact comparisons whatever the model).
std::vector<unsigned char> configuration_bytes(Engine& engine);

/// Snapshots overlapped with later sweeps (start_snapshot, snapshot_data) hold the configuration
/// at the moment they were started, in both slots and when a slot is reused, while the chain
/// goes on; expects so of an engine (it initializes it). With `bits`, the engine packs Ising
/// snapshots 8 spins per byte (EngineSettings::snapshot_bits).
void expect_overlapped_snapshots(Engine& engine, bool bits = false);

/// Mean of one observable over many independent replicas, each averaged over its own
/// measurements: the error comes from the spread of the replica means, so it holds whatever the
/// autocorrelations (given measurements much longer than them) and it sees replicas that are
/// stuck where others are not.
struct ReplicaAverage {
  double mean;
  double error;
  int64_t samples;  ///< replicas x measurements
};

/// Initializes the engine, runs `thermalization` sweeps, then `measurements` measurements one
/// sweep apart, and averages each estimator (a function of one measurement's observables, in
/// the engine's order) over replicas as ReplicaAverage says, without keeping the series, so
/// thousands of replicas fit.
std::vector<ReplicaAverage> replica_averages(
    Engine& engine, int64_t thermalization, int64_t measurements,
    const std::vector<std::function<double(const double* observables)>>& estimators);

/// Transforms a series element-wise.
template <class F>
std::vector<double> map(const std::vector<double>& x, F f) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
  return y;
}

}  // namespace lattica::test
