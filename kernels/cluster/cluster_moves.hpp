#pragma once
// Cluster moves (Swendsen-Wang, Wolff, and their embeddings in O(n) and phi^4), written once for
// both backends as functors over sites that exec.for_each launches. One cluster step:
//   1. PickClusters: per replica, the step's embedding (O(n)'s direction r) and Wolff's seed site;
//   2. ClusterBonds: every site's bonds to its +e_a neighbours and to the ghost spin (the field),
//      each occupied with the model's probability (Model::cluster_bond, ghost_bond);
//   3. label_box: every site's cluster, named by its smallest node, the ghost's clusters by
//      node 0, at most two steps from each node (labelled_root). Here InitialParents, UniteBonds
//      over every bond, then FlattenLabels (union_find.hpp): every node at its root; the GPU's
//      overload (tile_labels.cuh) first labels tiles in shared memory, then unites the bonds
//      between tiles: the same roots;
//   4. MoveClusters (or MovePackedClusters): every site of a moved cluster takes
//      Model::cluster_move, the same for the whole cluster because its random word is keyed by
//      the cluster's canonical label (1 + its smallest global site; 0 for the ghost's clusters,
//      which never move).
// Random numbers: bonds by (seed, cluster_bond, replica, global site, step) with four sites
// sharing a Philox block (QuadBondNumbers), a cluster's move by (seed, cluster_move, replica,
// canonical label, step), the step's picks by (seed, cluster_pick, replica, 0, step), with
// step = update_step(sweep, pass, 2 * cluster) for the cluster-th step of a pass (Wolff passes
// take several). Nothing depends on block size, thread count, backend or how the lattice is
// split: a box of a decomposed lattice computes the bonds between its sites and its ghosts
// exactly as the neighbouring box does, and the ranks agree on labels by exchanging them
// (sim/engine/passes/cluster_pass.hpp).
//
// Sites here are named by their lexicographic index in the (box) lattice, with ghosts; storage is
// read through a Sites accessor (ByteSites, PackedSites). On a lattice without ghost layers a
// thread takes four sites of a row for the bonds and two for the moves (for_each_cluster_site),
// in 32-bit arithmetic.

#include <cstdint>
#include <stdexcept>

#include "kernels/cluster/union_find.hpp"
#include "kernels/common/fast_divisor.hpp"
#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/replica_params.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// Bond mask bit of the bond to the ghost spin (bits 0 .. D-1: to the +e_a neighbours).
constexpr uint8_t kGhostBond = 0x80;
/// A bond threshold at or above which the bond is certain (probability 1 in 2^32 fixed point).
constexpr uint64_t kCertainBond = uint64_t(1) << 32;
/// Canonical label of the ghost spin's clusters.
constexpr uint64_t kGhostLabel = 0;
/// Cluster steps per pass: each takes two draws of the step word (the second for the bonds'
/// refinements, QuadBondNumbers).
constexpr uint32_t kMaxClusterSteps = static_cast<uint32_t>(kMaxRngDraws / 2);

/// The step word of a pass's cluster-th step.
LATTICA_HD_INLINE uint64_t cluster_step(uint64_t sweep, uint32_t pass, uint32_t cluster) {
  return update_step(sweep, pass, 2 * cluster);
}

/// Lexicographic geometry of the whole lattice or of one box with its ghost layers (one site
/// wide along the split axes), and the checkerboard storage behind it. Indices (replica * V +
/// site) are below 2^32 (kMaxLabelledSites), so coordinates come from 32-bit divisions by
/// multiply-high (FastDivisor), and a site's storage position from its coordinates' parity.
template <int D>
struct ClusterLattice {
  Checkerboard<D> storage;
  FastDivisor by_extent[D];
  FastDivisor by_volume;
  int64_t extent[D];
  int64_t stride[D];  ///< lexicographic
  int64_t ghosts[D];  ///< 0, or 1 along a split axis
  int64_t volume;     ///< of the box, ghosts included
  bool boxed;

  static ClusterLattice make(const Checkerboard<D>& lattice, const int64_t (&ghosts)[D]) {
    ClusterLattice g{};
    g.storage = lattice;
    int64_t s = 1;
    g.boxed = false;
    for (int a = D - 1; a >= 0; --a) {
      g.extent[a] = lattice.extent[a];
      g.by_extent[a] = FastDivisor::make(static_cast<uint32_t>(lattice.extent[a]));
      g.stride[a] = s;
      g.ghosts[a] = ghosts[a];
      g.boxed = g.boxed || ghosts[a] != 0;
      s *= lattice.extent[a];
    }
    g.volume = s;
    g.by_volume = FastDivisor::make(static_cast<uint32_t>(s));
    return g;
  }

