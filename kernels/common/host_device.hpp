#pragma once
/// Marks functions that compile for both the host and the CUDA device. Under a plain C++
/// compiler it expands to nothing, so the same physics header serves both backends.
#if defined(__CUDACC__)
#define LATTICA_HD __host__ __device__
#define LATTICA_HD_INLINE __host__ __device__ __forceinline__
#else
#define LATTICA_HD
#define LATTICA_HD_INLINE inline
#endif

/// Asks nvcc to unroll the next loop (small fixed trip counts whose per-iteration values must
/// stay in registers); a no-op for the host compiler.
#if defined(__CUDA_ARCH__)
#define LATTICA_UNROLL _Pragma("unroll")
#else
#define LATTICA_UNROLL
#endif

/// Whether this is the device pass of a CUDA compilation, for `if constexpr` choices of code that
/// only the GPU should run (the host pass and plain C++ see false).
#if defined(__CUDA_ARCH__)
constexpr bool kDeviceCode = true;
#else
constexpr bool kDeviceCode = false;
#endif

/// p, with the compiler told nothing about where it points: the device code then adds 32-bit
/// offsets to it as one wide multiply-add each, instead of folding the 64-bit offsets that formed
/// p into every address (session l, call 7: O(3) float over-relaxation 84.5 -> 87.5 updates/ns).
/// The identity on the host.
template <class T>
LATTICA_HD_INLINE T* opaque_pointer(T* p) {
#if defined(__CUDA_ARCH__)
  asm("" : "+l"(p));
#endif
  return p;
}
