#pragma once
// O(n) vector model per-site physics (n = 2 XY, n = 3 Heisenberg, n = 4), written once for
// both backends and templated on the precision of the field.
//
// H = -J sum_<ij> s_i . s_j - h sum_i s_i^0 with unit vectors s_i in R^n, J = 1; the field h
// points along component 0. Every move sees the local field F = sum_nb s_nb + h e_0:
// - Metropolis proposes s' = (s + g) / |s + g| with g of uniform direction and a length uniform
//   in (0, step). The proposal density depends only on the angle between s and s' (g is
//   invariant under every rotation and reflection), so it is symmetric and
//   min(1, exp(beta (s' - s) . F)) is exact. For n <= 3 a proposal and its acceptance take one
//   Philox block (n - 1 words for the direction, one for the length, one for the test); an
//   isotropic Gaussian g took two blocks and two Box-Muller pairs for n = 3.
// - Heat bath samples exp(beta s . F) exactly: for n = 2 the angle to F is von Mises distributed
//   (Best and Fisher's rejection method); for n >= 3, x = cos(angle) is drawn from exp(k x) by
//   inversion and, for n > 3, accepted with probability (1 - x^2)^((n-3)/2), then the direction
//   orthogonal to F is uniform.
// - Over-relaxation reflects s about F: s' = 2 (s . F) F / |F|^2 - s keeps the energy, needs no
//   random number and is exact (it is its own inverse); it is not ergodic on its own.
// Spins are renormalised after every move so rounding cannot make their length drift.

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

constexpr int kMaxOnComponents = 4;

template <class Real, int N>
struct OnSpin {
  Real c[N];
};

struct OnParams {
  uint64_t seed;
  double beta;
  double field;  ///< h, along component 0
  double step;   ///< Metropolis step: the largest length of the displacement g
  int hits;      ///< Metropolis proposals per site and pass
  int dims;      ///< lattice dimension d
};

/// Sums of one configuration, in double whatever the field's precision.
struct OnSums {
  double bonds[4];             ///< sum over bonds along axis a of s_i . s_j
  double current[4];           ///< n = 2: sum over bonds (x, x + e_a) of sin(theta_x - theta_{x+a})
  double m[kMaxOnComponents];  ///< sum_i s_i
  LATTICA_HD OnSums operator+(const OnSums& o) const {
    OnSums r;
    for (int a = 0; a < 4; ++a) {
      r.bonds[a] = bonds[a] + o.bonds[a];
      r.current[a] = current[a] + o.current[a];
      r.m[a] = m[a] + o.m[a];
    }
    return r;
  }
};

/// O(2) and O(3) float vectors are updated in runs of 2 sites (UpdateColour): on an H200 at
/// 256^3 that took O(3) Metropolis from 65.2 to 75.5 site updates per ns, over-relaxation from
/// 89.5 to 99.0 and O(2) Metropolis from 72.8 to 88.0, with 64 registers where one site takes 40.
/// Doubles and n = 4 keep one site.
template <int N>
struct UpdateRun<OnSpin<float, N>> {
  static constexpr int length = N <= 3 ? 2 : 1;
};

template <class Real, int N>
struct OnModel {
  static_assert(N >= 2 && N <= kMaxOnComponents, "O(n) models with n = 2 .. 4");
  using Spin = OnSpin<Real, N>;
  using Params = OnParams;
  using Sums = OnSums;
  static constexpr bool kExactHistograms = false;
  static constexpr bool kTunableStep = true;
  static constexpr bool kFourierLangevin = false;
  /// Rejection loops stop here, a few blocks short of the site's kMaxRngDraws.
  static constexpr uint32_t kLastTry = static_cast<uint32_t>(kMaxRngDraws) - 4;

  LATTICA_HD_INLINE static Real dot(const Spin& a, const Spin& b) {
    Real s = a.c[0] * b.c[0];  // not 0 + ...: the compiler may not drop an addition of zero
    for (int c = 1; c < N; ++c) s += a.c[c] * b.c[c];
    return s;
  }