  /// The replica of index = replica * V + i, and i.
  LATTICA_HD_INLINE int64_t replica(int64_t index, int64_t& i) const {
    const int64_t r = by_volume.divide(static_cast<uint32_t>(index));
    i = index - r * volume;
    return r;
  }
  /// Coordinates of site i; returns their parity (the site's colour in the box).
  LATTICA_HD_INLINE int coordinates(int64_t i, int64_t (&x)[D]) const {
    uint32_t rest = static_cast<uint32_t>(i);
    int64_t sum = 0;
    for (int a = D - 1; a >= 0; --a) {
      const uint32_t q = by_extent[a].divide(rest);
      x[a] = rest - q * static_cast<uint32_t>(extent[a]);
      sum += x[a];
      rest = q;
    }
    return static_cast<int>(sum & 1);
  }
  /// Storage position (colour * V/2 + i / 2) of site i of colour `colour`.
  LATTICA_HD_INLINE int64_t position(int64_t i, int colour) const {
    return colour * storage.half_volume + (i >> 1);
  }
  /// Sites along the last axis (a row), ghosts included.
  LATTICA_HD_INLINE int64_t row_length() const { return extent[D - 1]; }
  /// Whether the site at x is updated here (not a ghost).
  LATTICA_HD_INLINE bool interior(const int64_t (&x)[D]) const {
    for (int a = 0; a < D; ++a) {
      if (x[a] < ghosts[a] || x[a] >= extent[a] - ghosts[a]) return false;
    }
    return true;
  }
  /// The lexicographic index of the +e_a neighbour (periodic within the box); its colour is the
  /// other one, every extent being even.
  LATTICA_HD_INLINE int64_t up(int64_t i, const int64_t (&x)[D], int a) const {
    return x[a] + 1 == extent[a] ? i - (extent[a] - 1) * stride[a] : i + stride[a];
  }
  /// Whether the bond from site x (interior or not) to its +e_a neighbour joins an interior site
  /// to an interior site or to a ghost, so this box decides it; `cross`: to or from a ghost.
  LATTICA_HD_INLINE bool owns_bond(const int64_t (&x)[D], bool inside, int a, bool& cross) const {
    cross = false;
    if (!boxed) return true;
    if (ghosts[a] && x[a] + 1 == extent[a]) return false;  // would wrap inside the box
    if (inside) {
      cross = ghosts[a] && x[a] + 2 == extent[a];  // up to the upper ghost layer
      return true;
    }
    // A ghost: only a lower ghost of axis a whose other coordinates are interior.
    if (!ghosts[a] || x[a] != 0) return false;
    for (int b = 0; b < D; ++b) {
      if (b != a && (x[b] < ghosts[b] || x[b] >= extent[b] - ghosts[b])) return false;
    }
    cross = true;
    return true;
  }
  /// Global lexicographic index of the site at x.
  LATTICA_HD_INLINE int64_t global(int64_t i, const int64_t (&x)[D]) const {
    return boxed ? storage.global_site(x, x[D - 1]) : i;
  }

  // The same in 32-bit arithmetic (replica * V + site is below 2^32), for the whole lattice's
  // bonds and moves (the bonds: 198 thread instructions a site against 262 in 64-bit arithmetic,
  // Nsight Compute, tests/bench/results/session_n_nvidia_h200).
  /// The replica of index = replica * V + i, and i.
  LATTICA_HD_INLINE uint32_t replica32(uint32_t index, uint32_t& i) const {
    const uint32_t r = by_volume.divide(index);
    i = index - r * static_cast<uint32_t>(volume);
    return r;
  }
  /// Coordinates of site i; returns their parity.
  LATTICA_HD_INLINE int coordinates32(uint32_t i, uint32_t (&x)[D]) const {
    uint32_t sum = 0;
    for (int a = D - 1; a > 0; --a) {
      const uint32_t q = by_extent[a].divide(i);
      x[a] = i - q * static_cast<uint32_t>(extent[a]);
      sum += x[a];
      i = q;
    }
    x[0] = i;
    return static_cast<int>((sum + i) & 1);
  }
  /// The +e_a neighbour of site i at x (periodic).
  LATTICA_HD_INLINE uint32_t up32(uint32_t i, const uint32_t (&x)[D], int a) const {
    const auto n = static_cast<uint32_t>(extent[a]), s = static_cast<uint32_t>(stride[a]);
    return x[a] + 1 == n ? i - (n - 1) * s : i + s;
  }
};

/// One byte-storage site per spin: replica r's site i of colour c (its coordinate sum mod 2,
/// which callers know from its coordinates) at r * V + c * V/2 + i / 2.
template <int D, class Spin>
struct ByteSites {
  Checkerboard<D> lattice;
  Spin* spins;
  LATTICA_HD_INLINE Spin* at(int64_t r, int64_t i, int colour) const {
    return spins + r * lattice.volume() + colour * lattice.half_volume + (i >> 1);
  }
  LATTICA_HD_INLINE Spin spin(int64_t r, int64_t i, int colour) const { return *at(r, i, colour); }
  /// at() in 32-bit arithmetic (r V + colour V/2 + i/2 below 2^32: a labelled lattice).
  LATTICA_HD_INLINE Spin* at32(uint32_t r, uint32_t i, int colour) const {
    const auto half = static_cast<uint32_t>(lattice.half_volume);
    return spins + (2 * r * half + static_cast<uint32_t>(colour) * half + (i >> 1));
  }
  LATTICA_HD_INLINE Spin spin32(uint32_t r, uint32_t i, int colour) const {
    return *at32(r, i, colour);
  }
  /// The same from i alone (D divisions: for tests and references).
  LATTICA_HD_INLINE Spin spin(int64_t r, int64_t i) const {
    return spins[r * lattice.volume() + lattice.storage_index(i)];
  }
};

