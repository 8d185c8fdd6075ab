// Parallel tempering's exchange step on its own: the keyed decision, the alternating rounds,
// the round-trip bookkeeping, and exactly (by enumeration) that the joint chain of
// configurations and permutation keeps the product of the rungs' Boltzmann distributions.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/models/ising.hpp"
#include "kernels/models/replica_params.hpp"
#include "sim/engine/tempering_ladder.hpp"

namespace lattica {
namespace {

constexpr double kTwo32 = 4294967296.0;

TEST(ExchangeDecision, ThresholdIsTheMetropolisProbability) {
  EXPECT_EQ(exchange_threshold(0.0), uint64_t(1) << 32);
  EXPECT_EQ(exchange_threshold(3.5), uint64_t(1) << 32);
  EXPECT_EQ(exchange_threshold(std::log(0.5)), uint64_t(1) << 31);
  EXPECT_EQ(exchange_threshold(-100.0), 0u);
  EXPECT_EQ(exchange_threshold(std::nan("")), 0u);
}

// exchange_exp (the threshold's exp, the same bits on host and GPU) against the library's.
TEST(ExchangeDecision, PortableExpIsWithinFourUlpOfTheLibrarys) {
  double worst = 0;
  for (int i = 0; i <= 640000; ++i) {
    const double x = -64.0 * i / 640000.0 - 1e-7 * (i % 7);
    const double want = std::exp(x);
    const double ulps = std::fabs(exchange_exp(x) - want) / (std::nextafter(want, 2.0) - want);
    worst = std::max(worst, ulps);
  }
  EXPECT_LE(worst, 4.0);
  EXPECT_EQ(exchange_exp(0.0), 1.0);
}

TEST(ExchangeDecision, KeyedBySeedSweepLadderAndPair) {
  const double log_ratio = std::log(0.37);
  int accepted = 0;
  for (uint32_t pair = 0; pair < 4000; ++pair) {
    const uint32_t u = philox_u32(7, RngStream::replica_exchange, 3, pair, 11);
    const bool expected = u < exchange_threshold(log_ratio);
    EXPECT_EQ(exchange_accepted(7, 11, 3, pair, log_ratio), expected);
    accepted += expected;
  }
  EXPECT_NEAR(accepted / 4000.0, 0.37, 0.04);
  EXPECT_TRUE(exchange_accepted(7, 11, 3, 0, 0.0));  // certain: draws nothing
}

TEST(ExchangeRound, AlternatesEvenAndOddPairs) {
  TemperingState t = initial_tempering(5, 2);
  const auto flat = [](int, int) { return 0.0; };  // every swap is certain
  exchange_round(t, 1, 4, 4, flat);                // round 1: odd pairs (1, 2), (3, 4)
  EXPECT_EQ(t.rung_of_slot, (std::vector<int32_t>{0, 2, 1, 4, 3, 0, 2, 1, 4, 3}));
  EXPECT_EQ(t.attempts, (std::vector<int64_t>{0, 2, 0, 2}));
  exchange_round(t, 1, 8, 4, flat);  // round 2: even pairs (0, 1), (2, 3)
  EXPECT_EQ(t.rung_of_slot, (std::vector<int32_t>{1, 3, 0, 4, 2, 1, 3, 0, 4, 2}));
  EXPECT_EQ(t.attempts, (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(t.accepts, t.attempts);
  EXPECT_TRUE(exchange_due(8, 4));
  EXPECT_FALSE(exchange_due(0, 4));
  EXPECT_FALSE(exchange_due(9, 4));
}

// The backend's rounds (ExchangePairs, a thread per pair) take exchange_round's decisions: 3
// ladders of 7 Ising rungs, sums that make about half the swaps uncertain, 200 rounds of both
// parities, the threads in reverse order; then the same permutation, inverse, statistics
// (account_round from the backend's log), and each slot's couplings as the passes read them
// (ReplicaParams through the slot's rung).
TEST(ExchangeRound, PairByPairOnABackendIsTheHostsRound) {
  constexpr int kRungs = 7, kLadders = 3, kSlots = kRungs * kLadders;
  std::vector<IsingParams> rungs;
  for (int k = 0; k < kRungs; ++k) rungs.push_back(make_ising_params(2, 0.3 + 0.03 * k, 0.01, 5));
  std::vector<IsingModel::Sums> sums(kSlots);
  TemperingState host = initial_tempering(kRungs, kLadders);
  TemperingState backend = host;
  std::vector<int32_t> rung_of_slot = host.rung_of_slot, slot_of_rung(kSlots), log(kSlots, -1);
  for (int s = 0; s < kSlots; ++s) slot_of_rung[s] = s;  // slot l * rungs + k at rung k
  int accepted = 0;
  for (uint64_t sweep = 1; sweep <= 200; ++sweep) {
    for (int s = 0; s < kSlots; ++s) {  // energies that change every round
      sums[s].bonds =
          static_cast<long long>(philox_u32(9, RngStream::initial_state, s, sweep, 0) % 61) - 30 +
          4 * s;
      sums[s].magnetization = s % 5 - 2;
    }
    exchange_round(host, 77, sweep, 1, [&](int slot, int rung) {
      return IsingModel::log_weight(rungs[static_cast<size_t>(rung)],
                                    sums[static_cast<size_t>(slot)], 64.0);
    });
    const std::vector<int32_t> before = rung_of_slot;
    const ExchangePairs<IsingModel> round{
        sums.data(), rungs.data(), rung_of_slot.data(),       slot_of_rung.data(),
        log.data(),  kRungs,       exchange_parity(sweep, 1), 64.0,
        77,          sweep};
    for (int i = kSlots - 1; i >= 0; --i) round(i);
    const ReplicaParams<IsingParams> couplings{rungs.front(), rungs.data(), rung_of_slot.data()};
    ASSERT_EQ(rung_of_slot, host.rung_of_slot) << "sweep " << sweep;
    ASSERT_EQ(log, rung_of_slot);
    for (int s = 0; s < kSlots; ++s) {
      ASSERT_EQ(slot_of_rung[s - s % kRungs + rung_of_slot[s]], s);
      const IsingParams table = couplings.with(s, [](const IsingParams& p) { return p; });
      ASSERT_EQ(table.beta, rungs[static_cast<size_t>(rung_of_slot[s])].beta);
      ASSERT_EQ(table.flip_threshold[0][1][3],
                rungs[static_cast<size_t>(rung_of_slot[s])].flip_threshold[0][1][3]);
    }
    for (int s = 0; s < kSlots; ++s) accepted += rung_of_slot[s] != before[s];
    account_round(backend, log.data(), sweep, 1);
    log.assign(kSlots, -1);  // each round must write every slot's entry
  }
  EXPECT_EQ(backend.attempts, host.attempts);
  EXPECT_EQ(backend.accepts, host.accepts);
  EXPECT_EQ(backend.round_trip_sweeps, host.round_trip_sweeps);
  EXPECT_EQ(backend.up_visits, host.up_visits);
  // Neither all refused nor all certain: the keyed draws decided.
  EXPECT_GT(accepted, 200);
  EXPECT_LT(accepted, 200 * kSlots * 9 / 10);
}

TEST(ExchangeRound, RefusesSwapsTheWeightsForbid) {
  TemperingState t = initial_tempering(3, 1);
  // Configuration in slot s strongly prefers rung s: a swap costs e^-200.
  const auto pinned = [](int slot, int rung) { return slot == rung ? 0.0 : -100.0; };
  for (uint64_t sweep = 1; sweep <= 50; ++sweep) exchange_round(t, 5, sweep, 1, pinned);
  EXPECT_EQ(t.rung_of_slot, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(t.accepts, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t.attempts[0] + t.attempts[1], 50);
}

TEST(ExchangeRound, CountsRoundTripsFromTheBottomToTheTopAndBack) {
  TemperingState t = initial_tempering(3, 1);
  const std::vector<std::vector<int32_t>> moves = {
      {1, 0, 2}, {2, 0, 1}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
  track_round_trips(t, 1);  // slot 0 starts at the bottom, heading up
  for (size_t i = 0; i < moves.size(); ++i) {
    t.rung_of_slot = moves[i];
    track_round_trips(t, 10 * (i + 1));
  }
  // Slot 0 left the bottom at sweep 1, reached the top at 20 and the bottom again at 50; slot 1
  // reached the bottom at 10 (from below the top: no round trip), the top at 40.
  EXPECT_EQ(t.round_trip_sweeps, (std::vector<int64_t>{49}));
  EXPECT_EQ(t.direction, (std::vector<int8_t>{1, -1, 1}));
}

// ---- the joint chain, exactly ----

/// 2 x 2 periodic Ising lattice: the bond sum over the d V bonds (x, x + e_mu), each pair of
/// neighbours bonded twice as the engines count it, and the magnetization of state `bits`
/// (bit i: site i = x * 2 + y is +1).
IsingSums sums_2x2(int bits) {
  const auto s = [&](int x, int y) { return (bits >> ((x & 1) * 2 + (y & 1)) & 1) ? 1 : -1; };
  long long bonds = 0, m = 0;
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 2; ++y) {
      bonds += s(x, y) * (s(x + 1, y) + s(x, y + 1));
      m += s(x, y);
    }
  }
  return {bonds, m};
}

/// The exact transition matrix of one checkerboard heat-bath sweep of the 2 x 2 lattice from
/// the engine's fixed-point tables: colour 0 (sites (0,0), (1,1)), then colour 1.
std::vector<double> sweep_matrix(const IsingParams& p) {
  std::vector<double> t(16 * 16, 0.0);
  const int colour_sites[2][2] = {{0, 3}, {1, 2}};  // x * 2 + y of each colour
  std::vector<double> current(16 * 16, 0.0);
  for (int from = 0; from < 16; ++from) current[from * 16 + from] = 1.0;
  for (const auto& sites : colour_sites) {
    std::vector<double> next(16 * 16, 0.0);
    for (int from = 0; from < 16; ++from) {
      for (int mid = 0; mid < 16; ++mid) {
        const double w = current[from * 16 + mid];
        if (w == 0) continue;
        // Both sites of a colour see only the other colour: independent updates.
        std::vector<std::pair<int, double>> outcomes{{mid, w}};
        for (int site : sites) {
          const int x = site / 2, y = site % 2;
          const auto spin = [&](int state, int xx, int yy) {
            return (state >> ((xx & 1) * 2 + (yy & 1)) & 1) ? 1 : -1;
          };
          std::vector<std::pair<int, double>> grown;
          for (const auto& [state, weight] : outcomes) {
            const int old = spin(state, x, y);
            const int sum = 2 * spin(state, x + 1, y) + 2 * spin(state, x, y + 1);
            const int anti = (4 - old * sum) / 2;
            const double flip = static_cast<double>(p.flip_threshold[1][old > 0][anti]) / kTwo32;
            grown.push_back({state, weight * (1 - flip)});
            grown.push_back({state ^ (1 << site), weight * flip});
          }
          outcomes = grown;
        }
        for (const auto& [state, weight] : outcomes) next[from * 16 + state] += weight;
      }
    }
    current = next;
  }
  return current;
}

/// max |pi P - pi| over the joint states (x_a, x_b, sigma) of two slots on a two-rung ladder:
/// a sweep of each slot at its rung, then an exchange of the pair, whose log ratio is
/// exchange_log_ratio times `sign` (1: the engine's; -1: a wrong sign, which must show).
double joint_stationarity_error(const IsingParams (&rung)[2], double sign) {
  const std::vector<double> sweep[2] = {sweep_matrix(rung[0]), sweep_matrix(rung[1])};
  // state = (a * 16 + b) * 2 + sigma; sigma = 0: a at rung 0, b at rung 1.
  const auto log_weight = [&](int state_bits, int k) {
    return IsingModel::log_weight(rung[k], sums_2x2(state_bits), 4.0);
  };
  std::vector<double> pi(512);
  double z = 0;
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      for (int sigma = 0; sigma < 2; ++sigma) {
        const double w = std::exp(log_weight(a, sigma) + log_weight(b, 1 - sigma));
        pi[(a * 16 + b) * 2 + sigma] = w;
        z += w;
      }
    }
  }
  for (double& w : pi) w /= z;
  std::vector<double> after_sweep(512, 0.0), after(512, 0.0);
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      for (int sigma = 0; sigma < 2; ++sigma) {
        const double w = pi[(a * 16 + b) * 2 + sigma];
        for (int a2 = 0; a2 < 16; ++a2) {
          for (int b2 = 0; b2 < 16; ++b2) {
            after_sweep[(a2 * 16 + b2) * 2 + sigma] +=
                w * sweep[sigma][a * 16 + a2] * sweep[1 - sigma][b * 16 + b2];
          }
        }
      }
    }
  }
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      for (int sigma = 0; sigma < 2; ++sigma) {
        // The slot at rung 0 is the pair's lower one, as exchange_round takes them.
        const int lower = sigma == 0 ? a : b, upper = sigma == 0 ? b : a;
        const auto by_state = [&](int slot, int k) {
          return log_weight(slot == 0 ? lower : upper, k);
        };
        const double ratio = sign * exchange_log_ratio(by_state, 0, 0, 1, 1);
        const double accept = static_cast<double>(exchange_threshold(ratio)) / kTwo32;
        const int from = (a * 16 + b) * 2 + sigma;
        after[from] += after_sweep[from] * (1 - accept);
        after[(a * 16 + b) * 2 + (1 - sigma)] += after_sweep[from] * accept;
      }
    }
  }
  double error = 0;
  for (int i = 0; i < 512; ++i) error = std::max(error, std::fabs(after[i] - pi[i]));
  return error;
}

