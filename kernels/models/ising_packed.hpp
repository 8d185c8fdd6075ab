#pragma once
// Multi-spin-coded Ising: 32 spins of one colour per 32-bit word, updated together with
// bit-sliced neighbour counts and bit-sliced random numbers (LaneRandom), so the chain is the
// one the byte-per-spin reference (UpdateColour with IsingModel) produces, bit for bit.
//
// Storage: the checkerboard order of kernels/lattice/checkerboard.hpp, packed: bit b of word k
// of colour c is colour-local site 32 k + b (1 = spin +1). This needs L_{D-1} % 64 == 0, so a
// word never straddles a row and a row's words of one colour form exactly its random-number
// groups; a replica holds 2 * words() words, colour 0 first.

#include <cstdint>

#include "kernels/common/fast_divisor.hpp"
#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/lattice/packable.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

LATTICA_HD_INLINE uint32_t popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__popc(x));
#else
  return static_cast<uint32_t>(__builtin_popcount(x));
#endif
}

/// Word geometry of a packed checkerboard lattice, in 32-bit indices (words of one colour of
/// one replica).
template <int D>
struct PackedLattice {
  Checkerboard<D> lattice;
  uint32_t row_words;  ///< words per row and colour, L_{D-1} / 64
  uint32_t words;      ///< words per colour, V / 64
  FastDivisor by_row_words;
  FastDivisor extent[D];  ///< L_a for a < D - 1
  uint32_t stride[D];     ///< words between neighbours along axis a < D - 1

  static PackedLattice make(const Checkerboard<D>& lattice) {
    PackedLattice p{};
    p.lattice = lattice;
    p.row_words = static_cast<uint32_t>(lattice.half_last / 32);
    p.words = static_cast<uint32_t>(lattice.half_volume / 32);
    p.by_row_words = FastDivisor::make(p.row_words);
    for (int a = 0; a < D - 1; ++a) {
      p.extent[a] = FastDivisor::make(static_cast<uint32_t>(lattice.extent[a]));
      p.stride[a] = static_cast<uint32_t>(lattice.stride[a] / 32);
    }
    return p;
  }

  /// Where the other-colour words aligned with word k of `colour` lie: index[2a], index[2a + 1]
  /// those along +axis a and -axis a for a < D - 1 (the last axis: last_axis_words); returns
  /// the parity p of k's row (its sites sit at 2h + p along the last axis). group_site: the
  /// site_index of the word's first site (its random-number group; kBoxed: k is an interior word).
  /// Along a row the indices, p and the group's offset from 64 k stay the same.
  template <bool kBoxed = false>
  LATTICA_HD_INLINE int locate(uint32_t k, int colour, uint32_t (&index)[2 * D],
                               int64_t& group_site) const {
    uint32_t rest = by_row_words.divide(k);
    int parity = colour;
    int64_t coordinates[D] = {};  // of axes < D - 1, for a box's global site
    LATTICA_UNROLL
    for (int a = D - 2; a >= 0; --a) {
      const uint32_t length = extent[a].divisor;
      const uint32_t q = extent[a].divide(rest);
      const uint32_t x = rest - q * length;
      rest = q;
      parity += static_cast<int>(x);
      coordinates[a] = x;
      const uint32_t wrap = (length - 1) * stride[a];
      index[2 * a] = x + 1 == length ? k - wrap : k + stride[a];
      index[2 * a + 1] = x == 0 ? k + wrap : k - stride[a];
    }
    const int p = parity & 1;
    group_site = kBoxed ? lattice.interior_site(coordinates, 64 * static_cast<int64_t>(k) + p)
                        : 64 * static_cast<int64_t>(k) + p;
    return p;
  }

  /// The other-colour words along +last and -last aligned with a word of parity p: `same` is
  /// the other colour's word at the word's own index and `beside` the word after it in the row
  /// (p = 1) or before it (p = 0), wrapped. Site 32k + b sits at 2h + p along the last axis; the
  /// other-colour site of its own pair is bit b of `same`, the one of the neighbouring pair bit
  /// b + 1 (p = 1) or b - 1 (p = 0), which may fall in `beside`.
  template <class W>
  static LATTICA_HD_INLINE void last_axis_words(int p, const W& same, const W& beside, W& plus,
                                                W& minus) {
    if (p) {
      plus = (same >> 1) | (beside << 31);
      minus = same;
    } else {
      plus = same;
      minus = (same << 1) | (beside >> 31);
    }
  }