/// Multi-spin-coded Ising storage (kernels/models/ising_packed.hpp): bit j % 32 of word j / 32
/// of a colour is colour-local site j, 1 = +1 (V/2 is a multiple of 32).
template <int D>
struct PackedSites {
  Checkerboard<D> lattice;
  const uint32_t* words;
  LATTICA_HD_INLINE int8_t spin(int64_t r, int64_t i, int colour) const {
    return spin_at(r, colour * lattice.half_volume + (i >> 1));
  }
  LATTICA_HD_INLINE int8_t spin(int64_t r, int64_t i) const {
    return spin_at(r, lattice.storage_index(i));
  }
  /// spin() in 32-bit arithmetic (r V + colour V/2 + i/2 below 2^32: a labelled lattice).
  LATTICA_HD_INLINE int8_t spin32(uint32_t r, uint32_t i, int colour) const {
    const auto half = static_cast<uint32_t>(lattice.half_volume);
    const uint32_t bit = 2 * r * half + static_cast<uint32_t>(colour) * half + (i >> 1);
    return (words[bit >> 5] >> (bit & 31)) & 1 ? int8_t(1) : int8_t(-1);
  }
  /// The spin at storage position colour * V/2 + j.
  LATTICA_HD_INLINE int8_t spin_at(int64_t r, int64_t position) const {
    const uint32_t word = words[(r * lattice.volume() + position) >> 5];
    return (word >> (position & 31)) & 1 ? int8_t(1) : int8_t(-1);
  }
};

/// A cluster step's choices for one replica.
template <class Model>
struct ClusterPick {
  typename Model::Embedding embedding;
  int64_t seed_site;  ///< Wolff: the global site the cluster grows from
};

/// Per replica: the embedding and seed site of a cluster step; functor over replicas.
template <class Model>
struct PickClusters {
  ReplicaParams<typename Model::Params> params;
  ClusterPick<Model>* picks;
  uint64_t step;
  uint64_t global_volume;
  LATTICA_HD_INLINE void operator()(int64_t r) const {
    SiteRandom random(params.seed(), RngStream::cluster_pick, static_cast<uint32_t>(r), 0, step);
    const uint64_t high = random.next();
    const uint64_t u = (high << 32) | random.next();
    picks[r].seed_site = static_cast<int64_t>(multiply_high(u, global_volume));
    picks[r].embedding = params.with(r, [&](const typename Model::Params& own) {
      return Model::cluster_embedding(own, random);
    });
  }
};

/// The random numbers of the bonds of a quad: the four sites 4q ... 4q + 3 (global lexicographic
/// indices) of one replica in one cluster step. Each bond compares a uniform 32-bit number u with
/// its threshold (occupied where u < threshold), and u's high half comes from a block the quad
/// shares: site 4q + k's bond along +e_a (a = D: to the ghost) takes half k & 1 (1: the high
/// bits) of word 2 (a & 1) + k / 2 of block a / 2, keyed by (seed, cluster_bond, replica,
/// site 4q + a / 2, step). Only where that half ties the threshold's high half (probability
/// 2^-16) is u's low half drawn: half a & 1 of word a / 2 of the block keyed by (seed,
/// cluster_bond, replica, site 4q + k, step + 1). So u is uniform and the bond exact, and 2D Ising
/// without a field draws one block for four sites (a block a site, as before, made the bonds
/// Philox-bound: tests/bench/README.md, session q). A block no uncertain bond needs (threshold
/// neither 0 nor kCertainBond) is not drawn.
struct QuadBondNumbers {
  PhiloxKey key;
  uint32_t replica;
  uint64_t quad;  ///< the global index of the quad's first site (a multiple of 4)
  uint64_t step;

