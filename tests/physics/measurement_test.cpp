// The continuous models' measurements against a naive serial oracle: every observable is
// recomputed from the lexicographic configuration with plain coordinate arithmetic, in every
// dimension, so bond axes and orientations (the helicity modulus's currents) are checked.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/exact_ising.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

const std::vector<std::vector<int64_t>> kShapes{{6}, {4, 6}, {4, 2, 6}, {2, 4, 2, 4}};

/// One measurement of the engine after a few sweeps, and its configuration as doubles.
std::vector<double> measure_once(Engine& engine, std::vector<double>& configuration) {
  engine.initialize();
  engine.sweep(0, 3);
  engine.measure();
  MeasurementBatch batch;
  engine.collect(batch);
  configuration.resize(static_cast<size_t>(engine.volume()) * engine.snapshot_format().components);
  engine.configuration(configuration.data());
  return batch.values;
}

void expect_all_near(const std::vector<double>& got, const std::vector<double>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_NEAR(got[o], want[o], 1e-12) << what << ", observable " << o;
}

TEST(Measurement, OnObservablesMatchNaiveSums) {
  for (int n : {2, 3, 4}) {
    for (const auto& dims : kShapes) {
      EngineSettings s;
      s.model = ModelKind::on;
      s.n = n;
      s.dims = dims;
      s.beta = 0.7;
      s.field = 0.3;
      s.sequence = {UpdateAlgorithm::heatbath};
      s.seed = 8;
      auto engine = make_cpu_engine(s);
      std::vector<double> spin;
      const std::vector<double> got = measure_once(*engine, spin);
      const auto forward = periodic_forward_neighbours(dims);
      const int d = static_cast<int>(dims.size());
      const double volume = static_cast<double>(engine->volume());
      auto component = [&](size_t site, int c) { return spin[site * n + c]; };
      double bonds = 0;
      std::vector<double> m(n, 0.0), cosines(d, 0.0), sines(d, 0.0);
      for (size_t x = 0; x < forward.size(); ++x) {
        for (int c = 0; c < n; ++c) m[c] += component(x, c);
        for (int mu = 0; mu < d; ++mu) {
          const size_t y = static_cast<size_t>(forward[x][mu]);
          double dot = 0;
          for (int c = 0; c < n; ++c) dot += component(x, c) * component(y, c);
          bonds += dot;
          cosines[mu] += dot;
          sines[mu] += component(x, 1) * component(y, 0) - component(x, 0) * component(y, 1);
        }
      }
      double m2 = 0;
      for (double mc : m) m2 += mc * mc;
      std::vector<double> want{(-bonds - s.field * m[0]) / volume, std::sqrt(m2) / volume};
      for (double mc : m) want.push_back(mc / volume);
      if (n == 2) {
        for (int mu = 0; mu < d; ++mu)
          want.push_back((cosines[mu] - s.beta * sines[mu] * sines[mu]) / volume);
      }
      expect_all_near(got, want, "n = " + std::to_string(n) + ", d = " + std::to_string(d));
    }
  }
}

TEST(Measurement, Phi4ObservablesMatchNaiveSums) {
  for (const auto& dims : kShapes) {
    EngineSettings s;
    s.model = ModelKind::phi4;
    s.dims = dims;
    s.kappa = 0.21;
    s.lambda = 0.8;
    s.field = -0.15;
    s.hits = 2;
    s.sequence = {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation};
    s.seed = 9;
    auto engine = make_cpu_engine(s);
    std::vector<double> phi;
    const std::vector<double> got = measure_once(*engine, phi);
    const auto forward = periodic_forward_neighbours(dims);
    const int d = static_cast<int>(dims.size());
    const double volume = static_cast<double>(engine->volume());
    double sum = 0, sum2 = 0, sum4 = 0, links = 0;
    for (size_t x = 0; x < forward.size(); ++x) {
      sum += phi[x];
      sum2 += phi[x] * phi[x];
      sum4 += phi[x] * phi[x] * phi[x] * phi[x];
      for (int mu = 0; mu < d; ++mu) links += phi[x] * phi[static_cast<size_t>(forward[x][mu])];
    }
    double action = 0;
    for (size_t x = 0; x < forward.size(); ++x) {
      action += phi[x] * phi[x] + s.lambda * (phi[x] * phi[x] - 1) * (phi[x] * phi[x] - 1) -
                s.field * phi[x];
    }
    action -= 2 * s.kappa * links;
    expect_all_near(got,
                    {sum / volume, std::fabs(sum) / volume, sum2 / volume, sum4 / volume,
                     links / (d * volume), action / volume},
                    "d = " + std::to_string(d));
  }
}

}  // namespace
}  // namespace lattica::test
