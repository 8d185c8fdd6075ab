#pragma once
// A double-precision complex number laid out as FFTW's fftw_complex and cuFFT's
// cufftDoubleComplex (re, im), so spectra pass between the libraries and the site functors.

#include "kernels/common/host_device.hpp"

namespace lattica {

struct Complex {
  double re, im;
};

LATTICA_HD_INLINE double norm2(const Complex& z) { return z.re * z.re + z.im * z.im; }

/// Number of complex outputs of a real-to-complex transform of a row-major array: the last
/// axis keeps L/2 + 1 entries (the rest follow from Hermitian symmetry).
inline int64_t half_spectrum_size(const int64_t* dims, int d) {
  int64_t n = dims[d - 1] / 2 + 1;
  for (int a = 0; a < d - 1; ++a) n *= dims[a];
  return n;
}

/// Index in the half spectrum of the unit momentum along axis a (its row-major stride there).
inline int64_t half_spectrum_unit_mode(const int64_t* dims, int d, int a) {
  int64_t stride = 1;
  for (int b = d - 1; b > a; --b) stride *= b == d - 1 ? dims[b] / 2 + 1 : dims[b];
  return stride;
}

}  // namespace lattica
