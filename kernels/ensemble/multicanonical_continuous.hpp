#pragma once
// Multicanonical walkers for the continuous models (O(n), phi^4) in binned energies, written
// once for both backends. Many independent walkers run side by side, a GPU thread each (a loop
// over walkers on the CPU), each doing sequential single-site Metropolis in lexicographic site
// order (the discrete walkers of multicanonical.hpp, a warp each, go in checkerboard order); the
// energy is a real number here.
//
// Energy E (the part of the action a multicanonical weight replaces; h = 0):
// - O(n): E = -sum_<ij> s_i . s_j, whose canonical weight is exp(-beta E);
// - phi^4: E = -2 sum_<xy> phi_x phi_y, so that S = kappa E + sum_x V(phi_x) with
//   V(phi) = phi^2 + lambda (phi^2 - 1)^2: the canonical weight is exp(-kappa E - sum V) and
//   the walkers sample exp(-sum V) W(E). Reweighting goes in kappa at fixed lambda.
// Bins: bin 0 holds E < low, bins 1 .. count the window [low, low + count width) in equal
// widths, bin count + 1 everything above. A move from s to s' (the model's own Metropolis
// proposal, symmetric) is accepted with min(1, exp(ln W(b') - ln W(b) - (V(s') - V(s)))) when
// both bins lie in the window and refused when it would leave the window. A walker outside
// the window (a start, not a sample) only approaches it: moves that do not take E further
// away are tested with min(1, exp(-(V(s') - V(s)))), the others refused.
//
// The acceptance is a 2^32 fixed-point threshold from exchange_threshold (+, *, / only: the
// same bits on both backends), compared with one word drawn for every test. A walker's energy
// is carried along the sweep and counted anew from its spins at the end of every sweep, so
// rounding cannot accumulate over sweeps. Random numbers: SiteRandom on stream
// multicanonical, replica = walker, site = the site, step = update_step(sweep, 0, 0): the
// proposal's words, then the test's, for each of the `hits` proposals in turn.

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/ensemble/multicanonical.hpp"    // MucaLattice
#include "kernels/ensemble/replica_exchange.hpp"  // exchange_threshold
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// What the walkers' moves need of the model's couplings.
struct MucaContinuousParams {
  double step = 1;    ///< the Metropolis step (update.step)
  double lambda = 0;  ///< phi^4's quartic coupling
};

/// O(n) walkers' physics.
template <class Real, int N>
struct MucaOnPhysics {
  using Model = OnModel<Real, N>;
  using Spin = typename Model::Spin;
  static constexpr int kComponents = N;
  using Params = MucaContinuousParams;
  /// The energy of the bond between a and b.
  LATTICA_HD_INLINE static double bond_energy(const Spin& a, const Spin& b) {
    double s = 0;
    for (int c = 0; c < kComponents; ++c) s += double(a.c[c]) * double(b.c[c]);
    return -s;
  }
  /// The proposal for site s into `to`; false when the move must be refused.
  LATTICA_HD_INLINE static bool propose(const Params& p, const Spin& s, SiteRandom& random,
                                        Spin& to) {
    return Model::metropolis_proposal(static_cast<Real>(p.step), s, random, to);
  }
  /// The change of the non-multicanonical part of the action: none for O(n).
  LATTICA_HD_INLINE static double local_action_change(const Params&, const Spin&, const Spin&) {
    return 0.0;
  }
  /// A walker's order parameter |sum_x s_x|, accumulated component by component.
  struct Order {
    double m[kComponents] = {};
    LATTICA_HD_INLINE void add(const Spin& s) {
      for (int c = 0; c < kComponents; ++c) m[c] += double(s.c[c]);
    }
    LATTICA_HD_INLINE double value() const {
      double m2 = 0;
      for (int c = 0; c < kComponents; ++c) m2 += m[c] * m[c];
      return sqrt(m2);
    }
  };
};

/// phi^4 walkers' physics.
template <class Real>
struct MucaPhi4Physics {
  using Model = Phi4Model<Real>;
  using Spin = Real;
  using Params = MucaContinuousParams;
  LATTICA_HD_INLINE static double bond_energy(Spin a, Spin b) {
    return -2.0 * double(a) * double(b);
  }
  LATTICA_HD_INLINE static bool propose(const Params& p, Spin s, SiteRandom& random, Spin& to) {
    to = Model::metropolis_proposal(static_cast<Spin>(p.step), s, random);
    return true;
  }
  /// V(phi') - V(phi), V(phi) = phi^2 + lambda (phi^2 - 1)^2.
  LATTICA_HD_INLINE static double local_action_change(const Params& p, Spin from, Spin to) {
    const Spin lambda = static_cast<Spin>(p.lambda);
    return double(Model::site_action(to, Spin(0), lambda)) -
           double(Model::site_action(from, Spin(0), lambda));
  }
  /// A walker's order parameter sum_x phi_x (with its sign).
  struct Order {
    double m = 0;
    LATTICA_HD_INLINE void add(Spin s) { m += double(s); }
    LATTICA_HD_INLINE double value() const { return m; }
  };
};

