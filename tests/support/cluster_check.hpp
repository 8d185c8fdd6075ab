#pragma once
// Bond sets and their reference labels for the concurrent cluster labelling
// (kernels/cluster/union_find.hpp, cluster_moves.hpp): the labelling functors run through a
// backend's exec (CpuExec over OpenMP threads, CudaExec) and must give every node exactly the
// root the serial labelling (tests/support/serial_labels.hpp) implies: 1 + the smallest site of
// its cluster in the site array (replicas one after another), or the ghost, node 0, for a
// cluster with a bond to the ghost.
//
// Include the exec's header before this one.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/union_find.hpp"
#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "tests/support/serial_labels.hpp"

namespace lattica::test {

/// A bond graph over `replicas` copies of a periodic lattice: per site of the site array
/// (replica r's lexicographic site i at r * V + i), bit a for the bond to its +e_a neighbour
/// and kGhostBond for the bond to the ghost.
struct BondSet {
  std::string name;
  std::vector<int64_t> dims;
  int replicas = 1;
  std::vector<uint8_t> bonds;

  int64_t volume() const {
    int64_t v = 1;
    for (int64_t l : dims) v *= l;
    return v;
  }
  int64_t sites() const { return replicas * volume(); }
};

/// Every bond along every axis occupied with probability p, and every ghost bond with
/// probability ghost_p, independently.
inline BondSet random_bonds(const std::string& name, const std::vector<int64_t>& dims, int replicas,
                            double p, double ghost_p, uint64_t seed) {
  BondSet b{name, dims, replicas, {}};
  b.bonds.assign(static_cast<size_t>(b.sites()), 0);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int d = static_cast<int>(dims.size());
  for (uint8_t& mask : b.bonds) {
    for (int a = 0; a < d; ++a) {
      if (u(rng) < p) mask |= static_cast<uint8_t>(1u << a);
    }
    if (ghost_p > 0 && u(rng) < ghost_p) mask |= kGhostBond;
  }
  return b;
}

/// Every bond of every axis (mask), nothing else.
inline BondSet uniform_bonds(const std::string& name, const std::vector<int64_t>& dims,
                             int replicas, uint8_t mask) {
  BondSet b{name, dims, replicas, {}};
  b.bonds.assign(static_cast<size_t>(b.sites()), mask);
  return b;
}

/// In replica r, the lines along every axis through the site whose coordinates are all
/// (r + 1) mod L, each bonded all round except between coordinates 0 and 1 of its axis: every
/// line is a path that reaches its smallest site only across the periodic boundary, and the
/// lines meet in one cluster. With `extra` > 0, also random bonds of that probability elsewhere.
inline BondSet wrapping_lines(const std::string& name, const std::vector<int64_t>& dims,
                              int replicas, double extra, uint64_t seed) {
  BondSet b = extra > 0 ? random_bonds(name, dims, replicas, extra, 0.0, seed)
                        : uniform_bonds(name, dims, replicas, 0);
  const int d = static_cast<int>(dims.size());
  const int64_t volume = b.volume();
  for (int r = 0; r < replicas; ++r) {
    for (int a = 0; a < d; ++a) {
      for (int64_t t = 0; t < dims[a]; ++t) {
        int64_t i = 0;
        for (int c = 0; c < d; ++c) i = i * dims[c] + (c == a ? t : (r + 1) % dims[c]);
        uint8_t& mask = b.bonds[static_cast<size_t>(r * volume + i)];
        if (t == 0) {
          mask &= static_cast<uint8_t>(~(1u << a));
        } else {
          mask |= static_cast<uint8_t>(1u << a);
        }
      }
    }
  }
  return b;
}

/// Adds a ghost bond at `count` sites chosen at random (repeats allowed).
inline BondSet with_ghost_bonds(BondSet b, int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> site(0, b.sites() - 1);
  for (int64_t k = 0; k < count; ++k) b.bonds[static_cast<size_t>(site(rng))] |= kGhostBond;
  b.name += " + ghost bonds";
  return b;
}

/// The root every node must have after the labelling: [0] = 0, the ghost; [1 + r V + i] = 0
/// when site i's cluster in replica r has a ghost bond, else 1 + r V + its smallest site.
inline std::vector<uint32_t> expected_roots(const BondSet& b) {
  const int64_t volume = b.volume();
  const int d = static_cast<int>(b.dims.size());
  std::vector<uint32_t> roots(static_cast<size_t>(b.sites() + 1), 0);
  for (int r = 0; r < b.replicas; ++r) {
    const size_t offset = static_cast<size_t>(r * volume);
    std::vector<uint8_t> own(b.bonds.begin() + static_cast<std::ptrdiff_t>(offset),
                             b.bonds.begin() + static_cast<std::ptrdiff_t>(offset + volume));
    for (uint8_t& mask : own) mask &= static_cast<uint8_t>(~kGhostBond);
    const std::vector<int64_t> labels = label_clusters(own, b.dims.data(), d);
    std::vector<char> ghosted(static_cast<size_t>(volume), 0);
    for (int64_t i = 0; i < volume; ++i) {
      if (b.bonds[offset + static_cast<size_t>(i)] & kGhostBond)
        ghosted[static_cast<size_t>(labels[static_cast<size_t>(i)])] = 1;
    }
    for (int64_t i = 0; i < volume; ++i) {
      const int64_t label = labels[static_cast<size_t>(i)];
      roots[1 + offset + static_cast<size_t>(i)] =
          ghosted[static_cast<size_t>(label)]
              ? kGhostNode
              : static_cast<uint32_t>(1 + static_cast<int64_t>(offset) + label);
    }
  }
  return roots;
}

/// Calls f on the sites in another order: launched over lanes * per_lane indices, index k
/// takes site (k % per_lane) * lanes + k / per_lane (those below n). CpuExec gives each of
/// `lanes` threads a run of per_lane indices, so at any moment the threads work on neighbouring
/// sites (thread t on sites t, t + lanes, ...), racing far more than in site order.
template <class F>
struct Interleaved {
  F f;
  int64_t n;
  int64_t lanes;
  int64_t per_lane;
  LATTICA_HD_INLINE void operator()(int64_t k) const {
    const int64_t i = (k % per_lane) * lanes + k / per_lane;
    if (i < n) f(i);
  }
};

/// The whole periodic lattice of these extents (any extents >= 1: the labelling reads only the
/// lexicographic geometry, not the checkerboard storage, which would want them even).
template <int D>
ClusterLattice<D> whole_lattice(const std::vector<int64_t>& dims) {
  int64_t extents[D];
  const int64_t ghosts[D] = {};
  for (int a = 0; a < D; ++a) extents[a] = dims[static_cast<size_t>(a)];
  return ClusterLattice<D>::make(Checkerboard<D>::make(extents), ghosts);
}

/// Every node's root (its parent's parent) after `label`, called as label(g, bonds, parent, sites)
/// with g the whole lattice of b's extents (a ClusterLattice<D>) and b's bonds on exec's memory.
/// The parents start as garbage (but the ghost's, which the cluster pass zeroes once), so a node
/// the labelling misses shows.
template <int D, class Exec, class Label>
std::vector<uint32_t> roots_after_in(const Exec& exec, const BondSet& b, const Label& label) {
  const ClusterLattice<D> g = whole_lattice<D>(b.dims);
  const int64_t sites = b.sites();
  auto bonds = exec.template allocate<uint8_t>(sites);
  auto parent = exec.template allocate<uint32_t>(sites + 1);
  exec.copy_to_device(b.bonds.data(), bonds);
  std::vector<uint32_t> roots(static_cast<size_t>(sites + 1), 0xDEADBEEFu);
  roots[0] = kGhostNode;
  exec.copy_to_device(roots.data(), parent);
  label(g, bonds.data(), parent.data(), sites);
  exec.copy_to_host(parent, roots.data());
  // label_box leaves each node's root at its parent's parent (labelled_root); a parent out of
  // range stays as it is, for same_roots to report.
  std::vector<uint32_t> resolved(roots.size());
  for (size_t n = 0; n < roots.size(); ++n)
    resolved[n] = roots[n] < roots.size() ? roots[roots[n]] : roots[n];
  return resolved;
}

template <class Exec, class Label>
std::vector<uint32_t> roots_after(const Exec& exec, const BondSet& b, const Label& label) {
  switch (b.dims.size()) {
    case 1:
      return roots_after_in<1>(exec, b, label);
    case 2:
      return roots_after_in<2>(exec, b, label);
    case 3:
      return roots_after_in<3>(exec, b, label);
    case 4:
      return roots_after_in<4>(exec, b, label);
    default:
      throw std::invalid_argument("1 to 4 dimensions");
  }
}

/// The generic labelling of g's sites (label_box in cluster_moves.hpp): the initial parents,
/// UniteBonds over the sites (in site order, or Interleaved over `lanes` lanes), FlattenLabels
/// over the nodes.
template <int D, class Exec>
void label_generically(const Exec& exec, const ClusterLattice<D>& g, const uint8_t* bonds,
                       uint32_t* parent, int64_t sites, int lanes) {
  exec.for_each(sites, InitialParents{bonds, parent});
  const UniteBonds<D> unite{g, bonds, parent};
  if (lanes > 0) {
    const int64_t per_lane = (sites + lanes - 1) / lanes;
    exec.for_each(lanes * per_lane, Interleaved<UniteBonds<D>>{unite, sites, lanes, per_lane});
  } else {
    exec.for_each(sites, unite);
  }
  exec.for_each(sites + 1, FlattenLabels{parent});
}

/// Every node's parent after the generic labelling of b through exec.
template <class Exec>
std::vector<uint32_t> concurrent_roots(const Exec& exec, const BondSet& b, int lanes = 0) {
  return roots_after(exec, b, [&](const auto& g, uint8_t* bonds, uint32_t* parent, int64_t sites) {
    label_generically(exec, g, bonds, parent, sites, lanes);
  });
}

/// Whether two root arrays agree; else how many nodes differ, and the first few.
inline ::testing::AssertionResult same_roots(const std::vector<uint32_t>& got,
                                             const std::vector<uint32_t>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << got.size() << " nodes, expected " << want.size();
  }
  int64_t differing = 0;
  std::string first;
  for (size_t n = 0; n < got.size(); ++n) {
    if (got[n] == want[n]) continue;
    if (++differing <= 5) {
      first += " node " + std::to_string(n) + ": root " + std::to_string(got[n]) + ", expected " +
               std::to_string(want[n]) + ";";
    }
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << differing << " of " << got.size() << " nodes with the wrong root:" << first;
}

/// The bond sets both backends' tests label, at `scale` (1: the CPU unit test's sizes, 2 and
/// more: larger lattices for many GPU threads). Percolating (p = 0.9), near the bond
/// percolation threshold (1/2 in 2D, 0.2488 in 3D, 0.1601 in 4D), sparse (p = 0.05), all
/// bonds, none, lines wrapping round the periodic lattice, ghost bonds, several replicas, and
/// extents of 1, odd and not powers of two.
inline std::vector<BondSet> standard_bond_sets(bool large) {
  struct Lattice {
    std::vector<int64_t> dims;
    int replicas;
    double threshold;
  };
  std::vector<Lattice> lattices = {{{1}, 1, 0.5},
                                   {{7}, 2, 0.5},
                                   {{1000}, 3, 0.9},
                                   {{1, 7}, 1, 0.5},
                                   {{5, 3}, 2, 0.5},
                                   {{2, 2}, 1, 0.5},
                                   {{130, 66}, 3, 0.5},
                                   {{63, 64}, 1, 0.5},
                                   {{6, 4, 8}, 2, 0.2488},
                                   {{17, 9, 33}, 2, 0.2488},
                                   {{3, 1, 2}, 1, 0.2488},
                                   {{4, 4, 4, 4}, 2, 0.1601},
                                   {{5, 6, 3, 7}, 1, 0.1601}};
  if (large) {
    lattices.push_back({{1 << 20}, 1, 0.999});
    lattices.push_back({{1024, 1024}, 1, 0.5});
    lattices.push_back({{1000, 999}, 1, 0.5});
    lattices.push_back({{512, 512}, 4, 0.5});
    lattices.push_back({{128, 128, 128}, 1, 0.2488});
    lattices.push_back({{100, 60, 90}, 2, 0.2488});
    lattices.push_back({{32, 32, 32, 32}, 1, 0.1601});
  } else {
    lattices.push_back({{4096}, 1, 0.99});
    lattices.push_back({{128, 96}, 2, 0.5});
    lattices.push_back({{24, 20, 16}, 2, 0.2488});
    lattices.push_back({{8, 6, 10, 4}, 2, 0.1601});
  }
  std::vector<BondSet> sets;
  uint64_t seed = 1;
  for (const Lattice& l : lattices) {
    std::string shape;
    for (int64_t e : l.dims) shape += (shape.empty() ? "" : "x") + std::to_string(e);
    shape += ", " + std::to_string(l.replicas) + " replica(s)";
    const int d = static_cast<int>(l.dims.size());
    const uint8_t all = static_cast<uint8_t>((1u << d) - 1);
    for (double p : {0.05, l.threshold, 0.9}) {
      sets.push_back(
          random_bonds(shape + ", p = " + std::to_string(p), l.dims, l.replicas, p, 0.0, seed++));
    }
    sets.push_back(random_bonds(shape + ", p = threshold, ghost bonds 0.001", l.dims, l.replicas,
                                l.threshold, 0.001, seed++));
    sets.push_back(random_bonds(shape + ", p = 0.05, ghost bonds 0.05", l.dims, l.replicas, 0.05,
                                0.05, seed++));
    sets.push_back(uniform_bonds(shape + ", all bonds", l.dims, l.replicas, all));
    sets.push_back(
        with_ghost_bonds(uniform_bonds(shape + ", all bonds", l.dims, l.replicas, all), 1, seed++));
    sets.push_back(uniform_bonds(shape + ", no bonds", l.dims, l.replicas, 0));
    sets.push_back(
        with_ghost_bonds(uniform_bonds(shape + ", no bonds", l.dims, l.replicas, 0), 10, seed++));
    sets.push_back(wrapping_lines(shape + ", wrapping lines", l.dims, l.replicas, 0.0, seed++));
    sets.push_back(wrapping_lines(shape + ", wrapping lines in sparse bonds", l.dims, l.replicas,
                                  0.05, seed++));
  }
  return sets;
}

}  // namespace lattica::test
