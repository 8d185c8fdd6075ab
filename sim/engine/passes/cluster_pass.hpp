#pragma once
// Cluster moves (kernels/cluster/cluster_moves.hpp) as a pass: "swendsen_wang" entries move
// every cluster of one bond configuration, "wolff" entries take update.wolff_clusters single
// clusters one after another. Works on the byte storage of every model and on multi-spin-coded
// Ising, whole or decomposed: a box labels its own sites, then the ranks agree on every
// cluster's canonical label by exchanging the labels of their boundary layers until no label
// changes (the smallest global site of a cluster crossing boxes reaches every box it touches).
//
// For Ising and Potts at h = 0 it also estimates <M^2> / V (M the magnetization sum, complex for
// Potts) from its clusters, the improved estimator "m2_improved": sum_C |C|^2 / V for
// Swendsen-Wang (each cluster's new orientation independent and uniform), the mean |C| of the
// pass's clusters for Wolff (a site's cluster is chosen with probability |C| / V).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/union_find.hpp"
#if defined(__CUDACC__)
#include "kernels/cluster/tile_labels.cuh"  // CudaExec's label_box
#endif
#include "sim/decomposition.hpp"
#include "sim/engine/pass.hpp"

namespace lattica {

/// Sets every replica's estimate to (numerator, denominator); functor over replicas.
struct SetEstimate {
  long long* estimates;  ///< [replica][2]
  long long numerator;
  long long denominator;
  LATTICA_HD_INLINE void operator()(int64_t r) const {
    estimates[2 * r] = numerator;
    estimates[2 * r + 1] = denominator;
  }
};

/// Copies the latest estimates into a measurement's slot; functor over 2 * replicas.
struct CopyEstimates {
  const long long* from;
  long long* to;
  LATTICA_HD_INLINE void operator()(int64_t i) const { to[i] = from[i]; }
};

/// Decomposed: the canonical label (1 + global site) at every root of the box's own labelling.
template <int D>
struct RootLabels {
  ClusterLattice<D> g;
  const uint32_t* parent;
  uint64_t* canon;  ///< per node
  LATTICA_HD_INLINE void operator()(int64_t n) const {
    if (n == 0) {
      canon[0] = kGhostLabel;
      return;
    }
    if (parent[n] != n) return;
    int64_t i;
    g.replica(n - 1, i);
    int64_t x[D];
    g.coordinates(i, x);
    canon[n] = 1 + static_cast<uint64_t>(g.global(i, x));
  }
};

/// Decomposed: each site's current label in storage order (what the halo exchange moves).
template <int D>
struct StoreSiteLabels {
  ClusterLattice<D> g;
  ClusterLabels labels;
  uint64_t* site_labels;  ///< [replica * V + storage position]
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    int64_t i;
    const int64_t r = g.replica(index, i);
    int64_t x[D];
    const int colour = g.coordinates(i, x);
    site_labels[r * g.volume + g.position(i, colour)] = labels(r, index);
  }
};

/// Decomposed: lowers the label of every cluster with a bond to a ghost to the ghost's label;
/// sets *changed when it lowered one, and marks the cluster's root as crossing (its size is
/// the sum of the boxes' parts). Functor over replica * V + site.
template <int D>
struct MergeAcrossBoxes {
  ClusterLattice<D> g;
  const uint8_t* bonds;
  const uint32_t* parent;
  const uint64_t* site_labels;
  uint64_t* canon;
  unsigned int* changed;
  uint8_t* crossing;  ///< per node
  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const uint8_t mask = bonds[index] & static_cast<uint8_t>(~kGhostBond);
    if (!mask) return;
    int64_t i;
    const int64_t r = g.replica(index, i);
    int64_t x[D];
    const int colour = g.coordinates(i, x);
    const bool inside = g.interior(x);
    for (int a = 0; a < D; ++a) {
      bool cross = false;
      if (!(mask >> a & 1) || !g.owns_bond(x, inside, a, cross) || !cross) continue;
      const int64_t j = g.up(i, x, a);
      const int64_t own = inside ? i : j;    // the end in this box
      const int64_t ghost = inside ? j : i;  // the end in the neighbour's
      const int ghost_colour = inside ? 1 - colour : colour;
      const uint64_t label = site_labels[r * g.volume + g.position(ghost, ghost_colour)];
      const uint32_t root = parent[r * g.volume + own + 1];
      crossing[root] = 1;
      if (label < atomic_min_u64(canon + root, label)) store_parent(changed, 1u);
    }
  }
};

