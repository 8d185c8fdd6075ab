// The CPU cluster labelling against an independent flood fill on random bond sets: sparse,
// percolating, all bonds, no bonds, and clusters that wrap around the periodic lattice; and the
// engine's concurrent labelling (kernels/cluster/union_find.hpp) on several OpenMP threads
// against it, node by node (tests/compare/gpu_cluster_labels_test.cu runs it on the GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/models/potts.hpp"
#include "tests/support/cluster_check.hpp"
#include "tests/support/serial_labels.hpp"

namespace lattica {
namespace {

/// The neighbours of site i joined to it by an occupied bond, either direction (periodic).
std::vector<int64_t> bonded_neighbours(const std::vector<uint8_t>& bonds,
                                       const std::vector<int64_t>& dims, int64_t i) {
  const int d = static_cast<int>(dims.size());
  std::vector<int64_t> c(d);
  int64_t rest = i;
  for (int a = d - 1; a >= 0; --a) {
    c[a] = rest % dims[a];
    rest /= dims[a];
  }
  const auto index = [&](const std::vector<int64_t>& x) {
    int64_t k = 0;
    for (int a = 0; a < d; ++a) k = k * dims[a] + x[a];
    return k;
  };
  std::vector<int64_t> out;
  for (int a = 0; a < d; ++a) {
    std::vector<int64_t> up = c, down = c;
    up[a] = (c[a] + 1) % dims[a];
    down[a] = (c[a] + dims[a] - 1) % dims[a];
    if (bonds[i] >> a & 1) out.push_back(index(up));
    if (bonds[index(down)] >> a & 1) out.push_back(index(down));
  }
  return out;
}

/// Labels by breadth-first flood fill from each unlabelled site in increasing order: the first
/// site reached is its cluster's smallest.
std::vector<int64_t> flood_fill(const std::vector<uint8_t>& bonds,
                                const std::vector<int64_t>& dims) {
  std::vector<int64_t> labels(bonds.size(), -1);
  for (int64_t s = 0; s < static_cast<int64_t>(bonds.size()); ++s) {
    if (labels[s] >= 0) continue;
    std::vector<int64_t> queue{s};
    labels[s] = s;
    for (size_t k = 0; k < queue.size(); ++k) {
      for (int64_t n : bonded_neighbours(bonds, dims, queue[k])) {
        if (labels[n] < 0) {
          labels[n] = s;
          queue.push_back(n);
        }
      }
    }
  }
  return labels;
}

std::vector<uint8_t> random_bonds(int64_t volume, int d, double p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution occupied(p);
  std::vector<uint8_t> bonds(static_cast<size_t>(volume), 0);
  for (auto& b : bonds) {
    for (int a = 0; a < d; ++a) b |= static_cast<uint8_t>(occupied(rng)) << a;
  }
  return bonds;
}

TEST(ClusterLabels, MatchFloodFillOnRandomBonds) {
  const std::vector<std::vector<int64_t>> lattices = {{16},      {2, 2},       {8, 6}, {32, 32},
                                                      {6, 4, 8}, {4, 4, 4, 4}, {3, 5}};
  for (const auto& dims : lattices) {
    int64_t volume = 1;
    for (int64_t l : dims) volume *= l;
    const int d = static_cast<int>(dims.size());
    for (double p : {0.0, 0.1, 0.3, 0.5, 0.7, 1.0}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const auto bonds = random_bonds(volume, d, p, seed * 1000 + static_cast<uint64_t>(p * 10));
        SCOPED_TRACE(::testing::Message() << "d = " << d << ", V = " << volume << ", p = " << p);
        EXPECT_EQ(label_clusters(bonds, dims.data(), d), flood_fill(bonds, dims));
      }
    }
  }
}

TEST(ClusterLabels, NoBondsGiveSingletonsAllBondsOneCluster) {
  const std::vector<int64_t> dims = {4, 6};
  std::vector<uint8_t> none(24, 0), all(24, 3);
  const auto singletons = label_clusters(none, dims.data(), 2);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(singletons[i], i);
  for (int64_t label : label_clusters(all, dims.data(), 2)) EXPECT_EQ(label, 0);
}

TEST(ClusterLabels, WrappingBondJoinsTheEnds) {
  // A ring of 8 with only the bond from site 7 to site 0 (across the boundary).
  const int64_t dims[1] = {8};
  std::vector<uint8_t> bonds(8, 0);
  bonds[7] = 1;
  const auto labels = label_clusters(bonds, dims, 1);
  EXPECT_EQ(labels[7], 0);
  EXPECT_EQ(labels[0], 0);
  for (int64_t i = 1; i < 7; ++i) EXPECT_EQ(labels[i], i);
}

// UniteBonds and FlattenLabels through CpuExec, the functors the GPU runs: every node's root is
// the canonical one whatever the number of threads racing (more threads than cores too).
TEST(ClusterLabels, ConcurrentUnionFindOnCpuThreadsGivesCanonicalRoots) {
  for (const test::BondSet& b : test::standard_bond_sets(false)) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = test::expected_roots(b);
    for (int threads : {1, 2, 3, 8}) {
      ASSERT_TRUE(test::same_roots(test::concurrent_roots(CpuExec(threads), b), want))
          << threads << " threads";
    }
  }
}

