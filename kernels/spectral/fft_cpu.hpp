#pragma once
// Batched multi-dimensional real <-> complex FFTs on the host with FFTW, with the conventions
// of the cuFFT wrapper (fft_cuda.cuh): unnormalised, row-major, half spectrum on the last axis.

#include <fftw3.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/spectral/complex.hpp"

namespace lattica {

class CpuFft {
 public:
  /// Plans `batch` transforms of row-major arrays of extents dims (each <= 2^31 - 1 elements).
  CpuFft(const std::vector<int64_t>& dims, int batch) : batch_(batch) {
    std::vector<int> n(dims.begin(), dims.end());
    real_size_ = 1;
    for (int64_t l : dims) real_size_ *= l;
    complex_size_ = half_spectrum_size(dims.data(), static_cast<int>(dims.size()));
    if (real_size_ * batch > INT32_MAX) throw std::invalid_argument("CpuFft: transform too large");
    // FFTW_ESTIMATE plans without touching the arrays; FFTW_UNALIGNED lets execute() take any.
    std::vector<double> real(static_cast<size_t>(real_size_));
    std::vector<Complex> spectrum(static_cast<size_t>(complex_size_));
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    forward_ = fftw_plan_many_dft_r2c(static_cast<int>(n.size()), n.data(), batch, real.data(),
                                      nullptr, 1, static_cast<int>(real_size_),
                                      reinterpret_cast<fftw_complex*>(spectrum.data()), nullptr, 1,
                                      static_cast<int>(complex_size_), flags);
    inverse_ = fftw_plan_many_dft_c2r(static_cast<int>(n.size()), n.data(), batch,
                                      reinterpret_cast<fftw_complex*>(spectrum.data()), nullptr, 1,
                                      static_cast<int>(complex_size_), real.data(), nullptr, 1,
                                      static_cast<int>(real_size_), flags);
    if (!forward_ || !inverse_) throw std::runtime_error("FFTW: planning failed");
  }
  CpuFft(const CpuFft&) = delete;
  CpuFft& operator=(const CpuFft&) = delete;
  ~CpuFft() {
    if (forward_) fftw_destroy_plan(forward_);
    if (inverse_) fftw_destroy_plan(inverse_);
  }

  /// out[b][k] = sum_x in[b][x] exp(-i k.x) for every batch member b.
  void forward(const double* in, Complex* out) const {
    // FFTW's r2c does not write its input; the const_cast only satisfies the C signature.
    fftw_execute_dft_r2c(forward_, const_cast<double*>(in), reinterpret_cast<fftw_complex*>(out));
  }

  /// out[b][x] = sum_k in[b][k] exp(+i k.x) over the full (Hermitian) spectrum. in is kept.
  void inverse(const Complex* in, double* out) const {
    // A multi-dimensional c2r overwrites its input, so it transforms a copy.
    scratch_.assign(in, in + complex_size_ * batch_);
    inverse_overwriting(scratch_.data(), out);
  }

  /// The inverse, overwriting `in`: no copy, for a spectrum no longer needed.
  void inverse_overwriting(Complex* in, double* out) const {
    fftw_execute_dft_c2r(inverse_, reinterpret_cast<fftw_complex*>(in), out);
  }

  int64_t real_size() const { return real_size_; }
  int64_t complex_size() const { return complex_size_; }

 private:
  int batch_;
  int64_t real_size_ = 0, complex_size_ = 0;
  fftw_plan forward_ = nullptr, inverse_ = nullptr;
  mutable std::vector<Complex> scratch_;
};

/// In-place complex transforms of `lines` interleaved lines of `length` points: point k of
/// line t is data[k * lines + t] ([length][lines], row-major), e.g. the transforms along axis 0
/// of a slab of columns. 64-bit strides (FFTW's guru64 interface), any sizes.
class CpuLinesFft {
 public:
  /// Plans on `data` (length * lines elements, untouched while planning); forward and inverse
  /// then take any array of that shape.
  CpuLinesFft(int64_t length, int64_t lines, Complex* data) {
    const fftw_iodim64 along{length, lines, lines}, across{lines, 1, 1};
    auto* d = reinterpret_cast<fftw_complex*>(data);
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    forward_ = fftw_plan_guru64_dft(1, &along, 1, &across, d, d, FFTW_FORWARD, flags);
    inverse_ = fftw_plan_guru64_dft(1, &along, 1, &across, d, d, FFTW_BACKWARD, flags);
    if (!forward_ || !inverse_)
      throw std::runtime_error("FFTW: planning the line transforms failed");
  }
  CpuLinesFft(const CpuLinesFft&) = delete;
  CpuLinesFft& operator=(const CpuLinesFft&) = delete;
  ~CpuLinesFft() {
    if (forward_) fftw_destroy_plan(forward_);
    if (inverse_) fftw_destroy_plan(inverse_);
  }

  /// data[k][t] = sum_x data[x][t] exp(-i 2 pi k x / length), in place.
  void forward(Complex* data) const { execute(forward_, data); }
  /// The same with exp(+i ...), unnormalised.
  void inverse(Complex* data) const { execute(inverse_, data); }

 private:
  static void execute(fftw_plan plan, Complex* data) {
    auto* d = reinterpret_cast<fftw_complex*>(data);
    fftw_execute_dft(plan, d, d);
  }
  fftw_plan forward_ = nullptr, inverse_ = nullptr;
};

}  // namespace lattica