/// Decomposed: `f`, a functor over replica * V + site, at the listed sites of every replica only;
/// functor over replica * count + k.
template <class F>
struct AtListedSites {
  F f;
  const uint32_t* sites;  ///< count of them, lexicographic in the box
  int64_t count;
  int64_t volume;
  LATTICA_HD_INLINE void operator()(int64_t k) const {
    const int64_t r = k / count;
    f(r * volume + sites[k - r * count]);
  }
};

/// Decomposed: the sites that the merge across boxes reads or writes, the layers x_a = 0, 1 and
/// extent - 2 of every split axis a (the lower ghost layer, and the two interior layers whose
/// labels the halo exchange sends; bonds cross boxes only from layers 0 and extent - 2), over
/// the whole extent of the other axes. A site on several such layers is listed for each.
template <int D>
std::vector<uint32_t> merge_layer_sites(const ClusterLattice<D>& g) {
  std::vector<uint32_t> sites;
  for (int a = 0; a < D; ++a) {
    if (!g.ghosts[a]) continue;
    const int64_t block = g.stride[a] * g.extent[a];  // the sites of axes a .. D - 1
    for (int64_t layer : {int64_t{0}, int64_t{1}, g.extent[a] - 2}) {
      for (int64_t k = 0; k < g.volume / g.extent[a]; ++k) {
        const int64_t before = k / g.stride[a], after = k - before * g.stride[a];
        sites.push_back(static_cast<uint32_t>(before * block + layer * g.stride[a] + after));
      }
    }
  }
  return sites;
}

/// Decomposed, Swendsen-Wang's estimator: this box's part of a cluster that crosses boxes.
struct ClusterPart {
  uint64_t replica;
  uint64_t label;
  uint64_t sites;
};

/// Lists the crossing clusters' parts held here; functor over nodes.
struct ListCrossingParts {
  const uint8_t* crossing;
  const uint32_t* sizes;
  const uint64_t* canon;
  int64_t volume;
  ClusterPart* parts;
  uint32_t* count;
  LATTICA_HD_INLINE void operator()(int64_t n) const {
    if (n == 0 || !crossing[n] || sizes[n] == 0) return;
    const uint32_t k = atomic_fetch_add_u32(count, 1u);
    parts[k] = {static_cast<uint64_t>((n - 1) / volume), canon[n], sizes[n]};
  }
};

/// Adds a per-replica amount to the estimates' numerators; functor over replicas.
struct AddToNumerators {
  long long* estimates;
  const long long* amounts;
  LATTICA_HD_INLINE void operator()(int64_t r) const { estimates[2 * r] += amounts[r]; }
};

template <class Exec, int D, class Model, class Storage>
class ClusterPass final : public Pass<Exec, D, Model, Storage> {
  using Sums = typename Model::Sums;
  using Pick = ClusterPick<Model>;

