#pragma once
// The CPU's multi-spin-coded Ising update: PackedIsingUpdate over vectors of words, one word per
// lane (kernels/backend/cpu_lanes.hpp), so one instruction serves 4 or 8 words of 32 sites.
// Each lane runs the GPU thread's helpers (PackedFlipClasses: classify, threshold_classes,
// decide) on the same Philox words, so the chain is the same bit for bit:
// - a batch's neighbour words are loads of consecutive words where the batch lies in one row
//   (one locate() a batch), else gathered a row at a time;
// - the groups' Philox blocks are drawn for every lane at once, block after block while a lane
//   of the batch is undecided (two blocks nearly always, a third about half the time at beta_c
//   with 8 lanes, a fourth rarely), with no branch per site or word.
// Host code only (GCC or Clang vector extensions): nvcc never includes this header.

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/backend/cpu_lanes.hpp"
#include "kernels/lattice/row_block.hpp"
#include "kernels/models/ising_packed.hpp"

namespace lattica {

/// PackedIsingUpdate over the words of a block of rows (one colour of one replica), kChunkWords
/// words per index; an index returns the sums of its words after the move (kSum) or zero.
template <int D, int kSlots, bool kBoxed, bool kSum>
struct PackedIsingLanes {
  /// Words per index: a multiple of every lane count.
  static constexpr int64_t kChunkWords = 128;

  PackedIsingUpdate<D, kSlots, kBoxed> update;
  RowBlock<D> rows;            ///< the rows to update
  uint32_t level_classes[32];  ///< PackedFlipClasses::threshold_classes of each level

  /// The update of `rows`.
  static PackedIsingLanes make(const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                               const RowBlock<D>& rows) {
    PackedIsingLanes lanes{update, rows, {}};
    for (int level = 0; level < 32; ++level) {
      lanes.level_classes[level] = update.classes.threshold_classes(level);
    }
    return lanes;
  }

  /// Indices of the block's words.
  int64_t chunks() const { return (words() + kChunkWords - 1) / kChunkWords; }

  /// Updates the words [kChunkWords c, kChunkWords (c + 1)) of the block (row-major) with the
  /// widest lanes this CPU has.
  IsingSums operator()(int64_t c) const { return run_cpu_lanes(*this, c); }

  /// The same with the given lanes.
  template <class Lanes>
  IsingSums run(int64_t c) const {
    const int64_t end = std::min(words(), (c + 1) * kChunkWords);
    const ChunkVectors<Lanes> shared(update);
    IsingSums sums{0, 0};
    for (int64_t t = c * kChunkWords; t < end; t += Lanes::kWords) {
      const int n = static_cast<int>(std::min<int64_t>(end - t, Lanes::kWords));
      sums = sums + batch<Lanes>(t, n, shared);
    }
    return sums;
  }

 private:
  int64_t words() const { return rows.rows * update.geometry.row_words; }

  /// Philox blocks whose counter words a chunk prepares in vectors (comparison levels 0-11; a
  /// fourth block is rare).
  static constexpr int kPreparedBlocks = 3;

  /// What every batch of a chunk shares, in vectors: the counter words x, y of the prepared
  /// blocks (philox_counter: x and y name the step, z and w the site), the round keys, and the
  /// offsets of the lanes' site names from the first lane's in a batch of one row and in a
  /// batch of whole rows starting with parity 0 or 1 (a name steps by 64 a word, and by +-1
  /// where the parity changes).
  template <class Lanes>
  struct ChunkVectors {
    using Words = typename Lanes::Words;
    Words x[kPreparedBlocks], y[kPreparedBlocks];
    PhiloxLaneKeys<Lanes> keys;
    Words odd_rows;  ///< ones in the lanes of odd rows of a batch of whole rows
    Words row_sites, rows_sites[2];

    explicit ChunkVectors(const PackedIsingUpdate<D, kSlots, kBoxed>& update)
        : keys(philox_key(update.seed)) {
      for (int block = 0; block < kPreparedBlocks; ++block) {
        block_counter<Lanes>(update, block, x[block], y[block]);
      }
      alignas(64) uint32_t odd[Lanes::kWords], sites[3][Lanes::kWords];
      for (int j = 0; j < Lanes::kWords; ++j) {
        const bool odd_row = (j / update.geometry.row_words) & 1;
        odd[j] = odd_row ? ~0u : 0u;
        sites[0][j] = 64 * j;
        sites[1][j] = 64 * j + (odd_row ? 1 : 0);  // parity 0, then 1, 0, ...
        sites[2][j] = 64 * j - (odd_row ? 1 : 0);
      }
      load_lanes(odd, odd_rows);
      load_lanes(sites[0], row_sites);
      load_lanes(sites[1], rows_sites[0]);
      load_lanes(sites[2], rows_sites[1]);
    }
  };

