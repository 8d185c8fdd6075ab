// The CPU engines of O(n) in double precision, compiled on their own
// (sim/engine/engine_factory.hpp).
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/engine_builders.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_on_engine<CpuExec, double>(const EngineSettings&);

}  // namespace lattica
