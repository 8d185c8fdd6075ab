#pragma once
// Ising model per-site physics, written once for both backends.
//
// H = -J sum_<ij> s_i s_j - h sum_i s_i with J = 1 on a periodic hypercubic lattice.
// Both update algorithms are expressed as "the spin flips iff u < F[s][a]", where a is the number
// of neighbours anti-aligned with the old spin s, u the site's bit-sliced uniform 32-bit word
// (LaneRandom: 32 sites of a colour share one Philox stream) and F the flip probability as a
// fixed-point threshold in [0, 2^32], tabulated on the host. The device never evaluates exp(),
// both backends and the multi-spin-coded kernel (ising_packed.hpp) take bit-identical
// decisions, and sites whose outcome is certain (F = 2^32) draw no random bits at all.
//
// Metropolis accepts a move that leaves the Boltzmann weight unchanged (beta dE = 0) with
// probability 15/16, not 1. With acceptance 1 a checkerboard sweep is not ergodic: a
// configuration in which every site has dE = 0 (beta = 0, or the E = 0 states of small lattices)
// flips every spin for certain and alternates with its global flip forever. Detailed balance
// only relates a move to its reverse, and a dE = 0 move has its reverse's acceptance whatever
// that is, so any value there is exact; below 1 it breaks the cycles, and 15/16 keeps most of
// the speed that free dE = 0 flips give at criticality (README: at the 2D beta_c, 1/2 made
// tau_int 2.5-3x longer, 15/16 13-19 %). Every move the weights allow keeps
// a probability in [2^-32, 1 - 2^-32] (move_threshold), so no rounding makes a possible move
// certain or impossible: one closed class for every finite beta (tests/physics/ergodicity_test).

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/host_device.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

constexpr uint64_t kThresholdOne = uint64_t(1) << 32;  ///< probability 1 in fixed point

/// Probability p in [0, 1] as a fixed-point threshold; exact at 0 and 1.
inline uint64_t probability_threshold(double p) {
  if (!(p >= 0.0)) return 0;
  if (p >= 1.0) return kThresholdOne;
  return static_cast<uint64_t>(std::llround(std::ldexp(p, 32)));
}

/// Threshold of a move whose exact probability p lies strictly between 0 and 1 (any move at
/// finite beta that is not certainly accepted): rounded, then kept within [1, 2^32 - 1], so
/// rounding never makes it impossible (p < 2^-33) or certain (p > 1 - 2^-33). The change is
/// below 2^-32, the tables' precision, and keeps every chain irreducible.
inline uint64_t move_threshold(double p) {
  const uint64_t t = probability_threshold(p);
  return t < 1 ? 1 : t >= kThresholdOne ? kThresholdOne - 1 : t;
}

/// Metropolis acceptance of a move with beta dE = 0, in fixed point: 15/16 (see the header).
constexpr uint64_t kMetropolisTieThreshold = kThresholdOne - kThresholdOne / 16;

/// Metropolis acceptance of a move with Boltzmann exponent x = beta dE: certain for x < 0,
/// 15/16 for x = 0 (see the header: acceptance 1 there breaks ergodicity), e^-x otherwise.
inline uint64_t metropolis_threshold(double x) {
  if (x < 0) return kThresholdOne;
  if (x == 0) return kMetropolisTieThreshold;
  return move_threshold(std::exp(-x));
}

/// Tabulated transition probabilities; trivially copyable, passed to kernels by value.
struct IsingParams {
  /// flip_threshold[heat bath][s == +1][a]: probability that the spin s flips when a of its 2D
  /// neighbours are anti-aligned with it (neighbour sum n = s (2D - 2a)), times 2^32, for
  /// Metropolis (0) and heat bath (1).
  uint64_t flip_threshold[2][2][9];
  uint64_t seed;
  double beta;
  double field;
  /// Cluster moves: FK bond between equal spins, 1 - exp(-2 beta); ghost bond of a spin of the
  /// field's sign, 1 - exp(-2 beta |h|) (ghost_sign 0 at h = 0: none).
  uint64_t cluster_bond;
  uint64_t ghost_bond;
  int ghost_sign;
};