  /// v / |v| (to 2 ulp, which the next move's renormalisation absorbs); false (v unchanged)
  /// when |v| = 0.
  LATTICA_HD_INLINE static bool normalise(Spin& v) {
    const Real norm2 = dot(v, v);
    if (!(norm2 > Real(0))) return false;
    const Real inverse = real_math::inverse_sqrt(norm2);
    for (int c = 0; c < N; ++c) v.c[c] *= inverse;
    return true;
  }

  /// A uniformly distributed unit vector from the next N - 1 words, in the sphere's own
  /// coordinates (no rejection, no logarithm): n = 2 an angle; n = 3 Archimedes' theorem (the
  /// component along an axis is uniform in (-1, 1), the angle about it uniform); n = 4 two
  /// circles whose squared radii a and 1 - a split uniformly (a is uniform on S^3).
  LATTICA_HD_INLINE static Spin uniform_direction(SiteRandom& random) {
    const Real turn = Real(2) * real_math::kPi<Real>;
    Spin v;
    if constexpr (N == 2) {
      real_math::sincos(turn * uniform_open<Real>(random.next()), &v.c[1], &v.c[0]);
    } else if constexpr (N == 3) {
      const Real z = Real(2) * uniform_open<Real>(random.next()) - Real(1);
      const Real radius2 = (Real(1) - z) * (Real(1) + z);  // > 0: z is in the open (-1, 1)
      const Real radius = radius2 * real_math::inverse_sqrt(radius2);
      Real sine, cosine;
      real_math::sincos(turn * uniform_open<Real>(random.next()), &sine, &cosine);
      v.c[0] = radius * cosine;
      v.c[1] = radius * sine;
      v.c[2] = z;
    } else {
      const Real a = uniform_open<Real>(random.next());
      const Real radii[2] = {real_math::sqrt(a), real_math::sqrt(Real(1) - a)};
      for (int circle = 0; circle < 2; ++circle) {
        Real sine, cosine;
        real_math::sincos(turn * uniform_open<Real>(random.next()), &sine, &cosine);
        v.c[2 * circle] = radii[circle] * cosine;
        v.c[2 * circle + 1] = radii[circle] * sine;
      }
    }
    return v;
  }

  // Embedded cluster moves (Wolff 1989): a random unit vector r per cluster step; a moved
  // cluster is reflected about the plane normal to r, s -> s - 2 (s . r) r, which changes the
  // energy only on its boundary: bonds 1 - exp(min(0, -2 beta (a . r)(b . r))), and the field
  // h e_0 through the ghost spin, 1 - exp(min(0, -2 beta h r_0 (a . r))).
  struct Embedding {
    Real r[N];
  };
  static constexpr bool kClusterSizeEstimator = false;
  static constexpr bool kEqualSpinBonds = false;
  LATTICA_HD_INLINE static Embedding cluster_embedding(const Params&, SiteRandom& random) {
    const Spin v = uniform_direction(random);
    Embedding e;
    for (int c = 0; c < N; ++c) e.r[c] = v.c[c];
    return e;
  }
  LATTICA_HD_INLINE static double along(const Embedding& e, const Spin& s) {
    Real x = 0;
    for (int c = 0; c < N; ++c) x += s.c[c] * e.r[c];
    return static_cast<double>(x);
  }
  LATTICA_HD_INLINE static uint64_t cluster_bond(const Params& p, const Embedding& e, Spin a,
                                                 Spin b) {
    return embedded_bond_threshold(2.0 * p.beta * along(e, a) * along(e, b));
  }
  LATTICA_HD_INLINE static uint64_t ghost_bond(const Params& p, const Embedding& e, Spin a) {
    return embedded_bond_threshold(2.0 * p.beta * p.field * static_cast<double>(e.r[0]) *
                                   along(e, a));
  }
  LATTICA_HD_INLINE static bool cluster_move_draws(bool single) { return !single; }
  static constexpr int kClusterMoveBits = 1;
  LATTICA_HD_INLINE static Spin cluster_move(const Params&, const Embedding& e, Spin s,
                                             uint32_t word, bool single) {
    if (!single && !(word >> 31)) return s;
    const Real twice = Real(2) * static_cast<Real>(along(e, s));
    Spin r;
    for (int c = 0; c < N; ++c) r.c[c] = s.c[c] - twice * e.r[c];
    return normalise(r) ? r : s;
  }

