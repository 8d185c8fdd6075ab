#pragma once
// Site functors shared by every lattice model: each launches the model's per-site physics (a
// struct of static __host__ __device__ functions) over one checkerboard colour, over the
// measurement sites, or over all sites, on either backend.
//
// A model M provides
//   M::Spin (one site's variable), M::Params (trivially copyable, with a `seed`), M::Sums (with
//   operator+;
//     exact integers for discrete models, doubles summed in a fixed order for continuous ones);
//   static constexpr bool kExactHistograms: whether histogram_total() exists;
//   static constexpr bool kTunableStep: whether Params::step is a Metropolis step size;
//   static constexpr bool kFourierLangevin: whether langevin_force/langevin_potential exist
//     (kernels/spectral/langevin.hpp);
//   static Spin initial(const Params&, bool hot, uint32_t replica, int64_t site);
//   template <int D> static Spin update(const Params&, UpdateAlgorithm, Spin old,
//       const Spin (&nb)[2 * D], Random&, int& accepted);   // nb: +0, -0, +1, -1, ...
//     where Random is M::Random when declared (LaneRandom: bit-sliced groups), else SiteRandom;
//   template <int D> static Sums site_sums(const Params&, Spin s, const Spin (&nb)[2 * D],
//                                          Spin partner);
//   static long long histogram_total(const Sums&, int which);   // when kExactHistograms
// and host-side descriptions (see sim/engine/lattice_engine.hpp).
// Cluster moves (kernels/cluster/cluster_moves.hpp) embed an Ising-like variable in every site:
//   M::Embedding (NoEmbedding, or O(n)'s reflection direction r) and
//   static Embedding cluster_embedding(const Params&, SiteRandom&);   // once per cluster step
//   static uint64_t cluster_bond(const Params&, const Embedding&, Spin a, Spin b);
//   static uint64_t ghost_bond(const Params&, const Embedding&, Spin a);
//     the probability that neighbours a, b (or site a and the ghost spin that carries the field)
//     are bonded, as a threshold in 2^32 fixed point (0: never; >= 2^32: certain): moving a
//     cluster changes the weight only through its unbonded boundary, FK / Wolff style;
//   static bool cluster_move_draws(bool single);   // whether cluster_move reads `word`
//   static constexpr int kClusterMoveBits: 1 where Swendsen-Wang's cluster_move reads only bit 31
//     of `word` (a coin: flip or reflect), so that clusters share Philox blocks, else 32;
//   static Spin cluster_move(const Params&, const Embedding&, Spin s, uint32_t word, bool single);
//     the new value of a site of a moved cluster (the same for every site of it): single is
//     Wolff's one cluster that must change, else Swendsen-Wang's (each cluster independently);
//   static constexpr bool kClusterSizeEstimator: whether sum_C |C|^2 / V estimates <M^2> / V;
//   static constexpr bool kEqualSpinBonds: whether, as in FK clusters, a bond can join only equal
//     spins, and then with one threshold; then also
//   static bool equal_spin_bonds(const Params&, uint64_t& threshold);
//     true where cluster_bond(a, b) is `threshold` for a == b and 0 otherwise and ghost_bond is
//     always 0 (no field), so that the bonds need no per-bond threshold (ClusterBonds).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/replica_params.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// Passes of a sweep. langevin and mala move the whole lattice at once (Fourier-accelerated
/// Langevin, unadjusted or Metropolis-adjusted; models with kFourierLangevin); the others
/// update one checkerboard colour at a time.
enum class UpdateAlgorithm {
  metropolis,
  heatbath,
  overrelaxation,
  langevin,
  mala,
  swendsen_wang,  ///< every cluster of a Fortuin-Kasteleyn bond configuration moves (or not)
  wolff,          ///< single clusters grown from random sites (kernels/cluster/cluster_moves.hpp)
};
inline bool is_whole_lattice(UpdateAlgorithm a) {
  return a == UpdateAlgorithm::langevin || a == UpdateAlgorithm::mala;
}
inline bool is_cluster(UpdateAlgorithm a) {
  return a == UpdateAlgorithm::swendsen_wang || a == UpdateAlgorithm::wolff;
}

/// Cluster moves of a model with nothing to choose per step (Ising, Potts, phi^4).
struct NoEmbedding {};

/// Bond probability 1 - exp(-x) of a continuous model's embedded bond, x >= 0 being twice the
/// coupling it carries, as a 2^32 fixed-point threshold; 0 for x <= 0 (no bond).
LATTICA_HD_INLINE uint64_t embedded_bond_threshold(double x) {
  if (!(x > 0)) return 0;
  return static_cast<uint64_t>(-expm1(-x) * 4294967296.0);
}

