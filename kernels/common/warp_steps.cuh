#pragma once
// Loops over index ranges whose passes keep each warp's lanes together. Since Volta a warp's
// lanes that a branch or a loop divided need not meet again where the code joins, and a
// grid-stride loop whose body has such a branch (a find walking a tree, a draw made only where
// a move is uncertain) can run every later pass at a fraction of its lanes: the tiles' unions of
// the cluster labelling ran at 8.7 of 32 active lanes (Nsight Compute, H200,
// tests/bench/results/session_g_nvidia_h200/ncu_sw_8192_tiles.txt). Here every lane of a warp
// takes the same passes (the lanes past the end call nothing) and the warp meets at the end of
// each (__syncwarp), so each pass starts with the whole warp.

#include <cstdint>

namespace lattica {

/// body(i) for i = first, first + stride, ... below n, where first is this thread's first index
/// and the lanes of a warp have consecutive firsts. Precondition: blockDim.x and stride are
/// multiples of 32 (every lane of each warp is a thread of the block).
template <class Index, class Body>
__device__ __forceinline__ void for_strided_in_warp_step(Index first, Index stride, Index n,
                                                         const Body& body) {
  const Index lane = static_cast<Index>(threadIdx.x & 31);
  for (Index base = first - lane; base < n; base += stride) {
    if (base + lane < n) body(base + lane);
    __syncwarp();
  }
}

}  // namespace lattica