  /// Index of the word beside word k (of row position w) that last_axis_words reads.
  LATTICA_HD_INLINE uint32_t beside_word(uint32_t k, uint32_t w, int p) const {
    const uint32_t row_start = k - w;
    return p ? row_start + (w + 1 == row_words ? 0 : w + 1)
             : row_start + (w == 0 ? row_words - 1 : w - 1);
  }

  /// The 2D other-colour words aligned bit for bit with word k of `colour` (neighbour order
  /// +axis 0, -axis 0, ..., +last, -last, as Checkerboard::visit_neighbours); returns the
  /// site_index of the word's first site (its random-number group; kBoxed: k is an interior word).
  template <bool kBoxed = false>
  LATTICA_HD_INLINE int64_t neighbour_words(uint32_t k, int colour, const uint32_t* other,
                                            uint32_t (&nb)[2 * D]) const {
    uint32_t index[2 * D];
    int64_t group_site;
    const int p = locate<kBoxed>(k, colour, index, group_site);
    LATTICA_UNROLL
    for (int i = 0; i < 2 * D - 2; ++i) nb[i] = other[index[i]];
    const uint32_t w = k - by_row_words.divide(k) * row_words;
    last_axis_words(p, other[k], other[beside_word(k, w, p)], nb[2 * D - 2], nb[2 * D - 1]);
    return group_site;
  }
};

// The helpers below work on one word (uint32_t, the GPU's thread) or on a host vector of words
// (the CPU's lanes, kernels/models/ising_packed_lanes.hpp): bit operations only, vectors passed
// by reference.

/// Bit-sliced count: bits[0..3] of the number of set inputs at each bit position.
template <int N, class W>
LATTICA_HD_INLINE void bitsliced_count(const W (&inputs)[N], W (&bits)[4]) {
  bits[0] = bits[1] = bits[2] = bits[3] = W{};
  LATTICA_UNROLL
  for (int i = 0; i < N; ++i) {
    W carry = inputs[i];
    LATTICA_UNROLL
    for (int b = 0; b < 4; ++b) {  // ripple add of one bit
      const W next = bits[b] & carry;
      bits[b] ^= carry;
      carry = next;
    }
  }
}

/// m = the mask of the positions whose bit-sliced count equals n.
template <class W>
LATTICA_HD_INLINE void count_equals(const W (&bits)[4], int n, W& m) {
  m = ~W{};
  for (int b = 0; b < 4; ++b) m &= (n >> b) & 1 ? bits[b] : ~bits[b];
}

/// The flip table of one pass arranged for the packed kernel: the classes of sites (anti-aligned
/// neighbours a, old spin) whose flip is certain, and those whose flip needs random bits, as
/// kSlots slots (unused slots match no site). The per-pass choices are stored as words of all
/// ones or zeros, so a thread selects with bit operations and never decodes the table.
template <int D, int kSlots>
struct PackedFlipClasses {
  uint32_t certain_up;                ///< bit a: an up spin with a anti-aligned neighbours flips
  uint32_t certain_down;              ///< the same for a down spin
  uint32_t flips_up[2 * D + 1];       ///< ~0 where bit a of certain_up is set, else 0
  uint32_t flips_down[2 * D + 1];     ///< the same for certain_down
  uint32_t count_differs[kSlots][4];  ///< ~0 where bit b of the slot's a is 0 (15: unused slot)
  uint32_t of_up[kSlots];             ///< ~0 where the slot's class holds up spins
  uint32_t of_down[kSlots];           ///< ~0 where it holds down spins
  uint32_t threshold[kSlots];

