#pragma once
// Parallel tempering's bookkeeping on the host, independent of backend and model: which rung
// each configuration slot is at, the exchange rounds between neighbouring rungs, and the
// statistics (acceptance per pair, round trips, directions per rung). Exchanges permute
// couplings among slots; configurations never move.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/ensemble/replica_exchange.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

/// The state of `ladders` ladders of `rungs` rungs each before any exchange: slot l * rungs + k
/// at rung k.
inline TemperingState initial_tempering(int rungs, int ladders) {
  TemperingState t;
  t.rungs = rungs;
  const size_t slots = static_cast<size_t>(rungs) * static_cast<size_t>(ladders);
  t.rung_of_slot.resize(slots);
  for (size_t s = 0; s < slots; ++s) t.rung_of_slot[s] = static_cast<int32_t>(s % rungs);
  t.direction.assign(slots, 0);
  t.bottom_sweep.assign(slots, 0);
  t.attempts.assign(static_cast<size_t>(rungs - 1), 0);
  t.accepts.assign(static_cast<size_t>(rungs - 1), 0);
  t.up_visits.assign(static_cast<size_t>(rungs), 0);
  t.down_visits.assign(static_cast<size_t>(rungs), 0);
  return t;
}

/// Whether an exchange round comes before sweep `sweep`: after every exchange_every sweeps.
inline bool exchange_due(uint64_t sweep, int64_t exchange_every) {
  return sweep > 0 && sweep % static_cast<uint64_t>(exchange_every) == 0;
}

/// Updates the round-trip labels after the slots moved (`sweep`: the sweep about to start): a
/// slot at the bottom rung heads up, one at the top heads down, and one reaching the bottom
/// heading down completes a round trip.
inline void track_round_trips(TemperingState& t, uint64_t sweep) {
  const int top = t.rungs - 1;
  for (size_t s = 0; s < t.rung_of_slot.size(); ++s) {
    const int32_t rung = t.rung_of_slot[s];
    if (rung == 0) {
      if (t.direction[s] == -1)
        t.round_trip_sweeps.push_back(static_cast<int64_t>(sweep) - t.bottom_sweep[s]);
      if (t.direction[s] != 1) t.bottom_sweep[s] = static_cast<int64_t>(sweep);
      t.direction[s] = 1;
    } else if (rung == top && t.direction[s] == 1) {
      t.direction[s] = -1;
    }
    if (t.direction[s] == 1) ++t.up_visits[static_cast<size_t>(rung)];
    if (t.direction[s] == -1) ++t.down_visits[static_cast<size_t>(rung)];
  }
}

/// The parity of the exchange round before sweep `sweep`: its pairs are (k, k + 1) with k of
/// that parity, even and odd alternating with the round number sweep / exchange_every.
inline int exchange_parity(uint64_t sweep, int64_t exchange_every) {
  return static_cast<int>((sweep / static_cast<uint64_t>(exchange_every)) % 2);
}

/// The statistics of a round whose decisions are taken: the slots' rungs after it are `after`
/// (t.rung_of_slot before it). Every pair of the round's parity was attempted in every ladder,
/// and accepted where its lower slot moved up.
inline void account_round(TemperingState& t, const int32_t* after, uint64_t sweep,
                          int64_t exchange_every) {
  const int rungs = t.rungs;
  const int parity = exchange_parity(sweep, exchange_every);
  for (size_t s = 0; s < t.rung_of_slot.size(); ++s) {
    const int32_t k = t.rung_of_slot[s];
    if ((k - parity) % 2 != 0 || k + 1 >= rungs) continue;  // not the lower slot of a pair
    ++t.attempts[static_cast<size_t>(k)];
    if (after[s] == k + 1) ++t.accepts[static_cast<size_t>(k)];
  }
  std::copy(after, after + t.rung_of_slot.size(), t.rung_of_slot.begin());
  track_round_trips(t, sweep);
}

/// One exchange round before sweep `sweep` (exchange_due), taken on the host: in every ladder,
/// every pair (k, k + 1) of the round's parity swaps its couplings with the Metropolis
/// probability of the energy difference. log_weight(slot, rung): ln of the Boltzmann weight of
/// the configuration in `slot` under rung `rung`'s couplings. Pairs of one round are disjoint,
/// so their order does not matter. (ExchangePairs, kernels/ensemble/replica_exchange.hpp, takes
/// the same decisions on a backend.)
template <class LogWeight>
void exchange_round(TemperingState& t, uint64_t seed, uint64_t sweep, int64_t exchange_every,
                    const LogWeight& log_weight) {
  const int rungs = t.rungs;
  const int ladders = static_cast<int>(t.rung_of_slot.size()) / rungs;
  const int parity = exchange_parity(sweep, exchange_every);
  std::vector<int> slot_of_rung(static_cast<size_t>(rungs));
  std::vector<int32_t> after = t.rung_of_slot;
  for (int l = 0; l < ladders; ++l) {
    const int first = l * rungs;
    for (int s = first; s < first + rungs; ++s) slot_of_rung[t.rung_of_slot[s]] = s;
    for (int k = parity; k + 1 < rungs; k += 2) {
      const int lower = slot_of_rung[k], upper = slot_of_rung[k + 1];
      const double log_ratio = exchange_log_ratio(log_weight, lower, k, upper, k + 1);
      if (!exchange_accepted(seed, sweep, static_cast<uint32_t>(l), static_cast<uint32_t>(k),
                             log_ratio))
        continue;
      after[static_cast<size_t>(lower)] = k + 1;
      after[static_cast<size_t>(upper)] = k;
    }
  }
  account_round(t, after.data(), sweep, exchange_every);
}

