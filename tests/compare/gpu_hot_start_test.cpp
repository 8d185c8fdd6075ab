// The hot-start test of tests/support/hot_start.hpp on the CUDA backend, 16384 replicas:
// Metropolis with 120 000 measurements each (an energy error below 2e-5, resolving 1e-4), the
// heat bath with 40 000 (below 4e-5).

#include "tests/support/gpu.hpp"
#include "tests/support/hot_start.hpp"

namespace lattica::test {
namespace {

TEST(GpuHotStart, EnergyIsExact4x4) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    SCOPED_TRACE(a == UpdateAlgorithm::metropolis ? "metropolis" : "heatbath");
    auto engine = make_cuda_engine(hot_start_4x4(a, 16384));
    expect_exact_hot_start(*engine, a == UpdateAlgorithm::metropolis ? 120000 : 40000,
                           a == UpdateAlgorithm::metropolis ? 2e-5 : 4e-5);
  }
}

}  // namespace
}  // namespace lattica::test
