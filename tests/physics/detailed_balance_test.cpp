// Detailed balance of every single-site move, exactly: for each old state, neighbourhood and
// new state, pi(old) P(old -> new) = pi(new) P(new -> old) with pi the Boltzmann weight, using
// the transition probabilities the fixed-point tables define. Then the update functions
// themselves, driven by Philox, must realise those probabilities (sampled over 10^6 counters).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/models/ising.hpp"
#include "kernels/models/potts.hpp"

namespace lattica {
namespace {

constexpr double kTwo32 = 4294967296.0;

// ---- Ising ----

/// P(new spin = +1 | old spin, neighbour sum) from the table.
double ising_p_up(const IsingParams& p, UpdateAlgorithm a, int d, int old, int sum) {
  const int anti_aligned = (2 * d - old * sum) / 2;
  const double flip =
      static_cast<double>(p.flip_threshold[a == UpdateAlgorithm::heatbath][old > 0][anti_aligned]) /
      kTwo32;
  return old > 0 ? 1.0 - flip : flip;
}

/// The random words of trial t at one site, as the engine would give them in sweep t.
SiteRandom trial_random(uint32_t replica, uint64_t site, int t, uint64_t seed = 2024) {
  return SiteRandom(seed, RngStream::site_update, replica, site,
                    update_step(static_cast<uint64_t>(t), 0, 0));
}

template <int D>
void check_ising(double beta, double h, UpdateAlgorithm a) {
  const IsingParams p = make_ising_params(D, beta, h, 99);
  for (int sum = -2 * D; sum <= 2 * D; sum += 2) {
    // pi(+1) / pi(-1) = exp(2 beta (n + h)) must equal P(-1 -> +1) / P(+1 -> -1).
    const double forward = ising_p_up(p, a, D, -1, sum);
    const double backward = 1.0 - ising_p_up(p, a, D, +1, sum);
    const double ratio = std::exp(2.0 * beta * (sum + h));
    // Each tabulated probability is exact to 2^-33 in absolute terms (32-bit fixed point), so
    // forward - ratio * backward may differ by at most 2^-33 (1 + ratio).
    EXPECT_LE(std::fabs(forward - ratio * backward), std::ldexp(1.0, -33) * (1 + ratio) * 1.0001)
        << "D " << D << " beta " << beta << " h " << h << " n " << sum << ": " << forward << " vs "
        << ratio * backward;

    // The update function realises P(-1 -> +1) (binomial, 6 sigma).
    typename IsingModel::Spin nb[2 * D];
    for (int k = 0; k < 2 * D; ++k) nb[k] = k < (sum + 2 * D) / 2 ? 1 : -1;
    const int trials = 1000000;
    int ups = 0;
    for (int t = 0; t < trials; ++t) {
      LaneRandom random(trial_random(0, 12344, t), t % 32);  // every lane of the group
      int accepted = 0;
      ups += IsingModel::update<D>(p, a, -1, nb, random, accepted) > 0;
    }
    const double sigma = std::sqrt(trials * forward * (1 - forward)) + 1e-9;
    EXPECT_LT(std::fabs(ups - trials * forward), 6 * sigma + 1) << "D " << D << " n " << sum;
  }
}

TEST(DetailedBalance, IsingEveryMoveEveryDimension) {
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    for (double beta : {0.1, 0.44, 1.0}) {
      for (double h : {0.0, 0.3, -0.7}) {
        check_ising<1>(beta, h, a);
        check_ising<2>(beta, h, a);
        check_ising<3>(beta, h, a);
        check_ising<4>(beta, h, a);
      }
    }
  }
}

// ---- Potts ----

/// Exact transition probabilities P(old -> s) the tables and the integer draws define.
template <int D>
std::vector<double> potts_transitions(const PottsParams& p, UpdateAlgorithm a,
                                      const uint8_t (&nb)[2 * D], int old) {
  std::vector<double> prob(static_cast<size_t>(p.q), 0.0);
  auto equal = [&](int s) {
    int n = 0;
    for (int k = 0; k < 2 * D; ++k) n += nb[k] == s;
    return n;
  };
  if (a == UpdateAlgorithm::metropolis) {
    // Proposal k = floor(u (q-1) / 2^32): k is drawn by ceil((k+1) 2^32/(q-1)) - ceil(k 2^32/(q-1))
    // of the 2^32 words, 1/(q-1) up to one word.
    for (int k = 0; k < p.q - 1; ++k) {
      const double lo = std::ceil(k * kTwo32 / (p.q - 1)),
                   hi = std::ceil((k + 1) * kTwo32 / (p.q - 1));
      const int proposal = k >= old ? k + 1 : k;
      const double accept =
          static_cast<double>(
              p.accept[equal(proposal) - equal(old) + 8][(proposal == 0) - (old == 0) + 1]) /
          kTwo32;
      prob[proposal] = (hi - lo) / kTwo32 * std::min(accept, 1.0);
    }
    double stay = 1.0;
    for (int s = 0; s < p.q; ++s) {
      if (s != old) stay -= prob[s];
    }
    prob[old] = stay;
  } else {
    // floor(u total / 2^64) picks s for a fraction w_s / total of the 2^64 words, to 2^-64.
    double total = 0;
    for (int s = 0; s < p.q; ++s) total += static_cast<double>(p.weight[equal(s)][s == 0]);
    for (int s = 0; s < p.q; ++s) prob[s] = static_cast<double>(p.weight[equal(s)][s == 0]) / total;
  }
  return prob;
}

template <int D>
void check_potts(int q, double beta, double h, UpdateAlgorithm a, const uint8_t (&nb)[2 * D]) {
  const PottsParams p = make_potts_params(D, q, beta, h, 7);
  auto log_weight = [&](int s) {
    int n = 0;
    for (int k = 0; k < 2 * D; ++k) n += nb[k] == s;
    return beta * (n + h * (s == 0));
  };
  for (int old = 0; old < q; ++old) {
    const std::vector<double> from_old = potts_transitions<D>(p, a, nb, old);
    for (int s = 0; s < q; ++s) {
      if (s == old) continue;
      const std::vector<double> from_s = potts_transitions<D>(p, a, nb, s);
      // pi(old) P(old -> s) = pi(s) P(s -> old), to the precision of the tables: absolute
      // 2^-33 per Metropolis threshold; heat-bath weights round by 1/2 of 2^55 e^-(beta 2D+..),
      // far below 2^-32 for these couplings.
      const double ratio = std::exp(log_weight(old) - log_weight(s));
      const double tolerance = std::ldexp(1.0, -32);
      EXPECT_LE(std::fabs(ratio * from_old[s] - from_s[old]), tolerance * (1 + ratio))
          << "q " << q << " beta " << beta << " h " << h << " " << old << " -> " << s;
    }
  }
  // The update function realises the distribution from one old state (chi-square, q-1 dof).
  const int old = 1 % q;
  const std::vector<double> want = potts_transitions<D>(p, a, nb, old);
  std::vector<double> counts(static_cast<size_t>(q), 0.0);
  const int trials = 1000000;
  for (int t = 0; t < trials; ++t) {
    SiteRandom random = trial_random(3, 777, t);
    int accepted = 0;
    counts[PottsModel::update<D>(p, a, old, nb, random, accepted)] += 1;
  }
  double chi2 = 0;
  int dof = -1;
  for (int s = 0; s < q; ++s) {
    const double expected = trials * want[s];
    if (expected < 5) {
      EXPECT_LT(counts[s], expected + 6 * std::sqrt(expected) + 6) << "rare state " << s;
      continue;
    }
    chi2 += (counts[s] - expected) * (counts[s] - expected) / expected;
    ++dof;
  }
  // A 1e-6 false-alarm bound for up to ~20 degrees of freedom.
  EXPECT_LT(chi2, dof + 10 * std::sqrt(2.0 * std::max(dof, 1)) + 20) << "q " << q << " dof " << dof;
}

TEST(DetailedBalance, PottsEveryMove) {
  const uint8_t square[4] = {0, 2, 2, 1};
  const uint8_t cube[6] = {0, 0, 1, 2, 2, 2};
  const uint8_t hyper[8] = {3, 3, 3, 0, 1, 1, 4, 2};
  const uint8_t ring[2] = {1, 1};
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    for (double h : {0.0, 0.4, -0.3}) {
      check_potts<2>(3, 1.0, h, a, square);
      check_potts<3>(5, 0.6, h, a, cube);
      check_potts<4>(7, 0.3, h, a, hyper);
      check_potts<1>(2, 1.5, h, a, ring);
      check_potts<2>(20, 1.2, h, a, square);
    }
  }
}

}  // namespace
}  // namespace lattica
