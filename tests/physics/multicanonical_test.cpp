// Multicanonical walkers (issue 21): ln g(E) against exact enumeration of Ising 4x4 and Potts
// q = 3 3x3 (errors by jackknife over blocks of independent walkers), with Wang-Landau's weights
// and with the refinement's, the Wang-Landau schedule, the refinement's estimator on exact
// histograms, and chains that do not depend on the thread count; the continuous models' binned
// walkers reweighted to several couplings against the exact energies of rings (O(2), O(3): Bessel
// sums; phi^4: the transfer matrix by quadrature).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "kernels/models/ising.hpp"
#include "sim/engine/multicanonical/muca_recursion.hpp"
#include "sim/engine/multicanonical/wang_landau.hpp"
#include "sim/run/multicanonical_run.hpp"
#include "tests/support/exact_ising.hpp"
#include "tests/support/exact_potts.hpp"
#include "tests/support/muca_resume.hpp"

namespace lattica {
namespace {

/// A multicanonical configuration of a small lattice (Wang-Landau to ln f < 1e-3).
Config muca_config(const std::string& kind, int q, std::vector<int64_t> dims, int threads = 0) {
  Config c;
  c.model_kind = kind;
  c.q = q;
  c.dims = std::move(dims);
  c.seed = 20261124;
  c.start = "hot";
  c.threads = threads;
  c.multicanonical = true;
  c.muca_walkers = 64;
  c.muca_sweeps_per_iteration = 10;
  c.muca_lnf_initial = 0.5;
  c.muca_lnf_final = 1e-3;
  c.muca_flatness = 0.8;
  c.muca_max_sweeps = 200000;
  c.thermalization = 100;
  c.measurements = 3000;
  c.measure_every = 1;
  return c;
}

MulticanonicalRecord run_cpu(const Config& c) {
  std::unique_ptr<WalkerEnsemble> walkers = make_cpu_walkers(walker_settings(c));
  return run_multicanonical(c, *walkers, true);
}

/// ln g(E) per energy from the walkers of one block set, normalised so that ln g of the lowest
/// energy visited is `lowest` (ln q for the ground state).
std::map<int64_t, double> log_g_of(const MulticanonicalRecord& r, const std::vector<bool>& use,
                                   double lowest) {
  std::map<int64_t, double> counts;
  const size_t walkers = static_cast<size_t>(r.walkers);
  for (size_t i = 0; i < r.energy_series.size(); ++i) {
    if (use[i % walkers]) counts[r.energy_series[i]] += 1;
  }
  std::map<int64_t, double> lng;
  for (size_t k = 0; k < r.energy.size(); ++k) {
    if (counts.count(r.energy[k]))
      lng[r.energy[k]] = std::log(counts[r.energy[k]]) - r.log_weight[k];
  }
  const double ground = lng.begin()->second;  // the lowest energy
  for (auto& [e, v] : lng) v += lowest - ground;
  return lng;
}

/// Checks ln g against exact ln g (energy -> value, the levels the run can visit): the same
/// energies visited, each within 5 jackknife errors (32 blocks of 2 walkers), both normalised
/// at the lowest energy.
void expect_exact_log_g(const MulticanonicalRecord& r, const std::map<int64_t, double>& exact) {
  ASSERT_TRUE(r.converged);
  const int blocks = 32;
  const double q = exact.begin()->second;
  const std::map<int64_t, double> all = log_g_of(r, std::vector<bool>(r.walkers, true), q);
  std::vector<std::map<int64_t, double>> leave_out;
  for (int b = 0; b < blocks; ++b) {
    std::vector<bool> use(r.walkers, true);
    for (int64_t w = b; w < r.walkers; w += blocks) use[w] = false;
    leave_out.push_back(log_g_of(r, use, q));
  }
  ASSERT_EQ(all.size(), exact.size()) << "visited energies differ from the possible ones";
  for (const auto& [e, value] : exact) {
    ASSERT_TRUE(all.count(e)) << "E = " << e << " never visited";
    double mean = 0, var = 0;
    for (const auto& lo : leave_out) mean += lo.at(e) / blocks;
    for (const auto& lo : leave_out) var += (lo.at(e) - mean) * (lo.at(e) - mean);
    const double error = std::sqrt(var * (blocks - 1) / blocks);
    EXPECT_LT(error, 0.1) << "E = " << e;
    EXPECT_LT(std::fabs(all.at(e) - value), 5 * error + 1e-12)
        << "E = " << e << ": ln g " << all.at(e) << " +- " << error << ", exact " << value;
  }
}

/// Exact ln g(E) of the Ising model on c.dims (energy -> value): at beta = 0, P(B) = g(B) / 2^V
/// with E = -B.
std::map<int64_t, double> exact_ising_log_g(const Config& c) {
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_ising(c.dims, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + static_cast<double>(c.volume()) * std::log(2.0);
  return exact;
}

/// The same for the q-state Potts model.
std::map<int64_t, double> exact_potts_log_g(const Config& c) {
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_potts(c.dims, c.q, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + static_cast<double>(c.volume()) * std::log(static_cast<double>(c.q));
  return exact;
}

TEST(Multicanonical, IsingFourByFourLogGIsExact) {
  const Config c = muca_config("ising", 0, {4, 4});
  const MulticanonicalRecord r = run_cpu(c);
  // Exact: at beta = 0, P(B) = g(B) / 2^V with E = -B.
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_ising(c.dims, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + 16 * std::log(2.0);
  expect_exact_log_g(r, exact);
}

TEST(Multicanonical, PottsThreeStatesThreeByThreeLogGIsExact) {
  const Config c = muca_config("potts", 3, {3, 3});
  const MulticanonicalRecord r = run_cpu(c);
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_potts(c.dims, 3, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + 9 * std::log(3.0);
  expect_exact_log_g(r, exact);
}

/// Checks the refined weights themselves: -ln W(E) is ln g(E) up to a constant, within
/// `tolerance` of `exact` at every level (both relative to the lowest energy).
void expect_weights_near_exact(const MulticanonicalRecord& r,
                               const std::map<int64_t, double>& exact, double tolerance) {
  std::map<int64_t, double> from_weights;
  for (size_t k = 0; k < r.energy.size(); ++k) {
    const auto e = static_cast<int64_t>(r.energy[k]);
    if (exact.count(e)) from_weights[e] = -r.log_weight[k];
  }
  ASSERT_EQ(from_weights.size(), exact.size());
  const double base = from_weights.begin()->second, exact_base = exact.begin()->second;
  for (const auto& [e, value] : exact) {
    EXPECT_NEAR(from_weights.at(e) - base, value - exact_base, tolerance) << "E = " << e;
  }
}

TEST(Multicanonical, IsingFourByFourLogGIsExactWithRefinedWeights) {
  Config c = muca_config("ising", 0, {4, 4});
  c.muca_refine_iterations = 3;
  c.muca_refine_sweeps = 400;
  const MulticanonicalRecord r = run_cpu(c);
  EXPECT_EQ(r.refine_iterations, 3);
  EXPECT_EQ(r.refine_sweeps, 400);
  EXPECT_EQ(r.sweeps.front(), r.wang_landau_sweeps + 3 * 400 + c.thermalization + 1);
  const std::map<int64_t, double> exact = exact_ising_log_g(c);
  expect_exact_log_g(r, exact);
  // 64 walkers x 1200 sweeps over 15 levels: the refined differences are good to ~0.02 each.
  expect_weights_near_exact(r, exact, 0.2);
}

TEST(Multicanonical, PottsThreeStatesThreeByThreeLogGIsExactWithRefinedWeights) {
  Config c = muca_config("potts", 3, {3, 3});
  c.muca_refine_iterations = 2;
  c.muca_refine_sweeps = 500;
  const MulticanonicalRecord r = run_cpu(c);
  EXPECT_EQ(r.refine_iterations, 2);
  const std::map<int64_t, double> exact = exact_potts_log_g(c);
  expect_exact_log_g(r, exact);
  expect_weights_near_exact(r, exact, 0.2);
}

/// Exact ln g of the levels whose energy per site lies in [lo, hi].
std::map<int64_t, double> in_window(const std::map<int64_t, double>& exact, double lo, double hi,
                                    int64_t volume) {
  std::map<int64_t, double> out;
  for (const auto& [e, v] : exact) {
    const double per_site = static_cast<double>(e) / static_cast<double>(volume);
    if (per_site >= lo && per_site <= hi) out[e] = v;
  }
  return out;
}

TEST(Multicanonical, IsingWindowFromCanonicalWeightsIsExact) {
  Config c = muca_config("ising", 0, {4, 4});
  c.muca_window = {-1.5, 1.0};  // E = -24 .. 16: neither end of the spectrum
  c.muca_initial_weights = "canonical";
  c.beta = 0.3;
  const MulticanonicalRecord r = run_cpu(c);
  EXPECT_EQ(r.window_first_bin, 8);
  EXPECT_EQ(r.window_last_bin, 28);
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_ising(c.dims, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + 16 * std::log(2.0);
  expect_exact_log_g(r, in_window(exact, -1.5, 1.0, 16));
}

TEST(Multicanonical, PottsWindowThatHotWalkersApproachIsExact) {
  // Hot walkers start near E = -6, below the window's 9 .. 18 satisfied bonds: they approach
  // it first, and only the window is sampled.
  Config c = muca_config("potts", 3, {3, 3});
  c.muca_window = {-2.0, -1.0};
  const MulticanonicalRecord r = run_cpu(c);
  std::map<int64_t, double> exact;
  for (const auto& [b, p] : test::exact_potts(c.dims, 3, 0.0, 0.0).bond_distribution)
    exact[-b] = std::log(p) + 9 * std::log(3.0);
  expect_exact_log_g(r, in_window(exact, -2.0, -1.0, 9));
  for (double e : r.energy_series) EXPECT_LE(e, -9);
}

TEST(Multicanonical, ChainDoesNotDependOnThreads) {
  Config one = muca_config("potts", 10, {4, 4}, 1);
  one.muca_lnf_final = 0.05;
  one.measurements = 50;
  Config two = one;
  two.threads = 2;
  const MulticanonicalRecord a = run_cpu(one), b = run_cpu(two);
  EXPECT_EQ(a.wang_landau_log_g, b.wang_landau_log_g);
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.energy_series, b.energy_series);
  EXPECT_EQ(a.order_series, b.order_series);
}

TEST(Multicanonical, OrderParameterAndBinsAgreeWithTheSpins) {
  WalkerSettings s;
  s.seed = 5;
  s.q = 4;
  s.dims = {4, 6};
  s.walkers = 7;
  std::unique_ptr<WalkerEnsemble> walkers = make_cpu_walkers(s);
  walkers->set_weights(std::vector<double>(49, 0.0), {0, 48});
  walkers->sweep(0, 3);
  const std::vector<uint8_t> spins = walkers->spins();
  const std::vector<int32_t> bins = walkers->bins();
  const std::vector<double> orders = walkers->orders();
  for (int w = 0; w < 7; ++w) {
    auto at = [&](int i, int j) { return spins[w * 24 + (i + 4) % 4 * 6 + (j + 6) % 6]; };
    int satisfied = 0, count[4] = {};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 6; ++j) {
        satisfied += (at(i, j) == at(i + 1, j)) + (at(i, j) == at(i, j + 1));
        ++count[at(i, j)];
      }
    }
    EXPECT_EQ(bins[w], satisfied) << "walker " << w;
    EXPECT_EQ(orders[w], *std::max_element(count, count + 4)) << "walker " << w;
  }
}

TEST(WangLandau, HalvesLnFWhenTheVisitedBinsAreFlat) {
  WangLandau wl(std::vector<double>(4, 0.0), {0, 3}, {1.0, 0.1, 0.8});
  // The mean visited bin rises by ln f: 15 visits of 2 bins raise ln g by 2/15 per visit.
  EXPECT_FALSE(wl.add({10, 0, 5, 0}));  // bin 2 has 5 < 0.8 x 7.5
  EXPECT_DOUBLE_EQ(wl.log_g()[0], 10.0 * 2.0 / 15.0);
  EXPECT_DOUBLE_EQ(wl.log_g()[2], 5.0 * 2.0 / 15.0);
  EXPECT_TRUE(wl.add({0, 0, 5, 0}));  // 10 and 10: flat over the visited bins 0 and 2
  EXPECT_DOUBLE_EQ(wl.log_g()[2], 5.0 * 2.0 / 15.0 + 1.0);
  EXPECT_DOUBLE_EQ(wl.lnf(), 0.5);
  EXPECT_EQ(wl.stages(), 1);
  EXPECT_FALSE(wl.add({4, 1, 4, 0}));  // bin 1 is visited now and far below the mean
  EXPECT_DOUBLE_EQ(wl.log_g()[1], 0.5 * 3.0 / 9.0);
  EXPECT_EQ(wl.visited(), (std::vector<uint8_t>{1, 1, 1, 0}));
}

TEST(WangLandau, IgnoresVisitsOutsideTheWindowAndStartsFromTheInitialEstimate) {
  WangLandau wl({5.0, 4.0, 3.0, 2.0}, {1, 2}, {1.0, 0.1, 0.8});
  EXPECT_TRUE(wl.add({100, 3, 3, 100}));  // flat over bins 1 and 2; bins 0 and 3 not counted
  EXPECT_EQ(wl.log_g(), (std::vector<double>{5.0, 5.0, 4.0, 2.0}));
  EXPECT_EQ(wl.visited(), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_THROW(WangLandau(std::vector<double>(4, 0.0), {2, 4}, {}), std::invalid_argument);
}

// The refinement's estimator on exact expected histograms of the 4x4 Ising model: walkers
// confined to two overlapping halves of the bins (k <= 20 and k >= 12 satisfied bonds) in
// unequal numbers (3 and 1), each sampling H(k) ~ g(k) W(k) on its half. The sum of their
// histograms carries the populations: ln H - ln W, and the recursion fed that sum as one
// histogram, are off across the overlap by the populations' ratio. The recursion fed each
// walker's histogram recovers every exact difference of ln g.
TEST(MucaRecursion, RecoversExactDifferencesFromWalkersOfUnequalPopulations) {
  const int64_t bins = 33;  // k = 0 .. 2V satisfied bonds, E = 2V - 2k
  std::vector<double> exact(bins, 0.0);
  std::vector<uint8_t> possible(bins, 0);
  for (const auto& [b, p] : test::exact_ising({4, 4}, 0.0, 0.0).bond_distribution) {
    const int64_t k = (32 + b) / 2;  // bond sum b = -E
    exact[k] = std::log(p) + 16 * std::log(2.0);
    possible[k] = 1;
  }
  // Wang-Landau's estimate: exact, a ripple, and the upper half raised by the populations.
  std::vector<double> wang_landau(bins);
  for (int64_t k = 0; k < bins; ++k)
    wang_landau[k] = exact[k] + 0.3 * std::sin(1.7 * k) + (k >= 16 ? 1.5 : 0.0);
  const MucaWindow window{0, 32};
  const std::vector<double> log_weight = muca_log_weights(wang_landau, window);
  auto partition = [&](int64_t lo, int64_t hi) {  // sum of g W over bins lo .. hi
    double z = 0;
    for (int64_t k = lo; k <= hi; ++k) z += possible[k] ? std::exp(exact[k] + log_weight[k]) : 0;
    return z;
  };
  // One walker confined to bins lo .. hi: 2^31 visits spread as g W there.
  auto confined = [&](int64_t lo, int64_t hi) {
    const double z = partition(lo, hi);
    std::vector<uint32_t> h(bins, 0);
    for (int64_t k = lo; k <= hi; ++k) {
      if (possible[k])
        h[k] = static_cast<uint32_t>(
            std::llround(2147483648.0 * std::exp(exact[k] + log_weight[k]) / z));
    }
    return h;
  };
  const std::vector<uint32_t> low = confined(0, 20), high = confined(12, 32);
  std::vector<uint32_t> sum(bins);
  for (int64_t k = 0; k < bins; ++k) sum[k] = 3 * (low[k] / 4) + high[k] / 4;  // 3:1, no overflow
  // Differences between two levels far apart on either side of the overlap: 4 and 28.
  const int64_t a = 4, b = 28;
  const double exact_difference = exact[b] - exact[a];
  const double raw = std::log(sum[b]) - log_weight[b] - (std::log(sum[a]) - log_weight[a]);
  // Off by the populations' ratio: 1 walker per Z(12 .. 32) against 3 per Z(0 .. 20).
  const double populations = std::log((1.0 / partition(12, 32)) / (3.0 / partition(0, 20)));
  EXPECT_GT(std::fabs(populations), 0.3);
  EXPECT_NEAR(raw - exact_difference, populations, 1e-6);

  MucaRecursion walkers(wang_landau, possible, window);
  for (int w = 0; w < 3; ++w) walkers.add(low.data(), log_weight);
  walkers.add(high.data(), log_weight);
  walkers.end_iteration();
  EXPECT_EQ(walkers.state().iterations, 1);
  const std::vector<double> refined = walkers.log_g();
  for (int64_t k = 0; k < bins; ++k) {
    if (!possible[k]) continue;
    EXPECT_NEAR(refined[k] - refined[0], exact[k] - exact[0], 1e-6) << "k " << k;
  }
  // The same histograms added as one: the pairs where a population ends carry its weight.
  MucaRecursion summed(wang_landau, possible, window);
  summed.add(sum.data(), log_weight);
  const std::vector<double> one = summed.log_g();
  EXPECT_NEAR(one[b] - one[a], raw, 1e-6);

  // Pairs that no walker visited keep Wang-Landau's difference; the prior weighs in as
  // (1 x its difference + w x the walkers') / (1 + w).
  MucaRecursion lower_only(wang_landau, possible, window);
  lower_only.add(low.data(), log_weight);
  const std::vector<double> partial = lower_only.log_g();
  EXPECT_NEAR(partial[28] - partial[24], wang_landau[28] - wang_landau[24], 1e-12);
  EXPECT_NEAR(partial[10] - partial[4], exact[10] - exact[4], 1e-6);
  // Pair 18, 20 (Ising's odd k are impossible).
  const double h18 = low[18], h20 = low[20];
  const double w = h18 * h20 / (h18 + h20);
  const double d = std::log(h20) - std::log(h18) - (log_weight[20] - log_weight[18]);
  EXPECT_NEAR(partial[20] - partial[18],
              (1.0 * (wang_landau[20] - wang_landau[18]) + w * d) / (1.0 + w), 1e-12);
  EXPECT_EQ(possible[19], 0);
}

TEST(MucaRecursion, UnvisitedBinsFollowTheirVisitedNeighbourAndStateRestores) {
  // Bins 0 .. 5, window 1 .. 4, Wang-Landau visited 1, 2 and 4 (3 never: impossible).
  const std::vector<double> prior = {9.0, 0.0, 1.0, 7.0, 2.0, 9.0};
  const std::vector<uint8_t> visited = {1, 1, 1, 0, 1, 1};
  MucaRecursion r(prior, visited, {1, 4});
  EXPECT_EQ(r.nodes(), (std::vector<int64_t>{1, 2, 4}));
  const std::vector<double> flat(6, 0.0);
  const uint32_t counts[4] = {100, 100, 0, 400};  // bins 1 .. 4: d(1->2) = 0, d(2->4) = ln 4
  r.add(counts, flat);
  r.end_iteration();
  const std::vector<double> g = r.log_g();
  EXPECT_EQ(g[0], 9.0);  // outside the window: Wang-Landau's
  EXPECT_EQ(g[5], 9.0);
  EXPECT_EQ(g[1], 0.0);  // the first visited bin keeps its value
  EXPECT_NEAR(g[2], (1.0 * 1.0 + 50.0 * 0.0) / 51.0, 1e-14);
  EXPECT_NEAR(g[3], 7.0 + (g[2] - 1.0), 1e-14);  // shifted as bin 2
  EXPECT_NEAR(g[4], g[2] + (1.0 * 1.0 + 80.0 * std::log(4.0)) / 81.0, 1e-14);
  MucaRecursion again(prior, visited, {1, 4});
  again.restore(r.state());
  EXPECT_EQ(again.log_g(), g);
  EXPECT_EQ(again.state().iterations, 1);
  EXPECT_THROW(again.restore(MucaRecursionState{0, {1.0}, {1.0}}), std::invalid_argument);
}

/// The exact transition matrix of one walker sweep on a 2 x 2 lattice (q^4 configurations,
/// state index = base-q digits, site 0 most significant): single-site moves in checkerboard order
/// (colour 0, then colour 1, lexicographic within a colour), each proposing one of the other
/// q - 1 states with the multiply-shift's exact probabilities and accepting with the table's
/// threshold / 2^32 (muca_thresholds, as the walkers read it).
std::vector<double> sweep_matrix_2x2(int q, const std::vector<uint64_t>& threshold) {
  const int sites = 4, d = 2, moves = 4 * d + 1;
  int states = 1;
  for (int x = 0; x < sites; ++x) states *= q;
  auto spin = [&](int state, int x) {
    for (int y = sites - 1; y > x; --y) state /= q;
    return state % q;
  };
  auto with = [&](int state, int x, int value) {
    int place = 1;
    for (int y = sites - 1; y > x; --y) place *= q;
    return state + (value - spin(state, x)) * place;
  };
  auto satisfied = [&](int state) {  // forward bonds of the periodic 2 x 2: two per site
    int k = 0;
    for (int x = 0; x < sites; ++x) {
      const int i = x / 2, j = x % 2;
      k += spin(state, x) == spin(state, ((i + 1) % 2) * 2 + j);
      k += spin(state, x) == spin(state, i * 2 + (j + 1) % 2);
    }
    return k;
  };
  // Words u with floor(u (q - 1) / 2^32) = j: the proposal of index j.
  const long double two32 = 4294967296.0L;
  std::vector<long double> proposal(static_cast<size_t>(q - 1));
  for (int j = 0; j < q - 1; ++j) {
    proposal[j] = (std::ceil((j + 1) * two32 / (q - 1)) - std::ceil(j * two32 / (q - 1))) / two32;
  }
  std::vector<double> total(static_cast<size_t>(states * states), 0.0);
  for (int s = 0; s < states; ++s) total[s * states + s] = 1;
  for (int colour = 0; colour < 2; ++colour) {
    for (int x = 0; x < sites; ++x) {
      if ((x / 2 + x % 2) % 2 != colour) continue;
      std::vector<double> site(static_cast<size_t>(states * states), 0.0);
      for (int s = 0; s < states; ++s) {
        const int old = spin(s, x), k = satisfied(s);
        for (int j = 0; j < q - 1; ++j) {
          const int to = with(s, x, j >= old ? j + 1 : j);
          const int dk = satisfied(to) - k;
          const long double accept = threshold[k * moves + dk + 2 * d] / two32;
          site[s * states + to] += static_cast<double>(proposal[j] * accept);
          site[s * states + s] += static_cast<double>(proposal[j] * (1 - accept));
        }
      }
      std::vector<double> next(total.size(), 0.0);
      for (int a = 0; a < states; ++a)
        for (int b = 0; b < states; ++b)
          for (int c = 0; c < states; ++c)
            next[a * states + c] += total[a * states + b] * site[b * states + c];
      total = next;
    }
  }
  return total;
}

// One sweep with frozen weights leaves pi(s) ~ W(E(s)) stationary (to the 2^-32 rounding of the
// thresholds) and connects every configuration with every other (one closed class).
TEST(Multicanonical, OneSweepLeavesTheWeightsStationaryAndConnectsEveryConfiguration) {
  for (const int q : {2, 3}) {
    std::vector<double> log_weight(9);
    for (int k = 0; k <= 8; ++k) log_weight[k] = 0.9 * k + 1.7 * std::sin(1.3 * k);
    const std::vector<uint64_t> threshold = muca_thresholds(log_weight, {0, 8}, 2);
    const std::vector<double> p = sweep_matrix_2x2(q, threshold);
    const int states = q * q * q * q;
    std::vector<double> pi(states);
    double z = 0;
    for (int s = 0; s < states; ++s) {
      int k = 0;  // satisfied bonds, as sweep_matrix_2x2 counts them
      auto spin = [&](int x) { return (s / static_cast<int>(std::pow(q, 3 - x))) % q; };
      for (int x = 0; x < 4; ++x) {
        k += spin(x) == spin(((x / 2 + 1) % 2) * 2 + x % 2);
        k += spin(x) == spin((x / 2) * 2 + (x % 2 + 1) % 2);
      }
      z += pi[s] = std::exp(log_weight[k]);
    }
    for (double& v : pi) v /= z;
    for (int b = 0; b < states; ++b) {
      double row = 0, flow = 0;
      for (int a = 0; a < states; ++a) {
        row += p[b * states + a];
        flow += pi[a] * p[a * states + b];
      }
      EXPECT_NEAR(row, 1.0, 1e-12) << "q " << q << ", state " << b;
      EXPECT_NEAR(flow / pi[b], 1.0, 1e-8) << "q " << q << ", state " << b;
    }
    // One closed class: every state reaches every other within `states` sweeps.
    std::vector<char> reach(static_cast<size_t>(states * states), 0);
    for (int a = 0; a < states; ++a)
      for (int b = 0; b < states; ++b) reach[a * states + b] = a == b || p[a * states + b] > 0;
    for (int m = 0; m < states; ++m)  // Warshall's transitive closure
      for (int a = 0; a < states; ++a)
        for (int b = 0; b < states; ++b)
          reach[a * states + b] |= reach[a * states + m] && reach[m * states + b];
    EXPECT_EQ(std::count(reach.begin(), reach.end(), 1), states * states) << "q " << q;
  }
}

TEST(WangLandau, ThresholdsAcceptWithTheWeightRatio) {
  const std::vector<double> lnw = {0.0, -1.0, -1.0};
  const std::vector<uint64_t> t = muca_thresholds(lnw, {0, 2}, 1);  // moves dk = -2 .. 2
  EXPECT_EQ(t[0 * 5 + 2 + 1], move_threshold(std::exp(-1.0)));
  EXPECT_EQ(t[1 * 5 + 2 - 1], uint64_t(1) << 32);          // uphill in weight: certain
  EXPECT_EQ(t[1 * 5 + 2 + 1], (uint64_t(15) << 32) / 16);  // equal weights: 15/16
  EXPECT_EQ(t[0 * 5 + 2 - 1], 0u);                         // no bin -1
}

TEST(WangLandau, ThresholdsKeepWalkersInTheWindowAndBringOthersIn) {
  const double nan = std::nan("");
  const std::vector<double> lnw = {nan, nan, 0.0, -0.5, 0.0, nan, nan};
  const std::vector<uint64_t> t = muca_thresholds(lnw, {2, 4}, 1);  // moves dk = -2 .. 2
  const uint64_t certain = uint64_t(1) << 32;
  auto at = [&](int k, int dk) { return t[k * 5 + dk + 2]; };
  EXPECT_EQ(at(2, -1), 0u);  // out of the window: refused
  EXPECT_EQ(at(4, 1), 0u);
  EXPECT_EQ(at(2, 1), move_threshold(std::exp(-0.5)));
  EXPECT_EQ(at(3, 1), certain);
  EXPECT_EQ(at(1, 1), certain);  // below the window: never further away
  EXPECT_EQ(at(1, 0), certain);
  EXPECT_EQ(at(1, 2), certain);
  EXPECT_EQ(at(1, -1), 0u);
  EXPECT_EQ(at(5, -2), certain);  // above it likewise
  EXPECT_EQ(at(5, 0), certain);
  EXPECT_EQ(at(5, 1), 0u);
}

// A run of c (thermalization 40, 30 measurements every 3 sweeps) stopped in Wang-Landau, in
// the refinement (with c.muca_refine_iterations > 1), in thermalization and in production, and
// continued on fresh walkers from its checkpoint, is the uninterrupted run bit for bit.
void expect_resumes_in_every_phase(Config c) {
  c.thermalization = 40;
  c.measurements = 30;
  c.measure_every = 3;
  c.chain_toml = "chain";
  const MulticanonicalRecord straight = run_cpu(c);
  const uint64_t wang_landau = static_cast<uint64_t>(straight.wang_landau_sweeps);
  const auto refinement = static_cast<uint64_t>(c.muca_refine_iterations * c.muca_refine_sweeps);
  std::vector<uint64_t> stops = {wang_landau / 2, wang_landau + refinement + 1,
                                 wang_landau + refinement + 40 + 30};
  if (refinement > 0) stops.push_back(wang_landau + 1);  // after the first iteration
  for (uint64_t sweep : stops) {
    std::unique_ptr<WalkerEnsemble> first = make_cpu_walkers(walker_settings(c));
    const MulticanonicalCheckpoint at = test::stop_at(c, *first, sweep);
    const int32_t phase = sweep < wang_landau                      ? 0
                          : sweep <= wang_landau + refinement      ? 3
                          : sweep <= wang_landau + refinement + 40 ? 1
                                                                   : 2;
    EXPECT_EQ(at.phase, phase) << "stopped at sweep " << at.sweep;
    std::unique_ptr<WalkerEnsemble> second = make_cpu_walkers(walker_settings(c));
    bool stopped = true;
    const MulticanonicalRecord resumed = run_multicanonical(c, *second, true, &at, {}, &stopped);
    EXPECT_FALSE(stopped);
    test::expect_same_record(straight, resumed);
  }
}

TEST(Multicanonical, RunContinuedFromACheckpointInEveryPhaseIsTheSameRun) {
  Config c = muca_config("potts", 3, {4, 4}, 2);
  c.muca_lnf_final = 0.05;
  expect_resumes_in_every_phase(c);
}

TEST(Multicanonical, RefinedRunContinuedFromACheckpointInEveryPhaseIsTheSameRun) {
  Config c = muca_config("potts", 3, {4, 4}, 2);
  c.muca_lnf_final = 0.05;
  c.muca_refine_iterations = 3;
  c.muca_refine_sweeps = 20;
  expect_resumes_in_every_phase(c);
}

// ---- O(n) and phi^4: binned energies ------------------------------------------------------

/// A multicanonical configuration of a continuous model on a ring of `length` sites.
Config continuous_config(const std::string& kind, int64_t length, int64_t bins,
                         std::vector<double> window) {
  Config c = muca_config(kind, 0, {length}, 2);
  c.muca_bins = bins;
  c.muca_window = std::move(window);
  c.precision = "double";
  c.muca_walkers = 256;
  c.muca_lnf_final = 2e-3;
  c.thermalization = 200;
  c.measurements = 12000;
  return c;
}

/// <E>/V at `coupling` from the production's series reweighted by exp(-coupling E - ln W(E)),
/// over the walkers `use`.
double reweighted_energy(const MulticanonicalRecord& r, const MucaEnergyBins& bins, double coupling,
                         const std::vector<bool>& use) {
  const size_t walkers = static_cast<size_t>(r.walkers);
  std::vector<double> log_w, e;
  for (size_t i = 0; i < r.energy_series.size(); ++i) {
    if (!use[i % walkers]) continue;
    const double energy = r.energy_series[i];
    log_w.push_back(-coupling * energy - r.log_weight[bins.bin(energy)]);
    e.push_back(energy);
  }
  const double top = *std::max_element(log_w.begin(), log_w.end());
  double z = 0, sum = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const double w = std::exp(log_w[i] - top);
    z += w;
    sum += w * e[i];
  }
  return sum / z / static_cast<double>(r.volume);
}

/// Checks the reweighted energy per site at each coupling against `exact` within 4.5 jackknife
/// errors (16 blocks of walkers), and that the errors resolve `resolution`.
void expect_reweighted_energies(const Config& c, const MulticanonicalRecord& r,
                                const std::vector<std::pair<double, double>>& exact,
                                double resolution) {
  ASSERT_TRUE(r.converged);
  const MucaEnergyBins bins = c.muca_energy_bins();
  for (double e : r.energy_series) {  // the production samples the window only
    ASSERT_GE(e, bins.low);
    ASSERT_LT(e, bins.low + bins.count * bins.width);
  }
  const int blocks = 16;
  for (const auto& [coupling, value] : exact) {
    const double all = reweighted_energy(r, bins, coupling, std::vector<bool>(r.walkers, true));
    std::vector<double> leave_out;
    for (int b = 0; b < blocks; ++b) {
      std::vector<bool> use(r.walkers, true);
      for (int64_t w = b; w < r.walkers; w += blocks) use[w] = false;
      leave_out.push_back(reweighted_energy(r, bins, coupling, use));
    }
    double mean = 0, var = 0;
    for (double x : leave_out) mean += x / blocks;
    for (double x : leave_out) var += (x - mean) * (x - mean);
    const double error = std::sqrt(var * (blocks - 1) / blocks);
    std::printf("coupling %g: e = %.6f +- %.2g, exact %.6f\n", coupling, all, error, value);
    EXPECT_LT(error, resolution) << "coupling " << coupling;
    EXPECT_LT(std::fabs(all - value), 4.5 * error)
        << "coupling " << coupling << ": e " << all << " +- " << error << ", exact " << value;
  }
}

/// The XY ring's energy per site: Z = sum_m I_m(beta)^L.
double xy_ring_energy(int length, double beta) {
  double z = 0, energy = 0;
  for (int m = -40; m <= 40; ++m) {
    const double i_m = std::cyl_bessel_i(std::abs(m), beta);
    const double derivative =
        (std::cyl_bessel_i(std::abs(m - 1), beta) + std::cyl_bessel_i(std::abs(m + 1), beta)) / 2;
    z += std::pow(i_m, length);
    energy -= std::pow(i_m, length - 1) * derivative;
  }
  return energy / z;
}

/// The Heisenberg ring's energy per site: Z = sum_l (2l + 1) (I_{l+1/2}(beta) / sqrt(beta))^L
/// (the eigenvalues of exp(beta s.s') on the sphere), differentiated numerically.
double heisenberg_ring_energy(int length, double beta) {
  auto log_z = [&](double b) {
    double z = 0;
    for (int l = 0; l <= 40; ++l)
      z += (2 * l + 1) * std::pow(std::cyl_bessel_i(l + 0.5, b) / std::sqrt(b), length);
    return std::log(z);
  };
  const double h = 1e-5;
  return -(log_z(beta + h) - log_z(beta - h)) / (2 * h) / length;
}

/// The phi^4 ring's <E>/V, E = -2 sum phi_x phi_{x+1}: tr(D K^(L-1)) / tr(K^L) with the kernel
/// K(x, y) = exp(-V(x)/2 + 2 kappa x y - V(y)/2) on 201 points of [-3.5, 3.5] (the trapezoid
/// rule, converged to 1e-15 for these couplings) and D = -2 x y K.
double phi4_ring_energy(int length, double kappa, double lambda) {
  const int n = 201;
  const double a = 3.5, h = 2 * a / (n - 1);
  std::vector<double> x(n), k(n * n), d(n * n);
  for (int i = 0; i < n; ++i) x[i] = -a + i * h;
  auto v = [&](double p) { return p * p + lambda * (p * p - 1) * (p * p - 1); };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      k[i * n + j] = h * std::exp(-0.5 * v(x[i]) - 0.5 * v(x[j]) + 2 * kappa * x[i] * x[j]);
      d[i * n + j] = -2 * x[i] * x[j] * k[i * n + j];
    }
  }
  auto times = [&](const std::vector<double>& a_, const std::vector<double>& b_) {
    std::vector<double> out(n * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int l = 0; l < n; ++l)
        for (int j = 0; j < n; ++j) out[i * n + j] += a_[i * n + l] * b_[l * n + j];
    return out;
  };
  std::vector<double> power = k;  // K^(L-1)
  for (int p = 2; p < length; ++p) power = times(power, k);
  double numerator = 0, z = 0;
  const std::vector<double> dp = times(d, power), kp = times(k, power);
  for (int i = 0; i < n; ++i) {
    numerator += dp[i * n + i];
    z += kp[i * n + i];
  }
  return numerator / z;
}

TEST(MulticanonicalContinuous, OracleRingEnergiesHaveTheirLimits) {
  // Small couplings: <s . s'> = beta / n per bond; phi^4 at lambda = 0 is Gaussian,
  // <phi^2> = 1/2, so <phi phi'> = 2 kappa / 4 and E/V = -2 <phi phi'> = -kappa.
  EXPECT_NEAR(xy_ring_energy(8, 1e-3), -1e-3 / 2, 1e-7);
  EXPECT_NEAR(heisenberg_ring_energy(8, 1e-3), -1e-3 / 3, 1e-7);
  EXPECT_NEAR(phi4_ring_energy(4, 1e-4, 0.0), -1e-4, 1e-7);
}

TEST(MulticanonicalContinuous, XyRingReweightedToEveryBetaIsExact) {
  Config c = continuous_config("on", 8, 32, {});  // the whole range, E/V in [-1, 1]
  c.n = 2;
  c.step = 1.5;
  const MulticanonicalRecord r = run_cpu(c);
  EXPECT_EQ(r.coupling, "beta");
  expect_reweighted_energies(
      c, r,
      {{0.5, xy_ring_energy(8, 0.5)}, {1.0, xy_ring_energy(8, 1.0)}, {2.0, xy_ring_energy(8, 2.0)}},
      6e-4);
}

TEST(MulticanonicalContinuous, HeisenbergRingInFloatReweightedToEveryBetaIsExact) {
  // The whole range: a window ending at E/V = 0.5 left out enough of beta = 0.5's weight to
  // move its energy by 3 errors.
  Config c = continuous_config("on", 6, 24, {});
  c.n = 3;
  c.precision = "float";
  c.step = 3.0;  // displacements of 1.5 on average (a Gaussian one of standard deviation 1: 1.6)
  c.muca_initial_weights = "canonical";
  c.beta = 1.0;
  const MulticanonicalRecord r = run_cpu(c);
  expect_reweighted_energies(c, r,
                             {{0.5, heisenberg_ring_energy(6, 0.5)},
                              {1.0, heisenberg_ring_energy(6, 1.0)},
                              {2.0, heisenberg_ring_energy(6, 2.0)}},
                             6e-4);
}

TEST(MulticanonicalContinuous, Phi4RingReweightedToEveryKappaIsExact) {
  // The window [-4, 2.5] per site leaves out less than 2e-5 of the 6-site ring's canonical
  // weight at these kappas (Chernoff bounds from the transfer matrix at shifted kappa).
  Config c = continuous_config("phi4", 6, 78, {-4.0, 2.5});
  c.lambda = 1.0;
  c.kappa = 0.3;
  c.step = 1.2;
  c.muca_initial_weights = "canonical";
  const MulticanonicalRecord r = run_cpu(c);
  EXPECT_EQ(r.coupling, "kappa");
  expect_reweighted_energies(c, r,
                             {{0.2, phi4_ring_energy(6, 0.2, 1.0)},
                              {0.3, phi4_ring_energy(6, 0.3, 1.0)},
                              {0.4, phi4_ring_energy(6, 0.4, 1.0)}},
                             1.5e-3);
}

TEST(MulticanonicalContinuous, WalkersEnergiesAndOrdersAgreeWithTheirSpins) {
  for (const bool phi4 : {false, true}) {
    WalkerSettings s;
    s.seed = 11;
    s.model = phi4 ? "phi4" : "on";
    s.n = 3;
    s.lambda = 0.7;
    s.dims = {3, 4};
    s.walkers = 5;
    s.energy_bins = MucaEnergyBins{-40.0, 1.0, 60};
    std::unique_ptr<WalkerEnsemble> walkers = make_cpu_walkers(s);
    std::vector<double> flat(62, 0.0);
    flat.front() = flat.back() = std::nan("");
    walkers->set_weights(flat, {1, 60});
    walkers->sweep(0, 3);
    const std::vector<uint8_t> bytes = walkers->spins();
    const int components = phi4 ? 1 : 3;
    ASSERT_EQ(bytes.size(), 12u * 5 * components * sizeof(double));
    std::vector<double> spins(bytes.size() / sizeof(double));
    std::memcpy(spins.data(), bytes.data(), bytes.size());
    const std::vector<double> energies = walkers->energies(), orders = walkers->orders();
    const std::vector<int32_t> bins = walkers->bins();
    for (int w = 0; w < 5; ++w) {
      auto at = [&](int i, int j, int a) {
        return spins[(((i + 3) % 3 * 4 + (j + 4) % 4) * 5 + w) * components + a];
      };
      double energy = 0, m[3] = {};
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
          for (int a = 0; a < components; ++a) {
            const double bond = at(i, j, a) * (at(i + 1, j, a) + at(i, j + 1, a));
            energy -= phi4 ? 2 * bond : bond;
            m[a] += at(i, j, a);
          }
        }
      }
      const double order = phi4 ? m[0] : std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
      EXPECT_NEAR(energies[w], energy, 1e-12) << "walker " << w;
      EXPECT_NEAR(orders[w], order, 1e-12) << "walker " << w;
      EXPECT_EQ(bins[w], s.energy_bins.bin(energies[w])) << "walker " << w;
    }
    walkers->set_spins(bytes);  // and back: the same energies
    EXPECT_EQ(walkers->energies(), energies);
    EXPECT_THROW(walkers->set_spins(std::vector<uint8_t>(bytes.size() - 8)), std::invalid_argument);
  }
}