  /// The counter words x, y of Philox block `block` of the pass's groups.
  template <class Lanes>
  static void block_counter(const PackedIsingUpdate<D, kSlots, kBoxed>& update, int block,
                            typename Lanes::Words& x, typename Lanes::Words& y) {
    const PhiloxCounter counter = philox_counter(RngStream::site_update, update.replica, 0,
                                                 update.step + static_cast<uint64_t>(block));
    Lanes::splat(counter.x, x);
    Lanes::splat(counter.y, y);
  }

  /// Whether the batch of n words from the start of the block's row r is kLanes / row_words
  /// whole rows (row_words a divisor of kLanes, so the batch starts a row), consecutive in the box
  /// and of one plane of axes D-2 and D-1 where neither the first nor the last row is at the
  /// plane's edge (so no neighbour wraps around).
  template <class Lanes>
  bool batch_of_rows(int n, uint32_t r) const {
    const PackedLattice<D>& g = update.geometry;
    if constexpr (D < 2) {
      return false;
    } else {
      if (n != Lanes::kWords || g.row_words >= Lanes::kWords || Lanes::kWords % g.row_words != 0 ||
          !rows.contiguous) {
        return false;
      }
      const auto row = static_cast<uint32_t>(rows.first_row + r);
      const FastDivisor& extent = g.extent[D - 2];
      const uint32_t y = row - extent.divide(row) * extent.divisor;  // row's coordinate D-2
      return y > 0 && y + Lanes::kWords / g.row_words < extent.divisor;
    }
  }

