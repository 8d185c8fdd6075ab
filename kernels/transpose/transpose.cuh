#pragma once
// Transposes and layout permutations on the GPU: batched 2-D transposes, axis permutations of
// rank 2 to 5, and checkerboard storage <-> lexicographic order. Every launch is asynchronous
// on the given stream; inputs and outputs must not overlap. Host versions and the shape
// conventions are in transpose.hpp.
//
// How a permutation runs, after normalisation (axes of extent 1 dropped, axes that stay
// adjacent merged; see PermuteShape):
//  - one axis left: cudaMemcpyAsync;
//  - the input's last axis moves: TILED. A square tile (64 x 64 elements up to 8 bytes, else
//    32 x 32) spans the input's last axis and the input axis that becomes the output's last;
//    warps read and write it along contiguous memory through a padded shared tile. The other
//    axes (up to three) are a batch with any strides, so every such permutation is tiled
//    ([a,b,c] -> [c,b,a] too). When one tile side is shorter than 32 (AoS <-> SoA with
//    n < 32 components, 1000 x 7) a NARROW variant stages up to 16 KiB per block instead:
//    chunks of whole records, read and written along contiguous memory on both sides;
//  - the last axis stays: its rows move as units. A row of 2, 4, 8 or 16 bytes becomes one
//    word and the rest of the permutation is tiled on words; longer rows are copied by a
//    GATHER kernel word by word (16-byte words where size and alignment allow), which is
//    coalesced on both sides because rows are contiguous in both.
// Elements of 1, 2, 4, 8 or 16 bytes move as machine words (uint8_t .. uint4) when the
// pointers are aligned for them; other element types up to 32 bytes move as themselves;
// larger ones are split into words (a fixed last axis) and gathered.

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/cuda_check.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/transpose/transpose.hpp"

