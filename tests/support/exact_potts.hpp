#pragma once
// Independent oracle: exact q-state Potts averages on tiny periodic lattices by summing over
// all q^V states with plain serial double-precision loops.

#include <cstdint>
#include <map>
#include <vector>

namespace lattica::test {

struct ExactPotts {
  double energy;                 ///< <E>/V, E = -sum_<ij> delta(s_i, s_j) - h sum_i delta(s_i, 0)
  double magnetization_squared;  ///< <|(1/V) sum_i exp(2 pi i s_i / q)|^2>
  double magnetization_re;       ///< <Re (1/V) sum_i exp(2 pi i s_i / q)>
  std::map<int, double> bond_distribution;  ///< P(sum_<ij> delta(s_i, s_j) = b)
};

/// Exact averages for lattice `dims` with q states (q^V <= 2e7).
ExactPotts exact_potts(const std::vector<int64_t>& dims, int q, double beta, double h);

}  // namespace lattica::test