/// Host-side table for dimension d (1..4), inverse temperature beta and field h.
inline IsingParams make_ising_params(int d, double beta, double h, uint64_t seed) {
  if (d < 1 || d > 4) throw std::invalid_argument("Ising: dimension must be 1..4");
  IsingParams p{};
  p.seed = seed;
  p.beta = beta;
  p.field = h;
  p.cluster_bond = beta > 0 ? move_threshold(-std::expm1(-2.0 * beta)) : 0;
  p.ghost_bond = beta > 0 && h != 0 ? move_threshold(-std::expm1(-2.0 * beta * std::fabs(h))) : 0;
  p.ghost_sign = h > 0 ? 1 : h < 0 ? -1 : 0;
  for (int up = 0; up < 2; ++up) {
    const int s = up ? 1 : -1;
    for (int a = 0; a <= 2 * d; ++a) {
      const double aligned_field = (2 * d - 2 * a) + s * h;  // s (n + h), s n = 2d - 2a
      // Metropolis: flip with min(1, exp(-beta dE)), dE = 2 s (n + h); 15/16 at beta dE = 0.
      p.flip_threshold[0][up][a] = metropolis_threshold(beta * (2.0 * aligned_field));
      // Heat bath: P(-s) = e^{-beta s (n+h)} / (2 cosh(beta (n+h))), stable in the tanh form.
      p.flip_threshold[1][up][a] = move_threshold(0.5 * (1.0 - std::tanh(beta * aligned_field)));
    }
  }
  return p;
}

/// New value of one spin given its old value and neighbour sum. Draws random bits only when the
/// outcome is uncertain.
template <int D, class Random>
LATTICA_HD_INLINE int8_t ising_new_spin(const IsingParams& params, UpdateAlgorithm algorithm,
                                        int8_t spin, int neighbour_sum, Random& random) {
  const int anti_aligned = (2 * D - spin * neighbour_sum) / 2;
  const uint64_t threshold =
      params.flip_threshold[algorithm == UpdateAlgorithm::heatbath][spin > 0][anti_aligned];
  if (threshold == 0) return spin;
  if (threshold >= kThresholdOne) return static_cast<int8_t>(-spin);
  return random.below(static_cast<uint32_t>(threshold)) ? static_cast<int8_t>(-spin) : spin;
}

/// Exact integer sums of one configuration.
struct IsingSums {
  long long bonds;          ///< sum over nearest-neighbour pairs of s_i s_j
  long long magnetization;  ///< sum_i s_i
  LATTICA_HD IsingSums operator+(const IsingSums& o) const {
    return {bonds + o.bonds, magnetization + o.magnetization};
  }
};

/// The Ising model for the generic lattice engine (see lattice_model.hpp).
struct IsingModel {
  using Spin = int8_t;
  using Params = IsingParams;
  using Sums = IsingSums;
  using Random = LaneRandom;  ///< bit-sliced: 32 sites of a colour share a Philox stream
  static constexpr bool kExactHistograms = true;
  static constexpr bool kTunableStep = false;
  static constexpr bool kFourierLangevin = false;

  /// All +1 (cold) or independent +-1 from the initial-state stream (hot).
  LATTICA_HD_INLINE static Spin initial(const Params& p, bool hot, uint32_t replica, int64_t site) {
    if (!hot) return 1;
    return (philox_u32(p.seed, RngStream::initial_state, replica, static_cast<uint64_t>(site), 0) >>
            31)
               ? Spin(1)
               : Spin(-1);
  }

