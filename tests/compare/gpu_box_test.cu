// Boxes of a larger lattice on the GPU (tests/support/box_check.hpp): the kernels' boxed
// geometry (global site names, flipped colours) compiled for the device.

#include <gtest/gtest.h>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/models/on.hpp"
#include "kernels/models/potts.hpp"
#include "tests/support/box_check.hpp"
#include "tests/support/gpu.hpp"

namespace lattica::test {
namespace {

TEST(GpuBox, InteriorsFollowTheWholeLattice) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec exec(0);
  const int64_t cubic[3] = {8, 6, 64};
  const Box<3> box(cubic, {2, 3, 1}, {1, 2, 0});
  expect_box_follows_whole<CudaExec, 3, IsingModel>(
      exec, box, make_ising_params(3, 0.25, 0.1, 99),
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}, 2);
  if (HasFatalFailure()) return;
  expect_packed_box_follows_whole(exec, box, make_ising_params(3, 0.3, -0.2, 11), 2);
  if (HasFatalFailure()) return;
  const int64_t square[2] = {12, 10};
  const Box<2> strip(square, {3, 1}, {2, 0});
  expect_box_follows_whole<CudaExec, 2, PottsModel>(
      exec, strip, make_potts_params(2, 3, 1.0, 0.2, 5), {UpdateAlgorithm::heatbath}, 2);
  expect_box_follows_whole<CudaExec, 2, OnModel<float, 3>>(
      exec, strip, OnParams{7, 0.7, 0.1, 0.8, 2, 2},
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation}, 2);
}

}  // namespace
}  // namespace lattica::test
