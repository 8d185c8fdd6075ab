#pragma once
// q-state Potts model per-site physics, written once for both backends.
//
// H = -J sum_<ij> delta(s_i, s_j) - h sum_i delta(s_i, 0), J = 1, s in {0, ..., q-1}, q <= 256.
// As for Ising, every decision compares Philox words with integers tabulated on the host:
// - Metropolis proposes one of the other q-1 states uniformly (multiply-shift of a 32-bit word)
//   and accepts with a fixed-point threshold indexed by the change in equal neighbours and in
//   delta(s, 0).
// - Heat bath draws the new state with probability proportional to exp(beta (n_s + h delta_s0))
//   from 64-bit fixed-point weights (the largest possible weight is 2^55, so q <= 256 weights sum
//   below 2^63) with a 64-bit uniform word: floor(u * total / 2^64) is exact integer arithmetic,
//   and a weight e^-x below the largest keeps about 55 - 1.44 x bits.
// The order parameter (1/V) sum_i exp(2 pi i s_i / q) is summed in 2^-30 fixed point, so it is
// an exact integer sum on both backends too.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/host_device.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

constexpr int kMaxPottsStates = 256;
constexpr double kPottsPhaseScale = 1073741824.0;  ///< 2^30, fixed point of cos and sin
constexpr int kPottsWeightBits = 55;               ///< heat-bath weights: largest 2^55

struct PottsParams {
  uint64_t seed;
  double beta;
  double field;
  int q;
  /// Metropolis acceptance, times 2^32: [n_new - n_old + 8][delta(new,0) - delta(old,0) + 1].
  uint64_t accept[17][3];
  /// Heat-bath weight of a state with c equal neighbours: [c][state == 0], at most 2^55.
  uint64_t weight[9][2];
  int32_t cos_phase[kMaxPottsStates];  ///< cos(2 pi s / q) * 2^30
  int32_t sin_phase[kMaxPottsStates];
  /// Cluster moves: FK bond between equal states, 1 - exp(-beta); ghost bond of a site in
  /// state 0, 1 - exp(-beta h) (h > 0; 0 at h = 0).
  uint64_t cluster_bond;
  uint64_t ghost_bond;
};

inline PottsParams make_potts_params(int d, int q, double beta, double h, uint64_t seed) {
  if (d < 1 || d > 4) throw std::invalid_argument("Potts: dimension must be 1..4");
  if (q < 2 || q > kMaxPottsStates) throw std::invalid_argument("Potts: q must be 2..256");
  PottsParams p{};
  p.seed = seed;
  p.beta = beta;
  p.field = h;
  p.q = q;
  p.cluster_bond = beta > 0 ? move_threshold(-std::expm1(-beta)) : 0;
  p.ghost_bond = beta > 0 && h > 0 ? move_threshold(-std::expm1(-beta * h)) : 0;
  for (int dn = -8; dn <= 8; ++dn) {
    for (int dz = -1; dz <= 1; ++dz) {
      // dE = -(dn + h dz); 15/16 at beta dE = 0, as for Ising (ising.hpp says why).
      p.accept[dn + 8][dz + 1] = metropolis_threshold(-beta * (dn + h * dz));
    }
  }
  const double top = beta * (2 * d + std::max(h, 0.0));
  for (int c = 0; c <= 2 * d; ++c) {
    for (int z = 0; z < 2; ++z) {
      // At least 1: rounding must not make a state the weights allow impossible.
      p.weight[c][z] = std::max<uint64_t>(
          1, static_cast<uint64_t>(
                 std::llround(std::ldexp(std::exp(beta * (c + h * z) - top), kPottsWeightBits))));
    }
  }
  const double two_pi = 6.283185307179586476925286766559;
  for (int s = 0; s < q; ++s) {
    p.cos_phase[s] =
        static_cast<int32_t>(std::llround(std::cos(two_pi * s / q) * kPottsPhaseScale));
    p.sin_phase[s] =
        static_cast<int32_t>(std::llround(std::sin(two_pi * s / q) * kPottsPhaseScale));
  }
  return p;
}

