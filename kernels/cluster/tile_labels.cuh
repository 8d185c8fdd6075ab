#pragma once
// Cluster labelling on the GPU in two levels (after the block union-find of Playne and Hawick,
// IEEE TPDS 2018): one thread block labels one tile of the lattice (TileShape) in shared memory,
// from the bonds the tile holds and its sites' ghost bonds; then a block per tile joins the ends
// of the bonds from its faces to the next tiles in global memory, and a block per tile points
// every node at its root, walking the global trees once per part of a cluster in the tile rather
// than once per site. Global atomics thus see only the bonds that cross tiles (about
// sum_a 2^-log2[a] of them), and the roots are node for node those of the generic label_box
// (cluster_moves.hpp):
//   - in a tile, local node 1 + l is the tile's site l in the lexicographic order of its
//     coordinates in the tile, and local node 0 the ghost. A tile is a box of the lexicographic
//     lattice, so local order is global order: the smallest local node of each part of a
//     cluster in the tile is its smallest global node;
//   - the tile's own union-find links roots in a fixed pseudo-random order (link_priority), so
//     that its trees stay shallow while all its threads unite at once (linking below the
//     smaller node, as the global unions do, strings a tile's rows into chains that every find
//     then walks: measured 10x slower); afterwards each part's smallest node is found by an
//     atomic minimum at its root;
//   - every node's parent is then its part's smallest node, as a global node (the ghost for parts
//     with a ghost bond), never above the node itself: a forest as the global unions require,
//     which they finish by linking roots below smaller roots, so every cluster ends under its
//     smallest node.
// The chain therefore does not depend on the tile shape (tests/compare/gpu_cluster_labels_test).
// Whole lattices whose extents the tiles divide, with rows of 32 sites or more (TileGrid::aligned:
// the engine's usual case), label their tiles by sweeps (label_aligned_tiles_kernel): a warp
// walks down 32 columns row by row, each run along a row taking the label of the row above where
// they are bonded, so that only the bonds between a warp's strips and a run's second contacts go
// to the union-find. Its unions link the larger root below the smaller, so each root is its part's
// smallest node (few unions are left, and their trees stay shallow). It gives the same parents
// and also marks every part's smallest node, its representative. After the unions between tiles
// only the representatives are pointed at their roots (PointRepresentativesAtRoots), not every
// node: each node's parent is then its representative, itself at the root, and a node's root is its
// parent's parent (labelled_root in cluster_moves.hpp), which the moves read. Boxes and cut tiles
// are flattened node by node. Each warp queues the unions that its sweep and its bonds across find,
// and its lanes unite them together afterwards (WarpUnions). Swendsen-Wang (label_and_move, at the
// end) then points the representatives at their roots and moves the sites in one kernel a tile,
// from each site's part that the labelling keeps (move_aligned_tiles_kernel). On an H200, 2D 4096^2
// at beta_c, these took a step from 20.7 to 26.3 sites per ns
// (tests/bench/results/session_n_nvidia_h200/call7), and the queues, with the bonds and moves a
// pair of sites a thread (cluster_moves.hpp), to 33.2 (session_o_nvidia_h200/call4).

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/union_find.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/fast_divisor.hpp"

namespace lattica {

/// A bond mask bit (beside the axes' bits 0 .. 3 and kGhostBond) that the aligned tiles' labelling
/// sets on each representative: the smallest site of its part of a cluster in its tile. The
/// next step's ClusterBonds writes every mask anew.
constexpr uint8_t kTileRepresentative = 0x40;

/// Rows along axis D - 2 that a thread of label_aligned_tiles_kernel sweeps, and its threads a
/// block, at most.
constexpr int kMostSweptRows = 16;
constexpr int kMostSweptThreads = 512;

/// Blocks an SM that the sweeps' and the one move kernel's registers must allow
/// (__launch_bounds__): sm_80 and later hold 2048 threads an SM, sm_75 1024 (where ptxas refuses
/// more). Macros, as the device pass of each architecture needs its own.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define LATTICA_SWEPT_TILE_BLOCKS 2
#define LATTICA_MOVE_TILE_BLOCKS 4
#else
#define LATTICA_SWEPT_TILE_BLOCKS 4
#define LATTICA_MOVE_TILE_BLOCKS 8
#endif

/// Tiles of the lexicographic lattice, 2^log2[a] sites along axis a, from the origin (the last
/// tile of an axis cut short where the extent is not a multiple). A tile holds the bonds from
/// its sites to their +e_a neighbours in the tile; the others (to the next tile, or wrapping
/// round the lattice) cross tiles.
template <int D>
struct TileShape {
  int log2[D];
  LATTICA_HD_INLINE int64_t extent(int a) const { return int64_t{1} << log2[a]; }
};

/// The tiles of a (box) lattice, in 32-bit arithmetic (the labelled sites, replicas included,
/// number below 2^32): how many along each axis, where a tile-local index keeps each
/// coordinate, and the box geometry the kernels need.
template <int D>
struct TileGrid {
  TileShape<D> shape;
  uint32_t tiles[D];     ///< per axis
  uint32_t per_replica;  ///< tiles of one replica
  int shift[D];          ///< axis a's coordinate in the tile is bits shift[a] ... of a local index
  int sites;             ///< per tile, 2^(sum of log2)
  uint32_t extent[D], stride[D];
  uint32_t lower[D], upper[D];  ///< interior sites have lower <= x < upper (ghost layers outside)
  bool split[D];                ///< ghost layers along the axis (a decomposed box)
  FastDivisor by_extent[D];
  FastDivisor by_tiles[D], by_per_replica;  ///< a block's tile and replica without divisions
  uint32_t volume;                          ///< of the (box) lattice
  /// No ghost layers, every extent a multiple of the tile's, at least 2 dimensions and rows (the
  /// last axis) of at least 32 sites: every tile is whole and every site interior, so a local
  /// site's index is a sum of shifted bits (offset), and the tiles are labelled by sweeps
  /// (label_aligned_tiles_kernel, then PointRepresentativesAtRoots for the flattening).
  bool aligned;

  /// The lexicographic offset of local site l from its tile's origin site.
  LATTICA_HD_INLINE uint32_t offset(int l) const {
    uint32_t i = 0;
    for (int a = 0; a < D; ++a)
      i += ((static_cast<uint32_t>(l) >> shift[a]) & ((1u << shape.log2[a]) - 1)) * stride[a];
    return i;
  }

  /// The tiles of g with `shape`, each axis cut to the smallest power of two that covers the
  /// lattice's extent (no block of a small lattice idles on missing sites).
  static TileGrid make(const ClusterLattice<D>& g, TileShape<D> shape) {
    TileGrid t{};
    int bits = 0;
    t.per_replica = 1;
    t.aligned = true;
    for (int a = D - 1; a >= 0; --a) {
      while (shape.log2[a] > 0 && (int64_t{1} << (shape.log2[a] - 1)) >= g.extent[a])
        --shape.log2[a];
      t.shift[a] = bits;
      bits += shape.log2[a];
      t.tiles[a] = static_cast<uint32_t>((g.extent[a] + shape.extent(a) - 1) >> shape.log2[a]);
      t.per_replica *= t.tiles[a];
      t.by_tiles[a] = FastDivisor::make(t.tiles[a]);
      t.extent[a] = static_cast<uint32_t>(g.extent[a]);
      t.stride[a] = static_cast<uint32_t>(g.stride[a]);
      t.lower[a] = static_cast<uint32_t>(g.ghosts[a]);
      t.upper[a] = static_cast<uint32_t>(g.extent[a] - g.ghosts[a]);
      t.split[a] = g.ghosts[a] != 0;
      t.by_extent[a] = g.by_extent[a];
      t.aligned = t.aligned && !t.split[a] && g.extent[a] % shape.extent(a) == 0;
    }
    // Two words per local node in shared memory, within the 48 KiB a block gets by default.
    if (bits > 12) throw std::invalid_argument("cluster tiles: at most 4096 sites per tile");
    t.by_per_replica = FastDivisor::make(t.per_replica);
    t.shape = shape;
    t.sites = 1 << bits;
    // Rows of 32 sites or more (a warp's lanes on one row), a second axis to sweep along, and
    // at most kMostSweptThreads threads a block with each sweeping at most kMostSweptRows rows
    // along it.
    if constexpr (D >= 2) {
      const int lines = 1 << shape.log2[D - 2];
      t.aligned = t.aligned && shape.log2[D - 1] >= 5 &&
                  t.sites <= kMostSweptThreads * (lines < kMostSweptRows ? lines : kMostSweptRows);
    } else {
      t.aligned = false;
    }
    t.volume = static_cast<uint32_t>(g.volume);
    return t;
  }
};

/// One block's tile: its origin and replica, and its sites' geometry.
template <int D>
struct Tile {
  const TileGrid<D>& t;
  uint32_t origin[D];
  uint32_t first;  ///< the replica's first site (replica * V)
  uint32_t base;   ///< first + the origin's lexicographic index