/// How a configuration is written to a snapshot: `components` values of `type` per site.
enum class ElementType { int8, uint8, float32, float64 };
struct SnapshotFormat {
  ElementType type;
  int components;           ///< 1 for scalar fields; n for O(n) unit vectors (last axis)
  const char* description;  ///< what the values are
  /// Ising spins 8 per byte along the last axis (uint8; pack_spin_bits): a frame of V/8 bytes.
  bool bit_packed = false;
};
/// Bytes of one value of a snapshot element type.
constexpr size_t element_bytes(ElementType type) {
  return type == ElementType::float64 ? 8 : type == ElementType::float32 ? 4 : 1;
}
template <class Real>
constexpr ElementType element_type_of() {
  return sizeof(Real) == 4 ? ElementType::float32 : ElementType::float64;
}

/// Host-side description of one exact histogram a model keeps.
struct HistogramInfo {
  const char* name;
  const char* description;
  long long step;  ///< all attainable totals are congruent modulo step
};

/// The random-number source of a model's site update: M::Random where declared, else SiteRandom.
template <class Model, class = void>
struct RandomOf {
  using type = SiteRandom;
};
template <class Model>
struct RandomOf<Model, std::void_t<typename Model::Random>> {
  using type = typename Model::Random;
};

/// The random numbers of colour-local site j (`site`, its site_index) in one pass: its own
/// Philox stream, or for bit-sliced models its lane of its group's stream (the group's first
/// site, `lane` sites before it in storage, is 2 * lane before it lexicographically).
template <class Model, int D>
LATTICA_HD_INLINE typename RandomOf<Model>::type update_random(const Checkerboard<D>& lattice,
                                                               uint64_t seed, uint32_t replica,
                                                               int64_t j, int64_t site,
                                                               uint64_t step) {
  if constexpr (std::is_same_v<typename RandomOf<Model>::type, LaneRandom>) {
    const int lane = lattice.lane(j);
    return LaneRandom(SiteRandom(seed, RngStream::site_update, replica,
                                 static_cast<uint64_t>(site - 2 * lane), step),
                      lane);
  } else {
    return SiteRandom(seed, RngStream::site_update, replica, static_cast<uint64_t>(site), step);
  }
}

/// Vector words for whole runs of values (load_run, store_run): one 16- or 8-byte load or store
/// on the GPU.
struct alignas(16) RunWord16 {
  uint32_t w[4];
};
struct alignas(8) RunWord8 {
  uint32_t w[2];
};
/// The word that moves a run of kRun values of T on the GPU (void: value by value; always on the
/// host, where reading values as words would break aliasing rules).
template <int kRun, class T, size_t kBytes = sizeof(T) * kRun>
using RunWord = std::conditional_t<kBytes % 16 == 0, RunWord16,
                                   std::conditional_t<kBytes % 8 == 0, RunWord8, void>>;

/// values[0 .. kRun) = p[0 .. kRun): on the GPU in RunWords, so a float run of 4 is one load and a
/// warp's runs whole cache lines. Precondition: p is aligned to the word (a run starting at a
/// multiple of kRun in 16-byte aligned storage is).
template <int kRun, class T>
LATTICA_HD_INLINE void load_run(const T* p, T (&values)[kRun]) {
  using Word = RunWord<kRun, T>;
  if constexpr (kDeviceCode && !std::is_void_v<Word>) {
    Word words[sizeof(values) / sizeof(Word)];
    for (size_t w = 0; w < sizeof(values) / sizeof(Word); ++w)
      words[w] = reinterpret_cast<const Word*>(p)[w];
    memcpy(values, words, sizeof(values));
  } else {
    for (int r = 0; r < kRun; ++r) values[r] = p[r];
  }
}

/// p[0 .. kRun) = values, as load_run reads them.
template <int kRun, class T>
LATTICA_HD_INLINE void store_run(T* p, const T (&values)[kRun]) {
  using Word = RunWord<kRun, T>;
  if constexpr (kDeviceCode && !std::is_void_v<Word>) {
    Word words[sizeof(values) / sizeof(Word)];
    memcpy(words, values, sizeof(values));
    for (size_t w = 0; w < sizeof(values) / sizeof(Word); ++w)
      reinterpret_cast<Word*>(p)[w] = words[w];
  } else {
    for (int r = 0; r < kRun; ++r) p[r] = values[r];
  }
}

/// Sites of one row that one index of UpdateColour updates together: they share the location
/// of the run and its neighbours (half of a phi^4 float update site by site) and load whole
/// runs. Float scalar fields take runs of 8 (phi^4 on an H200, 256^3, Metropolis / over-
/// relaxation site updates per ns: runs of 2, 4, 8: 87 / 100, 105 / 125, 113 / 140, the
/// registers 39, 52, 72), double ones 4 (twice the registers a value), the discrete models'
/// bytes 1. A model's header may specialise this for its own spin type (on.hpp does).
template <class Spin>
struct UpdateRun {
  static constexpr int length = std::is_same_v<Spin, float>      ? 8
                                : std::is_floating_point_v<Spin> ? 4
                                                                 : 1;
};

