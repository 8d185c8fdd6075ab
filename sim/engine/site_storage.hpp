#pragma once
// The storage of an engine whose sites are one Model::Spin each: the checkerboard order of
// kernels/lattice/checkerboard.hpp (each colour contiguous), every replica one after another,
// and a lexicographic copy for output, spectra and scratch. The packed Ising storage
// (sim/engine/packed_ising.hpp) offers the same interface with 1 bit per spin.

#include <cstdint>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/lattice/row_block.hpp"
#include "kernels/models/ising_packed.hpp"
#include "kernels/models/lattice_model.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/settings.hpp"

namespace lattica {

template <class Exec, int D, class Model>
class SiteStorage {
 public:
  using Spin = typename Model::Spin;
  using Sums = typename Model::Sums;
  using Params = typename Model::Params;
  static constexpr bool kPacked = false;
  using Unit = Spin;  ///< what units() holds, replica_units(lattice) per replica

  /// Units a DecomposedBox exchanges: sites.
  static constexpr size_t kUnitBytes = sizeof(Spin);
  static int64_t row_units(const Checkerboard<D>& lattice) { return lattice.half_last; }
  static int64_t colour_units(const Checkerboard<D>& lattice) { return lattice.half_volume; }
  static int64_t replica_units(const Checkerboard<D>& lattice) { return lattice.volume(); }

  /// `box`: this rank's box of a decomposed lattice (owned by the engine), or null.
  SiteStorage(const Exec& exec, const Checkerboard<D>& lattice, const EngineSettings& settings,
              DecomposedBox<Exec, D>* box)
      : exec_(exec),
        lattice_(lattice),
        box_(box),
        replicas_(settings.replicas),
        sites_(exec.template allocate<Spin>(replicas_ * lattice.volume())),
        lexicographic_(exec.template allocate<Spin>(replicas_ * lattice.volume())) {}

  /// The configuration at sweep 0: cold or hot from the site-keyed initial-state stream.
  void initialize(const Params& params, bool hot) {
    if (box_) {  // ghosts included: they start as the neighbouring boxes' sites
      return exec_.for_each(replicas_ * lattice_.volume(),
                            Initialize<D, Model, true>{lattice_, params, sites_.data(), hot});
    }
    exec_.for_each(replicas_ * lattice_.volume(),
                   Initialize<D, Model>{lattice_, params, sites_.data(), hot});
  }

  /// Queues each replica's sums into sums[r] (a box: its interior sites only).
  void sums_into(const Params& params, Sums* sums) const {
    if (!box_ && lattice_.half_volume <= kSerialSumSites) {  // tiny: every replica in one launch
      return exec_.for_each(replicas_,
                            ReplicaSums<D, Model>{lattice_, params, sites_.data(), sums});
    }
    if (!box_ && replicas_ > 1) {  // every replica in one pass (parallel tempering's rounds)
      return exec_.template reduce_segments_into<Sums>(
          replicas_, lattice_.half_volume,
          ReplicaSiteSums<D, Model>{{lattice_, params, sites_.data()}}, sums);
    }
    for (int r = 0; r < replicas_; ++r) {
      const SiteSums<D, Model> site_sums{lattice_, params, sites_.data() + r * lattice_.volume()};
      if (box_) {
        over_row_block(box_->interior(), lattice_.half_last, 0, site_sums,
                       [&](int64_t n, const auto& g) {
                         exec_.template reduce_sum_into<Sums>(n, g, sums + r);
                       });
      } else {
        exec_.template reduce_sum_into<Sums>(lattice_.half_volume, site_sums, sums + r);
      }
    }
  }

  /// Whether the lexicographic copy holds `sites` sites (it always holds every replica).
  bool keeps_lexicographic(int64_t sites) const { return lexicographic_.size() >= sites; }

  /// Every replica in lexicographic order into the lexicographic copy, which it returns.
  /// Precondition: copies in flight from it have read it (the engine orders them first).
  Spin* refresh_lexicographic() {
    exec_.to_lexicographic(lattice_, sites_.data(), lexicographic_.data(), replicas_);
    return lexicographic_.data();
  }
  const typename Exec::template Buffer<Spin>& lexicographic() const { return lexicographic_; }

  /// Every replica (this storage's sites, a box with its ghosts) lexicographic into host memory.
  /// Precondition as refresh_lexicographic().
  void to_host(Spin* out) {
    refresh_lexicographic();
    exec_.copy_to_host(lexicographic_, out);
  }

  /// Sets every replica from lexicographic sites in host memory.
  void from_host(const Spin* in) {
    exec_.copy_to_device(in, lexicographic_);
    exec_.from_lexicographic(lattice_, lexicographic_.data(), sites_.data(), replicas_);
  }

  /// Reads 8 sites at a time for bit-packed snapshots (Ising), from the refreshed lexicographic
  /// copy. Precondition as refresh_lexicographic().
  LexicographicSpinBits bit_source() {
    LexicographicSpinBits bits{};
    bits.spins = refresh_lexicographic();
    return bits;
  }

  /// The checkerboard sites, for passes; the lexicographic copy doubles as their scratch.
  Spin* sites() { return sites_.data(); }
  Spin* scratch() { return lexicographic_.data(); }
  /// Every replica's storage units, one replica after another (population annealing copies
  /// whole replicas).
  Unit* units() { return sites_.data(); }

 private:
  const Exec& exec_;
  const Checkerboard<D>& lattice_;
  DecomposedBox<Exec, D>* box_;
  int replicas_;
  typename Exec::template Buffer<Spin> sites_;
  typename Exec::template Buffer<Spin> lexicographic_;
};

}  // namespace lattica