  /// All along component 0 (cold) or independent uniform directions (hot).
  LATTICA_HD_INLINE static Spin initial(const Params& p, bool hot, uint32_t replica, int64_t site) {
    if (!hot) {
      Spin s{};
      s.c[0] = Real(1);
      return s;
    }
    SiteRandom random(p.seed, RngStream::initial_state, replica, static_cast<uint64_t>(site), 0);
    return uniform_direction(random);
  }

  template <int D>
  LATTICA_HD_INLINE static Spin local_field(const Params& p, const Spin (&nb)[2 * D]) {
    Spin f = nb[0];
    for (int k = 1; k < 2 * D; ++k) {
      for (int c = 0; c < N; ++c) f.c[c] += nb[k].c[c];
    }
    f.c[0] += static_cast<Real>(p.field);
    return f;
  }

  /// Metropolis' proposal (s + g) / |s + g|, g of uniform direction and a length uniform in
  /// (0, step), into `proposal`; false when it has no direction (then the move must be
  /// refused). Multicanonical walkers propose the same way.
  LATTICA_HD_INLINE static bool metropolis_proposal(Real step, const Spin& s, SiteRandom& random,
                                                    Spin& proposal) {
    const Spin direction = uniform_direction(random);
    const Real length = step * uniform_open<Real>(random.next());
    for (int c = 0; c < N; ++c) proposal.c[c] = s.c[c] + length * direction.c[c];
    return normalise(proposal);
  }

  template <int D>
  LATTICA_HD_INLINE static Spin update(const Params& p, UpdateAlgorithm algorithm, Spin s,
                                       const Spin (&nb)[2 * D], SiteRandom& random, int& accepted) {
    const Spin f = local_field<D>(p, nb);
    const Real beta = static_cast<Real>(p.beta);
    if (algorithm == UpdateAlgorithm::overrelaxation) {
      const Real f2 = dot(f, f);
      if (!(f2 > Real(0))) return s;
      const Real inverse_norm = real_math::inverse_sqrt(f2);  // a division costs ~10 instructions
      const Real scale = Real(2) * dot(s, f) * inverse_norm * inverse_norm;
      Spin r;
      for (int c = 0; c < N; ++c) r.c[c] = scale * f.c[c] - s.c[c];
      return normalise(r) ? r : s;
    }
    if (algorithm == UpdateAlgorithm::heatbath) return heat_bath(beta, s, f, random);
    const Real step = static_cast<Real>(p.step);
    for (int hit = 0; hit < p.hits; ++hit) {
      Spin proposal;
      const bool valid = metropolis_proposal(step, s, random, proposal);
      Real change = (s.c[0] - proposal.c[0]) * f.c[0];  // beta dE = -beta (s' - s) . F
      for (int c = 1; c < N; ++c) change += (s.c[c] - proposal.c[c]) * f.c[c];
      if (metropolis_accept<Real>(random, beta * change) && valid) {
        s = proposal;
        ++accepted;
      }
    }
    return s;
  }

