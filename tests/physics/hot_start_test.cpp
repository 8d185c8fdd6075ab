// The hot-start test of tests/support/hot_start.hpp on the CPU backend: 4096 replicas, an
// energy error near 1.1e-4 (the old rule's bias is 8 of them) and a P(E = 0) error near 1e-5 (the
// old rule's excess is 60 of them); the GPU test (gpu_hot_start_test.cpp) resolves 1.6e-5 in
// the energy.

#include "tests/support/hot_start.hpp"

namespace lattica::test {
namespace {

TEST(HotStart, MetropolisEnergyIsExact4x4) {
  auto engine = make_cpu_engine(hot_start_4x4(UpdateAlgorithm::metropolis, 4096));
  expect_exact_hot_start(*engine, 12000, 1.5e-4);
}

}  // namespace
}  // namespace lattica::test