  /// Classes of table[s == +1][a]; false when more than kSlots classes are uncertain.
  static bool make(const uint64_t (&table)[2][9], PackedFlipClasses& c) {
    c = PackedFlipClasses{};
    uint32_t anti[kSlots];
    int used = 0;
    for (int a = 0; a <= 2 * D; ++a) {
      const bool symmetric = table[0][a] == table[1][a];
      for (int up = 0; up < 2; ++up) {
        const uint64_t t = table[up][a];
        if (t >= kThresholdOne) (up ? c.certain_up : c.certain_down) |= 1u << a;
        if (t == 0 || t >= kThresholdOne || (symmetric && up == 1)) continue;
        if (used == kSlots) return false;
        anti[used] = static_cast<uint32_t>(a);
        c.of_up[used] = symmetric || up ? ~0u : 0u;
        c.of_down[used] = symmetric || !up ? ~0u : 0u;
        c.threshold[used++] = static_cast<uint32_t>(t);
      }
    }
    for (int i = used; i < kSlots; ++i) anti[i] = 15;  // never a count
    for (int a = 0; a <= 2 * D; ++a) {
      c.flips_up[a] = (c.certain_up >> a) & 1 ? ~0u : 0u;
      c.flips_down[a] = (c.certain_down >> a) & 1 ? ~0u : 0u;
    }
    for (int i = 0; i < kSlots; ++i) {
      for (int b = 0; b < 4; ++b) c.count_differs[i][b] = (anti[i] >> b) & 1 ? 0u : ~0u;
    }
    return true;
  }

  /// Sorts the sites of a word s by `anti` (its neighbour words xor s: 1 where anti-aligned):
  /// flip = those whose move is certain, mask[i] = those of uncertain class i, undecided = all
  /// of these (they need random bits). kSkip: skip the counts a of no certain class, by a branch
  /// the same for every word of a pass (the CPU's choice; the GPU computes all).
  template <bool kSkip = false, class W>
  LATTICA_HD_INLINE void classify(const W (&anti_aligned)[2 * D], const W& s, W& flip,
                                  W (&mask)[kSlots], W& undecided) const {
    W count[4];
    bitsliced_count(anti_aligned, count);
    flip = W{};
    LATTICA_UNROLL
    for (int a = 0; a <= 2 * D; ++a) {
      if (kSkip && !(((certain_up | certain_down) >> a) & 1)) continue;
      W equal;
      count_equals(count, a, equal);
      flip |= equal & ((s & flips_up[a]) | (~s & flips_down[a]));
    }
    undecided = W{};
    LATTICA_UNROLL
    for (int i = 0; i < kSlots; ++i) {
      W m = (s & of_up[i]) | (~s & of_down[i]);
      LATTICA_UNROLL
      for (int b = 0; b < 4; ++b) m &= count[b] ^ count_differs[i][b];
      mask[i] = m;
      undecided |= mask[i];
    }
  }

  /// Bit i set where the threshold of uncertain class i has bit 31 - level set.
  LATTICA_HD_INLINE uint32_t threshold_classes(int level) const {
    uint32_t classes = 0;
    for (int i = 0; i < kSlots; ++i) classes |= ((threshold[i] >> (31 - level)) & 1u) << i;
    return classes;
  }

  /// One step of the bit-sliced comparison u < t, most significant bit first: r holds bit
  /// 31 - level of every site's u (word `level` of its group's stream), t the threshold bits of
  /// that level of every site's class. A site is decided at the first bit where u and t differ
  /// (u's 0 under t's 1: u < t, it flips, into flip) and leaves `undecided`.
  template <class W>
  static LATTICA_HD_INLINE void decide(const W& r, const W& t, W& undecided, W& flip) {
    const W decided = undecided & (r ^ t);
    flip |= decided & t;
    undecided ^= decided;
  }

  /// Philox block b of a group's stream in a pass (counter: its block at update_step(sweep,
  /// pass, 0) + b).
  static LATTICA_HD_INLINE PhiloxBlock group_block(PhiloxKey key, uint32_t replica,
                                                   uint64_t group_site, uint64_t step, uint64_t b) {
    return philox4x32_10(philox_counter(RngStream::site_update, replica, group_site, step + b),
                         key);
  }

  /// The four levels of one Philox block (the comparison's next four bits) for the undecided
  /// sites of one word. `coming`, from `threshold` on, holds the thresholds' bits still to
  /// compare, the next in the sign bit: an arithmetic shift makes each a word of all ones or
  /// zeros, cheaper than extracting bit 31 - level.
  LATTICA_HD_INLINE void draw_levels(const uint32_t (&mask)[kSlots], uint32_t (&coming)[kSlots],
                                     const PhiloxBlock& b, uint32_t& undecided,
                                     uint32_t& flip) const {
    const uint32_t words[4] = {b.x, b.y, b.z, b.w};
    LATTICA_UNROLL
    for (int j = 0; j < 4; ++j) {
      uint32_t t = 0;
      LATTICA_UNROLL
      for (int i = 0; i < kSlots; ++i) {
        t |= mask[i] & static_cast<uint32_t>(static_cast<int32_t>(coming[i]) >> 31);
        coming[i] <<= 1;
      }
      decide(words[j], t, undecided, flip);
    }
  }