 public:
  explicit ClusterPass(const PassContext<Exec, D, Model, Storage>& context)
      : c_(context), g_(make_geometry(context.lattice, context.settings)) {
    const int64_t sites = c_.settings.replicas * g_.volume;
    if (static_cast<uint64_t>(sites) > kMaxLabelledSites) {
      throw InputError(
          "update.sequence: cluster moves label at most 2^32 - 2 sites per rank "
          "(replicas x sites of the box), and this run has " +
          std::to_string(sites));
    }
    bonds_ = c_.exec.template allocate<uint8_t>(sites);
    parent_ = c_.exec.template allocate<uint32_t>(sites + 1);
    c_.exec.zero(parent_);  // node 0, the ghost, is its own root
    picks_ = c_.exec.template allocate<Pick>(c_.settings.replicas);
    seed_labels_ = c_.exec.template allocate<uint64_t>(c_.settings.replicas);
    estimating_ = Model::kClusterSizeEstimator && no_field(c_.settings);
    if (estimating_) {
      estimates_ = c_.exec.template allocate<long long>(2 * c_.settings.replicas);
      c_.exec.zero(estimates_);
      sizes_ = c_.exec.template allocate<uint32_t>(sites + 1);
    }
    if (c_.box) {
      canon_ = c_.exec.template allocate<uint64_t>(sites + 1);
      site_labels_ = c_.exec.template allocate<uint64_t>(sites);
      changed_ = c_.exec.template allocate<unsigned int>(1);
      crossing_ = c_.exec.template allocate<uint8_t>(sites + 1);
      const std::vector<uint32_t> layers = merge_layer_sites(g_);
      merge_sites_ = c_.exec.template allocate<uint32_t>(static_cast<int64_t>(layers.size()));
      c_.exec.copy_to_device(layers.data(), merge_sites_, static_cast<int64_t>(layers.size()));
      label_box_ = std::make_unique<DecomposedBox<Exec, D>>(
          c_.exec, c_.settings, c_.lattice, sizeof(uint64_t), c_.lattice.half_last,
          c_.lattice.half_volume, c_.lattice.volume());
    }
  }

  bool handles(UpdateAlgorithm algorithm) const override { return is_cluster(algorithm); }

  void run(UpdateAlgorithm algorithm, uint32_t index, uint64_t sweep, bool, Sums*) override {
    const bool single = algorithm == UpdateAlgorithm::wolff;
    const uint32_t steps = single ? static_cast<uint32_t>(c_.settings.wolff_clusters) : 1;
    if (estimating_ && single) {
      c_.exec.for_each(c_.settings.replicas, SetEstimate{estimates_.data(), 0, counted(steps)});
    }
    for (uint32_t k = 0; k < steps; ++k) step(single, cluster_step(sweep, index, k));
    // Swendsen-Wang's estimator needs the sizes of all clusters: taken from its labels only when
    // a measurement records it (record_estimates), so passes between measurements skip it.
    labels_unmeasured_ = estimating_ && !single;
  }

  std::vector<Estimate> estimates() const override {
    if (!estimating_) return {};
    return {{"m2_improved",
             "improved estimator of <M^2> / V (M = sum_i s_i, for Potts |sum_i exp(2 pi i s_i / "
             "q)|) from the last cluster pass before the measurement: sum_C |C|^2 / V over its "
             "clusters (swendsen_wang) or the mean size of its clusters (wolff); h = 0 only"}};
  }
  void record_estimates(long long* slot) override {
    if (labels_unmeasured_) {  // the labels of the last pass, a Swendsen-Wang one, are intact
      c_.exec.for_each(c_.settings.replicas,
                       SetEstimate{estimates_.data(), 0, counted(volume_of(c_.settings.dims))});
      square_cluster_sizes();
      labels_unmeasured_ = false;
    }
    if (estimating_) {
      c_.exec.for_each(2 * c_.settings.replicas, CopyEstimates{estimates_.data(), slot});
    }
  }

 private:
  using Spin = typename Model::Spin;
  /// Whether Swendsen-Wang labels and moves at once (label_and_move: on the GPU one kernel a tile
  /// flattens and moves, drawing each cluster's word once per part of it in a tile). Measured on
  /// an H200 (tests/bench/results/session_p_nvidia_h200/call6): Ising 2D 4096^2 33.8 -> 38.2
  /// sites/ns, Potts q = 3 8192^2 38.4 -> 42.0, but Ising 3D 256^3 25.4 -> 25.6, and the sparse
  /// embedded clusters of O(3) and phi^4 3D 256^3 lost (20.8 -> 17.9, 25.1 -> 23.5): where a tile's
  /// parts hold few sites the kernel draws nearly a word a site anyway.
  static constexpr bool kLabelsAndMovesAtOnce =
      D == 2 && std::is_integral_v<Spin> && sizeof(Spin) == 1;