namespace lattica {

constexpr int kTransposeWarp = 32;        ///< threads along a tile row: one warp
constexpr int kTransposeTileRows = 8;     ///< thread rows of a tile block (32 x 8 threads)
constexpr int kTransposeBatchAxes = 3;    ///< axes besides the two tiled ones (rank <= 5)
constexpr int kTransposeNarrowSide = 32;  ///< a tile side shorter than this goes narrow
constexpr int kNarrowBlock = 256;         ///< threads per block of the narrow kernel
constexpr int kNarrowBytes = 16384;       ///< bytes a narrow block stages, at most
constexpr int kGatherBlock = 256;         ///< threads per block of the gather kernel
constexpr int kCheckerboardBlock = 256;   ///< threads per block of the checkerboard kernels

namespace transpose_detail {

/// The unsigned type of `Bytes` bytes (see Word).
template <size_t Bytes>
struct WordOf;
template <>
struct WordOf<1> {
  using type = uint8_t;
};
template <>
struct WordOf<2> {
  using type = uint16_t;
};
template <>
struct WordOf<4> {
  using type = uint32_t;
};
template <>
struct WordOf<8> {
  using type = uint2;
};
template <>
struct WordOf<16> {
  using type = uint4;
};
/// An unsigned machine word of `Bytes` bytes, moved by one load or store instruction.
template <size_t Bytes>
using Word = typename WordOf<Bytes>::type;

/// Whether a machine word of `bytes` bytes exists (1, 2, 4, 8, 16).
constexpr bool is_word_size(size_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

/// Whether p is a multiple of `bytes`.
inline bool aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// Blocks for `work` items at `per_block` items per block (ceiling division), capped at the
/// grid limit; kernels loop over the rest.
inline unsigned blocks_for(int64_t work, int64_t per_block) {
  return static_cast<unsigned>(std::min<int64_t>((work + per_block - 1) / per_block, INT_MAX));
}

/// Stages a thread's elements from global into shared memory with all its loads in flight
/// together: elements of 4, 8 or 16 bytes by asynchronous copy (cp.async from sm_80 on, which
/// holds no register while in flight; a plain copy before), others through registers. Call
/// load(i, ...) for every item, then store(i, ...) for every item (a no-op for asynchronous
/// copies), then finish(), then __syncthreads().
template <class T, int kItems>
struct Stager {
  static constexpr bool kAsync =
      (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16) && alignof(T) == sizeof(T);
  T v[kAsync ? 1 : kItems];

  __device__ __forceinline__ void load(int i, T* shared, const T* global) {
    if constexpr (kAsync) {
      __pipeline_memcpy_async(shared, global, sizeof(T));
    } else {
      v[i] = *global;
    }
  }
  __device__ __forceinline__ void store(int i, T* shared) const {
    if constexpr (!kAsync) *shared = v[i];
  }
  __device__ __forceinline__ void finish() {
    if constexpr (kAsync) {
      __pipeline_commit();
      __pipeline_wait_prior(0);
    }
  }
};

/// Index arithmetic of one tiled or narrow launch, in elements. The tile is rows x cols:
/// cols runs along the input's last axis (stride 1 in the input), rows along the input axis
/// that becomes the output's last (stride 1 in the output). The other axes are a batch.
struct TilePlan {
  int64_t rows = 1, cols = 1;
  int64_t row_stride = 0;   ///< input stride of the rows axis
  int64_t col_stride = 0;   ///< output stride of the cols axis
  int64_t batch = 1;        ///< product of the batch extents
  int64_t batch_inner = 1;  ///< product of the batch extents after the cols axis in the output
  int64_t batch_extent[kTransposeBatchAxes] = {1, 1, 1};  ///< unused axes have extent 1
  int64_t batch_in[kTransposeBatchAxes] = {};             ///< input strides
  int64_t batch_out[kTransposeBatchAxes] = {};            ///< output strides

  /// Input and output offsets of batch item b (the last batch axis fastest).
  __device__ __forceinline__ void offsets(int64_t b, int64_t& in, int64_t& out) const {
    in = 0;
    out = 0;
#pragma unroll
    for (int a = kTransposeBatchAxes - 1; a >= 0; --a) {
      const int64_t q = b / batch_extent[a];
      const int64_t x = b - q * batch_extent[a];
      in += x * batch_in[a];
      out += x * batch_out[a];
      b = q;
    }
  }
};

/// The plan of a normalised permutation whose last input axis moves (s.rank >= 2).
inline TilePlan make_tile_plan(const PermuteShape& s) {
  TilePlan p;
  const int last = s.rank - 1, row_axis = s.perm[s.rank - 1];
  p.rows = s.extent[row_axis];
  p.cols = s.extent[last];
  p.row_stride = s.in_stride(row_axis);
  p.col_stride = s.out_stride(last);
  int n = 0;
  bool after_cols = false;
  for (int k = 0; k < s.rank; ++k) {  // batch axes in output order
    const int a = s.perm[k];
    after_cols = after_cols || a == last;
    if (a == row_axis || a == last) continue;
    if (after_cols) p.batch_inner *= s.extent[a];
    p.batch_extent[n] = s.extent[a];
    p.batch_in[n] = s.in_stride(a);
    p.batch_out[n] = s.out_stride(a);
    p.batch *= s.extent[a];
    ++n;
  }
  return p;
}

/// Tile side in elements: 64 for elements of up to 8 bytes, so each thread has 16 loads in
/// flight (32 x 32 float tiles reached only 52 % of a copy on an H200), 32 for larger ones,
/// whose shared tile must stay under 48 KiB.
template <class T>
constexpr int tile_side() {
  return sizeof(T) <= 8 ? 64 : 32;
}

/// Row pitch of the shared tile in elements, padded so that a warp reading a tile column hits
/// 32 different banks: one extra element for elements of 4 bytes or more (8- and 16-byte
/// accesses are served per half and quarter warp, where that suffices too), and an odd
/// number of 32-bit words per row for 1- and 2-byte elements.
template <class T>
constexpr int tile_pitch() {
  return tile_side<T>() + (sizeof(T) >= 4 ? 1 : static_cast<int>(4 / sizeof(T)));
}

/// Tiled permutation: block t of a grid-stride loop moves tile t, tiles taken in the output's
/// memory order. Launched with kTransposeWarp x kTransposeTileRows threads.
template <class T>
__global__ void __launch_bounds__(kTransposeWarp* kTransposeTileRows)
    permute_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, TilePlan p,
                         int64_t row_tiles, int64_t col_tiles) {
  constexpr int kSide = tile_side<T>(), kPitch = tile_pitch<T>();
  constexpr int kRowSteps = kSide / kTransposeTileRows, kColSteps = kSide / kTransposeWarp;
  // Raw bytes: element types need not be default-constructible in shared memory.
  __shared__ alignas(alignof(T)) unsigned char raw[kSide * kPitch * sizeof(T)];
  T* tile = reinterpret_cast<T*>(raw);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles = row_tiles * col_tiles * p.batch;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    // Tiles in the output's memory order (row tiles fastest, then the batch axes that follow
    // the cols axis in the output, then col tiles, then the rest), so the tiles in flight
    // extend the same output rows: 94 % of a copy instead of 88 % for doubles on an H200.
    const int64_t r0 = (t % row_tiles) * kSide;
    int64_t rest = t / row_tiles;
    const int64_t inner = rest % p.batch_inner;
    rest /= p.batch_inner;
    const int64_t c0 = (rest % col_tiles) * kSide;
    int64_t in_base, out_base;
    p.offsets(rest / col_tiles * p.batch_inner + inner, in_base, out_base);
    // A warp reads 32 consecutive elements of an input row.
    Stager<T, kRowSteps * kColSteps> stage;
    auto for_tile = [&](auto f) {
#pragma unroll
      for (int i = 0; i < kRowSteps; ++i) {
#pragma unroll
        for (int j = 0; j < kColSteps; ++j) {
          const int y = ty + i * kTransposeTileRows, x = tx + j * kTransposeWarp;
          if (r0 + y < p.rows && c0 + x < p.cols) f(i * kColSteps + j, y, x);
        }
      }
    };
    for_tile([&](int i, int y, int x) {
      stage.load(i, &tile[y * kPitch + x], &in[in_base + (r0 + y) * p.row_stride + c0 + x]);
    });
    for_tile([&](int i, int y, int x) { stage.store(i, &tile[y * kPitch + x]); });
    stage.finish();
    __syncthreads();
    // A warp writes 32 consecutive elements of an output row (a tile column).
#pragma unroll
    for (int i = 0; i < kRowSteps; ++i) {
      const int64_t c = c0 + ty + i * kTransposeTileRows;
#pragma unroll
      for (int j = 0; j < kColSteps; ++j) {
        const int64_t r = r0 + tx + j * kTransposeWarp;
        if (r < p.rows && c < p.cols) {
          out[out_base + c * p.col_stride + r] =
              tile[(tx + j * kTransposeWarp) * kPitch + ty + i * kTransposeTileRows];
        }
      }
    }
    __syncthreads();  // the next tile reuses the shared tile
  }
}

/// Shape of a narrow launch: the tile side shorter than kTransposeNarrowSide (`m`, the
/// components of a record) against chunks of 2^log2_chunk records along the other side (`n`).
struct NarrowPlan {
  int m = 1;
  int log2_chunk = 5;
  int pitch = 32;          ///< shared row length: component j of record k is at j * pitch + k
  bool short_cols = true;  ///< the input's last axis is the short one (AoS -> SoA)
  int64_t n = 0;
  int64_t chunks_per_item = 0;
};

/// Narrow blocks per SM the register budget must allow: 6 (1536 threads, which every GPU from
/// sm_80 on holds; 40 registers) when loads are asynchronous and hold no registers, else 4.
template <class T>
constexpr int narrow_blocks_per_sm() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  return 4;  // 1024 threads per SM
#else
  return Stager<T, 1>::kAsync ? 6 : 4;
#endif
}