  __device__ Tile(const TileGrid<D>& grid, uint32_t block) : t(grid) {
    const uint32_t r = t.by_per_replica.divide(block);
    uint32_t rest = block - r * t.per_replica;
    for (int a = D - 1; a >= 0; --a) {
      const uint32_t q = t.by_tiles[a].divide(rest);
      origin[a] = (rest - q * t.tiles[a]) << t.shape.log2[a];
      rest = q;
    }
    first = r * t.volume;
    base = first;
    for (int a = 0; a < D; ++a) base += origin[a] * t.stride[a];
  }
  /// Coordinates x and lexicographic index i of local site l; false where the tile, cut short by
  /// the lattice's end, has no such site.
  __device__ bool site(int l, uint32_t (&x)[D], uint32_t& i) const {
    i = 0;
    for (int a = 0; a < D; ++a) {
      x[a] = origin[a] + ((static_cast<uint32_t>(l) >> t.shift[a]) & (t.shape.extent(a) - 1));
      if (x[a] >= t.extent[a]) return false;
      i += x[a] * t.stride[a];
    }
    return true;
  }
  __device__ bool interior(const uint32_t (&x)[D]) const {
    for (int a = 0; a < D; ++a) {
      if (x[a] < t.lower[a] || x[a] >= t.upper[a]) return false;
    }
    return true;
  }
  /// Whether the bond from interior site x to its +e_a neighbour, bonded in `mask`, is the
  /// box's to unite (not to a ghost layer; ClusterLattice::owns_bond) and lies in the tile.
  __device__ bool joined_in_tile(const uint32_t (&x)[D], uint8_t mask, int a) const {
    const uint32_t last = static_cast<uint32_t>(t.shape.extent(a)) - 1;
    return (mask >> a & 1) && (x[a] & last) != last && !crosses_box(x, a) && x[a] + 1 < t.extent[a];
  }
  /// Whether that bond goes to a ghost layer.
  __device__ bool crosses_box(const uint32_t (&x)[D], int a) const {
    return t.split[a] && x[a] + 2 == t.extent[a];
  }
  /// The +e_a neighbour's lexicographic index (periodic).
  __device__ uint32_t up(uint32_t i, const uint32_t (&x)[D], int a) const {
    return x[a] + 1 == t.extent[a] ? i - (t.extent[a] - 1) * t.stride[a] : i + t.stride[a];
  }
  /// The local site of the replica's lexicographic site j, or -1 outside the tile.
  __device__ int local_site(uint32_t j) const {
    int l = 0;
    for (int a = D - 1; a >= 0; --a) {
      const uint32_t q = t.by_extent[a].divide(j);
      const uint32_t y = j - q * t.extent[a] - origin[a];  // wraps above the tile when below it
      if (y >= static_cast<uint32_t>(t.shape.extent(a))) return -1;
      l |= static_cast<int>(y) << t.shift[a];
      j = q;
    }
    return l;
  }
};

/// A local node's rank for linking: a root links below the root of higher priority. A bijective
/// hash of the node (a fixed pseudo-random order), so concurrent unions build trees of
/// logarithmic expected depth whatever the bonds.
__device__ __forceinline__ uint32_t link_priority(uint32_t n) {
  n ^= n >> 16;
  n *= 0x7feb352du;
  n ^= n >> 15;
  n *= 0x846ca68bu;
  return n ^ (n >> 16);
}

/// The root of local node n, halving the path (each node passed is pointed at its grandparent).
/// Every parent ranks above its node, taking (an initial root, link_priority) in lexicographic
/// order: a run's star points its sites (never roots) at an initial root, a link points a root
/// at a root of higher priority, and a halving write points a node at an ancestor, so above it.
/// (Linking to smaller roots, as the sweeps do, every parent is a smaller node, for the same
/// reasons.)
/// Hence the halving needs no compare-and-swap while other threads unite and halve: it writes
/// to a node that is no root (and never will be again); a late write may undo another's
/// halving, never a link, and never closes a cycle. The writes are atomic exchanges all the same
/// (as fast here), so that every write racing with other threads' reads is an atomic one.
__device__ __forceinline__ uint32_t find_tile_root(uint32_t* local, uint32_t n) {
  uint32_t p = load_parent(local + n);
  while (p != n) {
    const uint32_t g = load_parent(local + p);
    if (g == p) return p;
    atomicExch(local + n, g);
    n = g;
    p = load_parent(local + n);
  }
  return n;
}

/// Joins the parts of local nodes a and b: links the root of lower priority (or, to_smaller, the
/// larger root) below the other, if it is still a root (else finds again).
__device__ __forceinline__ void unite_in_tile(uint32_t* local, uint32_t a, uint32_t b,
                                              bool to_smaller = false) {
  while (true) {
    a = find_tile_root(local, a);
    b = find_tile_root(local, b);
    if (a == b) return;
    if (to_smaller ? a < b : link_priority(a) > link_priority(b)) {
      const uint32_t t = a;
      a = b;
      b = t;
    }
    if (atomicCAS(local + a, a, b) == a) return;
  }
}

/// body(k) for k = threadIdx.x, threadIdx.x + blockDim.x, ... below n, each warp's lanes in step:
/// every lane of a warp takes the same passes (those past n call nothing) and the warp meets at
/// the end of each (__syncwarp). Since Volta the lanes that a branch or a loop divided need not
/// meet again where the code joins, and the lanes that one pass's finds left apart ran every
/// later pass apart too: the tiles' unions ran at 8.7 of 32 lanes (Nsight Compute,
/// tests/bench/results/session_g_nvidia_h200/ncu_sw_8192_tiles.txt), and a Swendsen-Wang step of
/// 2D Ising 8192^2 took 1.34 times as long (session_k_nvidia_h200). Precondition: blockDim.x is
/// a multiple of 32.
template <class Body>
__device__ __forceinline__ void for_tile_sites(int n, const Body& body) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (int base = static_cast<int>(threadIdx.x) - lane; base < n;
       base += static_cast<int>(blockDim.x)) {
    if (base + lane < n) body(base + lane);
    __syncwarp();
  }
}

