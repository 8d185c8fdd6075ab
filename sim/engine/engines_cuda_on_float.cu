// The CUDA engines of O(n) in single precision, compiled on their own
// (sim/engine/engine_factory.hpp).
#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/engine_builders.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_on_engine<CudaExec, float>(const EngineSettings&);

}  // namespace lattica