/// Elements each narrow thread stages: about kNarrowBytes per block, at most 8 per thread
/// (more spill registers at four blocks per SM), and at least 4 so that a chunk of 32
/// records of up to 31 components fits.
template <class T>
constexpr int narrow_items() {
  constexpr int kItems = static_cast<int>(kNarrowBytes / sizeof(T) / kNarrowBlock);
  return kItems < 4 ? 4 : (kItems > 8 ? 8 : kItems);
}

/// Pitch of the narrow kernel's shared rows, at least `chunk`. Component rows are accessed
/// along k, contiguous. Records are accessed in order, (k, j) = divmod(L, m) for consecutive L,
/// and those hit distinct banks when pitch = 1/m (mod W) for odd m (then m * address = L mod W)
/// or pitch = W / m for m dividing W, W being the elements in 128 bytes (one pass over the 32
/// banks). Other even m take 1/(m + 1), the best choice there; it leaves a few 2-way conflicts.
inline int narrow_pitch(int m, size_t bytes, int chunk) {
  if (!is_word_size(bytes)) return chunk + 1;
  const int w = static_cast<int>(128 / bytes);
  auto inverse = [w](int a) {
    for (int r = 1; r < w; ++r) {
      if (a * r % w == 1) return r;
    }
    return 1;
  };
  int target = 1;
  if (m % 2 == 1) {
    target = inverse(m);
  } else if (w % m == 0) {
    target = w / m;
  } else if (m % w != 0) {
    target = inverse(m + 1);
  }
  return chunk + ((target - chunk) % w + w) % w;
}

