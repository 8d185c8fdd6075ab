#include "tests/support/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lattica::test {

Estimate binned_estimate(const std::vector<double>& series, int bins) {
  const size_t per_bin = series.size() / static_cast<size_t>(bins);
  if (per_bin == 0) throw std::invalid_argument("binned_estimate: fewer samples than bins");
  std::vector<double> means(static_cast<size_t>(bins), 0.0);
  double total = 0.0;
  for (int b = 0; b < bins; ++b) {
    double s = 0.0;
    for (size_t i = 0; i < per_bin; ++i) s += series[b * per_bin + i];
    means[b] = s / static_cast<double>(per_bin);
    total += means[b];
  }
  const double mean = total / bins;
  double var = 0.0;
  for (double m : means) var += (m - mean) * (m - mean);
  var /= (bins - 1);
  return {mean, std::sqrt(var / bins)};
}

MeanAndVariance jackknife_moments(const std::vector<Moments>& groups, double shift) {
  if (groups.size() < 2) throw std::invalid_argument("jackknife_moments: fewer than 2 groups");
  Moments total;
  for (const Moments& g : groups) {
    total.count += g.count;
    total.sum += g.sum;
    total.squares += g.squares;
  }
  auto moments = [](const Moments& m, double& mean, double& variance) {
    const double d = m.sum / m.count;  // about the shift
    mean = d;
    variance = m.squares / m.count - d * d;
  };
  double mean = 0, variance = 0;
  moments(total, mean, variance);
  const size_t n = groups.size();
  std::vector<double> means(n), variances(n);
  double mean_avg = 0, variance_avg = 0;
  for (size_t g = 0; g < n; ++g) {
    const Moments rest{total.count - groups[g].count, total.sum - groups[g].sum,
                       total.squares - groups[g].squares};
    moments(rest, means[g], variances[g]);
    mean_avg += means[g] / static_cast<double>(n);
    variance_avg += variances[g] / static_cast<double>(n);
  }
  double mean_var = 0, variance_var = 0;
  for (size_t g = 0; g < n; ++g) {
    mean_var += (means[g] - mean_avg) * (means[g] - mean_avg);
    variance_var += (variances[g] - variance_avg) * (variances[g] - variance_avg);
  }
  const double factor = static_cast<double>(n - 1) / static_cast<double>(n);
  return {{shift + mean, std::sqrt(factor * mean_var)},
          {variance, std::sqrt(factor * variance_var)}};
}

double binned_moments(const std::vector<double>& series, int bins, std::vector<Moments>& out) {
  const size_t per_bin = series.size() / static_cast<size_t>(bins);
  if (per_bin == 0) throw std::invalid_argument("binned_moments: fewer samples than bins");
  const double shift = series[0];
  out.assign(static_cast<size_t>(bins), Moments{});
  for (size_t b = 0; b < static_cast<size_t>(bins); ++b) {
    for (size_t i = 0; i < per_bin; ++i) {
      const double d = series[b * per_bin + i] - shift;
      out[b].count += 1;
      out[b].sum += d;
      out[b].squares += d * d;
    }
  }
  return shift;
}

MeanAndVariance binned_mean_and_variance(const std::vector<double>& series, int bins) {
  std::vector<Moments> groups;
  const double shift = binned_moments(series, bins, groups);
  return jackknife_moments(groups, shift);
}

double z_score(const Estimate& e, double exact) { return (e.mean - exact) / e.error; }

void expect_z(const std::vector<double>& series, double exact, const std::string& what) {
  const Estimate e = binned_estimate(series);
  EXPECT_LT(std::fabs(z_score(e, exact)), 4.0)
      << what << ": " << e.mean << " +- " << e.error << ", exact " << exact;
}

std::vector<unsigned char> configuration_bytes(Engine& engine) {
  const SnapshotFormat f = engine.snapshot_format();
  std::vector<unsigned char> out(static_cast<size_t>(engine.replicas() * engine.volume()) *
                                 f.components * element_bytes(f.type));
  engine.configuration(out.data());
  return out;
}

