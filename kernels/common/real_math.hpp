#pragma once
// Elementary functions in the precision of a continuous model's field (float or double), the
// same names on host and device. The C functions are used (not std::) because both the host
// library and the CUDA device library provide them under these names.

#include <math.h>

#include "kernels/common/host_device.hpp"

namespace lattica {
namespace real_math {

LATTICA_HD_INLINE float sqrt(float x) { return ::sqrtf(x); }
LATTICA_HD_INLINE double sqrt(double x) { return ::sqrt(x); }
LATTICA_HD_INLINE float log(float x) { return ::logf(x); }
LATTICA_HD_INLINE double log(double x) { return ::log(x); }
LATTICA_HD_INLINE float exp(float x) { return ::expf(x); }
LATTICA_HD_INLINE double exp(double x) { return ::exp(x); }
LATTICA_HD_INLINE float log1p(float x) { return ::log1pf(x); }
LATTICA_HD_INLINE double log1p(double x) { return ::log1p(x); }
LATTICA_HD_INLINE float expm1(float x) { return ::expm1f(x); }
LATTICA_HD_INLINE double expm1(double x) { return ::expm1(x); }
LATTICA_HD_INLINE float cos(float x) { return ::cosf(x); }
LATTICA_HD_INLINE double cos(double x) { return ::cos(x); }
LATTICA_HD_INLINE float sin(float x) { return ::sinf(x); }
LATTICA_HD_INLINE double sin(double x) { return ::sin(x); }
/// 1 / sqrt(x) for x > 0, within 2 ulp: the device's reciprocal square root (one special-function
/// instruction in float, where sqrt and a division are some 20 with their range checks), the
/// quotient on the host. For renormalising unit vectors, where the next move's renormalisation
/// absorbs an ulp.
LATTICA_HD_INLINE float inverse_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / ::sqrtf(x);
#endif
}
LATTICA_HD_INLINE double inverse_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrt(x);
#else
  return 1.0 / ::sqrt(x);
#endif
}
/// sin(x) and cos(x) from one argument reduction (the same values as sin() and cos()).
LATTICA_HD_INLINE void sincos(float x, float* s, float* c) { ::sincosf(x, s, c); }
LATTICA_HD_INLINE void sincos(double x, double* s, double* c) { ::sincos(x, s, c); }
LATTICA_HD_INLINE float acos(float x) { return ::acosf(x); }
LATTICA_HD_INLINE double acos(double x) { return ::acos(x); }
LATTICA_HD_INLINE float pow(float x, float y) { return ::powf(x, y); }
LATTICA_HD_INLINE double pow(double x, double y) { return ::pow(x, y); }

template <class Real>
constexpr Real kPi = Real(3.14159265358979323846264338327950288);

}  // namespace real_math
}  // namespace lattica