  /// Updates the n <= Lanes::kWords words from the block's word t on.
  template <class Lanes>
  IsingSums batch(int64_t t, int n, const ChunkVectors<Lanes>& shared) const {
    using Words = typename Lanes::Words;
    constexpr int kLanes = Lanes::kWords;
    const PackedLattice<D>& g = update.geometry;
    const PackedFlipClasses<D, kSlots>& classes = update.classes;
    uint32_t* own = update.spins + update.colour * g.words;
    const uint32_t* other = update.spins + (1 - update.colour) * g.words;

    // Lane j holds word k[j]: its old value s, its neighbour words xor s (anti), the other
    // colour's word at k[j] (same) and its group's counter words z, w.
    Words anti[2 * D], s, same, z, w;
    alignas(64) uint32_t k_of[kLanes], z_of[kLanes], w_of[kLanes];
    bool consecutive = true;  // k[j] = k[0] + j
    const auto name = [&](int lane, uint64_t site) {
      const PhiloxCounter counter =
          philox_counter(RngStream::site_update, update.replica, site, update.step);
      z_of[lane] = counter.z;
      w_of[lane] = counter.w;
    };
    // Names of consecutive words whose sites are offsets[j] from the first's.
    const auto name_lanes = [&](int64_t first_site, const Words& offsets) {
      const PhiloxCounter counter = philox_counter(RngStream::site_update, update.replica,
                                                   static_cast<uint64_t>(first_site), update.step);
      if (counter.z < ~0u - 64 * kLanes) {  // z is the site's low word: no carry into w
        Lanes::splat(counter.z, z);
        z += offsets;
        Lanes::splat(counter.w, w);
        return;
      }
      for (int j = 0; j < kLanes; ++j) name(j, static_cast<uint64_t>(first_site) + offsets[j]);
      load_lanes(z_of, z);
      load_lanes(w_of, w);
    };
    uint32_t r = g.by_row_words.divide(static_cast<uint32_t>(t));
    uint32_t position = static_cast<uint32_t>(t) - r * g.row_words;  // in row r
    uint32_t index[2 * D];
    int64_t group_site;
    const auto locate_row = [&]() {  // the word at `position` of row r of the block
      const auto row = static_cast<uint32_t>(rows.contiguous ? rows.first_row + r : rows.row(r));
      const uint32_t k = row * g.row_words + position;
      return std::pair<uint32_t, int>(
          k, g.template locate<kBoxed>(k, update.colour, index, group_site));
    };
    if (batch_of_rows<Lanes>(n, r)) {
      // Whole rows (shorter than the batch) of one plane of axes D-2 and D-1, none at the
      // plane's edge: every neighbour along an axis < D-1 is at the same offset, and those
      // along the last axis lie in the same rows. The rows' parities alternate.
      const auto [k, p] = locate_row();
      k_of[0] = k;
      for (int i = 0; i < 2 * D - 2; ++i) load_lanes(other + index[i], anti[i]);
      load_lanes(own + k, s);
      load_lanes(other + k, same);
      Words beside[2], plus[2], minus[2];
      for (int q = 0; q < 2; ++q) {
        Lanes::rotate_runs(same, static_cast<int>(g.row_words), q ? 1 : -1, beside[q]);
        g.last_axis_words(q, same, beside[q], plus[q], minus[q]);
      }
      const Words odd = p ? ~shared.odd_rows : shared.odd_rows;  // lanes of parity 1
      anti[2 * D - 2] = (odd & plus[1]) | (~odd & plus[0]);
      anti[2 * D - 1] = (odd & minus[1]) | (~odd & minus[0]);
      name_lanes(group_site, shared.rows_sites[p]);
    } else if (n == kLanes && position + kLanes <= g.row_words) {
      // The batch lies in one row: every neighbour word is a load of consecutive words.
      const auto [k, p] = locate_row();
      k_of[0] = k;
      for (int i = 0; i < 2 * D - 2; ++i) load_lanes(other + index[i], anti[i]);
      load_lanes(own + k, s);
      load_lanes(other + k, same);
      Words beside;
      const uint32_t last = position + kLanes - 1;
      if (p) {
        Lanes::after(same, other[g.beside_word(k + kLanes - 1, last, p)], beside);
      } else {
        Lanes::before(same, other[g.beside_word(k, position, p)], beside);
      }
      g.last_axis_words(p, same, beside, anti[2 * D - 2], anti[2 * D - 1]);
      name_lanes(group_site, shared.row_sites);
    } else {
      // Rows shorter than the batch, or its end: word by word, a row's offsets at a time.
      consecutive = false;
      alignas(64) uint32_t nb_of[2 * D][kLanes] = {}, s_of[kLanes] = {}, same_of[kLanes] = {};
      for (int lane = 0; lane < n; ++r, position = 0) {
        const auto [k0, p] = locate_row();
        const int length = static_cast<int>(std::min<int64_t>(g.row_words - position, n - lane));
        for (int j = 0; j < length; ++j, ++lane) {  // along the row: the same offsets and p
          const uint32_t k = k0 + j;
          for (int i = 0; i < 2 * D - 2; ++i) nb_of[i][lane] = other[index[i] + j];
          g.last_axis_words(p, other[k], other[g.beside_word(k, position + j, p)],
                            nb_of[2 * D - 2][lane], nb_of[2 * D - 1][lane]);
          s_of[lane] = own[k];
          same_of[lane] = other[k];
          k_of[lane] = k;
          name(lane, static_cast<uint64_t>(group_site) + 64 * static_cast<uint64_t>(j));
        }
      }
      for (int lane = n; lane < kLanes; ++lane) name(lane, 0);  // idle lanes: all zero
      for (int i = 0; i < 2 * D; ++i) load_lanes(nb_of[i], anti[i]);
      load_lanes(s_of, s);
      load_lanes(same_of, same);
      load_lanes(z_of, z);
      load_lanes(w_of, w);
    }
    for (int i = 0; i < 2 * D; ++i) anti[i] ^= s;  // 1 where anti-aligned

    Words flip, mask[kSlots], undecided;
    classes.template classify<true>(anti, s, flip, mask, undecided);
    if (n < kLanes) {  // idle lanes flip nothing and stay out of the sums
      alignas(64) uint32_t valid_of[kLanes];
      for (int j = 0; j < kLanes; ++j) valid_of[j] = j < n ? ~0u : 0u;
      Words valid;
      load_lanes(valid_of, valid);
      flip &= valid;
      undecided &= valid;
    }

    // The comparisons, a Philox block (four levels) at a time while a lane is undecided. Sites
    // still undecided after 32 levels have u == t: no flip.
    for (int block = 0; block < 8 && Lanes::any(undecided); ++block) {
      Words u[4] = {{}, {}, z, w};
      if (block < kPreparedBlocks) {
        u[0] = shared.x[block];
        u[1] = shared.y[block];
      } else {
        block_counter<Lanes>(update, block, u[0], u[1]);
      }
      philox_lanes<Lanes>(u, shared.keys);
      for (int i = 0; i < 4; ++i) {
        Words t{};  // the union of the classes whose thresholds have the level's bit set
        const uint32_t c = level_classes[4 * block + i];
        for (int slot = 0; slot < kSlots; ++slot) {
          if ((c >> slot) & 1) t |= mask[slot];
        }
        classes.decide(u[i], t, undecided, flip);
      }
    }

    const Words moved = s ^ flip;
    if (consecutive) {
      store_lanes(moved, own + k_of[0]);
    } else {
      for (int j = 0; j < n; ++j) own[k_of[j]] = moved[j];
    }
    if constexpr (!kSum) {
      return {0, 0};
    } else {
      Words anti_count{}, up_count, count;
      for (int i = 0; i < 2 * D; ++i) {
        popcount_lanes(Words(anti[i] ^ flip), count);
        anti_count += count;
      }
      popcount_lanes(moved, up_count);
      popcount_lanes(same, count);
      up_count += count;
      long long anti_total = 0, up_total = 0;
      for (int j = 0; j < kLanes; ++j) {
        anti_total += anti_count[j];
        up_total += up_count[j];
      }
      return packed_sums_of_counts<D>(n, anti_total, up_total);
    }
  }
};

}  // namespace lattica