namespace {
/// +-1 bytes, 8 per byte, the first in the least significant bit, 1 for +1.
std::vector<unsigned char> pack_bits(const std::vector<unsigned char>& spins) {
  std::vector<unsigned char> bits(spins.size() / 8, 0);
  for (size_t i = 0; i < spins.size(); ++i) {
    if (static_cast<signed char>(spins[i]) > 0)
      bits[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
  }
  return bits;
}
}  // namespace

void expect_overlapped_snapshots(Engine& engine, bool bits) {
  engine.initialize();
  engine.sweep(0, 3);
  std::vector<std::vector<unsigned char>> want;
  std::vector<int> slots;
  uint64_t sweep = 3;
  // Slot 0, slot 1 started right after more sweeps, then slot 0 again, each with sweeps
  // queued behind it before its data is read.
  for (int slot : {0, 1, 0}) {
    if (slot == 0 && !want.empty()) {
      const auto* data = static_cast<const unsigned char*>(engine.snapshot_data(0));
      EXPECT_EQ(std::vector<unsigned char>(data, data + want[0].size()), want[0]) << "slot 0";
    }
    want.push_back(bits ? pack_bits(configuration_bytes(engine)) : configuration_bytes(engine));
    slots.push_back(slot);
    engine.start_snapshot(slot);
    engine.sweep(sweep, 4);
    sweep += 4;
  }
  for (size_t i = 1; i < want.size(); ++i) {
    const auto* data = static_cast<const unsigned char*>(engine.snapshot_data(slots[i]));
    EXPECT_EQ(std::vector<unsigned char>(data, data + want[i].size()), want[i])
        << "snapshot " << i << " in slot " << slots[i];
  }
  EXPECT_NE(want[0], want[1]);  // the chain moved between them
  EXPECT_NE(want[1], want[2]);
}

void advance_measuring(Engine& engine, int64_t first, int64_t last, std::vector<double>& values) {
  MeasurementBatch batch;
  for (int64_t s = first; s < last; s += 5) {
    engine.sweep(static_cast<uint64_t>(s), 5);
    engine.measure();
  }
  engine.collect(batch);
  values.insert(values.end(), batch.values.begin(), batch.values.end());
}

std::vector<std::vector<double>> sample(Engine& engine, int64_t thermalization,
                                        int64_t measurements, int64_t every) {
  const size_t n_obs = engine.observable_names().size();
  const size_t replicas = static_cast<size_t>(engine.replicas());
  std::vector<std::vector<double>> series(n_obs * replicas);
  MeasurementBatch batch;
  auto collect = [&] {
    engine.collect(batch);
    for (int64_t k = 0; k < batch.count; ++k) {
      for (size_t r = 0; r < replicas; ++r) {
        for (size_t o = 0; o < n_obs; ++o) {
          series[r * n_obs + o].push_back(batch.values[(k * replicas + r) * n_obs + o]);
        }
      }
    }
  };
  engine.initialize();
  // Thermalization as sim does it: blocks of 10 sweeps, after each of which a tunable
  // Metropolis step is adjusted.
  for (int64_t s = 0; s < thermalization; s += 10) {
    engine.thermalization_sweep(static_cast<uint64_t>(s),
                                static_cast<uint64_t>(std::min<int64_t>(10, thermalization - s)));
  }
  uint64_t sweep = static_cast<uint64_t>(thermalization);
  for (int64_t m = 0; m < measurements; ++m) {
    engine.sweep_and_measure(sweep, static_cast<uint64_t>(every));  // as sim runs it
    sweep += static_cast<uint64_t>(every);
    if (engine.queued() == kSampleBatch) collect();
  }
  collect();
  return series;
}

std::vector<ReplicaAverage> replica_averages(
    Engine& engine, int64_t thermalization, int64_t measurements,
    const std::vector<std::function<double(const double*)>>& estimators) {
  const size_t n_obs = engine.observable_names().size();
  const size_t replicas = static_cast<size_t>(engine.replicas());
  const size_t n_est = estimators.size();
  std::vector<double> sums(replicas * n_est, 0.0);  // [replica][estimator]
  MeasurementBatch batch;
  auto collect = [&] {
    engine.collect(batch);
    for (int64_t k = 0; k < batch.count; ++k) {
      for (size_t r = 0; r < replicas; ++r) {
        const double* observables = &batch.values[(k * replicas + r) * n_obs];
        for (size_t i = 0; i < n_est; ++i) sums[r * n_est + i] += estimators[i](observables);
      }
    }
  };
  engine.initialize();
  engine.sweep(0, static_cast<uint64_t>(thermalization));
  uint64_t sweep = static_cast<uint64_t>(thermalization);
  for (int64_t m = 0; m < measurements; ++m) {
    engine.sweep_and_measure(sweep++, 1);
    if (engine.queued() == kSampleBatch) collect();
  }
  collect();
  std::vector<ReplicaAverage> out;
  for (size_t i = 0; i < n_est; ++i) {
    double mean = 0.0;
    for (size_t r = 0; r < replicas; ++r) mean += sums[r * n_est + i] / measurements;
    mean /= static_cast<double>(replicas);
    double var = 0.0;
    for (size_t r = 0; r < replicas; ++r) {
      const double d = sums[r * n_est + i] / measurements - mean;
      var += d * d;
    }
    var /= static_cast<double>(replicas - 1);
    out.push_back({mean, std::sqrt(var / static_cast<double>(replicas)),
                   static_cast<int64_t>(replicas) * measurements});
  }
  return out;
}

}  // namespace lattica::test
