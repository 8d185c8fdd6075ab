// The CUDA engines of one model family, compiled on their own (see sim/lattice_engine.hpp).
#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine_families.hpp"

namespace lattica {

template std::unique_ptr<Engine> make_phi4_engine<CudaExec>(const EngineSettings&);

}  // namespace lattica
