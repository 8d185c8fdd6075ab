// The spectral measurements of the CPU backend, compiled once.
#include "kernels/backend/cpu_exec.hpp"
#include "sim/engine/spectral_measurements_impl.hpp"

namespace lattica {

template class SpectralMeasurements<CpuExec>;

}  // namespace lattica