/// Block b labels tile b % per_replica of replica b / per_replica: every site's node gets as
/// parent the global node of the smallest node of its part of a cluster in the tile.
/// Precondition: blockDim.x is a multiple of 32 and, for rows of 32 or more sites, divides
/// t.sites (every lane of a warp is in every pass of a loop).
template <int D>
__global__ void label_tiles_kernel(TileGrid<D> t, const uint8_t* bonds, uint32_t* parent) {
  extern __shared__ uint32_t shared[];
  uint32_t* local = shared;                   // [0]: the ghost, [1 + l]: the tile's site l
  uint32_t* smallest = shared + t.sites + 1;  // per root: the smallest node of its part
  const Tile<D> tile(t, blockIdx.x);
  const int lane = static_cast<int>(threadIdx.x & 31);
  // Rows of 32 or more sites: a warp's lanes are 32 consecutive sites of a row, and each run of
  // them bonded along the row starts as a star under its first site, from a ballot.
  const bool rows_by_ballot = t.shape.log2[D - 1] >= 5;
  if (threadIdx.x == 0) local[0] = smallest[0] = kGhostNode;
  for_tile_sites(t.sites, [&](int l) {
    uint32_t x[D], i;
    const bool here = tile.site(l, x, i) && tile.interior(x);
    const bool along = here && tile.joined_in_tile(x, bonds[tile.first + i], D - 1);
    int start = lane;
    if (rows_by_ballot) {
      const unsigned below = ~__ballot_sync(0xffffffffu, along) & ((1u << lane) - 1);
      start = below ? 32 - __clz(static_cast<int>(below)) : 0;  // after the last lane not bonded
    }
    local[1 + l] = static_cast<uint32_t>(1 + l - lane + start);
    smallest[1 + l] = static_cast<uint32_t>(1 + l);
  });
  __syncthreads();
  for_tile_sites(t.sites, [&](int l) {
    uint32_t x[D], i;
    if (!tile.site(l, x, i)) return;
    const uint8_t mask = bonds[tile.first + i];
    const uint32_t node = static_cast<uint32_t>(1 + l);
    if (mask & kGhostBond) unite_in_tile(local, node, kGhostNode);
    if (!(mask & static_cast<uint8_t>(~kGhostBond)) || !tile.interior(x)) return;
    for (int a = 0; a < D; ++a) {
      if (a == D - 1 && rows_by_ballot && lane != 31) continue;  // in the lane's run already
      if (tile.joined_in_tile(x, mask, a)) unite_in_tile(local, node, node + (1u << t.shift[a]));
    }
  });
  __syncthreads();
  // Every node (the ghost too) at its root, and each root's smallest node. The finds only read
  // (a halving write could point a node that its own thread has set to its root back at a
  // mere ancestor), so after them each node is written once, by its thread.
  for_tile_sites(t.sites + 1, [&](int n) {
    const uint32_t root = find_root(local, static_cast<uint32_t>(n));
    atomicExch(local + n, root);
    atomicMin(smallest + root, static_cast<uint32_t>(n));
  });
  __syncthreads();
  for (int l = threadIdx.x; l < t.sites; l += blockDim.x) {
    uint32_t x[D], i;
    if (!tile.site(l, x, i)) continue;
    const uint32_t least = smallest[local[1 + l]];
    uint32_t least_x[D], least_i = 0;
    if (least != kGhostNode) tile.site(static_cast<int>(least) - 1, least_x, least_i);
    parent[1 + tile.first + i] = least == kGhostNode ? kGhostNode : 1 + tile.first + least_i;
  }
}

/// Sites per slot of the swept tiles' queues of unions: a warp's sweep and bonds across queue
/// about 29 unions for 256 sites (2D 4096^2 at beta_c; Nsight Compute's count of the queue's
/// stores, session o call 2), so half a slot a site overflows only on contrived bond sets.
constexpr int kSitesPerUnionSlot = 2;

/// A warp's unions, queued in shared memory (`slots` pairs of local nodes, a << 16 | b) and then
/// united by its lanes together, a pair a lane. United where they are found, they ran at the two
/// or three lanes that found them while the others waited, and the lanes that the finds' loops
/// left apart ran the rest of the sweep's row apart too (Nsight Compute, session n call 6: 2.6
/// of the sweep's 6.1 warp instructions a site). Local nodes are at most 4096 (TileGrid::make).
struct WarpUnions {
  uint32_t* pairs;
  int slots;
  int count;  ///< queued, the same in every lane

  /// Queues the union of a and b where `wanted` (or, with the queue full, unites them at once).
  /// Every lane of the warp calls this.
  __device__ __forceinline__ void add(uint32_t* local, bool wanted, uint32_t a, uint32_t b) {
    const unsigned want = __ballot_sync(0xffffffffu, wanted);
    const unsigned lanes_before = (1u << (threadIdx.x & 31)) - 1;
    const int slot = count + __popc(want & lanes_before);
    count += __popc(want);
    if (!wanted) return;
    if (slot < slots) {
      pairs[slot] = a << 16 | b;
    } else {
      unite_in_tile(local, a, b, true);
    }
  }
  /// Unites the queued pairs, a lane each, and empties the queue. Every lane of the warp calls
  /// this. (Lanes that loop through their finds alone run at 5 to 7 of 32 here; keeping them in
  /// step, every lane one step up a pass, measured slower: Nsight Compute, session o call 3.)
  __device__ __forceinline__ void unite_all(uint32_t* local) {
    __syncwarp();
    const int n = count < slots ? count : slots;
    for (int k = static_cast<int>(threadIdx.x & 31); k < n; k += 32)
      unite_in_tile(local, pairs[k] >> 16, pairs[k] & 0xffffu, true);
    count = 0;
  }
};

/// Whether node and node + step, the ends of a bond (`bonded`), need a union: not where the lane
/// before bonds the same way, its node is joined to this one already (`joined_before`) and its
/// bond's other end has the same parent as this one's, for its union joins this bond's ends too
/// (and so on down the lanes, to a union made). Every lane of the warp calls this.
__device__ __forceinline__ bool needs_union_across(const uint32_t* local, uint32_t node,
                                                   uint32_t step, bool bonded, bool joined_before) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const uint32_t other = bonded ? load_parent(local + node + step) : 0;
  const uint32_t left_other = __shfl_up_sync(0xffffffffu, other, 1);
  const unsigned left_bonded = __ballot_sync(0xffffffffu, bonded) << 1 >> lane & 1;
  return bonded && !(lane > 0 && left_bonded && joined_before && left_other == other);
}

