// The CPU engines of phi^4, compiled on their own (sim/engine/engine_factory.hpp).
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/engine_builders.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_phi4_engine<CpuExec>(const EngineSettings&);

}  // namespace lattica