/// Whether UpdateColour may take runs of kRun sites: whole runs per row and storage aligned for
/// load_run's words (the largest is 16 bytes).
template <int kRun, int D, class Spin>
bool fits_runs(const Checkerboard<D>& lattice, const Spin* spins) {
  return lattice.half_last % kRun == 0 && reinterpret_cast<uintptr_t>(spins) % 16 == 0;
}

/// One pass of `algorithm` over the sites of one colour in every replica; functor over
/// (replica * V/2 + colour-local index) / kRun, for all replicas at once so small lattices still
/// fill a GPU: each index updates a run of kRun sites of one row (Checkerboard::locate_run's
/// preconditions; fits_runs), each site as the model's update() with its own random numbers,
/// so the chain does not depend on kRun. When `accepted` is set, it receives each site's number
/// of accepted Metropolis moves at replica * V/2 + j.
/// Each replica takes its own couplings from `params` (the same for all without tempering;
/// SharedParams or TableParams, kernels/models/replica_params.hpp, to decide that at launch).
/// Index is the type of colour-local indices: int64_t, or on the GPU uint32_t where the lattice
/// fits_32_bits() (not kBoxed): 64-bit integer arithmetic takes several GPU instructions per
/// operation, and an O(3) update spent half of its instructions locating its site.
template <int D, class Model, bool kBoxed = false,
          class Couplings = ReplicaParams<typename Model::Params>, int kRun = 1,
          class Index = int64_t>
struct UpdateColour {
  static_assert(!kBoxed || std::is_same_v<Index, int64_t>, "a box names sites in 64 bits");
  using Spin = typename Model::Spin;
  Checkerboard<D> lattice;
  Couplings params;
  Spin* spins;        ///< replicas one after another, each in checkerboard storage
  uint8_t* accepted;  ///< [replica * V/2 + j], or null
  int colour;
  UpdateAlgorithm algorithm;
  uint32_t pass;  ///< position of this pass in the sweep's update sequence
  uint64_t sweep;

  LATTICA_HD_INLINE void operator()(int64_t index) const { update_run<false>(index); }

  /// Updates run `index` (as operator()); with kSums, returns the model's sums over the run's
  /// sites' bonds after their moves and over them and their partners (the other colour's sites
  /// stored at the same indices): as SiteSums does from colour 0, so over colour 1's runs,
  /// after colour 0 moved, they count every bond and every site of the sweep's configuration
  /// once.
  template <bool kSums>
  LATTICA_HD_INLINE auto update_run(int64_t index) const {
    const int64_t first = index * kRun;
    // One replica (the usual case) needs no division.
    const int64_t replica = first < lattice.half_volume ? 0 : lattice.by_half_volume.divide(first);
    const auto j = static_cast<Index>(first - replica * lattice.half_volume);
    Spin* base = spins + replica * lattice.volume();
    Spin* own = opaque_pointer(base + colour * lattice.half_volume);
    const Spin* other = opaque_pointer(base + (1 - colour) * lattice.half_volume);
    const auto at = lattice.template locate_run<kRun, kBoxed, Index>(j, colour);
    // The run's sites and, per neighbour direction but the last axis, the run of neighbours;
    // along the last axis the other colour's pairs of the row and the one beside them.
    Spin sites[kRun], across[2 * D - 1][kRun];
    load_run(own + j, sites);
    for (int k = 0; k < 2 * D - 1; ++k) load_run(other + at.other[k], across[k]);
    // Along the last axis, the row's pairs in order with the one beside the run on the parity's
    // side: site r's neighbours are line[r + 1] (+) and line[r] (-).
    const Spin beside = other[at.other[2 * D - 1]];
    const Spin(&pairs)[kRun] = across[2 * D - 2];
    Spin line[kRun + 1];
    line[0] = at.parity ? pairs[0] : beside;
    for (int r = 1; r < kRun; ++r) line[r] = at.parity ? pairs[r] : pairs[r - 1];
    line[kRun] = at.parity ? beside : pairs[kRun - 1];
    const uint64_t step = update_step(sweep, pass, 0);
    [[maybe_unused]] typename Model::Sums sums{};
    LATTICA_UNROLL  // the sites' values stay in registers
        for (int r = 0; r < kRun; ++r) {
      Spin nb[2 * D];
      for (int k = 0; k < 2 * D - 2; ++k) nb[k] = across[k][r];
      nb[2 * D - 2] = line[r + 1];
      nb[2 * D - 1] = line[r];
      int accepts = 0;
      auto random = update_random<Model>(lattice, params.seed(), static_cast<uint32_t>(replica),
                                         j + r, at.site + 2 * r, step);
      params.with(replica, [&](const typename Model::Params& p) {
        sites[r] = Model::template update<D>(p, algorithm, sites[r], nb, random, accepts);
        if constexpr (kSums)
          sums = sums + Model::template site_sums<D>(p, sites[r], nb, other[j + r]);
      });
      if (accepted) accepted[first + r] = static_cast<uint8_t>(accepts);
    }
    store_run(own + j, sites);
    if constexpr (kSums) return sums;
  }
};