  /// Whether every replica has h = 0 (the improved estimator's condition), tempered or not.
  static bool no_field(const EngineSettings& s) {
    for (double h : s.tempering.field) {
      if (h != 0) return false;
    }
    return s.field == 0;
  }
  static std::vector<int64_t> ghost_layer_list(const EngineSettings& s) {
    std::vector<int64_t> ghosts(D, 0);
    if (!decomposed(s)) return ghosts;
    const Decomposition d(s.dims, s.parallel_grid, s.communicator->size());
    for (int a = 0; a < D; ++a) ghosts[static_cast<size_t>(a)] = d.split(a) ? 1 : 0;
    return ghosts;
  }
  static ClusterLattice<D> make_geometry(const Checkerboard<D>& lattice, const EngineSettings& s) {
    const std::vector<int64_t> list = ghost_layer_list(s);
    int64_t ghosts[D];
    for (int a = 0; a < D; ++a) ghosts[a] = list[static_cast<size_t>(a)];
    return ClusterLattice<D>::make(lattice, ghosts);
  }
  void* spin_storage() {
    if constexpr (Storage::kPacked) {
      return c_.storage.words();
    } else {
      return c_.storage.sites();
    }
  }

  /// An estimate's denominator as this rank adds it: the ranks' parts are summed.
  long long counted(int64_t denominator) const {
    return !c_.box || c_.box->communicator().rank() == 0 ? denominator : 0;
  }

  /// One cluster step: bonds, labels, moves.
  void step(bool single, uint64_t step_word) {
    const int64_t sites = c_.settings.replicas * g_.volume;
    // Swendsen-Wang without an embedding uses no pick: no kernel of its own (a launch on every
    // step's critical path; the picks draw from a stream of their own, so the chain is the same).
    if (single || !std::is_same_v<typename Model::Embedding, NoEmbedding>) {
      c_.exec.for_each(c_.settings.replicas,
                       PickClusters<Model>{c_.replica_params(), picks_.data(), step_word,
                                           static_cast<uint64_t>(volume_of(c_.settings.dims))});
    }
    if constexpr (Storage::kPacked) {
      bond_and_label(PackedSites<D>{c_.lattice, c_.storage.words()}, step_word);
    } else {
      const ByteSites<D, Spin> sites_of_storage{c_.lattice, c_.storage.sites()};
      // Compiled only where it applies: the tiles' move keeps two 1-byte spins in 16 bits.
      if constexpr (kLabelsAndMovesAtOnce) {
        if (!single && !c_.box) {  // Swendsen-Wang, a whole lattice
          draw_bonds(sites_of_storage, step_word);
          label_and_move(c_.exec, g_, bonds_.data(), parent_.data(), sites,
                         MoveClusters<D, Model>{g_,
                                                sites_of_storage,
                                                {parent_.data(), nullptr, g_.volume},
                                                {c_.replica_params(), nullptr, step_word},
                                                picks_.data()},
                         tile_parts_);
          return;
        }
      }
      bond_and_label(sites_of_storage, step_word);
    }
    const ClusterLabels labels{parent_.data(), c_.box ? canon_.data() : nullptr, g_.volume};
    if (single) find_seed_labels(labels);
    const ClusterDecision<Model> decision{c_.replica_params(),
                                          single ? seed_labels_.data() : nullptr, step_word};
    if (estimating_ && single) add_seed_cluster_sizes(labels);
    if constexpr (Storage::kPacked) {
      c_.exec.for_each(sites / 32,
                       MovePackedClusters<D, Model>{g_, c_.storage.words(), labels, decision});
    } else {
      for_each_cluster_site(
          c_.exec, sites,
          MoveClusters<D, Model>{g_, ByteSites<D, Spin>{c_.lattice, c_.storage.sites()}, labels,
                                 decision, picks_.data()});
    }
    if (c_.box) {  // the moved spins' ghost copies (both colours), for the next step's bonds
      c_.exec.side_waits_for_main();
      for (int colour = 0; colour < 2; ++colour)
        c_.box->exchange(colour, reinterpret_cast<unsigned char*>(spin_storage()));
      c_.exec.main_waits_for_side();
    }
  }

