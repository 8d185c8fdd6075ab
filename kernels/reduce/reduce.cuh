#pragma once
// Sum reductions on the GPU: warp shuffle -> block (one value per warp in shared memory)
// -> grid (per-block partials, which the last block to finish adds in block order, in the same
// launch). The grid and block shapes are fixed for a given n, so the order of additions, and
// hence a floating-point result, is repeatable.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/cuda_check.hpp"

namespace lattica {

constexpr int kReduceBlock = 256;       ///< threads per block in both passes
constexpr int kReduceMaxBlocks = 1024;  ///< partials the second pass adds

/// Shuffles any trivially copyable value down by `offset` lanes, one 32-bit word at a time.
template <class T>
__device__ __forceinline__ T shuffle_down(const T& value, int offset) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) % 4 == 0,
                "shuffle_down needs a trivially copyable type of whole 32-bit words");
  constexpr int words = sizeof(T) / 4;
  unsigned int in[words];
  unsigned int out[words];
  memcpy(in, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < words; ++w) out[w] = __shfl_down_sync(0xffffffffu, in[w], offset);
  T result;
  memcpy(&result, out, sizeof(T));
  return result;
}

/// Sum over the 32 lanes of a full warp; lane 0 holds the result.
template <class T>
__device__ __forceinline__ T warp_reduce_sum(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value = value + shuffle_down(value, offset);
  return value;
}

/// Sum over a block of kReduceBlock threads; thread 0 holds the result.
template <class T>
__device__ __forceinline__ T block_reduce_sum(T value) {
  constexpr int warps = kReduceBlock / 32;
  __shared__ alignas(16) unsigned char raw[warps * sizeof(T)];  // aligned for any T
  T* per_warp = reinterpret_cast<T*>(raw);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  value = warp_reduce_sum(value);
  if (lane == 0) per_warp[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < warps ? per_warp[lane] : T{};
    value = warp_reduce_sum(value);
  }
  return value;
}

/// *p read past the (non-coherent) L1 cache, one 32-bit word at a time: other blocks wrote it.
template <class T>
__device__ __forceinline__ T load_from_l2(const T* p) {
  constexpr int words = sizeof(T) / 4;
  unsigned int raw[words];
  const unsigned int* in = reinterpret_cast<const unsigned int*>(p);
#pragma unroll
  for (int w = 0; w < words; ++w) raw[w] = __ldcg(in + w);
  T value;
  memcpy(&value, raw, sizeof(T));
  return value;
}

/// This block's sum of f(leading..., i) over its grid-stride share of [0, n); thread 0 holds
/// it. (f stays a reference to the kernel's parameter: a copy of a functor holding large Params,
/// such as Potts', would go to local memory in every thread.)
template <class T, class F, class... Leading>
__device__ __forceinline__ T block_sum_of(int64_t n, const F& f, Leading... leading) {
  T sum{};
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kReduceBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kReduceBlock + threadIdx.x; i < n;
       i += stride) {
    sum = sum + f(leading..., i);
  }
  return block_reduce_sum(sum);
}

/// Resident blocks per SM the reductions of read-only functors are compiled for (at most 32
/// registers a thread): sums of up to 16 bytes (numbers, the discrete models' exact sums) keep
/// full occupancy; larger sums (O(n): 96 bytes) leave the register count to the compiler. The
/// accumulations below take functors that update sites and return their sums, and have no such
/// bound: held to 32 registers, the multi-spin update over runs of 4 words spilled 588 bytes a
/// thread, and measuring every sweep cost 61 % of the sweep instead of 8-12 % (H200, 2D 8192^2,
/// tests/bench/results/session_k_nvidia_h200/call6-7).
template <class T>
constexpr int reduce_min_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
  constexpr int threads_per_sm = 1024;  // Turing
#else
  constexpr int threads_per_sm = 2048;
#endif
  return sizeof(T) <= 16 ? threads_per_sm / kReduceBlock : 1;
}

/// Block b sums f(i) over a grid-stride range into partials[b]; the block that finishes last
/// (the ticket counts finished blocks) adds the partials in block order into *result and resets
/// the ticket for the next reduction.
template <class T, class F>
__global__ void __launch_bounds__(kReduceBlock, reduce_min_blocks<T>())
    reduce_sum_kernel(int64_t n, F f, T* partials, unsigned int* ticket, T* result) {
  T sum = block_sum_of<T>(n, f);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    __threadfence();  // the partial is visible before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  sum = T{};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kReduceBlock) {
    sum = sum + load_from_l2(partials + b);
  }
  sum = block_reduce_sum(sum);
  if (threadIdx.x == 0) {
    *result = sum;
    *ticket = 0;
  }
}

/// *result += sum, for sums of 64-bit integer fields: one atomicAdd per nonzero field. Integer
/// addition is exact in any order, so what the blocks add equals the ordered reduction.
template <class T>
__device__ __forceinline__ void add_exact(T* result, const T& sum) {
  static_assert(sizeof(T) % 8 == 0, "sums of 64-bit integer fields");
  constexpr int words = sizeof(T) / 8;
  unsigned long long partial[words];
  memcpy(partial, &sum, sizeof(T));
  auto* out = reinterpret_cast<unsigned long long*>(result);
#pragma unroll
  for (int w = 0; w < words; ++w) {
    if (partial[w] != 0) atomicAdd(out + w, partial[w]);  // two's complement: signed too
  }
}

