// The structure factor on the GPU (cuFFT) against the CPU reference (FFTW), and the time-slice
// correlators (cuBLAS GEMM against plain loops), on the same chains:
// discrete models run identical chains, so S(k) agrees to the FFTs' rounding; a Potts field
// (2 components) and an O(3) field (3 components, short run) check the component gathering.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/gpu.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct Spectra {
  StructureFactorSums sums;
  std::vector<double> series;      ///< S(0), S(k_min) per structure-factor measurement and replica
  std::vector<double> timeslices;  ///< C(dt, p) per measurement and replica
};

Spectra run(Engine& engine, int64_t measurements, int64_t every) {
  Spectra out;
  engine.initialize();
  MeasurementBatch batch;
  for (int64_t m = 0; m < measurements; ++m) {
    engine.sweep(static_cast<uint64_t>(m * every), static_cast<uint64_t>(every));
    engine.measure();
  }
  engine.collect(batch);
  out.series = batch.spectral_values;
  out.timeslices = batch.timeslice_values;
  EXPECT_TRUE(engine.structure_factor(out.sums));
  return out;
}

void expect_close(const std::vector<double>& cpu, const std::vector<double>& gpu, double relative,
                  const char* what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  double scale = 0;
  for (double x : cpu) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < cpu.size(); ++i)
    ASSERT_NEAR(gpu[i], cpu[i], relative * scale) << what << " " << i;
}

void compare(EngineSettings s, int64_t measurements, int64_t every, double relative) {
  s.structure_factor_every = 2;
  s.timeslice_every = 1;
  s.timeslice_momenta_per_axis = 2;
  auto cpu = make_cpu_engine(s);
  auto gpu = make_cuda_engine(s);
  const Spectra a = run(*cpu, measurements, every);
  const Spectra b = run(*gpu, measurements, every);
  EXPECT_EQ(a.sums.samples, b.sums.samples);
  EXPECT_EQ(a.sums.samples, (measurements + 1) / 2 * s.replicas);
  expect_close(a.sums.power_sum, b.sums.power_sum, relative, "sum of S(k)");
  expect_close(a.sums.power_squares, b.sums.power_squares, relative, "sum of S(k)^2");
  expect_close(a.sums.mean_field_sum, b.sums.mean_field_sum, relative, "mean field");
  expect_close(a.series, b.series, relative, "S(0), S(k_min) series");
  EXPECT_EQ(a.timeslices.size(), static_cast<size_t>(measurements * s.replicas * s.dims.back() *
                                                     (1 + 2 * (s.dims.size() - 1))));
  expect_close(a.timeslices, b.timeslices, relative, "time-slice correlators (cuBLAS vs loops)");
}

TEST(GpuStructureFactor, IsingTwoReplicasMatchesCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  EngineSettings s;
  s.dims = {64, 48};
  s.beta = 0.44;
  s.sequence = {UpdateAlgorithm::metropolis};
  s.replicas = 2;
  s.seed = 12;
  compare(s, 40, 3, 1e-12);
}

TEST(GpuStructureFactor, Potts3dMatchesCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  EngineSettings s;
  s.model = ModelKind::potts;
  s.q = 3;
  s.dims = {16, 12, 10};
  s.beta = 0.55;
  s.sequence = {UpdateAlgorithm::heatbath};
  s.seed = 13;
  compare(s, 20, 2, 1e-12);
}

TEST(GpuStructureFactor, HeisenbergShortRunMatchesCpu) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  EngineSettings s;
  s.model = ModelKind::on;
  s.n = 3;
  s.dims = {8, 8, 8, 4};
  s.beta = 0.5;
  s.sequence = {UpdateAlgorithm::heatbath};
  s.seed = 14;
  compare(s, 2, 1, 1e-9);  // continuous: a short run (see gpu_continuous_test.cpp)
}

}  // namespace
}  // namespace lattica::test