TEST(JointChainExact, KeepsTheProductOfTheRungsBoltzmannWeights) {
  // Rungs of different beta and h (a field ladder changes the magnetization's weight).
  const IsingParams beta_ladder[2] = {make_ising_params(2, 0.2, 0.1, 1),
                                      make_ising_params(2, 0.45, 0.1, 1)};
  const IsingParams field_ladder[2] = {make_ising_params(2, 0.3, -0.4, 1),
                                       make_ising_params(2, 0.3, 0.5, 1)};
  for (const auto* ladder : {&beta_ladder, &field_ladder}) {
    // The tables and thresholds are exact to 2^-32.
    EXPECT_LT(joint_stationarity_error(*ladder, 1.0), 1e-8);
    // The test sees a wrong exchange rule: the reversed ratio breaks stationarity.
    EXPECT_GT(joint_stationarity_error(*ladder, -1.0), 1e-3);
  }
}

// The feedback rule by hand: f = 1, 0.9, 0.1, 0 on rungs 0, 1, 2, 3 gives densities
// sqrt(0.1), sqrt(0.8) = 2 sqrt(2) sqrt(0.1), sqrt(0.1) on the unit intervals, total
// (2 + 2 sqrt 2) sqrt(0.1); a third of it lies (2 sqrt 2 - 1) / 3 sqrt(0.1) into the middle
// interval, so rung 1 moves to 1 + (4 - sqrt 2) / 12 and rung 2 to its mirror image.
TEST(LadderFeedback, MovesRungsToWhereTheUpFractionDrops) {
  const double shift = (4.0 - std::sqrt(2.0)) / 12.0;
  const std::vector<double> moved = feedback_ladder({0.0, 1.0, 2.0, 3.0}, {1.0, 0.9, 0.1, 0.0});
  ASSERT_EQ(moved.size(), 4u);
  EXPECT_EQ(moved[0], 0.0);
  EXPECT_NEAR(moved[1], 1.0 + shift, 1e-14);
  EXPECT_NEAR(moved[2], 2.0 - shift, 1e-14);
  EXPECT_EQ(moved[3], 3.0);
  // A decreasing ladder (rung 0 the hottest last) is the same rule mirrored.
  const std::vector<double> down = feedback_ladder({3.0, 2.0, 1.0, 0.0}, {1.0, 0.9, 0.1, 0.0});
  EXPECT_NEAR(down[1], 2.0 - shift, 1e-14);
  EXPECT_NEAR(down[2], 1.0 + shift, 1e-14);
}

