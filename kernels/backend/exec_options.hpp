#pragma once
// What an execution policy is built from; the chain never depends on these.

namespace lattica {

struct ExecOptions {
  int cpu_threads = 0;        ///< CpuExec: 0 uses OpenMP's default
  int cuda_device = 0;        ///< CudaExec: the device index
  int cuda_block_size = 256;  ///< CudaExec: threads per block
};

}  // namespace lattica
