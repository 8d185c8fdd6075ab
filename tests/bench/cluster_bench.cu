// Cluster labelling on the GPU: the phases of a Swendsen-Wang step of the Ising model at its
// critical coupling, with the engine's own functors (kernels/cluster/cluster_moves.hpp,
// union_find.hpp) through CudaExec, on one replica of byte-per-spin storage:
//   bonds:   PickClusters and ClusterBonds (FK bonds between equal neighbours, probability
//            p = 1 - exp(-2 beta_c), and every node's initial parent), a thread per four
//            sites of a row, which share a Philox block, as the engine runs it
//            (for_each_cluster_site);
//   unite:   UniteBonds (the concurrent union-find over the bonds);
//   flatten: FlattenLabels (every node pointed at its root), or for the aligned tiles
//            PointRepresentativesAtRoots (each part's representative at its root);
//   move:    MoveClusters (each cluster flipped or not, keyed by its canonical label), also a
//            thread per pair.
// Lattices: 2D L = 1024, 4096, 8192 (beta_c = ln(1 + sqrt 2) / 2) and 3D L = 64, 128, 256
// (beta_c = 0.2216544). Configurations: "random" (independent +-1 spins: bonds of density p / 2,
// below the percolation threshold), "ordered" (all +1: pure bond percolation at p, above it)
// and "critical" (after kEquilibrationSteps Swendsen-Wang steps from a random start at beta_c:
// the clusters of the critical point, at least on the scales equilibrated by then). Every
// repeat draws new bonds (a new step word) on the same spins (restored before each repeat,
// untimed).
//
// Variants, on the same spins and step words, so the same bonds:
//   "global": the first labelling (c957b10 and after): InitialParents, then UniteBonds over all
//             bonds in global memory (the unions' finds halving the paths), then FlattenLabels;
//             what the CPU runs (the generic label_box of kernels/cluster/cluster_moves.hpp);
//   "tiles AxB.. @T": the GPU's (kernels/cluster/tile_labels.cuh): tiles of A x B .. sites
//             labelled in shared memory by blocks of T threads, then the bonds between tiles in
//             global memory, then the flattening (tile by tile, or of the representatives
//             where the tiles divide the lattice, TileGrid::aligned); 32x128 and 8x16x32 at 256
//             threads are the engine's labelling;
//   "... fused @T": aligned tiles flattened and moved in one kernel of T threads a block
//             (move_by_tiles: the engine's Swendsen-Wang since session p), its time in the
//             move's column and none in the flattening's; these also time the whole step with
//             no events between its kernels ("back to back", as the engine runs it);
//   "... faces each bond", "... faces axis by axis": the unions between tiles as before
//             session x (a unite for every bond, axis after axis) or as in its first device
//             call (one for each distinct pair of parents, axis after axis; FaceUnions).
// (tests/bench/results/cluster_nvidia_h100/cluster_bench.txt keeps the rows of the variants
// timed before: reads of the spins through storage_index, finds that only read, and a
// flattening whose walks halve.)
// Every variant must give the same bonds, roots and moved spins (checked on the first
// repeat; on the smaller lattices also against the serial tests/support/serial_labels.hpp); a
// mismatch is reported and the program exits with status 1.
//
// Reported per phase: the median time over --repeats repeats (CUDA events around each phase)
// after kWarmup untimed ones, in ns per site, and the effective bandwidth of the least traffic
// the phase needs (bytes per site below: each array read or written once, none of the unions'
// extra reads) against the device's copy bandwidth (the faster of cudaMemcpyAsync and a copy
// kernel over 1 GiB, 2 x bytes / time). Also: the labelling rate (bonds + unite + flatten) and
// the whole step's in sites per ns, the number of clusters, the largest one's share of the
// sites, and the depth of the union-find trees after the unions (mean over the nodes of the
// number of parents to the root, and the largest), which the flattening walks.
//
//   cluster_bench [--repeats N] [--filter TEXT] [--json FILE]
//
// --filter runs only the cases whose name ("2D 4096^2 critical tiles 64x64", ...) contains TEXT.
// Needs about 0.5 GiB of device memory and 1 GiB of host memory at 8192^2.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/tile_labels.cuh"
#include "kernels/cluster/union_find.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/rng/philox.hpp"
#include "tests/bench/bench_support.cuh"
#include "tests/support/serial_labels.hpp"