/// UpdateColour of colour 1 that also returns each run's sums (update_run), as f(replica, i)
/// over the replica's runs i for a segmented accumulation: the sweep's last pass fused with its
/// measurement, for models whose sums are exact integers (summed in any order).
template <int D, class Model, class Couplings, int kRun, class Index = int64_t>
struct UpdateColourSums {
  UpdateColour<D, Model, false, Couplings, kRun, Index> update;
  LATTICA_HD_INLINE typename Model::Sums operator()(int64_t replica, int64_t i) const {
    return update.template update_run<true>(replica * (update.lattice.half_volume / kRun) + i);
  }
};

/// Accepted moves at one site, widened for summing.
struct AcceptedAt {
  const uint8_t* accepted;
  LATTICA_HD_INLINE long long operator()(int64_t i) const { return accepted[i]; }
};

/// Per colour-0 site j of one replica: the model's sums over j's bonds (each bond has exactly
/// one colour-0 end) and over j and the colour-1 site stored at the same index (its partner),
/// so every bond and every site is counted once.
template <int D, class Model>
struct SiteSums {
  Checkerboard<D> lattice;
  typename Model::Params params;
  const typename Model::Spin* spins;  ///< one replica's checkerboard storage

  LATTICA_HD_INLINE typename Model::Sums operator()(int64_t j) const { return of(spins, j); }

  /// The same for the replica whose checkerboard storage starts at `base`.
  LATTICA_HD_INLINE typename Model::Sums of(const typename Model::Spin* base, int64_t j) const {
    const typename Model::Spin* colour1 = base + lattice.half_volume;
    typename Model::Spin nb[2 * D];
    int k = 0;
    lattice.visit_neighbours(j, 0, [&](int64_t n) { nb[k++] = colour1[n]; });
    return Model::template site_sums<D>(params, base[j], nb, colour1[j]);
  }
};

/// SiteSums of replicas stored one after another, as f(replica, j) for a segmented reduction
/// (every replica's sums in one pass); `sums.spins` is replica 0's storage.
template <int D, class Model>
struct ReplicaSiteSums {
  SiteSums<D, Model> sums;
  LATTICA_HD_INLINE typename Model::Sums operator()(int64_t replica, int64_t j) const {
    return sums.of(sums.spins + replica * sums.lattice.volume(), j);
  }
};

/// Largest colour volume V/2 whose sums ReplicaSums adds serially: small lattices, where a
/// reduction per replica would cost a launch (GPU) or a parallel region (CPU) for a few sites.
constexpr int64_t kSerialSumSites = 512;

/// The sums of every replica of a small lattice in one launch: functor over replicas, each
/// adding SiteSums over its colour-0 sites in site order (the CPU's reduce_sum order for one
/// chunk, so the CPU's doubles are the same either way). Precondition: V/2 <= kSerialSumSites.
template <int D, class Model>
struct ReplicaSums {
  Checkerboard<D> lattice;
  typename Model::Params params;
  const typename Model::Spin* spins;  ///< every replica's checkerboard storage
  typename Model::Sums* sums;         ///< sums[r] receives replica r's

  LATTICA_HD_INLINE void operator()(int64_t replica) const {
    const SiteSums<D, Model> site_sums{lattice, params, spins + replica * lattice.volume()};
    typename Model::Sums total{};
    for (int64_t j = 0; j < lattice.half_volume; ++j) total = total + site_sums(j);
    sums[replica] = typename Model::Sums{} + total;
  }
};

/// Initial configuration of every replica; functor over replica * V + storage position.
template <int D, class Model, bool kBoxed = false>
struct Initialize {
  Checkerboard<D> lattice;
  typename Model::Params params;
  typename Model::Spin* spins;
  bool hot;

  LATTICA_HD_INLINE void operator()(int64_t position) const {
    const int64_t replica = position / lattice.volume();
    const int64_t local = position - replica * lattice.volume();
    const int colour = local >= lattice.half_volume;
    const int64_t site =
        lattice.template site_index<kBoxed>(local - colour * lattice.half_volume, colour);
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
