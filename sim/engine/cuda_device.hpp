#pragma once
// Choosing the CUDA device of a run (CUDA builds only: defined in backend_cuda.cu).

namespace lattica {

/// Makes CUDA device `device` current. Throws CudaError without a usable device and
/// InputError (naming run.device) for an index past the devices present.
void select_cuda_device(int device);

}  // namespace lattica
