#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/cuda_device.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/multicanonical/walker_ensemble_impl.hpp"

namespace lattica {

std::unique_ptr<WalkerEnsemble> make_cuda_walkers(const WalkerSettings& settings) {
  select_cuda_device(settings.cuda_device);
  // Blocks of 64 threads: 16384 continuous walkers (a thread each) make 256 blocks, enough for
  // every multiprocessor of a large GPU (blocks of 256 would leave half of an H100's 132 idle);
  // Ising and Potts walkers take a warp each, two per block.
  constexpr int kWalkerBlock = 64;
  return make_exec_walkers<CudaExec>(settings, settings.cuda_device, kWalkerBlock);
}

}  // namespace lattica