  /// The quad's block b (axes 2b and 2b + 1).
  LATTICA_HD_INLINE PhiloxBlock block(int b) const {
    return philox4x32_10(
        philox_counter(RngStream::cluster_bond, replica, quad + static_cast<uint64_t>(b), step),
        key);
  }
  /// Word w (0-3) of a block.
  LATTICA_HD_INLINE static uint32_t word(const PhiloxBlock& block, int w) {
    return w == 0 ? block.x : w == 1 ? block.y : w == 2 ? block.z : block.w;
  }
  /// The high half of u for site 4q + k's bond along a, from the quad's block a / 2.
  LATTICA_HD_INLINE static uint32_t high_half(const PhiloxBlock& block, int a, int k) {
    const uint32_t w = word(block, 2 * (a & 1) + (k >> 1));
    return k & 1 ? w >> 16 : w & 0xffffu;
  }
  /// The low half of u for site 4q + k's bond along a.
  LATTICA_HD_INLINE uint32_t low_half(int a, int k) const {
    const PhiloxBlock own = philox4x32_10(
        philox_counter(RngStream::cluster_bond, replica, quad + static_cast<uint64_t>(k), step + 1),
        key);
    const uint32_t w = word(own, a >> 1);
    return a & 1 ? w >> 16 : w & 0xffffu;
  }
  /// Whether a bond of uncertain threshold t is occupied, from the high half of its u (and,
  /// where it ties t's, the low half that low() draws).
  template <class Low>
  LATTICA_HD_INLINE static bool occupied(uint32_t t, uint32_t high, const Low& low) {
    const uint32_t t_high = t >> 16;
    return high < t_high || (high == t_high && low() < (t & 0xffffu));
  }
};

/// The thresholds of the bonds of N sites of a quad, bond (a, j) being site j's along +e_a
/// (a = D: to the ghost): each certain (kCertainBond), impossible (0) or uncertain, and then
/// below 2^32. Kept in 32 bits, so that a thread's quad of thresholds takes half the registers.
template <int D, int N>
struct BondThresholds {
  uint32_t value[D + 1][N];
  uint32_t certain = 0, uncertain = 0;  ///< bit a * N + j
  static_assert((D + 1) * N <= 32, "a bit per bond");

  LATTICA_HD_INLINE void set(int a, int j, uint64_t threshold) {
    const uint32_t bit = 1u << (a * N + j);
    value[a][j] = static_cast<uint32_t>(threshold);
    if (threshold >= kCertainBond) certain |= bit;
    if (threshold > 0 && threshold < kCertainBond) uncertain |= bit;
  }
};

/// The bond masks of N sites first ... first + N - 1 of a quad (N = 4: the whole quad, N = 1: one
/// site) from their thresholds, drawn as QuadBondNumbers says.
template <int D, int N>
LATTICA_HD_INLINE void draw_bond_masks(const BondThresholds<D, N>& t,
                                       const QuadBondNumbers& numbers, int first,
                                       uint8_t (&mask)[N]) {
  const auto bit = [](int a) { return a == D ? kGhostBond : static_cast<uint8_t>(1u << a); };
  for (int j = 0; j < N; ++j) {
    mask[j] = 0;
    for (int a = 0; a <= D; ++a) {
      if (t.certain >> (a * N + j) & 1) mask[j] |= bit(a);
    }
  }
  for (int b = 0; 2 * b <= D; ++b) {
    // The bonds of axes 2b and 2b + 1 are bits 2b N ... of the masks.
    const uint32_t axes = (2 * b + 1 < D + 1 ? (1u << (2 * N)) - 1 : (1u << N) - 1) << (2 * b * N);
    if (!(t.uncertain & axes)) continue;
    const PhiloxBlock block = numbers.block(b);
    for (int a = 2 * b; a <= D && a < 2 * b + 2; ++a) {
      for (int j = 0; j < N; ++j) {
        const int k = first + j;
        if ((t.uncertain >> (a * N + j) & 1) &&
            QuadBondNumbers::occupied(t.value[a][j], QuadBondNumbers::high_half(block, a, k),
                                      [&] { return numbers.low_half(a, k); }))
          mask[j] |= bit(a);
      }
    }
  }
}

/// Every site's bond mask; functor over replica * V + site. Random numbers: QuadBondNumbers.
/// Couplings: as UpdateColour's (kernels/models/replica_params.hpp).
template <int D, class Model, class Sites, class Couplings = ReplicaParams<typename Model::Params>>
struct ClusterBonds {
  ClusterLattice<D> g;
  Couplings params;
  const ClusterPick<Model>* picks;
  Sites sites;
  uint8_t* bonds;
  uint64_t step;