// The unions race where threads work on neighbouring sites at once (Interleaved: thread t on
// sites t, t + T, ...), and path halving writes where other threads walk: a ring of all bonds
// (one cluster, long paths), the 2D and 3D percolation thresholds, wrapping lines, repeated.
TEST(ClusterLabels, ConcurrentUnionFindWithNeighboursRacing) {
  const std::vector<test::BondSet> sets = {
      test::uniform_bonds("ring", {20000}, 2, 1),
      test::random_bonds("2D threshold", {200, 150}, 2, 0.5, 0.0, 7),
      test::random_bonds("3D threshold, ghost bonds", {24, 20, 30}, 1, 0.2488, 0.001, 8),
      test::wrapping_lines("3D wrapping lines", {30, 20, 24}, 1, 0.2488, 9)};
  for (const test::BondSet& b : sets) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = test::expected_roots(b);
    for (int repeat = 0; repeat < 20; ++repeat) {
      const int threads = 2 + repeat % 3;
      ASSERT_TRUE(test::same_roots(test::concurrent_roots(CpuExec(threads), b, threads), want))
          << "repeat " << repeat << ", " << threads << " threads";
    }
  }
}

// unite_side_by_side (the GPU's unions between tiles) joins what unite joins, with the same
// canonical roots (each component's smallest node), while threads race it against unite and
// each other: random edges, a ring's long paths, and edges all to one node.
TEST(ClusterLabels, SideBySideUnionsJoinWhatUniteJoins) {
  const uint32_t nodes = 20000;
  std::mt19937_64 rng(19);
  std::vector<std::pair<std::string, std::vector<std::pair<uint32_t, uint32_t>>>> sets(3);
  sets[0].first = "random edges";
  for (uint32_t k = 0; k < nodes / 2; ++k)
    sets[0].second.emplace_back(static_cast<uint32_t>(rng() % nodes),
                                static_cast<uint32_t>(rng() % nodes));
  sets[1].first = "ring";
  for (uint32_t n = 0; n < nodes; ++n) sets[1].second.emplace_back(n, (n + 1) % nodes);
  sets[2].first = "star";
  for (uint32_t n = 0; n < nodes; n += 3) sets[2].second.emplace_back(nodes - 1, n);
  for (const auto& [name, edges] : sets) {
    SCOPED_TRACE(name);
    std::vector<uint32_t> want(nodes);
    for (uint32_t n = 0; n < nodes; ++n) want[n] = n;
    for (const auto& [a, b] : edges) unite(want.data(), a, b);
    for (uint32_t n = 0; n < nodes; ++n) want[n] = find_root(want.data(), n);
    for (int threads : {1, 4}) {
      std::vector<uint32_t> parent(nodes);
      for (uint32_t n = 0; n < nodes; ++n) parent[n] = n;
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {  // thread t takes edges t, t + threads, ...; odd ones unite
          for (size_t k = static_cast<size_t>(t); k < edges.size();
               k += static_cast<size_t>(threads)) {
            if (t % 2 == 0 || threads == 1) {
              unite_side_by_side(parent.data(), edges[k].first, edges[k].second);
            } else {
              unite(parent.data(), edges[k].first, edges[k].second);
            }
          }
        });
      }
      for (std::thread& thread : pool) thread.join();
      for (uint32_t n = 0; n < nodes; ++n) parent[n] = find_root(parent.data(), n);
      EXPECT_EQ(parent, want) << threads << " threads";
    }
  }
}

