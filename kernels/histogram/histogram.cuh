#pragma once
// Integer histograms on the GPU. Each block counts into its own shared-memory histogram and
// merges it into global memory once. Warps aggregate lanes that hold the same bin as lane 0
// into one atomic (a whole warp in one bin: one atomic of 32), which keeps heavily contended
// data (every value in one bin) fast without the cost of matching every lane; the other lanes
// add one each. Histograms too wide for shared memory count into global memory directly, with
// the same aggregation. Counts are integers, so the result does not depend on the order of the
// atomics.

#include <cstdint>

#include "kernels/common/cuda_check.hpp"

namespace lattica {

constexpr int kHistogramBlock = 256;
/// Widest histogram counted in shared memory (32-bit counters, 32 KiB per block).
constexpr int kHistogramSharedBins = 8192;

/// Elements each thread bins per step of its grid-stride loop (loads in flight together).
constexpr int kHistogramItems = 4;
/// Resident blocks per multiprocessor the histograms launch (each merges its bins once).
constexpr int kHistogramBlocksPerSm = 8;

/// Calls add(bin, amount) for a bin every lane of a full warp computed (bin < 0: none): lanes
/// with lane 0's bin as one call, the others one call each.
template <class Add>
__device__ __forceinline__ void add_warp_bins(int64_t bin, Add& add) {
  const int64_t leader_bin = __shfl_sync(0xffffffffu, bin, 0);
  const unsigned with_leader = __ballot_sync(0xffffffffu, bin == leader_bin);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (lane == 0) {
    if (bin >= 0) add(bin, __popc(with_leader));
  } else if (bin >= 0 && ((with_leader >> lane) & 1) == 0) {
    add(bin, 1);
  }
}

/// Bins every i in [0, n) of this thread's grid-stride range, kHistogramItems at a time. Whole
/// warps iterate together (the bound is rounded up), so every lane joins the aggregation.
template <class F, class Add>
__device__ __forceinline__ void count_bins(int64_t n, const F& bin_of, Add add) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kHistogramBlock;
  const int64_t rounded = (n + 31) / 32 * 32;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kHistogramBlock + threadIdx.x; i < rounded;
       i += kHistogramItems * stride) {
    int64_t bins[kHistogramItems];
#pragma unroll
    for (int u = 0; u < kHistogramItems; ++u) {
      const int64_t j = i + u * stride;
      bins[u] = j < n ? bin_of(j) : -1;
    }
#pragma unroll
    for (int u = 0; u < kHistogramItems; ++u) add_warp_bins(bins[u], add);
  }
}

template <class F>
__global__ void __launch_bounds__(kHistogramBlock)
    histogram_shared_kernel(int64_t n, F bin_of, int bins, unsigned long long* counts) {
  __shared__ unsigned int local[kHistogramSharedBins];
  for (int b = threadIdx.x; b < bins; b += kHistogramBlock) local[b] = 0;
  __syncthreads();
  count_bins(n, bin_of, [&](int64_t b, int amount) {
    atomicAdd(&local[b], static_cast<unsigned int>(amount));
  });
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += kHistogramBlock) {
    if (local[b]) atomicAdd(&counts[b], static_cast<unsigned long long>(local[b]));
  }
}

template <class F>
__global__ void __launch_bounds__(kHistogramBlock)
    histogram_global_kernel(int64_t n, F bin_of, unsigned long long* counts) {
  count_bins(n, bin_of, [&](int64_t b, int amount) {
    atomicAdd(&counts[b], static_cast<unsigned long long>(amount));
  });
}

/// counts[b] = number of i in [0, n) with bin_of(i) == b, for b in [0, bins); bin_of may
/// return -1 to skip an element. d_counts (bins entries) is zeroed first. sm_count: the
/// device's multiprocessors. Asynchronous.
template <class F>
void device_histogram(int64_t n, const F& bin_of, int64_t bins, unsigned long long* d_counts,
                      int sm_count, cudaStream_t stream) {
  LATTICA_CUDA_CHECK(
      cudaMemsetAsync(d_counts, 0, static_cast<size_t>(bins) * sizeof(*d_counts), stream));
  if (n <= 0) return;
  int64_t blocks = (n + kHistogramBlock - 1) / kHistogramBlock;
  const int64_t resident = static_cast<int64_t>(sm_count) * kHistogramBlocksPerSm;
  if (blocks > resident) blocks = resident;
  // A block's 32-bit shared counters must not overflow: at most 2^31 elements per block.
  const int64_t min_blocks = (n >> 31) + 1;
  if (blocks < min_blocks) blocks = min_blocks;
  if (bins <= kHistogramSharedBins) {
    histogram_shared_kernel<<<static_cast<unsigned>(blocks), kHistogramBlock, 0, stream>>>(
        n, bin_of, static_cast<int>(bins), d_counts);
  } else {
    histogram_global_kernel<<<static_cast<unsigned>(blocks), kHistogramBlock, 0, stream>>>(
        n, bin_of, d_counts);
  }
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace lattica