  /// A new spin from exp(beta s . F). Keeps the old spin in the (never observed) case that the
  /// rejection loop exhausts the site's kMaxRngDraws Philox blocks.
  LATTICA_HD_INLINE static Spin heat_bath(Real beta, const Spin& old, const Spin& f,
                                          SiteRandom& random) {
    const Real f2 = dot(f, f);
    const Real inverse_norm = f2 > Real(0) ? real_math::inverse_sqrt(f2) : Real(0);
    const Real k = beta * f2 * inverse_norm;  // beta |F|
    if (!(k > Real(0))) return uniform_direction(random);
    Spin axis;
    for (int c = 0; c < N; ++c) axis.c[c] = f.c[c] * inverse_norm;
    if constexpr (N == 2) {
      Real x;
      if (!von_mises_cosine(k, random, x)) return old;
      const Real sine = real_math::sqrt(x * x < Real(1) ? Real(1) - x * x : Real(0));
      const Real sign = random.next() >> 31 ? Real(1) : Real(-1);
      Spin s;
      s.c[0] = x * axis.c[0] - sign * sine * axis.c[1];
      s.c[1] = x * axis.c[1] + sign * sine * axis.c[0];
      return normalise(s) ? s : old;
    } else {
      return heat_bath_n3(k, axis, old, random);
    }
  }

  /// Heat bath for n >= 3 given k = beta |F| > 0 and the unit vector along F.
  LATTICA_HD_INLINE static Spin heat_bath_n3(Real k, const Spin& axis, const Spin& old,
                                             SiteRandom& random) {
    // x = cos(angle to F) from exp(k x) on [-1, 1] by inversion, written with log1p/expm1 so
    // it is accurate for every k; for n > 3, the measure's (1 - x^2)^((n-3)/2) by rejection.
    Real x;
    while (true) {
      if (random.blocks_drawn() >= kLastTry) return old;
      x = Real(1) +
          real_math::log1p(uniform_open<Real>(random.next()) * real_math::expm1(Real(-2) * k)) / k;
      if (x < Real(-1)) x = Real(-1);
      if (N == 3) break;
      const Real v = uniform_open<Real>(random.next());
      const Real one_minus_x2 = Real(1) - x * x;
      if (v < (N == 4 ? real_math::sqrt(one_minus_x2)
                      : real_math::pow(one_minus_x2, Real(N - 3) / Real(2))))
        break;
    }
    // A uniform direction orthogonal to F: a Gaussian vector with its component along F removed.
    Spin t;
    do {
      if (random.blocks_drawn() >= kLastTry) return old;
      gaussian_vector<Real, N>(random, t.c);
      const Real along = dot(t, axis);
      for (int c = 0; c < N; ++c) t.c[c] -= along * axis.c[c];
    } while (!normalise(t));
    const Real sine = real_math::sqrt(x * x < Real(1) ? Real(1) - x * x : Real(0));
    Spin s;
    for (int c = 0; c < N; ++c) s.c[c] = x * axis.c[c] + sine * t.c[c];
    return normalise(s) ? s : old;
  }

  /// x = cos(theta) for theta von Mises distributed with concentration k > 0 (Best and Fisher
  /// 1979), with the algebra rearranged so nothing cancels at small k. False when the site's
  /// random numbers run out.
  LATTICA_HD_INLINE static bool von_mises_cosine(Real k, SiteRandom& random, Real& x) {
    const Real root = real_math::sqrt(Real(1) + Real(4) * k * k);
    const Real r = Real(1) + root;
    const Real rho = Real(2) * k * r / ((root + Real(1)) * (r + real_math::sqrt(Real(2) * r)));
    const Real s = (Real(1) + rho * rho) / (Real(2) * rho);
    const Real s2_minus_1 = (Real(1) - rho * rho) * (Real(1) - rho * rho) / (Real(4) * rho * rho);
    while (random.blocks_drawn() < kLastTry) {
      const Real z = real_math::cos(real_math::kPi<Real> * uniform_open<Real>(random.next()));
      const Real w = (Real(1) + s * z) / (s + z);
      const Real y = k * s2_minus_1 / (s + z);  // = k (s - w)
      const Real v = uniform_open<Real>(random.next());
      if (y * (Real(2) - y) - v >= Real(0) || real_math::log(y / v) + Real(1) - y >= Real(0)) {
        x = w < Real(-1) ? Real(-1) : (w > Real(1) ? Real(1) : w);
        return true;
      }
    }
    return false;
  }