  /// Sites a thread takes in whole_lattice_sites.
  static constexpr int kSitesPerThread = 4;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    int64_t i;
    const int64_t r = g.replica(index, i);
    int64_t x[D];
    const int colour = g.coordinates(i, x);
    const bool inside = g.interior(x);
    const typename Model::Spin s = sites.spin(r, i, colour);
    const typename Model::Embedding& e = picks[r].embedding;
    const auto site = static_cast<uint64_t>(g.global(i, x));
    BondThresholds<D, 1> threshold;
    params.with(r, [&](const typename Model::Params& own) {
      for (int a = 0; a < D; ++a) {
        bool cross = false;
        threshold.set(a, 0,
                      g.owns_bond(x, inside, a, cross)
                          ? Model::cluster_bond(own, e, s, sites.spin(r, g.up(i, x, a), colour ^ 1))
                          : 0);
      }
      threshold.set(D, 0, inside ? Model::ghost_bond(own, e, s) : 0);
    });
    uint8_t mask[1];
    draw_bond_masks<D, 1>(threshold, numbers(static_cast<uint32_t>(r), site & ~uint64_t{3}),
                          static_cast<int>(site & 3), mask);
    bonds[index] = mask[0];
  }

  /// The same for the quad of sites index ... index + 3 (index a multiple of 4, as the last
  /// extent, so the four lie in one row) of a lattice without ghost layers (every bond its own),
  /// in 32-bit arithmetic: one site's coordinates, the row's spins read once, one block.
  LATTICA_HD_INLINE void whole_lattice_sites(uint32_t index) const {
    uint32_t i;
    const uint32_t r = g.replica32(index, i);
    uint32_t x[D];
    const int colour = g.coordinates32(i, x);  // site i + k: colour ^ (k & 1)
    using Spin = typename Model::Spin;
    Spin s[5];
    row_spins(r, i, x, colour, s);
    uint8_t mask[4];
    bool drawn = false;
    if constexpr (Model::kEqualSpinBonds) drawn = equal_spin_masks(r, i, x, colour, s, mask);
    if (!drawn) {
      const typename Model::Embedding& e = picks[r].embedding;
      BondThresholds<D, 4> threshold;
      params.with(r, [&](const typename Model::Params& own) {
        for (int a = 0; a < D - 1; ++a) {
          Spin up[4];
          up_spins(r, i, x, colour, a, up);
          for (int k = 0; k < 4; ++k) threshold.set(a, k, Model::cluster_bond(own, e, s[k], up[k]));
        }
        for (int k = 0; k < 4; ++k) {
          threshold.set(D - 1, k, Model::cluster_bond(own, e, s[k], s[k + 1]));
          threshold.set(D, k, Model::ghost_bond(own, e, s[k]));
        }
      });
      draw_bond_masks<D, 4>(threshold, numbers(r, i), 0, mask);
    }
#if defined(__CUDA_ARCH__)  // one store (index is a multiple of 4, the buffer aligned)
    *reinterpret_cast<uint32_t*>(bonds + index) =
        mask[0] | uint32_t{mask[1]} << 8 | uint32_t{mask[2]} << 16 | uint32_t{mask[3]} << 24;
#else
    for (int k = 0; k < 4; ++k) bonds[index + static_cast<uint32_t>(k)] = mask[k];
#endif
  }

  /// The spins of quad i (sites i ... i + 3 at x, the first of colour `colour`) and i + 3's
  /// +e_{D-1} neighbour, s[4] (of site i's colour).
  template <class Spin>
  LATTICA_HD_INLINE void row_spins(uint32_t r, uint32_t i, const uint32_t (&x)[D], int colour,
                                   Spin (&s)[5]) const {
    for (int k = 0; k < 4; ++k)
      s[k] = sites.spin32(r, i + static_cast<uint32_t>(k), colour ^ (k & 1));
    uint32_t last[D];
    for (int a = 0; a < D; ++a) last[a] = x[a];
    last[D - 1] += 3;
    s[4] = sites.spin32(r, g.up32(i + 3, last, D - 1), colour);
  }
  /// The +e_a neighbours (a < D - 1) of quad i's sites.
  template <class Spin>
  LATTICA_HD_INLINE void up_spins(uint32_t r, uint32_t i, const uint32_t (&x)[D], int colour, int a,
                                  Spin (&up)[4]) const {
    const uint32_t first = g.up32(i, x, a);  // and first + k is site i + k's
    for (int k = 0; k < 4; ++k)
      up[k] = sites.spin32(r, first + static_cast<uint32_t>(k), colour ^ 1 ^ (k & 1));
  }

  /// The quad's masks for models whose bonds join equal spins only, with one threshold t, and
  /// never the ghost, where the replica's parameters say so (Model::equal_spin_bonds):
  /// draw_bond_masks's result without its per-bond thresholds, bit masks and branches, which took
  /// most of the bonds' instructions (Nsight Compute, tests/bench/results/session_r_nvidia_h200).
  /// False, leaving the quad to draw_bond_masks, where the parameters do not say so, where t is
  /// certain or impossible, or where a bond between equal spins drew t's high half (probability
  /// 2^-16 a bond) so that its low half decides.
  template <class Spin>
  LATTICA_HD_INLINE bool equal_spin_masks(uint32_t r, uint32_t i, const uint32_t (&x)[D],
                                          int colour, const Spin (&s)[5],
                                          uint8_t (&mask)[4]) const {
    uint64_t t = 0;
    const bool equal_spins = params.with(
        r, [&](const typename Model::Params& own) { return Model::equal_spin_bonds(own, t); });
    if (!equal_spins || t == 0 || t >= kCertainBond) return false;
    Spin n[D][4];  // n[a][k]: site i + k's +e_a neighbour
    for (int a = 0; a < D - 1; ++a) up_spins(r, i, x, colour, a, n[a]);
    for (int k = 0; k < 4; ++k) n[D - 1][k] = s[k + 1];
    const auto t_high = static_cast<uint32_t>(t >> 16);
    const QuadBondNumbers quad = numbers(r, i);
    PhiloxBlock block[(D + 1) / 2];  // axes 2b and 2b + 1 draw block b
    for (int b = 0; 2 * b < D; ++b) block[b] = quad.block(b);
    bool tie = false;
    for (int k = 0; k < 4; ++k) {
      uint32_t m = 0;
      for (int a = 0; a < D; ++a) {
        const uint32_t high = QuadBondNumbers::high_half(block[a / 2], a, k);
        const bool equal = s[k] == n[a][k];
        tie = tie || (equal && high == t_high);
        m |= static_cast<uint32_t>(equal && high < t_high) << a;
      }
      mask[k] = static_cast<uint8_t>(m);
    }
    return !tie;
  }

  LATTICA_HD_INLINE QuadBondNumbers numbers(uint32_t r, uint64_t quad) const {
    return {philox_key(params.seed()), r, quad, step};
  }
};