/// Exact sums of one configuration.
struct PottsSums {
  long long bonds;     ///< sum over nearest-neighbour pairs of delta(s_i, s_j)
  long long zeros;     ///< number of sites in state 0
  long long phase_re;  ///< sum_i cos(2 pi s_i / q) * 2^30
  long long phase_im;
  LATTICA_HD PottsSums operator+(const PottsSums& o) const {
    return {bonds + o.bonds, zeros + o.zeros, phase_re + o.phase_re, phase_im + o.phase_im};
  }
};

struct PottsModel {
  using Spin = uint8_t;
  using Params = PottsParams;
  using Sums = PottsSums;
  static constexpr bool kExactHistograms = true;
  static constexpr bool kTunableStep = false;
  static constexpr bool kFourierLangevin = false;

  /// All in state 0 (cold) or independent uniform states from the initial-state stream (hot).
  LATTICA_HD_INLINE static Spin initial(const Params& p, bool hot, uint32_t replica, int64_t site) {
    if (!hot) return 0;
    const uint32_t u =
        philox_u32(p.seed, RngStream::initial_state, replica, static_cast<uint64_t>(site), 0);
    return static_cast<Spin>((static_cast<uint64_t>(u) * p.q) >> 32);
  }

  template <int D>
  LATTICA_HD_INLINE static int equal_neighbours(const Spin (&nb)[2 * D], int state) {
    int n = 0;
    for (int k = 0; k < 2 * D; ++k) n += nb[k] == state;
    return n;
  }

  /// Metropolis or heat bath (over-relaxation is refused by the configuration).
  template <int D, class Random>
  LATTICA_HD_INLINE static Spin update(const Params& p, UpdateAlgorithm algorithm, Spin old,
                                       const Spin (&nb)[2 * D], Random& random, int&) {
    const uint32_t r0 = random.next();
    const uint32_t r1 = random.next();
    if (algorithm != UpdateAlgorithm::heatbath) {
      // One of the q-1 other states, uniformly.
      const int k = static_cast<int>((static_cast<uint64_t>(r0) * (p.q - 1)) >> 32);
      const int proposal = k >= old ? k + 1 : k;
      const int dn = equal_neighbours<D>(nb, proposal) - equal_neighbours<D>(nb, old);
      const int dz = (proposal == 0) - (old == 0);
      return r1 < p.accept[dn + 8][dz + 1] ? static_cast<Spin>(proposal) : old;
    }
    uint64_t total = 0;
    for (int s = 0; s < p.q; ++s) total += p.weight[equal_neighbours<D>(nb, s)][s == 0];
    const uint64_t u = (static_cast<uint64_t>(r1) << 32) | r0;
    uint64_t pick = multiply_high(u, total);  // uniform in [0, total)
    for (int s = 0; s < p.q; ++s) {
      const uint64_t w = p.weight[equal_neighbours<D>(nb, s)][s == 0];
      if (pick < w) return static_cast<Spin>(s);
      pick -= w;
    }
    return static_cast<Spin>(p.q - 1);  // not reached: pick < total
  }

  template <int D>
  LATTICA_HD_INLINE static Sums site_sums(const Params& p, Spin s, const Spin (&nb)[2 * D],
                                          Spin partner) {
    return {equal_neighbours<D>(nb, s), (s == 0) + (partner == 0),
            static_cast<long long>(p.cos_phase[s]) + p.cos_phase[partner],
            static_cast<long long>(p.sin_phase[s]) + p.sin_phase[partner]};
  }

