// The CPU backend's entry point.
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/engine_factory.hpp"

namespace lattica {

std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings) {
  return make_lattice_engine<CpuExec>(settings);
}

}  // namespace lattica
