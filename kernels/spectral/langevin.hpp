#pragma once
// Fourier-accelerated Langevin dynamics for phi^4, as site and mode functors shared by both
// backends (the step itself is sequenced by sim/engine/fourier_langevin.hpp).
//
// The action is split as S = (1/2) phi A phi + sum_x u(phi_x), where A has the Fourier symbol
// M'(k) = 2 + shift - 4 kappa sum_mu cos k_mu (the hopping and mass terms, plus a shift that
// keeps it positive) and u is the model's local remainder with force F = -u'(phi)
// (Phi4Model::langevin_potential / langevin_force). Preconditioned (Fourier-accelerated)
// Langevin dynamics d phi = -A^{-1} dS/dphi dt + sqrt(2 A^{-1}) dW, integrated with the
// free part exact and F frozen over the step, gives the proposal
//   phi' = a phi + (1 - a) A^{-1} F(phi) + sqrt(1 - a^2) A^{-1/2} xi,   a = exp(-epsilon),
// xi independent standard normal per site: every free mode relaxes at the same rate whatever
// its M'(k), and the Gaussian part is sampled exactly for any step. The Metropolis-adjusted
// version accepts phi' with min(1, pi(phi') q(phi|phi') / (pi(phi) q(phi'|phi))), where the
// Gaussian terms cancel, leaving (MalaLocalTerms, KernelQuadratic)
//   log alpha = -sum_x [u(phi') - u(phi)]
//               + sum_x [(phi - a phi') F(phi') - (phi' - a phi) F(phi)] / (1 + a)
//               - (1 - a) / (2 (1 + a)) [F(phi') A^{-1} F(phi') - F(phi) A^{-1} F(phi)].

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/uniform.hpp"
#include "kernels/spectral/complex.hpp"

namespace lattica {

/// The Fourier symbol M'(k) of the free part on the half spectrum of a real-to-complex FFT of a
/// row-major lattice (last axis L/2 + 1 modes), tabulated as 1 / M'(k) whenever the shift
/// changes; functor over the modes held (a rank's rows of the spectrum start at first_mode).
struct FreeKernel {
  int64_t dims[4];
  int rank;
  double kappa;
  double shift;
  double* inverse;     ///< out: 1 / M'(k) per half-spectrum mode held
  int64_t first_mode;  ///< the half-spectrum index of inverse[0]

  LATTICA_HD_INLINE void operator()(int64_t held) const {
    const int64_t last = dims[rank - 1];
    const int64_t mode = first_mode + held;
    int64_t rest = mode / (last / 2 + 1);
    double cos_sum = real_math::cos(2.0 * real_math::kPi<double> * (mode % (last / 2 + 1)) / last);
    for (int a = rank - 2; a >= 0; --a) {
      cos_sum += real_math::cos(2.0 * real_math::kPi<double> * (rest % dims[a]) / dims[a]);
      rest /= dims[a];
    }
    inverse[held] = 1.0 / (2.0 + shift - 4.0 * kappa * cos_sum);
  }
};

/// How many modes of the full spectrum half-spectrum mode `mode` stands for: 1 on the planes
/// k_last = 0 and k_last = pi (where the half spectrum holds both k and -k), otherwise 2.
LATTICA_HD_INLINE int half_spectrum_weight(int64_t mode, int64_t last) {
  const int64_t n_last = mode % (last / 2 + 1);
  return (n_last == 0 || 2 * n_last == last) ? 1 : 2;
}

/// force[i] = F(phi_i) of the model's local remainder and, when noise is set, noise[i] a
/// standard normal deviate keyed by (replica, lexicographic site of the whole lattice, sweep,
/// pass); functor over replicas * `volume` lexicographic sites held (a rank's rows of axis 0
/// start at whole-lattice site first_site).
template <class Model>
struct LangevinForces {
  typename Model::Params params;
  double shift;
  const typename Model::Spin* phi;  ///< lexicographic, replicas one after another
  double* force;
  double* noise;   ///< or null
  int64_t volume;  ///< sites held per replica
  int64_t first_site;
  uint64_t sweep;
  uint32_t pass;

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    force[i] = Model::langevin_force(params, shift, static_cast<double>(phi[i]));
    if (noise) {
      const int64_t replica = i / volume;
      const int64_t site = first_site + i - replica * volume;
      SiteRandom random(params.seed, RngStream::site_update, static_cast<uint32_t>(replica),
                        static_cast<uint64_t>(site), update_step(sweep, pass, 0));
      double unused;
      gaussian_pair(random, noise[i], unused);
    }
  }
};

