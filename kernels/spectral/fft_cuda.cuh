#pragma once
// Batched multi-dimensional real <-> complex FFTs on the GPU with cuFFT, with the conventions of
// the FFTW wrapper (fft_cpu.hpp): unnormalised, row-major, half spectrum on the last axis.

#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <memory>
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

/// One cuFFT work area for every plan of one stream. cuFFT gives each plan its own area by
/// default, often as large as the data (8 bytes a site for double transforms of many sizes);
/// plans that run one after another on one stream can share the largest one instead, which for
/// the spectra plus MALA, or a distributed FFT's row and column plans, saves up to 24 bytes a
/// site. Plans hold a shared_ptr to it, so it outlives them whatever the order of destruction.
class CufftWorkArea {
 public:
  CufftWorkArea() = default;
  CufftWorkArea(const CufftWorkArea&) = delete;
  CufftWorkArea& operator=(const CufftWorkArea&) = delete;
  ~CufftWorkArea() { cudaFree(area_); }  // errors here cannot be reported

  /// Makes `plan` (its auto-allocation off) with `make(&work_bytes)` and gives it the area,
  /// grown first if it needs more. Growing waits for the device's queued work, which may still
  /// use the old area, and hands the new one to every plan.
  template <class MakePlan>
  void plan(cufftHandle handle, const MakePlan& make) {
    LATTICA_CUFFT_CHECK(cufftSetAutoAllocation(handle, 0));
    size_t needed = 0;
    make(&needed);
    plans_.push_back(handle);
    if (needed > bytes_) {
      LATTICA_CUDA_CHECK(cudaDeviceSynchronize());
      LATTICA_CUDA_CHECK(cudaFree(area_));
      area_ = nullptr;
      bytes_ = 0;
      LATTICA_CUDA_CHECK(cudaMalloc(&area_, needed));
      bytes_ = needed;
      for (cufftHandle p : plans_) LATTICA_CUFFT_CHECK(cufftSetWorkArea(p, area_));
    } else {
      LATTICA_CUFFT_CHECK(cufftSetWorkArea(handle, area_));
    }
  }
  /// Forgets a plan about to be destroyed (the area stays at its size).
  void release(cufftHandle handle) {
    plans_.erase(std::remove(plans_.begin(), plans_.end(), handle), plans_.end());
  }

 private:
  std::vector<cufftHandle> plans_;
  void* area_ = nullptr;
  size_t bytes_ = 0;
};

class CudaFft {
 public:
  /// Plans `batch` transforms of row-major arrays of extents dims on `stream`, whose plans share
  /// `work`. cuFFT plans go up to rank 3, so a 4-D transform is a batched 3-D one over the last
  /// three axes followed by complex transforms along axis 0.
  CudaFft(const std::vector<int64_t>& dims, int batch, cudaStream_t stream,
          std::shared_ptr<CufftWorkArea> work)
      : batch_(batch), stream_(stream), work_(std::move(work)) {
    real_size_ = 1;
    for (int64_t l : dims) real_size_ *= l;
    complex_size_ = half_spectrum_size(dims.data(), static_cast<int>(dims.size()));
    const bool split = dims.size() == 4;
    const std::vector<long long> n(dims.begin() + (split ? 1 : 0), dims.end());
    const long long planes = split ? dims[0] : 1;  // 3-D blocks per batch member
    const long long real_block = real_size_ / planes, complex_block = complex_size_ / planes;
    const int rank = static_cast<int>(n.size());
    LATTICA_CUFFT_CHECK(cufftCreate(&forward_));
    work_->plan(forward_, [&](size_t* bytes) {
      LATTICA_CUFFT_CHECK(cufftMakePlanMany64(forward_, rank, const_cast<long long*>(n.data()),
                                              nullptr, 1, real_block, nullptr, 1, complex_block,
                                              CUFFT_D2Z, batch * planes, bytes));
    });
    LATTICA_CUFFT_CHECK(cufftSetStream(forward_, stream));
    LATTICA_CUFFT_CHECK(cufftCreate(&inverse_));
    work_->plan(inverse_, [&](size_t* bytes) {
      LATTICA_CUFFT_CHECK(cufftMakePlanMany64(inverse_, rank, const_cast<long long*>(n.data()),
                                              nullptr, 1, complex_block, nullptr, 1, real_block,
                                              CUFFT_Z2D, batch * planes, bytes));
    });
    LATTICA_CUFFT_CHECK(cufftSetStream(inverse_, stream));
    if (split) {
      // Length-L0 transforms down axis 0 of one batch member: stride = one 3-D block.
      long long length = planes, embed = planes;
      LATTICA_CUFFT_CHECK(cufftCreate(&axis0_));
      work_->plan(axis0_, [&](size_t* bytes) {
        LATTICA_CUFFT_CHECK(cufftMakePlanMany64(axis0_, 1, &length, &embed, complex_block, 1,
                                                &embed, complex_block, 1, CUFFT_Z2Z, complex_block,
                                                bytes));
      });
      LATTICA_CUFFT_CHECK(cufftSetStream(axis0_, stream));
    }
  }
  CudaFft(const CudaFft&) = delete;
  CudaFft& operator=(const CudaFft&) = delete;
  ~CudaFft() {
    for (cufftHandle plan : {forward_, inverse_, axis0_}) {
      if (!plan) continue;
      work_->release(plan);
      cufftDestroy(plan);  // errors here cannot be reported
    }
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
  std::shared_ptr<CufftWorkArea> work_;
  cufftHandle forward_ = 0, inverse_ = 0, axis0_ = 0;
  mutable Complex* scratch_ = nullptr;
};

/// In-place complex transforms of `lines` interleaved lines of `length` points (point k of line
/// t at data[k * lines + t]), as CpuLinesFft, with cuFFT on `stream`, sharing `work`.
class CudaLinesFft {
 public:
  CudaLinesFft(int64_t length, int64_t lines, cudaStream_t stream,
               std::shared_ptr<CufftWorkArea> work)
      : work_(std::move(work)) {
    long long n = length, embed = length;
    LATTICA_CUFFT_CHECK(cufftCreate(&plan_));
    work_->plan(plan_, [&](size_t* bytes) {
      LATTICA_CUFFT_CHECK(cufftMakePlanMany64(plan_, 1, &n, &embed, lines, 1, &embed, lines, 1,
                                              CUFFT_Z2Z, lines, bytes));
    });
    LATTICA_CUFFT_CHECK(cufftSetStream(plan_, stream));
  }
  CudaLinesFft(const CudaLinesFft&) = delete;
  CudaLinesFft& operator=(const CudaLinesFft&) = delete;
  ~CudaLinesFft() {
    work_->release(plan_);
    cufftDestroy(plan_);  // errors here cannot be reported
  }

  /// Asynchronous on the stream, like CpuLinesFft's.
  void forward(Complex* d_data) const { execute(d_data, CUFFT_FORWARD); }
  void inverse(Complex* d_data) const { execute(d_data, CUFFT_INVERSE); }

 private:
  void execute(Complex* d_data, int direction) const {
    auto* d = reinterpret_cast<cufftDoubleComplex*>(d_data);
    LATTICA_CUFFT_CHECK(cufftExecZ2Z(plan_, d, d, direction));
  }
  std::shared_ptr<CufftWorkArea> work_;
  cufftHandle plan_ = 0;
};

}  // namespace lattica