/// f(i, k, j) for this thread's elements l = threadIdx.x + i * kNarrowBlock < count, in
/// record-major order (l = k * m + j): consecutive threads take consecutive elements.
template <int kItems, class F>
__device__ __forceinline__ void record_major(int m, int count, F f) {
  const int step_k = kNarrowBlock / m, step_j = kNarrowBlock % m;
  int k = threadIdx.x / m, j = threadIdx.x % m;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (static_cast<int>(threadIdx.x) + i * kNarrowBlock < count) f(i, k, j);
    k += step_k;
    j += step_j;
    if (j >= m) {
      j -= m;
      ++k;
    }
  }
}

/// The same in component-major order (l = j * 2^log2_chunk + k), skipping records k >= valid.
template <int kItems, class F>
__device__ __forceinline__ void component_major(int log2_chunk, int count, int valid, F f) {
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int l = threadIdx.x + i * kNarrowBlock;
    const int k = l & ((1 << log2_chunk) - 1);
    if (l < count && k < valid) f(i, k, l >> log2_chunk);
  }
}

/// Narrow permutation: block c of a grid-stride loop moves chunk c (chunks of a batch item
/// fastest) through m * pitch elements of dynamic shared memory, loading all of a thread's
/// elements before storing any. kNarrowBlock threads.
template <class T>
__global__ void __launch_bounds__(kNarrowBlock, narrow_blocks_per_sm<T>())
    permute_narrow_kernel(const T* __restrict__ in, T* __restrict__ out, TilePlan p, NarrowPlan q) {
  constexpr int kItems = narrow_items<T>();
  extern __shared__ uint4 narrow_shared[];  // one declaration (type and name) for every T
  T* tile = reinterpret_cast<T*>(narrow_shared);
  const int pitch = q.pitch, m = q.m;
  const int64_t chunks = q.chunks_per_item * p.batch;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t item = c / q.chunks_per_item;
    const int64_t k0 = (c - item * q.chunks_per_item) << q.log2_chunk;
    const int valid = static_cast<int>(std::min<int64_t>(int64_t{1} << q.log2_chunk, q.n - k0));
    const int records = valid * m, components = m << q.log2_chunk;
    int64_t in_base, out_base;
    p.offsets(item, in_base, out_base);
    Stager<T, kItems> stage;
    if (q.short_cols) {  // input [n][m] records -> output m rows of n
      const T* src = in + in_base + k0 * p.row_stride;
      T* dst = out + out_base + k0;
      record_major<kItems>(m, records, [&](int i, int k, int j) {
        stage.load(i, &tile[j * pitch + k], &src[k * p.row_stride + j]);
      });
      record_major<kItems>(m, records,
                           [&](int i, int k, int j) { stage.store(i, &tile[j * pitch + k]); });
      stage.finish();
      __syncthreads();
      component_major<kItems>(q.log2_chunk, components, valid, [&](int, int k, int j) {
        dst[j * p.col_stride + k] = tile[j * pitch + k];
      });
    } else {  // input m rows of n -> output [n][m] records
      const T* src = in + in_base + k0;
      T* dst = out + out_base + k0 * p.col_stride;
      component_major<kItems>(q.log2_chunk, components, valid, [&](int i, int k, int j) {
        stage.load(i, &tile[j * pitch + k], &src[j * p.row_stride + k]);
      });
      component_major<kItems>(q.log2_chunk, components, valid,
                              [&](int i, int k, int j) { stage.store(i, &tile[j * pitch + k]); });
      stage.finish();
      __syncthreads();
      record_major<kItems>(
          m, records, [&](int, int k, int j) { dst[k * p.col_stride + j] = tile[j * pitch + k]; });
    }
    __syncthreads();  // the next chunk reuses the shared rows
  }
}