/// A node's parent before the unions: the ghost when its site's mask has the ghost bond, else
/// the node itself; functor over replica * V + site.
struct InitialParents {
  const uint8_t* bonds;
  uint32_t* parent;
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const uint32_t node = static_cast<uint32_t>(index + 1);
    parent[node] = bonds[index] & kGhostBond ? kGhostNode : node;
  }
};

/// Joins the two ends of every bond between sites of the box (bonds to ghosts are the
/// decomposed merge's); functor over replica * V + site.
template <int D>
struct UniteBonds {
  ClusterLattice<D> g;
  const uint8_t* bonds;
  uint32_t* parent;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const uint8_t mask = bonds[index] & static_cast<uint8_t>(~kGhostBond);
    if (!mask) return;
    int64_t i;
    const int64_t r = g.replica(index, i);
    int64_t x[D];
    g.coordinates(i, x);
    if (!g.interior(x)) return;
    for (int a = 0; a < D; ++a) {
      bool cross = false;
      if (!(mask >> a & 1)) continue;
      g.owns_bond(x, true, a, cross);
      if (cross) continue;  // to a ghost
      unite(parent, static_cast<uint32_t>(index + 1),
            static_cast<uint32_t>(r * g.volume + g.up(i, x, a) + 1));
    }
  }
};

/// Every node's root, the smallest node of its cluster (the ghost, 0, for the clusters with a
/// ghost bond), from the bond masks of `sites` sites (replicas of g); on any exec. (CudaExec has
/// a faster overload, tile_labels.cuh, with the same result.)
template <class Exec, int D>
void label_box(const Exec& exec, const ClusterLattice<D>& g, const uint8_t* bonds, uint32_t* parent,
               int64_t sites) {
  exec.for_each(sites, InitialParents{bonds, parent});
  exec.for_each(sites, UniteBonds<D>{g, bonds, parent});
  exec.for_each(sites + 1, FlattenLabels{parent});
}

/// The root of a node after label_box: its parent's parent. label_box leaves every node at most
/// two steps from its root: at the root itself (the generic labelling and boxes), or, on the
/// GPU's aligned tiles (tile_labels.cuh), at its part's representative (the part of its cluster
/// in its tile, named by its smallest site), which is at the root.
LATTICA_HD_INLINE uint32_t labelled_root(const uint32_t* parent, uint32_t node) {
  return parent[parent[node]];
}

/// The canonical label of a labelled node's cluster: 0 for the ghost's, else 1 + the global
/// index of its smallest site; `canon`, when set, holds it at every root (a decomposed lattice,
/// whose clusters span boxes), else the root's own site names it.
struct ClusterLabels {
  const uint32_t* parent;
  const uint64_t* canon;
  int64_t volume;  ///< of the (box) lattice
  LATTICA_HD_INLINE uint64_t operator()(int64_t r, int64_t index) const {
    const uint32_t root = labelled_root(parent, static_cast<uint32_t>(index + 1));
    if (root == kGhostNode) return kGhostLabel;
    return canon ? canon[root] : static_cast<uint64_t>(root - r * volume);
  }
};

/// Whether the cluster of replica r labelled `label` moves in this step, and its random word:
/// the first word of the Philox block keyed by (seed, cluster_move, replica, label - 1, step),
/// or, for Swendsen-Wang's coins (Model::kClusterMoveBits == 1), bit (label - 1) % 128 of the
/// block keyed by (label - 1) / 128 as the word's bit 31 (coin_block, coin_word): the labels of
/// 128 consecutive sites share a block, each reading its own bit, so the coins are independent
/// and fair, and the GPU's tiles draw a block per 128 sites of a row rather than one per
/// cluster (tile_labels.cuh).
template <class Model>
struct ClusterDecision {
  ReplicaParams<typename Model::Params> params;
  const uint64_t* seed_label;  ///< Wolff: per replica, the seed site's label; else null
  uint64_t step;
  /// Labels - 1 a coin block serves (one bit each).
  static constexpr uint64_t kCoinsPerBlock = 128;