  /// Metropolis or heat bath (over-relaxation is refused by the configuration).
  template <int D, class Random>
  LATTICA_HD_INLINE static Spin update(const Params& p, UpdateAlgorithm algorithm, Spin old,
                                       const Spin (&nb)[2 * D], Random& random, int&) {
    int sum = 0;
    for (int k = 0; k < 2 * D; ++k) sum += nb[k];
    return ising_new_spin<D>(p, algorithm, old, sum, random);
  }

  template <int D>
  LATTICA_HD_INLINE static Sums site_sums(const Params&, Spin s, const Spin (&nb)[2 * D],
                                          Spin partner) {
    int sum = 0;
    for (int k = 0; k < 2 * D; ++k) sum += nb[k];
    return {static_cast<long long>(s * sum), static_cast<long long>(s + partner)};
  }

  // Cluster moves: FK bonds between equal spins; a moved cluster flips. The field is the ghost
  // spin's: a cluster bonded to it stays (exact, the probability that none of |C| aligned spins
  // bonds being exp(-2 beta |h| |C|), Wolff's Metropolis acceptance of the flip).
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
    return a == p.ghost_sign ? p.ghost_bond : 0;
  }
  LATTICA_HD_INLINE static bool cluster_move_draws(bool single) { return !single; }
  static constexpr int kClusterMoveBits = 1;
  LATTICA_HD_INLINE static Spin cluster_move(const Params&, const Embedding&, Spin s, uint32_t word,
                                             bool single) {
    return single || (word >> 31) ? static_cast<Spin>(-s) : s;
  }

  /// The order-parameter field (for structure factors): the spin itself.
  static int field_components(const Params&) { return 1; }
  LATTICA_HD_INLINE static double field_component(const Params&, Spin s, int) { return s; }

  /// Histogram 0: the interaction energy -sum s_i s_j; 1: the magnetization sum s_i.
  LATTICA_HD_INLINE static long long histogram_total(const Sums& s, int which) {
    return which == 0 ? -s.bonds : s.magnetization;
  }

  // ---- host side: what the engine reports ----
  static std::vector<std::string> observable_names(const Params&) {
    return {"energy", "magnetization"};
  }
  static std::vector<std::string> observable_descriptions(const Params&) {
    return {"energy per site, (-sum_<ij> s_i s_j - h sum_i s_i) / V",
            "magnetization per site, sum_i s_i / V (signed)"};
  }
  /// ln of the Boltzmann weight of a configuration with these sums, -beta H (parallel
  /// tempering's exchanges and reweighting across rungs).
  LATTICA_HD static double log_weight(const Params& p, const Sums& s, double) {
    return p.beta * (static_cast<double>(s.bonds) + p.field * static_cast<double>(s.magnetization));
  }
  /// Observables per site from exact sums; the same doubles on every backend.
  static void observables(const Params& p, const Sums& s, double volume, double* out) {
    out[0] =
        (-static_cast<double>(s.bonds) - p.field * static_cast<double>(s.magnetization)) / volume;
    out[1] = static_cast<double>(s.magnetization) / volume;
  }
  static SnapshotFormat snapshot_format(const Params&) {
    return {ElementType::int8, 1, "spins +1/-1 (int8)"};
  }
  /// output.snapshot_packing = "bits": an eighth of the bytes (kernels/models/ising_packed.hpp).
  static SnapshotFormat bit_packed_snapshot_format() {
    return {ElementType::uint8, 1,
            "spins 8 per byte along the last axis, the lower site in the least significant bit, "
            "1 = +1 and 0 = -1 (uint8; numpy: 2 * unpackbits(a, axis=-1, bitorder='little') - 1)",
            true};
  }
  static std::vector<HistogramInfo> histograms() {
    return {{"energy",
             "interaction energy E_J = -sum_<ij> s_i s_j (total, not per site; equals the energy "
             "at h = 0) over all measurements and replicas",
             2},
            {"magnetization",
             "magnetization M = sum_i s_i (total, not per site) over all measurements and replicas",
             2}};
  }
};

}  // namespace lattica
