// The CUDA engines of Ising and Potts, compiled on their own (sim/engine/engine_factory.hpp).
#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/engine_builders.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_discrete_engine<CudaExec>(const EngineSettings&);

}  // namespace lattica