namespace lattica {

namespace {

using namespace bench;

constexpr size_t kCopyBytes = size_t{1} << 30;
constexpr int kEquilibrationSteps = 100;
/// The serial labelling checks lattices up to this many sites.
constexpr int64_t kSerialCheckSites = int64_t{1} << 21;
// Least traffic per site: bonds reads the spin and writes the mask (1 + 1); unite reads the
// mask and writes the parent (1 + 4); flatten reads the parent (4: it writes only the parents
// that change); move reads the parent and reads and writes the spin (4 + 1 + 1).
constexpr double kBondsBytes = 2, kUniteBytes = 5, kFlattenBytes = 4, kMoveBytes = 6;

enum class Start { random, ordered, critical };
/// A labelling: global (no tiles), or tiles of 2^log2[a] sites along axis a.
struct Variant {
  std::vector<int> log2;
  int threads = 512;     ///< per block of the tiles' labelling
  bool generic = false;  ///< aligned tiles labelled and flattened as cut and boxed tiles are
  int fused = 0;         ///< aligned tiles flattened and moved in one kernel of this many threads
  FaceUnions faces = FaceUnions::distinct;  ///< the unions between tiles: the engine's unless named
};

const char* start_name(Start s) {
  return s == Start::random ? "random" : s == Start::ordered ? "ordered" : "critical";
}
std::string variant_name(const Variant& v) {
  if (v.log2.empty()) return "global";
  std::string name = "tiles ";
  for (size_t a = 0; a < v.log2.size(); ++a)
    name += (a ? "x" : "") + std::to_string(1 << v.log2[a]);
  return name + " @" + std::to_string(v.threads) + (v.generic ? " generic" : "") +
         (v.fused ? " fused @" + std::to_string(v.fused) : "") +
         (v.faces == FaceUnions::each_bond               ? " faces each bond"
          : v.faces == FaceUnions::distinct_axis_by_axis ? " faces axis by axis"
                                                         : "");
}

/// Spin i: +1, or +-1 from the initial-state stream.
struct FillSpins {
  int8_t* spins;
  bool random;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    spins[i] =
        !random || philox_u32(12345, RngStream::initial_state, 0, static_cast<uint64_t>(i), 0) >> 31
            ? int8_t(1)
            : int8_t(-1);
  }
};

struct CopySpins {
  const int8_t* from;
  int8_t* to;
  LATTICA_HD_INLINE void operator()(int64_t i) const { to[i] = from[i]; }
};

/// Medians of the phases, in seconds.
struct Phases {
  double bonds = 0, unite = 0, flatten = 0, move = 0;
  double back_to_back = 0;  ///< the fused variants' whole step, no events between its kernels
};

struct Result {
  std::string name;
  int d;
  int64_t length;
  std::string start;
  std::string variant;
  int64_t sites;
  Phases seconds;
  double bond_density;   ///< occupied bonds per bond (first repeat)
  int64_t clusters;      ///< first repeat
  double largest_share;  ///< the largest cluster's sites / V
  double mean_depth;     ///< of the trees after the unions
  int64_t max_depth;
  bool ok;
};

/// Tree depths of a forest whose parents are below their nodes: mean over the nodes, largest.
void tree_depths(const std::vector<uint32_t>& parent, double& mean, int64_t& largest) {
  std::vector<uint32_t> depth(parent.size(), 0);
  double sum = 0;
  largest = 0;
  for (size_t n = 1; n < parent.size(); ++n) {
    if (parent[n] != n) depth[n] = depth[parent[n]] + 1;
    sum += depth[n];
    largest = std::max<int64_t>(largest, depth[n]);
  }
  mean = sum / static_cast<double>(parent.size() - 1);
}

/// One lattice of one dimension: every start and variant. (Exec is CudaExec here; the class
/// takes any exec so that its bookkeeping can be tried on the CPU.)
template <class Exec, int D>
class LatticeBench {
 public:
  LatticeBench(const Exec& exec, int64_t length, double beta) : exec_(exec), length_(length) {
    int64_t extents[D];
    const int64_t ghosts[D] = {};
    for (int a = 0; a < D; ++a) extents[a] = length;
    lattice_ = Checkerboard<D>::make(extents);
    g_ = ClusterLattice<D>::make(lattice_, ghosts);
    volume_ = g_.volume;
    params_ = make_ising_params(D, beta, 0.0, 2026);
    spins_ = exec.template allocate<int8_t>(volume_);
    saved_ = exec.template allocate<int8_t>(volume_);
    bonds_ = exec.template allocate<uint8_t>(volume_);
    parts_ = exec.template allocate<uint16_t>(volume_);
    parent_ = exec.template allocate<uint32_t>(volume_ + 1);
    picks_ = exec.template allocate<ClusterPick<IsingModel>>(1);
    exec.zero(parent_);  // node 0, the ghost (no field: never bonded)
  }