/// label_tiles_kernel for an aligned grid (TileGrid::aligned: whole tiles, rows of at least 32
/// sites): the same parents from far fewer unions. Each warp sweeps a segment of
/// per_thread consecutive rows (along axis D-2) of one group of 32 columns, lane by column, and
/// each row's runs along the row take the label of their first site bonded to the row before
/// (a run bonded to none starts a root); a run bonded to several labels unites them, linking the
/// larger root below the smaller, so that the roots are the parts' smallest nodes. Only the
/// bonds between segments, column groups and, in 3D and 4D, the other axes' sheets go to the
/// union-find, and of those a bond whose ends the bond to its left has joined already is left
/// out. (The first version's unions of every bond ran at 6.7 of 32 lanes and took two thirds of
/// the kernel's instructions, Nsight Compute, session n.) Each warp queues its unions and unites
/// them after its sweep and its bonds across (WarpUnions). Each thread reads its sites' bond
/// masks once and keeps them in registers, and marks each part's smallest node, its
/// representative, in its bond mask (kTileRepresentative), or, where `parts` is not null,
/// writes each site's part there instead: 1 + its representative's local site, or 0 for the
/// ghost's (the unions' halving may change a parent, never a part). Precondition: blockDim.x a
/// multiple of 32 with per_thread = t.sites / blockDim.x at most kMostSweptRows and at most the
/// rows along axis D-2; shared memory for aligned_tiles_shared_words(t.sites) words. At most 32
/// registers a thread, so that 2048 threads fill an SM (at 40, three quarters: 127 against 118 us
/// at 2D 4096^2, Nsight Compute, tests/bench/results/session_t_nvidia_h200/call2 and call3).
template <int D>
__global__ void __launch_bounds__(kMostSweptThreads, LATTICA_SWEPT_TILE_BLOCKS)
    label_aligned_tiles_kernel(TileGrid<D> t, uint8_t* bonds, uint32_t* parent, uint16_t* parts) {
  extern __shared__ uint32_t shared[];
  uint32_t* local = shared;  // [0]: the ghost, [1 + l]: the tile's site l
  const Tile<D> tile(t, blockIdx.x);
  const unsigned all = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int per_log2 = __ffs(t.sites) - __ffs(static_cast<int>(blockDim.x));  // powers of two
  const int per_thread = 1 << per_log2;
  const int row_log2 = t.shape.log2[D - 1];
  const int lines_log2 = t.shape.log2[D - 2];
  // This warp's segment: rows segment * per_thread ... of column group `group` of sheet `sheet`.
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int segments_log2 = lines_log2 - per_log2, groups_log2 = row_log2 - 5;
  const int segment = warp & ((1 << segments_log2) - 1);
  const int group = (warp >> segments_log2) & ((1 << groups_log2) - 1);
  const int sheet = warp >> (segments_log2 + groups_log2);
  const int first =
      ((((sheet << lines_log2) + (segment << per_log2)) << row_log2) | (group << 5)) + lane;
  const auto site = [&](int i) { return first + (i << row_log2); };
  // Where site(i) is in the lattice: the rows along axis D - 2 are stride[D - 2] apart.
  const uint32_t first_at = tile.base + t.offset(first);
  const auto at = [&](int i) { return first_at + static_cast<uint32_t>(i) * t.stride[D - 2]; };
  // A warp's slice of the queues: its 32 * per_thread sites' (kSitesPerUnionSlot).
  const int slots = 32 * per_thread / kSitesPerUnionSlot;
  WarpUnions unions{local + t.sites + 1 + warp * slots, slots, 0};
  if (threadIdx.x == 0) local[0] = kGhostNode;
  // Byte i % 8 of masks_low (i < 8) or masks_high: the bonds of site(i). The loops over a
  // thread's rows are unrolled to kMostSweptRows, so that their shifts are constants (a tenth
  // fewer instructions than loops to per_thread).
  uint64_t masks_low = 0, masks_high = 0;
#pragma unroll
  for (int i = 0; i < kMostSweptRows; ++i) {
    if (i == per_thread) break;
    const uint64_t mask = static_cast<uint64_t>(bonds[at(i)]) << (8 * (i & 7));
    if (i < 8) {
      masks_low |= mask;
    } else {
      masks_high |= mask;
    }
  }
  const auto byte_of = [](uint64_t low, uint64_t high, int i) {
    return static_cast<uint8_t>((i < 8 ? low : high) >> (8 * (i & 7)));
  };
  const auto mask_of = [&](int i) { return byte_of(masks_low, masks_high, i); };
  // The sweep.
  uint32_t label = 0;       // the previous row's label at this lane
  bool from_above = false;  // the previous row's site bonded to this one
#pragma unroll
  for (int i = 0; i < kMostSweptRows; ++i) {
    if (i == per_thread) break;
    const uint8_t mask = mask_of(i);
    const uint32_t node = static_cast<uint32_t>(1 + site(i));
    const unsigned along = __ballot_sync(all, (mask >> (D - 1) & 1) && lane != 31);
    const unsigned left = ~along & ((1u << lane) - 1);
    const int start = left ? 32 - __clz(static_cast<int>(left)) : 0;  // the run's first lane
    const int end = __ffs(~along & (all << lane)) - 1;                // and its last
    const unsigned in_run = (all << start) & (all >> (31 - end));
    const unsigned contact_lanes = __ballot_sync(all, from_above);
    const unsigned contacts = contact_lanes & in_run;
    const int contact = contacts ? __ffs(contacts) - 1 : start;
    const uint32_t above = __shfl_sync(all, label, contact);
    const uint32_t chosen = contacts ? above : node - static_cast<uint32_t>(lane - start);
    // A contact whose label is not the run's joins the two, unless the lane before, in the run,
    // brought the same label: its union (or none, where that is the run's) joins them already.
    const uint32_t left_label = __shfl_up_sync(all, label, 1);
    const bool same_as_left =
        lane > start && (contact_lanes >> (lane - 1) & 1) && left_label == label;
    unions.add(local, from_above && label != chosen && !same_as_left, label, chosen);
    local[node] = chosen;
    label = chosen;
    from_above = (mask >> (D - 2) & 1) && i + 1 < per_thread;
  }
  __syncthreads();
  // The bonds the sweep left: to the next segment, along the axes before D - 2, to the ghost.
  // Without a field no site has a ghost bond, and in 2D only the segment's last row has bonds
  // left: the warp skips the other rows (they took a tenth of the kernel's instructions, Nsight
  // Compute, tests/bench/results/session_o_nvidia_h200/call2).
  const bool ghost_bonds =  // kGhostBond
      __any_sync(all, ((masks_low | masks_high) & 0x8080808080808080ull) != 0);
  static_assert(kGhostBond == 0x80, "the ghost bonds' bits of eight masks");
#pragma unroll
  for (int i = 0; i < kMostSweptRows; ++i) {
    if (i == per_thread) break;
    if (D == 2 && !ghost_bonds && i + 1 < per_thread) continue;  // the same in every lane
    const uint8_t mask = mask_of(i);
    const int l = site(i);
    const uint32_t node = static_cast<uint32_t>(1 + l);
    const uint8_t left_mask = static_cast<uint8_t>(__shfl_up_sync(all, mask, 1));
    const bool along_left = lane > 0 && (left_mask >> (D - 1) & 1);
    if (ghost_bonds) {
      const bool ghost = mask & kGhostBond;
      unions.add(local, ghost && !(along_left && (left_mask & kGhostBond)), node, kGhostNode);
    }
    for (int a = 0; a < D - 1; ++a) {
      if (a == D - 2 && i + 1 < per_thread) continue;  // the sweep joined it
      const int last = (1 << t.shape.log2[a]) - 1;
      const bool bonded = (mask >> a & 1) && ((l >> t.shift[a]) & last) != last;
      const uint32_t step = 1u << t.shift[a];
      unions.add(local, needs_union_across(local, node, step, bonded, along_left), node,
                 node + step);
    }
  }
  // The bonds from the group's last column to the next group's first: row i by lane i, and
  // left out where the row before's bond and the sweep have joined its ends.
  {
    const uint64_t last_low = __shfl_sync(all, masks_low, 31);
    const uint64_t last_high = __shfl_sync(all, masks_high, 31);
    const int i = lane < per_thread ? lane : 0;
    const uint8_t mask = byte_of(last_low, last_high, i);
    const int l = first - lane + 31 + (i << row_log2);
    const int row_end = (1 << row_log2) - 1;
    const bool bonded = lane < per_thread && (mask >> (D - 1) & 1) && (l & row_end) != row_end;
    const bool joined_before = i > 0 && (byte_of(last_low, last_high, i - 1) >> (D - 2) & 1);
    const uint32_t node = static_cast<uint32_t>(1 + l);
    unions.add(local, needs_union_across(local, node, 1, bonded, joined_before), node, node + 1);
  }
  unions.unite_all(local);
  __syncthreads();
  // Each site's root, which is its part's smallest node (or the ghost): the trees are final, and
  // a site's label is a root or, after the halving, seldom more than a step below one. (These
  // walks replace a pass that pointed each thread's starts at their roots first: as many
  // instructions, one barrier and 8 registers less, so that blocks of 256 threads fill the SMs:
  // Nsight Compute, tests/bench/results/session_t_nvidia_h200/call2 and call3.)
#pragma unroll
  for (int i = 0; i < kMostSweptRows; ++i) {
    if (i == per_thread) break;
    const int l = site(i);
    // (Not find_root: with its volatile loads a Swendsen-Wang step of 2D 4096^2 ran at 27.7
    // sites/ns instead of 55.7, session t call 5.)
    uint32_t least = local[1 + l];
    for (uint32_t up = local[least]; up != least; up = local[least]) least = up;
    parent[1 + at(i)] =
        least == kGhostNode ? kGhostNode : 1 + tile.base + t.offset(static_cast<int>(least) - 1);
    if (parts) parts[at(i)] = static_cast<uint16_t>(least);
    if (!parts && least == static_cast<uint32_t>(1 + l))  // the parts name them otherwise
      bonds[at(i)] = static_cast<uint8_t>(mask_of(i) | kTileRepresentative);
  }
}