  /// The order-parameter field (for structure factors): the spin's components.
  static int field_components(const Params&) { return N; }
  LATTICA_HD_INLINE static double field_component(const Params&, const Spin& s, int c) {
    return static_cast<double>(s.c[c]);
  }

  /// Per colour-0 site: its 2D bonds by axis (nb[2a] = +a, nb[2a+1] = -a) and both sites' spins.
  template <int D>
  LATTICA_HD_INLINE static Sums site_sums(const Params&, const Spin& s, const Spin (&nb)[2 * D],
                                          const Spin& partner) {
    Sums out{};
    for (int a = 0; a < D; ++a) {
      const Spin& up = nb[2 * a];
      const Spin& down = nb[2 * a + 1];
      out.bonds[a] = static_cast<double>(dot(s, up)) + static_cast<double>(dot(s, down));
      if (N == 2) {
        // sin(theta_x - theta_{x+a}) + sin(theta_{x-a} - theta_x)
        out.current[a] = static_cast<double>(s.c[1] * up.c[0] - s.c[0] * up.c[1]) +
                         static_cast<double>(down.c[1] * s.c[0] - down.c[0] * s.c[1]);
      }
    }
    for (int c = 0; c < N; ++c)
      out.m[c] = static_cast<double>(s.c[c]) + static_cast<double>(partner.c[c]);
    return out;
  }

  // ---- host side ----
  static std::vector<std::string> observable_names(const Params& p) {
    std::vector<std::string> names{"energy", "magnetization"};
    for (int c = 0; c < N; ++c) names.push_back("magnetization_" + std::to_string(c));
    if (N == 2) {
      for (int a = 0; a < p.dims; ++a) names.push_back("helicity_" + std::to_string(a));
    }
    return names;
  }
  static std::vector<std::string> observable_descriptions(const Params& p) {
    std::vector<std::string> d{"energy per site, (-sum_<ij> s_i . s_j - h sum_i s_i^0) / V",
                               "modulus |m| of the magnetization vector m = (1/V) sum_i s_i"};
    for (int c = 0; c < N; ++c)
      d.push_back("component " + std::to_string(c) + " of m = (1/V) sum_i s_i (h is along 0)");
    if (N == 2) {
      for (int a = 0; a < p.dims; ++a) {
        const std::string axis = std::to_string(a);
        d.push_back("helicity modulus estimator along axis " + axis +
                    ": (1/V) [sum_x cos(theta_x - theta_{x+" + axis +
                    "}) - beta (sum_x sin(theta_x - theta_{x+" + axis +
                    "}))^2]; its mean is the spin stiffness Upsilon_" + axis);
      }
    }
    return d;
  }
  /// ln of the Boltzmann weight, -beta H = beta (sum_<ij> s_i . s_j + h M_0).
  LATTICA_HD static double log_weight(const Params& p, const Sums& s, double) {
    double bonds = 0;
    for (int a = 0; a < p.dims; ++a) bonds += s.bonds[a];
    return p.beta * (bonds + p.field * s.m[0]);
  }
  static void observables(const Params& p, const Sums& s, double volume, double* out) {
    double bonds = 0, m2 = 0;
    for (int a = 0; a < p.dims; ++a) bonds += s.bonds[a];
    for (int c = 0; c < N; ++c) m2 += s.m[c] * s.m[c];
    int o = 0;
    out[o++] = (-bonds - p.field * s.m[0]) / volume;
    out[o++] = std::sqrt(m2) / volume;
    for (int c = 0; c < N; ++c) out[o++] = s.m[c] / volume;
    if (N == 2) {
      for (int a = 0; a < p.dims; ++a)
        out[o++] = (s.bonds[a] - p.beta * s.current[a] * s.current[a]) / volume;
    }
  }
  static SnapshotFormat snapshot_format(const Params&) {
    return {element_type_of<Real>(), N,
            "unit spin vectors, n components along the last axis (h is along component 0)"};
  }
  static std::vector<HistogramInfo> histograms() { return {}; }
};

}  // namespace lattica