/// f(k) = up / (up + down) visits of every rung; -1 for a rung no labelled slot visited.
inline std::vector<double> up_fractions(const TemperingState& t) {
  std::vector<double> f;
  for (size_t k = 0; k < t.up_visits.size(); ++k) {
    const int64_t visits = t.up_visits[k] + t.down_visits[k];
    f.push_back(visits > 0 ? static_cast<double>(t.up_visits[k]) / static_cast<double>(visits)
                           : -1.0);
  }
  return f;
}

/// One step of the feedback optimisation of Katzgraber, Trebst, Huse and Troyer (J. Stat. Mech.
/// (2006) P03018): the ladder with the same ends whose rungs are spaced by the density
/// eta(c) ~ sqrt(|df/dc| / dc), constant on each interval, which moves rungs to where f changes
/// fastest. |df| is floored at `floor` so that every interval keeps some rungs' worth of density
/// and the result stays strictly monotone. Returns `couplings` unchanged when a rung has no f
/// (f < 0) or there are no interior rungs. analysis/tempering.py's feedback_ladder is the same
/// rule (tests hold both to one hand-computed answer).
inline std::vector<double> feedback_ladder(const std::vector<double>& couplings,
                                           const std::vector<double>& up_fraction,
                                           double floor = 1e-3) {
  const size_t n = couplings.size();
  if (n < 3 || up_fraction.size() != n ||
      std::any_of(up_fraction.begin(), up_fraction.end(), [](double f) { return f < 0; }))
    return couplings;
  std::vector<double> mass(n, 0.0);  // the density's integral up to each rung
  for (size_t i = 0; i + 1 < n; ++i) {
    const double dc = std::fabs(couplings[i + 1] - couplings[i]);
    const double slope = std::max(std::fabs(up_fraction[i + 1] - up_fraction[i]), floor) / dc;
    mass[i + 1] = mass[i] + std::sqrt(slope / dc) * dc;
  }
  std::vector<double> next = couplings;
  size_t i = 0;
  for (size_t k = 1; k + 1 < n; ++k) {
    // Rung k takes the k / (n - 1) quantile of the mass, linear on each interval.
    const double goal = mass[n - 1] * static_cast<double>(k) / static_cast<double>(n - 1);
    while (i + 2 < n && mass[i + 1] < goal) ++i;
    const double share = (goal - mass[i]) / (mass[i + 1] - mass[i]);
    next[k] = couplings[i] + share * (couplings[i + 1] - couplings[i]);
  }
  // Rounding could tie two rungs of a nearly degenerate ladder: keep the old one then.
  for (size_t k = 0; k + 1 < n; ++k)
    if ((next[k + 1] - next[k]) * (couplings[n - 1] - couplings[0]) <= 0) return couplings;
  return next;
}

/// A feedback step of the ladder in `t` (t.ladder: the tempered coupling now): records f(k) and
/// the new ladder, moves t.ladder to it, and restarts the statistics (pair acceptances, round
/// trips, direction visits) so that they describe the new ladder. The slots keep their
/// directions: where a configuration last was stays true.
inline void feedback_step(TemperingState& t) {
  const std::vector<double> f = up_fractions(t);
  t.ladder = feedback_ladder(t.ladder, f);
  t.feedback_up_fraction.insert(t.feedback_up_fraction.end(), f.begin(), f.end());
  t.feedback_ladders.insert(t.feedback_ladders.end(), t.ladder.begin(), t.ladder.end());
  for (auto* counts : {&t.attempts, &t.accepts, &t.up_visits, &t.down_visits})
    std::fill(counts->begin(), counts->end(), 0);
  t.round_trip_sweeps.clear();
}

/// Checks that a restored state fits a run of `rungs` rungs and `slots` slots.
inline void check_tempering_state(const TemperingState& t, int rungs, size_t slots) {
  if (t.rungs != rungs || t.rung_of_slot.size() != slots || t.direction.size() != slots ||
      t.bottom_sweep.size() != slots || t.attempts.size() != static_cast<size_t>(rungs - 1) ||
      t.accepts.size() != t.attempts.size() || t.up_visits.size() != static_cast<size_t>(rungs) ||
      t.down_visits.size() != t.up_visits.size() ||
      (!t.ladder.empty() && t.ladder.size() != static_cast<size_t>(rungs)) ||
      t.feedback_up_fraction.size() % static_cast<size_t>(rungs) != 0 ||
      t.feedback_ladders.size() != t.feedback_up_fraction.size())
    throw std::invalid_argument("restore: the tempering state does not match the ladder");
  std::vector<int> seen(static_cast<size_t>(rungs));
  for (size_t s = 0; s < slots; ++s) {
    const int32_t rung = t.rung_of_slot[s];
    if (rung < 0 || rung >= rungs)
      throw std::invalid_argument("restore: a slot's rung is outside the ladder");
    if (s % rungs == 0) std::fill(seen.begin(), seen.end(), 0);
    if (seen[static_cast<size_t>(rung)]++)
      throw std::invalid_argument("restore: a ladder's rungs are not a permutation");
  }
}

}  // namespace lattica