  static std::string name(int64_t length, Start start, const Variant& variant) {
    return std::to_string(D) + "D " + std::to_string(length) + "^" + std::to_string(D) + " " +
           start_name(start) + " " + variant_name(variant);
  }

  /// Sets the spins of `start` and keeps a copy to restore before each repeat.
  void prepare(Start start) {
    exec_.for_each(volume_, FillSpins{spins_.data(), start != Start::ordered});
    if (start == Start::critical) {
      for (int k = 0; k < kEquilibrationSteps; ++k) {
        const uint64_t step = cluster_step(1000000 + static_cast<uint64_t>(k), 0, 0);
        bonds(step);
        unite(Variant{});
        flatten(Variant{});
        move(step);
      }
    }
    exec_.for_each(volume_, CopySpins{spins_.data(), saved_.data()});
    reference_.clear();
    reference_bonds_.clear();
    reference_spins_.clear();
  }

  /// --repeats timed repeats of the step after kWarmup untimed ones, checking the first.
  Result run(Start start, const Variant& variant, int repeats) {
    Result result{name(length_, start, variant),
                  D,
                  length_,
                  start_name(start),
                  variant_name(variant),
                  volume_,
                  {},
                  0,
                  0,
                  0,
                  0,
                  0,
                  true};
    std::vector<double> t_bonds, t_unite, t_flatten, t_move, t_whole;
    for (int k = 0; k < kWarmup + repeats; ++k) {
      exec_.for_each(volume_, CopySpins{saved_.data(), spins_.data()});
      const uint64_t step = cluster_step(static_cast<uint64_t>(k), 0, 0);
      const double b = exec_.time([&] { bonds(step); });
      const double u = exec_.time([&] { unite(variant); });
      if (k == 0) examine_trees(result);
      double f = 0, m = 0;
      if (variant.fused) {  // the flattening's time is in the move's
        m = exec_.time([&] { move_by_tiles(variant, step); });
        if (k == 0) check_roots(result);
      } else {
        f = exec_.time([&] { flatten(variant); });
        if (k == 0) check_roots(result);
        m = exec_.time([&] { move(step); });
      }
      if (k == 0) check_spins(result);
      double whole = 0;
      if (variant.fused) {  // the same step again, as the engine issues it
        exec_.for_each(volume_, CopySpins{saved_.data(), spins_.data()});
        whole = exec_.time([&] {
          bonds(step);
          unite(variant);
          move_by_tiles(variant, step);
        });
        if (k == 0) check_spins(result);
      }
      if (k < kWarmup) continue;
      t_whole.push_back(whole);
      t_bonds.push_back(b);
      t_unite.push_back(u);
      t_flatten.push_back(f);
      t_move.push_back(m);
    }
    result.seconds = {median(t_bonds), median(t_unite), median(t_flatten), median(t_move),
                      median(t_whole)};
    return result;
  }

 private:
  using Sites = ByteSites<D, int8_t>;

