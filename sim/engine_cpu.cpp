#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine_families.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_discrete_engine<CpuExec>(const EngineSettings&);

std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings) {
  return make_lattice_engine<CpuExec>(settings);
}

}  // namespace lattica
