#pragma once
// Independent oracle: the exact partition function of the 2D Ising model on a finite periodic
// lattice (Kaufman 1949; in the form of Ferdinand and Fisher 1969), with its first two
// derivatives in closed form, so the energy and specific heat of any L x L (or m x n) lattice at
// any coupling are known to rounding. Plain serial double-precision code, no code shared with
// the engines.
//
// For m rows of n sites, J = 1, h = 0 and K = beta (every site bonded to its +x and +y
// neighbours, 2 m n bonds):
//   Z = 1/2 (2 sinh 2K)^(mn/2) (Z1 + Z2 + Z3 + Z4),
//   Z1 = prod_{r<n} 2 cosh(m g_{2r+1} / 2),  Z2 = prod_{r<n} 2 sinh(m g_{2r+1} / 2),
//   Z3 = prod_{r<n} 2 cosh(m g_{2r} / 2),    Z4 = prod_{r<n} 2 sinh(m g_{2r} / 2),
// with cosh g_l = cosh 2K coth 2K - cos(pi l / n), g_l > 0 for l != 0, and g_0 = 2K + ln tanh K,
// which changes sign at the critical coupling (Z4 < 0 above the critical temperature).

#include <cstdint>

namespace lattica::test {

struct KaufmanIsing {
  double log_z;          ///< ln Z
  double energy;         ///< <E> / V = -(1/V) d ln Z / dK
  double specific_heat;  ///< K^2 / V d^2 ln Z / dK^2 = K^2 V (<e^2> - <e>^2), e = E / V
};

/// The exact ln Z, energy and specific heat per site of the periodic rows x columns lattice
/// (both even, at least 2) at coupling beta > 0. An extent of 2 counts the two bonds between
/// the same pair, as the engines do.
KaufmanIsing kaufman_ising(int64_t rows, int64_t columns, double beta);

/// The critical coupling of the square lattice, ln(1 + sqrt 2) / 2.
double ising_critical_beta();

}  // namespace lattica::test