/// *result += the sum of f(i) over a grid-stride range, for sums of 64-bit integers only: each
/// block adds its partial (add_exact), so no block waits to add the partials (the fused
/// update-and-measure passes would otherwise end on that tail every sweep). Registers as f
/// needs them (reduce_min_blocks).
template <class T, class F>
__global__ void __launch_bounds__(kReduceBlock) accumulate_exact_kernel(int64_t n, F f, T* result) {
  const T sum = block_sum_of<T>(n, f);
  if (threadIdx.x == 0) add_exact(result, sum);
}

/// results[first + s] += the sum of f(first + s, i) over block row s's grid-stride share of
/// [0, n), s = blockIdx.y, for sums of 64-bit integers only (add_exact).
template <class T, class F>
__global__ void __launch_bounds__(kReduceBlock)
    accumulate_exact_segments_kernel(int64_t n, F f, int64_t first, T* results) {
  const int64_t segment = first + static_cast<int64_t>(blockIdx.y);
  const T sum = block_sum_of<T>(n, f, segment);
  if (threadIdx.x == 0) add_exact(results + segment, sum);
}

/// Block (b, s) sums f(first + s, i) over its grid-stride share of [0, n), striding by the
/// grid's x extent as reduce_sum_kernel does, into partials[s * gridDim.x + b].
template <class T, class F>
__global__ void __launch_bounds__(kReduceBlock, reduce_min_blocks<T>())
    segment_partials_kernel(int64_t n, F f, int64_t first, T* partials) {
  const T sum = block_sum_of<T>(n, f, first + static_cast<int64_t>(blockIdx.y));
  if (threadIdx.x == 0) partials[static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x] = sum;
}

/// Block s adds segment s's `blocks` partials in block order into results[s], as the last
/// block of reduce_sum_kernel adds its partials: the segment's sum bit for bit as a reduction
/// of that segment alone would give it.
template <class T>
__global__ void __launch_bounds__(kReduceBlock)
    segment_totals_kernel(const T* partials, int blocks, T* results) {
  const T* own = partials + static_cast<int64_t>(blockIdx.x) * blocks;
  T sum{};
  for (int b = threadIdx.x; b < blocks; b += kReduceBlock) sum = sum + own[b];
  sum = block_reduce_sum(sum);
  if (threadIdx.x == 0) results[blockIdx.x] = sum;
}

/// Number of blocks for n elements.
inline int reduce_blocks(int64_t n) {
  const int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > kReduceMaxBlocks ? kReduceMaxBlocks : blocks));
}

/// Sum of f(i), i in [0, n), into device memory *d_result, in one launch. d_partials must hold
/// kReduceMaxBlocks values of T; *d_ticket must be 0 (it is left 0). Reductions sharing
/// d_partials and d_ticket must be ordered (one stream). Asynchronous on `stream`.
template <class T, class F>
void device_reduce_sum(int64_t n, const F& f, T* d_partials, unsigned int* d_ticket, T* d_result,
                       cudaStream_t stream) {
  reduce_sum_kernel<T>
      <<<reduce_blocks(n), kReduceBlock, 0, stream>>>(n, f, d_partials, d_ticket, d_result);
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// d_results[s] = the sum of f(s, i), i in [0, n), for every segment s in [0, segments): each
/// bit for bit device_reduce_sum's of that segment alone, in two launches per chunk of segments
/// whose partials fit in d_partials (`capacity` values of T, at least kReduceMaxBlocks), not two
/// per segment. Asynchronous on `stream`.
template <class T, class F>
void device_reduce_segments(int64_t segments, int64_t n, const F& f, T* d_partials,
                            int64_t capacity, T* d_results, cudaStream_t stream) {
  const int blocks = reduce_blocks(n);
  const int64_t chunk = capacity / blocks;  // >= 1: blocks <= kReduceMaxBlocks <= capacity
  for (int64_t first = 0; first < segments; first += chunk) {
    const auto count = static_cast<unsigned>(chunk < segments - first ? chunk : segments - first);
    segment_partials_kernel<T>
        <<<dim3(static_cast<unsigned>(blocks), count), kReduceBlock, 0, stream>>>(n, f, first,
                                                                                  d_partials);
    LATTICA_CUDA_CHECK_LAUNCH(stream);
    segment_totals_kernel<T>
        <<<count, kReduceBlock, 0, stream>>>(d_partials, blocks, d_results + first);
    LATTICA_CUDA_CHECK_LAUNCH(stream);
  }
}

/// d_results[s] += the sum of f(s, i), i in [0, n), for every s in [0, segments) and T of 64-bit
/// integer fields (accumulate_exact_segments_kernel), on `blocks` blocks per segment (at most
/// 65535 segments per launch: the grid's y extent); asynchronous on `stream`.
template <class T, class F>
void device_accumulate_exact_segments(int64_t segments, int64_t n, const F& f, T* d_results,
                                      int64_t blocks, cudaStream_t stream) {
  constexpr int64_t kMaxRows = 65535;
  for (int64_t first = 0; first < segments; first += kMaxRows) {
    const auto rows =
        static_cast<unsigned>(kMaxRows < segments - first ? kMaxRows : segments - first);
    accumulate_exact_segments_kernel<T>
        <<<dim3(static_cast<unsigned>(blocks), rows), kReduceBlock, 0, stream>>>(n, f, first,
                                                                                 d_results);
    LATTICA_CUDA_CHECK_LAUNCH(stream);
  }
}

/// *d_result += the sum of f(i), i in [0, n), for T of 64-bit integer fields
/// (accumulate_exact_kernel), on `blocks` blocks; asynchronous on `stream`.
template <class T, class F>
void device_accumulate_exact(int64_t n, const F& f, T* d_result, int64_t blocks,
                             cudaStream_t stream) {
  accumulate_exact_kernel<T>
      <<<static_cast<unsigned>(blocks), kReduceBlock, 0, stream>>>(n, f, d_result);
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace lattica
