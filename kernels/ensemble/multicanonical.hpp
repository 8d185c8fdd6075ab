#pragma once
// Multicanonical walkers for Ising and Potts models, written once for both backends (O(n) and
// phi^4 in binned energies: multicanonical_continuous.hpp).
//
// A multicanonical weight W(E) depends on a walker's total energy, so one walker's moves are a
// sequence: each is accepted with min(1, W(E') / W(E)) at the energy the earlier ones left.
// Many independent walkers run side by side, each doing sequential single-site Metropolis in
// checkerboard order: the sites of colour 0 (even coordinate sum), then those of colour 1,
// each colour in lexicographic order. On the GPU a warp takes one walker: when every extent is
// even no two sites of a colour are neighbours, so its 32 lanes draw the proposals of 32
// consecutive sites of a colour and count their changes of bin at once, and then every lane
// walks through the 32 decisions in order with the walker's running bin (a lane's proposal
// does not depend on its 31 companions' outcomes): each lane tests its move against the bin's
// thresholds, held across the lanes, and the lanes after the first accepted move that changes
// the bin test again against the new bin's. A lattice with an odd extent is swept by
// one lane. The CPU loops over walkers, each site after the other: the same chain.
//
// Energy bins: k = the number of satisfied bonds, sum_x sum_a delta(s_x, s_{x+e_a}), 0 .. dV.
// Potts: E = -k; Ising (states 0, 1 for spins +1, -1): E = dV - 2k. Ising is Potts with q = 2
// here, so both share every line of the update. Acceptance compares a Philox word with a
// threshold tabulated on the host per (bin, change of bin), so CPU and GPU chains are
// identical bit for bit.
//
// Random numbers: stream RngStream::multicanonical, replica = walker, site = the site, step =
// update_step(sweep, 0, 0); word x proposes the new state (Potts q > 2), word y decides.
// Spins of walker w at site x live at spins[w * V + x]: a warp's lanes read consecutive sites.

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
  /// Whether every extent is even: then no two sites of one colour are neighbours.
  LATTICA_HD_INLINE bool even() const {
    for (int a = 0; a < d; ++a) {
      if (extent[a] % 2) return false;
    }
    return true;
  }
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
  uint8_t* spins = nullptr;      ///< [walker * V + site]
  int32_t* satisfied = nullptr;  ///< [walker]: its current bin k
  /// [k * (4d + 1) + dk + 2d]: acceptance of a move from bin k to k + dk, times 2^32
  /// (2^32: certain), from ising.hpp's metropolis_threshold.
  const uint64_t* threshold = nullptr;

  /// One walker's spins.
  LATTICA_HD_INLINE uint8_t* of(int64_t walker) const { return spins + walker * lattice.volume; }
};

/// Satisfied bonds at site x towards +e_a, for every a.
LATTICA_HD_INLINE int muca_forward_bonds(const MucaWalkers& m, int64_t walker, int64_t x) {
  const MucaLattice& l = m.lattice;
  const uint8_t* spins = m.of(walker);
  int bonds = 0;
  for (int a = 0; a < l.d; ++a) {
    const int64_t c = (x / l.stride[a]) % l.extent[a];
    const int64_t y = c + 1 < l.extent[a] ? x + l.stride[a] : x - (l.extent[a] - 1) * l.stride[a];
    bonds += spins[y] == spins[x];
  }
  return bonds;
}

/// A walker's bin k, counted from scratch.
LATTICA_HD_INLINE int32_t muca_count_satisfied(const MucaWalkers& m, int64_t walker) {
  int64_t k = 0;
  for (int64_t x = 0; x < m.lattice.volume; ++x) k += muca_forward_bonds(m, walker, x);
  return static_cast<int32_t>(k);
}

/// A proposal at one site: the new state, the change of bin it makes and the word deciding it.
struct MucaProposal {
  uint8_t state;
  int dk;
  uint32_t word;
};

/// The proposal at site x (coordinates c) of a walker whose spins are `spins`.
LATTICA_HD_INLINE MucaProposal muca_propose(const MucaWalkers& m, const uint8_t* spins,
                                            int64_t walker, int64_t x, const int64_t* c,
                                            uint64_t step) {
  const MucaLattice& l = m.lattice;
  const PhiloxBlock r = philox4x32_10(
      philox_counter(RngStream::multicanonical, static_cast<uint32_t>(walker), x, step),
      philox_key(m.seed));
  const uint8_t old_state = spins[x];
  // One of the other q - 1 states, uniformly (multiply-shift of a 32-bit word).
  uint32_t proposal = static_cast<uint32_t>((uint64_t(r.x) * uint32_t(m.q - 1)) >> 32);
  if (proposal >= old_state) ++proposal;
  int dk = 0;  // equal neighbours of the proposal minus those of the old state
  for (int a = 0; a < l.d; ++a) {
    const int64_t up = c[a] + 1 < l.extent[a] ? x + l.stride[a] : x - c[a] * l.stride[a];
    const int64_t down = c[a] > 0 ? x - l.stride[a] : x + (l.extent[a] - 1) * l.stride[a];
    dk += (spins[up] == proposal) - (spins[up] == old_state);
    dk += (spins[down] == proposal) - (spins[down] == old_state);
  }
  return {static_cast<uint8_t>(proposal), dk, r.y};
}

/// Whether a move of change dk from bin k is accepted with word u.
LATTICA_HD_INLINE bool muca_accepts(const MucaWalkers& m, int64_t k, int dk, uint32_t word) {
  return word < m.threshold[k * (4 * m.lattice.d + 1) + dk + 2 * m.lattice.d];
}