/// Shared memory words of label_aligned_tiles_kernel for tiles of `sites` sites: the parents
/// (the ghost's too) and the warps' queues of unions.
inline size_t aligned_tiles_shared_words(int sites) {
  return static_cast<size_t>(sites) + 1 + static_cast<size_t>(sites / kSitesPerUnionSlot);
}

/// Points every representative (kTileRepresentative) at its root, after the unions of the bonds
/// between tiles; functor over quads of sites (replica * V + 4q ... 4q + 3, whose masks a thread
/// reads as one word: the sites of an aligned grid are a multiple of 32). Every other node's
/// parent is its representative (or, for sites on a tile's face, an ancestor of it that the
/// unions' halving wrote, itself a representative) or the ghost, so afterwards every node's
/// parent's parent is its root (labelled_root). The walks only read; each thread writes its own
/// nodes, with their roots, while others may walk through them: they read the old parent or the
/// root, both ancestors. A thread takes four sites so that their loads overlap: most threads
/// only load the masks and a representative's parent, and wait on them (a thread a site: 0.0048
/// ns a site at 2D 4096^2 on an H200, session n call 8).
struct PointRepresentativesAtRoots {
  const uint8_t* bonds;
  uint32_t* parent;
  static constexpr int kSites = 4;
  __device__ void operator()(int64_t quad) const {
    const uint32_t first = kSites * static_cast<uint32_t>(quad);
    const uint32_t masks = *reinterpret_cast<const uint32_t*>(bonds + first);
    if (!(masks & kTileRepresentative * 0x01010101u)) return;
    uint32_t p[kSites];
    for (int k = 0; k < kSites; ++k) {
      const uint32_t node = first + 1 + static_cast<uint32_t>(k);
      p[k] = masks >> (8 * k) & kTileRepresentative ? load_parent(parent + node) : node;
    }
    for (int k = 0; k < kSites; ++k) {
      const uint32_t node = first + 1 + static_cast<uint32_t>(k);
      if (p[k] == node) continue;
      const uint32_t root = find_root(parent, p[k]);
      if (root != p[k]) store_parent(parent + node, root);
    }
  }
};

/// Block b joins the bonds from tile b's faces to the next tiles (and round the lattice), whose
/// sites are the tile's last along an axis: along axis a, the sites at local coordinate
/// min(2^log2[a], extent - origin) - 1, the others' coordinates running over the face. (United
/// at the end of the sweeps instead, by the second of the two tiles of a face to finish, the
/// faces cost more: blocks holding their SM's slots while they waited on the unions' global
/// loads took the sweeps from 118 + 30 to 166 us at 2D 4096^2, Nsight Compute,
/// tests/bench/results/session_u_nvidia_h200/call2.)
/// Of the lanes of a warp whose bonds join the same two parents only the first unites them
/// (after the tiles' labelling most of a face's bonds between two parts of clusters join the
/// same two representatives), from those parents (ancestors, so the same components), with its
/// two finds side by side (unite_side_by_side), and every axis's face sites are taken in one
/// pass where the block holds them (blocks of unite_tile_faces_threads): each block waits on
/// chains of global loads, axis after axis on one chain an axis. cluster_bench compares the other
/// FaceUnions. Precondition: blockDim.x a multiple of 32.
enum class FaceUnions : uint8_t {
  each_bond,              ///< every bond its own unite, axis after axis (before session x)
  distinct_axis_by_axis,  ///< the distinct pairs of parents, finds side by side, axis after axis
  distinct,               ///< the same with the axes' faces together (the engine's)
};

/// Threads a block of unite_tile_faces_kernel: axis by axis, up to 128 (a face of the engine's
/// 2D tiles); with the axes together, the face sites of every axis in as few passes of at most
/// 512 threads as they need, shared evenly (2D 32 x 128: 160, 3D 8 x 16 x 32: 448).
template <int D>
int unite_tile_faces_threads(const TileGrid<D>& t, FaceUnions how) {
  if (how != FaceUnions::distinct) return t.sites < 32 ? 32 : t.sites > 128 ? 128 : t.sites;
  int faces = 0;
  for (int a = 0; a < D; ++a) faces += t.sites >> t.shape.log2[a];
  const int passes = (faces + 511) / 512;
  return ((faces + passes - 1) / passes + 31) / 32 * 32;
}

template <int D>
__global__ void unite_tile_faces_kernel(TileGrid<D> t, const uint8_t* bonds, uint32_t* parent,
                                        FaceUnions how) {
  const Tile<D> tile(t, blockIdx.x);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const auto face_sites = [&](int a) { return t.sites >> t.shape.log2[a]; };
  // Site k of the face of axis a: whether its bond to the next tile is one to unite here, and
  // its ends. (Called with a constant a, from unrolled loops: with an axis found at run time the
  // tile's geometry went to local memory, a stack frame of 168 bytes in 2D, and the unions of
  // 2D 4096^2 took 0.0106 ns a site instead of 0.0084 on an H100, session x call 2.)
  const auto face_bond = [&](int a, int k, uint32_t& from, uint32_t& to) {
    const uint32_t end = t.extent[a] - tile.origin[a];
    const uint32_t size = static_cast<uint32_t>(t.shape.extent(a));
    const int last = static_cast<int>(end < size ? end : size) - 1;
    const int low = (1 << t.shift[a]) - 1;  // the bits of the axes after a
    const int l = (k & low) | (last << t.shift[a]) | ((k & ~low) << t.shape.log2[a]);
    uint32_t x[D], i;
    if (!tile.site(l, x, i) || !(bonds[tile.first + i] >> a & 1) || !tile.interior(x) ||
        tile.crosses_box(x, a))
      return false;
    from = 1 + tile.first + i;
    to = 1 + tile.first + tile.up(i, x, a);
    return true;
  };
  const bool together = how == FaceUnions::distinct;
  int begin = 0;  // of this pass's face sites, counting axis 0's first
  for (int range = 0; range < (together ? 1 : D); ++range) {
    int end = begin;
#pragma unroll
    for (int a = 0; a < D; ++a) end += together || a == range ? face_sites(a) : 0;
    // Every lane of a warp takes the same passes (for_tile_sites says why), so that the warp's
    // lanes can compare their bonds' parents.
    for (int base = begin + static_cast<int>(threadIdx.x) - lane; base < end;
         base += static_cast<int>(blockDim.x)) {
      const int k = base + lane;
      uint32_t from = 0, to = 0;
      bool bonded = false;
      int first = 0;  // axis a's first face site
#pragma unroll
      for (int a = 0; a < D; ++a) {
        if (k < end && k >= first && k < first + face_sites(a))
          bonded = face_bond(a, k - first, from, to);
        first += face_sites(a);
      }
      if (how == FaceUnions::each_bond) {
        if (bonded) unite(parent, from, to);
      } else {
        if (bonded) {
          from = load_parent(parent + from);
          to = load_parent(parent + to);
        }
        // No node is 2^32 - 1 (kMaxLabelledSites), so lanes without a bond match only each other.
        const uint64_t ends = bonded ? uint64_t{from} << 32 | to : ~uint64_t{0};
        const unsigned same = __match_any_sync(0xffffffffu, ends);
        if (bonded && from != to && lane == __ffs(static_cast<int>(same)) - 1)
          unite_side_by_side(parent, from, to);
      }
      __syncwarp();
    }
    begin = end;
  }
}

