#pragma once
// The multi-spin-coded Ising configuration of LatticeEngine (kernels/models/ising_packed.hpp):
// 1 bit per spin, so the fast path holds 8x the spins of the byte layout. Conversions to and
// from lexicographic bytes go through a bounded buffer, so they need no byte-per-spin copy.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/models/ising_packed.hpp"
#include "kernels/models/lattice_model.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/memory.hpp"
#include "sim/engine/packed_words.hpp"
#include "sim/engine/settings.hpp"

namespace lattica {

/// The packed Ising storage: the interface of SiteStorage (sim/engine/site_storage.hpp), and
/// the multi-spin update of a pass.
template <class Exec, int D>
class PackedIsing {
 public:
  using Spin = int8_t;
  using Sums = IsingSums;
  using Params = IsingParams;
  static constexpr bool kPacked = true;
  using Unit = uint32_t;  ///< what units() holds, replica_units(lattice) per replica

  /// Units a DecomposedBox exchanges: words of 32 spins of one colour.
  static constexpr size_t kUnitBytes = sizeof(uint32_t);
  static int64_t row_units(const Checkerboard<D>& lattice) { return lattice.half_last / 32; }
  static int64_t colour_units(const Checkerboard<D>& lattice) { return lattice.half_volume / 32; }
  static int64_t replica_units(const Checkerboard<D>& lattice) { return lattice.half_volume / 16; }

  /// `box`: this rank's box of a decomposed lattice (owned by the engine), or null. A
  /// lexicographic byte copy is kept only where packed_keeps_lexicographic() asks for it.
  PackedIsing(const Exec& exec, const Checkerboard<D>& lattice, const EngineSettings& settings,
              DecomposedBox<Exec, D>* box = nullptr)
      : exec_(exec),
        box_(box),
        geometry_(PackedLattice<D>::make(lattice)),
        replicas_(settings.replicas),
        spins_(exec.template allocate<uint32_t>(replicas_ * replica_words())),
        lexicographic_(exec.template allocate<int8_t>(
            packed_keeps_lexicographic(settings) ? replicas_ * lattice.volume() : 0)),
        row_length_(lattice.extent[D - 1]),
        rows_(lattice.volume() / row_length_),
        chunk_rows_(std::max<int64_t>(1, static_cast<int64_t>(kPackedChunkBytes) / row_length_)),
        chunk_(exec.template allocate<int8_t>(std::min(rows_, chunk_rows_) * row_length_)) {}

  void initialize(const IsingParams& params, bool hot) {
    if (box_) {  // ghosts included: they start as the neighbouring boxes' sites
      return exec_.for_each(replicas_ * replica_words(),
                            PackedIsingInitialize<D, true>{geometry_, params, spins_.data(), hot});
    }
    exec_.for_each(replicas_ * replica_words(),
                   PackedIsingInitialize<D>{geometry_, params, spins_.data(), hot});
  }

  /// One pass of Metropolis or heat bath over both colours of every replica. With `sums`, the
  /// second colour's kernels also add each replica's exact sums after the pass to sums[r],
  /// which must be zero.
  void update(const IsingParams& params, UpdateAlgorithm algorithm, uint32_t pass, uint64_t sweep,
              IsingSums* sums = nullptr) {
    const auto& table = params.flip_threshold[algorithm == UpdateAlgorithm::heatbath];
    const uint64_t step = update_step(sweep, pass, 0);
    // The fewest class slots that hold the uncertain classes: D + 1 (Metropolis at h = 0:
    // a = 0 .. D, the last with dE = 0), one per a (h = 0), or one per a and spin (always enough).
    if (!launch_if_fits<D + 1>(table, params.seed, step, sums) &&
        !launch_if_fits<2 * D + 1>(table, params.seed, step, sums)) {
      launch_if_fits<4 * D + 2>(table, params.seed, step, sums);
    }
  }

  /// Queues each replica's exact sums into sums[r] (a box: its interior words only).
  void sums_into(const IsingParams&, IsingSums* sums) const {
    if (!box_ && replicas_ > 1) {  // every replica in one pass (parallel tempering's rounds)
      return exec_.template reduce_segments_into<IsingSums>(
          replicas_, geometry_.words, PackedReplicaSums<D>{{geometry_, spins_.data()}}, sums);
    }
    for (int r = 0; r < replicas_; ++r) {
      if (box_) {  // the interior words only
        over_row_block(box_->interior(), geometry_.row_words, 0,
                       PackedIsingSums<D>{geometry_, spins_.data() + r * replica_words()},
                       [&](int64_t n, const auto& g) {
                         exec_.template reduce_sum_into<IsingSums>(n, g, sums + r);
                       });
        continue;
      }
      exec_.template reduce_sum_into<IsingSums>(
          geometry_.words, PackedIsingSums<D>{geometry_, spins_.data() + r * replica_words()},
          sums + r);
    }
  }

  /// Whether the lexicographic copy holds `sites` sites.
  bool keeps_lexicographic(int64_t sites) const { return lexicographic_.size() >= sites; }

