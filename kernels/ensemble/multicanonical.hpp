#pragma once
// Multicanonical walkers for Ising and Potts models, written once for both backends (O(n) and
// phi^4 in binned energies: multicanonical_continuous.hpp).
//
// A multicanonical weight W(E) depends on a walker's total energy, so the sites of one walker
// cannot be updated in parallel (a checkerboard colour would change E from many threads at
// once). Instead many independent walkers run side by side, one per GPU thread (or one after
// the other in a CPU loop), each doing sequential single-site Metropolis in lexicographic site
// order with acceptance min(1, W(E') / W(E)).
//
// Energy bins: k = the number of satisfied bonds, sum_x sum_a delta(s_x, s_{x+e_a}), 0 .. dV.
// Potts: E = -k; Ising (states 0, 1 for spins +1, -1): E = dV - 2k. Ising is Potts with q = 2
// here, so both share every line of the update. Acceptance compares a Philox word with a
// threshold tabulated on the host per (bin, change of bin), so CPU and GPU chains are
// identical bit for bit.
//
// Random numbers: stream RngStream::multicanonical, replica = walker, site = the site, step =
// update_step(sweep, 0, 0); word x proposes the new state (Potts q > 2), word y decides.
// Spins of walker w at site x live at spins[x * walkers + w]: a warp's walkers read one
// coalesced line per site.

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

constexpr int kMucaMaxDims = 4;
constexpr int kMucaMaxStates = 256;

/// A periodic hypercubic lattice in lexicographic order (last index fastest).
struct MucaLattice {
  int d = 0;
  int64_t extent[kMucaMaxDims] = {};
  int64_t stride[kMucaMaxDims] = {};
  int64_t volume = 0;

  /// Bonds d V: the largest bin index.
  LATTICA_HD_INLINE int64_t bonds() const { return d * volume; }
};

/// The lattice of the given extents. Precondition: 1 <= n <= kMucaMaxDims, extents >= 2.
inline MucaLattice make_muca_lattice(const int64_t* extents, int n) {
  MucaLattice lattice;
  lattice.d = n;
  int64_t stride = 1;
  for (int a = n - 1; a >= 0; --a) {
    lattice.extent[a] = extents[a];
    lattice.stride[a] = stride;
    stride *= extents[a];
  }
  lattice.volume = stride;
  return lattice;
}

/// The total energy of bin k (k satisfied bonds of `bonds`): Ising (q = 2) dV - 2k, Potts -k.
LATTICA_HD_INLINE int64_t muca_bin_energy(int q, int64_t bonds, int64_t k) {
  return q == 2 ? bonds - 2 * k : -k;
}

/// The energy bins of a continuous multicanonical run (see the header comment).
struct MucaEnergyBins {
  double low = 0;     ///< the window's lowest total energy
  double width = 1;   ///< the width of a bin, in total energy
  int32_t count = 1;  ///< bins in the window

  /// The bin of total energy e: 0 below the window, count + 1 above it.
  LATTICA_HD_INLINE int32_t bin(double e) const {
    if (!(e >= low)) return 0;
    const double k = floor((e - low) / width);
    return k < static_cast<double>(count) ? 1 + static_cast<int32_t>(k) : count + 1;
  }
  /// How far energy e lies outside the window (0 inside).
  LATTICA_HD_INLINE double distance(double e) const {
    const double high = low + static_cast<double>(count) * width;
    return e < low ? low - e : (e >= high ? e - high : 0.0);
  }
};

/// What one launch of walker sweeps reads and writes (device or host pointers).
struct MucaWalkers {
  uint64_t seed = 0;
  int q = 2;  ///< states per site; 2 for Ising
  MucaLattice lattice;
  int64_t walkers = 0;
  uint8_t* spins = nullptr;      ///< [site * walkers + walker]
  int32_t* satisfied = nullptr;  ///< [walker]: its current bin k
  /// [k * (4d + 1) + dk + 2d]: acceptance of a move from bin k to k + dk, times 2^32
  /// (2^32: certain), from ising.hpp's metropolis_threshold.
  const uint64_t* threshold = nullptr;
};

/// Satisfied bonds at site x towards +e_a, for every a.
LATTICA_HD_INLINE int muca_forward_bonds(const MucaWalkers& m, int64_t walker, int64_t x) {
  const MucaLattice& l = m.lattice;
  const uint8_t s = m.spins[x * m.walkers + walker];
  int bonds = 0;
  for (int a = 0; a < l.d; ++a) {
    const int64_t c = (x / l.stride[a]) % l.extent[a];
    const int64_t y = c + 1 < l.extent[a] ? x + l.stride[a] : x - (l.extent[a] - 1) * l.stride[a];
    bonds += m.spins[y * m.walkers + walker] == s;
  }
  return bonds;
}

