#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/cuda_device.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/multicanonical/walker_ensemble_impl.hpp"

namespace lattica {

std::unique_ptr<WalkerEnsemble> make_cuda_walkers(const WalkerSettings& settings) {
  select_cuda_device(settings.cuda_device);
  return std::make_unique<ExecWalkers<CudaExec>>(settings, settings.cuda_device);
}

}  // namespace lattica
