#pragma once
// Real scalar phi^4 per-site physics in the hopping-parameter (kappa) form, written once for
// both backends and templated on the precision of the field.
//
// S = sum_x [ -2 kappa sum_mu phi_x phi_{x+mu} + phi_x^2 + lambda (phi_x^2 - 1)^2 - h phi_x ].
// The action of one site given its neighbours is S_x(phi) = -b phi + phi^2 + lambda (phi^2 - 1)^2
// with b = 2 kappa sum_nb phi_nb + h. Moves:
// - multi-hit Metropolis: `hits` proposals phi' = phi + step (2u - 1), each accepted with
//   min(1, exp(-(S_x(phi') - S_x(phi)))).
// - over-relaxation: the reflection phi' = c - phi with c = b / (1 + 4 lambda), accepted with
//   min(1, exp(-dS)). A reflection that does not depend on phi is its own inverse with unit
//   Jacobian, so this is exact for any c; this c leaves the Gaussian part invariant at
//   lambda = 0 (always accepted) and tends to a spin flip about the shifted minima +-1 at
//   large lambda (Ising limit), so it is accepted often in both limits.
// - Fourier-accelerated Langevin, unadjusted or Metropolis-adjusted: whole-lattice moves, see
//   kernels/spectral/langevin.hpp.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/host_device.hpp"
#include "kernels/common/real_math.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/uniform.hpp"

namespace lattica {

struct Phi4Params {
  uint64_t seed;
  double kappa;
  double lambda;
  double field;  ///< h, the coefficient of the linear term -h phi
  double step;   ///< Metropolis proposals are uniform in [phi - step, phi + step]
  int hits;      ///< Metropolis proposals per site and pass
  int dims;      ///< lattice dimension d
};

/// Sums of one configuration, in double whatever the field's precision.
struct Phi4Sums {
  double phi;    ///< sum_x phi_x
  double phi2;   ///< sum_x phi_x^2
  double phi4;   ///< sum_x phi_x^4
  double links;  ///< sum_x sum_mu phi_x phi_{x+mu}
  LATTICA_HD Phi4Sums operator+(const Phi4Sums& o) const {
    return {phi + o.phi, phi2 + o.phi2, phi4 + o.phi4, links + o.links};
  }
};

template <class Real>
struct Phi4Model {
  using Spin = Real;
  using Params = Phi4Params;
  using Sums = Phi4Sums;
  static constexpr bool kExactHistograms = false;
  static constexpr bool kTunableStep = true;
  static constexpr bool kFourierLangevin = true;

  /// phi = 1 (cold) or independent uniform values in (-1, 1) (hot).
  LATTICA_HD_INLINE static Spin initial(const Params& p, bool hot, uint32_t replica, int64_t site) {
    if (!hot) return Real(1);
    return Real(2) * uniform_open<Real>(philox_u32(p.seed, RngStream::initial_state, replica,
                                                   static_cast<uint64_t>(site), 0)) -
           Real(1);
  }

  // Embedded Ising clusters on the signs of phi (Brower and Tamayo 1989): flipping the sign
  // of a cluster of same-sign sites changes only the hopping terms on its boundary, by
  // 4 kappa phi_a phi_b each, and the field term by 2 h phi per site (the ghost spin's bonds).
  using Embedding = NoEmbedding;
  static constexpr bool kClusterSizeEstimator = false;
  static constexpr bool kEqualSpinBonds = false;
  LATTICA_HD_INLINE static Embedding cluster_embedding(const Params&, SiteRandom&) { return {}; }
  LATTICA_HD_INLINE static uint64_t cluster_bond(const Params& p, const Embedding&, Spin a,
                                                 Spin b) {
    return embedded_bond_threshold(4.0 * p.kappa * static_cast<double>(a) * static_cast<double>(b));
  }
  LATTICA_HD_INLINE static uint64_t ghost_bond(const Params& p, const Embedding&, Spin a) {
    return embedded_bond_threshold(2.0 * p.field * static_cast<double>(a));
  }
  LATTICA_HD_INLINE static bool cluster_move_draws(bool single) { return !single; }
  static constexpr int kClusterMoveBits = 1;
  LATTICA_HD_INLINE static Spin cluster_move(const Params&, const Embedding&, Spin phi,
                                             uint32_t word, bool single) {
    return single || (word >> 31) ? -phi : phi;
  }

  /// The site's action up to terms that do not depend on phi.
  LATTICA_HD_INLINE static Real site_action(Real phi, Real b, Real lambda) {
    const Real phi2 = phi * phi;
    return phi2 - b * phi + lambda * (phi2 - Real(1)) * (phi2 - Real(1));
  }

  /// Metropolis' proposal, uniform in [phi - step, phi + step]; multicanonical walkers
  /// propose the same way.
  LATTICA_HD_INLINE static Real metropolis_proposal(Real step, Real phi, SiteRandom& random) {
    return phi + step * (Real(2) * uniform_open<Real>(random.next()) - Real(1));
  }

