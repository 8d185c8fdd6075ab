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
