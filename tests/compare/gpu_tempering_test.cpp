// Parallel tempering on the CUDA backend runs the CPU reference's chain bit for bit: the same
// rung-ordered measurements, final configurations and exchange statistics, with local and
// cluster passes, beta and field ladders, several ladders per launch.

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct TemperingCase {
  const char* name;
  ModelKind model;
  int q;
  std::vector<int64_t> dims;
  std::vector<double> betas;   ///< empty: beta 0.4, a field ladder
  std::vector<double> fields;  ///< empty: h = 0
  UpdateAlgorithm algorithm;
  int ladders;
};

std::ostream& operator<<(std::ostream& os, const TemperingCase& c) { return os << c.name; }

class GpuTempering : public ::testing::TestWithParam<TemperingCase> {};

TEST_P(GpuTempering, IdenticalToCpuReference) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const TemperingCase& c = GetParam();
  EngineSettings s;
  s.model = c.model;
  s.q = c.q;
  s.dims = c.dims;
  s.tempering.beta = c.betas;
  s.tempering.field = c.fields;
  // Measured every 2 sweeps: rounds alternate between sums of the measurement and sums the
  // sweep's last pass left for the round.
  s.tempering.exchange_every = 3;
  s.beta = c.betas.empty() ? 0.4 : c.betas.front();
  s.field = c.fields.empty() ? 0.0 : c.fields.front();
  s.replicas = c.ladders * s.tempering.rungs();
  s.sequence = {c.algorithm};
  s.seed = 0x7e3b;
  s.measurement_capacity = kSampleBatch;
  auto cpu = make_cpu_engine(s);
  const auto cpu_series = sample(*cpu, 20, 150, 2);
  auto gpu = make_cuda_engine(s);
  const auto gpu_series = sample(*gpu, 20, 150, 2);
  EXPECT_EQ(gpu_series, cpu_series);
  EXPECT_EQ(configuration_bytes(*gpu), configuration_bytes(*cpu));
  const TemperingState a = cpu->tempering(), b = gpu->tempering();
  EXPECT_EQ(b.rung_of_slot, a.rung_of_slot);
  EXPECT_EQ(b.accepts, a.accepts);
  EXPECT_EQ(b.attempts, a.attempts);
  EXPECT_EQ(b.round_trip_sweeps, a.round_trip_sweeps);
  int64_t accepted = 0;
  for (int64_t n : a.accepts) accepted += n;
  EXPECT_GT(accepted, 0) << "no exchange was taken: the comparison shows little";
}

INSTANTIATE_TEST_SUITE_P(Ladders, GpuTempering,
                         ::testing::Values(TemperingCase{"Ising2d_metropolis_beta_ladder",
                                                         ModelKind::ising,
                                                         2,
                                                         {32, 32},
                                                         {0.3, 0.36, 0.42, 0.48, 0.54},
                                                         {},
                                                         UpdateAlgorithm::metropolis,
                                                         3},
                                           TemperingCase{"Ising3d_heatbath_field_ladder",
                                                         ModelKind::ising,
                                                         2,
                                                         {8, 8, 8},
                                                         {},
                                                         {-0.2, -0.1, 0.0, 0.1, 0.2},
                                                         UpdateAlgorithm::heatbath,
                                                         2},
                                           TemperingCase{"Ising2d_swendsen_wang",
                                                         ModelKind::ising,
                                                         2,
                                                         {24, 24},
                                                         {0.35, 0.4, 0.45, 0.5},
                                                         {},
                                                         UpdateAlgorithm::swendsen_wang,
                                                         2},
                                           TemperingCase{"Ising2d_wolff",
                                                         ModelKind::ising,
                                                         2,
                                                         {16, 16},
                                                         {0.38, 0.42, 0.46},
                                                         {},
                                                         UpdateAlgorithm::wolff,
                                                         2},
                                           TemperingCase{"Potts2d_q3_heatbath",
                                                         ModelKind::potts,
                                                         3,
                                                         {16, 16},
                                                         {0.9, 0.95, 1.0, 1.05},
                                                         {},
                                                         UpdateAlgorithm::heatbath,
                                                         2}),
                         [](const ::testing::TestParamInfo<TemperingCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace lattica::test
