#pragma once
// Independent oracle: exact Ising averages on tiny periodic lattices by summing over all 2^V
// states with plain serial double-precision loops (no code shared with the engines).

#include <cstdint>
#include <map>
#include <vector>

namespace lattica::test {

struct ExactIsing {
  double energy;          ///< <E>/V, E = -sum_<ij> s_i s_j - h sum s_i
  double energy_squared;  ///< <(E/V)^2>
  double magnetization;   ///< <M>/V
  double abs_magnetization;
  double magnetization_squared;  ///< <(M/V)^2>
  /// Probability of each value of the bond sum B = sum_<ij> s_i s_j (the energy at h = 0 is -B).
  std::map<int, double> bond_distribution;
};

/// forward[i][mu]: the lexicographic index of site i + e_mu on the periodic lattice `dims`
/// (plain coordinate arithmetic, independent of the engines' checkerboard geometry).
std::vector<std::vector<int>> periodic_forward_neighbours(const std::vector<int64_t>& dims);

/// Exact averages for lattice `dims` (volume <= 24) at (beta, h). Bonds are counted as
/// sum_x sum_mu s_x s_{x+mu}, so an extent of 2 gives two bonds between the same pair.
ExactIsing exact_ising(const std::vector<int64_t>& dims, double beta, double h);

}  // namespace lattica::test