  /// Every replica as +-1 bytes in lexicographic order into the lexicographic copy, which it
  /// returns. Precondition: keeps_lexicographic(), and copies in flight from it have read it.
  int8_t* refresh_lexicographic() {
    to_lexicographic(lexicographic_.data());
    return lexicographic_.data();
  }
  const typename Exec::template Buffer<int8_t>& lexicographic() const { return lexicographic_; }

  /// The packed words of every replica (cluster moves flip them in place).
  uint32_t* words() { return spins_.data(); }
  /// The same words as units(), as SiteStorage names them (whole replicas one after another).
  Unit* units() { return spins_.data(); }

  /// Reads 8 sites at a time for bit-packed snapshots.
  PackedSpinBits<D> bit_source() const { return {geometry_, spins_.data()}; }

  /// Every replica as +-1 in lexicographic order into a backend buffer of replicas * V.
  template <class T>
  void to_lexicographic(T* out) const {
    const int64_t volume = geometry_.lattice.volume();
    for (int r = 0; r < replicas_; ++r) {
      exec_.for_each(volume,
                     UnpackLexicographic<D, T>{geometry_, spins_.data() + r * replica_words(),
                                               out + r * volume, 0});
    }
  }

  /// Every replica as +-1 bytes in lexicographic order into host memory, a chunk at a time.
  void to_host(int8_t* out) {
    for_chunks([&](int r, int64_t first_row, int64_t rows) {
      const int64_t sites = rows * row_length_;
      exec_.for_each(sites,
                     UnpackLexicographic<D, int8_t>{geometry_, spins_.data() + r * replica_words(),
                                                    chunk_.data(), first_row * row_length_});
      exec_.copy_to_host(chunk_, out + r * volume() + first_row * row_length_, sites);
    });
  }

  /// Sets every replica from +-1 bytes in lexicographic order in host memory.
  void from_host(const int8_t* in) {
    for_chunks([&](int r, int64_t first_row, int64_t rows) {
      exec_.copy_to_device(in + r * volume() + first_row * row_length_, chunk_, rows * row_length_);
      exec_.for_each(2 * rows * geometry_.row_words,
                     PackRows<D>{geometry_, chunk_.data(), spins_.data() + r * replica_words(),
                                 first_row, rows});
    });
    exec_.synchronize();
  }

 public:
  int64_t replica_words() const { return 2 * static_cast<int64_t>(geometry_.words); }

 private:
  int64_t volume() const { return geometry_.lattice.volume(); }

  /// Launches the pass with kSlots class slots over both colours of every replica; false (and
  /// nothing launched) when the table has more uncertain classes than slots.
  template <int kSlots>
  bool launch_if_fits(const uint64_t (&table)[2][9], uint64_t seed, uint64_t step,
                      IsingSums* sums) {
    PackedFlipClasses<D, kSlots> classes;
    if (!PackedFlipClasses<D, kSlots>::make(table, classes)) return false;
    if (box_) {
      for (int second = 0; second < 2; ++second) {
        const int colour = box_->local_colour(second);
        box_->update_colour(colour, spins_.data(), [&](const RowBlock<D>& block) {
          for (int r = 0; r < replicas_; ++r) {
            const PackedIsingUpdate<D, kSlots, true> update{geometry_,
                                                            classes,
                                                            seed,
                                                            spins_.data() + r * replica_words(),
                                                            static_cast<uint32_t>(r),
                                                            colour,
                                                            step};
            PackedWordRunner<Exec>::run(exec_, update, block,
                                        sums && second == 1 ? sums + r : nullptr);
          }
        });
      }
      return true;
    }
    for (int colour = 0; colour < 2; ++colour) {
      const PackedIsingUpdate<D, kSlots> first{geometry_, classes, seed, spins_.data(),
                                               0,         colour,  step};
      if (!sums || colour == 0) {
        PackedWordRunner<Exec>::run_replicas(exec_, first, replicas_);
        continue;
      }
      for_each_replica(first, replicas_, [&](const PackedIsingUpdate<D, kSlots>& update) {
        PackedWordRunner<Exec>::run(exec_, update, sums + update.replica);
      });
    }
    return true;
  }

  /// Calls f(replica, first row, rows) over every replica's rows, chunk_rows_ at a time.
  template <class F>
  void for_chunks(const F& f) {
    for (int r = 0; r < replicas_; ++r) {
      for (int64_t first = 0; first < rows_; first += chunk_rows_) {
        f(r, first, std::min(chunk_rows_, rows_ - first));
      }
    }
  }

  const Exec& exec_;
  DecomposedBox<Exec, D>* box_;
  PackedLattice<D> geometry_;
  int replicas_;
  typename Exec::template Buffer<uint32_t> spins_;  ///< replicas one after another
  typename Exec::template Buffer<int8_t> lexicographic_;
  int64_t row_length_;  ///< L_{D-1}
  int64_t rows_;        ///< V / L_{D-1}
  int64_t chunk_rows_;
  typename Exec::template Buffer<int8_t> chunk_;
};

}  // namespace lattica