  // Cluster moves: FK bonds between equal states. Swendsen-Wang gives a cluster a uniform new
  // state, Wolff one of the q - 1 others. The field h > 0 on state 0 is the ghost spin's (a
  // cluster bonded to it stays in state 0), exact as for Ising; h < 0 has no such bonds and is
  // refused for cluster moves by the configuration.
  using Embedding = NoEmbedding;
  static constexpr bool kClusterSizeEstimator = true;
  static constexpr bool kEqualSpinBonds = true;
  LATTICA_HD_INLINE static bool equal_spin_bonds(const Params& p, uint64_t& threshold) {
    threshold = p.cluster_bond;
    return p.ghost_bond == 0;
  }
  LATTICA_HD_INLINE static Embedding cluster_embedding(const Params&, SiteRandom&) { return {}; }
  LATTICA_HD_INLINE static uint64_t cluster_bond(const Params& p, const Embedding&, Spin a,
                                                 Spin b) {
    return a == b ? p.cluster_bond : 0;
  }
  LATTICA_HD_INLINE static uint64_t ghost_bond(const Params& p, const Embedding&, Spin a) {
    return a == 0 ? p.ghost_bond : 0;
  }
  LATTICA_HD_INLINE static bool cluster_move_draws(bool) { return true; }
  static constexpr int kClusterMoveBits = 32;
  LATTICA_HD_INLINE static Spin cluster_move(const Params& p, const Embedding&, Spin s,
                                             uint32_t word, bool single) {
    if (!single) return static_cast<Spin>((static_cast<uint64_t>(word) * p.q) >> 32);
    const int k = static_cast<int>((static_cast<uint64_t>(word) * (p.q - 1)) >> 32);
    return static_cast<Spin>(k >= s ? k + 1 : k);
  }

  /// The order-parameter field (for structure factors): (cos, sin)(2 pi s / q).
  static int field_components(const Params&) { return 2; }
  LATTICA_HD_INLINE static double field_component(const Params& p, Spin s, int c) {
    return (c == 0 ? p.cos_phase[s] : p.sin_phase[s]) / kPottsPhaseScale;
  }

  /// Histogram 0: the interaction energy -sum delta(s_i, s_j).
  LATTICA_HD_INLINE static long long histogram_total(const Sums& s, int) { return -s.bonds; }

  // ---- host side ----
  static std::vector<std::string> observable_names(const Params&) {
    return {"energy", "magnetization", "magnetization_re", "magnetization_im"};
  }
  static std::vector<std::string> observable_descriptions(const Params&) {
    return {"energy per site, (-sum_<ij> delta(s_i, s_j) - h sum_i delta(s_i, 0)) / V",
            "modulus of the complex magnetization |(1/V) sum_i exp(2 pi i s_i / q)|",
            "real part of the complex magnetization (1/V) sum_i exp(2 pi i s_i / q)",
            "imaginary part of the complex magnetization"};
  }
  /// ln of the Boltzmann weight, -beta H = beta (sum delta(s_i, s_j) + h N_0).
  LATTICA_HD static double log_weight(const Params& p, const Sums& s, double) {
    return p.beta * (static_cast<double>(s.bonds) + p.field * static_cast<double>(s.zeros));
  }
  static void observables(const Params& p, const Sums& s, double volume, double* out) {
    out[0] = (-static_cast<double>(s.bonds) - p.field * static_cast<double>(s.zeros)) / volume;
    const double re = static_cast<double>(s.phase_re) / (kPottsPhaseScale * volume);
    const double im = static_cast<double>(s.phase_im) / (kPottsPhaseScale * volume);
    out[1] = std::sqrt(re * re + im * im);
    out[2] = re;
    out[3] = im;
  }
  static SnapshotFormat snapshot_format(const Params&) {
    return {ElementType::uint8, 1, "Potts states 0 .. q-1 (uint8)"};
  }
  static std::vector<HistogramInfo> histograms() {
    return {{"energy",
             "interaction energy E_J = -sum_<ij> delta(s_i, s_j) (total, not per site; equals the "
             "energy at h = 0) over all measurements and replicas",
             1}};
  }
};

}  // namespace lattica
