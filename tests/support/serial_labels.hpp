#pragma once
// Connected components of a bond graph on a periodic D-dimensional lattice, serially: the
// independent reference that the engine's concurrent labelling (kernels/cluster/union_find.hpp,
// on both backends) is tested against.
//
// Sites are named by their lexicographic index (row-major, last axis fastest). bonds[i] holds
// bit a when the bond between site i and its +e_a neighbour (periodic) is occupied. A cluster's
// canonical label is the smallest site index in it, so labels do not depend on the order in
// which bonds are merged, the backend or the thread count.

#include <cstdint>
#include <vector>

namespace lattica {

/// Union-find over sites with path halving; merging keeps the smaller index as the root, so
/// every root is its cluster's smallest site.
class SiteUnionFind {
 public:
  explicit SiteUnionFind(int64_t sites) : parent_(static_cast<size_t>(sites)) {
    for (int64_t i = 0; i < sites; ++i) parent_[static_cast<size_t>(i)] = i;
  }
  int64_t find(int64_t i) {
    while (parent_[static_cast<size_t>(i)] != i) {
      int64_t& p = parent_[static_cast<size_t>(i)];
      p = parent_[static_cast<size_t>(p)];  // halve the path
      i = p;
    }
    return i;
  }
  void unite(int64_t a, int64_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) {
      parent_[static_cast<size_t>(b)] = a;
    } else {
      parent_[static_cast<size_t>(a)] = b;
    }
  }

 private:
  std::vector<int64_t> parent_;
};

/// The canonical label of every site (the smallest site of its cluster) of the bond graph
/// `bonds` on the periodic lattice of extents dims[0..d-1]. Preconditions: 1 <= d <= 4, every
/// extent >= 1, bonds holds one mask per site.
inline std::vector<int64_t> label_clusters(const std::vector<uint8_t>& bonds, const int64_t* dims,
                                           int d) {
  int64_t volume = 1;
  for (int a = 0; a < d; ++a) volume *= dims[a];
  SiteUnionFind sets(volume);
  int64_t coordinate[4] = {};
  for (int64_t i = 0; i < volume; ++i) {
    int64_t stride = 1;
    for (int a = d - 1; a >= 0; --a) {
      if (bonds[static_cast<size_t>(i)] >> a & 1) {
        const int64_t step = coordinate[a] + 1 == dims[a] ? stride * (1 - dims[a]) : stride;
        sets.unite(i, i + step);
      }
      stride *= dims[a];
    }
    for (int a = d - 1; a >= 0; --a) {  // the next site's coordinates
      if (++coordinate[a] < dims[a]) break;
      coordinate[a] = 0;
    }
  }
  std::vector<int64_t> labels(static_cast<size_t>(volume));
  for (int64_t i = 0; i < volume; ++i) labels[static_cast<size_t>(i)] = sets.find(i);
  return labels;
}

}  // namespace lattica