// ClusterBonds reads spins by colour (ByteSites and PackedSites::spin(r, i, colour)): the same
// spins as through storage_index, for every site and every +e_a neighbour (the other colour),
// on whole lattices of 1 to 4 dimensions and on a box with ghost layers.
template <int D>
void expect_colour_reads_match(const Checkerboard<D>& lattice, const int64_t (&ghosts)[D]) {
  const ClusterLattice<D> g = ClusterLattice<D>::make(lattice, ghosts);
  const int replicas = 2;
  const int64_t volume = lattice.volume();
  std::vector<int16_t> values(static_cast<size_t>(replicas * volume));
  std::vector<uint32_t> words(static_cast<size_t>((replicas * volume + 31) / 32), 0);
  std::mt19937_64 rng(static_cast<uint64_t>(volume));
  for (size_t k = 0; k < values.size(); ++k) {
    values[k] = static_cast<int16_t>(k);
    if (rng() & 1) words[k / 32] |= 1u << (k % 32);
  }
  const ByteSites<D, int16_t> bytes{lattice, values.data()};
  const PackedSites<D> packed{lattice, words.data()};
  int64_t checked = 0;
  for (int64_t r = 0; r < replicas; ++r) {
    for (int64_t i = 0; i < volume; ++i) {
      int64_t x[D];
      g.coordinates(i, x);
      int64_t sum = 0;
      for (int a = 0; a < D; ++a) sum += x[a];
      const int colour = static_cast<int>(sum & 1);
      ASSERT_EQ(bytes.spin(r, i, colour), bytes.spin(r, i)) << "site " << i;
      ASSERT_EQ(packed.spin(r, i, colour), packed.spin(r, i)) << "site " << i;
      for (int a = 0; a < D; ++a) {
        const int64_t j = g.up(i, x, a);
        ASSERT_EQ(bytes.spin(r, j, colour ^ 1), bytes.spin(r, j)) << "site " << i << " axis " << a;
        ASSERT_EQ(packed.spin(r, j, colour ^ 1), packed.spin(r, j))
            << "site " << i << " axis " << a;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, replicas * volume * D);
}

TEST(ClusterBonds, SpinsReadByColourAreThoseOfTheStorage) {
  const int64_t none1[1] = {0}, none2[2] = {0, 0}, none3[3] = {0, 0, 0}, none4[4] = {0, 0, 0, 0};
  const int64_t ring[1] = {128}, square[2] = {6, 64}, odd_rows[2] = {10, 12};
  const int64_t cube[3] = {4, 6, 64}, hyper[4] = {2, 4, 6, 8};
  expect_colour_reads_match<1>(Checkerboard<1>::make(ring), none1);
  expect_colour_reads_match<2>(Checkerboard<2>::make(square), none2);
  expect_colour_reads_match<2>(Checkerboard<2>::make(odd_rows), none2);
  expect_colour_reads_match<3>(Checkerboard<3>::make(cube), none3);
  expect_colour_reads_match<4>(Checkerboard<4>::make(hyper), none4);
  // A box of a 12 x 10 x 64 lattice: 6 x 10 interior rows along axis 0 with a ghost layer on
  // each side, its origin at an odd coordinate.
  const int64_t box[3] = {8, 10, 64}, global[3] = {12, 10, 64}, origin[3] = {3, 0, 0};
  const int64_t ghosts[3] = {1, 0, 0};
  expect_colour_reads_match<3>(Checkerboard<3>::make_box(box, global, origin, ghosts), ghosts);
}

// ClusterBonds with certain bonds (thresholds of probability 1, so no random word decides):
// exactly the equal neighbours bonded, and the sites of the field's sign to the ghost, on byte
// and multi-spin-coded storage, every replica. This checks the spins ClusterBonds reads.
template <int D>
void expect_certain_bonds(const int64_t (&extents)[D]) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(extents);
  const int64_t zero[D] = {};
  const ClusterLattice<D> g = ClusterLattice<D>::make(lattice, zero);
  const int replicas = 2;
  const int64_t sites = replicas * g.volume;
  IsingParams params = make_ising_params(D, 0.3, 0.1, 5);
  params.cluster_bond = kCertainBond;
  params.ghost_bond = kCertainBond;
  std::vector<int8_t> spins(static_cast<size_t>(sites));
  std::vector<uint32_t> words(static_cast<size_t>(sites / 32), 0);
  std::mt19937_64 rng(static_cast<uint64_t>(sites));
  for (int64_t k = 0; k < sites; ++k) {  // storage order, the same spins in both storages
    const bool up = rng() & 1;
    spins[static_cast<size_t>(k)] = up ? int8_t(1) : int8_t(-1);
    if (up) words[static_cast<size_t>(k / 32)] |= 1u << (k % 32);
  }
  const CpuExec exec(2);
  std::vector<ClusterPick<IsingModel>> picks(replicas);
  exec.for_each(replicas,
                PickClusters<IsingModel>{params, picks.data(), 3, static_cast<uint64_t>(g.volume)});
  // A thread a site (the general path), and the engine's: a thread per quad of a row here.
  std::vector<uint8_t> bytes_mask(static_cast<size_t>(sites)), packed_mask(bytes_mask.size()),
      paired_mask(bytes_mask.size());
  using Bytes = ByteSites<D, int8_t>;
  const ClusterBonds<D, IsingModel, Bytes> byte_bonds{
      g, params, picks.data(), Bytes{lattice, spins.data()}, bytes_mask.data(), 3};
  exec.for_each(sites, byte_bonds);
  ClusterBonds<D, IsingModel, Bytes> paired_bonds = byte_bonds;
  paired_bonds.bonds = paired_mask.data();
  for_each_cluster_site(exec, sites, paired_bonds);
  for_each_cluster_site(
      exec, sites,
      ClusterBonds<D, IsingModel, PackedSites<D>>{
          g, params, picks.data(), PackedSites<D>{lattice, words.data()}, packed_mask.data(), 3});
  const Bytes reference{lattice, spins.data()};
  for (int64_t r = 0; r < replicas; ++r) {
    for (int64_t i = 0; i < g.volume; ++i) {
      int64_t x[D];
      g.coordinates(i, x);
      uint8_t want = reference.spin(r, i) == 1 ? kGhostBond : 0;
      for (int a = 0; a < D; ++a) {
        if (reference.spin(r, g.up(i, x, a)) == reference.spin(r, i))
          want |= static_cast<uint8_t>(1u << a);
      }
      const size_t index = static_cast<size_t>(r * g.volume + i);
      ASSERT_EQ(bytes_mask[index], want) << "bytes, replica " << r << ", site " << i;
      ASSERT_EQ(paired_mask[index], want) << "bytes by quads, replica " << r << ", site " << i;
      ASSERT_EQ(packed_mask[index], want) << "packed by quads, replica " << r << ", site " << i;
    }
  }
}

// QuadBondNumbers::occupied is u < t for u = high << 16 | low, and draws the low half only where
// the high half ties t's.
TEST(QuadBondNumbers, OccupiedIsTheWholeNumberBelowTheThreshold) {
  const uint64_t thresholds[] = {1,           0xffffu,     0x10000u,    0x10001u,   0x96a7c3e1u,
                                 0x12340000u, 0x1234ffffu, 0xffff0000u, 0xffffffffu};
  for (const uint64_t t : thresholds) {
    const auto t_high = static_cast<uint32_t>(t >> 16), t_low = static_cast<uint32_t>(t & 0xffff);
    for (const uint32_t high : {t_high - 1, t_high, t_high + 1, 0u, 0xffffu}) {
      if (high > 0xffffu) continue;
      for (const uint32_t low : {0u, t_low - 1, t_low, t_low + 1, 0xffffu}) {
        if (low > 0xffffu) continue;
        int draws = 0;
        const bool bond = QuadBondNumbers::occupied(static_cast<uint32_t>(t), high, [&] {
          ++draws;
          return low;
        });
        const uint64_t u = uint64_t{high} << 16 | low;
        EXPECT_EQ(bond, u < t) << std::hex << "t " << t << " u " << u;
        EXPECT_EQ(draws, high == t_high ? 1 : 0) << std::hex << "t " << t << " u " << u;
      }
    }
  }
}

/// A site's bond mask as QuadBondNumbers's comment lays the numbers out, written out again from
/// Philox itself: the oracle for ClusterBonds. Counts the bonds whose low half was needed.
uint8_t mask_from_layout(const uint64_t* threshold, int d, uint64_t seed, uint32_t r, uint64_t site,
                         uint64_t step, int64_t& refined) {
  const auto block = [&](uint64_t key_site, uint64_t key_step) {
    const PhiloxBlock b = philox4x32_10_host(
        philox_counter(RngStream::cluster_bond, r, key_site, key_step), philox_key(seed));
    return std::vector<uint32_t>{b.x, b.y, b.z, b.w};
  };
  const uint64_t quad = site / 4;
  const int k = static_cast<int>(site % 4);
  uint8_t mask = 0;
  for (int a = 0; a <= d; ++a) {
    const uint8_t bit = a == d ? kGhostBond : static_cast<uint8_t>(1u << a);
    const uint64_t t = threshold[a];
    if (t == 0) continue;
    if (t >= kCertainBond) {
      mask |= bit;
      continue;
    }
    const uint32_t word = block(4 * quad + static_cast<uint64_t>(a / 2), step)[2 * (a % 2) + k / 2];
    const uint32_t high = k % 2 ? word >> 16 : word & 0xffff;
    uint32_t low = 0;  // decides nothing unless high ties t's high half
    if (high == t >> 16) {
      const uint32_t own = block(site, step + 1)[a / 2];
      low = a % 2 ? own >> 16 : own & 0xffff;
      ++refined;
    }
    if ((uint64_t{high} << 16 | low) < t) mask |= bit;
  }
  return mask;
}

// ClusterBonds with uncertain bonds, a thread a site and a thread a quad, against the layout's
// oracle: Ising with a field h, random spins, several replicas, 1 to 4 dimensions (blocks 0, 1
// and, in 4D, 2: the ghost's). Without a field the quads take their straight path
// (ClusterBonds::equal_spin_masks) but where a high half ties. The 2D cases are large enough
// that some high halves tie the threshold's, so the low halves' draws are checked too.
template <int D>
int64_t expect_bonds_from_layout(const int64_t (&extents)[D], int replicas, double h) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(extents);
  const int64_t zero[D] = {};
  const ClusterLattice<D> g = ClusterLattice<D>::make(lattice, zero);
  const int64_t sites = replicas * g.volume;
  const uint64_t step = cluster_step(17, 1, 2);
  const IsingParams params = make_ising_params(D, 0.4, h, 11);
  std::vector<int8_t> spins(static_cast<size_t>(sites));
  std::mt19937_64 rng(static_cast<uint64_t>(sites));
  for (auto& s : spins) s = rng() % 3 ? int8_t(1) : int8_t(-1);
  const CpuExec exec(2);
  std::vector<ClusterPick<IsingModel>> picks(static_cast<size_t>(replicas));
  exec.for_each(replicas, PickClusters<IsingModel>{params, picks.data(), step,
                                                   static_cast<uint64_t>(g.volume)});
  using Bytes = ByteSites<D, int8_t>;
  std::vector<uint8_t> by_site(static_cast<size_t>(sites)), by_quad(by_site.size());
  ClusterBonds<D, IsingModel, Bytes> bonds{
      g, params, picks.data(), Bytes{lattice, spins.data()}, by_site.data(), step};
  exec.for_each(sites, bonds);
  bonds.bonds = by_quad.data();
  for_each_cluster_site(exec, sites, bonds);
  const Bytes reference{lattice, spins.data()};
  int64_t refined = 0, occupied = 0;
  for (int64_t r = 0; r < replicas; ++r) {
    for (int64_t i = 0; i < g.volume; ++i) {
      int64_t x[D];
      g.coordinates(i, x);
      const int8_t s = reference.spin(r, i);
      uint64_t threshold[D + 1];
      for (int a = 0; a < D; ++a)
        threshold[a] = IsingModel::cluster_bond(params, {}, s, reference.spin(r, g.up(i, x, a)));
      threshold[D] = IsingModel::ghost_bond(params, {}, s);
      const uint8_t want = mask_from_layout(threshold, D, params.seed, static_cast<uint32_t>(r),
                                            static_cast<uint64_t>(i), step, refined);
      const size_t index = static_cast<size_t>(r * g.volume + i);
      if (by_site[index] != want || by_quad[index] != want) {
        ADD_FAILURE() << D << "D, replica " << r << ", site " << i << ": mask " << int{want}
                      << ", a thread a site " << int{by_site[index]} << ", a thread a quad "
                      << int{by_quad[index]};
        return refined;
      }
      occupied += want != 0;
    }
  }
  EXPECT_GT(occupied, sites / 4) << D << "D";
  EXPECT_LT(occupied, sites) << D << "D";
  return refined;
}

