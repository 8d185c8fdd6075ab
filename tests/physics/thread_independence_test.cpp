// The CPU chain depends on the seed and input alone: not on the thread count, and not on how
// the sweeps are split into calls.

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct Trace {
  std::vector<std::vector<double>> series;
  std::vector<unsigned char> configuration;
};

Trace run(EngineSettings s, int threads) {
  s.cpu_threads = threads;
  auto engine = make_cpu_engine(s);
  Trace t;
  t.series = sample(*engine, 20, 40, 5);
  t.configuration = configuration_bytes(*engine);
  return t;
}

void expect_thread_independent(EngineSettings s) {
  const Trace one = run(s, 1);
  for (int threads : {2, 3}) {
    const Trace many = run(s, threads);
    EXPECT_EQ(many.series, one.series) << threads << " threads";  // bitwise: exact doubles
    EXPECT_EQ(many.configuration, one.configuration) << threads << " threads";
  }
}

EngineSettings settings(std::vector<int64_t> dims, double beta, double h, UpdateAlgorithm a,
                        InitialState start) {
  EngineSettings s;
  s.dims = std::move(dims);
  s.beta = beta;
  s.field = h;
  s.sequence = {a};
  s.start = start;
  s.seed = 31337;
  return s;
}

TEST(ThreadIndependence, Ising2dMetropolis) {
  expect_thread_independent(
      settings({64, 48}, 0.44068679350977151, 0.0, UpdateAlgorithm::metropolis, InitialState::hot));
}
TEST(ThreadIndependence, Ising2dHeatBathInField) {
  expect_thread_independent(
      settings({32, 66}, 0.5, 0.1, UpdateAlgorithm::heatbath, InitialState::cold));
}
TEST(ThreadIndependence, Ising3d) {
  expect_thread_independent(
      settings({10, 8, 6}, 0.2216544, 0.0, UpdateAlgorithm::metropolis, InitialState::hot));
}
TEST(ThreadIndependence, Ising4d) {
  expect_thread_independent(
      settings({6, 4, 4, 8}, 0.1497, 0.0, UpdateAlgorithm::heatbath, InitialState::hot));
}

// The multi-spin-coded storage (last extent a multiple of 64): the CPU updates words in vectors,
// a chunk of words per index; rows of 10 words (batches straddle rows), replicas, and whole
// rows shorter than a batch in 3D.
TEST(ThreadIndependence, Ising2dMultispin) {
  EngineSettings s =
      settings({96, 640}, 0.44068679350977151, 0.0, UpdateAlgorithm::metropolis, InitialState::hot);
  s.replicas = 2;
  ASSERT_TRUE(uses_packed_ising(s));
  expect_thread_independent(s);
}
TEST(ThreadIndependence, Ising3dMultispinHeatBathInField) {
  EngineSettings s =
      settings({12, 20, 128}, 0.2216544, 0.05, UpdateAlgorithm::heatbath, InitialState::hot);
  ASSERT_TRUE(uses_packed_ising(s));
  expect_thread_independent(s);
}

// Continuous models too: the CPU reductions sum in a fixed order, so even the doubles agree.
TEST(ThreadIndependence, HeisenbergFloatMetropolisOverrelaxation) {
  EngineSettings s =
      settings({12, 10, 8}, 0.69, 0.05, UpdateAlgorithm::metropolis, InitialState::hot);
  s.model = ModelKind::on;
  s.n = 3;
  s.precision = Precision::float32;
  s.sequence = {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation};
  expect_thread_independent(s);
}
TEST(ThreadIndependence, XyHeatBath) {
  EngineSettings s = settings({34, 20}, 1.12, 0.0, UpdateAlgorithm::heatbath, InitialState::hot);
  s.model = ModelKind::on;
  s.n = 2;
  expect_thread_independent(s);
}
TEST(ThreadIndependence, Phi4) {
  EngineSettings s =
      settings({16, 8, 6}, 0.0, 0.02, UpdateAlgorithm::metropolis, InitialState::hot);
  s.model = ModelKind::phi4;
  s.kappa = 0.18;
  s.lambda = 1.1;
  s.hits = 3;
  s.sequence = {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation};
  expect_thread_independent(s);
}
TEST(ThreadIndependence, Phi4FourierLangevin) {
  EngineSettings s = settings({16, 8, 6}, 0.0, 0.02, UpdateAlgorithm::mala, InitialState::hot);
  s.model = ModelKind::phi4;
  s.kappa = 0.18;
  s.lambda = 1.1;
  s.sequence = {UpdateAlgorithm::mala, UpdateAlgorithm::langevin, UpdateAlgorithm::metropolis};
  expect_thread_independent(s);
}

TEST(ChainIndependence, SplittingSweepsDoesNotChangeTheChain) {
  EngineSettings s = settings({32, 32}, 0.44, 0.0, UpdateAlgorithm::metropolis, InitialState::hot);
  auto whole = make_cpu_engine(s);
  auto pieces = make_cpu_engine(s);
  whole->initialize();
  whole->sweep(0, 100);
  pieces->initialize();
  pieces->sweep(0, 37);
  pieces->sweep(37, 1);
  pieces->sweep(38, 62);
  std::vector<int8_t> a(1024), b(1024);
  whole->configuration(a.data());
  pieces->configuration(b.data());
  EXPECT_EQ(a, b);
}

TEST(ChainIndependence, DifferentSeedsGiveDifferentChains) {
  EngineSettings s = settings({16, 16}, 0.3, 0.0, UpdateAlgorithm::metropolis, InitialState::hot);
  auto a = make_cpu_engine(s);
  s.seed += 1;
  auto b = make_cpu_engine(s);
  a->initialize();
  b->initialize();
  a->sweep(0, 10);
  b->sweep(0, 10);
  std::vector<int8_t> x(256), y(256);
  a->configuration(x.data());
  b->configuration(y.data());
  EXPECT_NE(x, y);
}

}  // namespace
}  // namespace lattica::test
