#pragma once
// Ising model per-site physics, written once for both backends.
//
// H = -J sum_<ij> s_i s_j - h sum_i s_i with J = 1 on a periodic hypercubic lattice.
// Both update algorithms are expressed as "the new spin is +1 iff u < T[s][n]", where u is a
// uniform 32-bit Philox word and T is the probability of +1 as a fixed-point threshold in
// [0, 2^32], tabulated on the host from the old spin s and the neighbour sum n. The device
// never evaluates exp(), so both backends take bit-identical decisions, and sites whose
// outcome is certain (T = 0 or T = 2^32) draw no random number at all.

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

enum class IsingAlgorithm { metropolis, heatbath };

constexpr uint64_t kThresholdOne = uint64_t(1) << 32;  ///< probability 1 in fixed point

/// Tabulated transition probabilities; trivially copyable, passed to kernels by value.
struct IsingParams {
  /// up_threshold[s == +1][(n + 2D) / 2]: probability that the new spin is +1, times 2^32.
  uint64_t up_threshold[2][9];
  uint64_t seed;
};

/// Probability p in [0, 1] as a fixed-point threshold; exact at 0 and 1.
inline uint64_t probability_threshold(double p) {
  if (!(p >= 0.0)) return 0;
  if (p >= 1.0) return kThresholdOne;
  return static_cast<uint64_t>(std::llround(std::ldexp(p, 32)));
}

/// Host-side table for dimension d (1..4), inverse temperature beta and field h.
inline IsingParams make_ising_params(int d, double beta, double h, IsingAlgorithm algorithm,
                                     uint64_t seed) {
  if (d < 1 || d > 4) throw std::invalid_argument("Ising: dimension must be 1..4");
  IsingParams p{};
  p.seed = seed;
  for (int up = 0; up < 2; ++up) {
    const int s = up ? 1 : -1;
    for (int k = 0; k <= 2 * d; ++k) {
      const double local_field = (2 * k - 2 * d) + h;  // n + h
      uint64_t t;
      if (algorithm == IsingAlgorithm::heatbath) {
        // P(+1) = e^{beta f} / (e^{beta f} + e^{-beta f}); the tanh form is stable for any f.
        t = probability_threshold(0.5 * (1.0 + std::tanh(beta * local_field)));
      } else {
        // Metropolis: flip with min(1, exp(-beta dE)), dE = 2 s (n + h).
        const uint64_t flip = probability_threshold(std::exp(-2.0 * beta * s * local_field));
        t = up ? kThresholdOne - flip : flip;
      }
      p.up_threshold[up][k] = t;
    }
  }
  return p;
}

/// New value of one spin given its old value and neighbour sum. Draws a Philox word only when
/// the outcome is uncertain.
template <int D>
LATTICA_HD_INLINE int8_t ising_new_spin(const IsingParams& params, int8_t spin, int neighbour_sum,
                                        uint32_t replica, int64_t site, uint64_t sweep) {
  const uint64_t threshold = params.up_threshold[spin > 0][(neighbour_sum + 2 * D) / 2];
  if (threshold == 0) return -1;
  if (threshold >= kThresholdOne) return 1;
  const uint32_t u =
      philox_u32(params.seed, RngStream::site_update, replica, static_cast<uint64_t>(site), sweep);
  return u < threshold ? int8_t(1) : int8_t(-1);
}

/// Updates every site of one colour in every replica; functor over replica * V/2 + colour-local
/// index, for all replicas at once so small lattices still fill a GPU.
template <int D>
struct IsingUpdateColour {
  Checkerboard<D> lattice;
  IsingParams params;
  int8_t* spins;  ///< replicas one after another, each in checkerboard storage (V entries)
  int colour;
  uint64_t sweep;

  LATTICA_HD_INLINE void operator()(int64_t index) const {
    const int64_t replica = index / lattice.half_volume;
    const int64_t j = index - replica * lattice.half_volume;
    int8_t* base = spins + replica * lattice.volume();
    int8_t* own = base + colour * lattice.half_volume;
    const int8_t* other = base + (1 - colour) * lattice.half_volume;
    int neighbour_sum = 0;
    const int64_t site =
        lattice.visit_neighbours(j, colour, [&](int64_t k) { neighbour_sum += other[k]; });
    own[j] = ising_new_spin<D>(params, own[j], neighbour_sum, static_cast<uint32_t>(replica), site,
                               sweep);
  }
};

/// Exact integer sums of one configuration.
struct IsingSums {
  long long bonds;          ///< sum over nearest-neighbour pairs of s_i s_j
  long long magnetization;  ///< sum_i s_i
  LATTICA_HD IsingSums operator+(const IsingSums& o) const {
    return {bonds + o.bonds, magnetization + o.magnetization};
  }
};

/// Per colour-0 site j: its bonds (each bond has exactly one colour-0 end) and the spins of
/// j and of the colour-1 site stored at the same index, so every site is counted once.
template <int D>
struct IsingSiteSums {
  Checkerboard<D> lattice;
  const int8_t* spins;  ///< one replica's checkerboard storage

  LATTICA_HD_INLINE IsingSums operator()(int64_t j) const {
    const int8_t* colour1 = spins + lattice.half_volume;
    int neighbour_sum = 0;
    lattice.visit_neighbours(j, 0, [&](int64_t k) { neighbour_sum += colour1[k]; });
    const int s = spins[j];
    return {static_cast<long long>(s * neighbour_sum), static_cast<long long>(s + colour1[j])};
  }
};

/// Initial configuration: all +1 (cold) or independent +-1 from the initial-state stream (hot).
/// Functor over replica * V + storage position.
template <int D>
struct IsingInitialState {
  Checkerboard<D> lattice;
  int8_t* spins;
  uint64_t seed;
  bool hot;

  LATTICA_HD_INLINE void operator()(int64_t position) const {
    if (!hot) {
      spins[position] = 1;
      return;
    }
    const int64_t replica = position / lattice.volume();
    const int64_t local = position - replica * lattice.volume();
    const int colour = local >= lattice.half_volume;
    const int64_t site = lattice.lex_index(local - colour * lattice.half_volume, colour);
    const uint32_t u = philox_u32(seed, RngStream::initial_state, static_cast<uint32_t>(replica),
                                  static_cast<uint64_t>(site), 0);
    spins[position] = (u >> 31) ? int8_t(1) : int8_t(-1);
  }
};

/// Bin of an exact total (bond sum or magnetization) in a histogram window starting at
/// `lowest`; totals of one lattice all share one parity, hence the step of 2.
struct IsingTotalBin {
  const IsingSums* sums;
  long long lowest;
  bool magnetization;
  LATTICA_HD_INLINE int64_t operator()(int64_t i) const {
    const long long v = magnetization ? sums[i].magnetization : sums[i].bonds;
    return (v - lowest) / 2;
  }
};

}  // namespace lattica