  template <class Sites>
  void draw_bonds(const Sites& sites, uint64_t step_word) {
    launch_with_couplings(c_.replica_params(), [&](const auto& couplings) {
      for_each_cluster_site(c_.exec, c_.settings.replicas * g_.volume,
                            ClusterBonds<D, Model, Sites, std::decay_t<decltype(couplings)>>{
                                g_, couplings, picks_.data(), sites, bonds_.data(), step_word});
    });
  }

  template <class Sites>
  void bond_and_label(const Sites& sites, uint64_t step_word) {
    draw_bonds(sites, step_word);
    label_box(c_.exec, g_, bonds_.data(), parent_.data(), c_.settings.replicas * g_.volume);
    if (c_.box) merge_across_boxes();
  }

  /// Lowers every root's canonical label to the smallest of its cluster across the boxes.
  void merge_across_boxes() {
    const int64_t sites = c_.settings.replicas * g_.volume;
    c_.exec.for_each(sites + 1, RootLabels<D>{g_, parent_.data(), canon_.data()});
    c_.exec.zero(crossing_);
    const ClusterLabels labels{parent_.data(), canon_.data(), g_.volume};
    // Each round touches only the boundary layers (merge_layer_sites): O(L^(d-1)) per round.
    const int64_t listed = merge_sites_.size();
    const auto at_layers = [&](const auto& f) {
      using F = std::decay_t<decltype(f)>;
      c_.exec.for_each(c_.settings.replicas * listed,
                       AtListedSites<F>{f, merge_sites_.data(), listed, g_.volume});
    };
    for (int round = 0;; ++round) {
      at_layers(StoreSiteLabels<D>{g_, labels, site_labels_.data()});
      c_.exec.side_waits_for_main();
      for (int colour = 0; colour < 2; ++colour)
        label_box_->exchange(colour, reinterpret_cast<unsigned char*>(site_labels_.data()));
      c_.exec.main_waits_for_side();
      c_.exec.zero(changed_);
      at_layers(MergeAcrossBoxes<D>{g_, bonds_.data(), parent_.data(), site_labels_.data(),
                                    canon_.data(), changed_.data(), crossing_.data()});
      unsigned int changed = 0;
      c_.exec.copy_to_host(changed_, &changed, 1);
      long long any = changed;
      sum_over_ranks(c_.box->communicator(), &any, 1);
      if (any == 0) return;
      if (round > 4 * c_.box->communicator().size() + 16)
        throw std::logic_error("cluster labels did not converge across the boxes");
    }
  }

  /// Wolff: every replica's seed label, from the box that holds the seed site.
  void find_seed_labels(const ClusterLabels& labels) {
    c_.exec.for_each(c_.settings.replicas,
                     SeedLabels<D, Model>{g_, labels, picks_.data(), seed_labels_.data()});
    if (!c_.box) return;
    const int replicas = c_.settings.replicas;
    std::vector<uint64_t> mine(static_cast<size_t>(replicas));
    c_.exec.copy_to_host(seed_labels_, mine.data(), replicas);
    Communicator& comm = c_.box->communicator();
    std::vector<uint64_t> all(mine.size() * static_cast<size_t>(comm.size()));
    comm.allgather(mine.data(), all.data(), mine.size() * sizeof(uint64_t));
    for (size_t r = 0; r < mine.size(); ++r) {
      for (int rank = 0; rank < comm.size(); ++rank)
        mine[r] = std::min(mine[r], all[static_cast<size_t>(rank) * mine.size() + r]);
    }
    c_.exec.copy_to_device(mine.data(), seed_labels_, replicas);
  }

  /// Wolff's estimator: the seed cluster's sites, added to each replica's numerator.
  void add_seed_cluster_sizes(const ClusterLabels& labels) {
    for (int r = 0; r < c_.settings.replicas; ++r) {
      c_.exec.template accumulate_exact_into<long long>(
          g_.volume, SeedClusterSites<D>{g_, labels, seed_labels_.data(), r},
          estimates_.data() + 2 * r);
    }
  }