  LATTICA_HD_INLINE bool moves(int64_t r, uint64_t label, uint32_t& word) const {
    if (label == kGhostLabel) return false;
    const bool single = seed_label != nullptr;
    if (single && label != seed_label[r]) return false;
    if (!Model::cluster_move_draws(single)) {
      word = 0;
    } else if (Model::kClusterMoveBits == 1) {
      const uint64_t site = label - 1;
      word = coin_word(coin_block(static_cast<uint32_t>(r), site / kCoinsPerBlock),
                       static_cast<uint32_t>(site % kCoinsPerBlock));
    } else {
      word = SiteRandom(params.seed(), RngStream::cluster_move, static_cast<uint32_t>(r), label - 1,
                        step)
                 .next();
    }
    return true;
  }
  /// The coins of the labels - 1 from kCoinsPerBlock * key on.
  LATTICA_HD_INLINE PhiloxBlock coin_block(uint32_t r, uint64_t key) const {
    return philox4x32_10(philox_counter(RngStream::cluster_move, r, key, step),
                         philox_key(params.seed()));
  }
  /// Coin `bit` (below kCoinsPerBlock) of a block, as bit 31 of a word.
  LATTICA_HD_INLINE static uint32_t coin_word(const PhiloxBlock& block, uint32_t bit) {
    const uint32_t w = bit < 64 ? (bit < 32 ? block.x : block.y) : (bit < 96 ? block.z : block.w);
    return (w >> (bit & 31) & 1u) << 31;
  }
};

/// Moves every interior site of a moved cluster; functor over replica * V + site.
template <int D, class Model>
struct MoveClusters {
  ClusterLattice<D> g;
  ByteSites<D, typename Model::Spin> sites;
  ClusterLabels labels;
  ClusterDecision<Model> decision;
  const ClusterPick<Model>* picks;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    int64_t i;
    const int64_t r = g.replica(index, i);
    int64_t x[D];
    const int colour = g.coordinates(i, x);
    if (!g.interior(x)) return;
    uint32_t word = 0;
    if (decision.moves(r, labels(r, index), word)) move(r, word, sites.at(r, i, colour));
  }

  /// Sites a thread takes in whole_lattice_sites.
  static constexpr int kSitesPerThread = 2;

  /// The same for sites index and index + 1 (index even: sites 2k and 2k + 1 of a row, stored at
  /// one position of the two colours) of a lattice without ghost layers, in 32-bit arithmetic.
  /// Both sites' labels and words come before either spin is written, so that their loads
  /// overlap: the move is bound by the latency of its dependent loads (a thread a site: 0.0082
  /// ns a site at 2D 4096^2 on an H200, a thread per pair 0.0072, session o call 1).
  LATTICA_HD_INLINE void whole_lattice_sites(uint32_t index) const {
    uint32_t i;
    const uint32_t r = g.replica32(index, i);
    uint32_t x[D];
    const int colour = g.coordinates32(i, x);
    uint32_t word = 0, next_word = 0;
    const bool moved = decision.moves(r, labels(r, index), word);
    const bool next_moved = decision.moves(r, labels(r, index + 1), next_word);
    if (moved) move(r, word, sites.at32(r, i, colour));
    if (next_moved) move(r, next_word, sites.at32(r, i + 1, colour ^ 1));
  }

  LATTICA_HD_INLINE void move(int64_t r, uint32_t word, typename Model::Spin* s) const {
    *s = moved(r, word, *s);
  }
  /// The spin s of a moved cluster of replica r, moved with the cluster's word.
  LATTICA_HD_INLINE typename Model::Spin moved(int64_t r, uint32_t word,
                                               const typename Model::Spin& s) const {
    return decision.params.with(r, [&](const typename Model::Params& own) {
      return Model::cluster_move(own, picks[r].embedding, s, word, decision.seed_label != nullptr);
    });
  }
};

/// f.whole_lattice_sites for each run of F::kSitesPerThread sites of a row; functor over
/// (replica * V + first site) / F::kSitesPerThread.
template <class F>
struct OverRowSites {
  F f;
  LATTICA_HD_INLINE void operator()(int64_t run) const {
    f.whole_lattice_sites(static_cast<uint32_t>(F::kSitesPerThread) * static_cast<uint32_t>(run));
  }
};

/// Runs a site functor with a whole_lattice_sites (ClusterBonds, MoveClusters) over `sites` sites
/// (replica * V + site): a thread per F::kSitesPerThread sites of a row on a lattice without
/// ghost layers whose rows they divide, else a thread per site. Both give the same bonds and
/// moves.
template <class Exec, class F>
void for_each_cluster_site(const Exec& exec, int64_t sites, const F& f) {
  if (f.g.boxed || f.g.row_length() % F::kSitesPerThread != 0) {
    exec.for_each(sites, f);
  } else {
    exec.for_each(sites / F::kSitesPerThread, OverRowSites<F>{f});
  }
}

