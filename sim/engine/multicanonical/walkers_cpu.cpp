#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/multicanonical/walker_ensemble_impl.hpp"

namespace lattica {

std::unique_ptr<WalkerEnsemble> make_cpu_walkers(const WalkerSettings& settings) {
  return make_exec_walkers<CpuExec>(settings, settings.threads);
}

}  // namespace lattica