/// Gather for permutations that keep the last axis: out[i] = in[offset of i], with
/// out_extent/in_stride describing output axis k (last fastest). Rows of the last axis are
/// contiguous on both sides, so neighbouring threads touch neighbouring words.
template <class Index>
struct GatherPlan {
  int rank = 0;
  Index out_extent[kMaxPermuteRank + 1] = {};
  Index in_stride[kMaxPermuteRank + 1] = {};
};

/// out[i] = in[offset of i] for i in [0, n), grid-stride, kGatherBlock threads. 32-bit
/// indices where they suffice: the divisions per element are what this kernel costs.
template <class T, class Index>
__global__ void __launch_bounds__(kGatherBlock)
    permute_gather_kernel(const T* __restrict__ in, T* __restrict__ out, GatherPlan<Index> g,
                          Index n) {
  const Index stride = static_cast<Index>(gridDim.x) * kGatherBlock;
  for (Index i = static_cast<Index>(blockIdx.x) * kGatherBlock + threadIdx.x; i < n; i += stride) {
    Index rest = i, from = 0;
#pragma unroll
    for (int k = kMaxPermuteRank; k >= 0; --k) {  // constant indices: the plan stays in registers
      if (k >= g.rank) continue;
      const Index q = rest / g.out_extent[k];
      from += (rest - q * g.out_extent[k]) * g.in_stride[k];
      rest = q;
    }
    out[i] = in[from];
  }
}