TEST(ClusterBonds, QuadsDrawTheirBondsAsTheLayoutSays) {
  const int64_t ring[1] = {1024}, square[2] = {256, 512}, cube[3] = {6, 8, 12};
  const int64_t hyper[4] = {4, 2, 6, 8};
  for (const double h : {0.15, 0.0}) {
    SCOPED_TRACE(h);
    expect_bonds_from_layout<1>(ring, 3, h);
    // 6 x 10^5 to 9 x 10^5 uncertain bonds: some 9 to 14 high halves tie (2^-16 each).
    EXPECT_GT(expect_bonds_from_layout<2>(square, 4, h), 0) << "no low half was drawn";
    expect_bonds_from_layout<3>(cube, 2, h);
    expect_bonds_from_layout<4>(hyper, 2, h);
  }
}

TEST(ClusterBonds, CertainBondsJoinExactlyTheEqualNeighbours) {
  const int64_t ring[1] = {128}, square[2] = {6, 64}, cube[3] = {4, 6, 64};
  const int64_t hyper[4] = {2, 4, 2, 64};
  expect_certain_bonds<1>(ring);
  expect_certain_bonds<2>(square);
  expect_certain_bonds<3>(cube);
  expect_certain_bonds<4>(hyper);
}

// Swendsen-Wang's coins (Model::kClusterMoveBits == 1): the cluster labelled L reads bit
// (L - 1) % 128 of the Philox block keyed by (seed, cluster_move, replica, (L - 1) / 128, step),
// written out here from Philox itself, as the word's bit 31; Potts keeps the first word of a
// block of its own per label; the ghost's clusters never move. Over 2^18 labels the coins are
// fair, and consecutive labels' coins (bits of one word) agree half the time, each to 5 sigma
// of 1e-3 (what one Philox word per label would also give).
TEST(ClusterDecision, CoinsAreTheLabelsBitsOfSharedBlocks) {
  const uint64_t seed = 4242, step = update_step(17, 2, 4);
  const ClusterDecision<IsingModel> ising{make_ising_params(2, 0.44, 0.0, seed), nullptr, step};
  const ClusterDecision<PottsModel> potts{make_potts_params(2, 3, 1.0, 0.0, seed), nullptr, step};
  const auto block = [&](uint32_t r, uint64_t site) {
    const PhiloxBlock b = philox4x32_10_host(philox_counter(RngStream::cluster_move, r, site, step),
                                             philox_key(seed));
    return std::vector<uint32_t>{b.x, b.y, b.z, b.w};
  };
  uint32_t word = 1;
  EXPECT_FALSE(ising.moves(0, kGhostLabel, word));
  const uint64_t labels = uint64_t{1} << 18;
  for (const uint32_t r : {0u, 3u}) {
    int64_t heads = 0, agree = 0;
    uint32_t last = 0;
    for (uint64_t label = 1; label <= labels; ++label) {
      ASSERT_TRUE(ising.moves(r, label, word));
      const uint64_t site = label - 1;
      const uint32_t bit = static_cast<uint32_t>(site % 128);
      const uint32_t want = (block(r, site / 128)[bit / 32] >> (bit % 32) & 1u) << 31;
      ASSERT_EQ(word, want) << "replica " << r << " label " << label;
      heads += word >> 31;
      if (label > 1) agree += (word >> 31) == last;
      last = word >> 31;
      if (label % 4096 == 1) {  // Potts: a block a label
        ASSERT_TRUE(potts.moves(r, label, word));
        EXPECT_EQ(word, block(r, site)[0]) << "Potts, replica " << r << " label " << label;
      }
    }
    const double n = static_cast<double>(labels), sigma = 0.5 / std::sqrt(n);
    EXPECT_NEAR(static_cast<double>(heads) / n, 0.5, 5 * sigma) << "replica " << r;
    EXPECT_NEAR(static_cast<double>(agree) / (n - 1), 0.5, 5 * sigma) << "replica " << r;
  }
}