/// A walker's bin k, counted from scratch.
LATTICA_HD_INLINE int32_t muca_count_satisfied(const MucaWalkers& m, int64_t walker) {
  int64_t k = 0;
  for (int64_t x = 0; x < m.lattice.volume; ++x) k += muca_forward_bonds(m, walker, x);
  return static_cast<int32_t>(k);
}

/// The states of the 2d neighbours of site x, whose coordinates are c, into nb.
LATTICA_HD_INLINE void muca_neighbours(const MucaWalkers& m, int64_t walker, int64_t x,
                                       const int64_t* c, uint8_t* nb) {
  const MucaLattice& l = m.lattice;
  for (int a = 0; a < l.d; ++a) {
    const int64_t up = c[a] + 1 < l.extent[a] ? x + l.stride[a] : x - c[a] * l.stride[a];
    const int64_t down = c[a] > 0 ? x - l.stride[a] : x + (l.extent[a] - 1) * l.stride[a];
    nb[2 * a] = m.spins[up * m.walkers + walker];
    nb[2 * a + 1] = m.spins[down * m.walkers + walker];
  }
}

/// One sweep of one walker: every site once, in lexicographic order. Reads and updates the
/// walker's bin in m.satisfied. sweep: the chain's sweep index (< kMaxSweeps).
LATTICA_HD_INLINE void muca_walker_sweep(const MucaWalkers& m, int64_t walker, uint64_t sweep) {
  const MucaLattice& l = m.lattice;
  const int moves = 4 * l.d + 1;
  int64_t k = m.satisfied[walker];
  int64_t c[kMucaMaxDims] = {};  // the coordinates of x, advanced like an odometer
  const PhiloxKey key = philox_key(m.seed);
  const uint64_t step = update_step(sweep, 0, 0);
  for (int64_t x = 0; x < l.volume; ++x) {
    const PhiloxBlock r = philox4x32_10(
        philox_counter(RngStream::multicanonical, static_cast<uint32_t>(walker), x, step), key);
    uint8_t& site = m.spins[x * m.walkers + walker];
    const uint8_t old_state = site;
    // One of the other q - 1 states, uniformly (multiply-shift of a 32-bit word).
    uint32_t proposal = static_cast<uint32_t>((uint64_t(r.x) * uint32_t(m.q - 1)) >> 32);
    if (proposal >= old_state) ++proposal;
    uint8_t nb[2 * kMucaMaxDims];
    muca_neighbours(m, walker, x, c, nb);
    int dk = 0;  // equal neighbours of the proposal minus those of the old state
    for (int j = 0; j < 2 * l.d; ++j) dk += (nb[j] == proposal) - (nb[j] == old_state);
    if (r.y < m.threshold[k * moves + dk + 2 * l.d]) {
      site = static_cast<uint8_t>(proposal);
      k += dk;
    }
    for (int a = l.d - 1; a >= 0; --a) {  // next coordinates
      if (++c[a] < l.extent[a]) break;
      c[a] = 0;
    }
  }
  m.satisfied[walker] = static_cast<int32_t>(k);
}

/// A walker's order parameter as an integer: Ising, the magnetisation sum_x s_x (state 0 is
/// +1); Potts, the number of sites in the most common state.
LATTICA_HD_INLINE int32_t muca_order(const MucaWalkers& m, int64_t walker) {
  int32_t count[kMucaMaxStates] = {};
  for (int64_t x = 0; x < m.lattice.volume; ++x) ++count[m.spins[x * m.walkers + walker]];
  if (m.q == 2) return count[0] - count[1];
  int32_t largest = 0;
  for (int s = 0; s < m.q; ++s) largest = count[s] > largest ? count[s] : largest;
  return largest;
}

/// A walker's initial state at site x: state 0 (cold), or uniform from RngStream::initial_state
/// with replica = walker (hot).
LATTICA_HD_INLINE uint8_t muca_initial_state(uint64_t seed, int q, bool hot, int64_t walker,
                                             int64_t x) {
  if (!hot) return 0;
  const PhiloxBlock r =
      philox4x32_10(philox_counter(RngStream::initial_state, static_cast<uint32_t>(walker), x, 0),
                    philox_key(seed));
  return static_cast<uint8_t>((uint64_t(r.x) * uint32_t(q)) >> 32);
}

}  // namespace lattica
