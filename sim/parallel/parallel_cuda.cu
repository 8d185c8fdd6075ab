// The distributed FFT and the box <-> slab moves of the CUDA backend (device memory, NCCL),
// compiled once.
#include "kernels/backend/cuda_exec.cuh"
#include "sim/parallel/box_slabs_impl.hpp"
#include "sim/parallel/slab_fft_impl.hpp"

namespace lattica {

template class SlabFft<CudaExec>;
template class BoxSlabs<CudaExec>;

}  // namespace lattica
