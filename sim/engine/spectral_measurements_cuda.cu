// The spectral measurements of the CUDA backend, compiled once.
#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/spectral_measurements_impl.hpp"

namespace lattica {

template class SpectralMeasurements<CudaExec>;

}  // namespace lattica
