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