  void bonds(uint64_t step) {
    exec_.for_each(
        1, PickClusters<IsingModel>{params_, picks_.data(), step, static_cast<uint64_t>(volume_)});
    const Sites sites{lattice_, spins_.data()};
    for_each_cluster_site(
        exec_, volume_,
        ClusterBonds<D, IsingModel, Sites>{g_, params_, picks_.data(), sites, bonds_.data(), step});
  }
  void unite(const Variant& variant) {
    if (variant.log2.empty()) {
      exec_.for_each(volume_, InitialParents{bonds_.data(), parent_.data()});
      exec_.for_each(volume_, UniteBonds<D>{g_, bonds_.data(), parent_.data()});
    } else {
      unite_by_tiles(exec_, tiles(variant), 1, bonds_.data(), parent_.data(), variant.threads,
                     variant.fused ? parts_.data() : nullptr, variant.faces);
    }
  }
  void flatten(const Variant& variant) {
    if (variant.log2.empty()) {
      exec_.for_each(volume_ + 1, FlattenLabels{parent_.data()});
    } else {
      flatten_by_tiles(exec_, tiles(variant), 1, bonds_.data(), parent_.data());
    }
  }
  TileGrid<D> tiles(const Variant& variant) const {
    TileShape<D> shape{};
    for (int a = 0; a < D; ++a) shape.log2[a] = variant.log2[static_cast<size_t>(a)];
    TileGrid<D> t = TileGrid<D>::make(g_, shape);
    t.aligned = t.aligned && !variant.generic;
    return t;
  }
  void move(uint64_t step) {
    const ClusterLabels labels{parent_.data(), nullptr, volume_};
    const ClusterDecision<IsingModel> decision{params_, nullptr, step};
    for_each_cluster_site(exec_, volume_,
                          MoveClusters<D, IsingModel>{g_, Sites{lattice_, spins_.data()}, labels,
                                                      decision, picks_.data()});
  }

  void move_by_tiles(const Variant& variant, uint64_t step) {
    const ClusterLabels labels{parent_.data(), nullptr, volume_};
    const ClusterDecision<IsingModel> decision{params_, nullptr, step};
    lattica::move_by_tiles(exec_, tiles(variant), 1, parts_.data(), parent_.data(),
                           MoveClusters<D, IsingModel>{g_, Sites{lattice_, spins_.data()}, labels,
                                                       decision, picks_.data()},
                           variant.fused);
  }

  /// The spins after the first repeat's move: the same for every variant (the first sets them).
  void check_spins(Result& result) {
    std::vector<int8_t> spins(static_cast<size_t>(volume_));
    exec_.copy_to_host(spins_, spins.data());
    if (reference_spins_.empty()) {
      reference_spins_ = spins;
    } else if (spins != reference_spins_) {
      result.ok = false;
      std::fprintf(stderr, "cluster_bench: %s: other moved spins than the first variant's\n",
                   result.name.c_str());
    }
  }

  static double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  }

  /// Bond density and tree depths after the unions of the first repeat; its bonds must be the
  /// first variant's.
  void examine_trees(Result& result) {
    std::vector<uint32_t> parent(static_cast<size_t>(volume_ + 1));
    exec_.copy_to_host(parent_, parent.data());
    tree_depths(parent, result.mean_depth, result.max_depth);
    host_bonds_.resize(static_cast<size_t>(volume_));
    exec_.copy_to_host(bonds_, host_bonds_.data());
    for (uint8_t& mask : host_bonds_) mask &= static_cast<uint8_t>(~kTileRepresentative);
    if (reference_bonds_.empty()) {
      reference_bonds_ = host_bonds_;
    } else if (host_bonds_ != reference_bonds_) {
      result.ok = false;
      std::fprintf(stderr, "cluster_bench: %s: other bonds than the first variant's\n",
                   result.name.c_str());
    }
    int64_t occupied = 0;
    for (uint8_t mask : host_bonds_) {
      for (int a = 0; a < D; ++a) occupied += mask >> a & 1;
    }
    result.bond_density = static_cast<double>(occupied) / static_cast<double>(D * volume_);
  }