/// Launches the tiled or narrow kernel for a normalised permutation whose last axis moves.
template <class T>
void launch_moving(const T* d_in, T* d_out, const PermuteShape& s, cudaStream_t stream) {
  const TilePlan p = make_tile_plan(s);
  const int64_t shorter = std::min(p.rows, p.cols);
  if (shorter >= kTransposeNarrowSide) {
    constexpr int kSide = tile_side<T>();
    const int64_t row_tiles = (p.rows + kSide - 1) / kSide;
    const int64_t col_tiles = (p.cols + kSide - 1) / kSide;
    const dim3 block(kTransposeWarp, kTransposeTileRows);
    permute_tiled_kernel<T><<<blocks_for(row_tiles * col_tiles * p.batch, 1), block, 0, stream>>>(
        d_in, d_out, p, row_tiles, col_tiles);
    LATTICA_CUDA_CHECK_LAUNCH(stream);
    return;
  }
  NarrowPlan q;
  q.m = static_cast<int>(shorter);
  q.short_cols = p.cols == shorter;
  q.n = q.short_cols ? p.rows : p.cols;
  // The longest power-of-two chunk whose m * chunk elements the block's threads can stage.
  const int capacity = narrow_items<T>() * kNarrowBlock;
  q.log2_chunk = 5;
  while ((2 << q.log2_chunk) * q.m <= capacity) ++q.log2_chunk;
  q.pitch = narrow_pitch(q.m, sizeof(T), 1 << q.log2_chunk);
  q.chunks_per_item = (q.n + (int64_t{1} << q.log2_chunk) - 1) >> q.log2_chunk;
  const size_t shared = static_cast<size_t>(q.m) * q.pitch * sizeof(T);
  permute_narrow_kernel<T>
      <<<blocks_for(q.chunks_per_item * p.batch, 1), kNarrowBlock, shared, stream>>>(d_in, d_out, p,
                                                                                     q);
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// Launches permute_gather_kernel with indices of type Index.
template <class T, class Index>
void launch_gather_indexed(const T* d_in, T* d_out, const PermuteShape& s, cudaStream_t stream) {
  GatherPlan<Index> g;
  g.rank = s.rank;
  for (int k = 0; k < s.rank; ++k) {
    g.out_extent[k] = static_cast<Index>(s.extent[s.perm[k]]);
    g.in_stride[k] = static_cast<Index>(s.in_stride(s.perm[k]));
  }
  permute_gather_kernel<T, Index><<<blocks_for(s.volume, kGatherBlock), kGatherBlock, 0, stream>>>(
      d_in, d_out, g, static_cast<Index>(s.volume));
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// Launches the gather kernel for a normalised permutation (any; used when the last axis
/// stays and its rows are longer than one word), with 32-bit indices when the index and a
/// grid stride past it stay below 2^32.
template <class T>
void launch_gather(const T* d_in, T* d_out, const PermuteShape& s, cudaStream_t stream) {
  if (s.volume <= INT32_MAX) {
    launch_gather_indexed<T, uint32_t>(d_in, d_out, s, stream);
  } else {
    launch_gather_indexed<T, uint64_t>(d_in, d_out, s, stream);
  }
}

/// A normalised permutation whose last axis stays, in words of W: a one-word row makes the
/// rest a moving permutation of words; longer rows are gathered.
template <class W>
void launch_rows(const void* d_in, void* d_out, PermuteShape s, cudaStream_t stream) {
  const auto* in = static_cast<const W*>(d_in);
  auto* out = static_cast<W*>(d_out);
  if (s.extent[s.rank - 1] == 1) {
    --s.rank;  // perm[rank-1] was rank-1, so the others stay a permutation of 0..rank-2
    launch_moving(in, out, s, stream);
  } else {
    launch_gather(in, out, s, stream);
  }
}

/// Dispatch for a normalised permutation of elements of `bytes` bytes whose last axis stays:
/// the rows (last extent x bytes) are re-expressed in the widest word that divides them and
/// that both pointers are aligned to.
inline void permute_rows(const void* d_in, void* d_out, PermuteShape s, size_t bytes,
                         cudaStream_t stream) {
  const int last = s.rank - 1;
  const int64_t row_bytes = s.extent[last] * static_cast<int64_t>(bytes);
  size_t w = 16;
  while (w > 1 && (row_bytes % w != 0 || !aligned(d_in, w) || !aligned(d_out, w))) w /= 2;
  s.extent[last] = row_bytes / static_cast<int64_t>(w);
  s.volume = s.volume / static_cast<int64_t>(row_bytes / bytes) * s.extent[last];
  switch (w) {
    case 16:
      return launch_rows<Word<16>>(d_in, d_out, s, stream);
    case 8:
      return launch_rows<Word<8>>(d_in, d_out, s, stream);
    case 4:
      return launch_rows<Word<4>>(d_in, d_out, s, stream);
    case 2:
      return launch_rows<Word<2>>(d_in, d_out, s, stream);
    default:
      return launch_rows<Word<1>>(d_in, d_out, s, stream);
  }
}

/// Loads N consecutive values: as 8- or 16-byte words when kWords (N * sizeof(T) is 8, 16 or
/// 32 and src is aligned to min(N * sizeof(T), 16)), otherwise one by one.
template <class T, int N, bool kWords>
__device__ __forceinline__ void load_values(T (&dst)[N], const T* src) {
  if constexpr (kWords) {
    constexpr size_t kBytes = N * sizeof(T);
    using W = Word<(kBytes < 16 ? kBytes : 16)>;
    W w[kBytes / sizeof(W)];
#pragma unroll
    for (size_t i = 0; i < kBytes / sizeof(W); ++i) w[i] = reinterpret_cast<const W*>(src)[i];
    memcpy(dst, w, kBytes);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = src[i];
  }
}

/// Stores N consecutive values, as load_values loads them.
template <class T, int N, bool kWords>
__device__ __forceinline__ void store_values(T* dst, const T (&src)[N]) {
  if constexpr (kWords) {
    constexpr size_t kBytes = N * sizeof(T);
    using W = Word<(kBytes < 16 ? kBytes : 16)>;
    W w[kBytes / sizeof(W)];
    memcpy(w, src, kBytes);
#pragma unroll
    for (size_t i = 0; i < kBytes / sizeof(W); ++i) reinterpret_cast<W*>(dst)[i] = w[i];
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = src[i];
  }
}

/// Checkerboard <-> lexicographic. Thread item g moves pairs [g P, g P + P) of all copies'
/// pairs: P values from each colour's half row (contiguous) and the 2P values they make in
/// lexicographic order (contiguous), so both sides are coalesced. Precondition: P divides
/// half_last, so the P pairs share a row and its parity.
template <class T, int P, bool kWords, bool kToLexicographic, class Index>
__global__ void __launch_bounds__(kCheckerboardBlock)
    checkerboard_permute_kernel(CheckerboardRows<Index> rows, const T* __restrict__ in,
                                T* __restrict__ out, Index items) {
  const Index stride = static_cast<Index>(gridDim.x) * kCheckerboardBlock;
  for (Index g = static_cast<Index>(blockIdx.x) * kCheckerboardBlock + threadIdx.x; g < items;
       g += stride) {
    const Index pair = g * P;
    Index copy;
    const int parity = rows.parity(pair / rows.half_last, copy);
    const Index colour0 = pair + copy * rows.half_volume;  // storage of the first pair's colour 0
    const Index colour1 = colour0 + rows.half_volume;
    const Index lex = 2 * pair;
    T a[P], b[P], line[2 * P];
    if constexpr (kToLexicographic) {
      load_values<T, P, kWords>(a, in + colour0);
      load_values<T, P, kWords>(b, in + colour1);
#pragma unroll
      for (int i = 0; i < P; ++i) {  // static indices keep the arrays in registers
        line[2 * i] = parity ? b[i] : a[i];
        line[2 * i + 1] = parity ? a[i] : b[i];
      }
      store_values<T, 2 * P, kWords>(out + lex, line);
    } else {
      load_values<T, 2 * P, kWords>(line, in + lex);
#pragma unroll
      for (int i = 0; i < P; ++i) {
        a[i] = parity ? line[2 * i + 1] : line[2 * i];
        b[i] = parity ? line[2 * i] : line[2 * i + 1];
      }
      store_values<T, P, kWords>(out + colour0, a);
      store_values<T, P, kWords>(out + colour1, b);
    }
  }
}

/// Launches checkerboard_permute_kernel over all pairs of `copies` fields.
template <class T, int P, bool kWords, bool kToLexicographic, class Index, int D>
void launch_checkerboard(const Checkerboard<D>& lattice, const T* d_in, T* d_out, int64_t copies,
                         cudaStream_t stream) {
  const auto rows = CheckerboardRows<Index>::make(lattice);
  const int64_t items = copies * lattice.half_volume / P;
  checkerboard_permute_kernel<T, P, kWords, kToLexicographic, Index>
      <<<blocks_for(items, kCheckerboardBlock), kCheckerboardBlock, 0, stream>>>(
          rows, d_in, d_out, static_cast<Index>(items));
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// Picks the widest variant the shape and pointers allow: 8 bytes from each colour (16 for
/// 16-byte T) per thread when P = 8 / sizeof(T) pairs divide the half row, and 32-bit indices
/// when every index (and a grid stride past the end) stays below 2^32.
template <bool kToLexicographic, int D, class T>
void checkerboard_permute(const Checkerboard<D>& lattice, const T* d_in, T* d_out, int64_t copies,
                          cudaStream_t stream) {
  static_assert(std::is_trivially_copyable<T>::value, "values are moved as bytes");
  CheckerboardRows<int64_t>::make(lattice);  // checks the last extent before anything runs
  if (copies <= 0) return;
  const bool small = copies * lattice.volume() <= int64_t{INT32_MAX};
  constexpr size_t kBytes = sizeof(T);
  if constexpr ((kBytes <= 8 && 8 % kBytes == 0) || kBytes == 16) {
    constexpr int kPairs = kBytes <= 8 ? static_cast<int>(8 / kBytes) : 1;
    const T* storage = kToLexicographic ? d_in : d_out;
    const T* lexicographic = kToLexicographic ? d_out : d_in;
    if (lattice.half_last % kPairs == 0 && aligned(storage, kPairs * kBytes) &&
        aligned(lexicographic, 16)) {
      if (small) {
        launch_checkerboard<T, kPairs, true, kToLexicographic, uint32_t>(lattice, d_in, d_out,
                                                                         copies, stream);
      } else {
        launch_checkerboard<T, kPairs, true, kToLexicographic, uint64_t>(lattice, d_in, d_out,
                                                                         copies, stream);
      }
      return;
    }
  }
  if (small) {
    launch_checkerboard<T, 1, false, kToLexicographic, uint32_t>(lattice, d_in, d_out, copies,
                                                                 stream);
  } else {
    launch_checkerboard<T, 1, false, kToLexicographic, uint64_t>(lattice, d_in, d_out, copies,
                                                                 stream);
  }
}

}  // namespace transpose_detail

/// d_out = d_in with its axes permuted: output axis k is input axis perm[k] (numpy.transpose),
/// row-major, rank 1 to 5, any extents. Asynchronous on `stream`. Preconditions: as
/// normalize_permutation (throws std::invalid_argument otherwise); both device arrays hold
/// the volume and do not overlap; T is trivially copyable.
template <class T>
void permute_axes(const T* d_in, T* d_out, int rank, const int64_t* extents, const int* perm,
                  cudaStream_t stream) {
  static_assert(std::is_trivially_copyable<T>::value, "values are moved as bytes");
  using namespace transpose_detail;
  PermuteShape s = normalize_permutation(rank, extents, perm);
  if (s.volume == 0) return;
  if (s.rank <= 1) {
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, static_cast<size_t>(s.volume) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (s.perm[s.rank - 1] == s.rank - 1) return permute_rows(d_in, d_out, s, sizeof(T), stream);
  constexpr size_t kBytes = sizeof(T);
  constexpr bool kWordSized = is_word_size(kBytes);
  constexpr bool kAlwaysWords = kWordSized && alignof(T) == kBytes;  // float, double, ...
  if constexpr (kWordSized) {
    if (kAlwaysWords || (aligned(d_in, kBytes) && aligned(d_out, kBytes))) {
      return launch_moving(reinterpret_cast<const Word<kBytes>*>(d_in),
                           reinterpret_cast<Word<kBytes>*>(d_out), s, stream);
    }
  }
  if constexpr (kBytes > 32) {
    // Large elements: their bytes become a last axis that stays, moved in words.
    s.perm[s.rank] = s.rank;
    s.extent[s.rank++] = 1;
    permute_rows(d_in, d_out, s, kBytes, stream);
  } else if constexpr (!kAlwaysWords) {
    launch_moving(d_in, d_out, s, stream);  // other sizes, or word sizes misaligned
  }
}

/// d_out[b][c][r] = d_in[b][r][c] for `batch` row-major rows x cols matrices, tiled (see the
/// top of this file). Asynchronous on `stream`. Preconditions: extents >= 0; both device
/// arrays hold batch * rows * cols values and do not overlap.
template <class T>
void transpose_2d(const T* d_in, T* d_out, int64_t batch, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
  const int64_t extents[3] = {batch, rows, cols};
  const int perm[3] = {0, 2, 1};
  permute_axes(d_in, d_out, 3, extents, perm, stream);
}

/// Checkerboard storage (colour 0 then colour 1, as Checkerboard<D>) to lexicographic order,
/// for `copies` fields of V values stored one after another: the fast replacement of
/// GatherLexicographic. Asynchronous on `stream`. Preconditions: the last extent is even
/// (throws std::invalid_argument otherwise); both device arrays hold copies * V values and do
/// not overlap.
template <int D, class T>
void checkerboard_to_lexicographic(const Checkerboard<D>& lattice, const T* d_storage,
                                   T* d_lexicographic, int64_t copies, cudaStream_t stream) {
  transpose_detail::checkerboard_permute<true>(lattice, d_storage, d_lexicographic, copies, stream);
}

/// Lexicographic order to checkerboard storage; the inverse of checkerboard_to_lexicographic,
/// with the same preconditions.
template <int D, class T>
void lexicographic_to_checkerboard(const Checkerboard<D>& lattice, const T* d_lexicographic,
                                   T* d_storage, int64_t copies, cudaStream_t stream) {
  transpose_detail::checkerboard_permute<false>(lattice, d_lexicographic, d_storage, copies,
                                                stream);
}

}  // namespace lattica
