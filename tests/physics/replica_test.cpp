// Replicas: independent chains of one parameter point, batched in one engine. Replica 0 is
// the single-replica chain; the exact histograms hold exactly the measured totals.

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

EngineSettings settings(int replicas) {
  EngineSettings s;
  s.dims = {12, 10, 6};
  s.beta = 0.22;
  s.field = 0.05;
  s.replicas = replicas;
  s.seed = 77;
  s.measurement_capacity = kSampleBatch;
  return s;
}

TEST(Replicas, ReplicaZeroIsTheSingleChain) {
  auto single = make_cpu_engine(settings(1));
  auto many = make_cpu_engine(settings(3));
  const auto a = sample(*single, 10, 30, 2);
  const auto b = sample(*many, 10, 30, 2);
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  EXPECT_NE(b[2], b[0]);  // replica 1 is a different chain
  EXPECT_NE(b[4], b[2]);
  std::vector<int8_t> one(static_cast<size_t>(single->volume())), all(3 * one.size());
  single->configuration(one.data());
  many->configuration(all.data());
  EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin()));
}

// Batches whose totals lie close together are binned on the backend; a batch spread thin (a
// cold start relaxing) is counted from the totals read back. Both must hold every total.
class ExactHistograms : public ::testing::TestWithParam<bool> {};

TEST_P(ExactHistograms, HoldEveryMeasuredTotal) {
  const bool sparse = GetParam();
  EngineSettings s = settings(4);
  if (sparse) s.start = InitialState::cold;
  auto engine = make_cpu_engine(s);
  const int64_t measurements = sparse ? 6 : 2500;  // dense: more than one batch
  const auto series = sample(*engine, sparse ? 0 : 5, measurements, 1);
  const double v = static_cast<double>(engine->volume());
  std::map<long long, long long> energy, magnetization;
  for (int r = 0; r < 4; ++r) {
    for (size_t k = 0; k < series[2 * r].size(); ++k) {
      const long long m = std::llround(series[2 * r + 1][k] * v);
      // E_J = E + h M, an integer.
      energy[std::llround(series[2 * r][k] * v + 0.05 * m)] += 1;
      magnetization[m] += 1;
    }
  }
  const auto& h = engine->histograms();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].name, "energy");
  EXPECT_EQ(h[0].counts, energy);
  EXPECT_EQ(h[1].counts, magnetization);
  EXPECT_EQ(h[0].samples, 4 * measurements);
  if (sparse) {  // the window really was spread thin
    const long long span = energy.rbegin()->first - energy.begin()->first;
    EXPECT_GT(span / 2 + 1, 4 * 4 * measurements);  // bins (of 2) > 4 per value
  }
}

INSTANTIATE_TEST_SUITE_P(Batches, ExactHistograms, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "SpreadThin" : "Dense");
                         });

}  // namespace
}  // namespace lattica::test