/// Block b points every node of tile b at its root (FlattenLabels, tile by tile): a node whose
/// parent lies in the tile follows it there, in shared memory, so only the nodes whose parents
/// lie outside (the parts joined to other tiles, and the face sites whose paths the unions
/// halved) walk the global trees.
template <int D>
__global__ void flatten_tiles_kernel(TileGrid<D> t, uint32_t* parent) {
  extern __shared__ uint32_t shared[];
  uint32_t* up = shared;              // per local site: the local site of its parent, or itself
  uint32_t* root = shared + t.sites;  // where up[l] == l: the global root of l's node
  const Tile<D> tile(t, blockIdx.x);
  for_tile_sites(t.sites, [&](int l) {
    uint32_t x[D], i;
    up[l] = static_cast<uint32_t>(l);
    if (!tile.site(l, x, i)) return;
    const uint32_t node = 1 + tile.first + i;
    const uint32_t p = parent[node];
    const int local = p == kGhostNode ? -1 : tile.local_site(p - 1 - tile.first);
    if (p == node || local < 0) {
      root[l] = p == node ? node : find_root(parent, p);
    } else {
      up[l] = static_cast<uint32_t>(local);
    }
  });
  __syncthreads();
  for_tile_sites(t.sites, [&](int l) {
    uint32_t x[D], i;
    if (!tile.site(l, x, i)) return;
    uint32_t h = static_cast<uint32_t>(l);
    while (up[h] != h) h = up[h];  // parents below their nodes: ends
    const uint32_t node = 1 + tile.first + i;
    if (parent[node] != root[h]) parent[node] = root[h];
  });
}

/// The unions of label_box with tiles of `shape`: the tiles' labelling, then the unions of the
/// bonds between tiles; asynchronous. Aligned grids (TileGrid::aligned) mark their
/// representatives in `bonds` (kTileRepresentative) for flatten_by_tiles, or, given `parts`
/// (aligned grids only), write each site's part there for move_by_tiles instead. Blocks take at
/// most most_threads threads (a multiple of 32), or where 0 each kernel's best: 512 for
/// label_tiles_kernel, and for the sweeps as many rows a thread as they take (kMostSweptRows).
template <int D>
void unite_by_tiles(const CudaExec& exec, const TileGrid<D>& t, int64_t replicas, uint8_t* bonds,
                    uint32_t* parent, int most_threads = 0, uint16_t* parts = nullptr,
                    FaceUnions faces = FaceUnions::distinct) {
  if (parts && !t.aligned)
    throw std::invalid_argument("cluster tiles: parts of aligned grids only");
  const int64_t blocks = replicas * t.per_replica;
  if (blocks > 0x7fffffff) throw std::invalid_argument("cluster tiles: too many tiles");
  const int cap = most_threads > 0 ? most_threads : 512;
  int threads = t.sites < 32 ? 32 : t.sites > cap ? cap : t.sites;
  const size_t shared = 2 * (static_cast<size_t>(t.sites) + 1) * sizeof(uint32_t);
  bool swept = false;
  if constexpr (D >= 2) {
    if (t.aligned) {
      // At most kMostSweptRows sites a thread, and no more than the rows along axis D - 2; at
      // most kMostSweptThreads threads (TileGrid::make).
      const int lines = 1 << t.shape.log2[D - 2];
      const int fewest = t.sites / (lines < kMostSweptRows ? lines : kMostSweptRows);
      threads = most_threads > 0 && threads > fewest ? threads : fewest;
      if (threads > kMostSweptThreads) threads = kMostSweptThreads;
      label_aligned_tiles_kernel<D>
          <<<static_cast<unsigned>(blocks), threads,
             aligned_tiles_shared_words(t.sites) * sizeof(uint32_t), exec.stream()>>>(
              t, bonds, parent, parts);
      swept = true;
    }
  }
  if (!swept) {
    label_tiles_kernel<D>
        <<<static_cast<unsigned>(blocks), threads, shared, exec.stream()>>>(t, bonds, parent);
  }
  LATTICA_CUDA_CHECK_LAUNCH(exec.stream());
  unite_tile_faces_kernel<D>
      <<<static_cast<unsigned>(blocks), unite_tile_faces_threads(t, faces), 0, exec.stream()>>>(
          t, bonds, parent, faces);
  LATTICA_CUDA_CHECK_LAUNCH(exec.stream());
}

/// After unite_by_tiles: every node at most two steps from its root (labelled_root); aligned
/// grids point only their representatives at their roots, the others every node; asynchronous.
template <int D>
void flatten_by_tiles(const CudaExec& exec, const TileGrid<D>& t, int64_t replicas,
                      const uint8_t* bonds, uint32_t* parent) {
  if (t.aligned) {
    exec.for_each(replicas * t.volume / PointRepresentativesAtRoots::kSites,
                  PointRepresentativesAtRoots{bonds, parent});
    return;
  }
  const int threads = t.sites < 32 ? 32 : t.sites > 512 ? 512 : t.sites;
  const size_t shared = 2 * static_cast<size_t>(t.sites) * sizeof(uint32_t);
  flatten_tiles_kernel<D>
      <<<static_cast<unsigned>(replicas * t.per_replica), threads, shared, exec.stream()>>>(t,
                                                                                            parent);
  LATTICA_CUDA_CHECK_LAUNCH(exec.stream());
}

/// Threads a block of move_aligned_tiles_kernel, at most, and the quads (four sites of a row)
/// that each moves, at most.
constexpr int kMostMoveTileThreads = 256;
constexpr int kMostMovedQuads = 4;

/// Quads a thread of move_aligned_tiles_kernel takes in tiles of `sites` sites with `threads`
/// threads a block.
LATTICA_HD_INLINE int moved_quads_per_thread(int sites, int threads) {
  return (sites / 4 + threads - 1) / threads;
}

/// Shared memory bytes of move_aligned_tiles_kernel: each representative's word (4 bytes a site)
/// and whether its cluster moves (1 byte a site), each warp's list of its representatives (2
/// bytes for each site of its quads) and its coin blocks (16 bytes for each of its quads' rows).
inline size_t moved_tiles_shared_bytes(int sites, int threads) {
  const auto per_thread = static_cast<size_t>(moved_quads_per_thread(sites, threads));
  return 5 * static_cast<size_t>(sites) + 8 * static_cast<size_t>(threads) * per_thread +
         16 * static_cast<size_t>(threads / 32) * per_thread;
}