  /// The roots after the first repeat's flattening: the same for every variant (the first
  /// variant run sets the reference) and, on small lattices, the serial labelling's.
  void check_roots(Result& result) {
    std::vector<uint32_t> parents(static_cast<size_t>(volume_ + 1)), roots(parents.size());
    exec_.copy_to_host(parent_, parents.data());
    for (size_t n = 0; n < roots.size(); ++n) roots[n] = parents[parents[n]];  // labelled_root
    std::vector<int64_t> sizes(roots.size(), 0);
    for (size_t n = 1; n < roots.size(); ++n) ++sizes[roots[n]];
    result.clusters = 0;
    int64_t largest = 0;
    for (size_t n = 1; n < roots.size(); ++n) {
      result.clusters += roots[n] == n;
      largest = std::max(largest, sizes[n]);
    }
    result.largest_share = static_cast<double>(largest) / static_cast<double>(volume_);
    if (reference_.empty()) {
      reference_ = roots;
      if (volume_ <= kSerialCheckSites) {
        int64_t dims[D];
        for (int a = 0; a < D; ++a) dims[a] = length_;
        const std::vector<int64_t> labels = label_clusters(host_bonds_, dims, D);
        for (int64_t i = 0; i < volume_; ++i) {
          if (roots[static_cast<size_t>(i + 1)] != labels[static_cast<size_t>(i)] + 1) {
            result.ok = false;
            std::fprintf(stderr, "cluster_bench: %s: site %lld has root %u, serial label %lld\n",
                         result.name.c_str(), static_cast<long long>(i),
                         roots[static_cast<size_t>(i + 1)],
                         static_cast<long long>(labels[static_cast<size_t>(i)]));
            break;
          }
        }
      }
    } else {
      for (size_t n = 0; n < roots.size(); ++n) {
        if (roots[n] != reference_[n]) {
          result.ok = false;
          std::fprintf(stderr, "cluster_bench: %s: node %zu has root %u, the first variant %u\n",
                       result.name.c_str(), n, roots[n], reference_[n]);
          break;
        }
      }
    }
  }

  const Exec& exec_;
  int64_t length_;
  Checkerboard<D> lattice_;
  ClusterLattice<D> g_;
  int64_t volume_;
  IsingParams params_;
  typename Exec::template Buffer<int8_t> spins_, saved_;
  typename Exec::template Buffer<uint8_t> bonds_;
  typename Exec::template Buffer<uint16_t> parts_;  ///< the fused variants' parts
  typename Exec::template Buffer<uint32_t> parent_;
  typename Exec::template Buffer<ClusterPick<IsingModel>> picks_;
  std::vector<uint8_t> host_bonds_;
  std::vector<uint8_t> reference_bonds_;  ///< the first variant's bonds on the first repeat
  std::vector<uint32_t> reference_;       ///< the first variant's roots on the first repeat
  std::vector<int8_t> reference_spins_;   ///< the first variant's spins after its first move
};

/// The fused variants' whole step in sites per ns, issued back to back; 0 for the others.
double back_to_back_rate(const Result& r) {
  return r.seconds.back_to_back > 0 ? static_cast<double>(r.sites) / (r.seconds.back_to_back * 1e9)
                                    : 0.0;
}

