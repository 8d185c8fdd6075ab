#pragma once
// Batched multi-dimensional real <-> complex FFTs on the GPU with cuFFT, with the conventions of
// the FFTW wrapper (fft_cpu.hpp): unnormalised, row-major, half spectrum on the last axis.

#include <cufft.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.hpp"
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
  /// Plans `batch` transforms of row-major arrays of extents dims on `stream`. cuFFT plans go up
  /// to rank 3, so a 4-D transform is a batched 3-D one over the last three axes followed by
  /// complex transforms along axis 0.
  CudaFft(const std::vector<int64_t>& dims, int batch, cudaStream_t stream)
      : batch_(batch), stream_(stream) {
    real_size_ = 1;
    for (int64_t l : dims) real_size_ *= l;
    complex_size_ = half_spectrum_size(dims.data(), static_cast<int>(dims.size()));
    const bool split = dims.size() == 4;
    const std::vector<long long> n(dims.begin() + (split ? 1 : 0), dims.end());
    const long long planes = split ? dims[0] : 1;  // 3-D blocks per batch member
    const long long real_block = real_size_ / planes, complex_block = complex_size_ / planes;
    const int rank = static_cast<int>(n.size());
    size_t work = 0;
    LATTICA_CUFFT_CHECK(cufftCreate(&forward_));
    LATTICA_CUFFT_CHECK(cufftMakePlanMany64(forward_, rank, const_cast<long long*>(n.data()),
                                            nullptr, 1, real_block, nullptr, 1, complex_block,
                                            CUFFT_D2Z, batch * planes, &work));
    LATTICA_CUFFT_CHECK(cufftSetStream(forward_, stream));
    LATTICA_CUFFT_CHECK(cufftCreate(&inverse_));
    LATTICA_CUFFT_CHECK(cufftMakePlanMany64(inverse_, rank, const_cast<long long*>(n.data()),
                                            nullptr, 1, complex_block, nullptr, 1, real_block,
                                            CUFFT_Z2D, batch * planes, &work));
    LATTICA_CUFFT_CHECK(cufftSetStream(inverse_, stream));
    if (split) {
      // Length-L0 transforms down axis 0 of one batch member: stride = one 3-D block.
      long long length = planes, embed = planes;
      LATTICA_CUFFT_CHECK(cufftCreate(&axis0_));
      LATTICA_CUFFT_CHECK(cufftMakePlanMany64(axis0_, 1, &length, &embed, complex_block, 1, &embed,
                                              complex_block, 1, CUFFT_Z2Z, complex_block, &work));
      LATTICA_CUFFT_CHECK(cufftSetStream(axis0_, stream));
    }
  }
  CudaFft(const CudaFft&) = delete;
  CudaFft& operator=(const CudaFft&) = delete;
  ~CudaFft() {
    cufftDestroy(forward_);  // errors here cannot be reported
    cufftDestroy(inverse_);
    if (axis0_) cufftDestroy(axis0_);
    cudaFree(scratch_);
  }

  /// d_out[b][k] = sum_x d_in[b][x] exp(-i k.x); asynchronous on the stream.
  void forward(const double* d_in, Complex* d_out) const {
    LATTICA_CUFFT_CHECK(cufftExecD2Z(forward_, const_cast<double*>(d_in),
                                     reinterpret_cast<cufftDoubleComplex*>(d_out)));
    along_axis0(d_out, CUFFT_FORWARD);
  }

  /// d_out[b][x] = sum_k d_in[b][k] exp(+i k.x) over the full spectrum; d_in is kept.
  void inverse(const Complex* d_in, double* d_out) const {
    // Z2D overwrites its input, so it transforms a copy (the scratch is made at first use).
    if (!scratch_)
      LATTICA_CUDA_CHECK(cudaMalloc(&scratch_, sizeof(Complex) * complex_size_ * batch_));
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(scratch_, d_in, sizeof(Complex) * complex_size_ * batch_,
                                       cudaMemcpyDeviceToDevice, stream_));
    inverse_overwriting(scratch_, d_out);
  }

  /// The inverse, overwriting d_in: no copy and no scratch, for a spectrum no longer needed.
  void inverse_overwriting(Complex* d_in, double* d_out) const {
    along_axis0(d_in, CUFFT_INVERSE);
    LATTICA_CUFFT_CHECK(cufftExecZ2D(inverse_, reinterpret_cast<cufftDoubleComplex*>(d_in), d_out));
  }

  int64_t real_size() const { return real_size_; }
  int64_t complex_size() const { return complex_size_; }

 private:
  /// 4-D only: the in-place complex transforms along axis 0 of every batch member.
  void along_axis0(Complex* d_data, int direction) const {
    if (!axis0_) return;
    for (int b = 0; b < batch_; ++b) {
      auto* member = reinterpret_cast<cufftDoubleComplex*>(d_data + b * complex_size_);
      LATTICA_CUFFT_CHECK(cufftExecZ2Z(axis0_, member, member, direction));
    }
  }

  int batch_;
  cudaStream_t stream_ = nullptr;
  int64_t real_size_ = 0, complex_size_ = 0;
  cufftHandle forward_ = 0, inverse_ = 0, axis0_ = 0;
  mutable Complex* scratch_ = nullptr;
};

/// In-place complex transforms of `lines` interleaved lines of `length` points (point k of line
/// t at data[k * lines + t]), as CpuLinesFft, with cuFFT on `stream`.
class CudaLinesFft {
 public:
  CudaLinesFft(int64_t length, int64_t lines, cudaStream_t stream) {
    long long n = length, embed = length;
    size_t work = 0;
    LATTICA_CUFFT_CHECK(cufftCreate(&plan_));
    LATTICA_CUFFT_CHECK(cufftMakePlanMany64(plan_, 1, &n, &embed, lines, 1, &embed, lines, 1,
                                            CUFFT_Z2Z, lines, &work));
    LATTICA_CUFFT_CHECK(cufftSetStream(plan_, stream));
  }
  CudaLinesFft(const CudaLinesFft&) = delete;
  CudaLinesFft& operator=(const CudaLinesFft&) = delete;
  ~CudaLinesFft() { cufftDestroy(plan_); }  // errors here cannot be reported

  /// Asynchronous on the stream, like CpuLinesFft's.
  void forward(Complex* d_data) const { execute(d_data, CUFFT_FORWARD); }
  void inverse(Complex* d_data) const { execute(d_data, CUFFT_INVERSE); }

 private:
  void execute(Complex* d_data, int direction) const {
    auto* d = reinterpret_cast<cufftDoubleComplex*>(d_data);
    LATTICA_CUFFT_CHECK(cufftExecZ2Z(plan_, d, d, direction));
  }
  cufftHandle plan_ = 0;
};

}  // namespace lattica