/// Swendsen-Wang's labels and move: label_box, then MoveClusters (whose decision has no seed
/// labels: Wolff finds them between the two); on any exec. (CudaExec has an overload,
/// tile_labels.cuh, that flattens and moves aligned tiles in one kernel, keeping each site's
/// part in `parts`: the same labels and spins. This one leaves `parts` alone.)
template <class Exec, int D, class Model>
void label_and_move(const Exec& exec, const ClusterLattice<D>& g, uint8_t* bonds, uint32_t* parent,
                    int64_t sites, const MoveClusters<D, Model>& move,
                    typename Exec::template Buffer<uint16_t>& /*parts: the GPU's tiles' scratch*/) {
  if (move.decision.seed_label) throw std::invalid_argument("label_and_move: not for Wolff");
  label_box(exec, g, bonds, parent, sites);
  for_each_cluster_site(exec, sites, move);
}

/// The same for multi-spin-coded Ising: a thread per word, whose 32 sites are consecutive of one
/// colour in one row (lexicographic indices 2 apart); functor over replica words.
template <int D, class Model>
struct MovePackedClusters {
  ClusterLattice<D> g;
  uint32_t* words;
  ClusterLabels labels;
  ClusterDecision<Model> decision;

  LATTICA_HD_INLINE void operator()(int64_t w) const {
    const int64_t words_per_replica = g.volume / 32;
    const int64_t r = w / words_per_replica;
    const int64_t position = (w - r * words_per_replica) * 32;  // colour * V/2 + j
    const int colour = position >= g.storage.half_volume;
    const int64_t first = g.storage.lex_index(position - colour * g.storage.half_volume, colour);
    if (g.boxed) {
      int64_t x[D];
      g.coordinates(first, x);
      if (!g.interior(x)) return;  // a row is interior or ghost as a whole
    }
    uint32_t flips = 0;
    for (int b = 0; b < 32; ++b) {
      uint32_t word = 0;
      if (decision.moves(r, labels(r, r * g.volume + first + 2 * b), word) &&
          Model::cluster_move(decision.params.shared, {}, 1, word,  // packed: never tempered
                              decision.seed_label != nullptr) < 0)
        flips |= 1u << b;
    }
    words[w] ^= flips;
  }
};

/// Per replica, the label of Wolff's seed site where this box holds it, else all ones (the
/// ranks take the minimum); functor over replicas.
template <int D, class Model>
struct SeedLabels {
  ClusterLattice<D> g;
  ClusterLabels labels;
  const ClusterPick<Model>* picks;
  uint64_t* seed_label;
  LATTICA_HD_INLINE void operator()(int64_t r) const {
    int64_t site = picks[r].seed_site;
    int64_t x[D];
    int64_t i = 0;
    for (int a = D - 1; a >= 0; --a) {  // global coordinates, then this box's
      const int64_t length = g.storage.global_extent[a];
      const int64_t q = site / length;
      x[a] = site - q * length - g.storage.origin[a];
      if (x[a] < 0) x[a] += length;
      site = q;
    }
    for (int a = 0; a < D; ++a) i = i * g.extent[a] + x[a];
    const bool here = [&] {
      for (int a = 0; a < D; ++a) {
        if (x[a] < g.ghosts[a] || x[a] >= g.extent[a] - g.ghosts[a]) return false;
      }
      return true;
    }();
    seed_label[r] = here ? labels(r, r * g.volume + i) : ~uint64_t(0);
  }
};

/// Sites of each cluster, added at its root (SW's estimator); functor over replica * V + site.
template <int D>
struct CountClusterSites {
  ClusterLattice<D> g;
  const uint32_t* parent;
  uint32_t* sizes;  ///< per node, zero
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    if (g.boxed) {
      int64_t i;
      g.replica(index, i);
      int64_t x[D];
      g.coordinates(i, x);
      if (!g.interior(x)) return;
    }
    count_at(sizes, labelled_root(parent, static_cast<uint32_t>(index + 1)));
  }
};

/// |C|^2 at each root of one replica (0 elsewhere), leaving out the clusters that cross into
/// other boxes (`crossing`, when set); functor over its sites.
struct SquaredClusterSize {
  const uint32_t* sizes;    ///< the replica's nodes
  const uint8_t* crossing;  ///< the replica's nodes: a bond to a ghost; or null
  LATTICA_HD_INLINE long long operator()(int64_t i) const {
    if (crossing && crossing[i]) return 0;
    const long long n = sizes[i];
    return n * n;
  }
};

/// 1 for each interior site of replica r in Wolff's seed cluster (not the ghost's); functor over
/// its sites.
template <int D>
struct SeedClusterSites {
  ClusterLattice<D> g;
  ClusterLabels labels;
  const uint64_t* seed_label;
  int64_t r;
  LATTICA_HD_INLINE long long operator()(int64_t i) const {
    if (g.boxed) {
      int64_t x[D];
      g.coordinates(i, x);
      if (!g.interior(x)) return 0;
    }
    const uint64_t label = seed_label[r];
    return label != kGhostLabel && labels(r, r * g.volume + i) == label ? 1 : 0;
  }
};

}  // namespace lattica
