// The CPU engines of Ising and Potts, compiled on their own (sim/engine/engine_factory.hpp).
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/engine_builders.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_discrete_engine<CpuExec>(const EngineSettings&);

}  // namespace lattica
