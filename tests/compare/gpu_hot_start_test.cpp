// The hot-start test of tests/support/hot_start.hpp on the CUDA backend: 16384 replicas, an
// error near 1.6e-5, for Metropolis and the heat bath.

#include "tests/support/gpu.hpp"
#include "tests/support/hot_start.hpp"

namespace lattica::test {
namespace {

TEST(GpuHotStart, EnergyIsExact4x4) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    SCOPED_TRACE(a == UpdateAlgorithm::metropolis ? "metropolis" : "heatbath");
    auto engine = make_cuda_engine(hot_start_4x4(a, 16384));
    expect_exact_hot_start(*engine, 40000, 2e-5);
  }
}

}  // namespace
}  // namespace lattica::test
