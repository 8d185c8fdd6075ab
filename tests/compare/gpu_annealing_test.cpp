// Population annealing on the CUDA backend runs the CPU reference's run bit for bit: every
// step's free-energy estimates, population moments, per-replica measurements and families,
// and the final configurations, for byte and multi-spin-coded Ising storage, Potts and a
// cluster pass, with both resampling methods.

#include <gtest/gtest.h>

#include <vector>

#include "sim/run/annealing.hpp"
#include "tests/support/annealing_rows.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct AnnealingCase {
  const char* name;
  ModelKind model;
  int q;
  std::vector<int64_t> dims;
  UpdateAlgorithm algorithm;
  Resampling resampling;
  int replicas;
};

std::ostream& operator<<(std::ostream& os, const AnnealingCase& c) { return os << c.name; }

class GpuAnnealing : public ::testing::TestWithParam<AnnealingCase> {};

TEST_P(GpuAnnealing, IdenticalToCpuReference) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const AnnealingCase& c = GetParam();
  EngineSettings s;
  s.model = c.model;
  s.q = c.q;
  s.dims = c.dims;
  s.replicas = c.replicas;
  s.sequence = {c.algorithm};
  s.seed = 0xa11e;
  s.measurement_capacity = 1;
  AnnealingSettings a;
  for (int k = 0; k <= 12; ++k) a.betas.push_back(0.05 * k);
  a.sweeps = 3;
  a.populations = 2;
  a.resampling = c.resampling;
  a.seed = s.seed;
  a.log_z0_per_site = log_z0_per_site(s);
  auto cpu = make_cpu_engine(s);
  const auto cpu_rows = annealing_rows(*cpu, a);
  auto gpu = make_cuda_engine(s);
  const auto gpu_rows = annealing_rows(*gpu, a);
  ASSERT_EQ(gpu_rows.size(), cpu_rows.size());
  for (size_t k = 0; k < cpu_rows.size(); ++k) EXPECT_EQ(gpu_rows[k], cpu_rows[k]) << "step " << k;
  EXPECT_EQ(configuration_bytes(*gpu), configuration_bytes(*cpu));
}

INSTANTIATE_TEST_SUITE_P(Populations, GpuAnnealing,
                         ::testing::Values(AnnealingCase{"Ising2d_bytes_metropolis",
                                                         ModelKind::ising,
                                                         2,
                                                         {16, 16},
                                                         UpdateAlgorithm::metropolis,
                                                         Resampling::systematic,
                                                         256},
                                           AnnealingCase{"Ising2d_packed_heatbath",
                                                         ModelKind::ising,
                                                         2,
                                                         {64, 64},
                                                         UpdateAlgorithm::heatbath,
                                                         Resampling::multinomial,
                                                         64},
                                           AnnealingCase{"Ising2d_wolff",
                                                         ModelKind::ising,
                                                         2,
                                                         {16, 16},
                                                         UpdateAlgorithm::wolff,
                                                         Resampling::systematic,
                                                         32},
                                           AnnealingCase{"Potts2d_q3_metropolis",
                                                         ModelKind::potts,
                                                         3,
                                                         {12, 12},
                                                         UpdateAlgorithm::metropolis,
                                                         Resampling::systematic,
                                                         128}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lattica::test
