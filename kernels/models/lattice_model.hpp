#pragma once
// Site functors shared by every discrete spin model: each launches the model's per-site
// physics (a struct of static __host__ __device__ functions) over one checkerboard colour, over
// the measurement sites, or over all sites, on either backend.
//
// A model M provides
//   M::Spin, M::Params (trivially copyable), M::Sums (exact, with operator+),
//   static Spin initial(const Params&, bool hot, uint32_t replica, int64_t site);
//   template <int D> static Spin update(const Params&, Spin old, const Spin (&nb)[2 * D],
//                                       uint32_t replica, int64_t site, uint64_t sweep);
//   template <int D> static Sums site_sums(const Params&, Spin s, const Spin (&nb)[2 * D],
//                                          Spin partner);
//   static long long histogram_total(const Sums&, int which);   // exact integer totals
// and host-side descriptions (see sim/lattice_engine.hpp).

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"

namespace lattica {

enum class UpdateAlgorithm { metropolis, heatbath };

/// Host-side description of one exact histogram a model keeps.
struct HistogramInfo {
  const char* name;
  const char* description;
  long long step;  ///< all attainable totals are congruent modulo step
};

/// Updates every site of one colour in every replica; functor over replica * V/2 + colour-local
/// index, for all replicas at once so small lattices still fill a GPU.
template <int D, class Model>
struct UpdateColour {
  Checkerboard<D> lattice;
  typename Model::Params params;
  typename Model::Spin* spins;  ///< replicas one after another, each in checkerboard storage
  int colour;
  uint64_t sweep;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const int64_t replica = index / lattice.half_volume;
    const int64_t j = index - replica * lattice.half_volume;
    typename Model::Spin* base = spins + replica * lattice.volume();
    typename Model::Spin* own = base + colour * lattice.half_volume;
    const typename Model::Spin* other = base + (1 - colour) * lattice.half_volume;
    typename Model::Spin nb[2 * D];
    int k = 0;
    const int64_t site =
        lattice.visit_neighbours(j, colour, [&](int64_t n) { nb[k++] = other[n]; });
    own[j] =
        Model::template update<D>(params, own[j], nb, static_cast<uint32_t>(replica), site, sweep);
  }
};

/// Per colour-0 site j of one replica: the model's sums over j's bonds (each bond has exactly
/// one colour-0 end) and over j and the colour-1 site stored at the same index (its partner),
/// so every bond and every site is counted once.
template <int D, class Model>
struct SiteSums {
  Checkerboard<D> lattice;
  typename Model::Params params;
  const typename Model::Spin* spins;  ///< one replica's checkerboard storage

  LATTICA_HD_INLINE typename Model::Sums operator()(int64_t j) const {
    const typename Model::Spin* colour1 = spins + lattice.half_volume;
    typename Model::Spin nb[2 * D];
    int k = 0;
    lattice.visit_neighbours(j, 0, [&](int64_t n) { nb[k++] = colour1[n]; });
    return Model::template site_sums<D>(params, spins[j], nb, colour1[j]);
  }
};

/// Initial configuration of every replica; functor over replica * V + storage position.
template <int D, class Model>
struct Initialize {
  Checkerboard<D> lattice;
  typename Model::Params params;
  typename Model::Spin* spins;
  bool hot;

  LATTICA_HD_INLINE void operator()(int64_t position) const {
    const int64_t replica = position / lattice.volume();
    const int64_t local = position - replica * lattice.volume();
    const int colour = local >= lattice.half_volume;
    const int64_t site = lattice.lex_index(local - colour * lattice.half_volume, colour);
    spins[position] = Model::initial(params, hot, static_cast<uint32_t>(replica), site);
  }
};

/// Bin of exact total `which` of each queued measurement in a histogram window starting at
/// `lowest` with spacing `step` (all totals of one lattice share a residue modulo step).
template <class Model>
struct TotalBin {
  const typename Model::Sums* sums;
  long long lowest;
  long long step;
  int which;
  LATTICA_HD_INLINE int64_t operator()(int64_t i) const {
    return (Model::histogram_total(sums[i], which) - lowest) / step;
  }
};

}  // namespace lattica
