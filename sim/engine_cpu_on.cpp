// The CPU engines of one model family, compiled on their own (see sim/lattice_engine.hpp).
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine_families.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_on_engine<CpuExec>(const EngineSettings&);

}  // namespace lattica
