// Multicanonical walkers (issue 21): ln g(E) against exact enumeration of Ising 4x4 and Potts
// q = 3 3x3 (errors by jackknife over blocks of independent walkers), the Wang-Landau schedule,
// and chains that do not depend on the thread count.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "kernels/models/ising.hpp"
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
  for (int32_t e : r.energy_series) EXPECT_LE(e, -9);
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
  walkers->set_thresholds(muca_thresholds(std::vector<double>(49, 0.0), {0, 48}, 2));
  walkers->sweep(0, 3);
  const std::vector<uint8_t> spins = walkers->spins();
  const std::vector<int32_t> bins = walkers->bins(), orders = walkers->orders();
  for (int w = 0; w < 7; ++w) {
    auto at = [&](int i, int j) { return spins[((i + 4) % 4 * 6 + (j + 6) % 6) * 7 + w]; };
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

// A run stopped in Wang-Landau, in thermalization and in production, and continued on fresh
// walkers from its checkpoint, is the uninterrupted run bit for bit.
TEST(Multicanonical, RunContinuedFromACheckpointInEveryPhaseIsTheSameRun) {
  Config c = muca_config("potts", 3, {4, 4}, 2);
  c.muca_lnf_final = 0.05;
  c.thermalization = 40;
  c.measurements = 30;
  c.measure_every = 3;
  c.chain_toml = "chain";
  const MulticanonicalRecord straight = run_cpu(c);
  const uint64_t wang_landau = static_cast<uint64_t>(straight.wang_landau_sweeps);
  for (uint64_t sweep : {wang_landau / 2, wang_landau + 1, wang_landau + 40 + 30}) {
    std::unique_ptr<WalkerEnsemble> first = make_cpu_walkers(walker_settings(c));
    const MulticanonicalCheckpoint at = test::stop_at(c, *first, sweep);
    const int32_t phase = sweep < wang_landau ? 0 : sweep <= wang_landau + 40 ? 1 : 2;
    EXPECT_EQ(at.phase, phase) << "stopped at sweep " << at.sweep;
    std::unique_ptr<WalkerEnsemble> second = make_cpu_walkers(walker_settings(c));
    bool stopped = true;
    const MulticanonicalRecord resumed = run_multicanonical(c, *second, true, &at, {}, &stopped);
    EXPECT_FALSE(stopped);
    test::expect_same_record(straight, resumed);
  }
}

}  // namespace
}  // namespace lattica