/// In Fourier space, the proposal's displacement from a phi:
/// noise_k <- (1 - a) F_k / M'(k) + sqrt((1 - a^2) / M'(k)) xi_k; functor over replicas * modes.
struct LangevinDisplacement {
  const double* inverse_kernel;  ///< 1 / M'(k)
  const Complex* force;          ///< F_k
  Complex* noise;                ///< xi_k in, the displacement out
  int64_t modes;
  double a;

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const double g = inverse_kernel[i % modes];
    const double drift = (1.0 - a) * g, spread = real_math::sqrt((1.0 - a * a) * g);
    noise[i] = {drift * force[i].re + spread * noise[i].re,
                drift * force[i].im + spread * noise[i].im};
  }
};

/// F A^{-1} F = (1/V) sum_k |F_k|^2 / M'(k) over the full spectrum of one replica, as a sum
/// over its half spectrum; functor over the modes.
struct KernelQuadratic {
  const double* inverse_kernel;
  const Complex* force;  ///< one replica's F_k
  int64_t last;          ///< the last lattice extent
  double volume;

  LATTICA_HD_INLINE double operator()(int64_t k) const {
    return half_spectrum_weight(k, last) * norm2(force[k]) * inverse_kernel[k] / volume;
  }
};

/// out[i] = a phi[i] + displacement[i] / V (the inverse FFT is unnormalised), rounded to the
/// field's precision; functor over replicas * V. out may be phi.
template <class Real>
struct LangevinMove {
  const Real* phi;
  const double* displacement;
  Real* out;
  double a;
  double inverse_volume;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    out[i] = static_cast<Real>(a * static_cast<double>(phi[i]) + displacement[i] * inverse_volume);
  }
};

/// The local parts of the MALA acceptance of one replica (see the top of this file).
struct MalaLocal {
  double potential_change;  ///< sum_x [u(phi') - u(phi)]
  double cross;             ///< sum_x [(phi - a phi') F(phi') - (phi' - a phi) F(phi)]
  LATTICA_HD MalaLocal operator+(const MalaLocal& o) const {
    return {potential_change + o.potential_change, cross + o.cross};
  }
};

/// Per site of one replica; functor over V.
template <class Model>
struct MalaLocalTerms {
  typename Model::Params params;
  double shift;
  double a;
  const typename Model::Spin* phi;
  const typename Model::Spin* proposal;
  const double* force;           ///< F(phi)
  const double* proposed_force;  ///< F(phi')
  LATTICA_HD_INLINE MalaLocal operator()(int64_t x) const {
    const double old_phi = phi[x], new_phi = proposal[x];
    return {Model::langevin_potential(params, shift, new_phi) -
                Model::langevin_potential(params, shift, old_phi),
            (old_phi - a * new_phi) * proposed_force[x] - (new_phi - a * old_phi) * force[x]};
  }
};

/// Accepts or rejects every replica's proposal: accept[r], and the accepted count added to
/// *accepted_total. quadratic[2 r], quadratic[2 r + 1] hold F A^{-1} F before and after.
/// One uniform per replica, keyed by (replica, sweep, pass). Functor over one index.
struct MalaDecide {
  const MalaLocal* local;
  const double* quadratic;
  uint8_t* accept;
  long long* accepted_total;
  uint64_t seed;
  uint64_t sweep;
  uint32_t pass;
  int replicas;
  double a;

  LATTICA_HD_INLINE void operator()(int64_t) const {
    for (int r = 0; r < replicas; ++r) {
      const double log_alpha =
          -local[r].potential_change + local[r].cross / (1.0 + a) -
          (1.0 - a) / (2.0 * (1.0 + a)) * (quadratic[2 * r + 1] - quadratic[2 * r]);
      const double u = uniform_open<double>(philox_u32(
          seed, RngStream::mala_accept, static_cast<uint32_t>(r), 0, update_step(sweep, pass, 0)));
      accept[r] = log_alpha >= 0.0 || u < real_math::exp(log_alpha);
      *accepted_total += accept[r];
    }
  }
};

/// phi[i] <- proposal[i] in the replicas whose proposal was accepted; functor over replicas * V.
template <class Real>
struct MalaApply {
  const uint8_t* accept;
  const Real* proposal;
  Real* phi;
  int64_t volume;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    if (accept[i / volume]) phi[i] = proposal[i];
  }
};

/// phi_i^2, for the mean that sets the kernel's shift; functor over any range of sites.
template <class Real>
struct FieldSquared {
  const Real* phi;
  LATTICA_HD_INLINE double operator()(int64_t i) const {
    const double x = phi[i];
    return x * x;
  }
};

}  // namespace lattica