  /// Swendsen-Wang's estimator: sum_C |C|^2 into each replica's numerator.
  void square_cluster_sizes() {
    const int64_t sites = c_.settings.replicas * g_.volume;
    c_.exec.zero(sizes_);
    c_.exec.for_each(sites, CountClusterSites<D>{g_, parent_.data(), sizes_.data()});
    const uint8_t* crossing = c_.box ? crossing_.data() : nullptr;
    for (int r = 0; r < c_.settings.replicas; ++r) {
      const int64_t first = 1 + r * g_.volume;
      c_.exec.template reduce_sum_into<long long>(
          g_.volume,
          SquaredClusterSize{sizes_.data() + first, crossing ? crossing + first : nullptr},
          estimates_.data() + 2 * r);
    }
    if (c_.box) add_crossing_clusters();
  }

  /// Decomposed: the clusters that cross boxes, whose parts every rank lists; rank 0 adds the
  /// squares of their sums.
  void add_crossing_clusters() {
    const int64_t sites = c_.settings.replicas * g_.volume;
    if (parts_.size() == 0) {
      parts_ = c_.exec.template allocate<ClusterPart>(sites);
      part_count_ = c_.exec.template allocate<uint32_t>(1);
      extra_ = c_.exec.template allocate<long long>(c_.settings.replicas);
    }
    c_.exec.zero(part_count_);
    c_.exec.for_each(sites + 1, ListCrossingParts{crossing_.data(), sizes_.data(), canon_.data(),
                                                  g_.volume, parts_.data(), part_count_.data()});
    uint32_t count = 0;
    c_.exec.copy_to_host(part_count_, &count, 1);
    Communicator& comm = c_.box->communicator();
    const int64_t most = comm.max(count);
    std::vector<ClusterPart> mine(static_cast<size_t>(most), ClusterPart{0, 0, 0});
    if (count > 0) c_.exec.copy_to_host(parts_, mine.data(), count);
    std::vector<ClusterPart> all(mine.size() * static_cast<size_t>(comm.size()));
    comm.allgather(mine.data(), all.data(), mine.size() * sizeof(ClusterPart));
    if (comm.rank() != 0) return;
    std::map<std::pair<uint64_t, uint64_t>, long long> totals;  // (replica, label) -> sites
    for (const ClusterPart& p : all) {
      if (p.sites > 0) totals[{p.replica, p.label}] += static_cast<long long>(p.sites);
    }
    std::vector<long long> extra(static_cast<size_t>(c_.settings.replicas), 0);
    for (const auto& [key, total] : totals) extra[key.first] += total * total;
    c_.exec.copy_to_device(extra.data(), extra_, c_.settings.replicas);
    c_.exec.for_each(c_.settings.replicas, AddToNumerators{estimates_.data(), extra_.data()});
  }

  PassContext<Exec, D, Model, Storage> c_;
  ClusterLattice<D> g_;
  bool estimating_ = false;
  bool labels_unmeasured_ = false;  ///< the last pass was Swendsen-Wang's, its estimate not taken
  typename Exec::template Buffer<uint8_t> bonds_;
  typename Exec::template Buffer<uint32_t> parent_;
  typename Exec::template Buffer<Pick> picks_;
  typename Exec::template Buffer<uint64_t> seed_labels_;
  typename Exec::template Buffer<long long> estimates_;  ///< [replica][numerator, denominator]
  typename Exec::template Buffer<uint32_t> sizes_;
  typename Exec::template Buffer<uint16_t> tile_parts_;  ///< label_and_move's (GPU tiles only)
  // Decomposed only.
  typename Exec::template Buffer<uint64_t> canon_;
  typename Exec::template Buffer<uint64_t> site_labels_;
  typename Exec::template Buffer<unsigned int> changed_;
  typename Exec::template Buffer<uint8_t> crossing_;  ///< per node: a part of a crossing cluster
  typename Exec::template Buffer<uint32_t> merge_sites_;  ///< merge_layer_sites, on the backend
  typename Exec::template Buffer<ClusterPart> parts_;
  typename Exec::template Buffer<uint32_t> part_count_;
  typename Exec::template Buffer<long long> extra_;
  std::unique_ptr<DecomposedBox<Exec, D>> label_box_;
};

}  // namespace lattica
