#include "kernels/backend/cpu_exec.hpp"
#include "sim/ising_engine.hpp"

namespace lattica {

std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings) {
  return make_ising_engine<CpuExec>(settings, "cpu", settings.cpu_threads);
}

}  // namespace lattica