/// One sweep of one walker, site after site: colour 0, then colour 1, each in lexicographic
/// order. Reads and updates the walker's bin in m.satisfied. sweep: the chain's sweep index
/// (< kMaxSweeps).
LATTICA_HD_INLINE void muca_walker_sweep(const MucaWalkers& m, int64_t walker, uint64_t sweep) {
  const MucaLattice& l = m.lattice;
  uint8_t* spins = m.of(walker);
  int64_t k = m.satisfied[walker];
  const uint64_t step = update_step(sweep, 0, 0);
  for (int colour = 0; colour < 2; ++colour) {
    int64_t c[kMucaMaxDims] = {};  // the coordinates of x, advanced like an odometer
    int parity = 0;                // their sum's
    for (int64_t x = 0; x < l.volume; ++x) {
      if (parity == colour) {
        const MucaProposal p = muca_propose(m, spins, walker, x, c, step);
        if (muca_accepts(m, k, p.dk, p.word)) {
          spins[x] = p.state;
          k += p.dk;
        }
      }
      for (int a = l.d - 1; a >= 0; --a) {  // next coordinates
        parity ^= 1;
        if (++c[a] < l.extent[a]) break;
        parity ^= static_cast<int>(l.extent[a] & 1);  // c[a] returns to 0 from extent
        c[a] = 0;
      }
    }
  }
  m.satisfied[walker] = static_cast<int32_t>(k);
}

#if defined(__CUDA_ARCH__)
/// The same sweep by the 32 lanes of a warp (lane = this thread's), every extent even: the
/// i-th site of a colour in lexicographic order is the (i mod h)-th of its row's h = L/2 sites of
/// that colour, L the last extent. Each lane draws its site's proposal, then the lanes decide
/// in rounds, one per change of the walker's bin.
__device__ inline void muca_walker_sweep_warp(const MucaWalkers& m, int64_t walker, uint64_t sweep,
                                              int lane) {
  const MucaLattice& l = m.lattice;
  const int last = l.d - 1;
  uint8_t* spins = m.of(walker);
  int64_t k = m.satisfied[walker];
  const uint64_t step = update_step(sweep, 0, 0);
  // 32-bit index arithmetic: a walker has at most 2^28 sites (sim/config/rules.cpp).
  const uint32_t half = static_cast<uint32_t>(l.volume / 2);
  const uint32_t per_row = static_cast<uint32_t>(l.extent[last] / 2);
  const int moves = 4 * l.d + 1;  // <= 17 lanes hold a bin's thresholds
  uint64_t row = lane < moves ? m.threshold[k * moves + lane] : 0;
  for (int colour = 0; colour < 2; ++colour) {
    for (uint32_t first = 0; first < half; first += 32) {
      const uint32_t i = first + static_cast<uint32_t>(lane);
      MucaProposal p{0, 0, 0};
      int64_t x = 0;
      if (i < half) {
        int64_t c[kMucaMaxDims] = {};
        uint32_t row = i / per_row;  // the row's index over the other axes
        int parity = colour;
        for (int a = last - 1; a >= 0; --a) {
          const auto extent = static_cast<uint32_t>(l.extent[a]);
          c[a] = row % extent;
          row /= extent;
          parity ^= static_cast<int>(c[a] & 1);
        }
        c[last] = 2 * (i % per_row) + static_cast<uint32_t>(parity);
        for (int a = 0; a < l.d; ++a) x += c[a] * l.stride[a];
        p = muca_propose(m, spins, walker, x, c, step);
      }
      const int group = half - first < 32 ? static_cast<int>(half - first) : 32;
      const uint32_t in_group = group == 32 ? 0xffffffffu : (1u << group) - 1;
      // Every lane tests its move against the bin's row of thresholds; the decisions up to the
      // first accepted move that changes the bin stand, that move moves the walker, and the
      // lanes after it test again against the new bin's row: the decisions in order, with one
      // round per change of bin.
      uint32_t accepted_lanes = 0;
      for (int from = 0; from < group;) {
        const uint32_t undecided = in_group & ~((1u << from) - 1);
        const bool yes = p.word < __shfl_sync(0xffffffffu, row, p.dk + 2 * l.d);
        const uint32_t yes_lanes = __ballot_sync(0xffffffffu, yes) & undecided;
        const uint32_t moving = __ballot_sync(0xffffffffu, yes && p.dk != 0) & undecided;
        if (moving == 0) {
          accepted_lanes |= yes_lanes;
          break;
        }
        const int j = __ffs(moving) - 1;
        accepted_lanes |= yes_lanes & ((2u << j) - 1);  // lanes from .. j (2 << 31 wraps to 0: all)
        k += __shfl_sync(0xffffffffu, p.dk, j);
        row = lane < moves ? m.threshold[k * moves + lane] : 0;
        from = j + 1;
      }
      const bool accepted = (accepted_lanes >> lane) & 1u;
      if (accepted) spins[x] = p.state;
      __syncwarp();  // the next group reads these sites
    }
  }
  if (lane == 0) m.satisfied[walker] = static_cast<int32_t>(k);
}
#endif

/// A walker's order parameter as an integer: Ising, the magnetisation sum_x s_x (state 0 is
/// +1); Potts, the number of sites in the most common state.
LATTICA_HD_INLINE int32_t muca_order(const MucaWalkers& m, int64_t walker) {
  int32_t count[kMucaMaxStates] = {};
  const uint8_t* spins = m.of(walker);
  for (int64_t x = 0; x < m.lattice.volume; ++x) ++count[spins[x]];
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