/// Runs every start and variant whose name matches on one lattice.
template <int D, class Exec>
void bench_lattice(const Exec& exec, int64_t length, double beta, const Options& options,
                   std::vector<Result>& results) {
  const Start starts[] = {Start::random, Start::ordered, Start::critical};
  // The engine's fused step with the unions between tiles of before session x and of its call 1.
  const Variant engine_2d{{5, 7}, 256, false, 256}, engine_3d{{3, 4, 5}, 256, false, 256};
  Variant faces_each_bond_2d = engine_2d, faces_by_axis_2d = engine_2d;
  faces_each_bond_2d.faces = FaceUnions::each_bond;
  faces_by_axis_2d.faces = FaceUnions::distinct_axis_by_axis;
  Variant faces_each_bond_3d = engine_3d, faces_by_axis_3d = engine_3d;
  faces_each_bond_3d.faces = FaceUnions::each_bond;
  faces_by_axis_3d.faces = FaceUnions::distinct_axis_by_axis;
  // The engine's tiles generically, the engine's (swept where aligned), and other shapes. Blocks
  // of T threads sweep t.sites / T rows a thread (at most kMostSweptRows): the engine's 4096-site
  // tiles 16 rows at 256 threads, 8 at 512.
  const std::vector<Variant> variants = D == 2 ? std::vector<Variant>{{},
                                                                      {{5, 7}, 256, true},
                                                                      {{6, 6}, 256},
                                                                      {{5, 7}, 512},
                                                                      {{5, 7}, 256},
                                                                      {{5, 7}, 512, false, 256},
                                                                      {{5, 7}, 256, false, 256},
                                                                      faces_each_bond_2d,
                                                                      faces_by_axis_2d}
                                               : std::vector<Variant>{{},
                                                                      {{3, 4, 5}, 256, true},
                                                                      {{3, 3, 6}, 256},
                                                                      {{3, 4, 5}, 512},
                                                                      {{3, 4, 5}, 256},
                                                                      {{3, 4, 5}, 256, false, 256},
                                                                      faces_each_bond_3d,
                                                                      faces_by_axis_3d};
  const auto wanted = [&](Start s, const Variant& v) {
    return LatticeBench<Exec, D>::name(length, s, v).find(options.filter) != std::string::npos;
  };
  bool any = false;
  for (Start s : starts) {
    for (const Variant& v : variants) any = any || wanted(s, v);
  }
  if (!any) return;
  LatticeBench<Exec, D> bench(exec, length, beta);
  for (Start s : starts) {
    bool prepared = false;
    for (const Variant& v : variants) {
      if (!wanted(s, v)) continue;
      if (!prepared) bench.prepare(s);
      prepared = true;
      results.push_back(bench.run(s, v, options.repeats));
      const Result& r = results.back();
      const double ns = 1e9 / static_cast<double>(r.sites);
      const Phases& t = r.seconds;
      std::printf(
          "%-44s %7.4f %7.4f %7.4f %7.4f %8.2f %8.2f %8.2f %6.3f %10lld %6.3f %7.2f %6lld  %s\n",
          r.name.c_str(), t.bonds * ns, t.unite * ns, t.flatten * ns, t.move * ns,
          static_cast<double>(r.sites) / ((t.bonds + t.unite + t.flatten) * 1e9),
          static_cast<double>(r.sites) / ((t.bonds + t.unite + t.flatten + t.move) * 1e9),
          back_to_back_rate(r), r.bond_density, static_cast<long long>(r.clusters), r.largest_share,
          r.mean_depth, static_cast<long long>(r.max_depth), r.ok ? "ok" : "FAIL");
      std::fflush(stdout);
    }
  }
}

void write_json(const std::string& path, const std::string& device, int repeats, double copy_gbps,
                const std::vector<Result>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  char line[2048];
  std::snprintf(line, sizeof line,
                "{\n  \"program\": \"cluster_bench\",\n  \"device\": %s,\n  \"repeats\": %d,\n"
                "  \"statistic\": \"median\",\n  \"copy_bandwidth_gb_per_s\": %.1f,\n"
                "  \"bytes_per_site\": {\"bonds\": %g, \"unite\": %g, \"flatten\": %g, "
                "\"move\": %g},\n  \"results\": [\n",
                json_string(device).c_str(), repeats, copy_gbps, kBondsBytes, kUniteBytes,
                kFlattenBytes, kMoveBytes);
  f << line;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const double ns = 1e9 / static_cast<double>(r.sites);
    const Phases& t = r.seconds;
    // A phase that another kernel does (the fused cases' flatten) takes no time of its own: 0,
    // not inf, which JSON cannot hold.
    const auto percent = [&](double bytes, double seconds) {
      return seconds > 0 ? 100.0 * bytes * static_cast<double>(r.sites) / seconds / 1e9 / copy_gbps
                         : 0.0;
    };
    std::snprintf(
        line, sizeof line,
        "    {\"case\": %s, \"d\": %d, \"L\": %lld, \"start\": %s, \"variant\": %s, "
        "\"sites\": %lld, \"ns_per_site\": {\"bonds\": %.5f, \"unite\": %.5f, \"flatten\": %.5f, "
        "\"move\": %.5f}, \"percent_of_copy\": {\"bonds\": %.1f, \"unite\": %.1f, "
        "\"flatten\": %.1f, \"move\": %.1f}, \"labelling_sites_per_ns\": %.3f, "
        "\"step_sites_per_ns\": %.3f, \"back_to_back_step_sites_per_ns\": %.3f, \"bond_density\": "
        "%.4f, \"clusters\": %lld, "
        "\"largest_cluster_share\": %.4f, \"mean_tree_depth\": %.3f, \"max_tree_depth\": %lld, "
        "\"verified\": %s}%s\n",
        json_string(r.name).c_str(), r.d, static_cast<long long>(r.length),
        json_string(r.start).c_str(), json_string(r.variant).c_str(),
        static_cast<long long>(r.sites), t.bonds * ns, t.unite * ns, t.flatten * ns, t.move * ns,
        percent(kBondsBytes, t.bonds), percent(kUniteBytes, t.unite),
        percent(kFlattenBytes, t.flatten), percent(kMoveBytes, t.move),
        static_cast<double>(r.sites) / ((t.bonds + t.unite + t.flatten) * 1e9),
        static_cast<double>(r.sites) / ((t.bonds + t.unite + t.flatten + t.move) * 1e9),
        back_to_back_rate(r), r.bond_density, static_cast<long long>(r.clusters), r.largest_share,
        r.mean_depth, static_cast<long long>(r.max_depth), r.ok ? "true" : "false",
        i + 1 < results.size() ? "," : "");
    f << line;
  }
  f << "  ]\n}\n";
  if (!f) throw std::runtime_error("error writing " + path);
}