  template <int D>
  LATTICA_HD_INLINE static Spin update(const Params& p, UpdateAlgorithm algorithm, Spin phi,
                                       const Spin (&nb)[2 * D], SiteRandom& random, int& accepted) {
    Real sum = 0;
    for (int k = 0; k < 2 * D; ++k) sum += nb[k];
    const Real lambda = static_cast<Real>(p.lambda);
    const Real b = Real(2) * static_cast<Real>(p.kappa) * sum + static_cast<Real>(p.field);
    const Real action = site_action(phi, b, lambda);
    if (algorithm == UpdateAlgorithm::overrelaxation) {
      const Real reflected = b / (Real(1) + Real(4) * lambda) - phi;
      return metropolis_accept<Real>(random, site_action(reflected, b, lambda) - action) ? reflected
                                                                                         : phi;
    }
    // Metropolis (the configuration refuses a heat bath for phi^4).
    const Real step = static_cast<Real>(p.step);
    Real current = action;
    for (int hit = 0; hit < p.hits; ++hit) {
      const Real proposal = metropolis_proposal(step, phi, random);
      const Real proposed = site_action(proposal, b, lambda);
      if (metropolis_accept<Real>(random, proposed - current)) {
        phi = proposal;
        current = proposed;
        ++accepted;
      }
    }
    return phi;
  }

  /// Fourier-accelerated Langevin (kernels/spectral/langevin.hpp) splits the action as
  /// S = (1/2) phi A phi + sum_x u(phi_x) with A's symbol 2 + shift - 4 kappa sum_mu cos k_mu,
  /// so u(phi) = lambda (phi^2 - 1)^2 - h phi - shift phi^2 / 2 and F = -u'(phi).
  LATTICA_HD_INLINE static double langevin_potential(const Params& p, double shift, double phi) {
    const double phi2 = phi * phi;
    return p.lambda * (phi2 - 1.0) * (phi2 - 1.0) - p.field * phi - 0.5 * shift * phi2;
  }
  LATTICA_HD_INLINE static double langevin_force(const Params& p, double shift, double phi) {
    return -4.0 * p.lambda * phi * (phi * phi - 1.0) + p.field + shift * phi;
  }

  /// The order-parameter field (for structure factors): phi itself.
  static int field_components(const Params&) { return 1; }
  LATTICA_HD_INLINE static double field_component(const Params&, Spin phi, int) {
    return static_cast<double>(phi);
  }

  /// Per colour-0 site: its 2D links (each link has one colour-0 end) and both sites' powers.
  template <int D>
  LATTICA_HD_INLINE static Sums site_sums(const Params&, Spin phi, const Spin (&nb)[2 * D],
                                          Spin partner) {
    double sum = 0;
    for (int k = 0; k < 2 * D; ++k) sum += static_cast<double>(nb[k]);
    const double x = phi, y = partner;
    return {x + y, x * x + y * y, x * x * x * x + y * y * y * y, x * sum};
  }

  // ---- host side ----
  static std::vector<std::string> observable_names(const Params&) {
    return {"phi", "abs_phi", "phi2", "phi4", "link", "action"};
  }
  static std::vector<std::string> observable_descriptions(const Params&) {
    return {"field average m = (1/V) sum_x phi_x (signed)",
            "|m| = |(1/V) sum_x phi_x|",
            "(1/V) sum_x phi_x^2 (the local <phi^2>, not m^2)",
            "(1/V) sum_x phi_x^4",
            "nearest-neighbour correlator (1/(d V)) sum_x sum_mu phi_x phi_{x+mu}",
            "action density S / V"};
  }
  /// The action S = sum_x [-2 kappa sum_mu phi_x phi_{x+mu} + phi_x^2 + lambda (phi_x^2 - 1)^2
  /// - h phi_x] of a configuration with these sums.
  LATTICA_HD static double action(const Params& p, const Sums& s, double volume) {
    return -2.0 * p.kappa * s.links + s.phi2 + p.lambda * (s.phi4 - 2.0 * s.phi2 + volume) -
           p.field * s.phi;
  }
  /// ln of the Boltzmann weight, -S.
  LATTICA_HD static double log_weight(const Params& p, const Sums& s, double volume) {
    return -action(p, s, volume);
  }
  static void observables(const Params& p, const Sums& s, double volume, double* out) {
    out[0] = s.phi / volume;
    out[1] = std::fabs(s.phi) / volume;
    out[2] = s.phi2 / volume;
    out[3] = s.phi4 / volume;
    out[4] = s.links / (p.dims * volume);
    out[5] = action(p, s, volume) / volume;
  }
  static SnapshotFormat snapshot_format(const Params&) {
    return {element_type_of<Real>(), 1, "field values phi_x"};
  }
  static std::vector<HistogramInfo> histograms() { return {}; }
};

}  // namespace lattica
