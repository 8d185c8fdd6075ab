#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/engine.hpp"
#include "sim/engine/multicanonical/walker_ensemble_impl.hpp"

namespace lattica {

std::unique_ptr<WalkerEnsemble> make_cuda_walkers(const WalkerSettings& settings) {
  std::string reason;
  const int count = cuda_device_count(reason);
  if (count == 0) throw CudaError(reason);
  if (settings.cuda_device < 0 || settings.cuda_device >= count) {
    throw InputError("run.device = " + std::to_string(settings.cuda_device) + ": only " +
                     std::to_string(count) + " CUDA device(s) present");
  }
  return std::make_unique<ExecWalkers<CudaExec>>(settings, settings.cuda_device);
}

}  // namespace lattica
