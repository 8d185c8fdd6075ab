#include "kernels/backend/cpu_exec.hpp"
#include "sim/lattice_engine.hpp"

namespace lattica {

std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings) {
  return make_lattice_engine<CpuExec>(settings, "cpu", settings.cpu_threads);
}

}  // namespace lattica