  /// Adds to flip the flips among the undecided sites of one word from block `first` of its
  /// group's stream on, where `coming` is what blocks 0 .. first - 1 left (draw_levels). Sites
  /// still undecided after 32 bits have u == t: no flip.
  LATTICA_HD_INLINE void draw_from(uint64_t first, const uint32_t (&mask)[kSlots],
                                   uint32_t (&coming)[kSlots], uint32_t undecided, PhiloxKey key,
                                   uint32_t replica, uint64_t group_site, uint64_t step,
                                   uint32_t& flip) const {
    for (uint64_t block = first; undecided != 0 && block < 8; ++block)
      draw_levels(mask, coming, group_block(key, replica, group_site, step, block), undecided,
                  flip);
  }
};

/// The exact sums of `words` words of 32 sites each, from the counts of their anti-aligned
/// bonds (to the other colour) and of the up spins of them and of the other colour's words at
/// the same indices.
template <int D>
LATTICA_HD_INLINE IsingSums packed_sums_of_counts(long long words, long long anti_aligned,
                                                  long long up) {
  return {32LL * 2 * D * words - 2 * anti_aligned, 2 * up - 64 * words};
}

/// The exact sums of the 32 sites of a word after its move (flip applied to the old word s):
/// their bonds, from anti_aligned (the neighbour words xor s), and the magnetization of them and
/// of the other colour's word at the same index.
template <int D>
LATTICA_HD_INLINE IsingSums packed_word_sums(const uint32_t (&anti_aligned)[2 * D], uint32_t s,
                                             uint32_t flip, uint32_t other_word) {
  long long anti = 0;
  LATTICA_UNROLL
  for (int i = 0; i < 2 * D; ++i) anti += popcount32(anti_aligned[i] ^ flip);
  return packed_sums_of_counts<D>(1, anti, popcount32(s ^ flip) + popcount32(other_word));
}

/// Loads the kRun words p[0 .. kRun - 1]; on the GPU as 16-byte vector loads when kRun is a
/// multiple of 4 (precondition then: p is 16-byte aligned), so a warp reads whole lines.
template <int kRun>
LATTICA_HD_INLINE void load_run(const uint32_t* p, uint32_t (&out)[kRun]) {
#if defined(__CUDA_ARCH__)
  if constexpr (kRun % 4 == 0) {
    LATTICA_UNROLL
    for (int j = 0; j < kRun; j += 4) {
      const uint4 v = *reinterpret_cast<const uint4*>(p + j);
      out[j] = v.x, out[j + 1] = v.y, out[j + 2] = v.z, out[j + 3] = v.w;
    }
  } else  // NOLINT(readability/braces): the scalar loads below
#endif
  {
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) out[j] = p[j];
  }
}

/// Stores kRun words as load_run loads them.
template <int kRun>
LATTICA_HD_INLINE void store_run(const uint32_t (&in)[kRun], uint32_t* p) {
#if defined(__CUDA_ARCH__)
  if constexpr (kRun % 4 == 0) {
    LATTICA_UNROLL
    for (int j = 0; j < kRun; j += 4) {
      *reinterpret_cast<uint4*>(p + j) = make_uint4(in[j], in[j + 1], in[j + 2], in[j + 3]);
    }
  } else  // NOLINT(readability/braces): the scalar stores below
#endif
  {
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) p[j] = in[j];
  }
}