TEST(LadderFeedback, KeepsAnOptimalLadderAndOneWithoutData) {
  const std::vector<double> ladder{0.2, 0.3, 0.4, 0.5};
  const std::vector<double> linear = feedback_ladder(ladder, {1.0, 2.0 / 3, 1.0 / 3, 0.0});
  for (size_t k = 0; k < ladder.size(); ++k) EXPECT_NEAR(linear[k], ladder[k], 1e-14);
  // A rung no labelled configuration visited (f = -1): nothing to go by.
  EXPECT_EQ(feedback_ladder(ladder, {1.0, -1.0, 0.2, 0.0}), ladder);
  // No interior rungs; and a flat f (floored, not divided by zero) keeps equal spacing.
  EXPECT_EQ(feedback_ladder({0.2, 0.5}, {1.0, 0.0}), (std::vector<double>{0.2, 0.5}));
  const std::vector<double> flat = feedback_ladder(ladder, {1.0, 1.0, 1.0, 1.0});
  for (size_t k = 0; k < ladder.size(); ++k) EXPECT_NEAR(flat[k], ladder[k], 1e-14);
}

TEST(LadderFeedback, StepRecordsTheProfileAndRestartsTheStatistics) {
  TemperingState t = initial_tempering(4, 1);
  t.ladder = {0.0, 1.0, 2.0, 3.0};
  t.up_visits = {10, 9, 1, 0};
  t.down_visits = {0, 1, 9, 10};
  t.attempts = {5, 5, 5};
  t.accepts = {1, 2, 3};
  t.round_trip_sweeps = {40};
  t.direction = {1, 1, -1, -1};
  feedback_step(t);
  const double shift = (4.0 - std::sqrt(2.0)) / 12.0;
  EXPECT_NEAR(t.ladder[1], 1.0 + shift, 1e-14);
  EXPECT_EQ(t.feedback_up_fraction, (std::vector<double>{1.0, 0.9, 0.1, 0.0}));
  EXPECT_EQ(t.feedback_ladders, t.ladder);
  for (const auto* counts : {&t.attempts, &t.accepts, &t.up_visits, &t.down_visits})
    for (int64_t c : *counts) EXPECT_EQ(c, 0);
  EXPECT_TRUE(t.round_trip_sweeps.empty());
  EXPECT_EQ(t.direction, (std::vector<int8_t>{1, 1, -1, -1}));  // where each slot last was
  EXPECT_NO_THROW(check_tempering_state(t, 4, 4));
  feedback_step(t);  // no visits since: f = -1, the ladder stays, the record grows
  EXPECT_EQ(t.feedback_ladders.size(), 8u);
  EXPECT_EQ(t.feedback_up_fraction[4], -1.0);
}

TEST(LadderFeedback, DueAtEqualPartsOfTheThermalization) {
  TemperingSettings s;
  s.beta = {0.3, 0.4, 0.5};
  s.feedback = 3;
  s.thermalization = 403;  // parts of 100 sweeps; the last 103 keep the frozen ladder
  std::vector<uint64_t> due;
  for (uint64_t sweep = 0; sweep < 1000; ++sweep)
    if (s.feedback_due(sweep)) due.push_back(sweep);
  EXPECT_EQ(due, (std::vector<uint64_t>{100, 200, 300}));
  s.feedback = 0;
  EXPECT_FALSE(s.feedback_due(100));
}

}  // namespace
}  // namespace lattica