/// Block b of an aligned grid, after unite_by_tiles with `parts`, points tile b's
/// representatives at their roots (as PointRepresentativesAtRoots) and moves the tile's sites (as
/// MoveClusters, whose decision must not be Wolff's: that needs every seed label before any
/// move). Each representative draws its cluster's word into shared memory, and every site takes
/// its part's: a cluster's Philox block is drawn once per part of it in a tile rather than once
/// per site, and no site reads its representative's parent from global memory. Those gathers and
/// blocks bound MoveClusters (Nsight Compute, tests/bench/results/session_o_nvidia_h200/call1:
/// 70 % of its stalls on loads, Philox 3/4 of its instructions). Other blocks point their
/// representatives at roots meanwhile: walks read the old parent or the root, both ancestors.
/// A thread takes the quads threadIdx.x + j blockDim.x (j < moved_quads_per_thread) and reads
/// their parts and spins first, keeping them in registers until it moves them: a site is a
/// representative where its part names itself, each warp lists its own and draws their words,
/// and one barrier then lets every site read its part's. (Before session u the parts went to
/// shared memory and the representatives were found from the bonds' marks, behind two more
/// barriers: 3.4 warp instructions a site, 98 us at 2D 4096^2, stalled on barriers and loads,
/// Nsight Compute, tests/bench/results/session_t_nvidia_h200/call2.) Spins of one byte: the
/// quad's sites i, i + 2 of colour c are adjacent bytes, as are i + 1, i + 3 of the other.
/// Swendsen-Wang's coins (Model::kClusterMoveBits == 1, ClusterDecision): a warp's j-th quads
/// are 128 consecutive sites of a row where the tile's rows hold 128 or more, one coin block,
/// which the warp draws once for the representatives that are their clusters' roots (their
/// labels are their own sites), so only the parts of clusters rooted elsewhere draw blocks of
/// their own. (A block for each representative took 3/8 of the kernel's instructions.)
/// Preconditions: blockDim.x a power of two from 32, at most kMostMoveTileThreads, with at most
/// kMostMovedQuads quads a thread; t.aligned (rows of 32 sites or more); the parts of
/// label_aligned_tiles_kernel; shared memory of moved_tiles_shared_bytes.
template <int D, class Model>
__global__ void __launch_bounds__(kMostMoveTileThreads, LATTICA_MOVE_TILE_BLOCKS)
    move_aligned_tiles_kernel(TileGrid<D> t, const uint16_t* parts, uint32_t* parent,
                              MoveClusters<D, Model> move) {
  using Spin = typename Model::Spin;
  static_assert(sizeof(Spin) == 1, "two sites of a colour in 16 bits");
  extern __shared__ uint32_t shared_words[];
  uint32_t* word = shared_words;                                 // [l]: representative l's word
  auto* moving = reinterpret_cast<uint8_t*>(word + t.sites);     // [l]: whether its cluster moves
  auto* listed = reinterpret_cast<uint16_t*>(moving + t.sites);  // the warps' representatives
  const unsigned all = 0xffffffffu;
  const Tile<D> tile(t, blockIdx.x);
  const uint32_t r = t.by_per_replica.divide(blockIdx.x);
  const uint32_t origin = tile.base - tile.first;  // the tile's first site in its replica
  const int quads = t.sites / 4;
  const int threads = static_cast<int>(blockDim.x);
  const int per_thread = moved_quads_per_thread(t.sites, threads);
  const int threads_log2 = __ffs(threads) - 1;
  const int lane = static_cast<int>(threadIdx.x & 31);
  // The 16-bit words of quad l's spins: sites l, l + 2 (colour c) and l + 1, l + 3 (the other).
  const auto spin_pairs = [&](int l, uint16_t*& even, uint16_t*& odd) {
    uint32_t sum = 0;  // of the coordinates, whose parities are those of their lowest bits
    for (int a = 0; a < D; ++a) sum += tile.origin[a] + (static_cast<uint32_t>(l) >> t.shift[a]);
    const int colour = static_cast<int>(sum & 1);
    const uint32_t i = origin + t.offset(l);
    even = reinterpret_cast<uint16_t*>(move.sites.at32(r, i, colour));
    odd = reinterpret_cast<uint16_t*>(move.sites.at32(r, i + 1, colour ^ 1));
  };
  uint2 part[kMostMovedQuads];     // sites l + 0, 1 (x) and 2, 3 (y), 16 bits each
  uint32_t spin[kMostMovedQuads];  // byte 0, 1: sites l, l + 2; bytes 2, 3: l + 1, l + 3
  uint32_t representatives = 0;    // bit 4 j + k: site k of quad j names its part
#pragma unroll
  for (int j = 0; j < kMostMovedQuads; ++j) {
    part[j] = make_uint2(0, 0);
    spin[j] = 0;
    const int quad = static_cast<int>(threadIdx.x) + j * threads;
    if (j == per_thread) break;
    if (quad >= quads) continue;
    const int l = 4 * quad;
    part[j] = *reinterpret_cast<const uint2*>(parts + tile.base + t.offset(l));
    uint16_t *even, *odd;
    spin_pairs(l, even, odd);
    spin[j] = uint32_t{*even} | uint32_t{*odd} << 16;
    const uint32_t own = static_cast<uint32_t>(l + 1);  // site l's part, were it its own
    representatives |= ((part[j].x & 0xffffu) == own ? 1u : 0u) << (4 * j);
    representatives |= ((part[j].x >> 16) == own + 1 ? 1u : 0u) << (4 * j + 1);
    representatives |= ((part[j].y & 0xffffu) == own + 2 ? 1u : 0u) << (4 * j + 2);
    representatives |= ((part[j].y >> 16) == own + 3 ? 1u : 0u) << (4 * j + 3);
  }
  // The warp's list: each lane's representatives after the lanes' before it.
  uint16_t* own_list = listed + 4 * (static_cast<int>(threadIdx.x) - lane) * per_thread;
  const int count = __popc(representatives);
  int through = count;  // the representatives of lanes 0 ... lane
  for (int d = 1; d < 32; d <<= 1) {
    const int before = __shfl_up_sync(all, through, d);
    if (lane >= d) through += before;
  }
  const int listed_count = __shfl_sync(all, through, 31);
  int slot = through - count;
  for (uint32_t m = representatives; m; m &= m - 1) {
    const int b = __ffs(static_cast<int>(m)) - 1;
    own_list[slot++] =
        static_cast<uint16_t>(4 * (static_cast<int>(threadIdx.x) + (b >> 2) * threads) + (b & 3));
  }
  // The coin blocks of the warp's rows: lane j draws its j-th quads'.
  using Decision = ClusterDecision<Model>;
  static_assert(Decision::kCoinsPerBlock == 128, "a warp's 32 quads a block");
  const bool shared_coins = Model::kClusterMoveBits == 1 && t.shape.log2[D - 1] >= 7;
  uint32_t* coins = reinterpret_cast<uint32_t*>(listed + 4 * threads * per_thread) +
                    4 * per_thread * static_cast<int>(threadIdx.x >> 5);
  if (shared_coins && lane < per_thread) {
    const int l = 4 * (static_cast<int>(threadIdx.x) - lane + lane * threads);
    const PhiloxBlock b = move.decision.coin_block(r, (origin + t.offset(l)) / 128);
    coins[4 * lane] = b.x;
    coins[4 * lane + 1] = b.y;
    coins[4 * lane + 2] = b.z;
    coins[4 * lane + 3] = b.w;
  }
  __syncwarp();
  // The warp's representatives that are roots take their coins; the others are listed again,
  // from own_list[0] on (over entries read already), for a loop of their own: each round's lanes
  // take one path. (A round with roots and others ran both: 86 % of the rounds drew Philox
  // blocks, tests/bench/results/session_u_nvidia_h200/call3.)
  int rooted_elsewhere = listed_count;
  if (shared_coins) {
    rooted_elsewhere = 0;
    for (int k = lane; k - lane < listed_count; k += 32) {
      const int l = k < listed_count ? own_list[k] : 0;
      const uint32_t node = 1 + tile.base + t.offset(l);
      const bool root = k < listed_count && load_parent(parent + node) == node;
      if (root) {  // label - 1 is its site, whose row is l's
        const uint32_t bit = static_cast<uint32_t>(l) & 127u;  // rows start at multiples of 128
        word[l] = (coins[4 * ((l >> 2) >> threads_log2) + (bit >> 5)] >> (bit & 31) & 1u) << 31;
        moving[l] = 1;
      }
      const unsigned others = __ballot_sync(all, k < listed_count && !root);
      __syncwarp();  // every lane has read its entry
      if (others >> lane & 1)
        own_list[rooted_elsewhere + __popc(others & ((1u << lane) - 1))] = static_cast<uint16_t>(l);
      rooted_elsewhere += __popc(others);
    }
    __syncwarp();
  }
  // The others at their roots, and their clusters' words; the lanes meet after each round
  // (for_tile_sites says why).
  for (int k = lane; k - lane < rooted_elsewhere; k += 32) {
    if (k < rooted_elsewhere) {
      const int l = own_list[k];
      const uint32_t node = 1 + tile.base + t.offset(l), p = load_parent(parent + node);
      const uint32_t root = p == node ? node : find_root(parent, p);
      if (root != p) store_parent(parent + node, root);
      uint32_t w = 0;
      const uint64_t label = root == kGhostNode ? kGhostLabel : root - tile.first;
      moving[l] = move.decision.moves(r, label, w) ? 1 : 0;
      word[l] = w;
    }
    __syncwarp();
  }
  __syncthreads();
  // Every site of a moved cluster takes its part's word.
#pragma unroll
  for (int j = 0; j < kMostMovedQuads; ++j) {
    const int quad = static_cast<int>(threadIdx.x) + j * threads;
    if (j == per_thread) break;
    if (quad >= quads) continue;
    uint32_t moved = spin[j];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t q = (k < 2 ? part[j].x : part[j].y) >> (16 * (k & 1)) & 0xffffu;
      if (q == 0 || !moving[q - 1]) continue;  // the ghost's part, or a cluster left alone
      const int shift = 8 * ((k >> 1) + 2 * (k & 1));
      const auto s = static_cast<Spin>(spin[j] >> shift);
      const auto bits = static_cast<uint8_t>(move.moved(r, word[q - 1], s));
      moved = (moved & ~(0xffu << shift)) | uint32_t{bits} << shift;
    }
    if (moved == spin[j]) continue;
    uint16_t *even, *odd;
    spin_pairs(4 * quad, even, odd);
    if ((moved ^ spin[j]) & 0xffffu) *even = static_cast<uint16_t>(moved);
    if ((moved ^ spin[j]) >> 16) *odd = static_cast<uint16_t>(moved >> 16);
  }
}