// The models that say their Swendsen-Wang move reads one bit read only bit 31 of the word.
template <class Model>
void expect_move_reads_bit_31(const typename Model::Params& params,
                              const typename Model::Embedding& e,
                              const typename Model::Spin& spin) {
  static_assert(Model::kClusterMoveBits == 1, "a coin");
  std::mt19937 rng(7);
  int moved_count = 0;
  for (int k = 0; k < 1000; ++k) {
    const uint32_t word = static_cast<uint32_t>(rng());
    const typename Model::Spin moved = Model::cluster_move(params, e, spin, word, false);
    const typename Model::Spin by_bit =
        Model::cluster_move(params, e, spin, word & 0x80000000u, false);
    ASSERT_EQ(std::memcmp(&moved, &by_bit, sizeof moved), 0) << std::hex << word;
    moved_count += std::memcmp(&moved, &spin, sizeof moved) != 0;
  }
  EXPECT_GT(moved_count, 400);  // about half
  EXPECT_LT(moved_count, 600);
}

TEST(ClusterDecision, CoinModelsReadOnlyBit31) {
  expect_move_reads_bit_31<IsingModel>(make_ising_params(2, 0.44, 0.0, 1), {}, int8_t{1});
  const Phi4Params phi4{1, 0.18, 1.1, 0.0, 1.0, 1, 3};
  expect_move_reads_bit_31<Phi4Model<float>>(phi4, {}, 0.7f);
  const OnParams on{1, 0.7, 0.0, 1.0, 1, 3};
  expect_move_reads_bit_31<OnModel<double, 3>>(on, {{0.6, 0.0, 0.8}}, {{0.3, -0.5, 0.81}});
  EXPECT_EQ(PottsModel::kClusterMoveBits, 32);
}

}  // namespace
}  // namespace lattica