/// One pass of Metropolis or heat bath over word k of one colour of one replica, or over a run
/// of words of one row (update_run).
template <int D, int kSlots, bool kBoxed = false>
struct PackedIsingUpdate {
  PackedLattice<D> geometry;
  PackedFlipClasses<D, kSlots> classes;
  uint64_t seed;
  uint32_t* spins;  ///< this replica's packed storage
  uint32_t replica;
  int colour;
  uint64_t step;  ///< update_step(sweep, pass, 0)

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    update_run<1, false>(static_cast<uint32_t>(index));
  }

  /// Updates word k as operator() does and returns the exact sums of its 32 sites after the
  /// move: their bonds and the magnetization of them and of the other colour's word k. Over
  /// every word of the second colour's pass these are the whole configuration's sums (each bond
  /// has one end of each colour), so a measurement needs no pass of its own.
  LATTICA_HD_INLINE IsingSums update_and_sum(int64_t index) const {
    return update_run<1, true>(static_cast<uint32_t>(index));
  }

  /// Updates the words k .. k + kRun - 1 of one row, each as operator() does (the same chain),
  /// and with kSum returns their sums as update_and_sum does. Preconditions for kRun > 1:
  /// k % kRun == 0, row_words % kRun == 0, and (kRun % 4 == 0 on the GPU) spins 16-byte
  /// aligned. The run shares one locate and one (vector) load of each neighbouring row; a
  /// word's beside word is its neighbour in the run except at the run's ends.
  template <int kRun, bool kSum>
  LATTICA_HD_INLINE IsingSums update_run(uint32_t k) const {
    uint32_t* own = spins + colour * geometry.words;
    const uint32_t* other = spins + (1 - colour) * geometry.words;
    uint32_t index[2 * D];
    int64_t group_site;
    const int p = geometry.template locate<kBoxed>(k, colour, index, group_site);
    uint32_t s[kRun], same[kRun], across[D > 1 ? 2 * D - 2 : 1][kRun];  // rows across
    load_run(own + k, s);
    load_run(other + k, same);
    LATTICA_UNROLL
    for (int i = 0; i < 2 * D - 2; ++i) load_run(other + index[i], across[i]);
    // The other colour's word beside the run's last word (p = 1) or its first (p = 0).
    const uint32_t w = k - geometry.by_row_words.divide(k) * geometry.row_words;
    const uint32_t end = p ? kRun - 1 : 0;
    const uint32_t outside = other[geometry.beside_word(k + end, w + end, p)];
    uint32_t anti[kRun][2 * D], flip[kRun], mask[kRun][kSlots], undecided[kRun];
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) {
      LATTICA_UNROLL
      for (int i = 0; i < 2 * D - 2; ++i) anti[j][i] = across[i][j];
      const uint32_t beside =
          p ? (j + 1 < kRun ? same[j + 1] : outside) : (j > 0 ? same[j - 1] : outside);
      geometry.last_axis_words(p, same[j], beside, anti[j][2 * D - 2], anti[j][2 * D - 1]);
      LATTICA_UNROLL
      for (int i = 0; i < 2 * D; ++i) anti[j][i] ^= s[j];  // 1 where anti-aligned
      classes.classify(anti[j], s[j], flip[j], mask[j], undecided[j]);
    }
    // Every word's first kFirstBlocks blocks are drawn whether it needs them or not (a block
    // decides nothing in a word with no undecided site left, so the flips are the same): the
    // run's Philox chains are independent, and the scheduler interleaves them. A word needs a
    // third block only where a site is still undecided after 8 bits (a few per cent of words),
    // but a warp's 32 lanes wait for their slowest word, so the loop that drew a word's blocks
    // only as far as it needed cost most warps the third block all the same and ran their
    // lanes apart. H200, 2D 65536^2 at T_c
    // (tests/bench/results/session_k_nvidia_h200, calls 5-7): 1556 site updates/ns with every
    // block in the loop, 1659 with the first drawn at once, 1755 with two, 1874 with three.
    // The rare later blocks come in a loop per word (one loop over the run's words measured
    // 17 % slower).
    constexpr int kFirstBlocks = 3;
    const PhiloxKey key = philox_key(seed);
    uint32_t coming[kRun][kSlots];
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) {
      LATTICA_UNROLL
      for (int i = 0; i < kSlots; ++i) coming[j][i] = classes.threshold[i];
    }
    LATTICA_UNROLL
    for (int block = 0; block < kFirstBlocks; ++block) {
      PhiloxBlock drawn[kRun];
      LATTICA_UNROLL
      for (int j = 0; j < kRun; ++j)
        drawn[j] = classes.group_block(key, replica, static_cast<uint64_t>(group_site + 64 * j),
                                       step, static_cast<uint64_t>(block));
      LATTICA_UNROLL
      for (int j = 0; j < kRun; ++j)
        classes.draw_levels(mask[j], coming[j], drawn[j], undecided[j], flip[j]);
    }
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) {
      classes.draw_from(kFirstBlocks, mask[j], coming[j], undecided[j], key, replica,
                        static_cast<uint64_t>(group_site + 64 * j), step, flip[j]);
    }
    uint32_t moved[kRun];
    IsingSums sums{};
    LATTICA_UNROLL
    for (int j = 0; j < kRun; ++j) {
      moved[j] = s[j] ^ flip[j];
      if constexpr (kSum) sums = sums + packed_word_sums<D>(anti[j], s[j], flip[j], same[j]);
    }
    store_run(moved, own + k);
    return sums;
  }

  /// The same pass over replica r of replicas stored one after another (this: replica 0's).
  LATTICA_HD_INLINE PackedIsingUpdate of_replica(uint32_t r) const {
    PackedIsingUpdate own = *this;
    own.spins += 2 * static_cast<int64_t>(geometry.words) * r;
    own.replica = r;
    return own;
  }
};