/// What one launch of continuous walker sweeps reads and writes (device or host pointers).
template <class Physics>
struct MucaContinuousWalkers {
  using Spin = typename Physics::Spin;
  uint64_t seed = 0;
  typename Physics::Params params{};
  int hits = 1;
  MucaLattice lattice;
  MucaEnergyBins bins;
  int64_t walkers = 0;
  Spin* spins = nullptr;               ///< [site * walkers + walker]
  double* energy = nullptr;            ///< [walker]: its total energy E
  const double* log_weight = nullptr;  ///< [bin]: ln W; NaN outside the window

  LATTICA_HD_INLINE Spin& at(int64_t x, int64_t walker) const {
    return spins[x * walkers + walker];
  }

  /// The site x + e_a or x - e_a (periodic), whose coordinate along a is c.
  LATTICA_HD_INLINE int64_t up(int64_t x, int a, int64_t c) const {
    return c + 1 < lattice.extent[a] ? x + lattice.stride[a] : x - c * lattice.stride[a];
  }
  LATTICA_HD_INLINE int64_t down(int64_t x, int a, int64_t c) const {
    return c > 0 ? x - lattice.stride[a] : x + (lattice.extent[a] - 1) * lattice.stride[a];
  }

  /// A walker's energy counted from its spins, bond by bond in lexicographic order.
  LATTICA_HD_INLINE double count_energy(int64_t walker) const {
    double e = 0;
    int64_t c[kMucaMaxDims] = {};
    for (int64_t x = 0; x < lattice.volume; ++x) {
      const Spin s = at(x, walker);
      for (int a = 0; a < lattice.d; ++a) e += Physics::bond_energy(s, at(up(x, a, c[a]), walker));
      advance(c);
    }
    return e;
  }

  /// The next site's coordinates in lexicographic order (an odometer).
  LATTICA_HD_INLINE void advance(int64_t* c) const {
    for (int a = lattice.d - 1; a >= 0; --a) {
      if (++c[a] < lattice.extent[a]) break;
      c[a] = 0;
    }
  }

  /// ln of the acceptance of a move from energy e (bin b) to e + de (bin to), with the
  /// local action's change; -infinity (refused) for a move out of the window or, outside it,
  /// away from it.
  LATTICA_HD_INLINE double log_acceptance(double e, int32_t b, double de, int32_t to,
                                          double local_change) const {
    const bool inside = b >= 1 && b <= bins.count;
    if (inside) {
      if (to < 1 || to > bins.count) return -INFINITY;
      return log_weight[to] - log_weight[b] - local_change;
    }
    if (bins.distance(e + de) > bins.distance(e)) return -INFINITY;
    return -local_change;
  }

  /// One sweep of one walker: every site once, in lexicographic order.
  LATTICA_HD_INLINE void sweep(int64_t walker, uint64_t sweep_index) const {
    double e = energy[walker];
    int32_t b = bins.bin(e);
    int64_t c[kMucaMaxDims] = {};
    const uint64_t step = update_step(sweep_index, 0, 0);
    for (int64_t x = 0; x < lattice.volume; ++x) {
      SiteRandom random(seed, RngStream::multicanonical, static_cast<uint32_t>(walker),
                        static_cast<uint64_t>(x), step);
      Spin& site = at(x, walker);
      for (int hit = 0; hit < hits; ++hit) {
        Spin proposal;
        const bool valid = Physics::propose(params, site, random, proposal);
        double de = 0;
        for (int a = 0; a < lattice.d; ++a) {
          const Spin& u = at(up(x, a, c[a]), walker);
          const Spin& v = at(down(x, a, c[a]), walker);
          de += (Physics::bond_energy(proposal, u) - Physics::bond_energy(site, u)) +
                (Physics::bond_energy(proposal, v) - Physics::bond_energy(site, v));
        }
        const int32_t to = bins.bin(e + de);
        const double log_ratio =
            log_acceptance(e, b, de, to, Physics::local_action_change(params, site, proposal));
        const uint32_t word = random.next();  // drawn for every test, whatever its outcome
        if (valid && word < exchange_threshold(log_ratio)) {
          site = proposal;
          e += de;
          b = to;
        }
      }
      advance(c);
    }
    energy[walker] = count_energy(walker);
  }

  /// A walker's initial spin at site x: the model's cold or hot start, replica = walker.
  LATTICA_HD_INLINE Spin initial(bool hot, int64_t walker, int64_t x) const {
    typename Physics::Model::Params p{};
    p.seed = seed;
    return Physics::Model::initial(p, hot, static_cast<uint32_t>(walker), x);
  }

  /// A walker's order parameter (Physics::Order) from its spins.
  LATTICA_HD_INLINE double order(int64_t walker) const {
    typename Physics::Order m;
    for (int64_t x = 0; x < lattice.volume; ++x) m.add(at(x, walker));
    return m.value();
  }
};

}  // namespace lattica
