#pragma once
// Checked CUDA calls: every runtime call goes through LATTICA_CUDA_CHECK, which throws with
// file:line and CUDA's message. Nothing under kernels/ exits the process.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace lattica {

/// A CUDA runtime failure; the driver maps it to exit code 3.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " +
                    call + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

}  // namespace lattica

#define LATTICA_CUDA_CHECK(call) ::lattica::cuda_check((call), #call, __FILE__, __LINE__)

/// cuBLAS calls: the status's number and name in the message.
#define LATTICA_CUBLAS_CHECK(call)                                                   \
  do {                                                                               \
    const int lattica_status = static_cast<int>(call);                               \
    if (lattica_status != 0)                                                         \
      throw ::lattica::CudaError(std::string("cuBLAS error at ") + __FILE__ + ":" +  \
                                 std::to_string(__LINE__) + ": " #call ": status " + \
                                 std::to_string(lattica_status));                    \
  } while (0)

/// After a kernel launch: launch errors always; execution errors too when the build asks
/// for synchronous checks (debug and test builds define LATTICA_SYNC_CHECKS). cudaGetLastError
/// (not Peek) clears a failed launch's error, so the next launch is not blamed for it.
#if defined(LATTICA_SYNC_CHECKS)
#define LATTICA_CUDA_CHECK_LAUNCH(stream)              \
  do {                                                 \
    LATTICA_CUDA_CHECK(cudaGetLastError());            \
    LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream)); \
  } while (0)
#else
#define LATTICA_CUDA_CHECK_LAUNCH(stream) LATTICA_CUDA_CHECK(cudaGetLastError())
#endif