/// PackedIsingUpdate::update_run over runs of kRun words: functor over word / kRun.
template <int D, int kSlots, int kRun, bool kBoxed = false>
struct PackedIsingRunUpdate {
  PackedIsingUpdate<D, kSlots, kBoxed> update;
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    update.template update_run<kRun, false>(kRun * static_cast<uint32_t>(index));
  }
};

/// PackedIsingRunUpdate over one colour of every replica in one launch (many small replicas keep
/// the GPU busy where a launch per replica would not); functor over replica * runs + run, which
/// must stay below 2^32. `update` is replica 0's.
template <int D, int kSlots, int kRun>
struct PackedIsingUpdateReplicas {
  PackedIsingUpdate<D, kSlots> update;
  FastDivisor by_runs;  ///< runs per colour

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const uint32_t replica = by_runs.divide(static_cast<uint32_t>(index));
    const auto run = static_cast<uint32_t>(index) - replica * by_runs.divisor;
    update.of_replica(replica).template update_run<kRun, false>(kRun * run);
  }
};

/// A pass of PackedIsingUpdate as a summand over runs of kRun words: the second colour's update
/// fused with the measurement of the configuration it leaves (PackedIsingUpdate::update_run).
template <int D, int kSlots, bool kBoxed = false, int kRun = 1>
struct PackedIsingUpdateSums {
  PackedIsingUpdate<D, kSlots, kBoxed> update;
  LATTICA_HD_INLINE IsingSums operator()(int64_t index) const {
    return update.template update_run<kRun, true>(kRun * static_cast<uint32_t>(index));
  }
};

/// Exact sums over colour-0 word k of one replica: the bonds of its 32 sites (each bond has one
/// colour-0 end) and the magnetization of them and of the colour-1 word stored at k.
template <int D>
struct PackedIsingSums {
  PackedLattice<D> geometry;
  const uint32_t* spins;  ///< one replica's packed storage

  LATTICA_HD_INLINE IsingSums operator()(int64_t index) const { return of(spins, index); }

  /// The same for the replica whose packed storage starts at `base`.
  LATTICA_HD_INLINE IsingSums of(const uint32_t* base, int64_t index) const {
    const auto k = static_cast<uint32_t>(index);
    const uint32_t* colour1 = base + geometry.words;
    uint32_t nb[2 * D];
    geometry.neighbour_words(k, 0, colour1, nb);
    const uint32_t s = base[k];
    for (int i = 0; i < 2 * D; ++i) nb[i] ^= s;
    return packed_word_sums<D>(nb, s, 0, colour1[k]);
  }
};

/// PackedIsingSums of replicas stored one after another (2 words per colour word each), as
/// f(replica, k) for a segmented reduction; `sums.spins` is replica 0's storage.
template <int D>
struct PackedReplicaSums {
  PackedIsingSums<D> sums;
  LATTICA_HD_INLINE IsingSums operator()(int64_t replica, int64_t k) const {
    return sums.of(sums.spins + 2 * replica * static_cast<int64_t>(sums.geometry.words), k);
  }
};

