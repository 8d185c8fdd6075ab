#pragma once
// Batched multi-dimensional real <-> complex FFTs on the GPU with cuFFT, with the conventions of
// the FFTW wrapper (fft_cpu.hpp): unnormalised, row-major, half spectrum on the last axis.

#include <cufft.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend/cuda_check.hpp"
#include "kernels/spectral/complex.hpp"

namespace lattica {

inline void cufft_check(cufftResult status, const char* call, const char* file, int line) {
  if (status != CUFFT_SUCCESS) {
    throw CudaError(std::string("cuFFT error at ") + file + ":" + std::to_string(line) + ": " +
                    call + ": cufftResult " + std::to_string(static_cast<int>(status)));
  }
}
#define LATTICA_CUFFT_CHECK(call) ::lattica::cufft_check((call), #call, __FILE__, __LINE__)

class CudaFft {
 public:
  /// Plans `batch` transforms of row-major arrays of extents dims on `stream`.
  CudaFft(const std::vector<int64_t>& dims, int batch, cudaStream_t stream) : batch_(batch) {
    std::vector<long long> n(dims.begin(), dims.end());
    real_size_ = 1;
    for (int64_t l : dims) real_size_ *= l;
    complex_size_ = half_spectrum_size(dims.data(), static_cast<int>(dims.size()));
    size_t work = 0;
    const int rank = static_cast<int>(n.size());
    LATTICA_CUFFT_CHECK(cufftCreate(&forward_));
    LATTICA_CUFFT_CHECK(cufftMakePlanMany64(forward_, rank, n.data(), nullptr, 1, real_size_,
                                            nullptr, 1, complex_size_, CUFFT_D2Z, batch, &work));
    LATTICA_CUFFT_CHECK(cufftSetStream(forward_, stream));
    LATTICA_CUFFT_CHECK(cufftCreate(&inverse_));
    LATTICA_CUFFT_CHECK(cufftMakePlanMany64(inverse_, rank, n.data(), nullptr, 1, complex_size_,
                                            nullptr, 1, real_size_, CUFFT_Z2D, batch, &work));
    LATTICA_CUFFT_CHECK(cufftSetStream(inverse_, stream));
    stream_ = stream;
    LATTICA_CUDA_CHECK(cudaMalloc(&scratch_, sizeof(Complex) * complex_size_ * batch_));
  }
  CudaFft(const CudaFft&) = delete;
  CudaFft& operator=(const CudaFft&) = delete;
  ~CudaFft() {
    cufftDestroy(forward_);  // errors here cannot be reported
    cufftDestroy(inverse_);
    cudaFree(scratch_);
  }

  /// d_out[b][k] = sum_x d_in[b][x] exp(-i k.x); asynchronous on the stream.
  void forward(const double* d_in, Complex* d_out) const {
    LATTICA_CUFFT_CHECK(cufftExecD2Z(forward_, const_cast<double*>(d_in),
                                     reinterpret_cast<cufftDoubleComplex*>(d_out)));
  }

  /// d_out[b][x] = sum_k d_in[b][k] exp(+i k.x) over the full spectrum; d_in is kept.
  void inverse(const Complex* d_in, double* d_out) const {
    // Z2D overwrites its input, so it transforms a copy.
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(scratch_, d_in, sizeof(Complex) * complex_size_ * batch_,
                                       cudaMemcpyDeviceToDevice, stream_));
    LATTICA_CUFFT_CHECK(
        cufftExecZ2D(inverse_, reinterpret_cast<cufftDoubleComplex*>(scratch_), d_out));
  }

  int64_t real_size() const { return real_size_; }
  int64_t complex_size() const { return complex_size_; }

 private:
  int batch_;
  int64_t real_size_ = 0, complex_size_ = 0;
  cufftHandle forward_ = 0, inverse_ = 0;
  cudaStream_t stream_ = nullptr;
  Complex* scratch_ = nullptr;
};

}  // namespace lattica