int run(int argc, char** argv) {
  Options options;
  if (const int exit_code = parse_options(argc, argv, options); exit_code >= 0) return exit_code;
  const CudaExec exec(0);
  const cudaDeviceProp prop = current_device_properties();

  // The reference copy: cudaMemcpyAsync and the copy kernel over 1 GiB, the faster.
  double copy_gbps = 0;
  {
    DeviceBytes from(kCopyBytes), to(kCopyBytes);
    LATTICA_CUDA_CHECK(cudaMemsetAsync(from.data(), 1, kCopyBytes, exec.stream()));
    const double memcpy_ms = median_ms(
        [&](cudaStream_t s) {
          LATTICA_CUDA_CHECK(
              cudaMemcpyAsync(to.data(), from.data(), kCopyBytes, cudaMemcpyDeviceToDevice, s));
        },
        exec.stream(), options.repeats);
    const double kernel_ms =
        median_ms([&](cudaStream_t s) { copy_words(from.data(), to.data(), kCopyBytes, s); },
                  exec.stream(), options.repeats);
    copy_gbps = 2.0 * static_cast<double>(kCopyBytes) / std::min(memcpy_ms, kernel_ms) / 1e6;
  }
  std::printf("device: %s, copy bandwidth %.1f GB/s; median of %d repeats after %d warm-up\n",
              prop.name, copy_gbps, options.repeats, kWarmup);
  std::printf("%-44s %7s %7s %7s %7s %8s %8s %8s %6s %10s %6s %7s %6s  %s\n", "case (ns per site:)",
              "bonds", "unite", "flatten", "move", "label/ns", "step/ns", "b2b/ns", "p_occ",
              "clusters", "giant", "depth", "max", "check");

  const double beta2 = 0.44068679350977151, beta3 = 0.2216544;
  std::vector<Result> results;
  for (int64_t length : {1024, 4096, 8192}) bench_lattice<2>(exec, length, beta2, options, results);
  for (int64_t length : {64, 128, 256}) bench_lattice<3>(exec, length, beta3, options, results);
  if (results.empty()) throw std::runtime_error("no benchmark matches --filter " + options.filter);

  if (!options.json_path.empty()) {
    write_json(options.json_path, prop.name, options.repeats, copy_gbps, results);
    std::printf("wrote %s\n", options.json_path.c_str());
  }
  int failures = 0;
  for (const Result& r : results) failures += !r.ok;
  if (failures > 0) {
    std::fprintf(stderr, "cluster_bench: %d case(s) with wrong roots\n", failures);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lattica

int main(int argc, char** argv) {
  return lattica::bench::guarded_main("cluster_bench", lattica::run, argc, argv);
}
