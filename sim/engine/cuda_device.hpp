#pragma once
// Choosing the CUDA device of a run (defined in backend_cuda.cu; a build without CUDA defines
// only cuda_memory_in_use, in backend_nocuda.cpp).

#include <cstdint>

namespace lattica {

/// Makes CUDA device `device` current. Throws CudaError without a usable device and
/// InputError (naming run.device) for an index past the devices present.
void select_cuda_device(int device);

/// Bytes of the current CUDA device's memory in use (cudaMemGetInfo: by every process on it,
/// this one's context included); 0 in a build without CUDA.
int64_t cuda_memory_in_use();

}  // namespace lattica