/// Initial configuration (IsingModel::initial); functor over replica * 2 * words + word.
template <int D, bool kBoxed = false>
struct PackedIsingInitialize {
  PackedLattice<D> geometry;
  IsingParams params;
  uint32_t* spins;
  bool hot;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const int64_t replica_words = 2 * static_cast<int64_t>(geometry.words);
    const int64_t replica = index / replica_words;
    const int64_t local = index - replica * replica_words;
    const int colour = local >= geometry.words;
    const int64_t first = geometry.lattice.template site_index<kBoxed>(
        32 * (local - colour * geometry.words), colour);
    uint32_t word = 0;
    for (int b = 0; b < 32; ++b) {
      const bool up =
          IsingModel::initial(params, hot, static_cast<uint32_t>(replica), first + 2 * b) > 0;
      word |= static_cast<uint32_t>(up) << b;
    }
    spins[index] = word;
  }
};

/// Packs rows of a lexicographic +-1 configuration; functor over colour * row_count *
/// row_words + word of those rows (rows [first_row, first_row + row_count) of one replica).
template <int D>
struct PackRows {
  PackedLattice<D> geometry;
  const int8_t* lexicographic;  ///< the rows' sites, starting with row first_row
  uint32_t* spins;              ///< one replica's packed storage
  int64_t first_row;
  int64_t row_count;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const int64_t chunk_words = row_count * geometry.row_words;
    const int colour = index >= chunk_words;
    const int64_t k = first_row * geometry.row_words + index - colour * chunk_words;
    const int64_t first = geometry.lattice.lex_index(32 * k, colour);
    const int64_t offset = first - first_row * geometry.lattice.extent[D - 1];
    uint32_t word = 0;
    for (int b = 0; b < 32; ++b) {
      word |= static_cast<uint32_t>(lexicographic[offset + 2 * b] > 0) << b;
    }
    spins[colour * static_cast<int64_t>(geometry.words) + k] = word;
  }
};

/// Unpacks sites [first, first + n) of one replica in lexicographic order as `T(+1)`/`T(-1)`;
/// functor over the n sites.
template <int D, class T>
struct UnpackLexicographic {
  PackedLattice<D> geometry;
  const uint32_t* spins;  ///< one replica's packed storage
  T* out;
  int64_t first;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const int64_t i = first + index;
    const int64_t position = geometry.lattice.storage_index(i);  // colour * V/2 + i / 2
    const uint32_t word = spins[position / 32];
    out[index] = (word >> (position & 31)) & 1 ? T(1) : T(-1);
  }
};

/// Snapshot bytes with 8 spins each (IsingModel::bit_packed_snapshot_format): out[i] holds
/// sites 8 (first + i) ... 8 (first + i) + 7 of the replica-major lexicographic order, the
/// first in the least significant bit, 1 for +1. Functor over the n bytes; SpinBits reads 8
/// sites of one row (the last extent is a multiple of 8).
template <class SpinBits>
struct PackSpinBits {
  SpinBits spin_bits;
  uint8_t* out;
  int64_t first;
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    out[index] = spin_bits(8 * (first + index));
  }
};

/// 8 sites from +-1 bytes in lexicographic order.
struct LexicographicSpinBits {
  const int8_t* spins;  ///< every replica
  LATTICA_HD_INLINE uint8_t operator()(int64_t site) const {
    uint8_t bits = 0;
    for (int b = 0; b < 8; ++b) bits |= static_cast<uint8_t>(spins[site + b] > 0) << b;
    return bits;
  }
};

/// 8 sites from the packed storage of every replica.
template <int D>
struct PackedSpinBits {
  PackedLattice<D> geometry;
  const uint32_t* spins;  ///< replicas one after another, 2 * words each
  LATTICA_HD_INLINE uint8_t operator()(int64_t site) const {
    const int64_t volume = geometry.lattice.volume();
    const int64_t replica = site / volume;
    const uint32_t* own = spins + replica * 2 * static_cast<int64_t>(geometry.words);
    const int64_t first = site - replica * volume;
    uint8_t bits = 0;
    for (int b = 0; b < 8; ++b) {
      const int64_t position = geometry.lattice.storage_index(first + b);
      bits |= static_cast<uint8_t>((own[position / 32] >> (position & 31)) & 1) << b;
    }
    return bits;
  }
};

}  // namespace lattica
