// The CPU cluster labelling against an independent flood fill on random bond sets: sparse,
// percolating, all bonds, no bonds, and clusters that wrap around the periodic lattice.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cluster/labels_cpu.hpp"

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

}  // namespace
}  // namespace lattica