TEST(MulticanonicalContinuous, BinsHoldTheirEdgesAndTheRestLiesOutside) {
  const MucaEnergyBins b{-10.0, 0.5, 8};  // the window [-10, -6)
  EXPECT_EQ(b.bin(-10.0), 1);
  EXPECT_EQ(b.bin(-9.5), 2);
  EXPECT_EQ(b.bin(-6.0000001), 8);
  EXPECT_EQ(b.bin(-6.0), 9);
  EXPECT_EQ(b.bin(-10.0000001), 0);
  EXPECT_EQ(b.bin(std::nan("")), 0);
  EXPECT_EQ(b.distance(-11.0), 1.0);
  EXPECT_EQ(b.distance(-7.0), 0.0);
  EXPECT_EQ(b.distance(-5.0), 1.0);
}

TEST(MulticanonicalContinuous, ChainDoesNotDependOnThreads) {
  Config one = continuous_config("on", 6, 24, {});
  one.n = 3;
  one.threads = 1;
  one.muca_walkers = 9;
  one.muca_lnf_final = 0.05;
  one.measurements = 40;
  Config two = one;
  two.threads = 2;
  const MulticanonicalRecord a = run_cpu(one), b = run_cpu(two);
  test::expect_same_record(a, b);
}

// A continuous run stopped in every phase and continued from its checkpoint is the same run.
TEST(MulticanonicalContinuous, RunContinuedFromACheckpointInEveryPhaseIsTheSameRun) {
  Config c = continuous_config("phi4", 4, 36, {-5.5, 3.5});
  c.lambda = 1.0;
  c.kappa = 0.3;
  c.muca_walkers = 16;
  c.muca_lnf_final = 0.05;
  expect_resumes_in_every_phase(c);
  c.muca_refine_iterations = 2;  // and with a refinement of the binned weights
  c.muca_refine_sweeps = 25;
  expect_resumes_in_every_phase(c);
}

}  // namespace
}  // namespace lattica