/// After unite_by_tiles with `parts` on an aligned grid: flatten_by_tiles and the move in one
/// kernel (move_aligned_tiles_kernel; not for Wolff's decisions); asynchronous. Blocks take the
/// largest power of two of threads up to most_threads and the tile's quads, or more where that
/// would leave a thread more than kMostMovedQuads quads.
template <int D, class Model>
void move_by_tiles(const CudaExec& exec, const TileGrid<D>& t, int64_t replicas,
                   const uint16_t* parts, uint32_t* parent, const MoveClusters<D, Model>& move,
                   int most_threads = kMostMoveTileThreads) {
  if (!t.aligned || move.decision.seed_label)
    throw std::invalid_argument("move_by_tiles: aligned grids and Swendsen-Wang only");
  if (most_threads > kMostMoveTileThreads || most_threads < 32 || most_threads % 32 != 0)
    throw std::invalid_argument("move_by_tiles: 32 to 256 threads a block, a multiple of 32");
  const int64_t blocks = replicas * t.per_replica;
  const int quads = t.sites / 4;  // a power of two
  int threads = 32;               // a power of two up to most_threads and quads
  while (2 * threads <= most_threads && 2 * threads <= quads) threads *= 2;
  while (threads * kMostMovedQuads < quads) threads *= 2;  // tiles hold at most 1024 quads
  if (threads > kMostMoveTileThreads)
    throw std::invalid_argument("move_by_tiles: tiles of at most 4096 sites");
  move_aligned_tiles_kernel<D, Model>
      <<<static_cast<unsigned>(blocks), threads, moved_tiles_shared_bytes(t.sites, threads),
         exec.stream()>>>(t, parts, parent, move);
  LATTICA_CUDA_CHECK_LAUNCH(exec.stream());
}

/// label_box with tiles of `shape`, blocks of at most most_threads threads, the unions between
/// tiles as `faces` says (unite_by_tiles); asynchronous.
template <int D>
void label_box_tiled(const CudaExec& exec, const ClusterLattice<D>& g, uint8_t* bonds,
                     uint32_t* parent, int64_t sites, TileShape<D> shape, int most_threads = 0,
                     FaceUnions faces = FaceUnions::distinct) {
  if (sites <= 0) return;
  const TileGrid<D> t = TileGrid<D>::make(g, shape);
  unite_by_tiles(exec, t, sites / g.volume, bonds, parent, most_threads, nullptr, faces);
  flatten_by_tiles(exec, t, sites / g.volume, bonds, parent);
}

/// Tiles of 4096 sites whose rows (the last axis) are at least 32 long where the dimension
/// allows, so that a warp's ballot starts each row's runs: 1D 4096, 2D 32 x 128, 3D 8 x 16 x 32,
/// 4D 8^4. On an H200, at the critical points (tests/bench/cluster_bench.cu, session o call 4):
/// 2D 8192^2 0.0117 ns per site for the unions (64 x 64: 0.0117; 32 x 32, whose 1024 sites leave
/// each warp 2 rows to sweep: 0.0215; the same tiles not swept: 0.0228; the global unions alone,
/// session n: 0.060); 3D 256^3 0.0193 (8 x 8 x 64: 0.0199; 16^3, rows too short to sweep:
/// 0.0388; not swept: 0.0316). Since session t (16 rows a thread, call 4): 2D 8192^2 0.0077
/// (64 x 64: 0.0079), 4096^2 0.0090; 3D 256^3 0.0163 (8 x 8 x 64: 0.0166). Tiles of 8192 sites
/// (64 x 128, in more than 48 KiB of shared memory) swept 0.0091 at 8192^2 but made the one
/// kernel that moves them slower (0.0064 to 0.0074 ns a site, fewer blocks an SM; call 1).
template <int D>
TileShape<D> default_tile_shape() {
  TileShape<D> s{};
  for (int a = 0; a < D; ++a) s.log2[a] = 12 / D;
  if constexpr (D == 2) {
    s.log2[0] = 5;
    s.log2[1] = 7;
  } else if constexpr (D == 3) {
    s.log2[0] = 3;
    s.log2[1] = 4;
    s.log2[2] = 5;
  }
  return s;
}

/// The GPU's label_box: the same roots as the generic one, tile by tile (each node at most two
/// steps from its root: labelled_root); may mark representatives in `bonds`.
template <int D>
void label_box(const CudaExec& exec, const ClusterLattice<D>& g, uint8_t* bonds, uint32_t* parent,
               int64_t sites) {
  label_box_tiled(exec, g, bonds, parent, sites, default_tile_shape<D>());
}

/// The GPU's label_and_move (Swendsen-Wang): on aligned grids the unions by tiles, keeping each
/// site's part in `parts` (allocated here, 2 bytes a site), then the flattening and the move in
/// one kernel (move_by_tiles); else label_box and the move. The same labels and spins as the
/// generic one; asynchronous.
template <int D, class Model>
void label_and_move(const CudaExec& exec, const ClusterLattice<D>& g, uint8_t* bonds,
                    uint32_t* parent, int64_t sites, const MoveClusters<D, Model>& move,
                    CudaExec::Buffer<uint16_t>& parts) {
  if (move.decision.seed_label) throw std::invalid_argument("label_and_move: not for Wolff");
  if (sites <= 0) return;
  const TileGrid<D> t = TileGrid<D>::make(g, default_tile_shape<D>());
  if (!t.aligned) {
    label_box(exec, g, bonds, parent, sites);
    for_each_cluster_site(exec, sites, move);
    return;
  }
  if (parts.size() != sites) parts = exec.allocate<uint16_t>(sites);
  unite_by_tiles(exec, t, sites / g.volume, bonds, parent, 0, parts.data());
  move_by_tiles(exec, t, sites / g.volume, parts.data(), parent, move);
}

}  // namespace lattica
